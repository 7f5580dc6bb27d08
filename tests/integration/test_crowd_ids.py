"""Adversarial review 3, N12: a crowd id that is not of its platform's form (``hog-123``,
300 × ``x``, 24 characters that are not hexadecimal) still took a page. Prolific ids are 24
lowercase hexadecimal characters; MTurk worker ids are "A" then capitals and digits, at
most 64. The study link and the consent refuse anything else with a page that says so (400)
and store nothing."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation.models import Assignment, Enrollment, Participant
from tests.helpers.crowd_ids import mturk_id, prolific_id

pytestmark = pytest.mark.django_db

NOT_PROLIFIC = ["hog-123", "x" * 300, "Z" * 24, "0123456789abcdef0123456g", "0123456789ABCDEF01234567", "abc"]
NOT_MTURK = ["W1", "a1b2c3", "A" + "B" * 64, "A-1", "A"]


def nothing_stored() -> bool:
    return not (Participant.objects.exists() or Enrollment.objects.exists() or Assignment.objects.exists())


@pytest.mark.parametrize("pid", NOT_PROLIFIC)
def test_a_prolific_id_not_of_prolifics_form_takes_no_page(make_claim_study, pid):
    study = make_claim_study()
    browser = Client()
    for answer in (
        browser.get(f"/s/{study.slug}/", {"PROLIFIC_PID": pid, "STUDY_ID": "s", "SESSION_ID": "x"}),
        browser.post(f"/s/{study.slug}/consent/?PROLIFIC_PID={pid}", {"decision": "agree"}),
    ):
        assert answer.status_code == 400
        page = answer.content.decode()
        assert 'id="crowd-id-refused"' in page and "(PROLIFIC_PID)" in page and "Prolific" in page
    assert browser.get(f"/s/{study.slug}/task/", follow=True).status_code == 200  # no page to go to
    assert nothing_stored()


@pytest.mark.parametrize("worker", NOT_MTURK)
def test_an_mturk_worker_id_not_of_mturks_form_takes_no_page(make_claim_study, worker):
    study = make_claim_study()
    query = f"workerId={worker}&assignmentId=A1&hitId=H1"
    for answer in (
        Client().get(f"/s/{study.slug}/?{query}"),
        Client().post(f"/s/{study.slug}/consent/?{query}", {"decision": "agree"}),
    ):
        assert answer.status_code == 400
        assert "(workerId)" in answer.content.decode() and "Mechanical Turk" in answer.content.decode()
    assert nothing_stored()


def test_ids_of_the_platforms_form_enter_as_before(make_claim_study):
    study = make_claim_study()
    prolific = Client().get(f"/s/{study.slug}/?PROLIFIC_PID={prolific_id('real')}")
    assert prolific.status_code == 302 and "/consent/" in prolific["Location"]
    worker = mturk_id("real")
    mturk = Client().post(
        f"/s/{study.slug}/consent/?workerId={worker}&assignmentId=A1&hitId=H1", {"decision": "agree"}
    )
    assert mturk.status_code == 302
    assert Participant.objects.get(source="mturk").platform_worker_id == worker
    assert Client().get(f"/s/{study.slug}/?workerId=A1B2C3D4E5&assignmentId=A2&hitId=H2").status_code == 302
