"""The audit log of the crowd platforms' APIs: the one writer of ``PlatformCall`` rows.

Every call the site makes to Prolific or MTurk (and every call a dry run would make) is
written here with what was sent and what came back, so a researcher can see on the study's
page who approved, rejected or paid whom, when, and what the platform answered. Every event a
platform sends us (a webhook, ``platforms.events``) is written here too, as the method
``EVENT``: what arrived, what we answered, and what it did or why it did nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from annotation.models import Job, PlatformCall, Study

# Parts of a request that are never written down (a token in a body, should one appear).
SECRET_KEYS = {"token", "authorization", "api_token"}


@dataclass(frozen=True)
class CallContext:
    """Who makes the calls and for what: written on each audit row."""

    study: Study
    user: Any = None
    job: Job | None = None
    dry_run: bool = False


def record_call(
    context: CallContext,
    *,
    platform: str,
    method: str,
    path: str,
    body: object = None,
    status: int | None = None,
    reply: object = None,
    error: str = "",
) -> PlatformCall:
    """Write one call, committed at once (the jobs run outside a transaction), so the record
    stays whatever the caller does next."""
    user = context.user if getattr(context.user, "is_authenticated", False) else None
    with transaction.atomic():
        return PlatformCall.objects.create(
            study=context.study,
            user=user,
            job=context.job,
            platform=platform,
            method=method,
            path=path[:300],
            request_body=_redacted(_as_json(body)),
            status=status,
            response_body=_as_json(reply),
            error=error[:2000],
            dry_run=context.dry_run,
        )


EVENT = "EVENT"  # the method of an event a platform sent us (a webhook), in the audit log


def record_event(
    study: Study | None,
    *,
    platform: str,
    event_type: str,
    body: object,
    status: int,
    outcome: dict,
    error: str = "",
) -> PlatformCall:
    """Write one event a platform sent us: its body (``body``), the HTTP status we answered
    (``status``) and what it did (``outcome``); ``error`` says why it was refused. ``study`` is
    None when the address named no study of ours. Committed at once, as ``record_call``."""
    with transaction.atomic():
        return PlatformCall.objects.create(
            study=study,
            platform=platform,
            method=EVENT,
            path=(event_type or "(unread)")[:300],
            request_body=_redacted(_as_json(body)),
            status=status,
            response_body=_as_json(outcome),
            error=error[:2000],
        )


def study_calls(study: Study, *, limit: int = 50):
    """The study's latest calls, newest first (its research page and the API)."""
    return PlatformCall.objects.filter(study=study).select_related("user")[:limit]


def _as_json(value: object) -> dict:
    if value is None:
        return {}
    if isinstance(value, dict):
        return value
    return {"value": value if isinstance(value, (list, str, int, float, bool)) else str(value)}


def _redacted(body: dict) -> dict:
    return {key: ("…" if key.lower() in SECRET_KEYS else value) for key, value in body.items()}
