"""Review finding 4 (adversarial review): throwaway anonymous sessions could hold every open
page of a study for the full timeout, and a participant who then found no page got the
completion code after 1 of N pages.

Now: a participant who has answered nothing holds a page only ``FIRST_PAGE_MINUTES``,
whatever their source (adversarial review 2, N12: made-up Prolific ids held the last pages
30 minutes); a participant whose remaining pages are only held by others is asked to come
back (their session is not ended); one whose pages truly ran out is told the session fell
short, and gets the code only when the study sets ``pay_partial_sessions``."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from annotation.models import Assignment, Enrollment, Participant
from annotation.services.participation.assignment import release_expired_assignments
from tests.helpers.crowd_ids import prolific_id
from tests.helpers.flow import start, task_action

pytestmark = pytest.mark.django_db
ANSWER = {"label": "supports", "evidence": ["0"]}
CODE = "SMALL-DONE-CODE"


@pytest.fixture
def small_study(make_claim_study):
    """alice-small of the report: 3 items, one answer each, 3 pages a session."""
    return make_claim_study(
        slug="alice-small", items=3, annotations_per_item=1, items_per_session=3, completion_code=CODE
    )


def answer_first_page(client: Client, slug: str, pid: str) -> Participant:
    client.post(task_action(start(client, slug, f"?PROLIFIC_PID={prolific_id(pid)}")), ANSWER)
    return Participant.objects.get(platform_worker_id=prolific_id(pid))


def hog(slug: str) -> Assignment:
    """A fresh anonymous browser that consents and takes a page, then never answers."""
    start(Client(), slug)
    return Assignment.objects.order_by("-pk").first()


def test_pages_held_by_throwaway_sessions_do_not_end_a_session(client, small_study, settings):
    settings.FIRST_PAGE_MINUTES = 5
    victim = answer_first_page(client, small_study.slug, "victim")
    hogs = [hog(small_study.slug), hog(small_study.slug)]
    for held in hogs:  # the short hold, not the study's 30 minutes
        assert held.participant.source == "organic"
        assert held.expires_at - held.assigned_at == timedelta(minutes=5)
    waiting = client.get(f"/s/{small_study.slug}/task/")
    html = waiting.content.decode()
    assert waiting.status_code == 200 and 'id="pages-held"' in html and CODE not in html
    assert Enrollment.objects.get(participant=victim).status == "active"
    # Five minutes later the throwaway pages go back and the victim goes on.
    Assignment.objects.filter(pk__in=[h.pk for h in hogs]).update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )
    release_expired_assignments()
    page = client.get(f"/s/{small_study.slug}/task/").content.decode()
    assert "Page 2 of 3" in page


def test_a_participant_holds_at_most_one_open_page(client, small_study):
    start(client, small_study.slug, f"?PROLIFIC_PID={prolific_id('one-page')}")
    for _ in range(3):
        assert client.get(f"/s/{small_study.slug}/task/").status_code == 200
    assert Assignment.objects.filter(status="assigned").count() == 1


def test_a_first_page_is_held_briefly_whatever_the_source(client, small_study, settings):
    settings.FIRST_PAGE_MINUTES = 5
    crowd = Client()
    start(crowd, small_study.slug, f"?PROLIFIC_PID={prolific_id('crowd')}")
    crowd_page = Assignment.objects.get(participant__platform_worker_id=prolific_id("crowd"))
    assert crowd_page.expires_at - crowd_page.assigned_at == timedelta(minutes=5)
    client.post(task_action(start(client, small_study.slug)), ANSWER)  # anonymous, answers page 1
    client.get(f"/s/{small_study.slug}/task/")
    second = Assignment.objects.filter(status="assigned", participant__source="organic").get()
    assert second.expires_at - second.assigned_at == timedelta(minutes=small_study.timeout_minutes)


def test_made_up_crowd_ids_hold_the_last_pages_only_briefly(client, small_study, settings):
    """N12: two sessions with ids of Prolific's form that no one on Prolific has take the
    study's last two pages and never answer; a real newcomer gets a page once the short
    first-page hold is over, not after the study's 30 minutes. (Ids not of the form take no
    page at all: tests/integration/test_crowd_ids.py.)"""
    settings.FIRST_PAGE_MINUTES = 5
    answer_first_page(client, small_study.slug, "victim")
    made_up = [prolific_id("hog-1a2b"), prolific_id("hog-3c4d")]
    for pid in made_up:
        start(Client(), small_study.slug, f"?PROLIFIC_PID={pid}")
    hogs = Assignment.objects.filter(participant__platform_worker_id__in=made_up, status="assigned")
    assert hogs.count() == 2
    newcomer = Client()
    full = newcomer.get(
        f"/s/{small_study.slug}/?PROLIFIC_PID={prolific_id('real-newcomer')}"
    ).content.decode()
    assert "This study is full" in full  # within the hold
    # Six minutes later (well inside the study's 30): the holds are over.
    six_minutes = timedelta(minutes=6)
    for held in hogs:
        Assignment.objects.filter(pk=held.pk).update(
            assigned_at=held.assigned_at - six_minutes, expires_at=held.expires_at - six_minutes
        )
    html = start(newcomer, small_study.slug, f"?PROLIFIC_PID={prolific_id('real-newcomer')}")
    assert "Page 1 of 3" in html
    held = Assignment.objects.filter(
        participant__platform_worker_id=prolific_id("real-newcomer"), status="assigned"
    )
    assert held.exists()


def run_out_of_items(client: Client, study) -> str:
    """The victim answers page 1; two others answer the other two items; the victim goes on."""
    answer_first_page(client, study.slug, "victim")
    for pid in ("other-1", "other-2"):
        answer_first_page(Client(), study.slug, pid)
    return client.get(f"/s/{study.slug}/task/", follow=True).content.decode()


def test_a_session_cut_short_is_told_so_and_gets_no_code_by_default(client, small_study):
    html = run_out_of_items(client, small_study)
    assert 'id="cut-short"' in html and "after 1 of the 3 pages" in html
    assert CODE not in html and "pays complete sessions only" in html
    assert Enrollment.objects.get(participant__platform_worker_id=prolific_id("victim")).status == "completed"


def test_a_study_that_pays_partial_sessions_shows_the_code(client, make_claim_study):
    study = make_claim_study(
        slug="pays-partial", items=3, annotations_per_item=1, items_per_session=3,
        completion_code=CODE, pay_partial_sessions=True,
    )  # fmt: skip
    html = run_out_of_items(client, study)
    assert 'id="cut-short"' in html and CODE in html


def test_a_full_session_is_not_called_short(client, make_claim_study):
    study = make_claim_study(slug="full", items=3, annotations_per_item=1, items_per_session=1)
    client.post(task_action(start(client, study.slug, f"?PROLIFIC_PID={prolific_id('full')}")), ANSWER)
    html = client.get(f"/s/{study.slug}/task/", follow=True).content.decode()
    assert "DONE-123" in html and 'id="cut-short"' not in html
