"""Participant pages may be shown in a crowd platform's frame (MTurk's ExternalQuestion)."""

from __future__ import annotations

from django.conf import settings

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
