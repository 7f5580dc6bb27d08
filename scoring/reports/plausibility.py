"""Plausibility of explanations (Yes / Moderate / No per explanation)."""

from __future__ import annotations

import numpy as np

from annotation.kinds.plausibility import RATING_VALUES
from stats.groups import grouped_means, overall_mean

from .base import (
    Field,
    KindReport,
    PlotSpec,
    ReportRow,
    StudyData,
    TableSpec,
    mean_row,
)


class PlausibilityReport(KindReport):
    response_fields = {"ratings": Field("answer__ratings", "json")}
    tables = (
        TableSpec(
            "Rating shares per explanation (95% CI)", ("plausibility.share",), ("explanation", "rating")
        ),
    )
    plots = (
        PlotSpec(
            "plausibility",
            "Rating shares per explanation",
            "plausibility.share",
            "explanation",
            hue="rating",
            ylabel="share",
        ),
    )

    def rows(self, data: StudyData, *, embed=None) -> list[ReportRow]:
        _, explanation, rating = _flatten(data.responses["ratings"])
        rows = []
        for value in RATING_VALUES:  # the kind's order
            hit = (rating == value).astype(np.float64)
            overall = overall_mean(hit, label=f"plausibility.share|{value}")
            if overall is not None:
                rows.append(mean_row("plausibility.share", {"rating": value}, overall))
            for mean in grouped_means(hit, explanation, label=f"plausibility.share|{value}|explanation"):
                rows.append(
                    mean_row("plausibility.share", {"explanation": mean.key[0], "rating": value}, mean)
                )
        return rows


def _flatten(ratings: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One row per (response, explanation) with a known rating."""
    response, explanation, rating = [], [], []
    for r, answer in enumerate(ratings):
        for key, value in (answer or {}).items():
            if value in RATING_VALUES:
                response.append(r)
                explanation.append(str(key))
                rating.append(value)
    return (
        np.asarray(response, dtype=np.int64),
        np.asarray(explanation, dtype=object),
        np.asarray(rating, dtype=object),
    )
