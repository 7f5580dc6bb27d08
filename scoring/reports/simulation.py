"""Counterfactual simulation: precision and generality per explanation system, explaining
model, mode (``cot`` / ``posthoc``) and counterfactual generator (the items' provenance keys
in ``GROUPINGS``); the precision of each model simulator beside the humans'.

The agreement of humans with each other and with model simulators is the common
human-machine comparison every kind gets (``agreement.machine_*`` and
``agreement.rater_calibration``, question ``choice``)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from stats import similarity, simulation
from stats.clustered import clustered_mean
from stats.estimate import Estimate
from stats.groups import factorize

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
# Provenance keys of the items the figures are grouped by (an item without one is left out
# of that grouping): ``system`` (whoever wrote the explanation, for hand-made studies), and
# what the simulation pipeline records: ``explainer`` (the explaining model), ``mode`` (``cot``
# or ``posthoc``) and ``generator`` (the model that wrote the counterfactual).
GROUPINGS = ("system", "explainer", "mode", "generator")
GROUPING_TITLES = {
    "system": "explanation system",
    "explainer": "explaining model",
    "mode": "mode (cot: reasoning first; posthoc: answer first)",
    "generator": "counterfactual generator",
}


def _tables() -> tuple[TableSpec, ...]:
    precision = tuple(
        TableSpec(
            f"Simulation precision per {GROUPING_TITLES[key]} (95% CI over explanations)",
            ("simulation.precision",),
            (key, "rater"),
            note="rater human: the humans together; any other rater is a model simulator, "
            "measured the same way.",
        )
        for key in GROUPINGS
    )
    rate = tuple(
        TableSpec(
            f"Share of judgements that commit to an answer, per {GROUPING_TITLES[key]}",
            ("simulation.simulatable_rate",),
            (key,),
        )
        for key in GROUPINGS
    )
    generality = tuple(
        TableSpec(
            f"Simulation generality per {GROUPING_TITLES[key]} (1 − mean pairwise similarity)",
            ("simulation.generality",),
            (key, "measure"),
        )
        for key in GROUPINGS
    )
    return precision + rate + generality


def _plots() -> tuple[PlotSpec, ...]:
    return tuple(
        PlotSpec(
            "precision" if key == "system" else f"precision-{key}",
            f"Simulation precision per {GROUPING_TITLES[key].split(' (')[0]}",
            "simulation.precision",
            key,
            hue="rater",
            ylabel="precision",
        )
        for key in GROUPINGS
    )


class SimulationReport(KindReport):
    response_fields = {"choice": Field("answer__choice", "text")}
    item_fields = {
        **{key: Field(f"provenance__{key}", "text") for key in GROUPINGS},
        "explanation": Field("payload__explanation_id", "text"),
        "model_answer": Field("payload__model_followup_answer", "text"),
        "question_text": Field("payload__followup_question", "text"),
        "context_text": Field("payload__followup_context", "text"),
    }
    tables = _tables()
    plots = _plots()

    def rows(self, data: StudyData, *, embed: Embed | None = None) -> list[ReportRow]:
        """The humans' figures (``data`` holds human answers only)."""
        view = _View(data)
        everyone = np.ones(len(view.item), dtype=bool)
        rows = []
        for key in GROUPINGS:
            rows += _precision_rows(view, everyone, "human", key)
        for key in GROUPINGS:
            rows += _simulatable_rows(view, key)
        texts = _simulatable_texts(view)
        vectors = _embeddings(texts, embed) if embed is not None else None
        for key in GROUPINGS:
            rows += _generality_rows(view, key, texts, vectors)
        return rows

    def machine_rows(self, data: StudyData, *, embed: Embed | None = None) -> list[ReportRow]:
        """The precision of each model simulator, measured like the humans' (``rater``:
        its name)."""
        view = _View(data)
        machine = data.machine_responses()
        rows = []
        for participant in np.unique(view.participant[machine]).tolist():
            mine = view.participant == participant
            name = str(data.participants["name"][participant])
            for key in GROUPINGS:
                rows += _precision_rows(view, mine, name, key)
        return rows


class _View:
    """Per-response columns the measures share."""

    def __init__(self, data: StudyData):
        item = data.responses["item"]
        self.item = item
        self.choice = data.responses["choice"]
        self.item_groups = {key: data.items[key] for key in GROUPINGS}
        self.groups = {key: values[item] for key, values in self.item_groups.items()}
        self.explanation = data.items["explanation"][item]
        self.model_answer = data.items["model_answer"][item]
        self.participant = data.responses["participant"]
        texts = np.where(
            data.items["question_text"] != "", data.items["question_text"], data.items["context_text"]
        )
        self.text = texts[item]


