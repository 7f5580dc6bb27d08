"""Signal receivers, connected by ``AnnotationConfig.ready``."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver

from annotation.participation.views.session import PARTICIPANT_KEY

from .game import participant_after_login


@receiver(user_logged_in, dispatch_uid="annotation.participant_after_login")
def remember_participant_after_login(sender, request, user, **kwargs) -> None:
    """After a login this browser plays as the account's participant; a guest who signs
    up or logs in for the first time keeps their history; one who logs in to an account
    that has played before has the guest rounds added to it, and is told so."""
    if request is None:
        return
    participant, merged = participant_after_login(
        user=user, session_participant_id=request.session.get(PARTICIPANT_KEY)
    )
    if merged.message():
        messages.info(request, merged.message(), fail_silently=True)
    if participant is not None:
        request.session[PARTICIPANT_KEY] = participant.pk
    else:  # a crowd participant's browser: the account plays as itself, not as them
        request.session.pop(PARTICIPANT_KEY, None)
