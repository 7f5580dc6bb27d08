"""Crowd-platform pages: MTurk's preview and leaving a study."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from annotation.models import Enrollment, Study
from annotation.services.access import access_study_for_participant
from annotation.services.crowd import preview_example
from annotation.services.research import leave_study

from .session import session_participant


def mturk_preview(request: HttpRequest, study: Study) -> HttpResponse:
    """ASSIGNMENT_ID_NOT_AVAILABLE: a real page of the task, read-only, nothing assigned."""
    example = preview_example(study)
    context = {"study": study}
    if example is not None:
        item, assignment = example
        kind = study.task_kind
        context.update(
            {
                "kind_template": kind.template,
                "errors": {},
                "submitted": {},
                **kind.page_context(item, assignment),
            }
        )
    return render(request, "annotation/preview.html", context)


@require_http_methods(["GET", "POST"])
def study_leave(request: HttpRequest, slug: str) -> HttpResponse:
    """Stop taking part: the pages held are given back at once (a 'return' on the platform)."""
    study = access_study_for_participant(slug, request.user)
    participant = session_participant(request)
    enrollment = (
        Enrollment.objects.filter(participant=participant, study=study).first() if participant else None
    )
    if enrollment is None:
        return redirect("study-entry", slug=slug)
    if request.method == "POST":
        leave_study(enrollment)
        enrollment.refresh_from_db()
    return render(request, "annotation/leave.html", {"study": study, "enrollment": enrollment})
