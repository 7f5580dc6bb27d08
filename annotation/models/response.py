"""A response: the validated answer to one assignment, with its score and timings."""

from __future__ import annotations

from django.db import models


class Response(models.Model):
    """Stored once per assignment (the one-to-one key makes a double submit harmless).

    Study, item and participant are repeated from the assignment so that reports and
    exports read responses with one query and no joins through assignments. The four
    columns have no single-column foreign keys in the database: on PostgreSQL one composite
    key, ``response_same_as_assignment`` (migration 0019), refers to the assignment's
    ``assignment_response_key`` with all four, so a response names an existing assignment
    and exactly its study, item and participant, and a submit's commit makes one key check
    instead of four (docs/architecture.md, "One key check per answer"). Deleting still
    cascades: Django's ``on_delete`` runs in Python.
    """

    assignment = models.OneToOneField(
        "annotation.Assignment", on_delete=models.CASCADE, related_name="response", db_constraint=False
    )
    study = models.ForeignKey(
        "annotation.Study", on_delete=models.CASCADE, related_name="responses", db_constraint=False
    )
    item = models.ForeignKey(
        "annotation.Item", on_delete=models.CASCADE, related_name="responses", db_constraint=False
    )
    participant = models.ForeignKey(
        "annotation.Participant", on_delete=models.CASCADE, related_name="responses", db_constraint=False
    )
    answer = models.JSONField()
    points = models.FloatField(null=True, blank=True)
    correct = models.BooleanField(null=True, blank=True)
    score_details = models.JSONField(default=dict, blank=True)
    display_order = models.JSONField(default=dict, blank=True)
    is_attention_check = models.BooleanField(default=False)
    flagged = models.BooleanField(
        default=False, help_text="The participant failed this study's attention checks."
    )
    shown_at = models.DateTimeField(null=True, blank=True)
    answered_at = models.DateTimeField()
    duration_seconds = models.FloatField(null=True, blank=True)
    too_fast = models.BooleanField(
        default=False,
        help_text="Answered faster than the study's minimum seconds per page (kept, not rejected).",
    )
    imported = models.BooleanField(default=False)
    incomplete = models.BooleanField(
        default=False,
        db_default=False,  # rows written with COPY (bench, bulk tools) need no value for it
        help_text="Imported with a part missing (importresponses --allow-incomplete); "
        "left out of the figures that need that part.",
    )
    authenticity = models.JSONField(
        null=True,
        blank=True,
        help_text="How the answer's free text got into its fields (counts only, never the text; "
        "docs/authenticity.md); null where none were recorded.",
    )
    strong_sign = models.BooleanField(
        default=False,
        db_default=False,
        help_text="The authenticity signals show a strong sign the text was not typed on the page; "
        "left out of the reports' authentic population.",
    )
    study_version = models.PositiveIntegerField(
        null=True,
        blank=True,
        help_text="The study's version (``StudyVersion.number``) the answer was given under; "
        "empty: given before the study's versions were recorded.",
    )

    class Meta:
        indexes = [
            models.Index(fields=["study", "answered_at"]),
            models.Index(fields=["study", "item"]),
            models.Index(fields=["study", "participant"]),
            # A study's responses in id order without a sort (exports stream them so).
            models.Index(fields=["study", "id"], name="response_study_id_order"),
        ]
        ordering = ["id"]

    def __str__(self) -> str:
        return f"response {self.pk} to {self.item_id}"
