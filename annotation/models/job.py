"""A background job (generation, editing, reports, exports) and its progress."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from annotation.shares import percent


class Job(models.Model):
    """One run of a Celery task, created before the task is queued.

    Tasks receive the job's id, move it QUEUED → RUNNING with a conditional update (so a
    redelivered message does nothing twice), report progress as they go, and end it
    DONE, FAILED or CANCELLED.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    FINISHED = (Status.DONE, Status.FAILED, Status.CANCELLED)

    kind = models.CharField(max_length=40, help_text="A job kind from annotation.services.jobs.")
    study = models.ForeignKey(
        "annotation.Study", null=True, blank=True, on_delete=models.CASCADE, related_name="jobs"
    )
    parameters = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    progress_done = models.PositiveIntegerField(default=0)
    progress_total = models.PositiveIntegerField(default=0)
    message = models.CharField(max_length=300, blank=True)
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True, help_text="A short message for the researcher.")
    traceback = models.TextField(blank=True, help_text="Where it failed: for admins and the logs only.")
    attempts = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="jobs"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True, help_text="Last sign of life from the task.")
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "kind"]), models.Index(fields=["study", "kind"])]

    def __str__(self) -> str:
        return f"{self.kind} job {self.pk} ({self.status})"

    @property
    def percent(self) -> int:
        if not self.progress_total:
            return 100 if self.status == self.Status.DONE else 0
        return percent(self.progress_done, self.progress_total)
