"""The researchers' statistics dashboard: stored reports as tables and plots.

These views only read ``Report`` rows (and the job that writes them); recomputing is a
background job the "Recompute" button starts.
"""

from __future__ import annotations

import json

from django.conf import settings
from django.contrib import messages
from django.core.cache import cache
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.errors import InputError
from annotation.htmx import is_htmx
from annotation.models import Job
from annotation.numbers import whole_number
from annotation.research.views.decorators import researcher_required
from annotation.services.access import (
    access_study_to_change,
    access_study_to_read,
    access_study_with,
    can_change_study,
)
from annotation.services.authoring.versions import deviations
from annotation.services.jobs import job_status
from scoring import plots
from scoring.datasheet import as_markdown, datasheet_of, researcher_answers, save_datasheet
from scoring.forms import PAGE_SIMULATIONS, PlanForm
from scoring.planning import HybridPlan, Plan, plan_choices
from scoring.selectors import dashboard_view, plot_specs, report_versions, reports_version, study_reports
from scoring.services import POPULATIONS, latest_reports_job, request_study_reports, study_fingerprint

# The population switch's words (``StudyData.population`` defines each).
POPULATION_LABELS = {
    "all": "All participants",
    "passed": "Without attention-check failures",
    "adjudicated": "Adjudicated",
    "authentic": "Without answers with a strong sign of pasting",
}


