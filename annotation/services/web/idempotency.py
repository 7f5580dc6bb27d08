"""Idempotency keys for API writes: a retried request gets the first answer, not a second write.

The key row is inserted before the write (the unique constraint decides between two
concurrent retries); the answer is stored after it. A write that fails with an error is
forgotten, so the client may retry it with the same key.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.errors import InputError
from annotation.models import IdempotencyKey

MAX_KEY_LENGTH = 255


class KeyInUse(Exception):
    """The first request with this key is still running."""


class KeyReused(InputError):
    """The key was used before for a different request (another body, path or method)."""


@dataclass(frozen=True)
class Claim:
    row: IdempotencyKey
    replay: bool  # True: answer with row.status_code and row.body


def claim_key(*, user, key: str, fingerprint: str) -> Claim:
    """Reserve ``key`` for this request, or find the stored answer of its first use."""
    if not key or len(key) > MAX_KEY_LENGTH:
        raise InputError({"Idempotency-Key": [f"Use 1 to {MAX_KEY_LENGTH} characters."]})
    cutoff = timezone.now() - timedelta(hours=settings.IDEMPOTENCY_KEY_HOURS)
    IdempotencyKey.objects.filter(user=user, created_at__lt=cutoff).delete()
    try:
        with transaction.atomic():
            return Claim(IdempotencyKey.objects.create(user=user, key=key, fingerprint=fingerprint), False)
    except IntegrityError:
        row = IdempotencyKey.objects.get(user=user, key=key)
    if row.fingerprint != fingerprint:
        raise KeyReused({"Idempotency-Key": ["This key was used for a different request."]})
    if row.status_code is None:
        raise KeyInUse("A request with this Idempotency-Key is still being processed.")
    return Claim(row, True)


def store_answer(claim: Claim, *, status_code: int, body) -> None:
    IdempotencyKey.objects.filter(pk=claim.row.pk).update(status_code=status_code, body=body)


def forget_key(claim: Claim) -> None:
    IdempotencyKey.objects.filter(pk=claim.row.pk, status_code=None).delete()
