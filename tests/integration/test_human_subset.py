"""A study's human subset: items drawn per system with logged probabilities, the draw fixed
by the seed and each item's id (items loaded later drawn alike), people served only the
drawn items while a model rater still gets every item, and bad or late designs refused
naming the field, changing nothing."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.errors import InputError
from annotation.models import Item, Participant
from annotation.services.analysis.model_answers import items_for_model, model_participant
from annotation.services.authoring.human_subset import check_human_subset, set_human_subset, uniform_draw
from annotation.services.authoring.item_load import write_items
from annotation.services.participation.assignment import assign_next_item, item_progress
from annotation.services.participation.submission import submit_response
from tests.factories import ItemFactory, StudyFactory

pytestmark = pytest.mark.django_db

PROBABILITY = {"A": 0.5, "B": 0.2}


def claim_items(study, ids, system):
    return ItemFactory.from_specs(study, [{"external_id": i, "provenance": {"system": system}} for i in ids])


def test_a_stratified_subset_is_logged_served_to_people_only_and_stable(enrolled):
    study = StudyFactory(kind="claim", annotations_per_item=1, items_per_session=100)
    claim_items(study, [f"a{k}" for k in range(30)], "A")
    claim_items(study, [f"b{k}" for k in range(30)], "B")
    out = StringIO()
    call_command(
        "humansubset", study.slug, "--system", "A=0.5", "--system", "B=0.2", "--seed", "7", stdout=out
    )
    items = list(Item.objects.filter(study=study))
    for item in items:
        probability = PROBABILITY[item.provenance["system"]]
        assert item.human_inclusion == probability
        assert item.for_humans == (uniform_draw(7, item.external_id) < probability)
    drawn = {item.external_id for item in items if item.for_humans}
    assert 0 < len(drawn) < 60 and f"people answer {len(drawn)} of 60 items" in out.getvalue()
    # an item loaded later is drawn by the same rule, whatever else the study holds
    payload = Item.objects.filter(study=study).first().payload
    write_items(study, [{"external_id": "a-late", "payload": payload, "attention_check": False,
                         "gold": None, "provenance": {"system": "A"}}])  # fmt: skip
    late = Item.objects.get(study=study, external_id="a-late")
    assert late.human_inclusion == 0.5 and late.for_humans == (uniform_draw(7, "a-late") < 0.5)
    drawn |= {"a-late"} if late.for_humans else set()
    # people get the drawn items only; the progress counts only those
    person = enrolled(study)
    served = set()
    while (assignment := assign_next_item(participant=person, study=study)) is not None:
        served.add(assignment.item.external_id)
        submit_response(assignment=assignment, answer={"label": "neutral"})
    assert served == drawn
    assert item_progress(study)["items"] == len(drawn)
    # a model rater still answers every item
    judge = model_participant({"kind": "llm", "model": "/models/judge", "version": "1"})
    assert items_for_model(study, judge).count() == 61
    # once people have answered, the subset stays as it was
    with pytest.raises(InputError) as refused:
        set_human_subset(study=study, raw={"fraction": 0.9})
    assert "human_subset" in refused.value.errors
    study.refresh_from_db()
    assert study.human_subset == {"seed": 7, "by_system": PROBABILITY}
    assert Item.objects.filter(study=study, for_humans=True).count() == len(drawn)
    assert Participant.objects.filter(source=Participant.Source.MODEL).count() == 1


def test_the_sqlite_export_carries_each_items_draw_and_probability(tmp_path):
    import sqlite3
    import zipfile

    from annotation.services.exports.export import export_study

    study = StudyFactory(kind="claim")
    claim_items(study, [f"a{k}" for k in range(6)], "A")
    set_human_subset(study=study, raw={"fraction": 0.5, "seed": 1})
    result = export_study(study, fmt="sqlite", path=tmp_path / "out.zip")
    with zipfile.ZipFile(result.path) as archive:
        archive.extractall(tmp_path)
    database = sqlite3.connect(tmp_path / f"{study.slug}.sqlite")
    rows = database.execute("SELECT item, for_humans, human_inclusion FROM items").fetchall()
    assert sorted(rows) == sorted((f"a{k}", int(uniform_draw(1, f"a{k}") < 0.5), 0.5) for k in range(6))


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"fraction": 0}, "human_subset.fraction"),
        ({"fraction": 1.5}, "human_subset.fraction"),
        ({"fraction": "half"}, "human_subset.fraction"),
        ({"by_system": {"A": -1}}, "human_subset.by_system.A"),
        ({"by_system": ["A"]}, "human_subset.by_system"),
        ({"fraction": 0.5, "seed": -1}, "human_subset.seed"),
        ({"fraction": 0.5, "size": 3}, "human_subset"),
        ({"seed": 3}, "human_subset"),
        ("half", "human_subset"),
    ],
)
def test_a_bad_design_is_refused_naming_the_field(raw, field):
    with pytest.raises(InputError) as refused:
        check_human_subset(raw)
    assert field in refused.value.errors


def test_the_command_refuses_a_bad_design_and_changes_nothing():
    study = StudyFactory(kind="claim")
    claim_items(study, ["x", "y"], "A")
    with pytest.raises(CommandError, match=r"human_subset\.fraction"):
        call_command("humansubset", study.slug, "--fraction", "2")
    assert not Item.objects.filter(study=study, for_humans=False).exists()
    assert not Item.objects.filter(study=study, human_inclusion__isnull=False).exists()
