"""What every crowd platform's calls share: reads and writes, the dry run, the audit log, and
the one reading of an outcome (``errors``: unreachable, refused, unknown).

A platform subclasses ``PlatformCalls`` and supplies only its transport (``send``: one call,
its status and reply; a reply with an error status is returned, not raised) and how its
transport says that no reply came (``unanswered``). The base writes each call to the audit
log (``audit.record_call``) and turns the outcome into what it means for money: a status of
500 or more, or no reply after the call left, may have acted (``PlatformOutcomeUnknown``); a
status of 400 or more did nothing (``PlatformRefused``); a call that never left did nothing
(``PlatformUnreachable``). In a dry run, reads go out (they change nothing) and writes are
only recorded and listed in ``would_send``. healthchecks' ``HttpTransport`` has the same
shape: one ``_request``, each integration only what differs.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

from annotation.platforms.audit import CallContext, record_call
from annotation.platforms.errors import PlatformError, PlatformOutcomeUnknown, PlatformRefused


@dataclass(frozen=True)
class PlannedCall:
    """A write a dry run did not send."""

    method: str
    path: str
    body: dict

    def line(self) -> str:
        return f"{self.method} {self.path} {json.dumps(self.body, sort_keys=True)}"


@dataclass
class PlatformCalls(ABC):
    """Calls to one platform for one job (``context``: who, which study, dry run or not).

    ``method`` is the HTTP method (Prolific) or the operation (MTurk); ``path`` is the API path
    (Prolific) or the endpoint (MTurk): what the audit log shows for the call."""

    platform: ClassVar[str]  # a ``Platform`` value
    name: ClassVar[str]  # as messages name the platform

    context: CallContext
    would_send: list[PlannedCall] = field(default_factory=list, kw_only=True)

    def read(self, method: str, path: str, body: dict | None = None) -> dict:
        """A call that changes nothing on the platform: made in a dry run too."""
        return self._call(method, path, body)

    def write(self, method: str, path: str, body: dict | None = None) -> dict:
        """A call that changes something on the platform; in a dry run only recorded (and the
        reply is empty)."""
        if self.context.dry_run:
            self.would_send.append(PlannedCall(method, path, body or {}))
            record_call(self.context, platform=self.platform, method=method, path=path, body=body)
            return {}
        return self._call(method, path, body or {})

    def _call(self, method: str, path: str, body: dict | None) -> dict:
        audit: dict[str, Any] = {"platform": self.platform, "method": method, "path": path, "body": body}
        try:
            status, reply = self.send(method, path, body)
        except Exception as exc:
            error = self.unanswered(exc)
            if error is None:
                raise
            record_call(self.context, **audit, error=str(error))
            raise error from None
        reply = jsonable(reply if isinstance(reply, dict) else {"value": reply})
        record_call(self.context, **audit, status=status, reply=reply)
        if status >= 400:
            raise self.failure(status, method, path, reply)
        return reply

    def failure(self, status: int, method: str, path: str, reply: dict) -> PlatformError:
        """The error of a reply with an error status: 5xx may have acted, 4xx did nothing."""
        what = self.describe(method, path)
        if status >= 500:
            return PlatformOutcomeUnknown(f"{self.name} answered {status} to {what}: {self.detail(reply)}")
        return PlatformRefused(
            f"{self.name} refused {what} ({self.code(status, reply)}): {self.detail(reply)}",
            status=status,
            body=reply,
        )

    def describe(self, method: str, path: str) -> str:
        """The call as an error message names it."""
        return f"{method} {path}"

    def code(self, status: int, reply: dict) -> str:
        """The refusal's code as an error message gives it (the HTTP status unless the platform
        says more)."""
        return str(status)

    def detail(self, reply: dict) -> str:
        """What the platform said, as an error message quotes it (at most 300 characters)."""
        return str(reply)[:300]

    @abstractmethod
    def send(self, method: str, path: str, body: dict | None) -> tuple[int, object]:
        """Make the call: the reply's status and body. A reply with an error status is
        returned; an exception means no reply came (``unanswered`` reads it)."""

    @abstractmethod
    def unanswered(self, exc: Exception) -> PlatformError | None:
        """A call that got no reply: ``PlatformUnreachable`` if it never left,
        ``PlatformOutcomeUnknown`` if it may have arrived; ``None`` for an exception that is
        not the transport's (raised as it is)."""


def jsonable(value: Any) -> Any:
    """A reply as the audit log can keep it (datetimes and such as text)."""
    if isinstance(value, dict):
        return {key: jsonable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [jsonable(item) for item in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)
