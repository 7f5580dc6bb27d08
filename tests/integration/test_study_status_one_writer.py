"""A study's status has one writer (``annotation/services/study_status.py``): every entry
point that changes it (the study file through the upload page and ``loadstudy --update``,
the API's status endpoint, the admin) moves a study only along ``STATUS_TRANSITIONS``.
A refused move is an error naming ``status`` and changes nothing; an allowed one records
the closing (when and why) wherever it came from."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from annotation.models import Study
from annotation.services.authoring.studies import load_study_file
from annotation.services.participation.assignment import assign_next_item
from annotation.services.participation.submission import submit_response
from annotation.services.study_status import STATUS_TRANSITIONS, change_study_status
from tests.api.conftest import CheckedClient
from tests.conftest import claim_study_file
from tests.factories import ParticipantFactory
from tests.helpers.admin import admin_form_data

pytestmark = pytest.mark.django_db

# Every pair of statuses the table does not allow, and the moves back to draft, which the
# table allows only while no answer is stored (issue 39): the studies below have one.
REFUSED = sorted(
    {
        (current, wanted)
        for current in Study.Status.values
        for wanted in Study.Status.values
        if wanted != current and wanted not in STATUS_TRANSITIONS[current]
    }
    | {(current, "draft") for current in ("live", "closed")}
)


def test_the_table_refuses_no_move_and_answers_keep_a_study_from_draft():
    assert REFUSED == [("closed", "draft"), ("live", "draft")]
    assert all(wanted == "draft" for _, wanted in REFUSED)


def study_in(status: str, owner) -> Study:
    """A study in ``status`` with one stored answer (given while it was live)."""
    study = load_study_file(claim_study_file(slug="s1", items=2, status="live"), owner=owner).study
    participant = ParticipantFactory(enrolled_in=study)
    assignment = assign_next_item(participant=participant, study=study)
    submit_response(assignment=assignment, answer={"label": "supports", "evidence": [0]})
    return change_study_status(study, status=status)


def file_asking(status: str) -> dict:
    return claim_study_file(slug="s1", items=2, status=status, title="Changed by the file")


def assert_unchanged(study: Study) -> None:
    after = Study.objects.get(pk=study.pk)
    assert (after.status, after.title, after.closed_at) == (study.status, study.title, study.closed_at)


@pytest.mark.parametrize(("current", "wanted"), REFUSED)
def test_the_upload_page_refuses_the_move_and_changes_nothing(owner, current, wanted):
    study = study_in(current, owner)
    browser = Client()
    browser.force_login(owner)
    upload = io.BytesIO(json.dumps(file_asking(wanted)).encode())
    upload.name = "study.json"
    answer = browser.post("/research/studies/new/", {"study_file": upload})
    assert answer.status_code == 400
    page = answer.content.decode()
    assert "status" in page and f"A {current} study cannot become {wanted}" in page
    assert_unchanged(study)


@pytest.mark.parametrize(("current", "wanted"), REFUSED)
def test_loadstudy_update_refuses_the_move_and_changes_nothing(owner, tmp_path, current, wanted):
    study = study_in(current, owner)
    path = tmp_path / "study.json"
    path.write_text(json.dumps(file_asking(wanted)))
    with pytest.raises(CommandError, match=rf"status: A {current} study cannot become {wanted}"):
        call_command("loadstudy", str(path), "--update", stdout=io.StringIO())
    assert_unchanged(study)


@pytest.mark.parametrize(("current", "wanted"), REFUSED)
def test_the_api_refuses_the_move_and_changes_nothing(owner, current, wanted):
    study = study_in(current, owner)
    api = CheckedClient()
    api.force_authenticate(owner)
    answer = api.post("/api/v1/studies/s1/status/", {"status": wanted}, format="json")
    assert answer.status_code == 400 and "status" in json.dumps(answer.json())
    assert_unchanged(study)


@pytest.mark.parametrize(("current", "wanted"), REFUSED)
def test_the_admin_form_no_longer_writes_the_status(owner, django_user_model, current, wanted):
    study = study_in(current, owner)
    admin = django_user_model.objects.create_superuser("root", "root@example.org", "pw-root-1")
    browser = Client()
    browser.force_login(admin)
    data = admin_form_data(Study, study, admin, status=wanted, title="Changed in the admin")
    answer = browser.post(f"/admin/annotation/study/{study.pk}/change/", data)
    assert answer.status_code == 302  # saved: the other fields are the admin's to change
    after = Study.objects.get(pk=study.pk)
    assert (after.title, after.status, after.closed_at) == ("Changed in the admin", current, study.closed_at)


def test_a_file_closing_a_live_study_records_the_closing(owner, tmp_path):
    study_in("live", owner)
    path = tmp_path / "study.json"
    path.write_text(json.dumps(file_asking("closed")))
    call_command("loadstudy", str(path), "--update", stdout=io.StringIO())
    after = Study.objects.get(slug="s1")
    assert after.status == "closed" and after.closed_at is not None
    assert after.closed_because == Study.ClosedBecause.RESEARCHER


def test_a_new_study_from_a_closed_file_is_closed_with_its_record(owner):
    study = load_study_file(claim_study_file(slug="fresh", items=1, status="closed"), owner=owner).study
    assert study.status == "closed" and study.closed_at is not None


def test_a_file_without_a_status_leaves_a_live_study_live(owner, tmp_path):
    study_in("live", owner)
    data = file_asking("live")
    del data["status"]
    path = tmp_path / "study.json"
    path.write_text(json.dumps(data))
    call_command("loadstudy", str(path), "--update", stdout=io.StringIO())
    assert Study.objects.get(slug="s1").status == "live"


def test_the_admin_actions_move_a_study_through_the_one_writer(owner, django_user_model):
    draft = load_study_file(claim_study_file(slug="d1", items=1, status="draft"), owner=owner).study
    live = study_in("live", owner)
    admin = django_user_model.objects.create_superuser("root", "root@example.org", "pw-root-1")
    browser = Client()
    browser.force_login(admin)
    changelist = "/admin/annotation/study/"
    browser.post(changelist, {"action": "go_live", "_selected_action": [draft.pk]})
    assert Study.objects.get(pk=draft.pk).status == "live"
    browser.post(changelist, {"action": "close", "_selected_action": [live.pk, draft.pk]})
    for study in Study.objects.filter(pk__in=[draft.pk, live.pk]):
        assert study.status == "closed" and study.closed_at is not None
        assert study.closed_because == Study.ClosedBecause.RESEARCHER


def test_a_live_study_without_answers_goes_back_to_draft_and_one_with_answers_says_how_many(owner):
    """Issue 39 (U9): test answers aside, a study nobody answered goes back to draft from its
    overview (its questions then change); once answered, the refusal and the page say how many."""
    from annotation.models import Enrollment

    study = load_study_file(claim_study_file(slug="s1", items=2, status="live"), owner=owner).study
    tester = ParticipantFactory(enrolled_in=study)
    Enrollment.objects.filter(participant=tester, study=study).update(is_test=True)
    submit_response(
        assignment=assign_next_item(participant=tester, study=study),
        answer={"label": "supports", "evidence": [0]},
    )
    browser = Client()
    browser.force_login(owner)
    page = browser.get("/research/s/s1/").content.decode()
    assert 'id="back-to-draft"' in page and "No answer is stored yet" in page
    browser.post("/research/s/s1/status/", {"status": "draft"})
    assert Study.objects.get(pk=study.pk).status == "draft"

    browser.post("/research/s/s1/status/", {"status": "live"})
    for _ in range(2):
        worker = ParticipantFactory(enrolled_in=study)
        submit_response(
            assignment=assign_next_item(participant=worker, study=study),
            answer={"label": "supports", "evidence": [0]},
        )
    page = browser.get("/research/s/s1/").content.decode()
    assert 'id="back-to-draft"' not in page and "2 answers are stored" in page
    api = CheckedClient()
    api.force_authenticate(owner)
    refused = api.post("/api/v1/studies/s1/status/", {"status": "draft"}, format="json")
    assert refused.status_code == 400 and "2 answers are stored" in refused.json()["status"][0]
    assert Study.objects.get(pk=study.pk).status == "live"
