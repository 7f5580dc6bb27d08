"""What a trained rater learns: the kind's rater questions, bound to the kind.

A rater answers one *question* of a study: a rating learnt by regression or a label
learnt as classification. The kind says what the questions are, what text pair the
encoder reads for an item, which examples a person's answer gives and how the raters'
outputs become its answer (``TaskKind.rater_*``; the Likert and claim rules are written
in ``annotation/kinds/likert.py`` and ``claim.py``). No torch here: the examples are plain
text and numbers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from annotation.kinds import TaskKind, all_kinds
from annotation.kinds.base import NotAnswerableByModel, RaterQuestion
from annotation.models import Item, Response, Study


def supported_kinds() -> list[str]:
    """The kinds whose studies trained raters answer: those that implement the hooks."""
    return [name for name, kind in all_kinds().items() if kind.trained_raters]


class QuestionError(ValueError):
    """The study or question cannot have a trained rater (unsupported kind, unknown question)."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field


@dataclass(frozen=True)
class Example:
    item: str  # the item's external id: the unit of the split
    first: str
    second: str
    target: float | int  # a rating scaled to 0..1, or a label's index


@dataclass(frozen=True)
class Question:
    """One question a rater answers, with the kind that asks it."""

    spec: RaterQuestion
    task_kind: TaskKind

    @property
    def id(self) -> str:
        return self.spec.id

    @property
    def text(self) -> str:
        return self.spec.text

    @property
    def regression(self) -> bool:
        return self.spec.regression

    @property
    def level(self) -> str:
        return self.spec.level

    @property
    def labels(self) -> list:
        """The answers in order: the scale's points, or the labels."""
        return list(self.spec.labels)

    def applies_to(self, item: Item) -> bool:
        return self.task_kind.rater_pair(self.spec, item) is not None

    def human_value(self, answer: dict) -> Any:
        """The person's answer to this question (None when they gave none)."""
        return self.task_kind.rater_value(self.spec, answer)

    def examples(self, response: Response) -> list[Example]:
        """The training examples one human answer gives (none when it skipped the question)."""
        item = response.item
        return [
            Example(item.external_id, e.first, e.second, e.target)
            for e in self.task_kind.rater_examples(self.spec, item, response.answer)
        ]

    def pair(self, item: Item) -> tuple[str, str]:
        """What the rater reads to answer the item."""
        pair = self.task_kind.rater_pair(self.spec, item)
        if pair is None:
            raise ValueError(f"Question {self.id!r} does not apply to item {item.external_id!r}.")
        return pair

    def value_from_output(self, output: float) -> Any:
        """A regression output (0..1 scaled) as the nearest point of the scale."""
        return self.spec.value_from_output(output)


def study_questions(study: Study) -> list[Question]:
    """Every question of the study a trained rater can answer, in the study's order."""
    kind = study.task_kind
    if not kind.trained_raters:
        names = supported_kinds()
        listed = ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]
        raise QuestionError("study", f"Trained raters answer {listed} studies, not {study.kind!r} ones.")
    try:
        specs = kind.rater_questions(study.config)
    except NotAnswerableByModel as exc:
        raise QuestionError("study", str(exc)) from None
    return [Question(spec, kind) for spec in specs]


def chosen_questions(study: Study, question: str | None) -> list[Question]:
    """The question asked for (all of them when None); ``QuestionError`` naming it otherwise."""
    questions = study_questions(study)
    if question is None:
        return questions
    for candidate in questions:
        if candidate.id == question:
            return [candidate]
    known = ", ".join(q.id for q in questions)
    raise QuestionError("question", f"The study has no question {question!r}; its questions: {known}.")
