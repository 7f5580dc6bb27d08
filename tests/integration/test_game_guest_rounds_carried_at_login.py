"""Usability defect 8: guest rounds were lost on logging in to an existing account. Logging in
now adds the browser's guest rounds to the account (``merge_guest_into_account``); a passage
both played keeps the account's answer, and the player is told both."""

import html as html_lib

import pytest
from django.db import transaction
from django.test import Client
from django.utils import timezone

from annotation.kinds.boundary.rounds import reveal_next_sentence
from annotation.models import Assignment, Enrollment, Item, Participant, PlayerStats, Response
from annotation.participation.views.session import PARTICIPANT_KEY
from annotation.services.authoring.studies import load_study_file
from annotation.services.participation.assignment import create_assignment
from tests.factories import ParticipantFactory
from tests.game_helpers import boundary_study_file, play_round, start_game

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-password-9"


@pytest.fixture(autouse=True)
def quick_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def game(slug: str, items: int):
    data = boundary_study_file(slug=slug, items=items, category=slug, title=f"{slug} game")
    return load_study_file(data).study


def account(django_user_model, study) -> Participant:
    user = django_user_model.objects.create_user(username="returning", password=PASSWORD)
    return ParticipantFactory(enrolled_in=study, user=user)


def play_passage(participant: Participant, item: Item) -> Response:
    """The account plays this very passage (through the round and submission services)."""
    from annotation.kinds.boundary.rounds import record_guess
    from annotation.services.participation.submission import submit_response

    with transaction.atomic():
        now = timezone.now()
        assignment = create_assignment(study=item.study, item=item, participant=participant, now=now)
    guess = item.payload["boundary"]
    for seen in range(1, guess + 1):
        reveal_next_sentence(assignment=assignment, seen=seen)
    record_guess(assignment=assignment, guess=guess)
    return submit_response(assignment=assignment, answer={"guess": guess, "reason": "A guess."}).response


def log_in(browser: Client) -> str:
    form = {"username": "returning", "password": PASSWORD, "next": "/play/profile/"}
    page = browser.post("/accounts/login/", form, follow=True)
    assert page.status_code == 200
    return html_lib.unescape(page.content.decode())


def test_logging_in_adds_the_guest_rounds_and_keeps_the_accounts_answer_on_a_shared_passage(
    django_user_model,
):
    news, stories = game("news", 4), game("stories", 2)
    browser = Client()
    start_game(browser, "news")
    for _ in range(3):
        play_round(browser, "news", mark=4)
    browser.get("/s/news/task/")  # the fourth news round, opened and left unanswered
    start_game(browser, "stories")
    play_round(browser, "stories", mark=None)
    start_game(browser, "stories")  # a second stories round, opened too
    guest = Participant.objects.get(user__isnull=True)
    own = account(django_user_model, news)
    shared = Response.objects.filter(participant=guest, study=news).order_by("id").first().item
    own_round = play_passage(own, shared)  # the account had played one of the guest's passages
    open_news = Assignment.objects.get(participant=guest, study=news, status="assigned")

    page = log_in(browser)

    assert "3 guest rounds added to your account." in page
    assert "1 passage you already had on this account kept the account's answer" in page
    assert browser.session[PARTICIPANT_KEY] == own.pk
    assert Response.objects.get(pk=own_round.pk).participant_id == own.pk  # the account's answer stands
    assert Response.objects.get(participant=guest).item_id == shared.pk  # the guest's stays behind
    mine = Response.objects.filter(participant=own).order_by("score_details__order")
    assert [r.score_details["order"] for r in mine] == [1, 2, 3, 4]  # renumbered by answer time
    assert mine.last().pk == own_round.pk
    news_enrollment = Enrollment.objects.get(participant=own, study=news)
    assert news_enrollment.answered_count == 3
    assert news_enrollment.points_total == sum(r.points for r in mine.filter(study=news))
    positions = Assignment.objects.filter(participant=own, study=news).values_list("position", flat=True)
    assert sorted(positions) == [1, 2, 3]
    open_news.refresh_from_db()
    assert open_news.status == "released" and open_news.item.slots_taken == 0  # its slot given back
    assert Enrollment.objects.get(study=stories).participant_id == own.pk  # moved whole, open round too
    assert Assignment.objects.get(study=stories, status="assigned").participant_id == own.pk
    overall = PlayerStats.objects.get(participant=own, category="")
    assert (overall.played, overall.rounds) == (4, 4)
    assert PlayerStats.objects.get(participant=own, category="stories").rounds == 1
    assert PlayerStats.objects.get(participant=guest, category="").played == 1
    profile = browser.get("/play/profile/").content.decode()
    assert 'id="fig-rounds">4<' in profile


def test_a_flagged_guests_rounds_are_not_added_and_the_player_is_told(django_user_model):
    news = game("news", 3)
    own = account(django_user_model, news)
    browser = Client()
    start_game(browser, "news")
    play_round(browser, "news", mark=4)
    Enrollment.objects.filter(participant__user__isnull=True).update(
        flagged=True, flag_reason="failed attention checks"
    )

    page = log_in(browser)

    assert "Your guest rounds were not added to this account" in page
    assert not Response.objects.filter(participant=own).exists()
    assert not PlayerStats.objects.filter(participant=own).exists()
