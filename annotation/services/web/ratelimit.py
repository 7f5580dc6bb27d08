"""Rate limits per client address: the logins, sign-up, the API token, a participant's entry,
the platforms' events (webhooks).

One limiter for all of them (DRF's throttle: a sliding window of request times kept in the
cache, which is Redis on a deployment, so every web process counts the same requests). The
client address is the connecting one, or the one ``NUM_PROXIES`` trusted proxies put in
``X-Forwarded-For`` (docs/deploy.md). Rates are settings: ``RATE_LIMIT_LOGIN``,
``RATE_LIMIT_TOKEN``, ``RATE_LIMIT_ENTRY``, ``RATE_LIMIT_HOOK`` (``"10/min"``).
"""

from __future__ import annotations

import re

from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle

# What the middleware limits: (scope, method, path pattern). The token is limited by DRF.
# Every form that takes a password, makes an account or sends a mail counts as a login: the
# site's and the admin's login, the game's sign-up, the password reset.
LIMITED_PAGES: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    ("login", "POST", re.compile(r"^/accounts/login/$")),
    ("login", "POST", re.compile(r"^/admin/login/$")),
    ("login", "POST", re.compile(r"^/play/signup/$")),
    ("login", "POST", re.compile(r"^/accounts/password_reset/$")),
    ("entry", "GET", re.compile(r"^/(play/)?s/[\w-]+/$")),
    ("entry", "POST", re.compile(r"^/(play/)?s/[\w-]+/(consent/)?$")),
    ("hook", "POST", re.compile(r"^/hooks/")),
)


class AddressThrottle(SimpleRateThrottle):
    """At most ``RATE_LIMIT_<SCOPE>`` requests of one scope from one client address."""

    scope = "entry"

    def __init__(self, scope: str | None = None):
        if scope is not None:
            self.scope = scope
        super().__init__()

    def get_rate(self) -> str:
        return getattr(settings, f"RATE_LIMIT_{self.scope.upper()}")

    def get_cache_key(self, request, view) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class TokenThrottle(AddressThrottle):
    scope = "token"


def limited_scope(method: str, path: str) -> str | None:
    """The rate-limit scope of a request, or None when it is not limited."""
    for scope, limited_method, pattern in LIMITED_PAGES:
        if method == limited_method and pattern.match(path):
            return scope
    return None


def over_limit(request) -> int | None:
    """Seconds to wait when this request is one too many for its scope; None when it may go on."""
    scope = limited_scope(request.method, request.path_info)
    if scope is None:
        return None
    throttle = AddressThrottle(scope)
    if throttle.allow_request(request, None):  # type: ignore[arg-type]  # no view: a page, not the API
        return None
    return max(1, round(throttle.wait() or 1))
