"""Plausibility of explanations (Yes / Moderate / No per explanation): rating shares with
intervals clustered by item and participant (``stats.clustered``)."""

from __future__ import annotations

import numpy as np

from annotation.kinds.plausibility import RATING_VALUES
from stats.clustered import clustered_group_means, clustered_mean

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
        response, explanation, rating = _flatten(data.responses["ratings"])
        # a response's ratings share its item and its participant
        units = data.responses["item"][response]
        participants = data.responses["participant"][response]
        rows = []
        for value in RATING_VALUES:  # the kind's order
            hit = (rating == value).astype(np.float64)
            overall = clustered_mean(hit, units, participants, bounds=(0.0, 1.0))
            if overall is not None:
                rows.append(mean_row("plausibility.share", {"rating": value}, overall))
            by_explanation = clustered_group_means(hit, explanation, units, participants, bounds=(0.0, 1.0))
            for mean in by_explanation:
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
