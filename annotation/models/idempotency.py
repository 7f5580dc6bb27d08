"""The first answer to an API write, kept so that a retry with the same key replays it."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class IdempotencyKey(models.Model):
    """One ``Idempotency-Key`` a user sent with a write, and the answer it got.

    The row is inserted before the write runs (the unique constraint makes two
    concurrent retries meet here); ``status_code`` stays empty until the answer is known.
    ``fingerprint`` binds the key to one method, path and body, so reusing a key for a
    different request is refused rather than answered with someone else's result.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    fingerprint = models.CharField(max_length=64)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    body = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "key"], name="idempotency_key_unique")]
        indexes = [models.Index(fields=["created_at"])]

    def __str__(self) -> str:
        return f"{self.user_id}:{self.key}"
