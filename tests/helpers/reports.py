"""Studies with known answers for the reports tests (and the dashboard and worker tests
that show those reports): the RoFT game, a likert survey, a simulation study."""

import json
from io import StringIO

import numpy as np
from django.core.management import call_command

from tests.factories import AnsweredResponseFactory, ItemFactory, StudyFactory

GAME = [  # player, item, guess; items: (boundary, p, category, model)
    ("ann", "A", 3),
    ("bob", "A", 5),
    ("cat", "A", 2),
    ("ann", "B", 10),
    ("bob", "B", 6),
    ("cat", "B", 6),
    ("ann", "C", 10),
    ("bob", "C", 4),
    ("dan", "D", 9),
]
PASSAGES = {
    "A": (3, 0.4, "news", "gpt2-xl"),
    "B": (6, 0.9, "stories", "gpt2-xl"),
    "C": (10, 0.4, "news", "ctrl"),
    "D": (2, 0.9, "news", "ctrl"),
}


def points(guess: int, boundary: int) -> int:
    return 0 if guess < boundary else max(0, 5 - (guess - boundary))


def game_study(slug="roft", **fields):
    study = StudyFactory(kind="boundary", slug=slug, annotations_per_item=3, **fields)
    ItemFactory.from_specs(
        study,
        [
            {
                "external_id": name,
                "payload": {
                    "sentences": [f"S{i}." for i in range(10)],
                    "boundary": b,
                    "category": c,
                    "model": m,
                    "p": p,
                },
                "provenance": {"system": m, "source_id": name},
            }
            for name, (b, p, c, m) in PASSAGES.items()
        ]
        + [
            {
                "external_id": "check",
                "attention_check": True,
                "payload": {"sentences": ["H."] * 10, "boundary": 10, "category": "news"},
            }
        ],
    )
    order: dict[str, int] = {}
    rows = []
    for player, item, guess in GAME:
        boundary = PASSAGES[item][0]
        order[player] = order.get(player, 0) + 1
        rows.append(
            {
                "participant": player,
                "item": item,
                "answer": {
                    "guess": guess,
                    "reason": "The topic drifts.",
                    "reason_categories": ["irrelevant"],
                },
                "points": points(guess, boundary),
                "correct": guess == boundary,
                "score_details": {"order": order[player], "distance": guess - boundary},
                "seconds": 10.0 * order[player],
            }
        )
    AnsweredResponseFactory.from_specs(study, rows)
    return study


def likert_study():
    study = StudyFactory(
        kind="likert",
        slug="leme",
        config={
            "questions": [
                {"id": "edit", "text": "…", "passage": "main"},
                {"id": "natural", "text": "…", "passage": "main"},
            ]
        },
    )
    rng = np.random.default_rng(5)
    cases = 12
    ItemFactory.from_specs(
        study,
        [
            {
                "external_id": f"{system}-{case}",
                "payload": {"new_fact": "f", "old_facts": [], "main_passage": "p"},
                "provenance": {"system": system, "source_id": f"case{case}"},
            }
            for system in ("ROME", "FT")
            for case in range(cases)
        ],
    )
    rows = []
    for case in range(cases):
        for rater in range(3):
            base = int(rng.integers(3, 6))
            rows.append(
                {
                    "participant": f"r{rater}",
                    "item": f"ROME-{case}",
                    "answer": {"ratings": {"edit": min(7, base + 2), "natural": base}},
                }
            )
            rows.append(
                {
                    "participant": f"r{rater}",
                    "item": f"FT-{case}",
                    "answer": {"ratings": {"edit": base - 1 + rater % 2, "natural": base}},
                }
            )
    AnsweredResponseFactory.from_specs(study, rows)
    return study, rows


