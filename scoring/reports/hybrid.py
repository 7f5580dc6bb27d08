"""Figures that combine the human answers with a judge's (a model participant that answered
the items): per mean, difference between systems and win rate, three intervals side by side
(humans only, judge only, prediction-powered: ``stats.ppi``), the tuning weight λ and the
number of human answers the judge was worth.

The humans are meant to answer a random subset of the items (the study's ``human_subset``
design, whose inclusion probability each item logs); the judge answers every item. Pairs
are made by the agreement observations' unit (an item, or an item's part), so every kind
whose answers are numbers on a scale gets the means and differences without code of its
own; a kind that compares systems (``KindReport.comparisons``) gets the win rates. Answers
are clustered by item, and by participant where the humans cross items, as the humans-only
figures are.

Warnings (detail ``warning``): the judge adds nothing (λ near 0: the figure is the humans'
own), or it disagrees with the humans beyond the margin the calibration rows already
measure (``agreement.rater_calibration`` says ``not calibrated`` for it and the question).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from stats import bradley_terry as bt
from stats.bootstrap import Interval
from stats.clustered import clipped
from stats.estimate import Estimate
from stats.groups import factorize
from stats.ppi import NO_GAIN_LAMBDA, PPIFit, Side, clustered_contrast, ppi_contrast
from stats.ppi_ranking import PPIStrengths, ppi_strengths
from stats.raters import NOT_CALIBRATED

from .agreement import NUMERIC_LEVELS, numbers_or_text
from .base import KindReport, ReportRow, StudyData, TableSpec, row

ALL_SYSTEMS = "all systems"
NO_GAIN = "judge adds nothing"
DISAGREES = "judge not calibrated"
BOTH = f"{NO_GAIN}; {DISAGREES}"
# the design the figures rest on (detail ``design``)
LOGGED = "inclusion probabilities logged per item"
ASSUMED = "no design logged: humans' items taken as a uniform random subset"

THREE = ("prediction-powered", "humans only", "judge only")  # the three intervals' columns
_NOTE = (
    "Prediction-powered (PPI++, power-tuned): the judge's answers on every item, corrected by "
    "its error on the items humans answered; never wider than humans only. effective n: the "
    "human answers a humans-only interval would need to be as narrow. Clustered by item and, "
    "where they cross items, by participant; see docs/statistics.md."
)
MEAN_TABLE = TableSpec(
    "Humans and judge combined: mean per question and system (95% CI)",
    ("hybrid.mean", "hybrid.mean_humans", "hybrid.mean_judge"),
    ("question", "system", "rater"),
    details=("lam", "effective_n", "n_judge", "warning"),
    note=_NOTE,
    labels=THREE,
    marks=frozenset({NO_GAIN, DISAGREES, BOTH}),
)
DIFFERENCE_TABLE = TableSpec(
    "Humans and judge combined: difference between systems, system − over (95% CI)",
    ("hybrid.difference", "hybrid.difference_humans", "hybrid.difference_judge"),
    ("question", "system", "over", "rater"),
    details=("lam", "effective_n", "warning"),
    note=_NOTE,
    labels=THREE,
    marks=MEAN_TABLE.marks,
)
WIN_RATE_TABLE = TableSpec(
    "Humans and judge combined: win rate of system over another (ties count half, 95% CI)",
    ("hybrid.win_rate", "hybrid.win_rate_humans", "hybrid.win_rate_judge"),
    ("question", "system", "over", "rater"),
    details=("lam", "effective_n", "warning"),
    note=_NOTE,
    labels=THREE,
    marks=MEAN_TABLE.marks,
)
STRENGTH_TABLE = TableSpec(
    "Humans and judge combined: Bradley-Terry strength per system (95% CI) and rank set",
    ("hybrid.strength", "hybrid.strength_humans", "hybrid.strength_judge"),
    ("question", "system", "rater"),
    details=("rank_low", "rank_high", "humans_rank_low", "humans_rank_high", "lam", "effective_n", "warning"),
    note="Strengths (log-odds, mean zero) of the prediction-powered Bradley-Terry fit beside the "
    "humans' and the judge's own; rank sets hold for all systems at once (Bonferroni over pairs). " + _NOTE,
    labels=THREE,
    marks=MEAN_TABLE.marks,
)
TABLES = (MEAN_TABLE, DIFFERENCE_TABLE, WIN_RATE_TABLE, STRENGTH_TABLE)


@dataclass(frozen=True)
class Answers:
    """One question's answers of humans and judges, each with the key that pairs a human's
    answer with a judge's (``pair``: a unit), its item row, participant row and group."""

    values: np.ndarray
    pair: np.ndarray
    item: np.ndarray
    participant: np.ndarray
    machine: np.ndarray
    # per answer, the system it is about where that is not its item's (a questionnaire's
    # question asked per passage: its passage's, ``KindReport.observation_systems``)
    system: np.ndarray | None = None


