"""An adjudication: a researcher's final answer on an item the annotators disagreed on."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Adjudication(models.Model):
    """The note and the decider of an adjudicated answer.

    The answer itself is a ``Response`` of a participant whose source is ``adjudicator``
    (stored, validated and scored like any other answer, exported with the others); the
    annotators' responses are never changed. One adjudicated answer per item.
    """

    study = models.ForeignKey("annotation.Study", on_delete=models.CASCADE, related_name="adjudications")
    item = models.OneToOneField("annotation.Item", on_delete=models.CASCADE, related_name="adjudication")
    response = models.OneToOneField(
        "annotation.Response", on_delete=models.CASCADE, related_name="adjudication"
    )
    note = models.TextField(blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"adjudication of {self.item_id}"
