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

from stats.bootstrap import Interval
from stats.estimate import Estimate
from stats.groups import factorize
from stats.ppi import PPIFit, Side, clustered_contrast, ppi_contrast
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
    marks=frozenset({NO_GAIN, DISAGREES, BOTH}),
)
DIFFERENCE_TABLE = TableSpec(
    "Humans and judge combined: difference between systems, system − over (95% CI)",
    ("hybrid.difference", "hybrid.difference_humans", "hybrid.difference_judge"),
    ("question", "system", "over", "rater"),
    details=("lam", "effective_n", "warning"),
    note=_NOTE,
    marks=MEAN_TABLE.marks,
)
WIN_RATE_TABLE = TableSpec(
    "Humans and judge combined: win rate of system over another (ties count half, 95% CI)",
    ("hybrid.win_rate", "hybrid.win_rate_humans", "hybrid.win_rate_judge"),
    ("question", "system", "over", "rater"),
    details=("lam", "effective_n", "warning"),
    note=_NOTE,
    marks=MEAN_TABLE.marks,
)
TABLES = (MEAN_TABLE, DIFFERENCE_TABLE, WIN_RATE_TABLE)


@dataclass(frozen=True)
class Answers:
    """One question's answers of humans and judges, each with the key that pairs a human's
    answer with a judge's (``pair``: a unit), its item row, participant row and group."""

    values: np.ndarray
    pair: np.ndarray
    item: np.ndarray
    participant: np.ndarray
    machine: np.ndarray


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
    for question, answers in _scale_answers(data, machine):
        rows += _scale_rows(context, question, answers)
    for comparison in builder.comparisons(data):
        rows += _win_rate_rows(context, comparison, data, machine)
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


def _scale_answers(data: StudyData, machine: np.ndarray):
    """Per question with numbers on a scale: its answers."""
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
        yield (
            str(question),
            Answers(
                values,
                np.asarray(observations["unit"])[at],
                data.responses["item"][taken],
                data.responses["participant"][taken],
                machine[taken],
            ),
        )


@dataclass(frozen=True)
class _Sets:
    labeled: Side
    judge: Side
    unlabeled: Side
    judged: Side  # the judge's answer on every unit it answered (the judge-only figure)
    design: str


def _sets(context: _Context, answers: Answers, rater: int, groups_of_item: np.ndarray) -> _Sets | None:
    """The human answers paired with this judge's (per unit: its mean answer there) and the
    judge's answers on the units no human answered."""
    keep = ~np.isnan(answers.values)
    pair_labels, pair = factorize(answers.pair[keep])
    values, item = answers.values[keep], answers.item[keep]
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
    labeled_items = item[human]
    return _Sets(
        labeled=Side.of(
            values[human], labeled_items, groups_of_item[labeled_items], w_labeled, person[human]
        ),
        judge=Side.of(judge_value[pair[human]], labeled_items, groups_of_item[labeled_items], w_labeled),
        unlabeled=Side.of(judge_value[alone], unit_item[alone], groups_of_item[unit_item[alone]], w_alone),
        judged=Side.of(judge_value[judged], unit_item[judged], groups_of_item[unit_item[judged]]),
        design=design,
    )


def _raters(answers: Answers) -> list[int]:
    return sorted({int(p) for p in np.unique(answers.participant[answers.machine])})


def _scale_rows(context: _Context, question: str, answers: Answers) -> list[ReportRow]:
    rows = []
    pooled_groups = np.zeros(len(context.inclusion), dtype=np.intp)
    for rater in _raters(answers):
        name = str(context.names[rater])
        verdict = context.verdicts.get((name, question))
        pooled = _sets(context, answers, rater, pooled_groups)
        if pooled is None:
            continue
        base = {"question": question, "rater": name}
        rows += _triple("hybrid.mean", {**base, "system": ALL_SYSTEMS}, pooled, np.ones(1), verdict)
        if context.systems is None:
            continue
        by_system = _sets(context, answers, rater, context.systems)
        assert by_system is not None
        names = context.system_names
        for k, system in enumerate(names):
            contrast = np.zeros(len(names))
            contrast[k] = 1.0
            rows += _triple("hybrid.mean", {**base, "system": str(system)}, by_system, contrast, verdict)
        for i in range(len(names)):
            for j in range(i + 1, len(names)):
                contrast = np.zeros(len(names))
                contrast[i], contrast[j] = 1.0, -1.0
                group = {**base, "system": str(names[i]), "over": str(names[j])}
                rows += _triple("hybrid.difference", group, by_system, contrast, verdict)
    return rows


