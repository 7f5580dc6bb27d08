"""The participant's path through a study: entry → consent → pages → completion code."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from annotation.errors import InputError
from annotation.models import Enrollment, Study
from annotation.services.access import (
    LiveStep,
    StepRefused,
    access_study_for_participant,
    require_not_blocked,
    require_study_open,
)
from annotation.services.assignment import assign_next_item, pages_held_by_others
from annotation.services.crowd import crowd_exit
from annotation.services.exams import needs_exam
from annotation.services.participants import (
    complete_enrollment,
    enroll,
    give_consent,
    identify_participant,
    parse_crowd_params,
)
from annotation.services.submission import SubmissionClosed, submit_response

from .crowd import mturk_preview
from .session import PARTICIPANT_KEY, remember_participant, session_participant
from .steps import next_step_url, participant_step, refused_step


def study_entry(request: HttpRequest, slug: str) -> HttpResponse:
    """The study link: crowd parameters identify the participant; resume where they were."""
    study = access_study_for_participant(slug, request.user)
    entry = parse_crowd_params(request.GET)
    if entry.preview:
        return mturk_preview(request, study)
    try:
        require_study_open(study, request.user)
        participant = identify_participant(
            entry=entry, session_participant_id=request.session.get(PARTICIPANT_KEY), user=request.user
        )
        require_not_blocked(participant, study)
    except StepRefused as refusal:
        return refused_step(request, refusal)
    remember_participant(request, participant)
    enrollment = enroll(participant=participant, study=study, session=entry.session)
    return redirect(next_step_url(study, enrollment))


@require_http_methods(["GET", "POST"])
@participant_step(before_consent=True)
def study_consent(request: HttpRequest, step: LiveStep) -> HttpResponse:
    if request.method == "POST":
        give_consent(step.enrollment)
        return redirect("study-task", slug=step.study.slug)
    return render(request, "annotation/consent.html", {"study": step.study, "enrollment": step.enrollment})


@require_http_methods(["GET"])
@participant_step()
def study_task(request: HttpRequest, step: LiveStep) -> HttpResponse:
    """The current page: the participant's live assignment, or the next one."""
    study, enrollment = step.study, step.enrollment
    if needs_exam(study=study, participant=enrollment.participant):
        return redirect("study-exam", slug=study.slug)
    assignment = assign_next_item(participant=enrollment.participant, study=study)
    if assignment is None:
        return _no_page(request, study, enrollment)
    return _render_task(request, study, enrollment, assignment)


@require_POST
@participant_step(assignment=True)
def study_submit(request: HttpRequest, step: LiveStep) -> HttpResponse:
    study, assignment = step.study, step.assignment
    answer = study.task_kind.answer_from_form(request.POST, assignment.item, assignment)
    try:
        result = submit_response(assignment=assignment, answer=answer)
    except InputError as exc:
        return _render_task(request, study, step.enrollment, assignment, errors=exc.errors, status=400)
    except SubmissionClosed as exc:
        messages.warning(request, str(exc))
        return redirect("study-task", slug=study.slug)
    if result.screened_out:
        return redirect("study-done", slug=study.slug)
    return redirect("study-task", slug=study.slug)


def _no_page(request: HttpRequest, study: Study, enrollment: Enrollment) -> HttpResponse:
    """No page for the participant now: pages held by others come back (wait for them);
    otherwise the session is over (the done page says so when it fell short)."""
    finished = enrollment.answered_count >= study.items_per_session
    if not finished and pages_held_by_others(enrollment.participant, study):
        return render(request, "annotation/unavailable.html", {"study": study, "held": True})
    if enrollment.answered_count:
        complete_enrollment(enrollment)
        return redirect("study-done", slug=study.slug)
    return render(request, "annotation/unavailable.html", {"study": study})


def study_done(request: HttpRequest, slug: str) -> HttpResponse:
    """The completion code (or screen-out code) and the crowd platform's return link."""
    study = access_study_for_participant(slug, request.user)
    enrollment = _enrollment(request, study)
    if enrollment is None or not enrollment.finished:
        return redirect("study-entry", slug=slug)
    exit = crowd_exit(study, enrollment)
    context = {"study": study, "enrollment": enrollment, "exit": exit}
    return render(
        request,
        "annotation/done.html",
        {**context, "code": exit.code, "screened_out": exit.screened_out, "cut_short": exit.cut_short},
    )


def study_instructions(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_participant(slug, request.user)
    return render(request, "annotation/instructions.html", {"study": study})


def _render_task(request, study, enrollment, assignment, *, errors=None, status=200) -> HttpResponse:
    kind = study.task_kind
    context = {
        "study": study,
        "assignment": assignment,
        "page_number": enrollment.answered_count + 1,
        "page_total": study.items_per_session,
        "kind_template": kind.template,
        "errors": errors or {},
        "submitted": {key: request.POST.getlist(key) for key in request.POST} if errors else {},
        **kind.page_context(assignment.item, assignment),
    }
    return render(request, kind.page_template, context, status=status)


def _enrollment(request, study: Study) -> Enrollment | None:
    participant = session_participant(request)
    if participant is None:
        return None
    return (
        Enrollment.objects.select_related("participant").filter(participant=participant, study=study).first()
    )