def simulation_study():
    study = StudyFactory(kind="simulation", slug="sim")
    questions = {
        "e1": ["Can pigs use chopsticks?", "Can cows use forks?", "Can sharks play chess?"],
        "e2": ["Is Paris in France?", "Is Paris in France today?", "Is Lyon in Spain?"],
    }
    ItemFactory.from_specs(
        study,
        [
            {
                "external_id": f"{e}-{k}",
                "payload": {
                    "variant": "yes_no",
                    "starter_question": "s",
                    "model_answer": "yes",
                    "model_explanation": "x",
                    "followup_question": text,
                    "model_followup_answer": "yes" if k < 2 else "no",
                    "explanation_id": e,
                },
                "provenance": {"system": "GPT-4" if e == "e1" else "GPT-3"},
            }
            for e, texts in questions.items()
            for k, text in enumerate(texts)
        ],
    )
    judgements = {
        "h1": {
            "e1-0": "yes",
            "e1-1": "yes",
            "e1-2": "not_helpful",
            "e2-0": "yes",
            "e2-1": "no",
            "e2-2": "no",
        },
        "h2": {
            "e1-0": "yes",
            "e1-1": "no",
            "e1-2": "not_helpful",
            "e2-0": "yes",
            "e2-1": "yes",
            "e2-2": "yes",
        },
        "gpt": {"e1-0": "yes", "e1-1": "yes", "e1-2": "no", "e2-0": "yes", "e2-1": "no", "e2-2": "no"},
    }
    rows = [
        {
            "participant": who,
            "item": item,
            "answer": {"choice": choice},
            "source": "model" if who == "gpt" else "lab",
        }
        for who, answers in judgements.items()
        for item, choice in answers.items()
    ]
    AnsweredResponseFactory.from_specs(study, rows)
    return study


def computereports_json(study, *options: str) -> list[dict]:
    """The study's report rows as ``computereports --json`` prints them."""
    out = StringIO()
    call_command("computereports", study.slug, "--json", *options, stdout=out)
    return json.loads(out.getvalue())


def report_row(rows: list[dict], metric: str, **group) -> dict:
    """The one row of ``metric`` whose group is exactly ``group``."""
    found = [r for r in rows if r["metric"] == metric and r["group"] == group]
    assert len(found) == 1, (metric, group, len(found))
    return found[0]


# A Likert study whose cases differ a lot (every answer to a case shares the case's own
# effect), three systems of which A is rated higher: the clustered intervals and the pair
# table (tests/integration/test_clustered_reports.py, tests/browser/test_pair_table.py).
CLUSTERED_SYSTEMS = ("A", "B", "C")
CLUSTERED_CASES = 16
CLUSTERED_RATERS = [f"r{k}" for k in range(8)]


def clustered_answers() -> list[tuple[str, int, str, int]]:
    """(rater, case, system, rating): each item rated by 3 of 8 raters; cases differ a lot
    (sd 1.3) against the raters' own noise (sd 0.5); A is rated one point higher."""
    rng = np.random.default_rng(12)
    case_effect = rng.normal(0, 1.3, CLUSTERED_CASES)
    shift = {"A": 1.0, "B": 0.0, "C": 0.0}
    out = []
    for case in range(CLUSTERED_CASES):
        for system in CLUSTERED_SYSTEMS:
            for rater in rng.choice(len(CLUSTERED_RATERS), 3, replace=False):
                latent = 4 + case_effect[case] + shift[system] + rng.normal(0, 0.5)
                out.append((CLUSTERED_RATERS[rater], case, system, int(np.clip(np.round(latent), 1, 7))))
    return out


def clustered_likert_study(slug: str = "clustered-likert", **fields):
    """The study with ``clustered_answers`` stored (reports not computed)."""
    study = StudyFactory(
        kind="likert",
        slug=slug,
        config={"questions": [{"id": "edit", "text": "…", "passage": "main"}]},
        **fields,
    )
    ItemFactory.from_specs(
        study,
        [
            {
                "external_id": f"{system}-{case}",
                "payload": {"new_fact": "f", "old_facts": [], "main_passage": "p"},
                "provenance": {"system": system, "source_id": f"case{case}"},
            }
            for system in CLUSTERED_SYSTEMS
            for case in range(CLUSTERED_CASES)
        ],
    )
    AnsweredResponseFactory.from_specs(
        study,
        [
            {"participant": who, "item": f"{system}-{case}", "answer": {"ratings": {"edit": value}}}
            for who, case, system, value in clustered_answers()
        ],
    )
    return study
