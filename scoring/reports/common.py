"""Figures every study gets, whatever its kind: progress and inter-annotator agreement."""

from __future__ import annotations

import numpy as np

from scoring.agreement import (
    alpha_from_value_counts,
    percent_agreement_from_value_counts,
    value_counts_from_pairs,
)
from scoring.counting import count_distinct
from scoring.estimate import Estimate
from scoring.groups import factorize
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
            Estimate(float(count_distinct(responses["participant"])), n=len(responses)),
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
            participants_failed=count_distinct(responses["participant"][failed]),
        ),
    ]


def agreement_rows(observations: Columns) -> list[ReportRow]:
    """Per question and level: alpha (also at the interval level for ordinal numbers),
    pairwise percent agreement and, for nominal questions, Fleiss' kappa."""
    if not len(observations):
        return []
    questions, question_codes = factorize(observations["question"])
    levels, level_codes = factorize(observations["level"])
    rows = []
    for q, question in enumerate(questions):
        for lv, level in enumerate(levels):
            mask = (question_codes == q) & (level_codes == lv)
            if mask.any():
                units, values = observations["unit"][mask], observations["value"][mask]
                rows += _question_rows(str(question), str(level), units, values)
    return rows


def _question_rows(question: str, level: str, units: np.ndarray, raw: np.ndarray) -> list[ReportRow]:
    group = {"question": question, "level": level}
    values = _values(raw, level)
    if values is None:
        return [
            row("agreement.krippendorff_alpha", group, Estimate.undefined(f"{level} values must be numbers"))
        ]
    counts, domain = value_counts_from_pairs(units, values)
    rows = [
        row(
            "agreement.krippendorff_alpha", group, alpha_from_value_counts(counts, level, value_domain=domain)
        )
    ]
    if level == "ordinal":
        interval = alpha_from_value_counts(counts, "interval", value_domain=domain)
        rows.append(
            row("agreement.krippendorff_alpha", {"question": question, "level": "interval"}, interval)
        )
    rows.append(row("agreement.percent", group, percent_agreement_from_value_counts(counts)))
    if level == "nominal":
        dense = counts if isinstance(counts, np.ndarray) else counts.toarray()
        rows.append(row("agreement.fleiss_kappa", group, fleiss_kappa(dense)))
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
    del data  # one copy of the population at a time
    observations = analysed.observations
    if len(observations):
        model = analysed.participants["model"]
        by_model = model[analysed.responses["participant"][observations["response"]]]
        observations = observations.take(~by_model)
    rows += agreement_rows(observations)
    rows += builder.rows(analysed, embed=embed)
    return rows
