"""The game around the rounds: landing, guests, sign-up, profile, leaderboards."""

import html as html_lib
import itertools
from collections import defaultdict

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation.models import Enrollment, Participant, PlayerStats, Response
from annotation.participation.views.session import PARTICIPANT_KEY
from annotation.services.authoring.studies import load_study_file
from annotation.services.participation.flags import flag_in_study
from annotation.services.participation.participants import enroll, give_consent
from tests.conftest import claim_study_file
from tests.factories import ParticipantFactory
from tests.game_helpers import boundary_study_file, play_round, play_via_services, start_game

pytestmark = pytest.mark.django_db

PLAYER_NUMBERS = itertools.count(1)
MALICIOUS = "<img src=x onerror=alert(1)>\"'&"


def exact(boundary, length):
    return boundary


def late(by):
    return lambda boundary, length: min(boundary + by, length)


def early(boundary, length):
    return max(boundary - 1, 1)


def player(study, **fields) -> Participant:
    """A volunteer with an account (leaderboards rank accounts only)."""
    if "user" not in fields:
        fields["user"] = get_user_model().objects.create_user(f"player-{next(PLAYER_NUMBERS)}")
    return ParticipantFactory(enrolled_in=study, **fields)


@pytest.fixture
def news():
    return load_study_file(
        boundary_study_file(slug="news", items=8, category="news", title="News game")
    ).study


@pytest.fixture
def stories():
    data = boundary_study_file(slug="stories", items=8, category="stories", title="Story game")
    return load_study_file(data).study


def test_landing_lists_the_public_live_game_studies_only(client, news, stories):
    load_study_file(boundary_study_file(slug="draft-game", status="draft", title="Draft game"))
    load_study_file(boundary_study_file(slug="private-game", public=False, title="Private game"))
    load_study_file(boundary_study_file(slug="checked", items=3, attention=2, title="Checked game"))
    load_study_file(claim_study_file(slug="claims-public", public=True, title="Claims in public"))
    html = client.get("/play/").content.decode()
    assert "News game" in html and "Story game" in html and "Checked game" in html
    assert "Draft game" not in html and "Private game" not in html and "Claims in public" not in html
    assert ">stories</span>" in html and "8 passages" in html and "3 passages" in html  # checks not counted


def test_play_starts_a_guest_at_once(client, news):
    response = client.post("/play/s/news/")
    assert response["Location"] == "/s/news/task/"
    participant = Participant.objects.get()
    assert participant.source == "organic" and participant.user is None
    assert Enrollment.objects.get(participant=participant).status == "active"
    assert client.get("/s/news/task/").status_code == 200
    assert client.get("/play/s/news/").status_code == 405  # starting writes: POST only
    load_study_file(boundary_study_file(slug="hidden", public=False))
    assert client.post("/play/s/hidden/").status_code == 404


def test_profile_shows_rounds_points_exact_guesses_categories_and_a_chart(client, news, stories):
    start_game(client, "news")
    play_round(client, "news", mark=1)  # item boundaries 1..8: round one is whichever comes first
    start_game(client, "stories")
    play_round(client, "stories", mark=None)
    responses = Response.objects.order_by("answered_at")
    html = client.get("/play/profile/").content.decode()
    total = sum(r.points for r in responses)
    assert f'id="fig-rounds">{len(responses)}<' in html
    assert f'id="fig-total">{total:g}<' in html
    assert f'id="fig-exact">{sum(r.correct for r in responses)}<' in html
    assert 'data-category="news"' in html and 'data-category="stories"' in html
    assert html.count('<rect class="bar') == 2
    assert "Sign up" in html  # a guest is invited to keep the figures


