"""What a model participant wrote for an item: kept whether or not it became an answer."""

from __future__ import annotations

from django.db import models


class ModelOutput(models.Model):
    """A model participant's raw output for one item of a study.

    An output parsed into a valid answer points to its ``Response``; one that could not
    be parsed, or that the kind's validation refused, keeps the reason in ``error`` and
    has no response: it is counted, never guessed into an answer. One output per
    participant and item, so a rerun of the same rater adds nothing.
    """

    study = models.ForeignKey("annotation.Study", on_delete=models.CASCADE, related_name="model_outputs")
    item = models.ForeignKey("annotation.Item", on_delete=models.CASCADE, related_name="model_outputs")
    participant = models.ForeignKey(
        "annotation.Participant", on_delete=models.CASCADE, related_name="model_outputs"
    )
    raw = models.TextField(blank=True)
    details = models.JSONField(
        default=dict, blank=True, help_text="The scores over the allowed answers, the prompt's id…"
    )
    error = models.CharField(max_length=500, blank=True)
    response = models.OneToOneField(
        "annotation.Response", null=True, blank=True, on_delete=models.CASCADE, related_name="model_output"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["participant", "item"], name="model_output_once_per_item"),
        ]

    def __str__(self) -> str:
        return f"{self.participant_id} on {self.item_id}"
