"""Qualification exams: a gold-only study that participants must pass before another one."""

from __future__ import annotations

from django.core.validators import MinValueValidator
from django.db import models


class Exam(models.Model):
    """Marks a study as a qualification exam: its items (all with gold) are the questions.

    Studies that require the exam point to it (``Study.qualification``); one exam may
    qualify participants for several studies, and a pass counts for all of them. Each
    attempt asks every item of the exam study once, in the file's order; its answers are
    ordinary responses of the exam study whose assignments carry the attempt number.
    """

    study = models.OneToOneField("annotation.Study", on_delete=models.CASCADE, related_name="exam")
    pass_mark = models.PositiveIntegerField(
        validators=[MinValueValidator(1)], help_text="Correct answers needed in one attempt."
    )
    attempts_allowed = models.PositiveIntegerField(default=2, validators=[MinValueValidator(1)])
    training = models.BooleanField(
        default=False,
        help_text="After each question, show the right answer and its explanation (a training quiz).",
    )

    def __str__(self) -> str:
        return f"exam {self.study.slug}"


class ExamAttempt(models.Model):
    """One sitting of an exam by one participant, and its outcome once every item is answered."""

    class Status(models.TextChoices):
        STARTED = "started", "Started"
        PASSED = "passed", "Passed"
        FAILED = "failed", "Failed"

    exam = models.ForeignKey(Exam, on_delete=models.CASCADE, related_name="attempts")
    participant = models.ForeignKey(
        "annotation.Participant", on_delete=models.CASCADE, related_name="exam_attempts"
    )
    number = models.PositiveSmallIntegerField(help_text="1 for the first attempt.")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.STARTED)
    correct_count = models.PositiveIntegerField(null=True, blank=True)
    question_count = models.PositiveIntegerField(null=True, blank=True)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["exam", "participant", "number"], name="exam_attempt_unique"),
        ]
        ordering = ["exam", "participant", "number"]

    def __str__(self) -> str:
        return f"{self.participant} attempt {self.number} at {self.exam}"
