"""The participant gate in the views: every participant step is wrapped in ``participant_step``,
which runs ``annotation.services.participation.gate.require_live_step`` and answers a refusal with the
same pages everywhere (the closed page, the blocked page, or the step the participant is at).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from functools import partial, wraps
from urllib.parse import urlsplit

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import Resolver404, resolve, reverse

from annotation.htmx import is_htmx
from annotation.languages import in_study_language
from annotation.models import Enrollment, Participant, Study
from annotation.services.access import access_study_for_participant
from annotation.services.participation.gate import StepRefused, require_live_step
from annotation.services.participation.participants import (
    CrowdIdRefused,
    complete_enrollment,
    parse_crowd_params,
)
from annotation.services.participation.submission import PAGE_EXPIRED

from .session import PARTICIPANT_KEY, session_participant

# The pages a participant sees when the study is closed or they are blocked, on entry
# (``study_entry``) and at every later step alike.
REFUSAL_PAGES = {
    StepRefused.CLOSED: ("annotation/closed.html", 410),
    StepRefused.BLOCKED: ("annotation/blocked.html", 403),
}

StepView = Callable[..., HttpResponse]
ExpiredHandler = Callable[[HttpRequest, StepRefused], HttpResponse]


def participant_step(
    *,
    assignment: bool = False,
    exam: bool = False,
    before_consent: bool = False,
    on_expired: ExpiredHandler | None = None,
    kind: str | None = None,
) -> Callable[[StepView], StepView]:
    """Decorate a participant view ``view(request, step, **kwargs)``: it runs only when the
    gate lets the step through. ``assignment``: the URL's ``assignment_id`` is the page acted
    on (an exam question when ``exam``); ``on_expired`` answers a page that ran out of time
    (default: say so and go on with the next page); ``kind``: a kind's own step (its URLs
    sit under every study's pages), a 404 on a study of another kind."""

    def decorate(view: StepView) -> StepView:
        @wraps(view)
        def wrapper(request: HttpRequest, slug: str, assignment_id: str | None = None, **kwargs):
            try:
                step = require_live_step(
                    slug=slug,
                    user=request.user,
                    participant_id=request.session.get(PARTICIPANT_KEY),
                    assignment_id=assignment_id if assignment else None,
                    exam=exam,
                    before_consent=before_consent,
                    read=None if assignment or exam or before_consent else _answers_enrollment(request, slug),
                )
            except StepRefused as refusal:
                if refusal.reason == StepRefused.EXPIRED and on_expired is not None:
                    return in_study_language(refusal.study, partial(on_expired, request, refusal))
                return in_study_language(refusal.study, partial(refused_step, request, refusal, exam=exam))
            if kind is not None and step.study.kind != kind:
                raise Http404("This study has no such step.")
            if assignment and not exam:  # an answer: for the page a one-trip answer leads to
                setattr(request, ANSWERS_STEP, step)
            return in_study_language(step.study, partial(view, request, step, **kwargs))

        return wrapper

    return decorate


# The request attribute holding the step the gate let through in this request: the page a
# one-trip answer leads to (``one_trip``: the same request, copied) is gated on the rows the
# answer's gate read, as the answer left them, rather than on a second read of them.
ANSWERS_STEP = "participant_step"


def _answers_enrollment(request: HttpRequest, slug: str) -> Enrollment | None:
    """The enrollment the answer's step of this one-trip request read and left (None on a
    request of its own, or for another study)."""
    step = getattr(request, ANSWERS_STEP, None)
    if step is None or step.study.slug != slug:
        return None
    return step.enrollment


StudyView = Callable[..., HttpResponse]


def participant_study(view: StudyView) -> StudyView:
    """Decorate a participant page reached by the study link alone (entry, consent, the
    code, the instructions): ``view(request, study)`` gets the study a participant may see
    (``access_study_for_participant``) and renders in the study's language."""

    @wraps(view)
    def wrapper(request: HttpRequest, slug: str) -> HttpResponse:
        study = access_study_for_participant(request.user, slug)
        return in_study_language(study, partial(view, request, study))

    return wrapper