def hybrid_rows(builder: KindReport, data: StudyData, earlier: Sequence[ReportRow]) -> list[ReportRow]:
    """Every hybrid figure of one population (``data``: every answer, machines' too);
    ``earlier``: the rows computed before, whose calibration verdicts give the warnings."""
    machine = data.machine_responses()
    if not machine.any() or machine.all():
        return []
    verdicts = {
        (r.group.get("rater"), r.group.get("question")): r.details.get("calibrated")
        for r in earlier
        if r.metric == "agreement.rater_calibration"
    }
    context = _Context.of(data, verdicts)
    rows = []
    for question, answers in _scale_answers(data, machine, builder.observation_systems(data)):
        rows += _scale_rows(context, question, answers, _scale_range(data.config, question))
    for comparison in builder.comparisons(data):
        rows += _win_rate_rows(context, comparison, data, machine)
        rows += _strength_rows(context, comparison, data, machine)
    return rows


@dataclass(frozen=True)
class _Context:
    systems: np.ndarray | None  # per item, its system (codes) or None
    system_names: np.ndarray
    inclusion: np.ndarray  # per item, π (NaN: none logged)
    drawn: np.ndarray  # per item, whether a logged design gave it to people
    names: np.ndarray  # per participant row, a machine's name
    verdicts: dict

    @classmethod
    def of(cls, data: StudyData, verdicts: dict) -> _Context:
        systems, names = None, np.array([], dtype=object)
        if "provenance:system" in data.items:
            names, systems = data.items.factorized("provenance:system")
        inclusion = (
            np.asarray(data.items["inclusion"], dtype=np.float64)
            if "inclusion" in data.items
            else np.full(len(data.items), np.nan)
        )
        drawn = ~np.isnan(inclusion)
        if "for_humans" in data.items:
            drawn &= np.asarray(data.items["for_humans"], dtype=bool)
        return cls(systems, names, inclusion, drawn, data.participants["name"], verdicts)

    def weights(self, items: np.ndarray, labeled: bool) -> tuple[np.ndarray, str]:
        """Inverse inclusion probabilities (1/π for the human side, 1/(1 − π) for the judge's
        items no human had) where every item of the figure logs one, else equal weights."""
        found = self.inclusion[items]
        if labeled and items.size and np.all((found > 0) & (found <= 1)):
            return 1 / found, LOGGED
        if not labeled and np.all(found < 1):  # never 1: an item of probability 1 is drawn
            return 1 / (1 - found), LOGGED
        return np.ones(items.size), ASSUMED


def _scale_answers(data: StudyData, machine: np.ndarray, systems: np.ndarray | None):
    """Per question with numbers on a scale: its answers (``systems``: per observation, the
    system it is about where that is not its item's, else None)."""
    observations = data.observations
    if not len(observations):
        return
    response = observations["response"]
    questions, question_codes = factorize(observations["question"])
    for code, question in enumerate(questions):
        at = question_codes == code
        levels = set(np.asarray(observations["level"])[at].tolist())
        if len(levels) != 1 or next(iter(levels)) not in NUMERIC_LEVELS:
            continue
        values = numbers_or_text(np.asarray(observations["value"])[at], next(iter(levels)))
        if values is None:
            continue
        taken = response[at]
        own = systems[at] if systems is not None and any(x is not None for x in systems[at]) else None
        yield (
            str(question),
            Answers(
                values,
                np.asarray(observations["unit"])[at],
                data.responses["item"][taken],
                data.responses["participant"][taken],
                machine[taken],
                own,
            ),
        )


