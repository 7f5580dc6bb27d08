"""Shared pieces of the researchers' pages."""

from __future__ import annotations

from functools import wraps

from django.conf import settings
from django.contrib.auth.views import LoginView, redirect_to_login
from django.core.exceptions import PermissionDenied
from django.shortcuts import resolve_url

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


class LandingLoginView(LoginView):
    """The login page: after logging in, a researcher lands on their studies (``/research/``),
    everyone else on the home page; a safe ``?next=`` wins for both (Django's own check)."""

    def get_default_redirect_url(self) -> str:
        if is_researcher(self.request.user):
            return resolve_url("research-home")
        return resolve_url(settings.LOGIN_REDIRECT_URL)
