"""Crowd-platform pages: MTurk's preview and leaving a study."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from annotation.models import Study
from annotation.services.access import LiveStep
from annotation.services.crowd import preview_example
from annotation.services.research import leave_study

from .steps import participant_step


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
@participant_step(before_consent=True)
def study_leave(request: HttpRequest, step: LiveStep) -> HttpResponse:
    """Stop taking part: the pages held are given back at once (a 'return' on the platform)."""
    enrollment = step.enrollment
    if request.method == "POST":
        leave_study(enrollment)
        enrollment.refresh_from_db()
    return render(request, "annotation/leave.html", {"study": step.study, "enrollment": enrollment})
