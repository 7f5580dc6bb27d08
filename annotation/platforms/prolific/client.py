"""A small client of Prolific's public API (https://docs.prolific.com), on the standard library.

Every call is written to the audit log (``platform_audit.record_call``) with its reply. In a
dry run, reads are made (they change nothing) and writes are only recorded and listed in
``would_send``: what a real run would have sent. The token goes in the ``Authorization:
Token …`` header only, and only to ``PROLIFIC_API_URL``: a pagination link pointing anywhere
else is refused.
"""

from __future__ import annotations

import http.client
import json
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit

from django.conf import settings

from annotation.models import Platform
from annotation.platforms.audit import CallContext, record_call
from annotation.platforms.errors import (
    PlatformError,
    PlatformOutcomeUnknown,
    PlatformRefused,
    PlatformUnreachable,
)
from annotation.platforms.tokens import researcher_token


@dataclass(frozen=True)
class PlannedCall:
    """A write a dry run did not send."""

    method: str
    path: str
    body: dict

    def line(self) -> str:
        return f"{self.method} {self.path} {json.dumps(self.body, sort_keys=True)}"


@dataclass
class ProlificClient:
    context: CallContext
    token: str
    base_url: str
    timeout: float
    would_send: list[PlannedCall] = field(default_factory=list)

    def get(self, path: str, params: dict | None = None) -> dict:
        return self._send("GET", path + (f"?{urlencode(params)}" if params else ""), None)

    def post(self, path: str, body: dict | None = None) -> dict:
        """A write; in a dry run only recorded (and the reply is empty)."""
        if self.context.dry_run:
            self.would_send.append(PlannedCall("POST", path, body or {}))
            record_call(self.context, platform=Platform.PROLIFIC, method="POST", path=path, body=body)
            return {}
        return self._send("POST", path, body or {})

    def pages(self, path: str, params: dict) -> Iterator[dict]:
        """Every result of a listing, following ``_links.next`` to the last page."""
        page = self.get(path, params)
        while True:
            yield from page.get("results", [])
            next_url = ((page.get("_links") or {}).get("next") or {}).get("href")
            if not next_url:
                return
            page = self.get(self._own_path(next_url))

    def _own_path(self, url: str) -> str:
        """A link the API gave, as a path on our API (never a token sent to another host)."""
        parts, ours = urlsplit(url), urlsplit(self.base_url)
        if parts.netloc and (parts.scheme, parts.netloc) != (ours.scheme, ours.netloc):
            raise PlatformError(
                f"Prolific's next-page link points to another host ({parts.netloc}); stopped."
            )
        prefix = ours.path.rstrip("/")
        path = parts.path[len(prefix) :] if prefix and parts.path.startswith(prefix) else parts.path
        return path + (f"?{parts.query}" if parts.query else "")

    def _send(self, method: str, path: str, body: dict | None) -> dict:
        data = json.dumps(body).encode() if body is not None else None
        url = self.base_url + path  # PROLIFIC_API_URL: an http(s) address from the settings
        request = urllib.request.Request(url, data=data, method=method)  # noqa: S310
        request.add_header("Authorization", f"Token {self.token}")
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        audit: dict[str, Any] = {"platform": Platform.PROLIFIC, "method": method, "path": path, "body": body}
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as reply:  # noqa: S310 - as above
                status, raw = reply.status, reply.read()
        except urllib.error.HTTPError as exc:
            status, raw = exc.code, exc.read()
        except (urllib.error.URLError, OSError, http.client.HTTPException) as exc:
            error = _not_answered(exc)
            record_call(self.context, **audit, error=str(error))
            raise error from None
        parsed = _json(raw)
        record_call(self.context, **audit, status=status, reply=parsed)
        if status >= 500:
            raise PlatformOutcomeUnknown(f"Prolific answered {status} to {method} {path}: {_detail(parsed)}")
        if status == 401:
            raise PlatformRefused(
                f"Prolific refused the token (401) on {method} {path}: {_detail(parsed)}",
                status=401,
                body=parsed,
            )
        if status >= 400:
            raise PlatformRefused(
                f"Prolific refused {method} {path} ({status}): {_detail(parsed)}", status=status, body=parsed
            )
        return parsed if isinstance(parsed, dict) else {"value": parsed}


def _not_answered(exc: BaseException) -> PlatformError:
    """A call without a reply: never sent (refused, no host) or sent and unanswered."""
    reason = exc.reason if isinstance(exc, urllib.error.URLError) else exc
    if isinstance(reason, (ConnectionRefusedError, socket.gaierror)):
        return PlatformUnreachable(f"Prolific could not be reached ({reason}); nothing was sent.")
    return PlatformOutcomeUnknown(f"Prolific did not answer ({reason or type(exc).__name__}).")


def _json(raw: bytes) -> object:
    try:
        return json.loads(raw.decode() or "{}")
    except (ValueError, UnicodeDecodeError):
        return {"text": raw[:2000].decode(errors="replace")}


def _detail(parsed: object) -> str:
    if isinstance(parsed, dict):
        error = parsed.get("error", parsed)
        if isinstance(error, dict):
            return str(error.get("detail") or error.get("title") or error)[:300]
        return str(error)[:300]
    return str(parsed)[:300]


def prolific_client(context: CallContext) -> ProlificClient:
    """The client for a job: the researcher's own token when they stored one, else the site's.
    A real run without any token fails here, before a call."""
    token = researcher_token(context.user, platform=Platform.PROLIFIC) or settings.PROLIFIC_API_TOKEN
    if not token and not context.dry_run:
        raise PlatformError("No Prolific token: store yours on the research page or set PROLIFIC_API_TOKEN.")
    return ProlificClient(
        context=context,
        token=token or "",
        base_url=settings.PROLIFIC_API_URL,
        timeout=settings.PLATFORM_API_TIMEOUT_S,
    )
