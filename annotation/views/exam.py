"""The qualification exam inside a study's link: questions, the result, another attempt."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotation.errors import InputError
from annotation.models import Enrollment, Study
from annotation.services.access import access_assignment_for_participant, access_study_for_participant
from annotation.services.exams import ExamStep, exam_step, retry_exam, screen_out_after_exam
from annotation.services.submission import SubmissionClosed, mark_shown, submit_response

from .session import session_participant


@require_GET
def exam_page(request: HttpRequest, slug: str) -> HttpResponse:
    """The next exam question, or the result of the attempt just finished."""
    study, enrollment = _active(request, slug)
    if enrollment is None:
        return redirect("study-entry", slug=slug)
    if study.qualification is None:
        return redirect("study-task", slug=slug)
    step = exam_step(participant=enrollment.participant, exam=study.qualification)
    if not step.finished:
        mark_shown(step.assignment)
        return _render_question(request, study, step)
    if step.failed_out:
        screen_out_after_exam(enrollment)
        return redirect("study-done", slug=slug)
    return render(request, "annotation/exam_result.html", {"study": study, "step": step})


@require_POST
def exam_submit(request: HttpRequest, slug: str, assignment_id: str) -> HttpResponse:
    study, enrollment = _active(request, slug)
    if enrollment is None or study.qualification is None:
        return redirect("study-entry", slug=slug)
    exam = study.qualification
    assignment = access_assignment_for_participant(
        participant=enrollment.participant, study=exam.study, assignment_id=assignment_id
    )
    answer = exam.study.task_kind.answer_from_form(request.POST, assignment.item, assignment)
    try:
        submit_response(assignment=assignment, answer=answer)
    except InputError as exc:
        step = exam_step(participant=enrollment.participant, exam=exam)
        if step.assignment is None or step.assignment.pk != assignment.pk:
            return redirect("study-exam", slug=slug)
        return _render_question(request, study, step, errors=exc.errors, status=400)
    except SubmissionClosed as exc:
        messages.warning(request, str(exc))
    return redirect("study-exam", slug=slug)


@require_POST
def exam_retry(request: HttpRequest, slug: str) -> HttpResponse:
    study, enrollment = _active(request, slug)
    if enrollment is not None and study.qualification is not None:
        retry_exam(participant=enrollment.participant, exam=study.qualification)
    return redirect("study-exam", slug=slug)


def _active(request, slug: str) -> tuple[Study, Enrollment | None]:
    """The study and the participant's consented, unfinished enrollment in it (or None)."""
    study = access_study_for_participant(slug, request.user)
    participant = session_participant(request)
    if participant is None:
        return study, None
    enrollment = (
        Enrollment.objects.select_related("participant", "study")
        .filter(participant=participant, study=study, status=Enrollment.Status.ACTIVE)
        .first()
    )
    return study, enrollment


def _render_question(request, study: Study, step: ExamStep, *, errors=None, status=200) -> HttpResponse:
    exam_study = step.attempt.exam.study
    kind = exam_study.task_kind
    context = {
        "study": study,
        "exam_study": exam_study,
        "assignment": step.assignment,
        "step": step,
        "page_number": step.number,
        "page_total": step.total,
        "kind_template": kind.template,
        "errors": errors or {},
        "submitted": {key: request.POST.getlist(key) for key in request.POST} if errors else {},
        **kind.page_context(step.assignment.item, step.assignment),
    }
    return render(request, "annotation/exam_task.html", context, status=status)
