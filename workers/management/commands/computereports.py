"""python manage.py computereports SLUG [--json] — compute a study's reports now."""

from __future__ import annotations

import json as jsonlib

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Job, Study
from annotation.services.jobs import check_job_parameters
from scoring.models import Report
from scoring.services import POPULATIONS, REPORTS_JOB
from workers.tasks.reports import compute_study_reports_task


class Command(BaseCommand):
    help = "Recompute a study's reports in this process (the job the dashboard starts); --json prints them."

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--json", action="store_true", help="print the reports as a JSON list")
        parser.add_argument(
            "--population", choices=POPULATIONS, default="all", help="which rows --json prints"
        )

    def handle(self, *args, slug: str, json: bool, population: str, **options):
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            raise CommandError(f"No study with slug {slug!r}.")
        job = Job.objects.create(
            kind=REPORTS_JOB,
            study=study,
            parameters=check_job_parameters(REPORTS_JOB, {"trigger": "command"}),
        )
        compute_study_reports_task.apply(args=[job.pk])
        job.refresh_from_db()
        if job.status != Job.Status.DONE:
            raise CommandError(f"Computing the reports of {slug} failed:\n{job.error}")
        if json:
            self.stdout.write(_as_json(study, population))
        else:
            result = job.result
            self.stdout.write(
                f"Stored {result['rows']} figures for {slug} from {result['responses']} responses "
                f"in {result['seconds']:.1f} s."
            )


def _as_json(study: Study, population: str) -> str:
    rows = (
        Report.objects.filter(study=study, population=population)
        .order_by("metric", "id")
        .values("metric", "group", "value", "n", "ci_low", "ci_high")
    )
    return jsonlib.dumps(list(rows), indent=1)
