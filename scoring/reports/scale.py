"""Rows and tables shared by the kinds that ask for ratings on a scale (``likert`` and the
questionnaire's ``scale`` questions): the note under the means, and the system pairs.

A pair of systems is written both ways (``system`` over ``over`` and back), as the rows
were before: the dashboard shows each pair once, in the direction where the difference is
positive, so the row reads "system rated higher than over by d [CI]". Both rows carry the
same two-sided p-values: the direction is read from the difference, never chosen by the
test.
"""

from __future__ import annotations

from typing import Any

from stats.estimate import Estimate
from stats.likert import PairComparison

from .base import ReportRow, TableSpec, row

MEAN_NOTE = (
    "95% CI: cluster-robust t interval over items (sources where items share one) and, where "
    "participants answer several items, participants too; see docs/statistics.md."
)


def pair_table(metric: str, cases: str) -> TableSpec:
    """The dashboard's table of system pairs for one question kind (``metric``: its
    ``*.difference`` rows)."""
    return TableSpec(
        "Paired comparisons: difference in rating, system − over (95% CI), "
        "two-sided Wilcoxon signed-rank test, Holm-adjusted",
        (metric,),
        ("question", "system", "over"),
        details=("p_value", "p_holm", "median_difference", "pairs"),
        note=f"Each pair of systems once, in the direction of the positive difference. Systems rated "
        f"on the same {cases} (provenance.source_id): the difference within {cases}, with a "
        f"cluster-robust 95% CI over {cases} and participants, and a two-sided Wilcoxon signed-rank "
        "test on the per-case mean ratings (pairs = cases). Systems never on the same case: the "
        "difference of their means, CI over items and participants, and a two-sided Mann-Whitney "
        "test on the per-item means (pairs = items). p Holm-adjusted over the pairs of systems of "
        "the question.",
        value_label="difference",
        pair=("system", "over"),
        pair_prefer="value",
    )


def comparison_rows(prefix: str, group: dict, comparisons: list[PairComparison]) -> list[ReportRow]:
    """Per pair, both ways: ``<prefix>.difference`` (the effect with its interval and the
    test's p-values) and, for a paired comparison, ``<prefix>.wilcoxon`` (the two-sided p,
    kept for readers of the earlier rows)."""
    rows = []
    for comparison in comparisons:
        for side in (comparison, comparison.mirrored()):
            rows += _pair_rows(prefix, {**group, "system": side.system, "over": side.over}, side)
    return rows


def _pair_rows(prefix: str, group: dict, pair: PairComparison) -> list[ReportRow]:
    test, fit = pair.test, pair.difference
    shared: dict[str, Any] = {
        "median_difference": test.details.get("median_difference"),
        "p_holm": pair.p_holm,
        "alternative": "two-sided",
        "correction": "holm",
    }
    difference = row(
        f"{prefix}.difference",
        group,
        Estimate(fit.estimate, n=test.n),
        pair.interval,
        **shared,
        p_value=test.value,
        pairs=test.n,
        se=fit.se,
        df=fit.df,
        clusters=list(fit.clusters),
        design=pair.design,
        test="wilcoxon signed-rank" if pair.design == "paired" else "mann-whitney u",
        **({"test_reason": test.reason} if test.reason else {}),
    )
    if pair.design != "paired":  # the wilcoxon rows are the paired test's alone
        return [difference]
    return [difference, row(f"{prefix}.wilcoxon", group, test, **shared)]
