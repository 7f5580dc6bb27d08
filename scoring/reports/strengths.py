"""Bradley-Terry rows shared by the ranking kind and the questionnaire's pick questions:
per system its strength with a cluster-robust interval and its rank with a simultaneous
rank interval, and per question the position bias (``stats.bradley_terry``: clustered by
item, and by participant where the comparisons carry participants who cross items; each
row's ``ci_method`` names the clustering and ``details.participants`` counts them); and the
wins per pair of systems with their clustered tests (``stats.ranking.win_tests``)."""

from __future__ import annotations

import itertools

import numpy as np

from stats import bradley_terry as bt
from stats.bootstrap import Interval
from stats.estimate import Estimate
from stats.ranking import WinTests

from .base import ReportRow, TableSpec, row

RANK_METHOD = "simultaneous (Bonferroni over pairs of systems)"


def strength_table(prefix: str, key: str, title: str) -> TableSpec:
    """The dashboard's Bradley-Terry table of a kind (``prefix`` ranking / questionnaire)."""
    return TableSpec(
        title,
        (f"{prefix}.strength", f"{prefix}.rank"),
        (key, "system"),
        details=("se", "items", "participants"),
        note="Strength: Bradley-Terry log-odds, mean zero, 95% interval clustered by item, and by "
        "participant where participants answer several items (ties count as half a win each). "
        "Rank: 1 is the strongest; the rank intervals hold together (95%). See docs/statistics.md.",
    )


def position_table(prefix: str, key: str) -> TableSpec:
    return TableSpec(
        "Position bias: preference for the passage shown first (log-odds, 95% CI)",
        (f"{prefix}.position_bias",),
        (key,),
        details=("first_share", "comparisons"),
        note="γ > 0: raters prefer what they saw first, after the systems' strengths; first_share is "
        "the raw share of comparisons the first shown won (ties as halves).",
    )


def strength_rows(prefix: str, group: dict, systems: list[str], data: bt.Comparisons) -> list[ReportRow]:
    """``<prefix>.strength`` and ``<prefix>.rank`` per system, ``<prefix>.position_bias`` once;
    nothing without comparisons. With one item there is a strength but no interval."""
    present = np.unique(np.concatenate([data.first, data.second]))
    if present.size < 2:
        return []
    # Systems this question never compared are left out (they would count as rivals of
    # unknown strength in every rank interval).
    code_of = np.full(len(systems), -1, dtype=np.int64)
    code_of[present] = np.arange(present.size)
    data = bt.Comparisons(
        code_of[data.first], code_of[data.second], data.outcome, data.cluster, data.participant
    )
    systems = [systems[i] for i in present]
    ranking = bt.rank_systems(data, len(systems))
    if ranking is None:
        fitted = bt.fit(data, len(systems))
        reason = "intervals need comparisons on two or more items"
        return [
            row(
                f"{prefix}.strength",
                {**group, "system": s},
                Estimate(float(v), n=len(data)),
                **_model(),
                note=reason,
            )
            for s, v in zip(systems, fitted.strengths, strict=True)
        ]
    rows = []
    for code in np.argsort(-ranking.strengths, kind="stable"):  # the table lists the strongest first
        system = systems[code]
        at = {**group, "system": system}
        strength = Estimate(float(ranking.strengths[code]), n=len(data))
        extra = {
            **_model(),
            "se": float(ranking.se[code]),
            "items": ranking.clusters,
            "participants": ranking.participants,
            "df": float(ranking.df[code]),
        }
        if code in ranking.unbounded:
            extra["note"] = "never lost or never won: the strength is bounded by the ridge only, no interval"
            rows.append(row(f"{prefix}.strength", at, strength, **extra))
        else:
            interval = Interval(float(ranking.low[code]), float(ranking.high[code]), ranking.method)
            rows.append(row(f"{prefix}.strength", at, strength, interval, **extra))
        rank = Interval(float(ranking.rank_low[code]), float(ranking.rank_high[code]), RANK_METHOD)
        rows.append(row(f"{prefix}.rank", at, Estimate(float(ranking.rank[code]), n=len(data)), rank))
    rows += _position_rows(prefix, group, len(systems), data)
    return rows


def _position_rows(prefix: str, group: dict, n_systems: int, data: bt.Comparisons) -> list[ReportRow]:
    bias = bt.position_bias(data, n_systems)
    if bias is None:
        return []
    interval = Interval(bias.low, bias.high, bias.method)
    estimate = Estimate(bias.gamma, n=len(data))
    details = {
        "first_share": bias.first_share,
        "comparisons": len(data),
        "items": bias.clusters,
        "participants": bias.participants,
        "df": bias.df,
    }
    return [row(f"{prefix}.position_bias", group, estimate, interval, **details)]


def _model() -> dict:
    return {"model": "bradley-terry", "ties": "halves", "ridge": bt.RIDGE}


WIN_NOTE = (
    "Two-sided test per pair of systems that each wins half the time, its comparisons clustered "
    "by item and participant (cluster-robust t; a pair one side always won: the sign test over "
    "items), Holm-corrected within a {family}. Ties give no win."
)


def win_figures(found: WinTests) -> list[tuple[int, int, Estimate, dict]]:
    """Per ordered pair of systems that met: ``(i, j, wins of i over j, details)``, the
    details the wins tables show (losses, win rate, the pair's two-sided p and its Holm
    adjustment, and the test: its method, t and degrees of freedom, or why it is undefined)."""
    wins = found.wins
    out = []
    for i, j in itertools.permutations(range(len(wins)), 2):
        met = int(wins[i, j] + wins[j, i])
        if met == 0:
            continue
        test = found.tests[(min(i, j), max(i, j))]
        details: dict = {
            "losses": int(wins[j, i]),
            "win_rate": wins[i, j] / met,
            "p_value": found.p[i, j],
            "p_holm": found.p_holm[i, j],
            "test": test.details.get("method", ""),
            "units": test.details.get("units"),
        }
        if "statistic" in test.details:
            details["statistic"] = test.details["statistic"] * (1 if i < j else -1)
            details["df"] = test.details["df"]
        if test.reason:
            details["test_reason"] = test.reason
        out.append((i, j, Estimate(float(wins[i, j]), n=met), details))
    return out
