"""A participant who finished sees their code at the study link whatever the study's status
(live, closed at its quota, closed by a researcher, a draft they preview); only someone who
never started is asked to return the study (docs/crowd.md, "When a study fills up")."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.test import Client

from annotation.models import Enrollment, Participant, Study
from annotation.services.authoring.studies import load_study_file
from annotation.services.participation.attention import screen_out
from annotation.services.study_status import change_study_status
from tests.conftest import claim_study_file
from tests.factories import researcher_user
from tests.helpers.crowd_ids import prolific_id
from tests.helpers.flow import start, task_action
from tests.helpers.module_data import rows_for_the_module

pytestmark = pytest.mark.django_db
ANSWER = {"label": "supports", "evidence": ["0"]}
RETURN_IT = "return this study on Prolific"


def take_part(study: Study, pid: str, pages: int) -> Client:
    """A Prolific participant who consents and answers ``pages`` pages over HTTP."""
    client = Client()
    html = start(client, study.slug, f"?PROLIFIC_PID={prolific_id(pid)}")
    for _ in range(pages):
        response = client.post(task_action(html), ANSWER, follow=True)
        html = response.content.decode()
    return client


def come_back(study: Study, pid: str):
    """The study link opened again from the platform, in a browser that has no session."""
    return Client().get(f"/s/{study.slug}/?PROLIFIC_PID={prolific_id(pid)}", follow=True)


def set_status(study: Study, status: str) -> None:
    if status == "quota":
        change_study_status(study, status=Study.Status.CLOSED, by_quota=True)
    elif status == "researcher":
        change_study_status(study, status=Study.Status.CLOSED)


@pytest.fixture(scope="module")
def crowd_rows(django_db_setup, django_db_blocker) -> Iterator[int]:
    """A claim study with a finished, a screened-out and a mid-session Prolific participant,
    written once for the module (tests/helpers/module_data.py): the study's primary key."""
    with rows_for_the_module(django_db_blocker):
        study = load_study_file(claim_study_file(items=6, items_per_session=2, annotations_per_item=3)).study
        take_part(study, "done-1", 2)
        take_part(study, "out-1", 1)
        screen_out(
            enrollment=Enrollment.objects.get(participant__platform_worker_id=prolific_id("out-1")),
            reason="test",
        )
        take_part(study, "mid-1", 1)
        yield study.pk


@pytest.fixture
def crowd(crowd_rows) -> Study:
    """The crowd's study as written, read afresh for each test (which may close it)."""
    return Study.objects.get(pk=crowd_rows)


@pytest.mark.parametrize("status", ["live", "quota", "researcher"])
def test_a_finished_participant_sees_their_completion_code(crowd, status):
    set_status(crowd, status)
    page = come_back(crowd, "done-1")
    html = page.content.decode()
    assert page.status_code == 200
    assert page.redirect_chain[-1][0] == f"/s/{crowd.slug}/done/"
    assert "DONE-123" in html and RETURN_IT not in html


@pytest.mark.parametrize("status", ["live", "quota", "researcher"])
def test_a_screened_out_participant_sees_their_screen_out_code(crowd, status):
    set_status(crowd, status)
    html = come_back(crowd, "out-1").content.decode()
    assert "OUT-999" in html and "DONE-123" not in html and RETURN_IT not in html


@pytest.mark.parametrize("status", ["quota", "researcher"])
def test_the_same_browser_sees_its_code_without_the_platform_id(make_claim_study, status):
    study = make_claim_study(items=6, items_per_session=2, annotations_per_item=3)
    client = take_part(study, "done-2", 2)
    set_status(study, status)
    html = client.get(f"/s/{study.slug}/", follow=True).content.decode()
    assert "DONE-123" in html


@pytest.mark.parametrize("status", ["quota", "researcher"])
def test_only_someone_who_never_started_is_asked_to_return_a_closed_study(crowd, status):
    set_status(crowd, status)
    page = come_back(crowd, "never-1")
    assert page.status_code == 410
    assert RETURN_IT in page.content.decode()
    assert not Participant.objects.filter(platform_worker_id=prolific_id("never-1")).exists()


def test_a_newcomer_at_a_live_study_is_asked_to_consent(crowd):
    page = come_back(crowd, "never-1")
    assert page.redirect_chain[-1][0].startswith(f"/s/{crowd.slug}/consent/")


def test_mid_session_at_a_study_the_researcher_closed_gets_the_closed_page_saying_what_happens(crowd):
    set_status(crowd, "researcher")
    page = come_back(crowd, "mid-1")
    html = page.content.decode()
    assert page.status_code == 410
    assert 'id="closed-mid-session"' in html and "The 1 page you answered is kept" in html
    assert "DONE-123" not in html
    enrollment = Enrollment.objects.get(participant__platform_worker_id=prolific_id("mid-1"))
    assert enrollment.status == Enrollment.Status.ACTIVE  # nothing changed by looking


def test_mid_session_at_a_study_the_quota_closed_gets_the_done_page(crowd):
    set_status(crowd, "quota")
    page = come_back(crowd, "mid-1")
    assert page.redirect_chain[-1][0] == f"/s/{crowd.slug}/done/"
    assert RETURN_IT not in page.content.decode()


def test_a_researcher_who_finished_a_preview_of_a_draft_sees_the_code(make_claim_study, django_user_model):
    owner = researcher_user("draft-owner")
    study = make_claim_study(slug="draft-preview", items=3, items_per_session=1, status="draft")
    Study.objects.filter(pk=study.pk).update(owner=owner)
    client = Client()
    client.force_login(owner)
    html = start(client, study.slug)
    client.post(task_action(html), ANSWER)
    html = client.get(f"/s/{study.slug}/", follow=True).content.decode()
    assert "DONE-123" in html
