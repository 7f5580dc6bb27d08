"""Researcher invitations: staff make one-time links; the invitee's page makes the account."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from annotation.errors import InputError
from annotation.services.authoring import invitations
from annotation.services.authoring.invitations import InvitationClosed, ResearcherAccountForm

from .decorators import staff_required


@staff_required
@never_cache
@require_http_methods(["GET", "POST"])
def invitation_list(request: HttpRequest) -> HttpResponse:
    """Recent invitations, and a form for a new one. The new link is in this one answer
    only (not a redirect: the token is never stored, not even in the session)."""
    link = ""
    errors: dict[str, list[str]] = {}
    if request.method == "POST":
        try:
            new = invitations.invitation_create(created_by=request.user, email=request.POST.get("email", ""))
        except InputError as exc:
            errors = exc.errors
        else:
            link = join_link(request, new.token)
    context = {
        "link": link,
        "errors": list(errors.items()),
        "rows": invitations.recent_invitations(),
        "lifetime_days": invitations.INVITATION_LIFETIME.days,
    }
    return render(request, "research/invitations.html", context, status=400 if errors else 200)


def join_link(request: HttpRequest, token: str) -> str:
    """The invitation link: the token in the fragment, which the browser keeps to itself (no
    access log, proxy or ``Referer`` sees it); the join page's script posts it."""
    return f"{request.build_absolute_uri(reverse('researcher-join'))}#{token}"


@never_cache
@require_http_methods(["GET", "POST"])
def researcher_join(request: HttpRequest) -> HttpResponse:
    """The invitation page. GET: a form for the token (the page's script fills it in from the
    link's fragment and sends it; without scripts, the invitee pastes the link). POST with the
    token alone: the account form if the invitation is open. POST with the account's fields:
    the account, logged in."""
    if request.method == "GET":
        return render(request, "registration/researcher_join_start.html")
    token = invitations.token_from_pasted(request.POST.get("token", ""))
    choosing = any(name in request.POST for name in ("username", "password1", "password2"))
    form = ResearcherAccountForm(request.POST if choosing else None)
    try:
        if choosing:
            user = invitations.invitation_accept(token=token, form=form)
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(request, f"Welcome, {user.username}. Your researcher account is ready.")
            return redirect("research-home")
        invitations.open_invitation(token)
    except InvitationClosed as closed:
        status = 404 if closed.reason == "unknown" else 410
        return render(
            request, "registration/researcher_join_closed.html", {"message": str(closed)}, status=status
        )
    except InputError:
        pass  # the form has its errors; shown again below
    context = {"form": form, "token": token}
    return render(request, "registration/researcher_join.html", context, status=400 if form.errors else 200)


@never_cache
def researcher_join_old_link(request: HttpRequest, token: str) -> HttpResponse:
    """A link of the old form (the token in the path, so in that one request's log line):
    sent on to the join page with the token in the fragment, which stays out of every later
    request. No link of this form is made any more."""
    return redirect(f"{reverse('researcher-join')}#{token}")
