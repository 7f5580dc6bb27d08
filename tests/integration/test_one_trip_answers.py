"""The one-trip answer (issue 43): htmx's task form gets the next page (or the done page) in
the answer's own response, computed by the page's own view; every other client keeps
POST–redirect–GET. Both paths run on the same study here and store the same rows."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.utils import timezone

from annotation.models import Assignment, Enrollment, Response, Study
from annotation.services.authoring.studies import load_study_file
from annotation.services.participation.attention_schedule import attention_pages
from tests.helpers.crowd_ids import prolific_id
from tests.helpers.exams import GOLD as GOLD_EXAM
from tests.helpers.exams import exam_action, file_position
from tests.helpers.flow import start, task_action

pytestmark = pytest.mark.django_db
HTMX = {"HTTP_HX_REQUEST": "true", "HTTP_HX_BOOSTED": "true"}
GOLD = {"supports": {"label": "supports", "evidence": ["0"]}, "attention": {"label": "neutral"}}


def _answer_for(html: str) -> dict:
    """The right answer for the page ``html`` shows (the attention checks' too)."""
    return GOLD["attention"] if "Attention." in html else GOLD["supports"]


def _classic(client: Client, html: str) -> str:
    """One answer as a browser without JavaScript sends it: POST, redirect, GET."""
    posted = client.post(task_action(html), _answer_for(html))
    assert posted.status_code == 302 and not posted.has_header("HX-Push-Url")
    page = client.get(posted["Location"], follow=True)
    assert page.status_code == 200
    return page.content.decode()


def _one_trip(client: Client, html: str) -> tuple[str, str]:
    """One answer as htmx's task form sends it: one request, the next page in its response."""
    posted = client.post(task_action(html), _answer_for(html), **HTMX)
    assert posted.status_code == 200, posted.status_code
    return posted.content.decode(), posted["HX-Push-Url"]


def _rows(enrollment: Enrollment) -> list[tuple]:
    """A session's stored answers, without what differs between any two sessions (ids,
    times, which items): what the rules made of each answer."""
    rows = Response.objects.filter(participant=enrollment.participant, study=enrollment.study)
    return sorted(
        (r.is_attention_check, r.correct, r.too_fast, r.flagged, r.incomplete, repr(r.answer)) for r in rows
    )


def test_both_paths_store_the_same_rows_on_the_same_study(make_claim_study):
    study = make_claim_study(
        items=8, attention=2, items_per_session=4, attention_check_rate=0.5, min_seconds_per_page=20
    )
    sessions = {}
    for path in ("classic", "one_trip"):
        client = Client()
        html = start(client, study.slug, f"?PROLIFIC_PID={prolific_id(path)}")
        for page in range(1, 5):
            assert f"Page {page} of 4" in html
            if path == "classic":
                html = _classic(client, html)
            else:
                html, url = _one_trip(client, html)
                assert url == (f"/s/{study.slug}/task/" if page < 4 else f"/s/{study.slug}/done/")
        assert "DONE-123" in html  # the done page, with the completion code
        sessions[path] = Enrollment.objects.get(participant__platform_worker_id=prolific_id(path))
    classic, one_trip = sessions["classic"], sessions["one_trip"]
    assert classic.status == one_trip.status == Enrollment.Status.COMPLETED
    assert classic.answered_count == one_trip.answered_count == 4
    assert _rows(classic) == _rows(one_trip)
    for enrollment in (classic, one_trip):
        rows = Response.objects.filter(participant=enrollment.participant)
        # the attention checks fell where the schedule put them, and passed; every answer
        # under the minimum time per page is marked so; every page was shown before it was answered
        checks = {
            a.position
            for a in Assignment.objects.filter(participant=enrollment.participant)
            if a.item.is_attention_check
        }
        assert checks == attention_pages(study, enrollment.pk) and len(checks) == 2
        assert all(r.correct for r in rows if r.is_attention_check)
        assert all(r.too_fast for r in rows)
        assert all(r.shown_at is not None and r.shown_at <= r.answered_at for r in rows)


def test_the_next_page_counts_as_shown_when_the_answer_returns_it(make_claim_study):
    study = make_claim_study(items=4, items_per_session=3)
    client = Client()
    html = start(client, study.slug)
    before = timezone.now()
    html, url = _one_trip(client, html)
    after = timezone.now()
    assert url == f"/s/{study.slug}/task/" and "Page 2 of 3" in html
    shown = Assignment.objects.get(status=Assignment.Status.ASSIGNED)
    assert before <= shown.shown_at <= after
    assert task_action(html) == f"/s/{study.slug}/a/{shown.pk}/"
    # a reload of the pushed address shows the same page, still shown since then
    again = client.get(url).content.decode()
    assert task_action(again) == task_action(html)
    shown_again = Assignment.objects.get(pk=shown.pk)
    assert shown_again.shown_at == shown.shown_at


def test_a_second_post_of_the_same_page_stores_nothing_and_says_so(make_claim_study):
    study = make_claim_study(items=4, items_per_session=3)
    client = Client()
    html = start(client, study.slug)
    first, _ = _one_trip(client, html)
    second, url = _one_trip(client, html)  # a double click, or the page again after back
    assert Response.objects.count() == 1
    assert "already answered in another tab" in second and url == f"/s/{study.slug}/task/"
    assert task_action(second) == task_action(first)  # the same next page, not another one


def test_a_refused_answer_comes_back_with_its_errors_and_no_new_address(make_claim_study):
    study = make_claim_study(items=4, items_per_session=3)
    client = Client()
    html = start(client, study.slug)
    refused = client.post(task_action(html), {"label": "supports"}, **HTMX)
    assert refused.status_code == 400 and b"Select the sentence" in refused.content
    assert not refused.has_header("HX-Push-Url") and Response.objects.count() == 0


def test_the_one_trip_answer_checks_csrf_as_the_classic_one(make_claim_study):
    study = make_claim_study(items=4, items_per_session=3)
    client = Client()
    html = start(client, study.slug)
    strict = Client(enforce_csrf_checks=True)
    strict.cookies = client.cookies
    assert strict.post(task_action(html), GOLD["supports"], **HTMX).status_code == 403
    assert Response.objects.count() == 0
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    answered = strict.post(task_action(html), {**GOLD["supports"], "csrfmiddlewaretoken": token}, **HTMX)
    assert answered.status_code == 200 and Response.objects.count() == 1


def test_a_closed_study_refuses_the_one_trip_answer(make_claim_study):
    study = make_claim_study(items=4, items_per_session=3)
    client = Client()
    html = start(client, study.slug)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.CLOSED)
    refused = client.post(task_action(html), GOLD["supports"], **HTMX)
    assert refused.status_code == 410 and refused["HX-Redirect"] == f"/s/{study.slug}/"
    assert Response.objects.count() == 0


