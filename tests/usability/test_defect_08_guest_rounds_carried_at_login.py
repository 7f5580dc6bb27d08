"""Usability defect 8: guest rounds were lost on logging in to an existing account. Logging in
now adds the browser's guest rounds to the account (``merge_guest_into_account``); a passage
both played keeps the account's answer, and the player is told both."""

import html as html_lib

import pytest
from django.test import Client

from annotation.models import Assignment, Enrollment, Participant, PlayerStats, Response
from annotation.services.studies import load_study_file
from annotation.views.session import PARTICIPANT_KEY
from tests.factories import ParticipantFactory
from tests.game_helpers import boundary_study_file, play_round, play_via_services, start_game

pytestmark = pytest.mark.django_db

PASSWORD = "a-long-password-9"


@pytest.fixture(autouse=True)
def quick_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def game(slug: str, items: int):
    data = boundary_study_file(slug=slug, items=items, category=slug, title=f"{slug} game")
    return load_study_file(data).study


def account_with_one_round(django_user_model, study):
    user = django_user_model.objects.create_user(username="returning", password=PASSWORD)
    own = ParticipantFactory(enrolled_in=study, user=user)
    own_round = play_via_services(own, study, lambda boundary, length: boundary)
    return own, own_round


def log_in(browser: Client) -> str:
    form = {"username": "returning", "password": PASSWORD, "next": "/play/profile/"}
    page = browser.post("/accounts/login/", form, follow=True)
    assert page.status_code == 200
    return html_lib.unescape(page.content.decode())


def test_defect_08_logging_in_adds_the_guest_rounds_and_keeps_the_accounts_answer_on_a_shared_passage(
    django_user_model,
):
    news, stories = game("news", 3), game("stories", 2)
    own, own_round = account_with_one_round(django_user_model, news)
    browser = Client()
    start_game(browser, "news")
    for _ in range(3):  # every news passage, so one of them is the account's
        play_round(browser, "news", mark=4)
    start_game(browser, "stories")
    play_round(browser, "stories", mark=None)
    start_game(browser, "stories")  # a second stories round, opened and left unanswered
    guest = Participant.objects.get(user__isnull=True)

    page = log_in(browser)

    assert "3 guest rounds added to your account." in page
    assert "1 passage you already had on this account kept the account's answer" in page
    assert browser.session[PARTICIPANT_KEY] == own.pk
    assert Response.objects.get(pk=own_round.pk).participant_id == own.pk  # the account's answer stands
    left = Response.objects.get(participant=guest)
    assert left.item_id == own_round.item_id
    mine = Response.objects.filter(participant=own).order_by("score_details__order")
    assert [r.score_details["order"] for r in mine] == [1, 2, 3, 4]
    assert mine.filter(study=stories).count() == 1
    news_enrollment = Enrollment.objects.get(participant=own, study=news)
    assert news_enrollment.answered_count == 3
    assert news_enrollment.points_total == sum(r.points for r in mine.filter(study=news))
    positions = Assignment.objects.filter(participant=own, study=news).values_list("position", flat=True)
    assert sorted(positions) == [1, 2, 3]
    assert Enrollment.objects.get(study=stories).participant_id == own.pk  # moved whole, open round too
    assert Assignment.objects.get(study=stories, status="assigned").participant_id == own.pk
    overall = PlayerStats.objects.get(participant=own, category="")
    assert (overall.played, overall.rounds) == (4, 4)
    assert PlayerStats.objects.get(participant=own, category="stories").rounds == 1
    assert PlayerStats.objects.get(participant=guest, category="").played == 1
    profile = browser.get("/play/profile/").content.decode()
    assert 'id="fig-rounds">4<' in profile


def test_defect_08_a_flagged_guests_rounds_are_not_added_and_the_player_is_told(django_user_model):
    news = game("news", 3)
    own, _ = account_with_one_round(django_user_model, news)
    browser = Client()
    start_game(browser, "news")
    play_round(browser, "news", mark=4)
    Participant.objects.filter(user__isnull=True).update(flagged=True, flag_reason="failed attention checks")

    page = log_in(browser)

    assert "Your guest rounds were not added to this account" in page
    assert Response.objects.filter(participant=own).count() == 1
    assert PlayerStats.objects.get(participant=own, category="").played == 1
