"""Computing a study's reports from the database and storing them; deciding when to.

A study's reports are replaced as a whole inside one transaction, so a page reading
them sees either the old set or the new one. Each row carries the fingerprint of the
inputs it was computed from (responses, the latest answer time, flagged responses and
excluded participants); a live study whose current fingerprint differs is stale.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Count, Max, Q
from django.utils import timezone

from annotation.models import Enrollment, Job, Study
from annotation.services.jobs import Progress, no_progress, start_job, sweep_stalled_jobs
from annotation.services.populations import real_answers
from scoring.adaptive import refresh_adaptive
from scoring.data import DEFAULT_BY, load_study_data, one_snapshot
from scoring.models import Report
from scoring.reports import report_for
from scoring.reports.base import Embed, ReportRow, StudyData
from scoring.reports.common import study_rows

POPULATIONS = ("all", "passed", "adjudicated", "authentic")
REPORTS_JOB = "reports"
ACTIVE_JOB_STATUSES = (Job.Status.QUEUED, Job.Status.RUNNING)


@dataclass(frozen=True)
class ReportsResult:
    rows: int
    fingerprint: dict
    seconds: float


def study_fingerprint(study: Study, *, counted: tuple[int, int] | None = None) -> dict:
    """What the reports depend on, cheaply: counts and the latest answer time.

    ``counted``: the numbers of responses and of flagged responses, when the caller has just
    read every response of the study in the same snapshot (the reports): then only the
    latest time (an index lookup) and the exclusions are asked, not a count over every row.
    """
    answers = real_answers(study)
    if counted is None:
        responses = answers.aggregate(
            responses=Count("id"), latest=Max("answered_at"), flagged=Count("id", filter=Q(flagged=True))
        )
    else:
        responses = {
            "responses": counted[0],
            "flagged": counted[1],
            **answers.aggregate(latest=Max("answered_at")),
        }
    latest = responses["latest"]
    return {
        "responses": responses["responses"],
        "latest": latest.isoformat() if latest else None,
        "flagged": responses["flagged"],
        "excluded": Enrollment.objects.filter(study=study, excluded=True).count(),
    }


def stored_fingerprint(study: Study) -> dict | None:
    """The fingerprint of the stored reports (None when there are none)."""
    return Report.objects.filter(study=study).values_list("fingerprint", flat=True).first()


def reports_are_stale(study: Study) -> bool:
    return stored_fingerprint(study) != study_fingerprint(study)


def stale_live_studies() -> list[Study]:
    """Live studies with answers whose reports are missing or out of date."""
    live = Study.objects.filter(status=Study.Status.LIVE, responses__isnull=False).distinct().order_by("pk")
    return [study for study in live if reports_are_stale(study)]


def compute_study_reports(
    study: Study,
    *,
    embed: Embed | None = None,
    progress: Progress = no_progress,
    by: Sequence[str] = DEFAULT_BY,
) -> ReportsResult:
    """Read the study once, compute both populations, replace its reports; agreement is
    also grouped by the items' provenance keys in ``by``."""
    started = time.monotonic()
    builder = report_for(study.kind)
    steps = len(POPULATIONS) + 2  # reading, each population, storing: the bar moves by step
    progress(0, steps, "Reading the responses")
    with one_snapshot():
        data = load_study_data(study, builder, by=by)
        counted = (len(data.responses), int(data.responses["flagged"].sum()))
        fingerprint = study_fingerprint(study, counted=counted)
    adaptive = refresh_adaptive(study, data, builder)  # an adaptive study's priorities and stopping rule
    rows: dict[tuple[str, int | None], list[ReportRow]] = {}
    populations = populations_of(data)
    # ``passed`` is derived from ``all`` (less the flagged answers), not filtered again
    everyone: StudyData | None = data.population("all")
    for step, population in enumerate(populations, start=1):
        progress(step, steps, f"Computing the figures ({population}; {fingerprint['responses']} responses)")
        if population in ("all", "passed") and everyone is not None:
            subset = everyone.population(population) if population == "passed" else everyone
            if population == "passed":
                everyone = None  # one population at a time beside the study
        else:
            subset = data.population(population)
        rows[population, None] = study_rows(
            builder, subset, embed=embed, calibration_margin=settings.RATER_CALIBRATION_MARGIN
        )
        del subset
    if adaptive is not None and adaptive.row is not None:
        for population_rows in rows.values():  # the answers that count, whichever population is shown
            population_rows.append(adaptive.row)
    for version in split_versions(data):  # each version's answers apart, once they span several
        progress(len(populations), steps, f"Computing the figures of version {version}")
        of_version = data.where(data.responses["version"] == version)
        for population in populations:
            rows[population, version] = study_rows(
                builder,
                of_version.population(population),
                embed=embed,
                calibration_margin=settings.RATER_CALIBRATION_MARGIN,
            )
    progress(steps - 1, steps, "Storing the figures")
    count = replace_reports(study, rows, fingerprint)
    progress(steps, steps, f"Stored {count} figures")
    return ReportsResult(rows=count, fingerprint=fingerprint, seconds=time.monotonic() - started)


