"""A study's versions: its study file and analysis plan after each change, with the change."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class StudyVersion(models.Model):
    """The study as it stood after one change of its settings, questions, items or plan.

    ``study_file`` is the study file (docs/formats.md, without ``status``; its ``items`` only
    while the study has at most ``VERSION_ITEMS_KEPT``, else their digest alone) and ``plan``
    the analysis plan; ``digest`` hashes both. ``deviation``: made after the plan was frozen, with
    the researcher's ``reason``. Written only by ``services/authoring/versions.py``.
    """

    class Source(models.TextChoices):
        BUILDER = "builder", "the study builder"
        UPLOAD = "upload", "a study file upload"
        API = "api", "the API"
        ADMIN = "admin", "the admin"
        COMMAND = "command", "a command"
        JOB = "job", "a job"
        FREEZE = "freeze", "freezing the plan"
        RULE = "rule", "a rule of the site (an exam no longer shared)"

    study = models.ForeignKey("annotation.Study", on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    study_file = models.JSONField()
    plan = models.JSONField(default=dict, blank=True)
    items_digest = models.CharField(max_length=64, help_text="SHA-256 of the items' study file entries.")
    item_count = models.PositiveIntegerField(default=0)
    digest = models.CharField(max_length=64)
    diff = models.TextField(blank=True, help_text="What changed since the version before, one line a change.")
    changed = models.JSONField(default=list, blank=True, help_text="The top-level parts that changed.")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    source = models.CharField(max_length=10, choices=Source.choices)
    reason = models.TextField(blank=True)
    deviation = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["study", "number"], name="study_version_number_once")]
        ordering = ["study", "number"]

    def __str__(self) -> str:
        return f"{self.study_id} v{self.number}"
