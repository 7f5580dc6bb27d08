"""Researcher accounts: invitations by a one-time link, and the account an invitation or
``manage.py createresearcher`` makes.

An invitation's token is shown once, in the link its inviter copies; the table keeps only
its SHA-256, so a leaked database or an admin page reveals no usable link. The link carries
the token in its fragment (``/research/join/#<token>``), which browsers never send, and the
join page posts it: so it is in no access log, no ``Referer`` and no proxy's URL list. Opening the
link before it expires lets one person choose a username and password (Django's password
validators, the same check as ``createresearcher``); the account joins the researchers
group and the invitation is used up. A used, expired or unknown link creates nothing.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth.forms import UserCreationForm
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.validators import validate_email
from django.db import transaction
from django.utils import timezone

from annotation.errors import InputError
from annotation.models import ResearcherInvitation
from annotation.services.access import can_invite_researchers, forget_membership, researchers_group

INVITATION_LIFETIME = timedelta(days=7)
RECENT_INVITATIONS = 50


class ResearcherAccountForm(UserCreationForm):
    """A new researcher's username and password, typed twice: the one check of a new
    researcher account, on the invitation page and in ``createresearcher``. A password the
    validators refuse is reported on ``password1`` (Django's form puts it on the
    confirmation field, which misleads the person fixing it)."""

    def validate_password_for_user(
        self,
        user,
        password_field_name: str = "password1",  # noqa: S107 (a field's name, not a password)
    ) -> None:
        # django-stubs does not know this method yet (Django 5.1's SetPasswordMixin).
        super().validate_password_for_user(user, password_field_name=password_field_name)  # type: ignore[misc]


@dataclass(frozen=True)
class NewInvitation:
    """An invitation just made, with the token its link carries (never stored, never shown again)."""

    invitation: ResearcherInvitation
    token: str


class InvitationClosed(Exception):
    """The link cannot make an account: ``reason`` is ``unknown``, ``used`` or ``expired``."""

    MESSAGES = {
        "unknown": "This invitation link is not valid. Check that you copied the whole link.",
        "used": "This invitation link has already been used. Each link makes one account; "
        "ask the person who invited you for a new one.",
        "expired": "This invitation link has expired. Ask the person who invited you for a new one.",
    }

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(self.MESSAGES[reason])


def token_from_pasted(text: str) -> str:
    """The token in what an invitee pasted: the token alone, the whole link (the token after
    its ``#``) or a link of the old form (``/research/join/<token>/``)."""
    text = text.strip()
    if "#" in text:
        return text.rsplit("#", 1)[1].strip()
    if "/join/" in text:
        return text.rsplit("/join/", 1)[1].strip("/ ")
    return text


def token_hash(token: str) -> str:
    """What the table stores of a token."""
    return hashlib.sha256(token.encode()).hexdigest()


def invitation_create(
    *, created_by, email: str = "", lifetime: timedelta = INVITATION_LIFETIME
) -> NewInvitation:
    """A new invitation from a staff member, valid for ``lifetime``."""
    if not can_invite_researchers(created_by):
        raise PermissionDenied("Only staff invite researchers.")
    email = checked_email(email)
    token = secrets.token_urlsafe(32)
    invitation = ResearcherInvitation.objects.create(
        token_hash=token_hash(token),
        email=email,
        created_by=created_by,
        expires_at=timezone.now() + lifetime,
    )
    return NewInvitation(invitation=invitation, token=token)


def open_invitation(token: str, *, lock: bool = False) -> ResearcherInvitation:
    """The invitation a link's token names while it can still make an account, or
    ``InvitationClosed`` saying why not. ``lock`` holds its row until the transaction ends."""
    rows = ResearcherInvitation.objects.select_for_update() if lock else ResearcherInvitation.objects
    invitation = rows.filter(token_hash=token_hash(token)).first()
    if invitation is None:
        raise InvitationClosed("unknown")
    reason = closed_reason(invitation, timezone.now())
    if reason is not None:
        raise InvitationClosed(reason)
    return invitation


def recent_invitations() -> list[tuple[ResearcherInvitation, str | None]]:
    """The newest invitations for the staff page, each with why it is closed (None: open)."""
    now = timezone.now()
    rows = ResearcherInvitation.objects.select_related("created_by", "accepted_by")[:RECENT_INVITATIONS]
    return [(invitation, closed_reason(invitation, now)) for invitation in rows]


def closed_reason(invitation: ResearcherInvitation, now) -> str | None:
    """Why the invitation can no longer make an account (``used``, ``expired``), or None."""
    if invitation.accepted_at is not None:
        return "used"
    if invitation.expires_at <= now:
        return "expired"
    return None


def invitation_accept(*, token: str, form: ResearcherAccountForm):
    """The researcher account the invitation makes from the invitee's form, logged in by
    the caller. The invitation's row is locked first, so two people racing with one link get
    one account; a closed link or a refused form writes nothing."""
    with transaction.atomic():
        invitation = open_invitation(token, lock=True)
        user = researcher_account_create(form=form, email=invitation.email)
        used = ResearcherInvitation.objects.filter(pk=invitation.pk, accepted_at__isnull=True).update(
            accepted_at=timezone.now(), accepted_by=user
        )
        if used != 1:  # cannot happen under the lock; never hand out a second account
            raise InvitationClosed("used")
    return user


def researcher_account_create(*, form: ResearcherAccountForm, email: str = ""):
    """A new account from a checked ``ResearcherAccountForm``, in the researchers group.
    ``InputError`` (each message under its field) when the form refuses the input; the
    form keeps its errors for the page that shows it again."""
    email = checked_email(email)
    if not form.is_valid():
        raise InputError({field: [str(m) for m in messages] for field, messages in form.errors.items()})
    with transaction.atomic():
        user = form.save(commit=False)
        user.email = email
        user.save()
        researcher_join(user)
    return user


def checked_email(email: str) -> str:
    """An optional e-mail address, stripped; ``InputError`` on ``email`` when malformed."""
    email = email.strip()
    if email:
        try:
            validate_email(email)
        except ValidationError as exc:
            raise InputError({"email": list(exc.messages)}) from exc
    return email


def researcher_join(user) -> bool:
    """Add an account to the researchers group; False when it was already there."""
    group = researchers_group()
    if user.groups.filter(pk=group.pk).exists():
        return False
    user.groups.add(group)
    forget_membership(user)
    return True
