"""The study's judges page: an LLM judge behind an OpenAI-compatible endpoint answers the
study (a ``judge`` job). The researcher stores a key per endpoint (encrypted, never shown
again), then asks for a judge: a first post shows the estimate (items × orders × samples ×
tokens) and the self-preference warning, and refuses above the cap; the second, with
``confirm``, starts the job. The study's owner and admins (``access.can_change_study``)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotation.errors import InputError, NotAllowed
from annotation.job_parameters import JudgeParameters
from annotation.research.views.decorators import researcher_required
from annotation.services.access import access_study_to_change
from annotation.services.analysis.judges import (
    approximate_estimate,
    self_preference_warning,
    store_endpoint_key,
    stored_endpoints,
)
from annotation.services.authoring.study_changes import start_job_for_researcher
from annotation.services.jobs import check_job_parameters

FIELDS = ("base_url", "model", "samples", "temperature", "seed", "shots", "max_tokens", "token_cap")


@researcher_required
def judge_page(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_to_change(request.user, slug)
    context = {
        "study": study,
        "endpoints": stored_endpoints(request.user),
        "answerable": study.task_kind.answerable_by_model,
        "defaults": {name: field.default for name, field in JudgeParameters.Serializer().fields.items()},
        "recent_jobs": study.jobs.filter(kind="judge").order_by("-created_at")[:5],
    }
    return render(request, "research/judges.html", context)


@researcher_required
@require_POST
def judge_key(request: HttpRequest, slug: str) -> HttpResponse:
    """Store (or, empty, delete) the researcher's key for an endpoint."""
    access_study_to_change(request.user, slug)
    try:
        base_url = store_endpoint_key(
            request.user, base_url=request.POST.get("base_url", ""), key=request.POST.get("api_key", "")
        )
    except InputError as exc:
        messages.error(request, f"Nothing changed. {exc.summary()}")
    else:
        stored = bool(request.POST.get("api_key", "").strip())
        messages.success(
            request,
            f"Your key for {base_url} is stored (encrypted; it is never shown again)."
            if stored
            else f"Your key for {base_url} is deleted.",
        )
    return redirect("research-judges", slug=slug)


@researcher_required
@require_POST
def judge_start(request: HttpRequest, slug: str) -> HttpResponse:
    """First post: the confirmation (estimate, warning; refused above the cap). Second, with
    ``confirm``: the job starts."""
    study = access_study_to_change(request.user, slug)
    posted: dict[str, object] = {
        name: request.POST[name] for name in FIELDS if request.POST.get(name, "").strip()
    }
    posted["swap"] = bool(request.POST.get("swap"))
    try:
        values = check_job_parameters("judge", posted)
        parameters = JudgeParameters.from_validated(values)
        estimate = approximate_estimate(study, parameters)
        estimate.check_cap(parameters.token_cap)
        if request.POST.get("confirm"):
            job = start_job_for_researcher(
                user=request.user, kind="judge", study_slug=study.slug, parameters=values
            )
            messages.success(request, f"Started judge job {job.pk}; follow it on the jobs page.")
            return redirect("research-judges", slug=slug)
    except (InputError, NotAllowed) as exc:
        messages.error(request, exc.summary() if isinstance(exc, InputError) else str(exc))
        return redirect("research-judges", slug=slug)
    context = {
        "study": study,
        "parameters": values,
        "estimate": estimate,
        "warning": self_preference_warning(study, parameters.model),
        "post": {
            **{name: request.POST[name] for name in FIELDS if name in request.POST},
            "swap": posted["swap"],
        },
    }
    return render(request, "research/judge_confirm.html", context)
