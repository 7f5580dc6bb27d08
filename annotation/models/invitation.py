"""A one-time link that lets someone create a researcher account."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ResearcherInvitation(models.Model):
    """An invitation a staff member made: whoever opens its link before ``expires_at`` may
    create one account, which joins the researchers group (``services/authoring/invitations.py``).

    Only the token's SHA-256 is stored, so neither the database nor the admin can show the
    link again: the inviter sees it once, when it is made. ``accepted_at`` set means used."""

    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    email = models.EmailField(
        blank=True, help_text="Whom the invitation is for (optional); the new account gets this address."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"invitation {self.pk} ({self.email or 'no e-mail'})"
