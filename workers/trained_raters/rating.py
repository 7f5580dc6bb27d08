"""``rate``: a saved trained rater answers the study's items it has not answered yet.

The rater is a model participant (``annotation.services.analysis.model_answers``) whose definition
is the saved ``definition.json``: kind ``trained``, the encoder it started from, its
training run as the version. On the study it was trained on it leaves out its training
items: its answers there are on held-out and new items only, so the reports' calibration
of the rater against the humans is never measured on what it learnt. It answers through
``workers.raters.run.answer_as_model``, as the LLM raters do: validated by the kind, stored
by the one writer, raw outputs kept, no slot taken; a rerun finds nothing left to do. New items
(``edit_and_generate`` adding passages) are answered on the next run.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from annotation.errors import InputError
from annotation.kinds.base import RaterAnswer, RaterQuestion
from annotation.models import Item, Study
from annotation.services.analysis.model_answers import ModelAnswer

from .model import load_rater_model, rater_outputs
from .questions import Question, QuestionError, study_questions

BATCH = 64  # items per stored batch (one transaction, one progress step)


def read_rater(directory: Path) -> dict:
    """The definition a rater directory holds; ``InputError`` on ``rater`` when it is not one."""
    path = Path(directory) / "definition.json"
    try:
        definition = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise InputError({"rater": [f"{directory} is not a trained rater directory ({exc})."]}) from None
    if not isinstance(definition, dict) or definition.get("kind") != "trained":
        raise InputError({"rater": [f"{path} does not define a trained rater."]})
    return definition


def rater_questions(study: Study, definition: dict) -> list[Question]:
    """The study's questions, each of which this rater must answer (``InputError`` when it
    was trained for another kind or misses a question the study asks)."""
    try:
        questions = study_questions(study)
    except QuestionError as exc:
        raise InputError({exc.field: [str(exc)]}) from None
    if definition.get("study_kind") != study.kind:
        raise InputError(
            {"rater": [f"The rater answers {definition.get('study_kind')} studies, not {study.kind}."]}
        )
    missing = [q.id for q in questions if q.id not in definition.get("questions", {})]
    if missing:
        raise InputError(
            {
                "rater": [
                    f"The rater has no model for {', '.join(missing)}: "
                    "train one for every question (leave out --question)."
                ]
            }
        )
    return questions


def training_items(study: Study, rater: Path, definition: dict) -> set[str]:
    """The items the rater learnt from, when ``study`` is the study it was trained on: it
    does not answer them, so that every answer it stores (and every figure the reports
    compute from them) is on an item it never saw."""
    if definition.get("study") != study.slug:
        return set()
    try:
        return set(json.loads((rater / "split.json").read_text())["train"])
    except (OSError, ValueError, KeyError) as exc:
        raise InputError({"rater": [f"{rater} has no readable split.json ({exc})."]}) from None


@dataclass
class TrainedRater:
    """A saved trained rater as ``workers.raters.run.answer_as_model`` runs it; its models
    are loaded on the first batch, so a run with nothing left to do loads nothing."""

    directory: Path
    definition: dict
    questions: list[Question]
    models: dict[str, Any] = field(default_factory=dict, repr=False)  # question id → (tokenizer, model)

    def leaves_out(self, study: Study) -> set[str]:
        return training_items(study, self.directory, self.definition)

    def answer(self, study: Study, items: Sequence[Item]) -> list[ModelAnswer]:
        if not self.models:
            self.models = {
                q.id: load_rater_model(self.directory / self.definition["questions"][q.id])
                for q in self.questions
            }
        max_length = int(self.definition.get("max_length", 256))
        return _answers(self.questions, self.models, list(items), max_length)


def trained_rater(study: Study, directory: Path) -> TrainedRater:
    """The rater saved in ``directory``, checked against ``study`` (``InputError`` on ``rater``
    when it is not a rater, or was trained for another kind or for fewer questions)."""
    definition = read_rater(directory)
    return TrainedRater(Path(directory), definition, rater_questions(study, definition))


def _answers(
    questions: list[Question], models: dict, items: list[Item], max_length: int
) -> list[ModelAnswer]:
    given = kind_answers(questions, models, items, max_length)
    return [
        ModelAnswer(item, raw=json.dumps(one.raw), answer=one.answer, details=one.details)
        for item, one in zip(items, given, strict=True)
    ]


def kind_answers(
    questions: list[Question], models: dict, items: list[Item], max_length: int
) -> list[RaterAnswer]:
    """The kind turns its raters' outputs into its answers (``TaskKind.rater_answers``): the
    one rule for what a rater answers, when it rates and on the held-out items in training."""

    def read(spec: RaterQuestion, pairs: list[tuple[str, str]]) -> Sequence[Any]:
        tokenizer, model = models[spec.id]
        outputs: np.ndarray = rater_outputs(tokenizer, model, pairs, max_length=max_length)
        return list(outputs)

    kind = questions[0].task_kind
    return kind.rater_answers([q.spec for q in questions], items, read)