def test_a_researchers_test_run_stays_a_test_on_the_one_trip_path(make_claim_study, owner, owner_client):
    study = make_claim_study(items=2, annotations_per_item=1, items_per_session=2)
    Study.objects.filter(pk=study.pk).update(owner=owner)
    html = start(owner_client, study.slug)
    for _ in range(2):
        html, url = _one_trip(owner_client, html)
    assert url == f"/s/{study.slug}/done/" and 'id="test-answers"' in html
    assert Enrollment.objects.get(study=study).is_test and Response.objects.count() == 2


def test_adaptive_study_hands_out_pages_on_the_one_trip_path(make_claim_study):
    study = make_claim_study(items=4, items_per_session=3, config={"assignment": "adaptive"})
    client = Client()
    html = start(client, study.slug)
    seen = []
    for _ in range(3):
        seen.append(task_action(html))
        html, _ = _one_trip(client, html)
    assert len(set(seen)) == 3 and Response.objects.count() == 3
    assert Enrollment.objects.get().status == Enrollment.Status.COMPLETED


def test_a_client_that_does_not_ask_gets_the_redirect(make_claim_study):
    study = make_claim_study(items=4, items_per_session=3)
    client = Client()
    posted = client.post(task_action(start(client, study.slug)), GOLD["supports"])
    assert posted.status_code == 302 and posted["Location"] == f"/s/{study.slug}/task/"


def test_an_exam_answered_on_the_one_trip_path_leads_to_the_study(example_study_file):
    load_study_file(example_study_file("simulation-exam"))
    main = example_study_file("plausibility")
    main.update(qualification="demo-simulation-exam")
    study = load_study_file(main).study
    client = Client()
    html = start(client, study.slug)
    for number in (1, 2, 3):
        assert f"Question {number} of 3" in html
        action = exam_action(html)
        posted = client.post(action, {"choice": GOLD_EXAM[file_position(action)]}, **HTMX)
        assert posted.status_code == 200 and posted["HX-Push-Url"] == f"/s/{study.slug}/exam/"
        html = posted.content.decode()
    assert "You passed" in html and "3 of 3 correct" in html
    assert Response.objects.filter(study__slug="demo-simulation-exam").count() == 3
