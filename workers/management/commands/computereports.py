"""python manage.py computereports SLUG [--json | --csv] [--by KEY …] — compute a study's
reports now and print them."""

from __future__ import annotations

import csv
import json as jsonlib
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from annotation.errors import InputError
from annotation.models import Job, Study
from annotation.services.exports.columns import neutralise
from annotation.services.jobs import check_job_parameters
from scoring.models import Report
from scoring.services import POPULATIONS, REPORTS_JOB
from workers.progress import run_job_here

FIELDS = ("metric", "group", "value", "n", "ci_low", "ci_high", "details")


class Command(BaseCommand):
    help = (
        "Recompute a study's reports in this process (the job the dashboard starts); "
        "--json or --csv prints them."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug")
        output = parser.add_mutually_exclusive_group()
        output.add_argument("--json", action="store_true", help="print the reports as a JSON list")
        output.add_argument(
            "--csv", action="store_true", help="print the reports as CSV (group.* and details.* columns)"
        )
        parser.add_argument(
            "--population", choices=POPULATIONS, default="all", help="which rows --json / --csv print"
        )
        parser.add_argument(
            "--by",
            action="append",
            metavar="KEY",
            help="also group agreement by this provenance key of the items (repeatable; default: system)",
        )

    def handle(self, *args, slug: str, json: bool, csv: bool, population: str, by: list | None, **options):
        study = Study.objects.filter(slug=slug).first()
        if study is None:
            raise CommandError(f"No study with slug {slug!r}.")
        parameters: dict[str, Any] = {"trigger": "command"} | ({"by": by} if by else {})
        try:
            parameters = check_job_parameters(REPORTS_JOB, parameters)
        except InputError as error:
            raise CommandError(f"Bad option: {error}") from error
        job = Job.objects.create(kind=REPORTS_JOB, study=study, parameters=parameters)
        job = run_job_here(job, description=f"reports {slug}", stream=self.stderr)
        if job.status != Job.Status.DONE:
            raise CommandError(f"Computing the reports of {slug} failed:\n{job.error}")
        if json:
            self.stdout.write(jsonlib.dumps(_rows(study, population), indent=1))
        elif csv:
            _write_csv(self.stdout, _rows(study, population))
        else:
            result = job.result
            self.stdout.write(
                f"Stored {result['rows']} figures for {slug} from {result['responses']} responses "
                f"in {result['seconds']:.1f} s."
            )


def _rows(study: Study, population: str) -> list[dict]:
    query = Report.objects.filter(study=study).chosen(population).order_by("metric", "id")
    return list(query.values(*FIELDS))


def _write_csv(stream, rows: list[dict]) -> None:
    """One line per figure: its group keys and details spread over ``group.*`` / ``details.*``
    columns (lists and objects as JSON)."""
    groups = sorted({key for r in rows for key in r["group"]})
    details = sorted({key for r in rows for key in r["details"]})
    header = [
        "metric",
        *[f"group.{k}" for k in groups],
        "value",
        "n",
        "ci_low",
        "ci_high",
        *[f"details.{k}" for k in details],
    ]
    writer = csv.writer(stream)
    writer.writerow(header)
    for r in rows:
        writer.writerow(
            [
                _cell(r["metric"]),
                *[_cell(r["group"].get(k)) for k in groups],
                _cell(r["value"]),
                r["n"],
                _cell(r["ci_low"]),
                _cell(r["ci_high"]),
                *[_cell(r["details"].get(k)) for k in details],
            ]
        )


def _cell(value) -> str:
    """Empty for missing; JSON for lists and objects; text a spreadsheet would run as a
    formula gets a leading apostrophe."""
    if value is None:
        return ""
    if isinstance(value, list | dict):
        value = jsonlib.dumps(value, sort_keys=True)
    return neutralise(value) if isinstance(value, str) else str(value)
