"""Participant pages may be shown in a crowd platform's frame (MTurk's ExternalQuestion);
logins and participant entry are rate limited per client address."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpResponse

from annotation.services.ratelimit import over_limit

PARTICIPANT_PREFIX = "/s/"


def crowd_framing(get_response):
    """Pages under /s/ may be framed by CROWD_FRAME_ANCESTORS; every other page stays DENY.

    Listed last in MIDDLEWARE, so it sees the response before XFrameOptionsMiddleware
    and can exempt it; the CSP ``frame-ancestors`` rule names who may frame the page.
    """
    ancestors = " ".join(["'self'", *settings.CROWD_FRAME_ANCESTORS])

    def middleware(request):
        response = get_response(request)
        if request.path.startswith(PARTICIPANT_PREFIX):
            response["Content-Security-Policy"] = f"frame-ancestors {ancestors}"
            response.xframe_options_exempt = True
        return response

    return middleware


TOO_MANY = "Too many attempts from your address. Please wait a minute and try again."


def rate_limits(get_response):
    """Answer 429 to a login or a participant entry beyond its rate (``services.ratelimit``)."""

    def middleware(request):
        wait = over_limit(request)
        if wait is not None:
            response = HttpResponse(TOO_MANY, status=429, content_type="text/plain; charset=utf-8")
            response["Retry-After"] = str(wait)
            return response
        return get_response(request)

    return middleware
