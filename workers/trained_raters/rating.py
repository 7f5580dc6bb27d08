"""``rate``: a saved trained rater answers the study's items it has not answered yet.

The rater is a model participant (``annotation.services.model_answers``) whose definition
is the saved ``definition.json``: kind ``trained``, the encoder it started from, its
training run as the version. On the study it was trained on it leaves out its training
items: its answers there are on held-out and new items only, so the reports' calibration
of the rater against the humans is never measured on what it learnt. Its answers go
through ``store_model_answers``: validated by the kind, stored by the one writer, raw
outputs kept, no slot taken; a rerun finds nothing left to do. New items
(``edit_and_generate`` adding passages) are answered on the next run.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from annotation.errors import InputError
from annotation.models import Item, Study
from annotation.services.jobs import Progress, no_progress
from annotation.services.model_answers import (
    ModelAnswer,
    ModelAnswersResult,
    items_for_model,
    model_participant,
    store_model_answers,
)

from .model import load_rater_model, rater_outputs
from .questions import EVIDENCE_THRESHOLD, Question, QuestionError, study_questions

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


def rate_study(study: Study, rater: Path, *, progress: Progress = no_progress, batch: int = BATCH) -> dict:
    """Answer every item the rater has not answered; the job's summary."""
    definition = read_rater(rater)
    questions = rater_questions(study, definition)
    participant = model_participant(definition)
    learnt = training_items(study, Path(rater), definition)
    todo = list(items_for_model(study, participant))
    items = [item for item in todo if item.external_id not in learnt]
    models = {q.id: load_rater_model(Path(rater) / definition["questions"][q.id]) for q in questions}
    max_length = int(definition.get("max_length", 256))
    result = ModelAnswersResult()
    progress(0, len(items), f"rating {len(items)} items")
    for start in range(0, len(items), batch):
        chunk = items[start : start + batch]
        answers = _answers(questions, models, chunk, max_length)
        result += store_model_answers(study, participant, answers)
        progress(start + len(chunk), len(items), f"rated {start + len(chunk)} of {len(items)} items")
    return {
        "rater": participant.platform_worker_id,
        "items": len(items),
        "training_items_left_out": len(todo) - len(items),
        "created": result.created,
        "skipped": result.skipped,
        "unparseable": result.unparseable,
        "invalid": result.invalid,
        "errors": result.errors,
    }


def _answers(
    questions: list[Question], models: dict, items: list[Item], max_length: int
) -> list[ModelAnswer]:
    if questions[0].regression:
        return _ratings(questions, models, items, max_length)
    return _claim_answers(questions[0], models[questions[0].id], items, max_length)


def _ratings(
    questions: list[Question], models: dict, items: list[Item], max_length: int
) -> list[ModelAnswer]:
    """Likert: each question's rater rates the items the question applies to."""
    outputs: dict[int, dict[str, float]] = {item.pk: {} for item in items}
    for question in questions:
        asked = [item for item in items if question.applies_to(item)]
        tokenizer, model = models[question.id]
        values = rater_outputs(
            tokenizer, model, [question.pair(item) for item in asked], max_length=max_length
        )
        for item, value in zip(asked, values, strict=True):
            outputs[item.pk][question.id] = float(value)
    by_id = {q.id: q for q in questions}
    answers = []
    for item in items:
        raw = {key: round(value, 6) for key, value in outputs[item.pk].items()}
        ratings = {key: by_id[key].value_from_output(value) for key, value in outputs[item.pk].items()}
        answers.append(
            ModelAnswer(item, raw=json.dumps(raw), answer={"ratings": ratings}, details={"outputs": raw})
        )
    return answers


def _claim_answers(question: Question, model_pair, items: list[Item], max_length: int) -> list[ModelAnswer]:
    """The label from the whole passage; for supports or contradicts, the evidence sentences
    (``questions.py`` explains the rule). One batch for the passages, one for the sentences."""
    tokenizer, model = model_pair
    wholes = rater_outputs(tokenizer, model, [question.pair(item) for item in items], max_length=max_length)
    labels = [int(whole.argmax()) for whole in wholes]
    needs = [i for i, index in enumerate(labels) if question.labels[index] != "neutral"]
    pairs = [(s, items[i].payload["claim"]) for i in needs for s in items[i].payload["sentences"]]
    alone = rater_outputs(tokenizer, model, pairs, max_length=max_length)
    by_item, offset = {}, 0
    for i in needs:
        count = len(items[i].payload["sentences"])
        by_item[i], offset = alone[offset : offset + count, labels[i]], offset + count
    answers = []
    for i, (item, whole) in enumerate(zip(items, wholes, strict=True)):
        label = question.labels[labels[i]]
        details: dict = {"probabilities": _rounded(dict(zip(question.labels, whole.tolist(), strict=True)))}
        evidence: list[int] = []
        if i in by_item:
            chosen = by_item[i]
            evidence = [int(j) for j in np.flatnonzero(chosen >= EVIDENCE_THRESHOLD)] or [
                int(chosen.argmax())
            ]
            details["sentence_probabilities"] = [round(float(p), 6) for p in chosen]
        answer = {"label": label, "evidence": evidence}
        answers.append(
            ModelAnswer(item, raw=json.dumps({**answer, **details}), answer=answer, details=details)
        )
    return answers


def _rounded(values: dict) -> dict:
    return {key: round(float(value), 6) for key, value in values.items()}
