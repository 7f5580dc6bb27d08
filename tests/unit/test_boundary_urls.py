"""The game's pages keep their addresses and names now that its views live in
``annotation.kinds.boundary``."""

import pytest
from django.urls import resolve, reverse

from annotation.kinds.boundary.views import game, rounds

GAME_PAGES = [
    ("game-landing", {}, "/play/", game.landing),
    ("game-start", {"slug": "news"}, "/play/s/news/", game.start),
    ("game-profile", {}, "/play/profile/", game.profile),
    ("game-leaderboard", {}, "/play/leaderboard/", game.leaderboard_page),
    ("game-leaderboard-category", {"category": "news"}, "/play/leaderboard/news/", game.leaderboard_page),
    ("game-signup", {}, "/play/signup/", game.signup),
]
ROUND = {"slug": "news", "assignment_id": "abc123"}
ROUND_STEPS = [
    ("boundary-reveal", ROUND, "/s/news/a/abc123/boundary/reveal/", rounds.reveal_sentence),
    ("boundary-guess", ROUND, "/s/news/a/abc123/boundary/guess/", rounds.make_guess),
    ("boundary-answer", ROUND, "/s/news/a/abc123/boundary/answer/", rounds.give_reason),
    ("boundary-result", ROUND, "/s/news/a/abc123/boundary/result/", rounds.round_result),
]


@pytest.mark.parametrize(("name", "kwargs", "url", "view"), GAME_PAGES + ROUND_STEPS)
def test_each_game_url_keeps_its_name_and_path(name, kwargs, url, view):
    assert reverse(name, kwargs=kwargs) == url
    match = resolve(url)
    assert match.url_name == name
    assert match.func is view
    assert match.kwargs == kwargs
