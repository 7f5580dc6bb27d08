"""Stored statistics: one row per figure, written by the reports task, read by pages."""

from __future__ import annotations

from django.db import models


class Report(models.Model):
    """One figure of a study's analysis (a mean, an alpha, a count, a test result).

    ``group`` holds plain keys (``criterion``, ``system``, ``question``, …); study-wide
    figures have ``{}``. ``population`` says which participants were counted: ``all``,
    ``passed`` (those who failed attention checks left out) or ``adjudicated`` (``passed``,
    with an item's adjudicated answer in place of its annotators' answers). ``fingerprint`` is the
    inputs' count and latest response time, so a recompute can be skipped when nothing
    changed.
    """

    class Population(models.TextChoices):
        ALL = "all", "All participants"
        PASSED = "passed", "Without participants who failed attention checks"
        ADJUDICATED = "adjudicated", "Adjudicated answers where there are some, else as passed"

    study = models.ForeignKey("annotation.Study", on_delete=models.CASCADE, related_name="reports")
    metric = models.CharField(max_length=80)
    group = models.JSONField(default=dict, blank=True)
    population = models.CharField(max_length=16, choices=Population.choices, default=Population.ALL)
    value = models.FloatField(null=True, blank=True)
    n = models.PositiveIntegerField(default=0)
    ci_low = models.FloatField(null=True, blank=True)
    ci_high = models.FloatField(null=True, blank=True)
    details = models.JSONField(default=dict, blank=True)
    fingerprint = models.JSONField(default=dict, blank=True)
    computed_at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["study", "population", "metric"])]
        ordering = ["study", "metric", "id"]

    def __str__(self) -> str:
        return f"{self.study_id} {self.metric} {self.group} = {self.value}"