def _win_rate_rows(context: _Context, comparison, data: StudyData, machine: np.ndarray) -> list[ReportRow]:
    """Per pair of systems shown together: the share of answers preferring the first (a
    tie or neither: one half), as humans, judge and combined."""
    rows = []
    shown, best = comparison.shown, comparison.best
    item = data.responses["item"]
    participant = data.responses["participant"]
    question = ",".join(comparison.questions) or "preference"
    names = comparison.names
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            both = np.any(shown == i, axis=1) & np.any(shown == j, axis=1)
            if not both.any():
                continue
            value = np.where(best[both] == i, 1.0, np.where(best[both] == j, 0.0, 0.5))
            taken = item[both]
            answers = Answers(value, taken, taken, participant[both], machine[both])
            groups = np.zeros(len(data.items), dtype=np.intp)
            for rater in _raters(answers):
                name = str(context.names[rater])
                sets = _sets(context, answers, rater, groups)
                if sets is None:
                    continue
                group = {"question": question, "system": str(names[i]), "over": str(names[j]), "rater": name}
                verdict = context.verdicts.get((name, question))
                rows += _triple("hybrid.win_rate", group, sets, np.ones(1), verdict)
    return rows


def _triple(metric: str, group: dict, sets: _Sets, contrast: np.ndarray, verdict) -> list[ReportRow]:
    """The PPI row (``metric``) and the humans-only and judge-only rows beside it; the PPI
    row also carries the other two intervals, so that one row of the API or an export has
    all three."""
    fit = ppi_contrast(sets.labeled, sets.judge, sets.unlabeled, contrast)
    judged = clustered_contrast(sets.judged, contrast)
    judge_row = (
        row(f"{metric}_judge", group, Estimate(judged[0], n=int(sets.judged.values.size)), judged[1])
        if judged is not None
        else row(f"{metric}_judge", group, Estimate.undefined("the judge answered fewer than two items"))
    )
    if fit is None:
        reason = "needs human answers on two items or more and judge answers on items without one"
        undefined = Estimate.undefined(reason, n=int(sets.labeled.values.size))
        return [row(metric, group, undefined), row(f"{metric}_humans", group, undefined), judge_row]
    ppi, humans = fit.interval(), fit.humans_interval()
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
    data: StudyData, question: str, compare: tuple[str, str] | None = None
) -> tuple[str, PPIFit] | None:
    """The PPI++ fit of ``question``'s mean over every system (or of the difference of the
    systems ``compare``) with its judge (the first by name, where several answered), as the
    reports compute it: what ``plan`` scales to another design. ``data``: every answer of
    the population, machines' too. None without a judge or enough answers."""
    machine = data.machine_responses()
    context = _Context.of(data, {})
    for name, answers in _scale_answers(data, machine):
        if name != question:
            continue
        for rater in sorted(_raters(answers), key=lambda r: str(context.names[r])):
            if compare is None:
                groups, contrast = np.zeros(len(context.inclusion), dtype=np.intp), np.ones(1)
            else:
                if context.systems is None:
                    return None
                names = [str(n) for n in context.system_names]
                if not set(compare) <= set(names):
                    return None
                contrast = np.zeros(len(names))
                contrast[names.index(compare[0])], contrast[names.index(compare[1])] = 1.0, -1.0
                groups = context.systems
            sets = _sets(context, answers, rater, groups)
            fit = None if sets is None else ppi_contrast(sets.labeled, sets.judge, sets.unlabeled, contrast)
            if fit is not None:
                return str(context.names[rater]), fit
    return None
