"""Slots are pages held plus answers that count, whatever path stored them
(``populations.keeps_slot``). A model rater's or an adjudicator's answers imported with
``importresponses --source model`` (or ``adjudicator``) take no slot, as the model
runner's never did: a study wanting 3 answers per item, with 2 people and 1 imported
machine answer on every item, still has a page for a third person."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from annotation.models import Enrollment, Study
from annotation.services.authoring.studies import load_study_file
from tests.conftest import claim_study_file
from tests.helpers.crowd_ids import prolific_id
from tests.helpers.flow import start, task_action

pytestmark = pytest.mark.django_db

SLUG = "three-each"
ANSWER = {"label": "supports", "evidence": ["0"]}


@pytest.fixture
def two_item_study() -> Study:
    data = claim_study_file(slug=SLUG, items=2, annotations_per_item=3, items_per_session=2)
    return load_study_file(data).study


def take_part(worker: str) -> Client:
    """A crowd worker answers every page of their session over HTTP."""
    client = Client()
    html = start(client, SLUG, f"?PROLIFIC_PID={prolific_id(worker)}")
    for _ in range(2):
        html = client.post(task_action(html), ANSWER, follow=True).content.decode()
    return client


def import_one_answer_per_item(tmp_path, source: str) -> None:
    answer = {"label": "supports", "evidence": [0]}
    lines = [json.dumps({"participant": "judge", "item": f"c{n}", "answer": answer}) for n in range(2)]
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(lines))
    out = StringIO()
    call_command("importresponses", SLUG, str(path), "--source", source, stdout=out)
    assert "Imported 2 responses" in out.getvalue()


@pytest.mark.parametrize("source", ["model", "adjudicator"])
def test_a_third_person_gets_a_page_beside_imported_machine_answers(two_item_study, tmp_path, source):
    take_part("PID-1")
    take_part("PID-2")
    import_one_answer_per_item(tmp_path, source)
    third = Client()
    html = start(
        third, SLUG, f"?PROLIFIC_PID={prolific_id('PID-3')}"
    )  # the consent page, not "this study is full"
    for _ in range(2):
        html = third.post(task_action(html), ANSWER, follow=True).content.decode()
    # The third person's answers are the last that count: the study closes at its quota.
    assert Study.objects.get(pk=two_item_study.pk).status == Study.Status.CLOSED


def test_imported_human_answers_still_take_their_places(two_item_study, tmp_path):
    """A person's answer counts wherever it was collected: 2 people here and 1 imported
    from the lab on every item fill the study, and a third is told so before consenting."""
    take_part("PID-1")
    take_part("PID-2")
    import_one_answer_per_item(tmp_path, "lab")
    answer = Client().get(f"/s/{SLUG}/?PROLIFIC_PID={prolific_id('PID-3')}", follow=True)
    assert not any("/consent/" in url for url, _ in answer.redirect_chain)
    assert not Enrollment.objects.filter(
        study=two_item_study, participant__platform_worker_id=prolific_id("PID-3")
    ).exists()
