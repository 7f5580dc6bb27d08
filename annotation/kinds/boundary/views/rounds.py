"""The steps of a boundary round (the kind's ``urls``): reveal, guess, reason, result.

htmx requests get a fragment (only the next sentence, the reason form, or the result);
plain form posts are redirected back to the round page, so the game works without
JavaScript too. Every step passes the participant gate (``participant_step``): the study is
live, the player not blocked, the round theirs and not out of time.
"""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext
from django.views.decorators.http import require_GET, require_POST

from annotation.errors import InputError
from annotation.htmx import is_htmx
from annotation.models import Assignment, Enrollment, Response
from annotation.numbers import whole_number
from annotation.participation.views.steps import go_to, participant_step
from annotation.services.participation.authenticity import signals_from_form
from annotation.services.participation.gate import LiveStep, StepRefused
from annotation.services.participation.submission import SubmissionClosed, submit_response
from annotation.views.task_page import next_page, task_page_context

from .. import game
from ..controls import round_controls
from ..rounds import RAN_OUT, RoundClosed, RoundError, record_guess, reveal_next_sentence

FRAGMENTS = "annotation/kinds/boundary/"


def _ran_out(request: HttpRequest, refusal: StepRefused) -> HttpResponse:
    """A step on a round past its time answers as the round's own steps do (409)."""
    return _step_error(request, refusal.study, RoundClosed(RAN_OUT))


@require_POST
@participant_step(assignment=True, on_expired=_ran_out, kind="boundary")
def reveal_sentence(request: HttpRequest, step: LiveStep) -> HttpResponse:
    study, assignment = step.study, step.owned_assignment
    try:
        index = reveal_next_sentence(assignment=assignment, seen=_posted_int(request, "seen"))
    except RoundError as exc:
        return _step_error(request, study, exc)
    if not is_htmx(request):
        return redirect("study-task", slug=study.slug)
    context = _fragment_context(step)
    context.update(index=index, sentence=assignment.item.payload["sentences"][index], oob=True)
    return render(request, f"{FRAGMENTS}_revealed.html", context)


@require_POST
@participant_step(assignment=True, on_expired=_ran_out, kind="boundary")
def make_guess(request: HttpRequest, step: LiveStep) -> HttpResponse:
    study, assignment = step.study, step.owned_assignment
    try:
        record_guess(assignment=assignment, guess=_posted_int(request, "guess"))
    except RoundError as exc:
        return _step_error(request, study, exc)
    if not is_htmx(request):
        return redirect("study-task", slug=study.slug)
    return render(request, f"{FRAGMENTS}_controls.html", _fragment_context(step))


@require_POST
@participant_step(assignment=True, on_expired=_ran_out, kind="boundary")
def give_reason(request: HttpRequest, step: LiveStep) -> HttpResponse:
    """Store the answer (the recorded guess with the reason), then show the truth."""
    study, assignment = step.study, step.owned_assignment
    if assignment.status == Assignment.Status.ANSWERED:
        return _step_error(
            request, study, RoundClosed(gettext("You already answered this round; nothing changed."))
        )
    answer = study.task_kind.answer_from_form(request.POST, assignment.item, assignment)
    try:
        result = submit_response(
            assignment=assignment, answer=answer, authenticity=signals_from_form(study, request.POST)
        )
    except InputError as exc:
        return _reason_errors(request, study, assignment, exc.errors)
    except SubmissionClosed as exc:
        return _step_error(request, study, RoundClosed(str(exc)))
    if not result.created:
        return _step_error(
            request, study, RoundClosed(gettext("You already answered this round; nothing changed."))
        )
    if result.screened_out:
        return go_to(request, reverse("study-done", kwargs={"slug": study.slug}))
    if not is_htmx(request):
        return redirect("boundary-result", slug=study.slug, assignment_id=assignment.pk)
    return render(request, f"{FRAGMENTS}_result.html", _result_context(study, assignment, result.response))


@require_GET
@participant_step(assignment=True, on_expired=_ran_out, kind="boundary")
def round_result(request: HttpRequest, step: LiveStep) -> HttpResponse:
    """A finished round's truth, for its own player only; a round in play has none."""
    study, assignment = step.study, step.owned_assignment
    response = Response.objects.filter(assignment=assignment).first()
    if response is None:
        raise Http404("This round has no result yet.")
    return render(request, f"{FRAGMENTS}result.html", _result_context(study, assignment, response))


def _fragment_context(step: LiveStep) -> dict:
    """What a reveal or guess fragment needs: the round's new state (written by the step on
    the gate's assignment) and the gate's enrollment; no query."""
    study, assignment = step.study, step.owned_assignment
    number, total = next_page(study, step.enrollment)
    return {
        "study": study,
        "assignment": assignment,
        "page_number": number,
        "page_total": total,
        **round_controls(assignment.item, assignment.state),
    }


def _round_context(study, assignment, **extra) -> dict:
    """What the round page and its fragments need: the kind's page context and progress."""
    enrollment = Enrollment.objects.get(participant_id=assignment.participant_id, study=study)
    return {**task_page_context(study, assignment.item, assignment, enrollment=enrollment), **extra}


def _result_context(study, assignment, response: Response) -> dict:
    truth = game.round_truth(assignment.item, response.answer)
    verdict = game.round_verdict(
        truth, points=response.points, attention_check=response.is_attention_check, correct=response.correct
    )
    return {
        "study": study,
        "assignment": assignment,
        "response": response,
        "verdict": verdict,
        "totals": game.player_totals(response.participant_id),
        "category": assignment.item.payload["category"],
        **truth,
    }


def _reason_errors(request, study, assignment, errors: dict) -> HttpResponse:
    context = _round_context(
        study, assignment, errors=errors, submitted_reason=request.POST.get("reason", "")
    )
    context["submitted_categories"] = request.POST.getlist("reason_categories")
    if is_htmx(request):
        response = render(request, f"{FRAGMENTS}_controls.html", context, status=400)
        return _retarget(response, "#round-controls", "outerHTML")
    return render(request, study.task_kind.page_template, context, status=400)


def _step_error(request, study, exc: RoundError) -> HttpResponse:
    """A refused step; on a round that is over (answered in another tab, or out of time) the
    round's buttons give way to *Next passage*."""
    context = {
        "study": study,
        "message": exc.message,
        "field": exc.field,
        "closed": isinstance(exc, RoundClosed),
    }
    if is_htmx(request):
        response = render(request, f"{FRAGMENTS}_message.html", context, status=exc.status)
        return _retarget(response, "#round-message", "innerHTML")
    return render(request, f"{FRAGMENTS}step_error.html", context, status=exc.status)


def _retarget(response: HttpResponse, target: str, swap: str) -> HttpResponse:
    response["HX-Retarget"], response["HX-Reswap"] = target, swap
    return response


def _posted_int(request: HttpRequest, name: str) -> int:
    number = whole_number(request.POST.get(name, ""))
    if number is None:
        raise RoundError(gettext("Must be a whole number."), name)
    return number
