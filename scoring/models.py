"""Stored statistics: one row per figure, written by the reports task, read by pages."""

from __future__ import annotations

from django.db import models


class ReportQuerySet(models.QuerySet):
    def chosen(self, population: str, version: int | None = None) -> ReportQuerySet:
        """The rows of one population, over every version (``version`` None) or one."""
        if version is None:
            return self.filter(population=population, version__isnull=True)
        return self.filter(population=population, version=version)


class Report(models.Model):
    """One figure of a study's analysis (a mean, an alpha, a count, a test result).

    ``group`` holds plain keys (``criterion``, ``system``, ``question``, …); study-wide
    figures have ``{}``. ``population`` says which participants were counted: ``all``,
    ``passed`` (those who failed attention checks left out), ``adjudicated`` (``passed``,
    with an item's adjudicated answer in place of its annotators' answers) or ``authentic``
    (``passed`` less the answers whose authenticity signals show a strong sign).
    ``fingerprint`` is the inputs' count and latest response time, so a recompute can be
    skipped when nothing changed. Which rows a reader means is ``chosen`` (a population, all
    versions or one).
    """

    class Population(models.TextChoices):
        ALL = "all", "All participants"
        PASSED = "passed", "Without participants who failed attention checks"
        ADJUDICATED = "adjudicated", "Adjudicated answers where there are some, else as passed"
        AUTHENTIC = "authentic", "As passed, without answers with a strong sign of pasted text"

    study = models.ForeignKey("annotation.Study", on_delete=models.CASCADE, related_name="reports")
    metric = models.CharField(max_length=80)
    group = models.JSONField(default=dict, blank=True)
    population = models.CharField(max_length=16, choices=Population.choices, default=Population.ALL)
    version = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="Empty: every answer of the population. A number: only the answers given under "
        "that version of the study (computed once answers span more than one version).",
    )
    value = models.FloatField(null=True, blank=True)
    n = models.PositiveIntegerField(default=0)
    ci_low = models.FloatField(null=True, blank=True)
    ci_high = models.FloatField(null=True, blank=True)
    details = models.JSONField(default=dict, blank=True)
    fingerprint = models.JSONField(default=dict, blank=True)
    computed_at = models.DateTimeField()

    objects = ReportQuerySet.as_manager()

    class Meta:
        indexes = [models.Index(fields=["study", "population", "metric"])]
        ordering = ["study", "metric", "id"]

    def __str__(self) -> str:
        return f"{self.study_id} {self.metric} {self.group} = {self.value}"


class ItemColumns(models.Model):
    """A study's item columns as the reports read them, cached as one compressed NumPy blob.

    Reading and decoding the items' JSON fields (boundaries, labels, provenance) is most
    of a report run's read beside the responses, and items rarely change. ``version`` is
    bumped by PostgreSQL triggers (migration 0003) whenever the study's items are inserted,
    deleted or updated in any column but the hot counter ``slots_taken`` (so the participant
    path never invalidates it); ``bumped_by`` (the transaction that last bumped it) lets a
    transaction bump it once, not once per row, until a blob is stored. The blob holds the
    columns of the items at ``blob_version`` for the fields named by ``fields``; it is valid
    while ``blob_version == version`` (see ``scoring.item_cache``). The row exists once the
    study has items (the insert trigger creates it); without PostgreSQL there is none.
    """

    study = models.OneToOneField(
        "annotation.Study", on_delete=models.CASCADE, primary_key=True, related_name="item_columns"
    )
    version = models.BigIntegerField(default=0)
    bumped_by = models.BigIntegerField(default=0)
    blob_version = models.BigIntegerField(null=True, blank=True)
    fields = models.TextField(blank=True, default="")
    blob = models.BinaryField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.study_id} items v{self.version} (blob v{self.blob_version})"


class Datasheet(models.Model):
    """A study's HEDS datasheet as last saved (``scoring.datasheet``): the researcher's own
    answers by question key, and the sheet built with them. A row of its own, not a column
    of the study: the participant's pages read the study row on every request."""

    study = models.OneToOneField(
        "annotation.Study", on_delete=models.CASCADE, primary_key=True, related_name="datasheet"
    )
    answers = models.JSONField(default=dict, blank=True)
    sheet = models.JSONField(default=dict, blank=True)
    saved_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.study_id} datasheet"