@dataclass(frozen=True)
class _Sets:
    labeled: Side
    judge: Side
    unlabeled: Side
    judged: Side  # the judge's answer on every unit it answered (the judge-only figure)
    design: str


def _sets(context: _Context, answers: Answers, rater: int, groups: np.ndarray) -> _Sets | None:
    """The human answers paired with this judge's (per unit: its mean answer there) and the
    judge's answers on the units no human answered; None when either is empty (a judge beside
    humans who answered every item is the calibration rows' business: no hybrid rows).
    ``groups``: per answer, its group (a system's code; the answers of a unit share one)."""
    keep = ~np.isnan(answers.values)
    pair_labels, pair = factorize(answers.pair[keep])
    values, item, group = answers.values[keep], answers.item[keep], groups[keep]
    person, is_machine = answers.participant[keep], answers.machine[keep]
    mine = is_machine & (person == rater)
    units = len(pair_labels)
    judged_count = np.bincount(pair[mine], minlength=units)
    if not judged_count.any():
        return None
    judge_value = np.bincount(pair[mine], weights=values[mine], minlength=units) / np.maximum(judged_count, 1)
    human = ~is_machine & (judged_count[pair] > 0)
    humans_at = np.bincount(pair[human], minlength=units) > 0
    unit_item = np.zeros(units, dtype=np.intp)
    unit_item[pair] = item
    unit_group = np.zeros(units, dtype=np.intp)
    unit_group[pair] = group
    judged = np.flatnonzero(judged_count > 0)
    alone = judged[~humans_at[judged]]
    w_labeled, design = context.weights(item[human], True)
    if design == LOGGED:
        # an item the design gave to people that none answered yet is neither: the answered
        # ones are a random subset of the drawn ones, the judge's alone the undrawn ones
        alone = alone[~context.drawn[unit_item[alone]]]
        w_alone, _ = context.weights(unit_item[alone], False)
    else:
        w_alone = np.ones(alone.size)
    if alone.size == 0 or not human.any():  # nothing to combine: the humans answered every item, or none
        return None
    labeled_items = item[human]
    return _Sets(
        labeled=Side.of(values[human], labeled_items, group[human], w_labeled, person[human]),
        judge=Side.of(judge_value[pair[human]], labeled_items, group[human], w_labeled),
        unlabeled=Side.of(judge_value[alone], unit_item[alone], unit_group[alone], w_alone),
        judged=Side.of(judge_value[judged], unit_item[judged], unit_group[judged]),
        design=design,
    )


def _raters(answers: Answers) -> list[int]:
    return sorted({int(p) for p in np.unique(answers.participant[answers.machine])})


def _scale_range(config: dict, question: str) -> tuple[float, float] | None:
    """The points a scale question's answers can take (1 to its ``points``); None where the
    study's questions do not say (the intervals are then left as computed)."""
    for asked in config.get("questions") or []:
        if asked.get("id") == question and asked.get("type") == "scale":
            return (1.0, float(asked.get("points", 5)))
    return None


def _scale_rows(
    context: _Context, question: str, answers: Answers, scale: tuple[float, float] | None
) -> list[ReportRow]:
    """Per machine rater: the pooled mean, each system's mean and each difference of two
    systems, as humans, judge and combined, each interval clipped to what the scale allows."""
    rows = []
    spread = None if scale is None else (scale[0] - scale[1], scale[1] - scale[0])
    pooled_groups = np.zeros(len(answers.values), dtype=np.intp)
    names, systems = _answer_systems(context, answers)
    for rater in _raters(answers):
        name = str(context.names[rater])
        verdict = context.verdicts.get((name, question))
        pooled = _sets(context, answers, rater, pooled_groups)
        if pooled is None:
            continue
        base = {"question": question, "rater": name}
        rows += _triple("hybrid.mean", {**base, "system": ALL_SYSTEMS}, pooled, np.ones(1), verdict, scale)
        if systems is None or len(names) < 2:  # one system: the pooled mean
            continue
        by_system = _sets(context, answers, rater, systems)
        assert by_system is not None  # the same answers as ``pooled``
        for k, system in enumerate(names):
            contrast = np.zeros(len(names))
            contrast[k] = 1.0
            rows += _triple(
                "hybrid.mean", {**base, "system": str(system)}, by_system, contrast, verdict, scale
            )
        for i in range(len(names)):
            for j in range(i + 1, len(names)):
                contrast = np.zeros(len(names))
                contrast[i], contrast[j] = 1.0, -1.0
                group = {**base, "system": str(names[i]), "over": str(names[j])}
                rows += _triple("hybrid.difference", group, by_system, contrast, verdict, spread)
    return rows


