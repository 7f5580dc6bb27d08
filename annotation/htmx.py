"""What htmx says of a request in its headers: the one place the site reads them."""

from __future__ import annotations

from django.http import HttpRequest


def is_htmx(request: HttpRequest) -> bool:
    """Whether htmx sent this request (the game's round steps, the task form's answer, the
    research pages' polls), wanting a fragment or a page to swap in rather than a redirect."""
    return request.headers.get("HX-Request") == "true"


def is_boosted(request: HttpRequest) -> bool:
    """Whether a boosted element sent it (the task form's one-trip answer): htmx swaps the
    response's body into the open page and keeps that page's head."""
    return is_htmx(request) and request.headers.get("HX-Boosted") == "true"
