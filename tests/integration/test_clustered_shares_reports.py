"""Shares and the tests of choice and pick questions that respect items and participants,
end to end on PostgreSQL through ``manage.py computereports``: a questionnaire study (a
choice question, a multi question, a pairwise pick) and a RoFT game whose items differ a
lot. Each share's interval is the cluster-robust one (statsmodels' standard error, items
× participants), wider than one that takes answers as independent; the test of system ×
answer is statsmodels' cluster-robust Wald statistic with its permutation p (28 items); the
pick's win test is statsmodels' cluster-robust t."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from annotation.models import Participant
from annotation.services.authoring.answer_imports import import_responses
from annotation.services.authoring.studies import load_study_file
from tests.factories import AnsweredResponseFactory, ItemFactory, StudyFactory
from tests.helpers.clustered_reference import cluster_se, permutation_p, wald_reference, win_rate_t
from tests.helpers.reports import computereports_json, report_row

pytestmark = pytest.mark.django_db
ITEMS = 14  # per system
RATERS = [f"r{k}" for k in range(8)]
TWO_WAYS = "cluster-robust t (items x participants)"


def _answers():
    """(rater, item, system, verdict, flaws, pick): each item answered by 4 of 8 raters;
    every item leans hard to one verdict, one flaw and one passage (systems equal)."""
    rng = np.random.default_rng(21)
    out = []
    for system in ("A", "B"):
        for n in range(ITEMS):
            lean, flaw, prefer = rng.random(), rng.random(), rng.random()
            for rater in rng.choice(len(RATERS), 4, replace=False):
                verdict = "yes" if rng.random() < lean else "no"
                flaws = ["facts"] if rng.random() < flaw else []
                pick = "a" if rng.random() < prefer else "b"
                out.append((RATERS[rater], f"{system}{n}", system, verdict, flaws, pick))
    return out


def _study() -> dict:
    questions = [
        {"id": "verdict", "type": "choice", "options": ["yes", "no"], "text": "Good?"},
        {
            "id": "flaws",
            "type": "multi",
            "options": ["grammar", "facts"],
            "text": "Flaws?",
            "required": False,
        },
        {"id": "better", "type": "pick", "pick": "pairwise", "text": "Better?"},
    ]
    items = [
        {
            "external_id": f"{system}{n}",
            "provenance": {"system": system},
            "payload": {
                "passages": [
                    {"id": "a", "text": "One.", "system": "x"},
                    {"id": "b", "text": "Two.", "system": "y"},
                ]
            },
        }
        for system in ("A", "B")
        for n in range(ITEMS)
    ]
    return {
        "slug": "clustered-shares",
        "title": "shares",
        "kind": "questionnaire",
        "status": "live",
        "annotations_per_item": 4,
        "config": {"questions": questions},
        "items": items,
    }


def _half_width_between(found: dict, se: float, items: int, raters: int) -> None:
    """The interval is mean ± t·se with statsmodels' two-way se and Satterthwaite's degrees
    of freedom, between min(G) − 1 and max(G) − 1."""
    half = (found["ci_high"] - found["ci_low"]) / 2
    assert stats.t.ppf(0.975, items - 1) * se - 1e-9 <= half <= stats.t.ppf(0.975, raters - 1) * se + 1e-9


def test_questionnaire_shares_and_tests_are_clustered_by_item_and_participant():
    answers = _answers()
    study = load_study_file(_study()).study
    lines = [
        json.dumps({"participant": who, "item": item, "answer": {"verdict": v, "flaws": f, "better": p}})
        for who, item, _, v, f, p in answers
    ]
    import_responses(study, lines, source=Participant.Source.LAB)
    rows = computereports_json(study)

    for system in ("A", "B"):
        mine = [a for a in answers if a[2] == system]
        hit = np.array([a[3] == "yes" for a in mine], dtype=float)
        found = report_row(rows, "questionnaire.share", question="verdict", system=system, option="yes")
        assert found["value"] == pytest.approx(hit.mean())
        assert found["details"]["ci_method"] == TWO_WAYS
        items, raters = np.array([a[1] for a in mine]), np.array([a[0] for a in mine])
        _half_width_between(found, cluster_se(hit, items, raters), ITEMS, len(set(raters)))
        naive = 2 * 1.96 * hit.std(ddof=1) / np.sqrt(hit.size)
        assert found["ci_high"] - found["ci_low"] > 1.3 * naive
        assert 0.0 <= found["ci_low"] <= found["ci_high"] <= 1.0

    # system × verdict: statsmodels' Wald statistic clustered by item; 28 items, so the p is
    # the permutation p (items' systems shuffled), here by 2000 relabellings in a direct loop
    test = report_row(rows, "questionnaire.chi_square", question="verdict")
    verdicts = ([a[3] for a in answers], [a[2] for a in answers], [a[1] for a in answers])
    wald, _ = wald_reference(*verdicts)
    assert test["details"]["wald"] == pytest.approx(wald)
    assert test["value"] == pytest.approx(permutation_p(*verdicts, draws=2000), abs=0.04)
    old = stats.chi2_contingency(
        [[sum(a[2] == s and a[3] == v for a in answers) for v in ("no", "yes")] for s in ("A", "B")],
        correction=False,
    ).pvalue
    assert test["value"] != pytest.approx(old)
    facts = report_row(rows, "questionnaire.chi_square", question="flaws", option="facts")
    chosen = ["yes" if a[4] else "no" for a in answers]
    assert facts["value"] == pytest.approx(
        permutation_p(chosen, [a[2] for a in answers], [a[1] for a in answers], draws=2000), abs=0.04
    )

    # the pick: x over y, clustered by item and rater
    wins = report_row(rows, "questionnaire.wins", question="better", system="x", over="y")
    won = np.array([a[5] == "a" for a in answers], dtype=float)
    t = win_rate_t(won, np.array([a[1] for a in answers]), np.array([a[0] for a in answers]))
    assert wins["value"] == won.sum() and wins["n"] == won.size
    assert wins["details"]["statistic"] == pytest.approx(t)
    assert wins["details"]["p_value"] == pytest.approx(2 * stats.t.sf(abs(t), wins["details"]["df"]))
    picked = report_row(rows, "questionnaire.picked", question="better", system="x")
    assert picked["details"]["ci_method"] == TWO_WAYS


def test_the_game_s_means_and_rates_are_clustered_by_passage_and_player():
    rng = np.random.default_rng(22)
    study = StudyFactory(kind="boundary", slug="clustered-game", annotations_per_item=4)
    passages = 12
    boundaries = rng.integers(2, 9, passages)
    ItemFactory.from_specs(
        study,
        [
            {
                "external_id": f"g{n}",
                "payload": {
                    "sentences": [f"S{i}." for i in range(10)],
                    "boundary": int(b),
                    "category": "news",
                },
                "provenance": {"system": "gpt2", "source_id": f"g{n}"},
            }
            for n, b in enumerate(boundaries)
        ],
    )
    guesses, specs = [], []
    for n, b in enumerate(boundaries):
        hard = rng.random() < 0.5  # half the passages fool everyone
        for player in rng.choice(len(RATERS), 4, replace=False):
            guess = int(min(9, b + rng.integers(2, 5))) if hard else int(b)
            score = 0 if guess < b else max(0, 5 - (guess - int(b)))
            guesses.append((RATERS[player], f"g{n}", bool(guess == b), score))
            specs.append(
                {
                    "participant": RATERS[player],
                    "item": f"g{n}",
                    "answer": {"guess": guess},
                    "points": score,
                    "correct": bool(guess == b),
                }
            )
    AnsweredResponseFactory.from_specs(study, specs)
    rows = computereports_json(study)
    exact = np.array([g[2] for g in guesses], dtype=float)
    found = report_row(rows, "boundary.exact_rate")
    assert found["value"] == pytest.approx(exact.mean())
    assert found["details"]["ci_method"] == TWO_WAYS
    items, players = np.array([g[1] for g in guesses]), np.array([g[0] for g in guesses])
    _half_width_between(found, cluster_se(exact, items, players), passages, len(set(players)))
    points = report_row(rows, "boundary.mean_points")
    assert points["details"]["ci_method"] == TWO_WAYS
    assert points["ci_low"] >= 0.0 and points["ci_high"] <= 5.0
