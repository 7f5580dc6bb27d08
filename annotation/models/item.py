"""An item: one unit of work in a study (a passage, a page of passages, a question)."""

from __future__ import annotations

from django.db import models
from django.db.models.functions import Random


class Item(models.Model):
    """One thing a participant annotates; its payload is validated by the study's kind.

    ``gold`` and whatever the kind marks as hidden in the payload never reach the
    browser before an answer: pages are built from the kind's ``page_context`` only.
    """

    study = models.ForeignKey("annotation.Study", on_delete=models.CASCADE, related_name="items")
    external_id = models.CharField(max_length=200)
    payload = models.JSONField()
    is_attention_check = models.BooleanField(default=False)
    gold = models.JSONField(null=True, blank=True)
    explanation = models.TextField(
        blank=True,
        help_text="Why the gold answer is right (Markdown): shown after a training exam's question.",
    )
    provenance = models.JSONField(
        default=dict, blank=True, help_text="system, model, method, decoding, seed, source_id."
    )
    slots_taken = models.PositiveIntegerField(
        default=0, editable=False, help_text="Live (assigned or answered) assignments; kept by the services."
    )
    shuffle_key = models.FloatField(
        db_default=Random(),
        editable=False,
        help_text="Random, fixed at creation: the item pick's order, read from an index.",
    )
    priority = models.FloatField(
        default=1.0,
        db_default=1.0,
        editable=False,
        help_text="Adaptive studies: how unsettled the item's answers are (0 settled, 1 unknown), "
        "written by the reports job and lowered by each page handed out (services.assignment).",
    )
    for_humans = models.BooleanField(
        default=True,
        db_default=True,
        editable=False,
        help_text="Whether people are asked to answer it: False for an item the study's human subset "
        "left to the model raters (services.authoring.human_subset).",
    )
    human_inclusion = models.FloatField(
        null=True,
        blank=True,
        editable=False,
        help_text="The probability the study's human subset gave it (logged for the reports' "
        "weights); empty without a human subset.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["study", "external_id"], name="item_unique_external_id"),
            # What an assignment's composite key refers to (models.assignment): its id with
            # the study an assignment copies.
            models.UniqueConstraint(fields=["id", "study"], name="item_assignment_key"),
        ]
        indexes = [
            # The item pick (services.participation.assignment): the least-filled open items in random order.
            models.Index(
                fields=["study", "is_attention_check", "slots_taken", "shuffle_key"], name="item_pick_order"
            ),
            # The adaptive pick: the least settled items first (``priority``, highest first).
            models.Index(
                fields=["study", "is_attention_check", "-priority", "shuffle_key"], name="item_adaptive_order"
            ),
        ]
        ordering = ["study", "id"]

    def __str__(self) -> str:
        return f"{self.study.slug}/{self.external_id}"


class AttentionCheck(Item):
    """Items marked as attention checks, managed on their own admin page."""

    class Meta:
        proxy = True
        verbose_name = "attention check"
