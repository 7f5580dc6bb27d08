"""How a call to a crowd platform can fail, by what it means for money.

The difference that matters is whether the platform may have acted: a call that never left
(connection refused) or that the platform answered with a refusal (4xx) changed nothing
there; a call that left and got no clear answer (a time-out, a dropped connection, a 5xx)
may have. Money-moving steps treat the second kind as "maybe done" and never repeat it blindly.
"""

from __future__ import annotations


class PlatformError(Exception):
    """A platform call failed; the message says why, for the researcher (and the job's error)."""

    maybe_done = False


class PlatformUnreachable(PlatformError):
    """Nothing reached the platform (connection refused, no such host): nothing happened there."""


class PlatformRefused(PlatformError):
    """The platform answered with a refusal (4xx): it did nothing."""

    def __init__(self, message: str, *, status: int, body: object = None) -> None:
        super().__init__(message)
        self.status = status
        self.body = body


class PlatformOutcomeUnknown(PlatformError):
    """The call left and no clear answer came back (time-out, dropped connection, 5xx): the
    platform may have acted."""

    maybe_done = True
