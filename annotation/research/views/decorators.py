"""Who may open a researcher's page: the decorators every page under ``/research/`` wears."""

from __future__ import annotations

from functools import wraps

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied

from annotation.services.access import can_invite_researchers, is_researcher


def researcher_required(view):
    """Anonymous → login page; logged in but not a researcher → 403."""

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not is_researcher(request.user):
            raise PermissionDenied("Researchers only.")
        return view(request, *args, **kwargs)

    return wrapped


def staff_required(view):
    """Anonymous → login page; logged in but not staff → 403 (the pages that make accounts)."""

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        if not can_invite_researchers(request.user):
            raise PermissionDenied("Staff only.")
        return view(request, *args, **kwargs)

    return wrapped
