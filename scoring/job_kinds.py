"""The reports job: a study's statistics recomputed by ``workers.tasks.reports``.

Registered on ``annotation``'s job registry (``register_job_kind``) once at start-up by
``ScoringConfig.ready``, with the dataclass of its parameters; ``annotation`` does not
import ``scoring``, so the kind that computes reports is declared here, where they are.
"""

from __future__ import annotations

from dataclasses import dataclass

from rest_framework import serializers

from annotation.services.jobs import JobParameters, register_job_kind
from scoring.reports.agreement import RESERVED_KEYS
from scoring.services import DEFAULT_BY, REPORTS_JOB


@dataclass(frozen=True, kw_only=True)
class ReportsParameters(JobParameters):
    """A reports job recomputes its study's statistics; ``trigger`` records who asked;
    ``by`` names the items' provenance keys agreement is also grouped by."""

    trigger: str
    by: tuple[str, ...]

    class Serializer(serializers.Serializer):
        trigger = serializers.ChoiceField(
            choices=["dashboard", "command", "schedule", "erasure"], default="dashboard"
        )
        by = serializers.ListField(
            child=serializers.RegexField(r"^[A-Za-z][A-Za-z0-9]*(_[A-Za-z0-9]+)*$", max_length=40),
            max_length=5,
            default=lambda: list(DEFAULT_BY),
            help_text=f"default: {', '.join(DEFAULT_BY)}",
        )

        def validate_by(self, keys: list[str]) -> list[str]:
            taken = sorted(set(keys) & RESERVED_KEYS)
            if taken:
                raise serializers.ValidationError(f"{', '.join(taken)}: already a group key of the reports.")
            return list(dict.fromkeys(keys))


register_job_kind(
    REPORTS_JOB,
    task="workers.tasks.reports.compute_study_reports_task",
    queue="default",
    parameters=ReportsParameters,
    needs_study=True,
    analysis=True,
)
