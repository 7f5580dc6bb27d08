"""The end of a game category: a game page (score, rank, other categories, leaderboard),
never the survey's "All done … pages"; /play/ marks the category as all played; the home
page's game cards lead to /play/; the login page links to sign-up and says what happens to
guest rounds; no machine cues after "a person wrote all of it"."""

from __future__ import annotations

import pytest
from django.test import Client

from annotation.services.authoring.studies import load_study_file
from tests.game_helpers import boundary_study_file, guess, play_round, reveal, round_id, start_game
from tests.helpers.crowd_ids import prolific_id

pytestmark = pytest.mark.django_db


def test_finishing_a_category_ends_on_the_game_page_and_play_marks_it():
    news = load_study_file(boundary_study_file(slug="news", items=2)).study
    load_study_file(boundary_study_file(slug="stories", items=2, category="stories"))
    client = Client()
    start_game(client, news.slug)
    play_round(client, news.slug, mark=3)
    play_round(client, news.slug, mark=5)
    end = client.get(f"/s/{news.slug}/task/", follow=True)
    html = end.content.decode()
    assert end.redirect_chain[-1][0] == f"/play/s/{news.slug}/done/"
    assert 'id="category-finished"' in html and "pages" not in html
    assert 'id="category-score"' in html and "2</strong> scored rounds" in html
    assert 'action="/play/s/stories/"' in html and 'action="/play/s/news/"' not in html
    assert "/play/leaderboard/news/" in html
    landing = client.get("/play/").content.decode()
    assert "All played" in landing and 'action="/play/s/news/"' not in landing
    again = client.post(f"/play/s/{news.slug}/")
    assert again.status_code == 302 and again.url == f"/play/s/{news.slug}/done/"


def test_paid_players_of_the_game_still_get_their_code():
    paid = load_study_file(boundary_study_file(slug="paid", items=1, public=False, items_per_session=1)).study
    client = Client()
    client.post(f"/s/{paid.slug}/consent/?PROLIFIC_PID={prolific_id('w1')}", {"decision": "agree"})
    play_round(client, paid.slug, mark=2)
    assert "GAME-DONE" in client.get(f"/s/{paid.slug}/task/", follow=True).content.decode()


def test_home_cards_for_the_game_lead_to_play_and_login_links_to_sign_up():
    load_study_file(boundary_study_file(slug="news", items=1))
    home = Client().get("/").content.decode()
    assert 'href="/play/"' in home and 'href="/s/news/"' not in home
    login = Client().get("/accounts/login/").content.decode()
    assert 'href="/play/signup/"' in login and 'id="guest-rounds-note"' in login


def test_no_machine_cues_after_saying_a_person_wrote_all_of_it():
    study = load_study_file(boundary_study_file(slug="news", items=1)).study
    client = Client()
    html = start_game(client, study.slug).content.decode()
    assignment_id = round_id(html)
    for seen in range(1, 10):
        reveal(client, study.slug, assignment_id, seen)
    controls = guess(client, study.slug, assignment_id, 10).content.decode()
    assert "You say a person wrote the whole passage" in controls
    assert "reason_categories" not in controls


def test_the_profile_chart_has_labelled_axes():
    study = load_study_file(boundary_study_file(slug="news", items=2)).study
    client = Client()
    start_game(client, study.slug)
    play_round(client, study.slug, mark=3)
    html = client.get("/play/profile/").content.decode()
    assert 'id="chart-y-label">Points<' in html and 'id="chart-x-label">Your rounds, oldest' in html
    assert all(f'text-anchor="end">{value}</text>' in html for value in range(6))


def test_the_games_how_to_play_speaks_of_passages_not_pages():
    load_study_file(boundary_study_file(slug="news", items=3))
    html = Client().get("/s/news/instructions/").content.decode()
    assert 'id="study-plan-length">3 passages' in html and "3 pages" not in html
