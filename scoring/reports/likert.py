"""Likert survey (LEME): means per question and system, paired comparisons of systems."""

from __future__ import annotations

import numpy as np

from stats import likert
from stats.clustered import case_codes, clustered_group_means, design_units

from .base import (
    Field,
    KindReport,
    PlotSpec,
    ReportRow,
    StudyData,
    TableSpec,
    mean_row,
)
from .scale import MEAN_NOTE, comparison_rows, pair_table


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
            note=MEAN_NOTE,
        ),
        pair_table("likert.difference", "edit cases"),
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
        participants = data.responses["participant"]
        systems = data.items["system"][item]
        cases = case_codes(data.items["source"])
        sources = cases[item]
        units = design_units(cases, np.arange(len(cases)))[item]
        everyone = np.zeros(len(item), dtype=np.int8)
        rows = []
        for question in questions(data):
            values = _ratings(data.responses["ratings"], question)
            for mean in clustered_group_means(values, systems, units, participants):
                rows.append(mean_row("likert.mean", {"question": question, "system": mean.key[0]}, mean))
            for mean in clustered_group_means(values, everyone, units, participants):
                rows.append(mean_row("likert.mean", {"question": question}, mean))
            comparisons = likert.system_comparisons(values, systems, sources, participants, units)
            rows += comparison_rows("likert", {"question": question}, comparisons)
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
