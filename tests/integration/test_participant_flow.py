"""The participant's pages through the HTTP layer: entry, consent, pages, code."""

import pytest

from annotation.models import Assignment, Enrollment, Participant, Response
from tests.helpers.crowd_ids import mturk_id, prolific_id
from tests.helpers.flow import start, task_action

pytestmark = pytest.mark.django_db


def test_prolific_participant_completes_and_sees_code(client, make_claim_study):
    study = make_claim_study(
        items_per_session=3, completion_url="https://app.prolific.com/submissions/complete?cc={code}"
    )
    html = start(client, study.slug, f"?PROLIFIC_PID={prolific_id('pid-1')}&STUDY_ID=st&SESSION_ID=se")
    for page in range(1, 4):
        assert f"Page {page} of 3" in html
        client.post(task_action(html), {"label": "supports", "evidence": ["0"]})
        html = client.get(f"/s/{study.slug}/task/", follow=True).content.decode()
    assert "DONE-123" in html
    assert "https://app.prolific.com/submissions/complete?cc=DONE-123" in html
    participant = Participant.objects.get(source="prolific", platform_worker_id=prolific_id("pid-1"))
    enrollment = Enrollment.objects.get(participant=participant)
    assert enrollment.status == "completed"
    assert enrollment.platform_session == {"STUDY_ID": "st", "SESSION_ID": "se"}
    assert Response.objects.filter(participant=participant).count() == 3
    assert prolific_id("pid-1") not in html


def test_mturk_params_create_an_mturk_participant_and_preview_assigns_nothing(client, make_claim_study):
    study = make_claim_study()
    preview = client.get(f"/s/{study.slug}/?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=h")
    assert preview.status_code == 200 and b"preview" in preview.content
    assert Participant.objects.count() == 0
    start(client, study.slug, f"?workerId={mturk_id('W1')}&assignmentId=A1&hitId=H1")
    assert Participant.objects.get().source == "mturk"
    assert Assignment.objects.count() == 1


def test_anonymous_participant_is_remembered_and_resumes(client, make_claim_study):
    study = make_claim_study()
    html = start(client, study.slug)
    action = task_action(html)
    again = client.get(f"/s/{study.slug}/", follow=True).content.decode()
    assert task_action(again) == action
    assert Participant.objects.count() == 1


def test_bad_form_gets_400_with_the_field_message_and_nothing_stored(client, make_claim_study):
    study = make_claim_study()
    html = start(client, study.slug)
    response = client.post(task_action(html), {"label": "supports"})
    assert response.status_code == 400
    assert b"Select the sentence" in response.content
    response = client.post(task_action(html), {"label": "supports", "evidence": ["7"]})
    assert response.status_code == 400 and b"out of range" in response.content
    assert Response.objects.count() == 0


def test_double_post_stores_one_response(client, make_claim_study):
    study = make_claim_study()
    action = task_action(start(client, study.slug))
    for _ in range(2):
        assert client.post(action, {"label": "neutral"}).status_code == 302
    assert Response.objects.count() == 1


def test_someone_elses_assignment_is_404(client, make_claim_study):
    from django.test import Client

    study = make_claim_study()
    action = task_action(start(client, study.slug))
    intruder = Client()
    start(intruder, study.slug)
    assert intruder.post(action, {"label": "neutral"}).status_code == 404
    assert intruder.post(f"/s/{study.slug}/a/not-a-number/", {"label": "neutral"}).status_code == 404
    assert Response.objects.count() == 0


def test_page_never_contains_gold(client, make_claim_study):
    study = make_claim_study(items=1)
    study.items.update(gold={"label": "contradicts", "evidence": [2]})
    html = start(client, study.slug)
    assert "contradicts the claim" in html  # the option's wording, not the gold
    assert '"contradicts"' not in html.replace('value="contradicts"', "")
    assert "gold" not in html.lower()


def test_draft_study_is_hidden_and_closed_study_says_so(client, make_claim_study):
    draft = make_claim_study(slug="draft-study", status="draft")
    closed = make_claim_study(slug="closed-study", status="closed")
    assert client.get(f"/s/{draft.slug}/").status_code == 404
    assert client.get(f"/s/{closed.slug}/").status_code == 410


def test_blocked_participant_cannot_enter(client, make_claim_study):
    study = make_claim_study()
    Participant.objects.create(source="prolific", platform_worker_id=prolific_id("bad"), blocked=True)
    assert client.get(f"/s/{study.slug}/?PROLIFIC_PID={prolific_id('bad')}").status_code == 403


def test_screened_out_participant_gets_the_screenout_code(client, make_claim_study):
    study = make_claim_study(items=3, attention=1, items_per_session=2, attention_check_rate=0.5)
    html = start(client, study.slug)
    for _ in range(2):
        client.post(task_action(html), {"label": "supports", "evidence": ["0"]})
        html = client.get(f"/s/{study.slug}/task/", follow=True).content.decode()
    assert "OUT-999" in html and "DONE-123" not in html


def test_home_lists_public_live_studies(client, make_claim_study):
    make_claim_study(slug="open-one", title="Open one", public=True)
    make_claim_study(slug="hidden-one", title="Hidden one", public=False)
    html = client.get("/").content.decode()
    assert "Open one" in html and "Hidden one" not in html


def test_instructions_are_rendered_safely(client, make_claim_study):
    study = make_claim_study(instructions="**Read** <script>alert(1)</script>")
    html = client.get(f"/s/{study.slug}/instructions/").content.decode()
    assert "<strong>Read</strong>" in html and "<script>alert" not in html


def test_healthz(client):
    assert client.get("/healthz").content == b"ok"