def _answer_systems(context: _Context, answers: Answers) -> tuple[np.ndarray, np.ndarray | None]:
    """(system names, per answer its system's code): the answer's own system where it has
    one (a passage's), else its item's; no codes where the items name no systems."""
    if answers.system is not None:
        return factorize(np.asarray([str(x or "") for x in answers.system], dtype=object))
    if context.systems is None:
        return context.system_names, None
    return context.system_names, context.systems[answers.item]


def _question_of(context: _Context, comparison, rater: str) -> tuple[str, object]:
    """(the question a comparison's rows name: its own id, the first of the observations'
    questions it stands for; the calibration verdict of the first of them that has one)."""
    questions = comparison.questions or ("preference",)
    verdicts = (context.verdicts.get((rater, q)) for q in questions)
    return questions[0], next((v for v in verdicts if v is not None), None)


def _win_rate_rows(context: _Context, comparison, data: StudyData, machine: np.ndarray) -> list[ReportRow]:
    """Per pair of systems shown together: the share of answers preferring the first (a
    tie or neither: one half), as humans, judge and combined."""
    rows = []
    shown, best = comparison.shown, comparison.best
    item = data.responses["item"]
    participant = data.responses["participant"]
    names = comparison.names
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            both = np.any(shown == i, axis=1) & np.any(shown == j, axis=1)
            if not both.any():
                continue
            value = np.where(best[both] == i, 1.0, np.where(best[both] == j, 0.0, 0.5))
            taken = item[both]
            answers = Answers(value, taken, taken, participant[both], machine[both])
            groups = np.zeros(len(value), dtype=np.intp)
            for rater in _raters(answers):
                name = str(context.names[rater])
                sets = _sets(context, answers, rater, groups)
                if sets is None:
                    continue
                question, verdict = _question_of(context, comparison, name)
                group = {"question": question, "system": str(names[i]), "over": str(names[j]), "rater": name}
                rows += _triple("hybrid.win_rate", group, sets, np.ones(1), verdict, (0.0, 1.0))
    return rows


def _triple(
    metric: str,
    group: dict,
    sets: _Sets,
    contrast: np.ndarray,
    verdict,
    bounds: tuple[float, float] | None = None,
) -> list[ReportRow]:
    """The PPI row (``metric``) and the humans-only and judge-only rows beside it; the PPI
    row also carries the other two intervals, so that one row of the API or an export has
    all three. ``bounds``: the figure's possible range, which every interval is clipped to
    (as the human-only figures are, ``stats.clustered.clipped``)."""

    def bounded(interval: Interval) -> Interval:
        return interval if bounds is None else clipped(interval, bounds)

    fit = ppi_contrast(sets.labeled, sets.judge, sets.unlabeled, contrast)
    judged = clustered_contrast(sets.judged, contrast)
    if judged is not None:
        judged = (judged[0], bounded(judged[1]))
    judge_row = (
        row(f"{metric}_judge", group, Estimate(judged[0], n=int(sets.judged.values.size)), judged[1])
        if judged is not None
        else row(f"{metric}_judge", group, Estimate.undefined("the judge answered fewer than two items"))
    )
    if fit is None:
        reason = "needs human answers on two items or more and judge answers on items without one"
        undefined = Estimate.undefined(reason, n=int(sets.labeled.values.size))
        return [row(metric, group, undefined), row(f"{metric}_humans", group, undefined), judge_row]
    ppi, humans = bounded(fit.interval()), bounded(fit.humans_interval())
    details = _details(fit, humans, judged[1] if judged else None, verdict, sets.design)
    return [
        row(metric, group, Estimate(fit.estimate, n=fit.n), ppi, **details),
        row(f"{metric}_humans", group, Estimate(fit.humans, n=fit.n), humans),
        judge_row,
    ]


