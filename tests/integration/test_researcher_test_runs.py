"""A researcher trying their own study (the overview's "Take part yourself", or any visit of
the study link by someone who manages the study, drafts too) leaves test answers: marked
``Enrollment.is_test``, counted nowhere (quota, slots, reports, exports, the participants
lists) and discarded from the overview (usability review 2 #4, adversarial review 2 N14)."""

from __future__ import annotations

import csv
import sqlite3
import zipfile

import pytest
from django.test import Client

from annotation.models import Assignment, Enrollment, Item, Response, Study
from annotation.services.exports.export import export_study
from annotation.services.participation.assignment import item_progress
from annotation.services.participation.capacity import quota_reached
from tests.factories import researcher_user
from tests.helpers.crowd_ids import prolific_id
from tests.helpers.flow import start, task_action
from tests.helpers.reports import computereports_json

pytestmark = pytest.mark.django_db
ANSWER = {"label": "supports", "evidence": ["0"]}


def owned(make_claim_study, owner, **fields) -> Study:
    study = make_claim_study(**fields)
    Study.objects.filter(pk=study.pk).update(owner=owner)
    study.refresh_from_db()
    return study


def answer_pages(client: Client, study: Study, pages: int) -> str:
    """Take part through the study link and answer ``pages`` pages; the last page's HTML."""
    html = start(client, study.slug)
    for _ in range(pages):
        html = client.post(task_action(html), ANSWER, follow=True).content.decode()
    return html


def test_the_owners_answers_on_a_live_study_are_a_test_that_counts_nowhere(
    make_claim_study, owner, owner_client, tmp_path
):
    study = owned(make_claim_study, owner, items=2, annotations_per_item=1, items_per_session=3)
    html = answer_pages(owner_client, study, 2)
    # The session ran short (2 items, 3 pages): the end page says so without claiming the
    # study has all its answers, and says it was a test.
    assert 'id="test-answers"' in html and "all the answers it needs" not in html
    assert 'id="cut-short"' in html
    enrollment = Enrollment.objects.get(study=study)
    assert enrollment.is_test and Response.objects.filter(study=study).count() == 2
    # Not in the quota, the slots or the progress: the study stays open for real people.
    study.refresh_from_db()
    assert study.status == Study.Status.LIVE and not quota_reached(study)
    assert item_progress(study)["responses"] == 0
    assert list(Item.objects.filter(study=study).values_list("slots_taken", flat=True)) == [0, 0]
    real = Client()
    assert "Page 1 of 3" in start(real, study.slug, f"?PROLIFIC_PID={prolific_id('real-one')}")
    real.post(task_action(real.get(f"/s/{study.slug}/task/").content.decode()), ANSWER)
    # Not in the exports (CSV and SQLite), the reports or the participants lists.
    with open(export_study(study, fmt="csv", path=tmp_path / "o.csv").path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 1 and rows[0]["participant_source"] == "prolific"
    with zipfile.ZipFile(export_study(study, fmt="sqlite", path=tmp_path / "o.zip").path) as archive:
        archive.extractall(tmp_path)
    database = sqlite3.connect(tmp_path / f"{study.slug}.sqlite")
    for table in ("participants", "assignments", "responses"):
        assert database.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 1, table  # noqa: S608
    reports = {row["metric"]: row for row in computereports_json(study) if row["group"] == {}}
    assert reports["progress.responses"]["value"] == reports["progress.participants"]["value"] == 1
    listed = owner_client.get(f"/api/v1/studies/{study.slug}/participants/").json()
    assert [p["source"] for p in listed["results"]] == ["prolific"]
    answers = owner_client.get(f"/api/v1/responses/?study={study.slug}").json()
    assert len(answers["results"]) == 1
    page = owner_client.get(f"/research/s/{study.slug}/participants/")
    assert page.context["page"].paginator.count == 1


def test_the_owners_test_of_a_draft_is_discarded_from_the_overview_freeing_its_slots(
    make_claim_study, owner, owner_client
):
    study = owned(
        make_claim_study, owner, items=3, annotations_per_item=1, items_per_session=3, status="draft"
    )
    answer_pages(owner_client, study, 1)  # one page answered, the next one held
    assert Enrollment.objects.get(study=study).is_test
    assert Item.objects.filter(study=study, slots_taken=1).count() == 1  # the held page
    overview = owner_client.get(f"/research/s/{study.slug}/").content.decode()
    assert 'id="discard-test-answers"' in overview
    done = owner_client.post(f"/research/s/{study.slug}/test-answers/discard/", follow=True)
    assert "Discarded 1 test answer." in done.content.decode()
    assert not Enrollment.objects.filter(study=study).exists()
    assert not Response.objects.filter(study=study).exists()
    assert not Assignment.objects.filter(study=study).exists()
    assert not Item.objects.filter(study=study, slots_taken__gt=0).exists()
    assert 'id="discard-test-answers"' not in done.content.decode()


def test_discarding_leaves_real_participants_answers(make_claim_study, owner, owner_client):
    study = owned(make_claim_study, owner, items=3, annotations_per_item=2, items_per_session=1)
    crowd = Client()
    crowd.post(task_action(start(crowd, study.slug, f"?PROLIFIC_PID={prolific_id('real-two')}")), ANSWER)
    answer_pages(owner_client, study, 1)
    owner_client.post(f"/research/s/{study.slug}/test-answers/discard/")
    assert list(
        Response.objects.filter(study=study).values_list("participant__platform_worker_id", flat=True)
    ) == [prolific_id("real-two")]
    assert item_progress(study)["responses"] == 1


def test_only_the_studys_researchers_discard_test_answers(make_claim_study, owner, django_user_model):
    study = owned(make_claim_study, owner, items=2)
    stranger = researcher_user("stranger")
    client = Client()
    client.force_login(stranger)
    assert client.post(f"/research/s/{study.slug}/test-answers/discard/").status_code == 404
