"""Prolific's webhooks: what is Prolific's own in them (docs.prolific.com, "Webhooks").

- Prolific signs each delivery with the workspace's secret (one active secret per workspace):
  ``X-Prolific-Request-Signature`` is the base64 of HMAC-SHA256 over the text of
  ``X-Prolific-Request-Timestamp`` followed by the raw body.
- ``X-Event-ID`` names the event (delivery is at least once: the same id may come again) and
  ``X-Timestamp`` says when it was sent (delivery is in no guaranteed order).
- ``submission.status.change`` carries ``resource_id`` (the submission, which our link receives
  as SESSION_ID), ``participant_id`` (the PROLIFIC_PID) and the new ``status``.

The study is named by the address (``/hooks/prolific/<slug>/``) and its secret is kept
on its ``PlatformStudy``, sealed like a token (``platforms.tokens``). Keeping the id, the
order, the release and the audit log are the room's (``platforms.events``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Mapping
from datetime import UTC, datetime

from annotation.errors import InputError
from annotation.models import Platform, PlatformStudy, Study
from annotation.platforms.events import Answer, Event, receive, refuse
from annotation.platforms.prolific.calls import STATUSES
from annotation.platforms.records import platform_study
from annotation.platforms.review import RELEASED
from annotation.platforms.tokens import seal, unseal

SIGNATURE_HEADER = "X-Prolific-Request-Signature"
TIMESTAMP_HEADER = "X-Prolific-Request-Timestamp"
EVENT_ID_HEADER = "X-Event-ID"
SENT_AT_HEADER = "X-Timestamp"
SUBMISSION_EVENT = "submission.status.change"
# The submission statuses after which the participant's place is Prolific's again: those the
# review releases (returned, timed out) and a rejection, which also frees the place there.
FREEING = frozenset({name for name, status in STATUSES.items() if status == RELEASED} | {"REJECTED"})
MAX_SECRET = 500


# --- the secret --------------------------------------------------------------------------


def store_hook_secret(study: Study, secret: str) -> None:
    """Keep the workspace's webhook secret for ``study`` (sealed); an empty one removes it
    (the study's address then refuses every event)."""
    secret = secret.strip()
    if len(secret) > MAX_SECRET or any(ch.isspace() for ch in secret):
        raise InputError({"secret": [f"A webhook secret is one word of at most {MAX_SECRET} characters."]})
    record = platform_study(study)
    PlatformStudy.objects.filter(pk=record.pk).update(prolific_hook_secret=seal(secret) if secret else b"")


def hook_secret(study: Study) -> str:
    """The study's webhook secret, or "" (none stored, or unreadable under the current key)."""
    sealed = PlatformStudy.objects.filter(study=study).values_list("prolific_hook_secret", flat=True).first()
    return unseal(sealed or b"")


# --- the signature -----------------------------------------------------------------------


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """Prolific's signature of a delivery (also how the tests and the stand-in sign)."""
    digest = hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def signed(secret: str, headers: Mapping[str, str], body: bytes) -> bool:
    """Whether the delivery carries Prolific's signature under ``secret`` (compared in constant time)."""
    given = headers.get(SIGNATURE_HEADER, "")
    timestamp = headers.get(TIMESTAMP_HEADER, "")
    if not given or not timestamp:
        return False
    return hmac.compare_digest(given.encode(), signature(secret, timestamp, body).encode())


# --- the event ---------------------------------------------------------------------------


def read_event(headers: Mapping[str, str], body: bytes) -> Event:
    """A signed delivery as the room reads it; an ``InputError`` names what cannot be read."""
    try:
        data = json.loads(body.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError({"body": ["The body is not UTF-8 text."]}) from None
    except ValueError as exc:
        raise InputError({"body": [f"The body is not JSON ({exc})."]}) from None
    if not isinstance(data, dict):
        raise InputError({"body": ["The body is not a JSON object."]})
    event_id = headers.get(EVENT_ID_HEADER, "").strip()
    if not event_id or len(event_id) > 100:
        raise InputError({EVENT_ID_HEADER: ["Every event needs its id (at most 100 characters)."]})
    event_type = _text(data, "event_type")
    status = submission_id = worker_id = ""
    if event_type == SUBMISSION_EVENT:
        submission_id = _text(data, "resource_id", longest=64)
        worker_id = _text(data, "participant_id", longest=64)
        status = _text(data, "status", longest=40)
    return Event(
        platform=Platform.PROLIFIC,
        event_id=event_id,
        event_type=event_type,
        submission_id=submission_id,
        worker_id=worker_id,
        status=status,
        sent_at=_sent_at(headers.get(SENT_AT_HEADER) or headers.get(TIMESTAMP_HEADER, "")),
        frees_place=status in FREEING,
        session_key="SESSION_ID",
        body=data,
    )


def _text(data: dict, name: str, *, longest: int = 100) -> str:
    value = data.get(name)
    if not isinstance(value, str) or not value.strip():
        raise InputError({name: ["Missing: the event needs it as text."]})
    if len(value) > longest:
        raise InputError({name: [f"Longer than {longest} characters."]})
    return value.strip()


def _sent_at(text: str) -> datetime | None:
    """The UNIX time Prolific gives, or None when it gives none that can be read (the event
    then cannot be ordered and is applied as it comes)."""
    try:
        return datetime.fromtimestamp(float(text), tz=UTC)
    except (ValueError, OverflowError, OSError):
        return None


def receive_prolific(slug: str, headers: Mapping[str, str], body: bytes) -> Answer:
    """One delivery to the study's address: refused (403) unless signed with the study's secret,
    refused (400) when it cannot be read, else kept and applied once (``events.receive``)."""
    study = Study.objects.filter(slug=slug).first()
    if study is None:
        return refuse(
            None, platform=Platform.PROLIFIC, status=404, detail=f"There is no study {slug!r} here."
        )
    secret = hook_secret(study)
    if not secret:
        return refuse(
            study,
            platform=Platform.PROLIFIC,
            status=403,
            detail="This study has no webhook secret: set one (docs/crowd.md, 'Prolific webhooks').",
        )
    if not signed(secret, headers, body):
        missing = [name for name in (SIGNATURE_HEADER, TIMESTAMP_HEADER) if not headers.get(name)]
        detail = f"Unsigned: {' and '.join(missing)} missing." if missing else "The signature does not match."
        return refuse(study, platform=Platform.PROLIFIC, status=403, detail=detail)
    try:
        event = read_event(headers, body)
    except InputError as exc:
        return refuse(study, platform=Platform.PROLIFIC, status=400, detail=exc.summary())
    return receive(study, event)
