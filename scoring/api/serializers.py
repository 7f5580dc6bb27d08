"""Report rows as the statistics task stored them (docs/statistics.md names the metrics)."""

from __future__ import annotations

from rest_framework import serializers

from scoring.models import Report


class ReportOut(serializers.ModelSerializer):
    class Meta:
        model = Report
        fields = [
            "id", "metric", "group", "population", "version", "value", "n", "ci_low", "ci_high",
            "details", "computed_at",
        ]  # fmt: skip


class ReportFilter(serializers.Serializer):
    metric = serializers.CharField(required=False)
    population = serializers.ChoiceField(choices=Report.Population.choices, required=False)
    version = serializers.IntegerField(
        required=False,
        min_value=1,
        help_text="Only the figures of the answers given under this version of the study "
        "(stored once answers span more than one version); without it, every answer's.",
    )