def _precision_rows(view: _View, mask: np.ndarray, rater: str, key: str) -> list[ReportRow]:
    """Precision per value of ``key``: per (explanation, value) the share of simulatable
    judgements equal to the model's answer, averaged over the value's explanations."""
    groups = view.groups[key]
    keep = mask & (groups != "")
    names, group_codes = factorize(groups[keep])
    if not len(names):
        return []
    _, explanation_codes = factorize(view.explanation[keep])
    pairs = explanation_codes.astype(np.int64) * len(names) + group_codes
    ids, precision = simulation.precision_per_explanation(
        pairs, list(view.choice[keep]), list(view.model_answer[keep])
    )
    owner = np.asarray(ids, dtype=np.int64) % len(names)
    rows = []
    for code, value in enumerate(str(name) for name in names):
        values = precision[owner == code]
        if not values.size:
            continue
        # one value per explanation, each its own unit: a t interval over explanations
        found = clustered_mean(values, np.arange(values.size), bounds=(0.0, 1.0))
        ci = found.ci if found is not None else None
        estimate = Estimate(float(values.mean()), n=int(values.size))
        rows.append(
            row("simulation.precision", {key: value, "rater": rater}, estimate, ci, unit="explanations")
        )
    return rows


def _simulatable_rows(view: _View, key: str) -> list[ReportRow]:
    """The share of judgements that commit to an answer, clustered by explanation (its
    counterfactuals share it) and participant."""
    committed = simulation.simulatable(list(view.choice)).astype(np.float64)
    groups = view.groups[key]
    rows = []
    for value in sorted(set(groups) - {""}):
        mask = groups == value
        values = committed[mask]
        found = clustered_mean(values, view.explanation[mask], view.participant[mask], bounds=(0.0, 1.0))
        ci = found.ci if found is not None else None
        rows.append(
            row(
                "simulation.simulatable_rate",
                {key: value},
                Estimate(float(values.mean()), n=int(values.size)),
                ci,
            )
        )
    return rows


NO_ENCODER = "needs the sentence encoder, which this install lacks (requirements.txt)"


def _generality_rows(
    view: _View, key: str, texts: dict[tuple, str], vectors: dict[str, np.ndarray] | None
) -> list[ReportRow]:
    """Generality per value of ``key``: per (explanation, value) the mean pairwise
    similarity of its simulatable counterfactuals, one minus it averaged over the value's
    explanations (for a generator: the diversity of what it wrote for each explanation)."""
    by_group: defaultdict[str, defaultdict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for (explanation, item), text in texts.items():
        value = str(view.item_groups[key][item])
        if value:
            by_group[value][explanation].append(text)
    similarities = {
        "bleu": lambda texts: similarity.mean_pairwise_similarity(texts, similarity.bleu_similarity),
        "jaccard": lambda texts: similarity.mean_pairwise_similarity(texts, similarity.jaccard_similarity),
    }
    if vectors is not None:
        similarities["cosine"] = lambda texts: similarity.mean_pairwise_cosine([vectors[t] for t in texts])
    rows = []
    for value in sorted(by_group):
        explanations = by_group[value]
        for measure in MEASURES:
            group = {key: value, "measure": measure}
            if measure not in similarities:
                rows.append(row("simulation.generality", group, Estimate.undefined(NO_ENCODER)))
                continue
            means = [similarities[measure](texts) for texts in explanations.values()]
            estimate = simulation.generality(means)
            diversity = 1.0 - np.asarray(means, dtype=np.float64)
            # one value per explanation (a cosine can be negative: diversity up to 2)
            bounds = (0.0, 2.0) if measure == "cosine" else (0.0, 1.0)
            found = clustered_mean(diversity, np.arange(diversity.size), bounds=bounds)
            ci = found.ci if found is not None else None
            rows.append(row("simulation.generality", group, estimate, ci, unit="explanations"))
    return rows


def _simulatable_texts(view: _View) -> dict[tuple, str]:
    """(explanation, item) → the counterfactual's text, for the counterfactuals most human
    judgements found simulatable."""
    if not len(view.item):
        return {}
    majority = simulation.majority_simulatable(view.item, list(view.choice))
    texts: dict[tuple, str] = {}
    for item, explanation, text in zip(view.item.tolist(), view.explanation, view.text, strict=True):
        if majority[int(item)] and text:
            texts[(explanation, item)] = text
    return texts


def _embeddings(texts: dict[tuple, str], embed: Embed) -> dict[str, np.ndarray]:
    distinct = sorted(set(texts.values()))
    if not distinct:
        return {}
    matrix = np.asarray(embed(distinct))
    return dict(zip(distinct, matrix, strict=True))
