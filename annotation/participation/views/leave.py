"""Leaving a study: the pages held go back at once (a 'return' on the crowd platform)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from annotation.services.participation.exits import leave_study
from annotation.services.participation.gate import LiveStep

from .steps import participant_step


@require_http_methods(["GET", "POST"])
@participant_step(before_consent=True)
def study_leave(request: HttpRequest, step: LiveStep) -> HttpResponse:
    """Stop taking part: the pages held are given back at once (a 'return' on the platform)."""
    enrollment = step.enrollment
    if request.method == "POST":
        leave_study(enrollment)
        enrollment.refresh_from_db()
    context = {"study": step.study, "enrollment": enrollment, "source": step.participant.source}
    return render(request, "annotation/leave.html", context)