def split_versions(data: StudyData) -> list[int]:
    """The study versions whose answers get figures of their own: every version some answer
    was given under, once the answers span more than one (answers from before versions were
    recorded, without a number, count as one more). One version alone: its figures are the
    study's."""
    versions = data.responses["version"] if "version" in data.responses else np.array([])
    given = versions[~np.isnan(versions)]
    numbers = sorted({int(v) for v in np.unique(given)})
    spans = len(numbers) + bool(len(given) < len(versions))
    return numbers if spans > 1 else []


def populations_of(data: StudyData) -> tuple[str, ...]:
    """The populations worth computing: ``adjudicated`` only once an item has an
    adjudicated answer, ``authentic`` only once an answer has a strong sign (until then
    each would repeat ``passed``)."""
    wanted = {
        "adjudicated": "adjudicator" in data.responses and data.responses["adjudicator"].any(),
        "authentic": "strong_sign" in data.responses and data.responses["strong_sign"].any(),
    }
    return tuple(p for p in POPULATIONS if wanted.get(p, True))


def replace_reports(
    study: Study, rows: dict[tuple[str, int | None], list[ReportRow]], fingerprint: dict
) -> int:
    """Swap the study's report rows for these (by population and version: None for every
    answer's), atomically (writers serialised per study)."""
    now = timezone.now()
    objects = [
        Report(
            study=study,
            metric=r.metric,
            group=r.group,
            population=population,
            version=version,
            value=r.value,
            n=r.n,
            ci_low=r.ci_low,
            ci_high=r.ci_high,
            details=r.details,
            fingerprint=fingerprint,
            computed_at=now,
        )
        for (population, version), population_rows in rows.items()
        for r in population_rows
    ]
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).values_list("pk", flat=True).first()
        Report.objects.filter(study=study).delete()
        Report.objects.bulk_create(objects, batch_size=2000)
    return len(objects)


def request_study_reports(study: Study, *, user=None, trigger: str = "dashboard") -> tuple[Job, bool]:
    """The study's queued or running reports job, or a new one: (job, whether it is new).

    A double click or an overlapping schedule never runs the same computation twice.
    """
    with transaction.atomic():
        Study.objects.select_for_update().filter(pk=study.pk).values_list("pk", flat=True).first()
        # a job whose worker died is requeued (or failed) first: it never blocks *Recompute*
        sweep_stalled_jobs(Job.objects.filter(study=study, kind=REPORTS_JOB))
        active = Job.objects.filter(study=study, kind=REPORTS_JOB, status__in=ACTIVE_JOB_STATUSES).first()
        if active is not None:
            return active, False
        return start_job(kind=REPORTS_JOB, parameters={"trigger": trigger}, study=study, user=user), True


def latest_reports_job(study: Study) -> Job | None:
    return Job.objects.filter(study=study, kind=REPORTS_JOB).order_by("-created_at", "-pk").first()
