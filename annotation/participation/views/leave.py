"""Leaving a study: the pages held go back at once (a 'return' on the crowd platform);
where the study allows it, the participant may also have their answers deleted."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from annotation.services.authoring.erasure import withdraw
from annotation.services.participation.exits import leave_study
from annotation.services.participation.gate import LiveStep

from .steps import participant_step


@require_http_methods(["GET", "POST"])
@participant_step(before_consent=True)
def study_leave(request: HttpRequest, step: LiveStep) -> HttpResponse:
    """Stop taking part: the pages held are given back at once (a 'return' on the platform);
    with "delete my answers" (a study setting), everything they gave is erased."""
    enrollment = step.enrollment
    study = step.study
    context = {"study": study, "source": step.participant.source, "may_erase": study.participants_may_erase}
    if request.method == "POST":
        if request.POST.get("erase") == "yes" and study.participants_may_erase:
            withdraw(enrollment)
            return render(request, "annotation/leave.html", {**context, "erased": True})
        leave_study(enrollment)
        enrollment.refresh_from_db()
    return render(request, "annotation/leave.html", {**context, "enrollment": enrollment})
