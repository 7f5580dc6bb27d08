"""The record that a participant's data was erased: when, by whom, how much, never whose."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Erasure(models.Model):
    """One participant's data erased from one study (a tombstone).

    It answers an ethics board's "did you delete what you were asked to?" and explains a
    study whose counts went down, without keeping anything that names the participant: no
    public id, platform id, pseudonym or answer, only counts. Written by
    ``services.authoring.erasure`` only.
    """

    class How(models.TextChoices):
        PAGE = "page", "The participants page"
        COMMAND = "command", "The erase command"
        ADMIN = "admin", "The admin site (a participant or an enrollment deleted)"
        API = "api", "The API"
        WITHDRAWAL = "withdrawal", "The participant withdrew (the Leave page)"
        RETENTION = "retention", "The study's retention period ended"

    study = models.ForeignKey("annotation.Study", on_delete=models.CASCADE, related_name="erasures")
    erased_at = models.DateTimeField(auto_now_add=True)
    erased_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The researcher or admin who erased; empty for a withdrawal or the retention rule.",
    )
    how = models.CharField(max_length=12, choices=How.choices)
    answers = models.PositiveIntegerField(default=0, help_text="Answers erased (attention checks included).")
    pages = models.PositiveIntegerField(default=0, help_text="Pages (assignments) erased, answered or not.")
    exam_attempts = models.PositiveIntegerField(default=0, help_text="Exam attempts erased.")

    class Meta:
        ordering = ["-erased_at", "-id"]

    def __str__(self) -> str:
        return f"erasure of {self.answers} answers in {self.study_id} ({self.how})"
