"""Commands that run a job in their own process print their own lines only: Celery's
"Task workers.tasks… succeeded in 0.05s: None" is not logged beside "job 4 failed"."""

from __future__ import annotations

import logging
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings

pytestmark = pytest.mark.django_db


def celery_lines(caplog) -> list[str]:
    return [record.getMessage() for record in caplog.records if record.name.startswith("celery")]


def test_computereports_prints_its_figures_and_no_celery_task_line(make_claim_study, caplog):
    study = make_claim_study(items=2)
    out, err = StringIO(), StringIO()
    with caplog.at_level(logging.INFO):
        call_command("computereports", study.slug, stdout=out, stderr=err)
    assert out.getvalue().startswith("Stored ") and f"figures for {study.slug}" in out.getvalue()
    assert celery_lines(caplog) == []
    assert "succeeded" not in out.getvalue() + err.getvalue()


@override_settings(PROLIFIC_API_TOKEN="", SITE_URL="https://roft.example")
def test_a_failed_prolific_job_is_not_also_reported_as_a_succeeded_task(make_claim_study, caplog):
    study = make_claim_study(items=2)
    out, err = StringIO(), StringIO()
    with caplog.at_level(logging.INFO), pytest.raises(CommandError, match="failed"):
        call_command(
            "prolific", "publish", study.slug, "--reward", "1.50", "--minutes", "10", stdout=out, stderr=err
        )
    assert celery_lines(caplog) == []
    assert "succeeded" not in out.getvalue() + err.getvalue()


def test_warnings_of_the_celery_task_logger_still_pass(caplog):
    """Only Celery's routine lines about a task run here are dropped, nothing it warns of."""
    with caplog.at_level(logging.INFO):
        logging.getLogger("celery.app.trace").warning("a warning")
        logging.getLogger("celery.app.trace").info("a routine line outside a job run")
    assert celery_lines(caplog) == ["a warning", "a routine line outside a job run"]
