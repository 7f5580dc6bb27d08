"""Counterfactual simulation: precision and generality per explanation system; the
precision of each model simulator beside the humans'.

The agreement of humans with each other and with model simulators is the common
human-machine comparison every kind gets (``agreement.machine_*``, question ``choice``)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from scoring import similarity, simulation
from scoring.bootstrap import mean_ci, seed_for
from scoring.estimate import Estimate

from .base import (
    Embed,
    Field,
    KindReport,
    PlotSpec,
    ReportRow,
    StudyData,
    TableSpec,
    row,
)

MEASURES = ("bleu", "cosine", "jaccard")


class SimulationReport(KindReport):
    kind = "simulation"
    response_fields = {"choice": Field("answer__choice", "text")}
    item_fields = {
        "system": Field("provenance__system", "text"),
        "explanation": Field("payload__explanation_id", "text"),
        "model_answer": Field("payload__model_followup_answer", "text"),
        "question_text": Field("payload__followup_question", "text"),
        "context_text": Field("payload__followup_context", "text"),
    }
    tables = (
        TableSpec(
            "Simulation precision per explanation system (95% CI over explanations)",
            ("simulation.precision",),
            ("system", "rater"),
        ),
        TableSpec(
            "Share of judgements that commit to an answer", ("simulation.simulatable_rate",), ("system",)
        ),
        TableSpec(
            "Simulation generality (1 − mean pairwise similarity)",
            ("simulation.generality",),
            ("system", "measure"),
        ),
    )
    plots = (
        PlotSpec(
            "precision",
            "Simulation precision per explanation system",
            "simulation.precision",
            "system",
            hue="rater",
            ylabel="precision",
        ),
    )

    def rows(self, data: StudyData, *, embed: Embed | None = None) -> list[ReportRow]:
        """The humans' figures (``data`` holds human answers only)."""
        view = _View(data)
        rows = _precision_rows(view, np.ones(len(view.item), dtype=bool), "human")
        rows += _simulatable_rows(view)
        rows += _generality_rows(view, embed)
        return rows

    def machine_rows(self, data: StudyData, *, embed: Embed | None = None) -> list[ReportRow]:
        """The precision of each model simulator, measured like the humans' (``rater``:
        its name)."""
        view = _View(data)
        machine = data.machine_responses()
        rows = []
        for participant in np.unique(view.participant[machine]).tolist():
            mine = view.participant == participant
            rows += _precision_rows(view, mine, str(data.participants["name"][participant]))
        return rows


class _View:
    """Per-response columns the measures share."""

    def __init__(self, data: StudyData):
        item = data.responses["item"]
        self.item = item
        self.choice = data.responses["choice"]
        self.system = data.items["system"][item]
        self.explanation = data.items["explanation"][item]
        self.model_answer = data.items["model_answer"][item]
        self.participant = data.responses["participant"]
        texts = np.where(
            data.items["question_text"] != "", data.items["question_text"], data.items["context_text"]
        )
        self.text = texts[item]

    def system_of_explanation(self) -> dict:
        return {e: s for e, s in zip(self.explanation, self.system, strict=True)}


def _precision_rows(view: _View, mask: np.ndarray, rater: str) -> list[ReportRow]:
    ids, precision = simulation.precision_per_explanation(
        view.explanation[mask], list(view.choice[mask]), list(view.model_answer[mask])
    )
    owner = view.system_of_explanation()
    by_system = defaultdict(list)
    for explanation, value in zip(ids, precision, strict=True):
        by_system[owner[explanation]].append(value)
    rows = []
    for system in sorted(by_system):
        values = np.asarray(by_system[system])
        ci = mean_ci(values, seed=seed_for("simulation.precision", system, rater))
        estimate = Estimate(float(values.mean()), n=int(values.size))
        rows.append(
            row("simulation.precision", {"system": system, "rater": rater}, estimate, ci, unit="explanations")
        )
    return rows


def _simulatable_rows(view: _View) -> list[ReportRow]:
    committed = simulation.simulatable(list(view.choice)).astype(np.float64)
    systems = view.system
    rows = []
    for system in sorted(set(systems)):
        values = committed[systems == system]
        ci = mean_ci(values, seed=seed_for("simulation.simulatable_rate", system))
        rows.append(
            row(
                "simulation.simulatable_rate",
                {"system": system},
                Estimate(float(values.mean()), n=int(values.size)),
                ci,
            )
        )
    return rows


NO_ENCODER = "needs the sentence encoder, which this install lacks (requirements.txt)"


def _generality_rows(view: _View, embed: Embed | None) -> list[ReportRow]:
    texts_by_explanation = _simulatable_texts(view)
    owner = view.system_of_explanation()
    similarities = {
        "bleu": lambda texts: similarity.mean_pairwise_similarity(texts, similarity.bleu_similarity),
        "jaccard": lambda texts: similarity.mean_pairwise_similarity(texts, similarity.jaccard_similarity),
    }
    if embed is not None:
        vectors = _embeddings(texts_by_explanation, embed)
        similarities["cosine"] = lambda texts: similarity.mean_pairwise_cosine([vectors[t] for t in texts])
    rows = []
    for system in sorted({owner[e] for e in texts_by_explanation}):
        explanations = [e for e in texts_by_explanation if owner[e] == system]
        for measure in MEASURES:
            group = {"system": system, "measure": measure}
            if measure not in similarities:
                rows.append(
                    row(
                        "simulation.generality",
                        group,
                        Estimate.undefined(NO_ENCODER),
                    )
                )
                continue
            means = [similarities[measure](texts_by_explanation[e]) for e in explanations]
            estimate = simulation.generality(means)
            diversity = 1.0 - np.asarray(means, dtype=np.float64)
            ci = mean_ci(diversity, seed=seed_for("simulation.generality", system, measure))
            rows.append(row("simulation.generality", group, estimate, ci, unit="explanations"))
    return rows


def _simulatable_texts(view: _View) -> dict:
    """Per explanation: the counterfactual texts most human judgements found simulatable."""
    if not len(view.item):
        return {}
    majority = simulation.majority_simulatable(view.item, list(view.choice))
    texts: defaultdict[str, dict[int, str]] = defaultdict(dict)  # explanation → item → text
    for item, explanation, text in zip(view.item, view.explanation, view.text, strict=True):
        if majority[int(item)] and text:
            texts[explanation][int(item)] = text
    return {explanation: list(by_item.values()) for explanation, by_item in texts.items()}


def _embeddings(texts_by_explanation: dict, embed: Embed) -> dict[str, np.ndarray]:
    distinct = sorted({text for texts in texts_by_explanation.values() for text in texts})
    if not distinct:
        return {}
    matrix = np.asarray(embed(distinct))
    return dict(zip(distinct, matrix, strict=True))
