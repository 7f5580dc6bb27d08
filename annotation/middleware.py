"""Participant pages may be shown in a crowd platform's frame (MTurk's ExternalQuestion);
logins and participant entry are rate limited per client address; chunked bodies are read;
text that cannot be stored (a NUL) is refused before any view sees it; public pages speak
the browser's language and research pages English (``SiteLanguage``)."""

from __future__ import annotations

import tempfile

from django.conf import settings
from django.core.handlers.wsgi import LimitedStream
from django.http import HttpResponse, JsonResponse
from django.middleware.locale import LocaleMiddleware
from django.utils import translation
from django.utils.translation import gettext_lazy

from annotation.services.web.json_input import text_problem
from annotation.services.web.ratelimit import over_limit

PARTICIPANT_PREFIX = "/s/"


def content_security_policy(*, frame_ancestors: str = "'none'") -> str:
    """The site's Content-Security-Policy: scripts, styles, images, fonts and requests from
    our own origin only; no inline or injected script (our pages keep theirs in static/js;
    ``style-src`` allows inline styles, which htmx and the API docs set); no plugins; forms
    post to us; only ``frame_ancestors`` may frame the page."""
    return "; ".join(
        [
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self' 'unsafe-inline'",
            "img-src 'self' data:",
            "font-src 'self'",
            "connect-src 'self'",
            "worker-src 'self' blob:",
            "object-src 'none'",
            "base-uri 'self'",
            "form-action 'self'",
            f"frame-ancestors {frame_ancestors}",
        ]
    )


def security_policy(get_response):
    """Every page gets the Content-Security-Policy (pages under /s/ get theirs, with the
    crowd platforms' frames, from ``crowd_framing``). Listed after it, so it runs first on
    the way out and ``crowd_framing`` replaces the policy where framing is allowed."""
    policy = content_security_policy()

    def middleware(request):
        response = get_response(request)
        response.setdefault("Content-Security-Policy", policy)
        return response

    return middleware


def crowd_framing(get_response):
    """Pages under /s/ may be framed by CROWD_FRAME_ANCESTORS; every other page stays DENY.

    Listed after XFrameOptionsMiddleware, so it sees the response before it and can exempt
    it; the CSP's ``frame-ancestors`` rule names who may frame the page.
    """
    ancestors = " ".join(["'self'", *settings.CROWD_FRAME_ANCESTORS])

    def middleware(request):
        response = get_response(request)
        if request.path.startswith(PARTICIPANT_PREFIX):
            response["Content-Security-Policy"] = content_security_policy(frame_ancestors=ancestors)
            response.xframe_options_exempt = True
        return response

    return middleware


# In the visitor's language (``SiteLanguage`` runs before this middleware).
TOO_MANY = gettext_lazy("Too many attempts from your address. Please wait a minute and try again.")


def rate_limits(get_response):
    """Answer 429 to a login or a participant entry beyond its rate (``services.web.ratelimit``)."""

    def middleware(request):
        wait = over_limit(request)
        if wait is not None:
            response = HttpResponse(str(TOO_MANY), status=429, content_type="text/plain; charset=utf-8")
            response["Retry-After"] = str(wait)
            return response
        return get_response(request)

    return middleware


API_PREFIX = "/api/"
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
CHUNK = 64 * 1024


def chunked_bodies(get_response):
    """A body sent with ``Transfer-Encoding: chunked`` (no ``Content-Length``) is read.

    Django reads at most ``CONTENT_LENGTH`` bytes of ``wsgi.input``, so without one such a
    body looks empty. Where the server has decoded the chunks and ends the stream itself
    (gunicorn; WSGI's ``wsgi.input_terminated``), read it here, at most
    ``API_MAX_UPLOAD_BYTES`` + 1 bytes (spooled to disk beyond 1 MiB), and give the request
    its length: a body over the bound then declares a length over it and gets the API's 413.
    """

    def middleware(request):
        environ = request.environ
        chunked = "chunked" in environ.get("HTTP_TRANSFER_ENCODING", "").lower()
        if chunked and not environ.get("CONTENT_LENGTH") and environ.get("wsgi.input_terminated"):
            source, limit = environ["wsgi.input"], settings.API_MAX_UPLOAD_BYTES
            spooled = tempfile.SpooledTemporaryFile(max_size=1024 * 1024)  # noqa: SIM115  # closed with the request
            read = 0
            while read <= limit and (chunk := source.read(min(CHUNK, limit + 1 - read))):
                spooled.write(chunk)
                read += len(chunk)
            spooled.seek(0)
            # django-stubs name BytesIO; LimitedStream reads any binary file (Django passes wsgi.input)
            request._stream = LimitedStream(spooled, read)  # type: ignore[arg-type]
            request._read_started = False
            request.META["CONTENT_LENGTH"] = str(read)
        return get_response(request)

    return middleware


def unstorable_text(request) -> dict[str, list[str]]:
    """Each place in the URL, query string or form holding text we cannot store (a NUL)."""
    problems: dict[str, list[str]] = {}
    if problem := text_problem(request.path_info):
        problems["path"] = [problem]
    sources = [request.GET]
    content_type = request.META.get("CONTENT_TYPE", "")
    if request.method == "POST" and content_type.startswith(FORM_TYPES):
        sources.append(request.POST)
    for source in sources:
        for name, values in source.lists():
            problem = text_problem(name) or next(filter(None, map(text_problem, values)), None)
            if problem:
                problems[name if not text_problem(name) else "query"] = [problem]
    return problems


def refuse_unstorable_text(get_response):
    """A NUL anywhere in the path, query or form is a 400 naming where (JSON under /api/),
    never a 500 from the database that cannot store it. JSON bodies are checked by
    ``services.web.json_input``."""

    def middleware(request):
        problems = unstorable_text(request)
        if not problems:
            return get_response(request)
        if request.path_info.startswith(API_PREFIX):
            return JsonResponse(problems, status=400)
        text = "\n".join(f"{name}: {' '.join(messages)}" for name, messages in problems.items())
        return HttpResponse(text, status=400, content_type="text/plain; charset=utf-8")

    return middleware


# Pages for researchers, admins and API clients are written in English only.
ENGLISH_ONLY_PREFIXES = ("/research/", "/admin/", "/api/")


class SiteLanguage(LocaleMiddleware):
    """The browser's language (Accept-Language, else ``LANGUAGE_CODE``) for the public pages
    (home, the game, logins); English for the research, admin and API pages, which have no
    translations (a German browser would otherwise get Django's German next to our English).
    A study's participant pages switch to the study's language in their views
    (``annotation.languages.in_study_language``)."""

    def process_request(self, request):
        if request.path_info.startswith(ENGLISH_ONLY_PREFIXES):
            translation.activate(settings.LANGUAGE_CODE)
            request.LANGUAGE_CODE = translation.get_language()
            return
        super().process_request(request)
