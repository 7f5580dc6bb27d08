"""Premise-claim labelling: label shares, evidence agreement, system × label test.

Every share's interval clusters by item and annotator, the test of system × label by item
(``stats.clustered``): answers to one claim share its difficulty."""

from __future__ import annotations

import numpy as np

from stats import claim
from stats.clustered import clustered_group_means, clustered_mean, independence_test, unit_cells

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
            "Does the label depend on the system? (cluster-robust Wald test)",
            ("claim.chi_square",),
            (),
            details=("statistic", "dof"),
            value_label="p",
            note="Equal label shares for every system, tested with the answers clustered by item "
            "(Hotelling's F; with 100 items or fewer, a permutation p), not as independent.",
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
        annotator = data.responses["participant"]
        design = (item, annotator, unit_cells(item, annotator))  # the cells found once
        rows = _share_rows(labels, {}, design)
        rows += _share_rows(labels, {"system": systems}, design)
        if (types != "").any():
            rows += _share_rows(labels, {"claim_type": types}, design)
            rows += _share_rows(labels, {"system": systems, "claim_type": types}, design)
        rows += _chi_square_rows(systems, labels, types, item)
        rows += _evidence_rows(item, labels, data.responses["evidence"], systems)
        return rows


def _share_rows(
    labels: np.ndarray, keys: dict[str, np.ndarray], design: tuple[np.ndarray, ...]
) -> list[ReportRow]:
    """Share of each label among the responses of each group (keys with a value only),
    its interval clustered by ``design`` (each response's item, annotator and their cell)."""
    keep = np.ones(len(labels), dtype=bool)
    for values in keys.values():
        keep &= values != ""
    units, annotators, cells = (column[keep] for column in design)
    rows = []
    for label in LABELS:
        hit = (labels[keep] == label).astype(np.float64)
        columns = tuple(values[keep] for values in keys.values())
        if columns:
            means = clustered_group_means(hit, columns, units, annotators, bounds=(0.0, 1.0), cells=cells)
        else:
            overall = clustered_mean(hit, units, annotators, bounds=(0.0, 1.0), cells=cells)
            means = [overall] if overall is not None else []
        for mean in means:
            group = {**dict(zip(keys, mean.key, strict=True)), "label": label}
            rows.append(mean_row("claim.label_share", group, mean))
    return rows


def _chi_square_rows(
    systems: np.ndarray, labels: np.ndarray, types: np.ndarray, item: np.ndarray
) -> list[ReportRow]:
    """Does the label depend on the system? The Wald test clustered by item, over all
    claims and per claim type (the metric keeps its old name, ``claim.chi_square``)."""
    known = systems != ""
    rows = [row("claim.chi_square", {}, independence_test(labels[known], systems[known], item[known]))]
    for claim_type in sorted({t for t in types if t}):
        mask = known & (types == claim_type)
        test = independence_test(labels[mask], systems[mask], item[mask])
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
        scores, owners = claim.evidence_pair_f1(item[index], [evidence[i] or [] for i in index])
        # a pair of annotators clusters by its item (its two annotators are not one)
        mean = clustered_mean(scores, owners, bounds=(0.0, 1.0))
        if mean is not None:
            rows.append(mean_row("claim.evidence_f1", group, mean))
    return rows
