"""Researchers' participant pages: quality figures and the marks a researcher sets."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from annotation.models import Enrollment
from annotation.services.access import access_enrollment_for_researcher, access_study_for_researcher
from annotation.services.quality import participant_assignments, participant_pages, study_quality
from annotation.services.research import mark_returned, set_participant_marks

from .research import researcher_required

# What each button on the page changes (``flag`` takes the reason typed beside it).
ACTIONS = {
    "accept": {"accepted": True},
    "unaccept": {"accepted": False},
    "flag": {"flagged": True},
    "unflag": {"flagged": False, "flag_reason": ""},
    "block": {"blocked": True},
    "unblock": {"blocked": False},
    "exclude": {"excluded": True},
    "include": {"excluded": False},
}
PARTICIPANTS_PER_PAGE = 50
ANSWERS_PER_PAGE = 100
FLAG_REASON_LENGTH = 200  # Participant.flag_reason


@researcher_required
def participant_list(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_researcher(request.user, slug)
    enrollments = Enrollment.objects.filter(study=study).select_related("participant").order_by("id")
    page = Paginator(enrollments, PARTICIPANTS_PER_PAGE).get_page(request.GET.get("page"))
    quality = study_quality(study, list(page))
    rows = [quality[e.participant_id] for e in page]
    return render(request, "research/participants.html", {"study": study, "rows": rows, "page": page})


@researcher_required
@require_http_methods(["GET", "POST"])
def participant_detail(request: HttpRequest, slug: str, public_id: str) -> HttpResponse:
    study = access_study_for_researcher(request.user, slug)
    enrollment = access_enrollment_for_researcher(request.user, study, public_id)
    if request.method == "POST":
        return _act(request, study, enrollment, public_id)
    quality = study_quality(study, [enrollment])[enrollment.participant_id]
    answers = Paginator(participant_assignments(study, enrollment), ANSWERS_PER_PAGE)
    page = answers.get_page(request.GET.get("page"))
    context = {
        "study": study,
        "q": quality,
        "pages": participant_pages(study, enrollment, page),
        "page": page,
        "actions": ACTIONS,
    }
    return render(request, "research/participant.html", context)


def _act(request: HttpRequest, study, enrollment: Enrollment, public_id: str) -> HttpResponse:
    slug = study.slug
    action = request.POST.get("action", "")
    back = redirect("research-participant", slug=slug, public_id=public_id)
    if action == "return":
        mark_returned(study, participants=[public_id])
    elif action == "flag":
        reason = request.POST.get("reason", "").strip()
        if not reason or len(reason) > FLAG_REASON_LENGTH:
            messages.error(
                request, f"reason: say why you flag {public_id} (1 to {FLAG_REASON_LENGTH} characters)."
            )
            return back
        set_participant_marks(enrollment, changes={**ACTIONS[action], "flag_reason": reason})
    elif action in ACTIONS:
        set_participant_marks(enrollment, changes=ACTIONS[action])
    else:
        messages.error(request, f"Unknown action {action!r}.")
        return back
    messages.success(request, f"{public_id}: {action} done.")
    if request.POST.get("back") == "detail":
        return back
    return redirect("research-participants", slug=slug)
