"""MOST/LEAST ranking (ROME): choice counts, best-worst scores, wins, and Bradley-Terry
strengths with intervals, rank intervals and the position bias (``answer.shown`` is the
display order)."""

from __future__ import annotations

import numpy as np

from stats import bradley_terry as bt
from stats import ranking as bws
from stats.estimate import Estimate
from stats.groups import grouped_means

from .base import (
    Comparisons,
    Field,
    KindReport,
    PlotSpec,
    ReportRow,
    StudyData,
    TableSpec,
    mean_row,
    row,
)
from .strengths import position_table, strength_rows, strength_table

# Split-half reliability repeats its random split up to this many times, fewer for very
# large studies (each split reads every response once).
SPLITS = 100
SPLIT_BUDGET = 20_000_000


class RankingReport(KindReport):
    response_fields = {"shown": Field("answer__shown", "json"), "choices": Field("answer__choices", "json")}
    tables = (
        TableSpec(
            "MOST / middle / LEAST per system",
            (
                "ranking.most",
                "ranking.middle",
                "ranking.least",
                "ranking.bws",
                "ranking.mean_rank",
            ),
            ("criterion", "system"),
        ),
        strength_table("ranking", "criterion", "Bradley-Terry strengths and ranks per system"),
        position_table("ranking", "criterion"),
        TableSpec(
            "Pairwise wins (implied rankings) with sign tests",
            ("ranking.wins",),
            ("criterion", "system", "over"),
            details=("losses", "win_rate", "p_value", "p_holm"),
            note="Two-sided sign test per pair of systems, Holm-corrected within a criterion. Each pair "
            "once, from the side of the winner.",
            pair=("system", "over"),
            pair_prefer="win_rate",
        ),
        TableSpec(
            "Split-half reliability of best-worst scores",
            ("ranking.split_half",),
            ("criterion",),
            details=("spearman_brown", "splits"),
        ),
    )
    plots = (
        PlotSpec(
            "bws",
            "Best-worst score per system (95% CI)",
            "ranking.bws",
            "system",
            hue="criterion",
            ylabel="(most − least) / shown",
        ),
    )

    def rows(self, data: StudyData, *, embed=None) -> list[ReportRow]:
        systems, shown = _shown_codes(data.responses["shown"])
        rows = []
        for criterion in criteria(data):
            most, least = _choice_codes(data.responses["choices"], criterion, systems)
            flat = bws.appearances(shown, most, least)
            rows += _criterion_rows(criterion, systems, flat, data.responses["item"])
            compared = bt.from_best_worst(shown, most, least, data.responses["item"])
            rows += strength_rows("ranking", {"criterion": criterion}, systems, compared)
        return rows

    def comparisons(self, data: StudyData) -> list[Comparisons]:
        """Per criterion, the shown systems with MOST and LEAST."""
        systems, shown = _shown_codes(data.responses["shown"])
        out = []
        for criterion in criteria(data):
            most, least = _choice_codes(data.responses["choices"], criterion, systems)
            questions = (criterion, f"{criterion}.most", f"{criterion}.least")
            out.append(Comparisons(questions, systems, shown, most, least))
        return out


def criteria(data: StudyData) -> list[str]:
    """The study's criteria in the kind's order (its stored, validated config)."""
    return [c["id"] for c in data.config["criteria"]]


def _criterion_rows(
    criterion: str, systems: list[str], flat: bws.Appearances, items: np.ndarray
) -> list[ReportRow]:
    rows = _count_rows(criterion, systems, flat)
    names = np.asarray(systems, dtype=object)[flat.system] if len(flat.system) else np.array([], dtype=object)
    for metric, values in (("ranking.bws", flat.score), ("ranking.mean_rank", flat.rank)):
        for mean in grouped_means(values, names, label=f"{metric}|{criterion}"):
            rows.append(mean_row(metric, {"criterion": criterion, "system": mean.key[0]}, mean))
    wins = bws.win_matrix(flat, len(systems))
    rows += _win_rows(criterion, systems, wins)
    splits = max(10, min(SPLITS, SPLIT_BUDGET // max(len(flat.system), 1)))
    reliability = bws.split_half_reliability(items, flat, len(systems), splits=splits)
    rows.append(row("ranking.split_half", {"criterion": criterion}, reliability))
    return rows


def _count_rows(criterion: str, systems: list[str], flat: bws.Appearances) -> list[ReportRow]:
    counts = bws.choice_counts(flat, len(systems))
    rows = []
    for code, system in enumerate(systems):
        shown = int(counts["shown"][code])
        if shown == 0:
            continue
        for choice in ("most", "middle", "least"):
            count = int(counts[choice][code])
            group = {"criterion": criterion, "system": system}
            rows.append(row(f"ranking.{choice}", group, Estimate(float(count), n=shown), share=count / shown))
    return rows


def _win_rows(criterion: str, systems: list[str], wins: np.ndarray) -> list[ReportRow]:
    raw, adjusted = bws.sign_tests(wins)
    rows = []
    for i, system in enumerate(systems):
        for j, over in enumerate(systems):
            met = int(wins[i, j] + wins[j, i])
            if i == j or met == 0:
                continue
            group = {"criterion": criterion, "system": system, "over": over}
            details = {
                "losses": int(wins[j, i]),
                "win_rate": wins[i, j] / met,
                "p_value": raw[i, j],
                "p_holm": adjusted[i, j],
            }
            rows.append(row("ranking.wins", group, Estimate(float(wins[i, j]), n=met), **details))
            if i < j:
                test = Estimate(float(adjusted[i, j]), n=met)
                rows.append(row("ranking.sign_test", group, test, p_value=raw[i, j], wins=int(wins[i, j])))
    return rows


def _shown_codes(shown_lists: np.ndarray) -> tuple[list[str], np.ndarray]:
    """System names (sorted) and a responses × k matrix of their codes (-1 padding)."""
    systems = sorted({system for shown in shown_lists if shown for system in shown})
    code = {system: index for index, system in enumerate(systems)}
    width = max((len(shown) for shown in shown_lists if shown), default=0)
    matrix = np.full((len(shown_lists), width), -1, dtype=np.int64)
    for r, shown in enumerate(shown_lists):
        if shown:
            matrix[r, : len(shown)] = [code[system] for system in shown]
    return systems, matrix


def _choice_codes(choices: np.ndarray, criterion: str, systems: list[str]) -> tuple[np.ndarray, np.ndarray]:
    code: dict[str | None, int] = {system: index for index, system in enumerate(systems)}
    most = np.full(len(choices), -1, dtype=np.int64)
    least = np.full(len(choices), -1, dtype=np.int64)
    for r, answer in enumerate(choices):
        choice = (answer or {}).get(criterion) or {}
        most[r] = code.get(choice.get("most"), -1)
        least[r] = code.get(choice.get("least"), -1)
    return most, least
