"""An assignment: an item handed to a participant, held until answered or expired."""

from __future__ import annotations

from django.db import models


class Assignment(models.Model):
    """One slot of an item's annotation budget, held by one participant.

    ``state`` is what the kind decided when it handed the item out (for example the
    display order of shuffled passages); it is recorded so the page can be rebuilt and
    the analysis can recover what was shown.
    """

    class Status(models.TextChoices):
        ASSIGNED = "assigned", "Assigned"
        ANSWERED = "answered", "Answered"
        EXPIRED = "expired", "Expired"
        RELEASED = "released", "Released"

    # No index of its own: ``(study, status, expires_at)`` starts with it. With one, the
    # sweep of a study's expired pages (each newcomer's ``study_is_full``) read every page of
    # the study through it whenever the statistics were older than the study's pages.
    # Study and item have no single-column foreign keys in the database: on PostgreSQL one
    # composite key, ``assignment_same_study_as_item`` (migration 0021), refers to the item's
    # ``item_assignment_key`` with both, so a page names an existing item of its own study
    # (the item's key to its study keeps the study), and a page handed out makes one key
    # check for the two instead of two (docs/architecture.md, "One key check per answer").
    # Deleting still cascades: Django's ``on_delete`` runs in Python.
    study = models.ForeignKey(
        "annotation.Study",
        on_delete=models.CASCADE,
        related_name="assignments",
        db_index=False,
        db_constraint=False,
    )
    item = models.ForeignKey(
        "annotation.Item", on_delete=models.CASCADE, related_name="assignments", db_constraint=False
    )
    # No index of its own: the two unique constraints below start with it. The item pick's
    # "had it before" look-up (participant and item) then finds nothing in one step, where
    # the planner took a participant index and filtered each of their pages.
    participant = models.ForeignKey(
        "annotation.Participant", on_delete=models.CASCADE, related_name="assignments", db_index=False
    )
    position = models.PositiveIntegerField(help_text="1-based place in the participant's sequence.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ASSIGNED)
    state = models.JSONField(default=dict, blank=True)
    attempt = models.PositiveSmallIntegerField(
        default=1, help_text="The exam attempt this page belongs to; always 1 outside exams."
    )
    assigned_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    shown_at = models.DateTimeField(null=True, blank=True)
    answered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["participant", "item", "attempt"], name="assignment_once_per_item_attempt"
            ),
            models.UniqueConstraint(
                fields=["participant", "study", "position"], name="assignment_unique_position"
            ),
            # What a response's composite key refers to (models.response): its id with the
            # study, item and participant a response copies.
            models.UniqueConstraint(
                fields=["item", "participant", "study", "id"], name="assignment_response_key"
            ),
        ]
        indexes = [
            models.Index(fields=["item", "status"]),
            models.Index(fields=["study", "status", "expires_at"]),
            # A participant's live page in a study, the newest first (services.participation.assignment's
            # resume, below their newest page when that one is not live): one entry or none,
            # however many pages they answered. The participant
            # in the condition keeps it to look-ups that name one (their ``participant_id =``
            # implies it): PostgreSQL cannot use it for a study's sweep of expired pages,
            # which it once read whole instead of (study, status, expires_at), with each
            # dead entry (every page handed out since a transaction elsewhere on the server
            # took its snapshot) read again by every arrival.
            models.Index(
                fields=["participant", "study", "position"],
                condition=models.Q(status="assigned", participant__isnull=False),
                name="assignment_live_page",
            ),
        ]
        ordering = ["participant", "study", "position"]

    def __str__(self) -> str:
        return f"{self.participant} #{self.position} {self.item}"
