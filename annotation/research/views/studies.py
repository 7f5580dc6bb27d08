"""Researchers' study pages: the list, a new study from a file, the overview with live progress."""

from __future__ import annotations

import json

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from annotation.errors import InputError
from annotation.models import Study, StudyShare
from annotation.numbers import whole_number
from annotation.platforms.links import participant_links, studies_sharing_completion_code
from annotation.services.access import (
    ROLE_HELP,
    access_study_for_researcher,
    access_study_to_change,
    access_study_to_read,
    access_study_with,
    can_change_status,
    can_change_study,
    can_read_study,
    can_share_study,
    can_use_platforms,
    researcher_studies,
    status_ability,
    study_role,
)
from annotation.services.authoring.sharing import share_study, study_shares, unshare_study
from annotation.services.authoring.studies import load_study_file_for
from annotation.services.authoring.study_changes import discard_test_answers, test_enrollments
from annotation.services.participation.adaptive import adaptive_refusal, stopping_now
from annotation.services.participation.assignment import item_progress
from annotation.services.participation.exits import preview_page
from annotation.services.study_status import STATUS_TRANSITIONS, change_study_status, stored_answers
from annotation.services.web.json_input import parse_json
from annotation.views.task_page import task_page_context

from .decorators import researcher_required


@researcher_required
def study_list(request: HttpRequest) -> HttpResponse:
    studies = researcher_studies(request.user).select_related("owner").order_by("-updated_at")
    return render(request, "research/study_list.html", {"studies": studies})


@researcher_required
@require_http_methods(["GET", "POST"])
def study_new(request: HttpRequest) -> HttpResponse:
    """Upload a study file; every problem is listed by item and field, and nothing is written."""
    errors: dict[str, list[str]] = {}
    if request.method == "POST":
        try:
            study = _load_upload(request)
        except InputError as exc:
            errors = exc.errors
        else:
            messages.success(request, f"Study {study.slug} loaded.")
            return redirect("research-study", slug=study.slug)
    status = 400 if errors else 200
    # A list of pairs: the template cannot call ``.items`` on a dict that has an "items" key.
    context = {"errors": list(errors.items())}
    return render(request, "research/study_new.html", context, status=status)


def _load_upload(request: HttpRequest) -> Study:
    upload = request.FILES.get("study_file")
    if upload is None:
        raise InputError({"study_file": ["Choose a study file (JSON) to upload."]})
    if (upload.size or 0) > settings.API_MAX_UPLOAD_BYTES:  # an upload's size is always known
        raise InputError({"study_file": [f"The file is larger than {settings.API_MAX_UPLOAD_BYTES} bytes."]})
    data = parse_json(upload.read(), field="study_file")
    reason = request.POST.get("deviation_reason", "")
    return load_study_file_for(request.user, data, update_own=True, source="upload", reason=reason).study


@researcher_required
def study_overview(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_for_researcher(request.user, slug)
    if not can_read_study(request.user, study):  # a viewer's study is its dashboard
        return redirect("study-dashboard", slug=study.slug)
    context = {
        "study": study,
        "progress": item_progress(study),
        "next_statuses": sorted(STATUS_TRANSITIONS[study.status]),
        "recent_jobs": study.jobs.order_by("-created_at")[:5],
        "links": participant_links(request.build_absolute_uri(reverse("study-entry", kwargs={"slug": slug}))),
        "shared_code": studies_sharing_completion_code(study, request.user),
        "test_runs": test_enrollments(study).count(),
        "can_use_platforms": can_use_platforms(request.user, study),
        "can_change": can_change_study(request.user, study),
        "can_change_status": can_change_status(request.user, study),
        "can_share": can_share_study(request.user, study),
        "role": study_role(request.user, study),
        "role_help": ROLE_HELP.get(study_role(request.user, study) or "", ""),
        "roles": [(value, label, ROLE_HELP[value]) for value, label in StudyShare.Role.choices],
        "shares": study_shares(study),
        "stored_answers": stored_answers(study) if study.status != Study.Status.DRAFT else 0,
        "stopping_now": stopping_now(study),
        "adaptive_refusal": adaptive_refusal(study.task_kind, study.config or {}),
        "erasures": study.erasures.count(),
        "deviations": study.versions.filter(deviation=True).count(),
    }
    return render(request, "research/study_overview.html", context)


@researcher_required
def study_preview(request: HttpRequest, slug: str) -> HttpResponse:
    """Every page of the study as a participant sees it (drafts too), with a banner and the
    gold / attention-check answer beside it; nothing is assigned or stored."""
    study = access_study_to_read(request.user, slug)
    number = whole_number(request.GET.get("page", "1")) or 0
    page = preview_page(study, number)
    if page is None:
        return render(request, "research/study_preview_empty.html", {"study": study}, status=404)
    kind = study.task_kind
    context = task_page_context(study, page.item, page.assignment, number=page.number, total=page.total)
    context.update(
        preview=True,
        researcher_preview=page,
        gold_json=json.dumps(page.item.gold, indent=2, ensure_ascii=False) if page.item.gold else "",
    )
    if kind.has_own_page:
        return render(request, kind.page_template, context)
    return render(request, "research/study_preview.html", context)


@researcher_required
def study_progress(request: HttpRequest, slug: str) -> HttpResponse:
    """The progress panel alone, polled by the overview page."""
    study = access_study_for_researcher(request.user, slug)
    return render(request, "research/_progress.html", {"study": study, "progress": item_progress(study)})


@researcher_required
@require_POST
def study_status(request: HttpRequest, slug: str) -> HttpResponse:
    wanted = request.POST.get("status", "")
    study = access_study_with(request.user, slug, status_ability(wanted))
    try:
        change_study_status(study, status=wanted)
    except InputError as exc:
        messages.error(request, exc.summary())
    else:
        messages.success(request, f"The study is now {study.status}.")
    return redirect("research-study", slug=slug)


@researcher_required
@require_POST
def study_discard_tests(request: HttpRequest, slug: str) -> HttpResponse:
    """Delete the study's test answers (researchers who manage it taking part): a deletion,
    so the owner's (and admins'), not those it is shared with."""
    study = access_study_to_change(request.user, slug)
    deleted = discard_test_answers(study)
    messages.success(request, f"Discarded {deleted} test answer{'s' if deleted != 1 else ''}.")
    return redirect("research-study", slug=slug)


@researcher_required
@require_POST
def study_sharing(request: HttpRequest, slug: str) -> HttpResponse:
    """Share the study with a researcher in a role, change their role, or stop sharing it:
    its owners' and admins' (``access.can_share_study``; 403 to the other roles)."""
    study = access_study_for_researcher(request.user, slug)
    username = request.POST.get("username", "").strip()
    try:
        if request.POST.get("action") == "remove":
            unshare_study(request.user, study, username=username)
            messages.success(request, f"{username} no longer reaches this study.")
        else:
            share = share_study(request.user, study, username=username, role=request.POST.get("role", ""))
            messages.success(
                request, f"Shared with {share.user.username} as {share.get_role_display().lower()}."
            )
    except InputError as exc:
        messages.error(request, f"Nothing changed. {exc.summary()}")
    return redirect(f"{reverse('research-study', kwargs={'slug': slug})}#sharing")
