"""MOST/LEAST ranking (ROME): choice counts, best-worst scores, wins, and Bradley-Terry
strengths with intervals, rank intervals and the position bias (``answer.shown`` is the
display order)."""

from __future__ import annotations

import numpy as np

from stats import bradley_terry as bt
from stats import ranking as bws
from stats.clustered import clustered_group_means
from stats.estimate import Estimate

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
from .strengths import WIN_NOTE, position_table, strength_rows, strength_table, win_figures

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
            "Pairwise wins (implied rankings) per pair of systems (two-sided tests)",
            ("ranking.wins",),
            ("criterion", "system", "over"),
            details=("losses", "win_rate", "p_value", "p_holm"),
            note=WIN_NOTE.format(family="criterion") + " Each pair once, from the side of the winner.",
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
        item, participant = data.responses["item"], data.responses["participant"]
        rows = []
        for criterion in criteria(data):
            most, least = _choice_codes(data.responses["choices"], criterion, systems)
            flat = bws.appearances(shown, most, least)
            rows += _criterion_rows(criterion, systems, flat, item, participant)
            # the wins and strengths cluster by item, and by participant where participants cross items
            compared = bt.from_best_worst(shown, most, least, item, participant)
            rows += _win_rows(criterion, systems, compared)
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
    criterion: str, systems: list[str], flat: bws.Appearances, items: np.ndarray, participants: np.ndarray
) -> list[ReportRow]:
    """Counts, and the best-worst score and mean rank per system with intervals clustered by
    item and participant (each clipped to its range: −1 … 1, 1 … k)."""
    rows = _count_rows(criterion, systems, flat)
    names = np.asarray(systems, dtype=object)[flat.system] if len(flat.system) else np.array([], dtype=object)
    units, raters = items[flat.response], participants[flat.response]
    widest = float(flat.shown_count.max(initial=1.0))
    for metric, values, bounds in (
        ("ranking.bws", flat.score, (-1.0, 1.0)),
        ("ranking.mean_rank", flat.rank, (1.0, widest)),
    ):
        for mean in clustered_group_means(values, names, units, raters, bounds=bounds):
            rows.append(mean_row(metric, {"criterion": criterion, "system": mean.key[0]}, mean))
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


def _win_rows(criterion: str, systems: list[str], compared: bt.Comparisons) -> list[ReportRow]:
    """``ranking.wins`` per ordered pair and ``ranking.sign_test`` once per pair: the
    two-sided test of a win rate of one half clustered by item and participant (the
    comparisons' ``cluster`` and ``participant``), Holm over the criterion's pairs
    (``stats.ranking.win_tests``)."""
    found = bws.win_tests(
        compared.first,
        compared.second,
        compared.outcome,
        compared.cluster,
        compared.participant,
        n_systems=len(systems),
    )
    rows = []
    for i, j, estimate, details in win_figures(found):
        group = {"criterion": criterion, "system": systems[i], "over": systems[j]}
        rows.append(row("ranking.wins", group, estimate, **details))
        if i < j:
            test = Estimate(float(found.p_holm[i, j]), n=estimate.n)
            extra = {"p_value": found.p[i, j], "wins": int(estimate.value), "test": details["test"]}
            rows.append(row("ranking.sign_test", group, test, **extra))
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