def test_stats_rows_match_the_stored_rounds(news, stories):
    players = [player(news), player(news), player(news)]
    for participant in players:
        give_consent(enroll(participant=participant, study=stories))
    choices = [exact, late(1), late(3), early]
    for turn in range(5):
        for index, participant in enumerate(players):
            play_via_services(participant, news, choices[(turn + index) % 4])
            play_via_services(participant, stories, choices[(turn * index) % 4])
    for participant in players:
        responses = list(Response.objects.filter(participant=participant).order_by("id"))
        assert [r.score_details["order"] for r in responses] == list(range(1, len(responses) + 1))
        expected = defaultdict(lambda: [0, 0.0, 0])
        for response in responses:
            for key in ("", response.item.payload["category"]):
                expected[key][0] += 1
                expected[key][1] += response.points
                expected[key][2] += int(response.correct)
        rows = {row.category: row for row in PlayerStats.objects.filter(participant=participant)}
        assert set(rows) == set(expected)
        for key, (rounds, points, exact_count) in expected.items():
            row = rows[key]
            assert (row.rounds, row.points_total, row.exact, row.played) == (
                rounds,
                points,
                exact_count,
                rounds,
            )
            assert row.average == pytest.approx(points / rounds)


def test_leaderboard_ranks_by_average_above_the_minimum_and_shows_your_rank(settings, news):
    settings.LEADERBOARD_MIN_ROUNDS = 3
    ace, steady, twin, newcomer = (player(news) for _ in range(4))
    paid = player(news, source="prolific", platform_worker_id="p-1")
    cheat = player(news)
    flag_in_study(Enrollment.objects.get(participant=cheat, study=news), reason="copied answers")
    plan = {
        ace: [exact] * 4 + [late(1)],
        steady: [late(1)] * 4,
        twin: [late(1)] * 4,
        newcomer: [exact],
        paid: [exact] * 4,
    }
    plan[cheat] = [exact] * 4
    for participant, guesses in plan.items():
        for choose in guesses:
            play_via_services(participant, news, choose)
    client = Client()
    session = client.session
    session[PARTICIPANT_KEY] = steady.pk
    session.save()
    page = client.get("/play/leaderboard/").content.decode()
    rows = page.split("<tbody>")[1].split("</tbody>")[0].split("<tr")[1:]
    assert len(rows) == 3  # the newcomer, the paid participant and the flagged player are not ranked
    assert "<td>1</td>" in rows[0] and "4.80" in rows[0] and '<td class="num">5</td>' in rows[0]
    assert all("<td>2</td>" in row and "4.00" in row for row in rows[1:])  # a tie shares its rank
    assert 'id="your-rank"' in page and "#2</strong> of 3" in page
    assert 'class="you"' in page
    newcomer_client = Client()
    session = newcomer_client.session
    session[PARTICIPANT_KEY] = newcomer.pk
    session.save()
    assert "Play 2 more rounds to get a rank" in newcomer_client.get("/play/leaderboard/").content.decode()
    per_category = client.get("/play/leaderboard/news/")
    assert per_category.status_code == 200 and "#2</strong> of 3" in per_category.content.decode()
    assert client.get("/play/leaderboard/cooking/").status_code == 404


def test_leaderboards_read_the_same_few_queries_whatever_the_number_of_players(settings, news):
    settings.LEADERBOARD_MIN_ROUNDS = 1
    client = Client()

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get("/play/leaderboard/news/").status_code == 200
        return len(captured)

    for _ in range(2):
        play_via_services(player(news), news, late(1))
    few = queries()
    for _ in range(6):
        play_via_services(player(news), news, late(2))
    assert queries() == few
    assert "8 players ranked" in client.get("/play/leaderboard/news/").content.decode()


def test_usernames_are_escaped_everywhere(settings, news, django_user_model):
    settings.LEADERBOARD_MIN_ROUNDS = 1
    user = django_user_model.objects.create_user(username=MALICIOUS, password="a-long-password-9")
    participant = player(news, user=user)
    play_via_services(participant, news, late(1))
    client = Client()
    client.force_login(user)
    escaped = html_lib.escape(MALICIOUS)
    for url in ("/play/leaderboard/", "/play/leaderboard/news/", "/play/", "/play/profile/"):
        page = client.get(url).content.decode()
        assert "<img src=x" not in page, url
        assert escaped in page, url
    assert f'title="{escaped}"' in client.get("/play/leaderboard/").content.decode()


