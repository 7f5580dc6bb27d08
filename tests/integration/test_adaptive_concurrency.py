"""An adaptive study with 30 participants at once (PostgreSQL, one thread each): no item over
its cap, no item twice for anyone, and the stopping rule closes the study exactly once while
every thread keeps recomputing the priorities and checking the rule between its answers."""

from __future__ import annotations

import random
import threading
from collections import Counter

import pytest

from annotation.models import Assignment, Item, Participant, Response, Study
from annotation.services.authoring.studies import load_study_file
from annotation.services.participation.assignment import assign_next_item
from annotation.services.participation.submission import submit_response
from scoring.adaptive import refresh_adaptive
from scoring.data import DEFAULT_BY, load_study_data, one_snapshot
from scoring.reports import report_for
from tests.helpers.adaptive import CAP, ITEMS, likert_study_file
from tests.threads import consented_participants, run_in_threads

PARTICIPANTS = 30
RATINGS = {"A": range(4, 8), "B": range(1, 6)}  # A is better by 2.5 points on average


def check_rule(study: Study) -> bool:
    """What the reports job does for an adaptive study: read it, then refresh the
    priorities and apply the stopping rule; whether this call closed the study."""
    builder = report_for(study.kind)
    with one_snapshot():
        data = load_study_data(study, builder, by=DEFAULT_BY)
    result = refresh_adaptive(study, data, builder)
    return result is not None and result.closed


@pytest.mark.django_db(transaction=True)
def test_thirty_participants_fill_no_item_over_its_cap_and_the_rule_closes_once():
    stop = {"question": "quality", "systems": ["A", "B"], "ci_excludes_zero": True, "alpha": 0.05}
    study = load_study_file(likert_study_file(stop)).study  # 100 slots; 30 participants want 150 pages
    participants = consented_participants(study, PARTICIPANTS)
    closings: list[bool] = []
    lock = threading.Lock()

    def work(mine: list[Participant]) -> None:
        for participant in mine:
            rng = random.Random(participant.pk)
            answered = 0
            # the gate of every step: a closed study hands out no further page
            while Study.objects.filter(pk=study.pk, status=Study.Status.LIVE).exists():
                page = assign_next_item(participant=participant, study=study)
                if page is None:
                    break
                rating = rng.choice(RATINGS[page.item.provenance["system"]])
                submit_response(assignment=page, answer={"ratings": {"quality": rating}})
                answered += 1
                if answered % 2 == 0:
                    closed = check_rule(study)
                    with lock:
                        closings.append(closed)

    run_in_threads(work, participants, PARTICIPANTS)
    closings.append(check_rule(study))
    study.refresh_from_db()
    assert study.status == Study.Status.CLOSED
    assert closings.count(True) == 1, closings
    assert study.closed_because == Study.ClosedBecause.STOPPING_RULE
    details = study.closed_details
    assert details["systems"] == ["A", "B"] and details["ci_low"] > 0
    assert details["answers"] <= Response.objects.filter(study=study).count() <= ITEMS * CAP
    per_item = Counter(Response.objects.filter(study=study).values_list("item_id", flat=True))
    assert max(per_item.values()) <= CAP
    pairs = list(Assignment.objects.filter(study=study).values_list("participant_id", "item_id"))
    assert len(pairs) == len(set(pairs))
    for item in Item.objects.filter(study=study):
        live = Assignment.objects.filter(item=item, status__in=["assigned", "answered"]).count()
        assert item.slots_taken == live <= CAP
