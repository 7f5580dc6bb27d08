"""Researchers' participant pages: quality figures and the marks a researcher sets."""

from __future__ import annotations

import csv

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from annotation.errors import InputError
from annotation.models import Erasure, Participant
from annotation.models.enrollment import FLAG_REASON_MAX
from annotation.platforms.lists import platform_csv_lines
from annotation.services.access import (
    access_enrollment_for_researcher,
    access_study_to_change,
    access_study_to_read,
    can_change_study,
    can_mark_participants,
    can_see_platform_ids,
    require_ability,
)
from annotation.services.analysis.competence import sorted_enrollments, study_competence
from annotation.services.analysis.quality import participant_assignments, participant_pages, study_quality
from annotation.services.authoring.erasure import LOOKUPS, erase_from_study, find_enrollment
from annotation.services.participation.exits import mark_returned
from annotation.services.participation.flags import set_study_marks
from annotation.services.populations import real_enrollments
from annotation.services.pseudonyms import participant_pseudonym

from .decorators import researcher_required

# What each button on the page changes (``flag`` takes the reason typed beside it).
ACTIONS: dict[str, dict[str, bool | str]] = {
    "accept": {"accepted": True},
    "unaccept": {"accepted": False},
    "flag": {"flagged": True},
    "unflag": {"flagged": False, "flag_reason": ""},
    "exclude": {"excluded": True},
    "include": {"excluded": False},
}
PARTICIPANTS_PER_PAGE = 50
ANSWERS_PER_PAGE = 100
# Marks that need a reason (it becomes the exports' flag_reason) and a confirmation.
NEEDS_REASON = {"flag"}


def _marks(action: str, post: QueryDict) -> dict[str, bool | str]:
    """The changes an action makes; flag and block need a reason and a ticked confirmation."""
    changes = dict(ACTIONS[action])
    if action not in NEEDS_REASON:
        return changes
    reason = post.get("reason", "").strip()
    errors = {}
    if not reason:
        errors["reason"] = [f"Say why you {action} this participant; the reason goes into the exports."]
    elif len(reason) > FLAG_REASON_MAX:
        errors["reason"] = [f"Keep the reason under {FLAG_REASON_MAX} characters."]
    if post.get("confirm") != "yes":
        errors["confirm"] = [f"Tick the box to confirm: {CONFIRMATIONS[action]}"]
    if errors:
        raise InputError(errors)
    return {**changes, "flag_reason": reason}


CONFIRMATIONS = {
    "erase": "every answer, page, mark and exam attempt of this participant in this study is "
    "deleted for good, their places go back to the pool, the reports are recomputed and the "
    "exports made so far are deleted; only a record that an erasure happened is kept.",
    "flag": "the participant is flagged in this study only: their answers here stop counting "
    "toward the quota and the reports, and this study's pages, API and exports show the flag.",
}


