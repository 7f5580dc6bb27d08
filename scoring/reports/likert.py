"""Likert survey (LEME): means per question and system, paired Wilcoxon tests."""

from __future__ import annotations

import itertools

import numpy as np

from stats import likert
from stats.groups import grouped_means

from .base import (
    Field,
    KindReport,
    PlotSpec,
    ReportRow,
    StudyData,
    TableSpec,
    mean_row,
    row,
)


class LikertReport(KindReport):
    response_fields = {"ratings": Field("answer__ratings", "json")}
    item_fields = {
        "system": Field("provenance__system", "text"),
        "source": Field("provenance__source_id", "text"),
    }
    tables = (
        TableSpec(
            "Mean rating per question and system (± sd, 95% CI)",
            ("likert.mean",),
            ("question", "system"),
            details=("sd",),
        ),
        TableSpec(
            "Paired comparisons (one-sided Wilcoxon signed-rank: system rated higher than over)",
            ("likert.wilcoxon",),
            ("question", "system", "over"),
            details=("median_difference", "statistic"),
            note="Pairs are edit cases (provenance.source_id) rated for both systems. Each pair of systems "
            "once, in the direction of the larger median difference.",
            value_label="p",
            pair=("system", "over"),
            pair_prefer="median_difference",
        ),
    )
    plots = (
        PlotSpec(
            "likert-means",
            "Mean rating per question and system (95% CI)",
            "likert.mean",
            "question",
            hue="system",
            ylabel="rating",
        ),
    )

    def rows(self, data: StudyData, *, embed=None) -> list[ReportRow]:
        item = data.responses["item"]
        systems = data.items["system"][item]
        sources = data.items["source"][item]
        rows = []
        for question in questions(data):
            values = _ratings(data.responses["ratings"], question)
            label = f"likert.mean|{question}"
            for mean in grouped_means(values, systems, label=label):
                rows.append(mean_row("likert.mean", {"question": question, "system": mean.key[0]}, mean))
            for mean in grouped_means(values, np.zeros(len(values), dtype=np.int8), label=label):
                rows.append(mean_row("likert.mean", {"question": question}, mean))
            rows += _wilcoxon_rows(question, sources, systems, values)
        return rows

    def question_groups(self, config: dict) -> dict[str, str]:
        return {q["id"]: q["group"] for q in config["questions"] if q.get("group")}

    def question_order(self, config: dict) -> list[str]:
        return [q["id"] for q in config["questions"]]


def questions(data: StudyData) -> list[str]:
    """The study's questions in the kind's order (its stored, validated config)."""
    return [q["id"] for q in data.config["questions"]]


def _ratings(ratings: np.ndarray, question: str) -> np.ndarray:
    return np.array([(r or {}).get(question, np.nan) for r in ratings], dtype=np.float64)


def _wilcoxon_rows(
    question: str, sources: np.ndarray, systems: np.ndarray, values: np.ndarray
) -> list[ReportRow]:
    """Every ordered pair of systems, on the cases (source ids) both were rated on."""
    paired = sources != ""
    if not paired.any():
        return []
    source_codes = np.unique(sources[paired], return_inverse=True)[1].ravel()
    systems, values = systems[paired], values[paired]
    rows = []
    for system, over in itertools.permutations(sorted({s for s in systems if s}), 2):
        first, second = likert.paired_by_source(source_codes, systems, values, system, over)
        if first.size == 0:
            continue
        test = likert.wilcoxon_greater(first, second)
        group = {"question": question, "system": system, "over": over}
        rows.append(row("likert.wilcoxon", group, test, alternative="greater"))
    return rows
