"""Prolific's transport: its public API (https://docs.prolific.com) on the standard library,
with the researcher's token.

The token goes in the ``Authorization: Token …`` header only, and only to
``PROLIFIC_API_URL``: a pagination link pointing anywhere else is refused. Recording, the dry
run and the reading of outcomes are the room's (``platforms.base``).
"""

from __future__ import annotations

import http.client
import json
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urlencode, urlsplit

from django.conf import settings

from annotation.models import Platform
from annotation.platforms.audit import CallContext
from annotation.platforms.base import PlatformCalls
from annotation.platforms.errors import (
    PlatformError,
    PlatformOutcomeUnknown,
    PlatformRefused,
    PlatformUnreachable,
)
from annotation.platforms.tokens import researcher_token


@dataclass
class ProlificClient(PlatformCalls):
    platform = Platform.PROLIFIC
    name = "Prolific"

    token: str
    base_url: str
    timeout: float

    def get(self, path: str, params: dict | None = None) -> dict:
        return self.read("GET", path + (f"?{urlencode(params)}" if params else ""))

    def post(self, path: str, body: dict | None = None) -> dict:
        """A write; in a dry run only recorded (and the reply is empty)."""
        return self.write("POST", path, body or {})

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

    def send(self, method: str, path: str, body: dict | None) -> tuple[int, object]:
        data = json.dumps(body).encode() if body is not None else None
        url = self.base_url + path  # PROLIFIC_API_URL: an http(s) address from the settings
        request = urllib.request.Request(url, data=data, method=method)  # noqa: S310
        request.add_header("Authorization", f"Token {self.token}")
        request.add_header("Accept", "application/json")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as reply:  # noqa: S310 - as above
                return reply.status, _json(reply.read())
        except urllib.error.HTTPError as exc:
            return exc.code, _json(exc.read())

    def unanswered(self, exc: Exception) -> PlatformError | None:
        if isinstance(exc, (urllib.error.URLError, OSError, http.client.HTTPException)):
            return _not_answered(exc)
        return None

    def failure(self, status: int, method: str, path: str, reply: dict) -> PlatformError:
        if status == 401:
            return PlatformRefused(
                f"Prolific refused the token (401) on {method} {path}: {self.detail(reply)}",
                status=401,
                body=reply,
            )
        return super().failure(status, method, path, reply)

    def detail(self, reply: dict) -> str:
        error = reply.get("error", reply)
        if isinstance(error, dict):
            return str(error.get("detail") or error.get("title") or error)[:300]
        return str(error)[:300]


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