@researcher_required
@require_GET
def study_dashboard(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_with(request.user, slug, "dashboard")
    population, version = _population(request), _version(request)
    view = dashboard_view(study, population, version)
    job = latest_reports_job(study)
    current = study_fingerprint(study)
    context = {
        "study": study,
        "view": view,
        "populations": [(name, POPULATION_LABELS[name]) for name in POPULATIONS],
        "version": version,
        "report_versions": report_versions(study),
        "deviations": deviations(study),
        "job": job_status(job) if job else None,
        "new_responses": max(0, current["responses"] - view.fingerprint.get("responses", 0)),
        "stale": not view.empty and current != view.fingerprint,
    }
    return render(request, "research/dashboard.html", context)


@researcher_required
@require_POST
def recompute_reports(request: HttpRequest, slug: str) -> HttpResponse:
    study = access_study_with(request.user, slug, "dashboard")
    job, created = request_study_reports(study, user=request.user, trigger="dashboard")
    if is_htmx(request):
        job.refresh_from_db()  # run already where tasks run in-process
        return _reports_job(request, study, job, status=202 if created else 200)
    if created:
        messages.info(request, "Recomputing the reports; this page updates when they are ready.")
    return redirect("study-dashboard", slug=study.slug)


@researcher_required
@require_GET
def reports_job(request: HttpRequest, slug: str) -> HttpResponse:
    """The Recompute button and its job, polled while the job runs; once it is done the page
    reloads (``HX-Refresh``) to show the new reports."""
    study = access_study_with(request.user, slug, "dashboard")
    return _reports_job(request, study, latest_reports_job(study))


def _reports_job(request: HttpRequest, study, job: Job | None, status: int = 200) -> HttpResponse:
    """The fragment; a job done by the time htmx asks reloads the page (``HX-Refresh``)."""
    context = {"study": study, "job": job_status(job) if job else None}
    response = render(request, "research/_reports_job.html", context, status=status)
    if job is not None and job.status == Job.Status.DONE and is_htmx(request):
        response["HX-Refresh"] = "true"
    return response


@researcher_required
@require_GET
def dashboard_plot(request: HttpRequest, slug: str, name: str) -> HttpResponse:
    """One plot as SVG, rendered once per version of the reports and then cached."""
    study = access_study_with(request.user, slug, "dashboard")
    spec = plot_specs(study).get(name)
    if spec is None:
        raise Http404("No such plot.")
    population, version = _population(request), _version(request)
    reports = study_reports(study, population, version)
    key = f"report-plot:v2:{study.pk}:{population}:{version}:{name}:{reports_version(reports)}"
    svg = cache.get(key)
    if svg is None:
        points = plots.points_for(spec, reports)
        if not points:
            raise Http404("Nothing to plot yet.")
        svg = plots.render_svg(spec, points)
        cache.set(key, svg, settings.REPORT_PLOT_CACHE_SECONDS)
    response = HttpResponse(svg, content_type="image/svg+xml")
    response["Cache-Control"] = "private, max-age=60"
    return response


def _population(request: HttpRequest) -> str:
    population = request.GET.get("population", POPULATIONS[0])
    if population not in POPULATIONS:
        raise Http404("Unknown population.")
    return population


def _version(request: HttpRequest) -> int | None:
    """The study version the figures are of (``?version=N``), or None for every answer's."""
    text = request.GET.get("version", "")
    if not text:
        return None
    number = whole_number(text)
    if number is None or number < 1:
        raise Http404("Unknown version.")
    return number


@researcher_required
@require_GET
def study_plan(request: HttpRequest, slug: str) -> HttpResponse:
    """The designs a study planned from this pilot needs (``manage.py plan``'s table), for
    the target in the query string; nothing is stored."""
    study = access_study_to_read(request.user, slug)
    choices = plan_choices(study)
    form = PlanForm(request.GET or None, choices=choices)
    plan = None
    if form.is_valid():
        try:
            plan = form.plan(study)
        except InputError as error:
            for field, messages in error.errors.items():
                name = field.replace("-", "_")
                form.add_error(name if name in form.fields else None, messages)
    context = {
        "study": study,
        "form": form,
        "plan": plan,
        "comparison": isinstance(plan, Plan),
        "hybrid": isinstance(plan, HybridPlan),
        "judged": choices.judged,
        "simulations": PAGE_SIMULATIONS,
    }
    return render(request, "research/plan.html", context)


@researcher_required
@require_GET
def study_datasheet(request: HttpRequest, slug: str, fmt: str) -> HttpResponse:
    """The study's HEDS datasheet as JSON or Markdown (a download), built afresh from the
    record with the researcher's saved answers (``manage.py datasheet`` saves both)."""
    if fmt not in ("json", "md"):
        raise Http404("A datasheet is .json or .md.")
    study = access_study_to_read(request.user, slug)
    sheet = datasheet_of(study)
    if fmt == "json":
        body, kind = json.dumps(sheet, indent=1, ensure_ascii=False) + "\n", "application/json"
    else:
        body, kind = as_markdown(sheet), "text/markdown"
    answer = HttpResponse(body, content_type=f"{kind}; charset=utf-8")
    answer["Content-Disposition"] = f'attachment; filename="{study.slug}-datasheet.{fmt}"'
    return answer


@researcher_required
@require_http_methods(["GET", "POST"])
def datasheet_page(request: HttpRequest, slug: str) -> HttpResponse:
    """The datasheet with a box for each question the record cannot answer (and to override
    those it does); the owner's answers are saved with the study."""
    study = access_study_to_read(request.user, slug)
    errors: dict[str, list[str]] = {}
    if request.method == "POST":
        study = access_study_to_change(request.user, slug)
        answers = {
            key[len("answer:") :]: request.POST.get(key, "")
            for key in request.POST
            if key.startswith("answer:")
        }
        try:
            save_datasheet(study, answers=answers)
        except InputError as exc:
            errors = exc.errors
        else:
            messages.success(request, "Your answers are saved with the study.")
            return redirect("study-datasheet-page", slug=study.slug)
    sheet = datasheet_of(study)
    own = researcher_answers(study)
    context = {
        "study": study,
        "sheet": sheet,
        "entries": [{**entry, "own": own.get(entry["key"], "")} for entry in sheet["questions"]],
        "can_change": can_change_study(request.user, study),
        "errors": list(errors.items()),
    }
    return render(request, "research/datasheet.html", context, status=400 if errors else 200)
