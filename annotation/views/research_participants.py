"""Researchers' participant pages: quality figures and the marks a researcher sets."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from annotation.models import Enrollment
from annotation.services.access import access_enrollment_for_researcher, access_study_for_researcher
from annotation.services.quality import participant_pages, study_quality
from annotation.services.research import mark_returned, set_participant_marks

from .research import researcher_required

# What each button on the page changes.
ACTIONS = {
    "flag": {"flagged": True, "flag_reason": "flagged by a researcher"},
    "unflag": {"flagged": False, "flag_reason": ""},
    "block": {"blocked": True},
    "unblock": {"blocked": False},
    "exclude": {"excluded": True},
    "include": {"excluded": False},
}


@researcher_required
def participant_list(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_researcher(request.user, slug)
    enrollments = list(Enrollment.objects.filter(study=study).select_related("participant").order_by("id"))
    quality = study_quality(study, enrollments)
    rows = [quality[e.participant_id] for e in enrollments]
    return render(request, "research/participants.html", {"study": study, "rows": rows})


@researcher_required
@require_http_methods(["GET", "POST"])
def participant_detail(request: HttpRequest, slug: str, public_id: str) -> HttpResponse:
    study = access_study_for_researcher(request.user, slug)
    enrollment = access_enrollment_for_researcher(request.user, study, public_id)
    if request.method == "POST":
        action = request.POST.get("action", "")
        if action == "return":
            mark_returned(study, participants=[public_id])
        elif action in ACTIONS:
            set_participant_marks(enrollment, changes=ACTIONS[action])
        else:
            messages.error(request, f"Unknown action {action!r}.")
            return redirect("research-participant", slug=slug, public_id=public_id)
        messages.success(request, f"{public_id}: {action} done.")
        if request.POST.get("back") == "detail":
            return redirect("research-participant", slug=slug, public_id=public_id)
        return redirect("research-participants", slug=slug)
    quality = study_quality(study, [enrollment])[enrollment.participant_id]
    context = {
        "study": study,
        "q": quality,
        "pages": participant_pages(study, enrollment),
        "actions": ACTIONS,
    }
    return render(request, "research/participant.html", context)
