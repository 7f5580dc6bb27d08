"""Prolific and MTurk entry and exit through the HTTP layer."""

from __future__ import annotations

import re

import pytest

from annotation.models import Assignment, Enrollment, Participant
from tests.helpers.crowd_ids import mturk_id, prolific_id

pytestmark = pytest.mark.django_db


def finish(client, study, query: str = "") -> str:
    """Consent (with the study link's crowd parameters), answer every page, and return the
    done page's HTML."""
    client.post(f"/s/{study.slug}/consent/{query}")
    page = client.get(f"/s/{study.slug}/task/", follow=True)
    while b"Submit and continue" in page.content:
        action = re.search(r'action="(/s/[^"]+/a/\d+/)"', page.content.decode()).group(1)
        # Follow the submit's redirect as a browser does: the answer that fills a crowd
        # study closes it and sends its participant straight to the done page.
        page = client.post(action, {"label": "supports", "evidence": "0"}, follow=True)
    return page.content.decode()


def test_prolific_participant_gets_the_code_and_a_link_back_to_prolific(client, make_claim_study):
    """The way back is a link the worker follows when ready: no timed redirect takes the page
    away while they copy the code (WCAG 2.2.1)."""
    study = make_claim_study(items=2, items_per_session=2, annotations_per_item=1)
    entry = client.get(f"/s/{study.slug}/?PROLIFIC_PID={prolific_id('pp-1')}&STUDY_ID=st&SESSION_ID=se")
    assert entry.status_code == 302
    html = finish(client, study, "?" + entry.url.split("?")[1])
    assert 'id="completion-code">DONE-123<' in html
    url = "https://app.prolific.com/submissions/complete?cc=DONE-123"
    assert f'id="return-link" href="{url}"' in html
    assert "http-equiv" not in html and "refresh" not in html.lower()
    again = client.get(f"/s/{study.slug}/done/")
    assert "http-equiv" not in again.content.decode() and "Refresh" not in again.headers
    enrollment = Enrollment.objects.get(participant__platform_worker_id=prolific_id("pp-1"))
    assert enrollment.platform_session == {"STUDY_ID": "st", "SESSION_ID": "se"}
    assert enrollment.status == "completed"


def test_prolific_screen_out_sends_the_screen_out_code(client, make_claim_study):
    study = make_claim_study(items=2, attention=2, items_per_session=3, attention_check_rate=0.67)
    html = finish(
        client, study, f"?PROLIFIC_PID={prolific_id('pp-2')}"
    )  # answers "supports" to the neutral attention check
    assert "OUT-999" in html and "cc=OUT-999" in html


def test_a_participant_who_leaves_releases_their_page(client, make_claim_study):
    study = make_claim_study(items=2, items_per_session=2)
    client.post(f"/s/{study.slug}/consent/?PROLIFIC_PID={prolific_id('pp-3')}")
    client.get(f"/s/{study.slug}/task/")
    held = Assignment.objects.get(participant__platform_worker_id=prolific_id("pp-3"))
    assert b"Leave the study" in client.get(f"/s/{study.slug}/leave/").content
    left = client.post(f"/s/{study.slug}/leave/")
    assert b"You have left this study" in left.content
    held.refresh_from_db()
    assert held.status == "released"
    assert Enrollment.objects.get(participant=held.participant).status == "returned"
    done = client.get(f"/s/{study.slug}/done/").content.decode()
    assert "completion-code" not in done


def test_a_prolific_worker_who_leaves_gets_the_button_to_return_it(client, make_claim_study):
    """The leave page offers the same way back as the declined and full pages."""
    study = make_claim_study(items=2, items_per_session=2)
    client.post(f"/s/{study.slug}/consent/?PROLIFIC_PID={prolific_id('pp-4')}")
    client.get(f"/s/{study.slug}/task/")
    left = client.post(f"/s/{study.slug}/leave/").content.decode()
    assert 'id="prolific-return" href="https://app.prolific.com/submissions"' in left
    assert "return this study on Prolific" in left


def test_a_worker_from_no_platform_who_leaves_gets_no_platform_button(client, make_claim_study):
    study = make_claim_study(items=2, items_per_session=2)
    client.post(f"/s/{study.slug}/consent/")
    client.get(f"/s/{study.slug}/task/")
    left = client.post(f"/s/{study.slug}/leave/").content.decode()
    assert "You have left this study" in left and 'id="prolific-return"' not in left


def test_mturk_preview_shows_a_real_page_read_only_and_assigns_nothing(client, make_claim_study):
    study = make_claim_study(items=2)
    page = client.get(f"/s/{study.slug}/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=h1")
    html = page.content.decode()
    assert page.status_code == 200 and 'id="preview-notice"' in html
    assert "Claim number 0 holds." in html and "<fieldset disabled" in html
    assert "study-submit" not in html and 'method="post"' not in html
    assert not Participant.objects.exists() and not Assignment.objects.exists()
    assert '"supports"' in html or "supports" in html  # the choices are shown…
    assert "gold" not in html  # …never the expected answer


def test_mturk_worker_submits_back_to_mturk_with_the_assignment_id(client, make_claim_study):
    study = make_claim_study(items=1, items_per_session=1, annotations_per_item=1)
    sandbox = "https%3A%2F%2Fworkersandbox.mturk.com"
    query = f"assignmentId=ASG1&hitId=HIT1&workerId={mturk_id('W1')}&turkSubmitTo={sandbox}"
    client.get(f"/s/{study.slug}/?{query}")
    html = finish(client, study, f"?{query}")
    assert 'action="https://workersandbox.mturk.com/mturk/externalSubmit"' in html
    assert 'name="assignmentId" value="ASG1"' in html and 'name="completion_code" value="DONE-123"' in html
    assert Participant.objects.get().source == "mturk"


def test_mturk_submit_host_must_be_mturk(client, make_claim_study):
    study = make_claim_study(items=1, items_per_session=1, annotations_per_item=1)
    client.get(
        f"/s/{study.slug}/?assignmentId=A&hitId=H&workerId={mturk_id('W2')}&turkSubmitTo=https%3A%2F%2Fevil.example"
    )
    html = finish(client, study)
    assert "externalSubmit" not in html and "evil.example" not in html
    assert 'id="completion-code">DONE-123<' in html


def test_participant_pages_may_be_framed_by_mturk_and_nothing_else(client, make_claim_study, admin_client):
    study = make_claim_study(items=1)
    page = client.get(f"/s/{study.slug}/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE")
    assert "frame-ancestors 'self' https://worker.mturk.com" in page["Content-Security-Policy"]
    assert "X-Frame-Options" not in page
    assert admin_client.get("/research/")["X-Frame-Options"] == "DENY"
