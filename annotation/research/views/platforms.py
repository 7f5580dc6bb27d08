"""The study's crowd-platform page: publish, review and pay bonuses on Prolific or MTurk (each
after a confirmation showing counts and cost), the bonus cap, the researcher's token, and
the audit log. Its owners, operators and admins (the ``crowd`` ability, ``access.access_study_with``)."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from annotation.errors import InputError, NotAllowed
from annotation.job_parameters import unreachable_link
from annotation.models import Platform, Study
from annotation.platforms.audit import study_calls
from annotation.platforms.bonuses import (
    BonusLine,
    parse_bonus_csv,
    pseudonymous_lines,
    set_bonus_cap,
    stuck_keys,
)
from annotation.platforms.links import site_hook_url, site_study_url
from annotation.platforms.money import (
    MAX_BONUS_CAP_CENTS,
    MAX_MINUTES,
    MAX_PLACES,
    MAX_REWARD_CENTS,
    as_currency,
)
from annotation.platforms.plans import bonus_plan, publish_parameters, publish_places, review_plan
from annotation.platforms.prolific.calls import unpaid_batches
from annotation.platforms.prolific.hooks import store_hook_secret
from annotation.platforms.records import not_yet_on, platform_study
from annotation.platforms.tokens import has_token, store_token
from annotation.research.views.decorators import researcher_required
from annotation.services.access import access_study_with
from annotation.services.authoring.study_changes import start_job_for_researcher
from annotation.services.participation.capacity import places_wanted

ACTIONS = ("publish", "review", "bonus")


@researcher_required
def platform_page(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_with(request.user, slug, "crowd")
    record = platform_study(study)
    context = {
        "study": study,
        "record": record,
        "bonus_cap": as_currency(record.bonus_cap_cents),
        "unpaid_batches": unpaid_batches(study),
        "stuck_payments": [
            (platform.label, key) for platform in Platform for key in stuck_keys(study, platform=platform)
        ],
        "limits": {
            "reward": as_currency(MAX_REWARD_CENTS),
            "places": MAX_PLACES,
            "minutes": MAX_MINUTES,
            "bonus_cap": as_currency(MAX_BONUS_CAP_CENTS),
        },
        "places_wanted": places_wanted(study),
        "prolific_token": has_token(request.user, platform=Platform.PROLIFIC),
        "hook_secret_set": bool(record.prolific_hook_secret),
        "hook_address": site_hook_url(study),
        "study_link": site_study_url(study),
        "link_problem": unreachable_link(site_study_url(study)),
        "calls": study_calls(study),
        "recent_jobs": study.jobs.filter(kind__regex=r"^(prolific|mturk)_").order_by("-created_at")[:5],
    }
    return render(request, "research/platforms.html", context)


@researcher_required
@require_POST
def platform_settings(request: HttpRequest, slug: str) -> HttpResponse:
    """The bonus cap (per participant, in the study's currency), the researcher's token and
    the study's Prolific webhook secret."""
    study = access_study_with(request.user, slug, "crowd")
    if "bonus_cap" in request.POST:
        try:
            cents = set_bonus_cap(study, request.POST["bonus_cap"])
        except InputError as exc:
            messages.error(request, f"Nothing changed. {exc.summary()} (0: no bonuses.)")
        else:
            messages.success(request, f"Bonus cap: {as_currency(cents)} per participant.")
    if "prolific_token" in request.POST:
        try:
            store_token(request.user, platform=Platform.PROLIFIC, token=request.POST["prolific_token"])
        except InputError as exc:
            messages.error(request, exc.summary())
        else:
            messages.success(request, "Your Prolific token is stored (encrypted; it is never shown again).")
    if "prolific_hook_secret" in request.POST:
        secret = request.POST["prolific_hook_secret"]
        try:
            store_hook_secret(study, secret)
        except InputError as exc:
            messages.error(request, exc.summary())
        else:
            messages.success(
                request,
                "The webhook secret is stored (encrypted; it is never shown again)."
                if secret.strip()
                else "The webhook secret is removed: the study's address refuses events.",
            )
    return redirect("research-platforms", slug=slug)


@researcher_required
@require_POST
def platform_action(request: HttpRequest, slug: str, platform: str, action: str) -> HttpResponse:
    """First post: the confirmation (what will happen, what it costs). Second post, with
    ``confirm``: the job starts (``dry_run`` to only print what would be sent)."""
    study = access_study_with(request.user, slug, "crowd")
    if platform not in Platform.values or action not in ACTIONS:
        raise Http404("No such action.")
    try:
        parameters = _parameters(request, study, platform, action)
        if request.POST.get("confirm"):
            parameters["dry_run"] = request.POST.get("confirm") == "dry_run"
            job = start_job_for_researcher(
                user=request.user, kind=f"{platform}_{action}", study_slug=study.slug, parameters=parameters
            )
            messages.success(
                request, f"Started {job.kind} job {job.pk}; its calls appear in the audit log below."
            )
            return redirect("research-platforms", slug=slug)
        context = {"study": study, "platform": platform, "action": action, "post": request.POST}
        context |= _plan(study, platform, action, parameters)
        return render(request, "research/platform_confirm.html", context)
    except (InputError, NotAllowed) as exc:
        messages.error(request, exc.summary() if isinstance(exc, InputError) else str(exc))
        return redirect("research-platforms", slug=slug)


def _parameters(request: HttpRequest, study: Study, platform: str, action: str) -> dict:
    post = request.POST
    if action == "review":
        return {}
    if action == "bonus":
        lines = pseudonymous_lines(study, platform=platform, lines=parse_bonus_csv(post.get("bonuses", "")))
        return {"bonuses": [line.as_dict() for line in lines]}
    return publish_parameters(
        study_url=site_study_url(study),
        reward=post.get("reward", ""),
        places=post.get("places", ""),
        minutes=post.get("minutes", ""),
        draft=bool(post.get("draft")),
        sandbox=bool(post.get("sandbox")),
    )


def _plan(study: Study, platform: str, action: str, parameters: dict) -> dict:
    if action == "review":
        plan = review_plan(study, platform=platform)
        return {
            "review": plan,
            "count": len(plan.rows),
            "cost_cents": plan.cost_cents,
            "not_yet_on": not_yet_on(study, platform),
        }
    if action == "bonus":
        lines = [BonusLine.from_dict(row) for row in parameters["bonuses"]]
        bonuses = bonus_plan(study, platform=platform, lines=lines)
        return {"bonuses": bonuses, "count": len(bonuses.bonuses), "cost_cents": bonuses.total_cents}
    places = publish_places(study, parameters["places"])
    return {
        "publish": parameters,
        "count": places,
        "cost_cents": places * parameters["reward_cents"],
        "link_problem": unreachable_link(parameters["study_url"]),
    }
