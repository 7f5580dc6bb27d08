"""An adaptive study whose question compares systems (a questionnaire's pairwise pick): the
reports job gives each item the priority of how close its two systems' comparison is over
the whole study, not of how its own answers split (docs/statistics.md, "Adaptive
collection")."""

from __future__ import annotations

import pytest

from annotation.models import Item, Study
from annotation.services.authoring.studies import load_study_file
from annotation.services.participation.assignment import assign_next_item
from annotation.services.participation.submission import submit_response
from scoring.services import compute_study_reports

pytestmark = pytest.mark.django_db

CAP = 4
# Items comparing alpha with beta: each unanimous, half for alpha and half for beta (the pair
# is even). Items comparing alpha with gamma: each three to one for alpha (the pair is settled).
VOTES = {
    "ab0": ["alpha"] * 4,
    "ab1": ["alpha"] * 4,
    "ab2": ["beta"] * 4,
    "ab3": ["beta"] * 4,
    **{f"ag{n}": ["alpha", "alpha", "alpha", "gamma"] for n in range(4)},
}


def pick_study() -> dict:
    items = []
    for name in VOTES:
        other = "beta" if name.startswith("ab") else "gamma"
        passages = [
            {"id": f"{name}x", "text": f"Reply one to {name}.", "system": "alpha"},
            {"id": f"{name}y", "text": f"Reply two to {name}.", "system": other},
        ]
        items.append({"external_id": name, "payload": {"passages": passages}})
    question = {"id": "better", "type": "pick", "pick": "pairwise", "text": "Which reply is better?"}
    return {
        "slug": "adaptive-pick",
        "title": "Which is better?",
        "kind": "questionnaire",
        "status": "live",
        "annotations_per_item": CAP,
        "items_per_session": len(VOTES),
        # every item gets all its answers before any priority counts: the votes above land exactly
        "config": {"questions": [question], "assignment": "adaptive", "adaptive": {"min_answers": CAP}},
        "items": items,
    }


def stored_before_the_rule(data: dict) -> Study:
    """A pick-only study is refused adaptive assignment now (tests/integration/
    test_adaptive_rankings.py); one stored adaptive before that keeps running, and its
    priorities are what a pick beside other questions gets."""
    config = data["config"]
    study = load_study_file({**data, "config": {"questions": config["questions"]}}).study
    adaptive = {"assignment": config["assignment"], "adaptive": config["adaptive"]}
    Study.objects.filter(pk=study.pk).update(config={**study.config, **adaptive})
    study.refresh_from_db()
    return study


def test_items_of_an_even_pair_of_systems_come_before_items_of_a_settled_pair(enrolled):
    study = stored_before_the_rule(pick_study())
    given = {name: 0 for name in VOTES}
    for _ in range(CAP):
        participant = enrolled(study)
        while (page := assign_next_item(participant=participant, study=study)) is not None:
            name = page.item.external_id
            system = VOTES[name][given[name]]
            given[name] += 1
            picked = next(p["id"] for p in page.item.payload["passages"] if p["system"] == system)
            submit_response(assignment=page, answer={"better": picked})
    assert set(given.values()) == {CAP}
    compute_study_reports(study)
    priority = dict(Item.objects.filter(study=study).values_list("external_id", "priority"))
    even = [priority[f"ab{n}"] for n in range(4)]
    settled = [priority[f"ag{n}"] for n in range(4)]
    # alpha and beta won eight each: their order is unknown; alpha beat gamma twelve to four
    assert min(even) == pytest.approx(1.0, abs=0.02)
    assert max(settled) < 0.2 < min(even)
    # one rule for the pair: every item of it gets the same priority, whatever its own votes
    assert max(even) - min(even) < 1e-9 and max(settled) - min(settled) < 1e-9
