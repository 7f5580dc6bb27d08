"""The public game: landing page with categories, starting to play, profile, leaderboards,
sign-up. Guests play at once (remembered by the browser session); signing up keeps the
guest's history.
"""

from __future__ import annotations

from django.contrib.auth import login
from django.contrib.auth.forms import UserCreationForm
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from annotation.models.game import OVERALL
from annotation.participation.views.session import PARTICIPANT_KEY, remember_participant, session_participant
from annotation.participation.views.steps import refused_step
from annotation.services.access import access_game_study
from annotation.services.participation.gate import StepRefused, require_not_blocked
from annotation.services.participation.participants import (
    CrowdEntry,
    enroll,
    give_consent,
    identify_participant,
)

from .. import game
from ..leaderboards import leaderboard, player_profile

PREVIEW_ROWS = 5


def landing(request: HttpRequest) -> HttpResponse:
    participant = session_participant(request)
    board = leaderboard(participant=participant)
    context = {
        "game_studies": game.public_game_studies(),
        "finished_ids": game.finished_study_ids(participant),
        "totals": game.player_totals(participant.pk) if participant else None,
        "participant": participant,
        "top": board.rows[:PREVIEW_ROWS],
        "min_rounds": board.min_rounds,
    }
    return render(request, "game/landing.html", context)


@require_POST
def start(request: HttpRequest, slug: str) -> HttpResponse:
    """Play a category: the browser's participant (a new guest if none) joins its study."""
    study = access_game_study(game.GAME_KIND, slug)
    participant = identify_participant(
        entry=CrowdEntry(), session_participant_id=request.session.get(PARTICIPANT_KEY), user=request.user
    )
    try:
        require_not_blocked(participant, study)
    except StepRefused as refusal:
        return refused_step(request, refusal)
    remember_participant(request, participant)
    enrollment = enroll(participant=participant, study=study)
    if enrollment.finished:
        return redirect("game-finished", slug=study.slug)
    give_consent(enrollment)
    return redirect("study-task", slug=study.slug)


def finished(request: HttpRequest, slug: str) -> HttpResponse:
    """The end of a category: the player's score in it, their rank, the other categories."""
    study = access_game_study(game.GAME_KIND, slug)
    participant = session_participant(request)
    if participant is None or study.pk not in game.finished_study_ids(participant):
        return redirect("game-landing")
    categories = next((g.categories for g in game.public_game_studies() if g.study.pk == study.pk), ())
    category = categories[0] if len(categories) == 1 else OVERALL
    done = game.finished_study_ids(participant)
    context = {
        "study": study,
        "category": category,
        "totals": game.category_totals(participant.pk, category),
        "overall": game.player_totals(participant.pk),
        "board": leaderboard(category=category, participant=participant),
        "others": [g for g in game.public_game_studies() if g.study.pk not in done],
        "participant": participant,
    }
    return render(request, "game/finished.html", context)


def profile(request: HttpRequest) -> HttpResponse:
    participant = session_participant(request)
    context = {"participant": participant, "profile": player_profile(participant) if participant else None}
    return render(request, "game/profile.html", context)


def leaderboard_page(request: HttpRequest, category: str = OVERALL) -> HttpResponse:
    categories = game.public_categories()
    if category != OVERALL and category not in categories:
        raise Http404("No such category.")
    participant = session_participant(request)
    context = {
        "board": leaderboard(category=category, participant=participant),
        "categories": categories,
        "category": category,
        "participant": participant,
    }
    return render(request, "game/leaderboard.html", context)


@require_http_methods(["GET", "POST"])
def signup(request: HttpRequest) -> HttpResponse:
    """Create an account; the guest history of this browser becomes the account's."""
    if request.user.is_authenticated:
        return redirect("game-profile")
    form: UserCreationForm = UserCreationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        # Logging in hands this browser's guest history to the new account (the package's signals.py).
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("game-profile")
    participant = session_participant(request)
    totals = game.player_totals(participant.pk) if participant else None
    return render(
        request, "game/signup.html", {"form": form, "totals": totals}, status=400 if form.errors else 200
    )
