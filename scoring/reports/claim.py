"""Premise-claim labelling: label shares, evidence agreement, system × label test."""

from __future__ import annotations

import numpy as np

from stats import claim
from stats.groups import grouped_means, overall_mean

from .base import Field, KindReport, PlotSpec, ReportRow, StudyData, TableSpec, mean_row, row

LABELS = ("supports", "contradicts", "neutral")


class ClaimReport(KindReport):
    response_fields = {"label": Field("answer__label", "text"), "evidence": Field("answer__evidence", "json")}
    item_fields = {
        "system": Field("provenance__system", "text"),
        "claim_type": Field("payload__claim_type", "text"),
    }
    tables = (
        TableSpec("Label shares per system (95% CI)", ("claim.label_share",), ("system", "label")),
        TableSpec(
            "Label shares per system and claim type",
            ("claim.label_share",),
            ("system", "claim_type", "label"),
        ),
        TableSpec(
            "Does the label depend on the system? (chi-square test of independence)",
            ("claim.chi_square",),
            (),
            details=("statistic", "dof"),
            value_label="p",
        ),
        TableSpec(
            "Evidence sentences: F1 between two annotators of an item", ("claim.evidence_f1",), ("system",)
        ),
    )
    plots = (
        PlotSpec(
            "label-shares",
            "Label shares per system (95% CI)",
            "claim.label_share",
            "system",
            hue="label",
            ylabel="share",
        ),
    )

    def rows(self, data: StudyData, *, embed=None) -> list[ReportRow]:
        item = data.responses["item"]
        labels = data.responses["label"]
        systems = data.items["system"][item]
        types = data.items["claim_type"][item]
        rows = _share_rows(labels, {})
        rows += _share_rows(labels, {"system": systems})
        if (types != "").any():
            rows += _share_rows(labels, {"claim_type": types})
            rows += _share_rows(labels, {"system": systems, "claim_type": types})
        rows += _chi_square_rows(systems, labels, types)
        rows += _evidence_rows(item, labels, data.responses["evidence"], systems)
        return rows


def _share_rows(labels: np.ndarray, keys: dict[str, np.ndarray]) -> list[ReportRow]:
    """Share of each label among the responses of each group (keys with a value only)."""
    keep = np.ones(len(labels), dtype=bool)
    for values in keys.values():
        keep &= values != ""
    rows = []
    for label in LABELS:
        hit = (labels[keep] == label).astype(np.float64)
        columns = [values[keep] for values in keys.values()]
        metric_label = f"claim.label_share|{label}|{'|'.join(keys)}"
        means = grouped_means(hit, *columns, label=metric_label) if columns else _overall(hit, metric_label)
        for mean in means:
            group = {**dict(zip(keys, mean.key, strict=True)), "label": label}
            rows.append(mean_row("claim.label_share", group, mean))
    return rows


def _overall(values: np.ndarray, label: str) -> list:
    mean = overall_mean(values, label=label)
    return [mean] if mean else []


def _chi_square_rows(systems: np.ndarray, labels: np.ndarray, types: np.ndarray) -> list[ReportRow]:
    known = systems != ""
    rows = [row("claim.chi_square", {}, claim.chi_square_independence(systems[known], labels[known]))]
    for claim_type in sorted({t for t in types if t}):
        mask = known & (types == claim_type)
        test = claim.chi_square_independence(systems[mask], labels[mask])
        rows.append(row("claim.chi_square", {"claim_type": claim_type}, test))
    return rows


def _evidence_rows(item, labels, evidence, systems) -> list[ReportRow]:
    # Labels that take evidence, with their evidence (incomplete imports lack it).
    chose = (labels != "neutral") & np.fromiter((bool(e) for e in evidence), dtype=bool, count=len(evidence))
    rows = []
    groups: list[tuple[dict[str, str], np.ndarray]] = [({}, chose)] + [
        ({"system": s}, chose & (systems == s)) for s in sorted({s for s in systems if s})
    ]
    for group, mask in groups:
        index = np.flatnonzero(mask)
        scores = claim.evidence_pair_f1(item[index], [evidence[i] or [] for i in index])
        mean = overall_mean(scores, label=f"claim.evidence_f1|{group}")
        if mean is not None:
            rows.append(mean_row("claim.evidence_f1", group, mean))
    return rows