def _details(fit: PPIFit, humans: Interval, judged: Interval | None, verdict, design: str) -> dict:
    warnings = [NO_GAIN] if fit.no_gain else []
    if verdict == NOT_CALIBRATED:
        warnings.append(DISAGREES)
    return {
        "lam": round(fit.lam, 4),
        "effective_n": None if math.isnan(fit.effective_n) else round(fit.effective_n, 1),
        "n_judge": fit.n_judge,
        "rectifier": fit.rectifier,
        "rectifier_se": fit.rectifier_se,
        "se": fit.se,
        "df": fit.df,
        "humans_low": humans.low,
        "humans_high": humans.high,
        "judge_low": judged.low if judged else None,
        "judge_high": judged.high if judged else None,
        "warning": "; ".join(warnings),
        "design": design,
    }


def question_fit(
    builder: KindReport, data: StudyData, question: str, compare: tuple[str, str] | None = None
) -> tuple[str, PPIFit] | None:
    """The PPI++ fit of ``question``'s mean over every system (or of the difference of the
    systems ``compare``) with its judge (the first by name, where several answered), as the
    reports compute it: what ``plan`` scales to another design. ``data``: every answer of
    the population, machines' too. None without a judge or enough answers."""
    machine = data.machine_responses()
    context = _Context.of(data, {})
    for name, answers in _scale_answers(data, machine, builder.observation_systems(data)):
        if name != question:
            continue
        names, systems = _answer_systems(context, answers)
        for rater in sorted(_raters(answers), key=lambda r: str(context.names[r])):
            if compare is None:
                groups, contrast = np.zeros(len(answers.values), dtype=np.intp), np.ones(1)
            else:
                known = [str(n) for n in names]
                if systems is None or not set(compare) <= set(known):
                    return None
                contrast = np.zeros(len(known))
                contrast[known.index(compare[0])], contrast[known.index(compare[1])] = 1.0, -1.0
                groups = systems
            sets = _sets(context, answers, rater, groups)
            fit = None if sets is None else ppi_contrast(sets.labeled, sets.judge, sets.unlabeled, contrast)
            if fit is not None:
                return str(context.names[rater]), fit
    return None


def _strength_rows(context: _Context, comparison, data: StudyData, machine: np.ndarray) -> list[ReportRow]:
    """Per system: the prediction-powered Bradley-Terry strength and rank set beside the
    humans' and the judge's own (``stats.ppi_ranking``); comparisons as the ranking
    report breaks them (``bradley_terry.from_best_worst`` / ``from_picks``), clustered by
    item and participant. A human comparison is paired with the judge's mean outcome on
    the same item and pair of systems."""
    item, participant = data.responses["item"], data.responses["participant"]
    names, k = comparison.names, len(comparison.names)
    humans = _broken(comparison, ~machine, item, participant)
    rows: list[ReportRow] = []
    for rater in sorted({int(p) for p in np.unique(participant[machine])}):
        judged = _broken(comparison, machine & (participant == rater), item, participant)
        if len(judged) == 0 or len(humans) == 0:
            continue
        paired = _paired_judge(humans, judged, k, context.drawn)
        if paired is None:
            continue
        labeled, judge, unlabeled = paired
        name = str(context.names[rater])
        question, verdict = _question_of(context, comparison, name)
        w_labeled, design = context.weights(labeled.cluster, True)
        w_alone = np.ones(len(unlabeled))
        if design == LOGGED:  # weighed as the means are (``_Context.weights``)
            w_alone = context.weights(unlabeled.cluster, False)[0]
        fit = ppi_strengths(labeled, judge, unlabeled, k, weights=(w_labeled, w_alone))
        alone = bt.rank_systems(judged, k)
        for s, system in enumerate(names):
            group = {"question": question, "system": str(system), "rater": name}
            rows += _strength_triple(group, s, fit, alone, verdict, design)
    return rows


def _broken(comparison, mask: np.ndarray, item: np.ndarray, participant: np.ndarray) -> bt.Comparisons:
    shown, best = comparison.shown[mask], comparison.best[mask]
    if comparison.worst is not None:
        return bt.from_best_worst(shown, best, comparison.worst[mask], item[mask], participant[mask])
    return bt.from_picks(shown, best, np.zeros(len(best), dtype=bool), item[mask], participant[mask])


