"""Crowd-platform pages: MTurk's preview and leaving a study."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from annotation.models import Study
from annotation.services.crowd import preview_example
from annotation.services.gate import LiveStep
from annotation.services.research import leave_study

from .steps import participant_step, task_page_context


def mturk_preview(request: HttpRequest, study: Study) -> HttpResponse:
    """ASSIGNMENT_ID_NOT_AVAILABLE: a real page of the task, read-only, nothing assigned."""
    example = preview_example(study)
    context: dict = {"study": study}
    kind = study.task_kind
    if example is None:
        return render(request, "annotation/preview.html", context)
    item, assignment = example
    context = task_page_context(study, item, assignment, number=1, total=study.items_per_session)
    context["preview"] = True
    if kind.has_own_page:
        # A kind with its own page (the game's round) renders it, its buttons switched off.
        return render(request, kind.page_template, context)
    return render(request, "annotation/preview.html", context)


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
