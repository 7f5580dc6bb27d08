"""Error-span questions (``spans``) in the questionnaire's report: per system of the marked
passage, the spans by category and severity, the MQM-style penalty and the ESA score (means
with cluster-robust intervals by unit and participant, ``stats.clustered``), and agreement
on where the errors are: character F1 between two annotators of a passage and character-
level Krippendorff's alpha (``stats.spans``; docs/statistics.md).

The penalty of one answer is the sum of its spans' severity weights (the question's
``weights``: minor 1, major 5, critical 25 unless the study says otherwise); higher is worse.
"""

from __future__ import annotations

import math

import numpy as np

from stats import spans as span_stats
from stats.clustered import clustered_mean
from stats.estimate import Estimate

from .base import ReportRow, TableSpec, mean_row, row

TABLES = (
    TableSpec(
        "Spans questions: penalty, score and agreement over all answers (95% CI)",
        ("questionnaire.mqm", "questionnaire.esa", "questionnaire.span_f1", "questionnaire.span_alpha"),
        ("question",),
        note="The per-system tables below split these by the system of the marked passage.",
    ),
    TableSpec(
        "Spans questions: errors marked per system, by category and severity",
        ("questionnaire.span_count",),
        ("question", "system", "category", "severity"),
        details=("per_answer",),
        note="Spans marked over all answers to the question on the system's passages; "
        "per_answer divides by those answers.",
    ),
    TableSpec(
        "Spans questions: MQM-style penalty and ESA score per system (95% CI)",
        ("questionnaire.mqm", "questionnaire.esa"),
        ("question", "system"),
        note="Penalty: the sum of an answer's severity weights (higher is worse); ESA: the overall "
        "0-100 score, when asked. Means over answers, intervals clustered by item (or source) "
        "and participant.",
    ),
    TableSpec(
        "Spans questions: agreement on the error spans",
        ("questionnaire.span_f1", "questionnaire.span_category_f1", "questionnaire.span_alpha"),
        ("question", "system"),
        note="Character F1 between two annotators of a passage (any category; category: the same "
        "category too), pairs that marked nothing left out; alpha: Krippendorff's alpha (nominal) "
        "over the passages' characters, each valued by the category of its span or none.",
    ),
)


def span_rows(question, values, item, passages, systems, design, lengths) -> list[ReportRow]:
    """``lengths``: per item, the length of the question's passage (characters)."""
    qid = question["id"]
    position = question["passage"] - 1
    of_item = [ps[position]["system"] if len(ps) > position else "" for ps in passages]
    passage_systems = np.array(of_item, dtype=object)[item]
    answered = np.array([isinstance(v, dict) for v in values], dtype=bool)
    weights = dict(zip(question["severities"], map(float, question["weights"]), strict=True))
    rows: list[ReportRow] = []
    named = sorted({s for s in passage_systems[answered] if s})
    groups: list[tuple[dict, np.ndarray]] = [({}, answered)]
    groups += [({"system": s}, answered & (passage_systems == s)) for s in named]
    for group, mask in groups:
        index = np.flatnonzero(mask)
        answers = [values[i]["spans"] for i in index]
        key = {"question": qid, **group}
        if group:
            rows += _count_rows(question, key, answers)
        units, participants = design.units[index], design.participants[index]
        penalties = np.array([span_stats.penalty(a, weights) for a in answers], dtype=np.float64)
        # no upper bound: where every answer marked nothing the interval reaches to infinity
        rows += _mean("questionnaire.mqm", key, penalties, units, participants, (0.0, math.inf))
        if question["score"]:
            scores = np.array([values[i].get("score", np.nan) for i in index], dtype=np.float64)
            rows += _mean("questionnaire.esa", key, scores, units, participants, (0.0, 100.0))
        rows += _agreement_rows(key, item[index], answers, lengths)
    return rows


def _count_rows(question: dict, key: dict, answers: list[list[dict]]) -> list[ReportRow]:
    counts = span_stats.error_counts(answers)
    return [
        row(
            "questionnaire.span_count",
            {**key, "category": category, "severity": severity},
            Estimate(float(counts.get((category, severity), 0)), n=len(answers)),
            per_answer=counts.get((category, severity), 0) / len(answers),
        )
        for category in question["categories"]
        for severity in question["severities"]
        if answers
    ]


def _mean(metric, key, values, units, participants, bounds) -> list[ReportRow]:
    mean = clustered_mean(values, units, participants, bounds=bounds)
    return [mean_row(metric, key, mean)] if mean is not None else []


def _agreement_rows(key: dict, items: np.ndarray, answers: list[list[dict]], lengths) -> list[ReportRow]:
    """F1 per pair of annotators (a mean clustered by the pair's item) and alpha over the
    characters of the passages with two or more answers."""
    rows: list[ReportRow] = []
    for metric, by_category in (("questionnaire.span_f1", False), ("questionnaire.span_category_f1", True)):
        scores, owners = span_stats.pairwise_f1(items.tolist(), answers, by_category=by_category)
        rows += _mean(metric, key, scores, owners, None, (0.0, 1.0))
    grouped: dict[int, list[list[dict]]] = {}
    for unit, spans in zip(items.tolist(), answers, strict=True):
        grouped.setdefault(unit, []).append(spans)
    passages = [(int(lengths[unit]), group) for unit, group in grouped.items() if not np.isnan(lengths[unit])]
    rows.append(row("questionnaire.span_alpha", key, span_stats.char_alpha(passages)))
    return rows
