"""The public game's pages, included under ``/play/`` by ``annotation.urls``.

The round's own steps are the kind's ``urls``, mounted under each assignment.
"""

from django.urls import path

from .views import game

urlpatterns = [
    path("", game.landing, name="game-landing"),
    path("s/<slug:slug>/", game.start, name="game-start"),
    path("profile/", game.profile, name="game-profile"),
    path("leaderboard/", game.leaderboard_page, name="game-leaderboard"),
    path("leaderboard/<slug:category>/", game.leaderboard_page, name="game-leaderboard-category"),
    path("signup/", game.signup, name="game-signup"),
]
