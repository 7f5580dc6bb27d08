"""The home page: the studies anyone may join, and a researcher's own that are not public."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from annotation.kinds import all_kinds
from annotation.models import Study
from annotation.services.access import researcher_studies


def home(request: HttpRequest) -> HttpResponse:
    public = Study.objects.filter(status=Study.Status.LIVE, public=True).order_by("title")
    # The one access path (``researcher_studies``): a researcher's own and shared studies,
    # never another researcher's drafts, whatever the account's staff flag says.
    mine = researcher_studies(request.user).exclude(pk__in=public).order_by("title")
    context = {
        # What each kind puts at the top of the page (the game's invitation).
        "notices": [kind.home_notice_template for kind in all_kinds().values() if kind.home_notice_template],
        # Each card leads where the study's kind says (a game study: the game's landing page).
        "public_cards": [(study, study.task_kind.public_entry(study)) for study in public],
        "other_studies": mine,
    }
    return render(request, "home.html", context)