@researcher_required
def participant_list(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_to_read(request.user, slug)
    enrollments = real_enrollments(study).select_related("participant").order_by("id")
    competence = study_competence(study)
    sort = request.GET.get("sort", "")
    ordered = sorted_enrollments(study, enrollments, competence, sort)
    sort = sort if ordered is not enrollments else ""
    page = Paginator(ordered, PARTICIPANTS_PER_PAGE).get_page(request.GET.get("page"))
    quality = study_quality(study, list(page))
    rows = [(quality[e.participant_id], competence.get(quality[e.participant_id].pseudonym)) for e in page]
    context = {
        "study": study,
        "rows": rows,
        "page": page,
        "sort": sort,
        "has_competence": bool(competence),
        "sees_platform_id": can_see_platform_ids(request.user, study),
        "can_change": can_change_study(request.user, study),
        "can_mark": can_mark_participants(request.user, study),
    }
    return render(request, "research/participants.html", context)


@researcher_required
def participant_find(request: HttpRequest, slug: str) -> HttpResponse:
    """Erasure by platform id or pseudonym (what a participant's request names): find them
    and open the confirmation on their page; an unknown id is an error naming the field."""
    study = access_study_to_change(request.user, slug)
    by = request.GET.get("by", "")
    if by not in LOOKUPS:
        messages.error(request, f"by: choose one of {', '.join(LOOKUPS)}.")
        return redirect("research-participants", slug=slug)
    try:
        enrollment = find_enrollment(study, **{by: request.GET.get("value", "")})
    except InputError as exc:
        messages.error(request, exc.summary())
        return redirect("research-participants", slug=slug)
    target = reverse(
        "research-participant", kwargs={"slug": slug, "public_id": enrollment.participant.public_id}
    )
    return redirect(f"{target}?mark=erase#mark")


PLATFORM_SOURCES = (Participant.Source.PROLIFIC, Participant.Source.MTURK)


@researcher_required
def platform_list(request: HttpRequest, slug: str, source: str) -> HttpResponse:
    """The "for Prolific" / "for MTurk" CSV (platform ids: the study's owner and admins only)."""
    study = access_study_to_read(request.user, slug)
    if source not in PLATFORM_SOURCES or not can_see_platform_ids(request.user, study):
        raise Http404("No such list.")
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-for-{source}.csv"'
    csv.writer(response).writerows(platform_csv_lines(study, source))
    return response


@researcher_required
@require_http_methods(["GET", "POST"])
def participant_detail(request: HttpRequest, slug: str, public_id: str) -> HttpResponse:
    study = access_study_to_read(request.user, slug)
    enrollment = access_enrollment_for_researcher(request.user, study, public_id)
    if request.method == "POST":
        action = request.POST.get("action", "")
        # An erasure deletes: the owners'. Marks and returns run the crowd side: operators too.
        require_ability(request.user, study, "change" if action == "erase" else "crowd")
        if action == "erase":
            return _erase(request, study, enrollment)
        if action == "return":
            mark_returned(study, participants=[public_id])
        elif action in ACTIONS:
            try:
                changes = _marks(action, request.POST)
            except InputError as exc:
                return _detail(request, study, enrollment, errors=exc.errors, action=action, status=400)
            set_study_marks(enrollment, changes=changes, by=request.user)
        else:
            messages.error(request, f"Unknown action {action!r}.")
            return redirect("research-participant", slug=slug, public_id=public_id)
        messages.success(
            request, f"Participant {participant_pseudonym(study, enrollment.participant)}: {DONE[action]}."
        )
        if request.POST.get("back") == "detail":
            return redirect("research-participant", slug=slug, public_id=public_id)
        return redirect("research-participants", slug=slug)
    return _detail(request, study, enrollment, action=request.GET.get("mark", ""))


DONE = {
    "return": "marked returned",
    "flag": "flagged",
    "unflag": "unflagged",
    "accept": "accepted",
    "unaccept": "no longer accepted",
    "exclude": "excluded from reports",
    "include": "included in reports",
}


def _erase(request, study, enrollment) -> HttpResponse:
    """Erasure needs its own ticked confirmation; then the participant is gone, so the
    answer is the list, with a message that names no one."""
    if request.POST.get("confirm") != "yes":
        errors = {"confirm": [f"Tick the box to confirm: {CONFIRMATIONS['erase']}"]}
        return _detail(request, study, enrollment, errors=errors, action="erase", status=400)
    try:
        result = erase_from_study(request.user, enrollment, how=Erasure.How.PAGE)
    except InputError as exc:
        return _detail(request, study, enrollment, errors=exc.errors, action="erase", status=400)
    messages.success(
        request,
        f"Participant erased: {result.answers} answer(s) and {result.pages} page(s) deleted; "
        "the reports are being recomputed.",
    )
    return redirect("research-participants", slug=study.slug)


def _detail(request, study, enrollment, *, errors=None, action: str = "", status: int = 200) -> HttpResponse:
    quality = study_quality(study, [enrollment])[enrollment.participant_id]
    answers = Paginator(participant_assignments(study, enrollment), ANSWERS_PER_PAGE)
    page = answers.get_page(request.GET.get("page"))
    context = {
        "study": study,
        "q": quality,
        "competence": study_competence(study).get(quality.pseudonym),
        "pages": participant_pages(study, enrollment, page),
        "page": page,
        "actions": ACTIONS,
        "errors": errors or {},
        "mark": action if action in NEEDS_REASON or action == "erase" else "",
        "confirmation": CONFIRMATIONS.get(action, ""),
        "reason": request.POST.get("reason", ""),
        "sees_platform_id": can_see_platform_ids(request.user, study),
        "can_change": can_change_study(request.user, study),
        "can_mark": can_mark_participants(request.user, study),
    }
    return render(request, "research/participant.html", context, status=status)
