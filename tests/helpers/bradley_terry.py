"""Studies with answers drawn from known Bradley-Terry strengths, for the tests of the
strengths' intervals (tests/integration/test_bradley_terry_reports.py) and the dashboard's
table (tests/browser/test_bradley_terry_table.py). Each builder also returns the pairs it
implies, ``(first shown, second shown, outcome, item, participant)``, built by plain loops."""

from __future__ import annotations

import random

import numpy as np

from tests.factories import AnsweredResponseFactory, ItemFactory, StudyFactory

SYSTEMS = ["base", "ft", "rome"]
STRENGTH = {"base": -0.6, "ft": 0.0, "rome": 1.3}


def ranking_study(*, crossed: bool = True, **fields):
    """24 items of three systems, 4 answers each, MOST / LEAST from Gumbel utilities, the
    order shown shuffled per answer (``answer.shown``). ``crossed``: the same 4 participants
    answer every item (participants cross items); else every answer has its own participant."""
    study = StudyFactory(kind="ranking", slug="bt-ranking", config={"show": 3}, **fields)
    passages = [{"system": s, "text": f"{s} text"} for s in SYSTEMS]
    ItemFactory.from_specs(
        study, [{"external_id": f"c{i}", "payload": {"fact": "f", "passages": passages}} for i in range(24)]
    )
    rng = random.Random(3)
    specs, pairs = [], []
    for i in range(24):
        for who in ("ann", "bob", "cat", "dan"):
            shown = rng.sample(SYSTEMS, 3)
            utility = {s: STRENGTH[s] - np.log(-np.log(rng.random())) for s in shown}
            order = sorted(shown, key=utility.get, reverse=True)
            most, least = order[0], order[-1]
            choices = {c: {"most": most, "least": least} for c in ("consistency", "fluency")}
            rater = who if crossed else f"{who}{i}"
            specs.append(
                {"participant": rater, "item": f"c{i}", "answer": {"shown": shown, "choices": choices}}
            )
            rank = {most: 1, least: 3, order[1]: 2}
            for a in range(3):
                for b in range(a + 1, 3):
                    won = float(rank[shown[a]] < rank[shown[b]])
                    pairs.append((shown[a], shown[b], won, f"c{i}", rater))
    AnsweredResponseFactory.from_specs(study, specs)
    return study, pairs


def questionnaire_study(*, crossed: bool = True, **fields):
    """A pairwise pick with ties on 30 items of two passages (three systems), 5 answers each,
    the passages shown in the order recorded in ``display_order.order``. ``crossed``: the
    same 5 participants answer every item; else every answer has its own participant."""
    questions = [{"id": "better", "type": "pick", "pick": "pairwise", "tie": True, "text": "Better?"}]
    study = StudyFactory(kind="questionnaire", slug="bt-pick", config={"questions": questions}, **fields)
    rng = random.Random(5)
    items, specs, pairs = [], [], []
    for i in range(30):
        two = rng.sample(SYSTEMS, 2)
        items.append(
            {
                "external_id": f"q{i}",
                "payload": {
                    "passages": [{"id": f"p{n}", "text": "T.", "system": s} for n, s in enumerate(two)]
                },
            }
        )
        for who in ("ann", "bob", "cat", "dan", "eve"):
            order = rng.sample(["p0", "p1"], 2)
            first, second = (two[int(pid[1])] for pid in order)
            p_first = 1 / (1 + np.exp(-(STRENGTH[first] - STRENGTH[second] + 0.4)))  # a first-shown bias
            draw = rng.random()
            pick = "tie" if draw < 0.1 else order[0] if draw < 0.1 + 0.9 * p_first else order[1]
            outcome = 0.5 if pick == "tie" else float(pick == order[0])
            rater = who if crossed else f"{who}{i}"
            pairs.append((first, second, outcome, f"q{i}", rater))
            specs.append(
                {
                    "participant": rater,
                    "item": f"q{i}",
                    "answer": {"better": pick},
                    "display_order": {"order": order},
                }
            )
    ItemFactory.from_specs(study, items)
    AnsweredResponseFactory.from_specs(study, specs)
    return study, pairs
