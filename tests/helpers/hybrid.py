"""A Likert study of two systems whose humans answered a subset of the items and whose
judge (a model participant) answered every item, half a point above the humans: the hybrid
reports' and plan's tests."""

from __future__ import annotations

import numpy as np

from annotation.models import Item
from annotation.services.analysis.model_answers import ModelAnswer, model_participant, store_model_answers
from tests.factories import AnsweredResponseFactory, ItemFactory, StudyFactory

JUDGE = {"kind": "llm", "model": "/models/judge-lm", "version": "hybrid-v1"}
ITEMS = 40
HUMAN_ITEMS = 14


def hybrid_study(owner):
    rng = np.random.default_rng(38)
    study = StudyFactory(
        kind="likert",
        slug="hybrid",
        owner=owner,
        annotations_per_item=2,
        config={"questions": [{"id": "fluent", "text": "How fluent is it?", "passage": "main"}]},
    )
    payload = {"new_fact": "f", "old_facts": [], "main_passage": "p"}
    specs = [
        {
            "external_id": f"i{k}",
            "payload": payload,
            "provenance": {"system": "AB"[k % 2], "source_id": f"c{k}"},
        }
        for k in range(ITEMS)
    ]
    ItemFactory.from_specs(study, specs)
    quality = np.clip(np.round(4 + rng.normal(0, 1.2, ITEMS)), 1, 6).astype(int)
    AnsweredResponseFactory.from_specs(
        study,
        [
            {
                "participant": f"h{(k + j) % 5}",
                "item": f"i{k}",
                "answer": {"ratings": {"fluent": int(quality[k] + j)}},
            }
            for j in (0, 1)
            for k in range(HUMAN_ITEMS)
        ],
    )
    items = {item.external_id: item for item in Item.objects.filter(study=study)}
    judge = model_participant(JUDGE)
    slip = np.tile([0, -1, 0, 1], ITEMS // 4)  # the judge is off by a point on half the items
    answers = [
        ModelAnswer(
            items[f"i{k}"], raw="", answer={"ratings": {"fluent": int(min(7, quality[k] + 1 + slip[k]))}}
        )
        for k in range(ITEMS)
    ]
    assert store_model_answers(study, judge, answers).created == ITEMS
    return study, judge