def test_signing_up_keeps_the_guest_history(client, news):
    start_game(client, "news")
    play_round(client, "news", mark=3)
    play_round(client, "news", mark=None)
    guest = Participant.objects.get()
    form = {"username": "keen-reader", "password1": "a-long-password-9", "password2": "a-long-password-9"}
    assert client.post("/play/signup/", form)["Location"] == "/play/profile/"
    guest.refresh_from_db()
    assert guest.user.username == "keen-reader"
    page = client.get("/play/profile/").content.decode()
    assert "keen-reader" in page and 'id="fig-rounds">2<' in page
    play_round(client, "news", mark=2)  # still the same participant after signing up
    assert Participant.objects.count() == 1 and Response.objects.filter(participant=guest).count() == 3
    bad = Client().post("/play/signup/", {**form, "password2": "different"})
    assert bad.status_code == 400


def test_logging_in_plays_as_the_accounts_participant(news, django_user_model):
    user = django_user_model.objects.create_user(username="returning", password="a-long-password-9")
    own = player(news, user=user)
    play_via_services(own, news, exact)
    browser = Client()
    start_game(browser, "news")  # a new guest in this browser first
    browser.post("/accounts/login/", {"username": "returning", "password": "a-long-password-9"})
    page = browser.get("/play/profile/").content.decode()
    assert "returning" in page and 'id="fig-rounds">1<' in page
    assert browser.session[PARTICIPANT_KEY] == own.pk


def test_imported_rounds_join_the_players_history(news, tmp_path):
    from io import StringIO

    from django.core.management import call_command

    lines = [
        '{"participant": "lab-1", "item": "p0", "answer": {"guess": 1, "reason": "Odd."}}',
        '{"participant": "lab-1", "item": "p1", "answer": {"guess": 4, "reason": "Late."}}',
    ]
    path = tmp_path / "rounds.jsonl"
    path.write_text("\n".join(lines))
    call_command("importresponses", "news", str(path), stdout=StringIO())
    responses = Response.objects.order_by("id")
    assert [r.score_details["order"] for r in responses] == [1, 2]
    assert [r.points for r in responses] == [5, 3]  # boundaries 1 and 2
    totals = PlayerStats.objects.get(participant__platform_worker_id="lab-1", category="")
    assert (totals.rounds, totals.points_total, totals.exact) == (2, 8, 1)


def test_guests_and_answer_key_records_are_not_ranked(settings, news):
    """N6: a script played throwaway guest sessions to learn a category's answer key, then a
    fresh guest guessed 12 of 12 exactly and topped the leaderboard. Guests are not ranked
    (signing up brings their rounds along), nor is a record of exact guesses no person makes."""
    settings.LEADERBOARD_MIN_ROUNDS = 5
    guest = ParticipantFactory(enrolled_in=news)  # no account
    key_user = player(news)
    honest = player(news)
    for choose in [exact] * 8:
        play_via_services(guest, news, choose)
        play_via_services(key_user, news, choose)
    for choose in [exact, late(1), exact, early, late(2), exact]:
        play_via_services(honest, news, choose)

    client = Client()
    page = client.get("/play/leaderboard/").content.decode()
    rows = page.split("<tbody>")[1].split("</tbody>")[0].split("<tr")[1:]
    assert len(rows) == 1 and honest.user.username in rows[0]
    assert "1 player ranked" in page
    session = client.session
    session[PARTICIPANT_KEY] = guest.pk
    session.save()
    page = client.get("/play/leaderboard/").content.decode()
    assert "Guests play unranked" in page and 'href="/play/signup/"' in page
    client.force_login(key_user.user)
    page = client.get("/play/leaderboard/").content.decode()
    assert "lists volunteers in good standing only" in page
