"""python manage.py computereports: the reports job run in-process, rows printed as JSON."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Job
from scoring.models import Report
from tests.helpers.reports import game_study

pytestmark = pytest.mark.django_db


def test_command_runs_the_reports_job_and_prints_json():
    study = game_study()
    out = StringIO()
    call_command("computereports", study.slug, "--json", stdout=out)
    rows = json.loads(out.getvalue())
    assert all(set(row) == {"metric", "group", "value", "n", "ci_low", "ci_high", "details"} for row in rows)
    by_key = {(row["metric"], json.dumps(row["group"], sort_keys=True)): row for row in rows}
    assert by_key[("boundary.exact_rate", "{}")]["value"] == pytest.approx(4 / 9)
    assert by_key[("boundary.mean_points", "{}")]["details"]["sd"] > 0
    assert by_key[("progress.responses", "{}")]["n"] == 9
    assert len(rows) == Report.objects.filter(study=study, population="all").count()
    job = Job.objects.get()
    assert (job.kind, job.status, job.parameters["trigger"]) == ("reports", "done", "command")
    assert job.result["rows"] == Report.objects.filter(study=study).count()


def test_command_prints_a_summary_and_the_other_population():
    study = game_study()
    out = StringIO()
    call_command("computereports", study.slug, stdout=out)
    assert out.getvalue().startswith(f"Stored {Report.objects.filter(study=study).count()} figures for roft")
    passed = StringIO()
    call_command("computereports", study.slug, "--json", "--population", "passed", stdout=passed)
    assert (
        len(json.loads(passed.getvalue())) == Report.objects.filter(study=study, population="passed").count()
    )


def test_unknown_study_is_an_error():
    with pytest.raises(CommandError, match="No study with slug 'nope'"):
        call_command("computereports", "nope")
    assert Job.objects.count() == 0
