"""A participant's session in one study: consent, progress, attention checks, outcome."""

from __future__ import annotations

from django.conf import settings
from django.db import models

# The longest reason a flag keeps (the column's length; the page and the API check it first).
FLAG_REASON_MAX = 200


class Enrollment(models.Model):
    """Per (participant, study) state; its counters are updated with the response."""

    class Status(models.TextChoices):
        STARTED = "started", "Started"
        ACTIVE = "active", "Consented, annotating"
        COMPLETED = "completed", "Completed"
        SCREENED_OUT = "screened_out", "Screened out"
        RETURNED = "returned", "Returned / timed out"

    # No index of their own: ``enrollment_unique`` (participant, study) and
    # ``enrollment_study_participant`` (study, participant) serve both, so a look-up by
    # participant and study reads one entry whichever index the planner takes (with a
    # study_id index, a new study's stale statistics made it scan all the study's rows).
    participant = models.ForeignKey(
        "annotation.Participant", on_delete=models.CASCADE, related_name="enrollments", db_index=False
    )
    study = models.ForeignKey(
        "annotation.Study", on_delete=models.CASCADE, related_name="enrollments", db_index=False
    )
    status = models.CharField(max_length=14, choices=Status.choices, default=Status.STARTED)
    platform_session = models.JSONField(
        default=dict, blank=True, help_text="STUDY_ID/SESSION_ID or assignmentId/hitId as received."
    )
    consented_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    answered_count = models.PositiveIntegerField(default=0)
    points_total = models.FloatField(default=0.0)
    attention_passed = models.PositiveIntegerField(default=0)
    attention_failed = models.PositiveIntegerField(default=0)
    excluded = models.BooleanField(
        default=False, help_text="Left out of this study's reports by a researcher (data kept)."
    )
    flagged = models.BooleanField(
        default=False,
        db_default=False,  # rows written with COPY (bench, bulk tools) need no value for it
        help_text="Flagged in this study (failed its attention checks, or by a researcher): its "
        "answers count nowhere. Written only by services/flags.py.",
    )
    flag_reason = models.CharField(max_length=FLAG_REASON_MAX, blank=True, default="", db_default="")
    flagged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The researcher or admin who flagged; empty for the attention checks.",
    )
    flagged_at = models.DateTimeField(null=True, blank=True)
    accepted = models.BooleanField(
        default=False,
        db_default=False,  # rows written with COPY (bench, bulk tools) need no value for it
        help_text="A researcher reviewed this participant's answers and accepted them.",
    )
    is_test = models.BooleanField(
        default=False,
        db_default=False,  # rows written with COPY (bench, bulk tools) need no value for it
        help_text="A researcher who manages the study trying it: its answers count nowhere and "
        "are left out of the reports, exports and participant lists (set when enrolled).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["participant", "study"], name="enrollment_unique"),
        ]
        indexes = [models.Index(fields=["study", "participant"], name="enrollment_study_participant")]

    def __str__(self) -> str:
        return f"{self.participant} in {self.study}"

    @property
    def finished(self) -> bool:
        return self.status in {self.Status.COMPLETED, self.Status.SCREENED_OUT, self.Status.RETURNED}