def refused_step(request: HttpRequest, refusal: StepRefused, *, exam: bool = False) -> HttpResponse:
    """The page for a refused step: the closed or blocked page, or where the participant is.

    htmx requests (the game's round steps) are sent to that page as a whole (HX-Redirect).
    """
    study, enrollment = refusal.study, refusal.enrollment
    if enrollment is not None and _ended_by_the_quota(refusal, enrollment):
        # The study filled up while this participant was answering: their session is over,
        # and the done page gives their code (or says it was cut short), not "return it".
        complete_enrollment(enrollment)
        return go_to(request, reverse("study-done", kwargs={"slug": study.slug}))
    if refusal.reason in (StepRefused.CLOSED, StepRefused.BLOCKED):
        template, status = REFUSAL_PAGES[refusal.reason]
        context = {"study": study, "source": _arrived_from(request), "enrollment": refusal.enrollment}
        page = render(request, template, context, status=status)
        if is_htmx(request):
            page["HX-Redirect"] = reverse("study-entry", kwargs={"slug": study.slug})
        return page
    if refusal.reason == StepRefused.EXPIRED:
        messages.warning(request, str(PAGE_EXPIRED))  # in the page's language, before it is stored
        url = reverse("study-exam" if exam else "study-task", kwargs={"slug": study.slug})
    else:
        url = next_step_url(study, refusal.enrollment)
    return go_to(request, url)


def _ended_by_the_quota(refusal: StepRefused, enrollment: Enrollment) -> bool:
    """A closed step of someone (``enrollment``) who answered pages in a study that closed
    at its quota."""
    return (
        refusal.reason == StepRefused.CLOSED
        and refusal.study.closed_by_quota
        and enrollment.answered_count > 0
        and enrollment.status != Enrollment.Status.STARTED
    )


def next_step_url(study: Study, enrollment: Enrollment | None) -> str:
    """Where a participant continues: the study link, consent, the pages, then the code."""
    if enrollment is None:
        name = "study-entry"
    elif enrollment.finished:
        name = "study-done"
    elif enrollment.status == Enrollment.Status.STARTED:
        name = "study-consent"
    else:
        name = "study-task"
    return reverse(name, kwargs={"slug": study.slug})


def _arrived_from(request: HttpRequest) -> str:
    """The crowd platform this visitor came from (for how to return a study there)."""
    try:
        source = parse_crowd_params(request.GET).source
    except CrowdIdRefused:
        source = Participant.Source.ORGANIC  # a mangled link: go by the session alone
    if source == Participant.Source.ORGANIC:
        participant = session_participant(request)
        if participant is not None:
            return participant.source
    return source


def go_to(request: HttpRequest, url: str) -> HttpResponse:
    """Send the browser to ``url``: a redirect, or for htmx an empty answer whose
    HX-Redirect makes htmx load that page as a whole."""
    if is_htmx(request):
        page = HttpResponse(status=204)
        page["HX-Redirect"] = url
        return page
    return redirect(url)


# How many redirects a one-trip answer follows on the server (submit → task → exam, say)
# before it leaves the rest to the browser.
ONE_TRIP_HOPS = 3


def one_trip(view: StepView) -> StepView:
    """Decorate a participant's answer (``study_submit``, ``exam_submit``): for htmx's task
    form, the page the answer leads to comes back in the same response, rendered by that
    page's own view as its GET would render it (the gate, the next pick, ``shown_at``, the
    messages), with ``HX-Push-Url`` naming its address, so reload, back and a copied link
    behave as after the redirect. Every other client gets the answer's redirect
    (POST–redirect–GET, unchanged): half the requests of a participant's loop are the
    redirected GETs, and most of a request's cost is the request itself."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        response = view(request, *args, **kwargs)
        if not is_htmx(request):
            return response
        for _ in range(ONE_TRIP_HOPS):
            url = _sent_to(response)
            if url is None:
                return response
            page = _page_at(request, url)
            if page is None:
                break
            response = page
            if _sent_to(response) is None:
                response["HX-Push-Url"] = url
        url = _sent_to(response)
        return go_to(request, url) if url is not None else response

    return wrapper


def _sent_to(response: HttpResponse) -> str | None:
    """Where ``response`` sends the browser (a redirect, or htmx's HX-Redirect), else None."""
    if response.status_code in (301, 302, 303, 307, 308):
        return response["Location"]
    if response.status_code == 204 and response.has_header("HX-Redirect"):
        return response["HX-Redirect"]
    return None


def _page_at(request: HttpRequest, url: str) -> HttpResponse | None:
    """The page at ``url`` (a path on this site), as its view answers a GET from this
    browser now; None for an address elsewhere."""
    parts = urlsplit(url)
    if parts.scheme or parts.netloc:
        return None
    try:
        match = resolve(parts.path)
    except Resolver404:
        return None
    get = copy.copy(request)  # the same session, user, messages and CSRF cookie
    get.method, get.path, get.path_info = "GET", parts.path, parts.path
    get.GET, get.POST = QueryDict(parts.query), QueryDict()
    get.resolver_match = match
    return match.func(get, *match.args, **match.kwargs)
