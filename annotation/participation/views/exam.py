"""The qualification exam inside a study's link: questions, the result, another attempt."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.views.decorators.http import require_GET, require_POST

from annotation.errors import InputError
from annotation.models import Study
from annotation.services.authoring.guides import example_context
from annotation.services.participation.exams import (
    ExamStep,
    exam_step,
    question_feedback,
    retry_exam,
    screen_out_after_exam,
)
from annotation.services.participation.gate import LiveStep
from annotation.services.participation.submission import SubmissionClosed, submit_response
from annotation.views.task_page import task_page_context

from .steps import one_trip, participant_step


@require_GET
@participant_step(exam=True)
def exam_page(request: HttpRequest, step: LiveStep) -> HttpResponse:
    """The next exam question, or the result of the attempt just finished."""
    study, enrollment = step.study, step.enrollment
    if study.qualification is None:
        return redirect("study-task", slug=study.slug)
    exam_now = exam_step(participant=enrollment.participant, exam=study.qualification)
    if not exam_now.finished:
        return _render_question(request, study, exam_now, test_run=enrollment.is_test)
    if exam_now.failed_out:
        screen_out_after_exam(enrollment)
        return redirect("study-done", slug=study.slug)
    context = {"study": study, "step": exam_now, "test_run": enrollment.is_test}
    return render(request, "annotation/exam_result.html", context)


@require_POST
@one_trip
@participant_step(assignment=True, exam=True)
def exam_submit(request: HttpRequest, step: LiveStep) -> HttpResponse:
    study, assignment, exam = step.study, step.owned_assignment, step.qualification_exam
    answer = exam.study.task_kind.answer_from_form(request.POST, assignment.item, assignment)
    try:
        submit_response(assignment=assignment, answer=answer)
        if exam.training:
            return redirect("study-exam-feedback", slug=study.slug, assignment_id=assignment.pk)
    except InputError as exc:
        exam_now = exam_step(participant=step.participant, exam=exam)
        if exam_now.assignment is None or exam_now.assignment.pk != assignment.pk:
            return redirect("study-exam", slug=study.slug)
        return _render_question(
            request, study, exam_now, errors=exc.errors, status=400, test_run=step.enrollment.is_test
        )
    except SubmissionClosed as exc:
        messages.warning(request, str(exc))
    return redirect("study-exam", slug=study.slug)


@require_GET
@participant_step(assignment=True, exam=True)
def exam_feedback(request: HttpRequest, step: LiveStep) -> HttpResponse:
    """A training quiz, after each answer: right or not, the right answer and why."""
    study, assignment, exam = step.study, step.owned_assignment, step.qualification_exam
    feedback = question_feedback(assignment) if exam.training else None
    if feedback is None:
        return redirect("study-exam", slug=study.slug)
    exam_study = exam.study
    right_answer = example_context(
        exam_study, {"payload": assignment.item.payload, "answer": feedback.gold}, prefix="right"
    )
    context = {
        "study": study,
        "feedback": feedback,
        "right_answer": render_to_string(exam_study.task_kind.template, right_answer),
        "test_run": step.enrollment.is_test,
    }
    return render(request, "annotation/exam_feedback.html", context)


@require_POST
@participant_step(exam=True)
def exam_retry(request: HttpRequest, step: LiveStep) -> HttpResponse:
    if step.study.qualification is not None:
        retry_exam(participant=step.participant, exam=step.study.qualification)
    return redirect("study-exam", slug=step.study.slug)


def _render_question(
    request, study: Study, step: ExamStep, *, errors=None, status=200, test_run: bool = False
) -> HttpResponse:
    exam_study = step.attempt.exam.study
    context = task_page_context(
        study,
        step.question.item,
        step.question,
        number=step.number,
        total=step.total,
        kind=exam_study.task_kind,
        errors=errors,
        post=request.POST,
    )
    context.update(exam_study=exam_study, step=step, test_run=test_run)
    return render(request, "annotation/exam_task.html", context, status=status)
