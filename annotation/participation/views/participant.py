"""The participant's path through a study: entry → consent → pages → completion code."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_http_methods, require_POST

from annotation.errors import InputError
from annotation.models import Assignment, Enrollment, Study
from annotation.services.access import is_test_visit
from annotation.services.participation.assignment import assign_next_item, pages_held_by_others
from annotation.services.participation.authenticity import signals_from_form
from annotation.services.participation.capacity import close_if_collected, study_is_full
from annotation.services.participation.exams import failed_exam_attempt, needs_exam
from annotation.services.participation.exits import crowd_exit, preview_example
from annotation.services.participation.gate import (
    LiveStep,
    StepRefused,
    require_not_blocked,
    require_study_open,
)
from annotation.services.participation.participants import (
    CROWD_PARAMS,
    CrowdEntry,
    CrowdIdRefused,
    browser_participant,
    complete_enrollment,
    enroll,
    give_consent,
    identify_participant,
    parse_crowd_params,
)
from annotation.services.participation.submission import SubmissionClosed, submit_response
from annotation.views.task_page import task_page_context

from .session import PARTICIPANT_KEY, remember_participant, session_participant
from .steps import next_step_url, one_trip, participant_step, participant_study, refused_step

CONSENT_DECLINED = "decline"
ANSWERED_ELSEWHERE = gettext_lazy(
    "That page was already answered in another tab, so the answer from this one was not stored. "
    "Here is your next page."
)


@participant_study
def study_entry(request: HttpRequest, study: Study) -> HttpResponse:
    """The study link: a returning participant resumes where they were; a new one is asked
    to consent (with the crowd parameters carried along), or told at once that the study is
    full. Nothing is stored here: the participant is created when they consent."""
    try:
        entry = parse_crowd_params(request.GET)
    except CrowdIdRefused as refused:
        return crowd_id_refused(request, study, refused)
    if entry.preview:
        return mturk_preview(request, study)
    return _arrival(request, study, entry) or redirect(_consent_url(study, request.GET))


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
@participant_study
def study_consent(request: HttpRequest, study: Study) -> HttpResponse:
    """Consent, with an explicit choice either way; agreeing creates the participant and
    their enrollment (the first write of a participant's path)."""
    try:
        entry = parse_crowd_params(request.GET)
    except CrowdIdRefused as refused:
        return crowd_id_refused(request, study, refused)
    arrived = _arrival(request, study, entry, consenting=True)
    if arrived is not None:
        return arrived
    if request.method == "GET":
        context = {
            "study": study,
            "action": _consent_url(study, request.GET),
            "test_run": is_test_visit(request.user, study),
        }
        return render(request, "annotation/consent.html", context)
    if request.POST.get("decision") == CONSENT_DECLINED:
        context = {"study": study, "source": entry.source, "action": _consent_url(study, request.GET)}
        return render(request, "annotation/declined.html", context)
    participant = identify_participant(
        entry=entry, session_participant_id=request.session.get(PARTICIPANT_KEY), user=request.user
    )
    remember_participant(request, participant)
    is_test = is_test_visit(request.user, study)
    give_consent(enroll(participant=participant, study=study, session=entry.session, is_test=is_test))
    return redirect("study-task", slug=study.slug)


def crowd_id_refused(request: HttpRequest, study: Study, refused: CrowdIdRefused) -> HttpResponse:
    """A study link whose worker id no crowd platform made (400): say so, store nothing."""
    context = {"study": study, "field": refused.field, "platform": refused.platform}
    return render(request, "annotation/crowd_id_refused.html", context, status=400)


def _arrival(request: HttpRequest, study: Study, entry: CrowdEntry, *, consenting: bool = False):
    """The page for someone arriving who should not (or need not) be asked to consent: the
    closed or blocked page, where an enrolled participant is, or the study-full page.
    None when consent is the next step."""
    participant = browser_participant(
        session_id=request.session.get(PARTICIPANT_KEY), user=request.user, entry=entry
    )
    enrollment = None
    if participant is not None:
        enrollment = Enrollment.objects.filter(participant=participant, study=study).first()
    try:
        require_study_open(study, request.user, enrollment)
        if participant is not None:
            require_not_blocked(participant, study)
    except StepRefused as refusal:
        if participant is not None and refusal.enrollment is not None:
            remember_participant(request, participant)  # their done page reads the session
        return refused_step(request, refusal)
    if participant is not None and enrollment is not None:
        remember_participant(request, participant)
        enroll(participant=participant, study=study, session=entry.session)  # newest platform ids
        if not (consenting and enrollment.status == Enrollment.Status.STARTED):
            return redirect(next_step_url(study, enrollment))
        return None
    if study_is_full(study):
        source = participant.source if participant is not None else entry.source
        return render(request, "annotation/full.html", {"study": study, "source": source})
    return None


def _consent_url(study: Study, params) -> str:
    """The consent page's address, carrying the crowd platform's parameters (and only those)."""
    url = reverse("study-consent", kwargs={"slug": study.slug})
    kept = {key: params[key] for key in CROWD_PARAMS if params.get(key)}
    return f"{url}?{urlencode(kept)}" if kept else url


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
@one_trip
@participant_step(assignment=True)
def study_submit(request: HttpRequest, step: LiveStep) -> HttpResponse:
    study, assignment = step.study, step.owned_assignment
    if assignment.status == Assignment.Status.ANSWERED:
        # A second tab (or a stale page) submits a page already answered: nothing is stored.
        messages.info(request, str(ANSWERED_ELSEWHERE))
        return redirect("study-task", slug=study.slug)
    answer = study.task_kind.answer_from_form(request.POST, assignment.item, assignment)
    try:
        result = submit_response(
            assignment=assignment, answer=answer, authenticity=signals_from_form(study, request.POST)
        )
    except InputError as exc:
        return _render_task(request, study, step.enrollment, assignment, errors=exc.errors, status=400)
    except SubmissionClosed as exc:
        messages.warning(request, str(exc))  # SubmissionClosed's message is already in the page's language
        return redirect("study-task", slug=study.slug)
    if result.answered_count is not None:  # as the answer left it, for the page it leads to (one_trip)
        step.enrollment.answered_count = result.answered_count
    if result.screened_out:
        return redirect("study-done", slug=study.slug)
    if result.counts and close_if_collected(study, item=assignment.item):
        # This answer filled the study or spent its budget: the session is over (the done
        # page gives the code).
        step.enrollment.refresh_from_db()
        return _no_page(request, study, step.enrollment)
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
    return render(request, "annotation/full.html", {"study": study, "source": enrollment.participant.source})


@participant_study
def study_done(request: HttpRequest, study: Study) -> HttpResponse:
    """The completion code (or screen-out code) and the crowd platform's return link."""
    enrollment = _enrollment(request, study)
    if enrollment is None or not enrollment.finished:
        return redirect("study-entry", slug=study.slug)
    elsewhere = study.task_kind.finished_page(study, enrollment)
    if elsewhere is not None:
        return redirect(elsewhere)
    exit = crowd_exit(study, enrollment)
    context = {
        "study": study,
        "enrollment": enrollment,
        "test_run": enrollment.is_test,
        "exit": exit,
        "failed_exam": failed_exam_attempt(study, enrollment),
    }
    return render(
        request,
        "annotation/done.html",
        {**context, "code": exit.code, "screened_out": exit.screened_out, "cut_short": exit.cut_short},
    )


@participant_study
def study_instructions(request: HttpRequest, study: Study) -> HttpResponse:
    return render(request, "annotation/instructions.html", {"study": study})


def _render_task(request, study, enrollment, assignment, *, errors=None, status=200) -> HttpResponse:
    context = task_page_context(
        study, assignment.item, assignment, enrollment=enrollment, errors=errors, post=request.POST
    )
    return render(request, study.task_kind.page_template, context, status=status)


def _enrollment(request, study: Study) -> Enrollment | None:
    participant = session_participant(request)
    if participant is None:
        return None
    return (
        Enrollment.objects.select_related("participant").filter(participant=participant, study=study).first()
    )
