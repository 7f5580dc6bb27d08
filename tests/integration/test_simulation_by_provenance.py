"""Simulation reports grouped by the items' provenance keys the simulation pipeline writes
(``explainer``, ``mode``, ``generator``): precision and generality per value, humans and an
LLM simulator (a model participant of kind ``simulator``, answering through
``store_model_answers``) measured apart, and the human-human and human-simulator kappa.
On PostgreSQL through ``compute_study_reports`` (without the sentence encoder: loading it
would take longer than the rest; the cosine's grouping is the BLEU's and the Jaccard's);
every figure equals a hand computation."""

from __future__ import annotations

import itertools
from collections import defaultdict

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from annotation.models import Item
from annotation.services.analysis.model_answers import ModelAnswer, model_participant, store_model_answers
from scoring.models import Report
from scoring.services import compute_study_reports
from stats.similarity import jaccard_similarity, mean_pairwise_similarity
from tests.factories import AnsweredResponseFactory, ItemFactory, StudyFactory
from tests.helpers.reports import report_row

pytestmark = pytest.mark.django_db

EXPLAINERS, MODES, GENERATORS = ("big-lm", "small-lm"), ("cot", "posthoc"), ("gen-a", "gen-b")
QUESTIONS = ("pigs", "rivers")
WORDS = ("goats", "lakes", "tigers", "forests", "bridges", "comets", "violins", "deserts", "spiders")
SIMULATOR = {"kind": "simulator", "model": "/models/tiny-simulator", "version": "sim-v1", "seed": 4}
CHOICES = ("yes", "no", "not_helpful")


def _items() -> list[dict]:
    """One explanation per (question, explainer, mode); two follow-ups from each generator."""
    rng = np.random.default_rng(21)
    specs = []
    for question, explainer, mode in itertools.product(QUESTIONS, EXPLAINERS, MODES):
        explanation = f"{question}/{explainer}/{mode}"
        for generator, k in itertools.product(GENERATORS, range(2)):
            a, b = rng.choice(WORDS, size=2, replace=False)
            specs.append(
                {
                    "external_id": f"{explanation}/{generator}/{k}",
                    "payload": {
                        "variant": "yes_no",
                        "starter_question": f"Can {question} fly?",
                        "model_answer": "no",
                        "model_explanation": "Because of weight.",
                        "followup_question": f"Can {a} watch {b} near {question}?",
                        "model_followup_answer": str(rng.choice(("yes", "no"))),
                        "explanation_id": explanation,
                    },
                    "provenance": {"explainer": explainer, "mode": mode, "generator": generator},
                }
            )
    return specs


def _choices(seed: int, options=CHOICES) -> dict[str, str]:
    rng = np.random.default_rng(seed)
    return {spec["external_id"]: str(rng.choice(options)) for spec in _items()}


def _rows(study) -> list[dict]:
    compute_study_reports(study)
    return list(
        Report.objects.filter(study=study, population="all").values(
            "metric", "group", "value", "n", "details"
        )
    )


def _precision_by_hand(specs, judgements: list[dict[str, str]], key: str, value: str) -> tuple[float, int]:
    """Per explanation, the share of committed judgements equal to the model's answer on
    the value's follow-ups; the mean over explanations with one at least."""
    hits: defaultdict[str, list[bool]] = defaultdict(list)
    for spec in specs:
        if spec["provenance"][key] != value:
            continue
        for judgement in judgements:
            choice = judgement[spec["external_id"]]
            if choice != "not_helpful":
                hits[spec["payload"]["explanation_id"]].append(
                    choice == spec["payload"]["model_followup_answer"]
                )
    shares = [np.mean(h) for h in hits.values()]
    return float(np.mean(shares)), len(shares)


