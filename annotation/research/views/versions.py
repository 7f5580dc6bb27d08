"""A study's versions and its frozen plan: the list with each diff, a version's study file,
and the form that freezes the plan (``services/authoring/versions.py`` does the work)."""

from __future__ import annotations

import json

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from annotation.errors import InputError
from annotation.services.access import access_study_to_change, access_study_to_read, can_change_study
from annotation.services.authoring.versions import deviations, freeze_study

from .decorators import researcher_required


@researcher_required
@require_GET
def version_list(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_to_read(request.user, slug)
    context = {
        "study": study,
        "versions": study.versions.select_related("author").order_by("-number"),
        "deviations": deviations(study),
        "can_freeze": can_change_study(request.user, study) and study.frozen_at is None,
        "errors": [],
        "plan": {"populations": ["passed"]},
    }
    return render(request, "research/versions.html", context)


@researcher_required
@require_GET
def version_file(request: HttpRequest, slug: str, number: int) -> HttpResponse:
    """The study file of version ``number`` (a download)."""
    study = access_study_to_read(request.user, slug)
    version = study.versions.filter(number=number).first()
    if version is None:
        raise Http404("No such version of this study.")
    body = json.dumps(version.study_file, indent=2, ensure_ascii=False) + "\n"
    answer = HttpResponse(body, content_type="application/json; charset=utf-8")
    answer["Content-Disposition"] = f'attachment; filename="{study.slug}-v{number}.json"'
    return answer


@researcher_required
@require_http_methods(["POST"])
def freeze(request: HttpRequest, slug: str) -> HttpResponse:
    """Freeze the study file and the plan posted with it (a draft's, its owner's)."""
    study = access_study_to_change(request.user, slug)
    plan = posted_plan(request.POST)
    try:
        freeze_study(study, user=request.user, plan=plan)
    except InputError as exc:
        context = {
            "study": study,
            "versions": study.versions.select_related("author").order_by("-number"),
            "deviations": deviations(study),
            "can_freeze": True,
            "errors": list(exc.errors.items()),
            "plan": plan,
        }
        return render(request, "research/versions.html", context, status=400)
    messages.success(request, f"The plan is frozen: {study.frozen_digest}.")
    return redirect("research-versions", slug=study.slug)


def posted_plan(post) -> dict:
    """The freeze form's fields as an analysis plan (checked by ``versions.checked_plan``)."""
    plan: dict = {
        "populations": post.getlist("populations") or ["passed"],
        "tests": [line.strip() for line in post.get("tests", "").splitlines() if line.strip()],
    }
    for name in ("hypotheses", "stopping_rule", "exclusion_rules"):
        plan[name] = post.get(name, "")
    if post.get("sample_size", "").strip():
        plan["sample_size"] = post["sample_size"].strip()
    return plan
