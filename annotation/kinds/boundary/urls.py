"""The game's addresses: the round's steps and the public ``/play/`` pages.

``round_steps`` is the kind's ``urls``, which ``annotation.participation.urls`` mounts under each
assignment (``/s/<slug>/a/<id>/boundary/``); ``site_pages`` (the kind's ``site_urls``)
puts ``urlpatterns`` under ``/play/``.
"""

from django.urls import URLPattern, URLResolver, include, path

from .views import game, rounds

round_steps: list[URLPattern | URLResolver] = [
    path("reveal/", rounds.reveal_sentence, name="boundary-reveal"),
    path("guess/", rounds.make_guess, name="boundary-guess"),
    path("answer/", rounds.give_reason, name="boundary-answer"),
    path("result/", rounds.round_result, name="boundary-result"),
]

urlpatterns = [
    path("", game.landing, name="game-landing"),
    path("s/<slug:slug>/", game.start, name="game-start"),
    path("s/<slug:slug>/done/", game.finished, name="game-finished"),
    path("profile/", game.profile, name="game-profile"),
    path("leaderboard/", game.leaderboard_page, name="game-leaderboard"),
    path("leaderboard/<slug:category>/", game.leaderboard_page, name="game-leaderboard-category"),
    path("signup/", game.signup, name="game-signup"),
]

site_pages: list[URLPattern | URLResolver] = [path("play/", include(urlpatterns))]
