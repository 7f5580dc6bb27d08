"""The records of the counterfactual-simulatability jobs (seed 001, steps 1–2).

``ModelExplanation``: one model's answer and explanation to one question in one mode,
with the raw text kept and unparseable outputs recorded as such. ``FollowUp``: one
follow-up a generator wrote for an explanation, its duplicate status, and the explaining
model's own answer to it (the simulation's truth: it goes into the item's payload, which
the page never shows). Unique keys make a rerun add nothing.
"""

from __future__ import annotations

from django.db import models


class ModelExplanation(models.Model):
    class Mode(models.TextChoices):
        COT = "cot", "Chain of thought (reasoning, then the answer)"
        POSTHOC = "posthoc", "Post-hoc (the answer, then why)"

    question_id = models.CharField(max_length=80)
    question_digest = models.CharField(max_length=64, help_text="sha256 of the question's content.")
    question = models.JSONField(help_text="The question as the file gave it (normalised).")
    variant = models.CharField(max_length=10, help_text="yes_no or pairwise")
    model = models.CharField(max_length=300, help_text="The explaining model, as named to the job.")
    mode = models.CharField(max_length=10, choices=Mode.choices)
    prompt_version = models.CharField(max_length=100)
    raw_text = models.TextField(help_text="The model's output as generated.")
    answer = models.CharField(max_length=20, blank=True, help_text="Empty when unparseable.")
    explanation = models.TextField(blank=True)
    problem = models.CharField(max_length=100, blank=True, help_text="Why the output was unparseable.")
    decoding = models.JSONField(default=dict)
    seed = models.BigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["question_digest", "model", "mode", "prompt_version"], name="explanation_once"
            )
        ]

    def __str__(self) -> str:
        return f"{self.question_id} / {self.model} / {self.mode}"

    @property
    def parsed(self) -> bool:
        return bool(self.answer)


class FollowUp(models.Model):
    class Status(models.TextChoices):
        KEPT = "kept", "Kept"
        DUPLICATE = "duplicate", "Duplicate (same normalised text)"
        NEAR_DUPLICATE = "near_duplicate", "Near-duplicate (cosine at or above the threshold)"
        UNPARSEABLE = "unparseable", "Unparseable"
        PENDING = "pending", "Not checked for duplicates yet"

    class AnswerStatus(models.TextChoices):
        PENDING = "pending", "Not answered yet"
        PARSED = "parsed", "Answered"
        UNPARSEABLE = "unparseable", "Unparseable answer"

    explanation = models.ForeignKey(ModelExplanation, on_delete=models.CASCADE, related_name="followups")
    generator = models.CharField(max_length=300)
    index = models.PositiveIntegerField(help_text="The generator's n-th follow-up for this explanation.")
    prompt_version = models.CharField(max_length=100)
    raw_text = models.TextField()
    content = models.JSONField(default=dict, help_text='{"question"} or {"context", "responses"}')
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    duplicate_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL)
    similarity = models.FloatField(null=True, blank=True, help_text="Highest cosine to a kept one before it.")
    decoding = models.JSONField(default=dict)
    seed = models.BigIntegerField()
    model_answer = models.CharField(max_length=20, blank=True, help_text="The explaining model's answer.")
    answer_status = models.CharField(
        max_length=20, choices=AnswerStatus.choices, default=AnswerStatus.PENDING
    )
    answer_raw = models.TextField(blank=True)
    answer_problem = models.CharField(max_length=100, blank=True)
    answer_decoding = models.JSONField(default=dict)
    answer_seed = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["explanation", "generator", "index"], name="followup_once")
        ]

    def __str__(self) -> str:
        return f"{self.explanation} / {self.generator} #{self.index}"
