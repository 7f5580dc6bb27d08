"""The home page: the studies anyone may join, and (for staff) all the others."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from annotation.kinds.boundary.game import public_game_studies
from annotation.models import Study


def home(request: HttpRequest) -> HttpResponse:
    public = Study.objects.filter(status=Study.Status.LIVE, public=True).order_by("title")
    mine = Study.objects.none()
    if request.user.is_authenticated and request.user.is_staff:
        mine = Study.objects.exclude(pk__in=public).order_by("title")
    game_ids = {game_study.study.pk for game_study in public_game_studies()}
    context = {"public_studies": public, "other_studies": mine, "game_ids": game_ids}
    return render(request, "home.html", context)
