"""Figures every study gets, whatever its kind: progress and inter-annotator agreement."""

from __future__ import annotations

import numpy as np

from scoring.agreement import alpha_from_pairs, percent_agreement_from_pairs, value_counts_from_pairs
from scoring.estimate import Estimate
from scoring.kappa import fleiss_kappa

from .base import Columns, Embed, KindReport, PlotSpec, ReportRow, StudyData, TableSpec, row

AGREEMENT_TABLE = TableSpec(
    title="Agreement between annotators",
    metrics=("agreement.krippendorff_alpha", "agreement.percent", "agreement.fleiss_kappa"),
    keys=("question", "level"),
    details=("units",),
)
ALPHA_PLOT = PlotSpec(
    name="alpha",
    title="Krippendorff's alpha per question",
    metric="agreement.krippendorff_alpha",
    x="question",
    hue="level",
    ylabel="alpha",
)


def progress_rows(data: StudyData) -> list[ReportRow]:
    """Collection progress of one population (attention checks counted apart)."""
    responses = data.responses
    attention = responses["attention"]
    analysed_items = responses["item"][~attention]
    real_items = ~data.items["attention"]
    per_item = np.bincount(analysed_items, minlength=len(data.items))[real_items]
    wanted = data.annotations_per_item
    seconds = responses["seconds"][~np.isnan(responses["seconds"])]
    failed = attention & (responses["correct"] == 0)
    return [
        row(
            "progress.responses",
            {},
            Estimate(float((~attention).sum()), n=int((~attention).sum())),
            attention_checks=int(attention.sum()),
        ),
        row(
            "progress.participants",
            {},
            Estimate(float(np.unique(responses["participant"]).size), n=len(responses)),
        ),
        row(
            "progress.items_complete",
            {},
            Estimate(float((per_item >= wanted).sum()), n=int(real_items.sum())),
            annotations_per_item=wanted,
            items_started=int((per_item > 0).sum()),
        ),
        row(
            "progress.median_seconds_per_page",
            {},
            Estimate(float(np.median(seconds)), n=int(seconds.size))
            if seconds.size
            else Estimate.undefined("no timed pages"),
        ),
        row(
            "progress.attention_failures",
            {},
            Estimate(float(failed.sum()), n=int(attention.sum())),
            participants_failed=int(np.unique(responses["participant"][failed]).size),
        ),
    ]


def agreement_rows(observations: Columns) -> list[ReportRow]:
    """Alpha (at the declared level, and also interval for numeric ordinal values),
    pairwise percent agreement and, for nominal questions, Fleiss' kappa."""
    if not len(observations):
        return []
    rows = []
    questions = observations["question"].astype(str)
    levels = observations["level"].astype(str)
    for question, level in sorted(set(zip(questions, levels, strict=True))):
        mask = (questions == question) & (levels == level)
        units = observations["unit"][mask]
        values = _values(observations["value"][mask], level)
        group = {"question": question, "level": level}
        if values is None:
            reason = f"{level} values must be numbers"
            rows.append(row("agreement.krippendorff_alpha", group, Estimate.undefined(reason)))
            continue
        rows.append(row("agreement.krippendorff_alpha", group, alpha_from_pairs(units, values, level)))
        if level == "ordinal":
            interval = {"question": question, "level": "interval"}
            rows.append(
                row("agreement.krippendorff_alpha", interval, alpha_from_pairs(units, values, "interval"))
            )
        rows.append(row("agreement.percent", group, percent_agreement_from_pairs(units, values)))
        if level == "nominal":
            counts, _ = value_counts_from_pairs(units, values)
            rows.append(row("agreement.fleiss_kappa", group, fleiss_kappa(counts.toarray())))
    return rows


def _values(raw: np.ndarray, level: str) -> np.ndarray | None:
    """Numbers as floats; at the nominal level anything else compares as text."""
    try:
        numeric = raw.astype(np.float64)
    except (TypeError, ValueError):
        numeric = None
    if numeric is not None:
        return numeric
    if level != "nominal":
        return None
    return np.array(["" if v is None else str(v) for v in raw], dtype=object).astype(str)


def study_rows(builder: KindReport, data: StudyData, *, embed: Embed | None = None) -> list[ReportRow]:
    """All figures of one population: progress, agreement among human annotators (model
    participants are compared with humans by the kinds that have them), and the kind's own.
    """
    rows = progress_rows(data)
    analysed = data.analysed()
    observations = analysed.observations
    if len(observations):
        model = analysed.participants["source"] == "model"
        by_model = model[analysed.responses["participant"][observations["response"]]]
        observations = observations.take(~by_model)
    rows += agreement_rows(observations)
    rows += builder.rows(analysed, embed=embed)
    return rows
