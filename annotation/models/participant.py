"""A participant, known by a pseudonymous public id."""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models


def new_public_id() -> str:
    """Twelve lowercase hex characters: unguessable and safe to show in exports."""
    return secrets.token_hex(6)


class Participant(models.Model):
    """Someone who annotates; crowd-platform ids are kept for payment, not for analysis."""

    class Source(models.TextChoices):
        ORGANIC = "organic", "Organic (volunteer)"
        PROLIFIC = "prolific", "Prolific"
        MTURK = "mturk", "Mechanical Turk"
        LAB = "lab", "Lab"
        EXPERT = "expert", "Expert"
        MODEL = "model", "Model (LLM simulator or automatic rater)"
        ADJUDICATOR = "adjudicator", "Adjudicator (a researcher's final answer on a disagreement)"

    public_id = models.CharField(max_length=24, unique=True, default=new_public_id, editable=False)
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.ORGANIC)
    platform_worker_id = models.CharField(
        max_length=200, blank=True, help_text="PROLIFIC_PID / workerId / an imported id."
    )
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="participant"
    )
    definition = models.JSONField(
        default=dict,
        db_default={},  # rows written with COPY (bench, bulk tools) need no value for it
        blank=True,
        help_text="A model participant's recorded definition: kind, model, version, prompt or training run.",
    )
    # The only site-wide mark, an admin's act; a flag belongs to one study (Enrollment.flagged).
    blocked = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["source", "platform_worker_id"],
                condition=~models.Q(platform_worker_id=""),
                name="participant_unique_platform_worker",
            ),
        ]

    def __str__(self) -> str:
        return self.public_id