def _paired_judge(
    humans: bt.Comparisons, judged: bt.Comparisons, k: int, drawn: np.ndarray
) -> tuple[bt.Comparisons, np.ndarray, bt.Comparisons] | None:
    """The human comparisons the judge made too (same item and pair), the judge's mean
    outcome on each in its orientation, and the judge's comparisons on items without humans
    (nor drawn for them by a logged design)."""

    def keys(data: bt.Comparisons) -> np.ndarray:
        low, high = np.minimum(data.first, data.second), np.maximum(data.first, data.second)
        return (data.cluster.astype(np.int64) * k + low) * k + high

    def oriented(data: bt.Comparisons) -> np.ndarray:  # the outcome for (low, high)
        return np.where(data.first < data.second, data.outcome, 1 - data.outcome)

    judge_keys, judge_codes = np.unique(keys(judged), return_inverse=True)
    means = np.bincount(judge_codes, oriented(judged)) / np.bincount(judge_codes)
    human_keys = keys(humans)
    where = np.searchsorted(judge_keys, human_keys)
    found = (where < judge_keys.size) & (judge_keys[np.minimum(where, judge_keys.size - 1)] == human_keys)
    if not found.any():
        return None
    mean = means[where[found]]
    first, second = humans.first[found], humans.second[found]
    judge = np.where(first < second, mean, 1 - mean)
    people = None if humans.participant is None else humans.participant[found]
    labeled = bt.Comparisons(first, second, humans.outcome[found], humans.cluster[found], people)
    alone = ~np.isin(judged.cluster, humans.cluster) & ~drawn[judged.cluster]
    unlabeled = bt.Comparisons(
        judged.first[alone], judged.second[alone], judged.outcome[alone], judged.cluster[alone]
    )
    if len(unlabeled) == 0:
        return None
    return labeled, judge, unlabeled


def _strength_triple(
    group: dict, s: int, fit: PPIStrengths | None, alone, verdict, design: str
) -> list[ReportRow]:
    """The three strength rows of system ``s`` (``alone``: the judge's own ranking)."""
    if alone is not None:
        judged = Interval(float(alone.low[s]), float(alone.high[s]), alone.method)
        judge_row = row(
            "hybrid.strength_judge", group, Estimate(float(alone.strengths[s]), n=alone.clusters), judged
        )
    else:
        undefined = Estimate.undefined("the judge compared systems on fewer than two items")
        judge_row = row("hybrid.strength_judge", group, undefined)
    if fit is None:
        undefined = Estimate.undefined(
            "needs human comparisons on two items or more and judge comparisons on others"
        )
        return [
            row("hybrid.strength", group, undefined),
            row("hybrid.strength_humans", group, undefined),
            judge_row,
        ]
    warnings = [NO_GAIN] if fit.lam < NO_GAIN_LAMBDA else []
    if verdict == NOT_CALIBRATED:
        warnings.append(DISAGREES)
    method = "prediction-powered Bradley-Terry (PPI++), cluster-robust t"
    details = {
        "rank_low": int(fit.rank_low[s]),
        "rank_high": int(fit.rank_high[s]),
        "humans_rank_low": int(fit.humans_rank_low[s]),
        "humans_rank_high": int(fit.humans_rank_high[s]),
        "lam": round(fit.lam, 4),
        "effective_n": round(fit.effective_n, 1),
        "n_judge": fit.n_judge,
        "df": fit.df,
        "humans_low": float(fit.humans_low[s]),
        "humans_high": float(fit.humans_high[s]),
        "judge_low": float(alone.low[s]) if alone is not None else None,
        "judge_high": float(alone.high[s]) if alone is not None else None,
        "warning": "; ".join(warnings),
        "design": design,
    }
    return [
        row("hybrid.strength", group, Estimate(float(fit.strengths[s]), n=fit.n),
            Interval(float(fit.low[s]), float(fit.high[s]), method), **details),
        row("hybrid.strength_humans", group, Estimate(float(fit.humans[s]), n=fit.n),
            Interval(float(fit.humans_low[s]), float(fit.humans_high[s]), "humans only, cluster-robust t")),
        judge_row,
    ]  # fmt: skip
