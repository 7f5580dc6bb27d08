"""What every page's template reads of the request beyond Django's own context processors."""

from __future__ import annotations

from django.http import HttpRequest

from annotation.htmx import is_boosted


def htmx_swap(request: HttpRequest) -> dict:
    """``body_only``: the page goes into a page already open, by a boosted htmx request (the
    task form's one-trip answer), which swaps in the body's content and keeps the open page's
    head, taking only the title from the response; ``base.html`` then renders no head."""
    return {"body_only": is_boosted(request)}
