"""Arriving at a study: capacity before consent, an explicit consent choice, quotas."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.models import Enrollment, Participant, Study
from tests.helpers.crowd_ids import mturk_id, prolific_id
from tests.helpers.flow import answer_pages, task_action

pytestmark = pytest.mark.django_db


def consent_and_answer_all(client: Client, study: Study, query: str) -> str:
    """Enter with ``query``, agree, answer every page; the last page's HTML."""
    entry = client.get(f"/s/{study.slug}/{query}", follow=True)
    html = client.post(entry.redirect_chain[-1][0], {"decision": "agree"}, follow=True).content.decode()
    while "Submit and continue" in html:
        html = client.post(task_action(html), {"label": "supports", "evidence": "0"}, follow=True)
        html = html.content.decode()
    return html


def test_a_prolific_participant_at_a_filled_study_is_told_to_return_it_before_consent(make_claim_study):
    study = make_claim_study(items=1, items_per_session=1, annotations_per_item=1)
    assert "DONE-123" in consent_and_answer_all(Client(), study, f"?PROLIFIC_PID={prolific_id('first')}")
    # The last answer closed the study (a crowd study closes at its quota).
    late = Client().get(f"/s/{study.slug}/?PROLIFIC_PID={prolific_id('late')}&STUDY_ID=s", follow=True)
    html = late.content.decode()
    assert 'id="study-closed"' in html and "return this study on Prolific" in html
    assert 'id="prolific-return"' in html
    assert "I agree" not in html and "DONE-123" not in html
    assert not Participant.objects.filter(platform_worker_id__startswith=prolific_id("late")).exists()


def test_an_mturk_worker_at_a_full_study_is_told_to_return_the_hit(make_claim_study):
    study = make_claim_study(items=1, items_per_session=1, annotations_per_item=1, close_when_full=False)
    consent_and_answer_all(Client(), study, f"?PROLIFIC_PID={prolific_id('first')}")
    html = Client().get(f"/s/{study.slug}/?workerId={mturk_id('W9')}&assignmentId=A9&hitId=H9", follow=True)
    assert "return this HIT on Mechanical Turk" in html.content.decode()


def test_held_pages_count_against_capacity_and_a_consented_participant_left_out_sees_the_full_page(
    make_claim_study,
):
    study = make_claim_study(items=2, items_per_session=1, annotations_per_item=1)
    waiting, first, second = Client(), Client(), Client()
    consent = waiting.get(f"/s/{study.slug}/?PROLIFIC_PID={prolific_id('waiting')}", follow=True)
    assert "I agree" in consent.content.decode()
    first.post(
        f"/s/{study.slug}/consent/?PROLIFIC_PID={prolific_id('first')}", {"decision": "agree"}, follow=True
    )
    second.post(
        f"/s/{study.slug}/consent/?PROLIFIC_PID={prolific_id('second')}", {"decision": "agree"}, follow=True
    )
    assert (
        'id="study-full"'
        in Client().get(f"/s/{study.slug}/?PROLIFIC_PID={prolific_id('third')}").content.decode()
    )
    # "first" and "second" hold the only pages: "waiting" consents anyway and is told it is full.
    html = waiting.post(consent.redirect_chain[-1][0], {"decision": "agree"}, follow=True).content.decode()
    assert 'id="study-full"' in html and "return this study on Prolific" in html


def test_a_crowd_study_closes_itself_at_its_quota_and_the_overview_says_so(make_claim_study):
    study = make_claim_study(items=1, items_per_session=1, annotations_per_item=1)
    assert study.closes_when_full
    consent_and_answer_all(Client(), study, f"?PROLIFIC_PID={prolific_id('only')}")
    Client().get(f"/s/{study.slug}/?PROLIFIC_PID={prolific_id('late')}")
    study.refresh_from_db()
    assert study.status == Study.Status.CLOSED
    admin = get_user_model().objects.create_superuser("boss", password="pw")
    client = Client()
    client.force_login(admin)
    html = client.get(f"/research/s/{study.slug}/").content.decode()
    assert 'id="closes-when-full">yes (the default' in html and 'id="study-status">Closed' in html


def test_a_study_set_not_to_close_stays_live_at_its_quota(make_claim_study):
    study = make_claim_study(items=1, items_per_session=1, annotations_per_item=1, close_when_full=False)
    participant = Participant.objects.create(source="lab")
    Enrollment.objects.create(participant=participant, study=study, status="active")
    answer_pages(study, participant, {"label": "supports", "evidence": [0]})
    Client().get(f"/s/{study.slug}/")
    study.refresh_from_db()
    assert study.status == Study.Status.LIVE


def test_consent_offers_an_explicit_no_and_nothing_is_focused(make_claim_study):
    study = make_claim_study()
    client = Client()
    html = client.get(f"/s/{study.slug}/?PROLIFIC_PID={prolific_id('p1')}", follow=True).content.decode()
    assert 'value="decline"' in html and "I do not agree" in html
    assert "autofocus" not in html
    declined = client.post(
        f"/s/{study.slug}/consent/?PROLIFIC_PID={prolific_id('p1')}", {"decision": "decline"}
    )
    text = declined.content.decode()
    assert 'id="consent-declined"' in text and "return this study on Prolific" in text
    assert not Participant.objects.exists() and not Enrollment.objects.exists()
    agreed = client.post(f"/s/{study.slug}/consent/?PROLIFIC_PID={prolific_id('p1')}", {"decision": "agree"})
    assert agreed.status_code == 302 and agreed.url == f"/s/{study.slug}/task/"
    assert Enrollment.objects.get(participant__platform_worker_id=prolific_id("p1")).status == "active"


def test_a_returning_prolific_participant_resumes_in_a_new_browser(make_claim_study):
    study = make_claim_study()
    Client().post(
        f"/s/{study.slug}/consent/?PROLIFIC_PID={prolific_id('p2')}&SESSION_ID=one", {"decision": "agree"}
    )
    again = Client().get(f"/s/{study.slug}/?PROLIFIC_PID={prolific_id('p2')}&SESSION_ID=two")
    assert again.status_code == 302 and again.url == f"/s/{study.slug}/task/"
    assert Enrollment.objects.get().platform_session == {"SESSION_ID": "two"}


@pytest.mark.parametrize(("hold", "held"), [(True, True), (False, False)])
def test_the_minimum_time_holds_the_submit_only_where_the_study_says_so(make_claim_study, hold, held):
    study = make_claim_study(min_seconds_per_page=20, hold_submit=hold)
    client = Client()
    client.post(f"/s/{study.slug}/consent/", {"decision": "agree"})
    html = client.get(f"/s/{study.slug}/task/").content.decode()
    assert ('data-min-seconds="20"' in html) is held and "js/min-time.js" in html