def _generality_by_hand(specs, humans: list[dict[str, str]], key: str, value: str) -> float:
    """Per explanation, the follow-ups of this value at least half the humans committed on;
    1 − their mean pairwise Jaccard similarity, averaged (explanations with two or more)."""
    texts: defaultdict[str, list[str]] = defaultdict(list)
    for spec in specs:
        committed = sum(h[spec["external_id"]] != "not_helpful" for h in humans)
        if spec["provenance"][key] == value and 2 * committed >= len(humans):
            texts[spec["payload"]["explanation_id"]].append(spec["payload"]["followup_question"])
    similarities = [mean_pairwise_similarity(t, jaccard_similarity) for t in texts.values() if len(t) > 1]
    return float(np.mean([1 - s for s in similarities]))


def test_precision_and_generality_by_explainer_mode_and_generator_and_the_simulator_kappa(
    django_user_model, client
):
    owner = django_user_model.objects.create_user("owner", password="pw", is_staff=True)
    study = StudyFactory(kind="simulation", slug="sim-provenance", annotations_per_item=2, owner=owner)
    specs = _items()
    ItemFactory.from_specs(study, specs)
    humans = {"h1": _choices(1), "h2": _choices(2)}
    AnsweredResponseFactory.from_specs(
        study,
        [
            {"participant": who, "item": item, "answer": {"choice": choice}}
            for who, answers in humans.items()
            for item, choice in answers.items()
        ],
    )
    simulator = model_participant(SIMULATOR)
    simulated = _choices(3, ("yes", "no", "yes", "not_helpful"))
    items = {item.external_id: item for item in Item.objects.filter(study=study)}
    answers = [ModelAnswer(items[i], raw=c, answer={"choice": c}) for i, c in simulated.items()]
    assert store_model_answers(study, simulator, answers).created == len(specs)
    rows = _rows(study)

    name = simulator.platform_worker_id
    for key, values in (("explainer", EXPLAINERS), ("mode", MODES), ("generator", GENERATORS)):
        for value in values:
            human = report_row(rows, "simulation.precision", **{key: value}, rater="human")
            assert (human["value"], human["n"]) == pytest.approx(
                _precision_by_hand(specs, list(humans.values()), key, value)
            )
            machine = report_row(rows, "simulation.precision", **{key: value}, rater=name)
            assert (machine["value"], machine["n"]) == pytest.approx(
                _precision_by_hand(specs, [simulated], key, value)
            )
            generality = report_row(rows, "simulation.generality", **{key: value}, measure="jaccard")
            assert generality["value"] == pytest.approx(
                _generality_by_hand(specs, list(humans.values()), key, value)
            )
    # no item has a system: that grouping is left out rather than shown under ""
    assert not [r for r in rows if r["metric"].startswith("simulation.") and "system" in r["group"]]

    order = [spec["external_id"] for spec in specs]
    h1, h2, sim = ([answers_of[i] for i in order] for answers_of in (*humans.values(), simulated))
    choice = {"question": "choice", "level": "nominal"}
    between_humans = report_row(rows, "agreement.machine_kappa", **choice, rater="humans", against="humans")
    assert between_humans["value"] == pytest.approx(cohen_kappa_score(h1, h2))
    pairwise = report_row(rows, "agreement.pairwise_kappa", **choice, weights="none")
    assert pairwise["value"] == pytest.approx(cohen_kappa_score(h1, h2))
    with_simulator = report_row(rows, "agreement.machine_kappa", **choice, rater=name, against="humans")
    expected = (cohen_kappa_score(h1, sim) + cohen_kappa_score(h2, sim)) / 2
    assert with_simulator["value"] == pytest.approx(expected)
    calibration = report_row(rows, "agreement.rater_calibration", **choice, rater=name)
    assert calibration["details"]["kappa_vs_humans"] == pytest.approx(expected)
    assert calibration["details"]["definition"] == SIMULATOR

    # the dashboard shows a table per grouping the items have, none for the one they lack
    client.force_login(owner)
    html = client.get(f"/research/s/{study.slug}/dashboard/").content.decode()
    for title in ("explaining model", "mode (cot", "counterfactual generator"):
        assert f"Simulation precision per {title}" in html
        assert f"Simulation generality per {title}" in html
    assert "Simulation precision per explanation system" not in html
    assert "Raters against the humans, per question" in html
