"""A likert study answered by three humans and two model raters, for the calibration
reports tests: one rater faithful to the humans (the rounded mean of their ratings), one
answering at random (seeded). Model answers go through ``store_model_answers``."""

from __future__ import annotations

import numpy as np

from annotation.models import Item, Participant, Study
from annotation.services.analysis.model_answers import ModelAnswer, model_participant, store_model_answers
from tests.factories import AnsweredResponseFactory, ItemFactory, StudyFactory

HUMANS = ("h1", "h2", "h3")
QUESTIONS = ("edit", "natural")
ITEMS = [f"case-{case}" for case in range(16)]
FAITHFUL = {"kind": "llm", "model": "/models/faithful-lm", "version": "survey-v1", "shots": 2}
RANDOM = {"kind": "llm", "model": "/models/random-lm", "version": "survey-v1", "seed": 11}


def human_ratings(items: list[str], seed: int = 3) -> dict[str, dict[str, dict[str, int]]]:
    """human → item → question → rating: a shared score per item, each human within a point."""
    rng = np.random.default_rng(seed)
    ratings: dict[str, dict[str, dict[str, int]]] = {h: {} for h in HUMANS}
    for item in items:
        base = {q: int(rng.integers(2, 7)) for q in QUESTIONS}
        for human in HUMANS:
            ratings[human][item] = {q: int(np.clip(base[q] + rng.integers(-1, 2), 1, 7)) for q in QUESTIONS}
    return ratings


def rater_ratings(humans: dict, items: list[str], seed: int = 11) -> dict[str, dict[str, dict[str, int]]]:
    """rater name → item → question → rating: the faithful one rounds the humans' mean, the
    random one draws uniformly from 1-7."""
    rng = np.random.default_rng(seed)
    faithful = {
        item: {q: int(np.floor(np.mean([humans[h][item][q] for h in HUMANS]) + 0.5)) for q in QUESTIONS}
        for item in items
    }
    random = {item: {q: int(rng.integers(1, 8)) for q in QUESTIONS} for item in items}
    return {"faithful": faithful, "random": random}


def rater_study(
    slug: str = "calibration", owner=None, items: list[str] = ITEMS
) -> tuple[Study, dict, dict[str, Participant]]:
    """The study, every rating (humans' and raters' by short name), the two raters."""
    questions = [{"id": q, "text": f"How {q} is it?", "passage": "main"} for q in QUESTIONS]
    study = StudyFactory(
        kind="likert", slug=slug, owner=owner, annotations_per_item=3, config={"questions": questions}
    )
    ItemFactory.from_specs(
        study,
        [
            {"external_id": item, "payload": {"new_fact": "f", "old_facts": [], "main_passage": "p"}}
            for item in items
        ],
    )
    ratings = human_ratings(items)
    AnsweredResponseFactory.from_specs(
        study,
        [
            {"participant": h, "item": item, "answer": {"ratings": ratings[h][item]}}
            for h in HUMANS
            for item in items
        ],
    )
    by_rater = rater_ratings(ratings, items)
    items = {item.external_id: item for item in Item.objects.filter(study=study)}
    raters = {"faithful": model_participant(FAITHFUL), "random": model_participant(RANDOM)}
    for short, participant in raters.items():
        answers = [
            ModelAnswer(items[item], raw=str(values), answer={"ratings": values})
            for item, values in by_rater[short].items()
        ]
        assert store_model_answers(study, participant, answers).created == len(items)
    return study, {**ratings, **by_rater}, raters
