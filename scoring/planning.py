"""Planning a study from a pilot: the pilot's answers that count, read as the reports read
them, turned by ``stats.planning`` into a table of designs: the power of each to detect a
difference between two systems (``plan_comparison``), or the width of the interval of
Krippendorff's alpha each would measure (``plan_agreement``).

Only the answers that count are resampled (``StudyData.population("passed").humans()
.analysed()``, the rule of ``annotation/services/populations.py``): a flagged or excluded
participant's answers, machine raters' and adjudicators' answers and attention checks
would otherwise shape a design they will not be part of. A question's values are its
agreement observations (numbers on a scale: ordinal, interval or ratio), so any kind that
rates on a scale can be planned for; systems are the items' ``provenance.system``, and
when the kind's report reads ``provenance.source_id`` (likert) the pilot is paired by it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from annotation.errors import InputError
from annotation.models import Study
from scoring.data import DEFAULT_BY, load_study_data, one_snapshot
from scoring.reports import report_for
from scoring.reports.base import StudyData
from scoring.reports.hybrid import question_fit
from stats.planning import (
    ANSWERS_PER_ITEM,
    ITEMS,
    SIMULATIONS,
    Answers,
    DesignPower,
    DesignWidth,
    cheapest,
    narrowest_enough,
    power_table,
    width_table,
)
from stats.ppi import HumansNeeded, PPIFit, humans_needed
from stats.ppi import target_se as stats_target_se

NUMERIC_LEVELS = ("ordinal", "interval", "ratio")
SYSTEM = "provenance:system"  # the column ``by=("system",)`` reads
SOURCE = "source"  # the likert report's provenance.source_id


# The usual power and level of a planned comparison (the command's and the page's defaults).
DEFAULT_POWER = 0.8
DEFAULT_ALPHA = 0.05

# What a plan may ask for (docs/statistics.md, "Bounds"). The targets' ranges are those a
# simulation of at most MAX_SIMULATIONS studies can tell apart; the designs' keep one plan
# to about a minute of one core at most (the default designs simulate ~20 million answers).
DIFFERENCE = (0.001, 1000.0)  # points of the scale
POWER = (0.5, 0.999)
ALPHA = (0.0001, 0.5)
WIDTH = (0.001, 2.0)  # alpha lies in [-1, 1]: wider asks for nothing
MAX_PRICE = 1_000_000
MAX_ITEMS = 10_000  # per system
MAX_ANSWERS = 100  # per item
MAX_SIZES = 20  # values of --items, and of --answers
MIN_SIMULATIONS = 100
MAX_SIMULATIONS = 10_000
MAX_SIMULATED_ANSWERS = 200_000_000


@dataclass(frozen=True)
class ComparisonTarget:
    """What the planned study must detect: ``first`` and ``second`` (systems) differ by
    ``difference`` on ``question``, found with probability ``power`` by a two-sided test
    at level ``alpha``."""

    first: str
    second: str
    question: str
    difference: float
    power: float = DEFAULT_POWER
    alpha: float = DEFAULT_ALPHA


@dataclass(frozen=True)
class Plan:
    target: ComparisonTarget
    paired: bool
    pilot_items: tuple[int, int]  # items (cases when paired) of each system in the pilot
    pilot_answers: int
    pilot_difference: float  # the first system's mean less the second's, in the pilot
    table: list[DesignPower]
    best: DesignPower | None  # the cheapest design that reaches the power; None if none does


@dataclass(frozen=True)
class AgreementTarget:
    """What the planned study must measure: Krippendorff's alpha of ``question`` with a 95%
    interval at most ``width`` wide."""

    question: str
    width: float


@dataclass(frozen=True)
class AgreementPlan:
    target: AgreementTarget
    pilot_items: int
    pilot_answers: int
    table: list[DesignWidth]
    best: DesignWidth | None  # the cheapest design narrow enough; None if none is


def plan_agreement(
    study: Study,
    target: AgreementTarget,
    *,
    price: float | None = None,
    items: Sequence[int] = ITEMS,
    answers_per_item: Sequence[int] = (2, 3, 5),
    simulations: int = SIMULATIONS,
    seed: int = 0,
) -> AgreementPlan:
    """The width of the alpha interval of each design for ``target``, from ``study``'s
    answers that count (every system's items together), and the cheapest design narrow
    enough; bad input raises ``InputError`` naming the field, and nothing is written."""
    check_agreement_design(
        target,
        price=price,
        items=items,
        answers_per_item=answers_per_item,
        simulations=simulations,
        seed=seed,
    )
    values, item = question_values(_counting(study), target.question)
    answers = _side(values, item, np.ones(len(values), dtype=bool))
    if int(answers.items.max(initial=-1)) + 1 < 2:
        raise InputError({"question": ["The pilot needs at least two items answered to plan from."]})
    table = width_table(
        answers,
        items=items,
        answers_per_item=answers_per_item,
        price=price,
        simulations=simulations,
        seed=seed,
    )
    return AgreementPlan(
        target=target,
        pilot_items=int(answers.items.max()) + 1,
        pilot_answers=len(values),
        table=table,
        best=narrowest_enough(table, target.width),
    )


def plan_comparison(
    study: Study,
    target: ComparisonTarget,
    *,
    price: float | None = None,
    items: Sequence[int] = ITEMS,
    answers_per_item: Sequence[int] = ANSWERS_PER_ITEM,
    simulations: int = SIMULATIONS,
    seed: int = 0,
) -> Plan:
    """The power of each design for ``target`` from ``study``'s answers that count, and
    the cheapest design reaching the power; bad input raises ``InputError`` naming the
    field (``compare``, ``question``, ``difference``, ``power``, ``alpha``, ``price``,
    ``items``, ``answers``) and nothing is written."""
    check_design(
        target,
        price=price,
        items=items,
        answers_per_item=answers_per_item,
        simulations=simulations,
        seed=seed,
    )
    first, second, paired = pilot_answers(_counting(study), target)
    table = power_table(
        first,
        second,
        difference=target.difference,
        paired=paired,
        alpha=target.alpha,
        items=items,
        answers_per_item=answers_per_item,
        price=price,
        simulations=simulations,
        seed=seed,
    )
    return Plan(
        target=target,
        paired=paired,
        pilot_items=(int(first.items.max()) + 1, int(second.items.max()) + 1),
        pilot_answers=len(first.values) + len(second.values),
        pilot_difference=float(first.values.mean() - second.values.mean()),
        table=table,
        best=cheapest(table, target.power),
    )


MAX_JUDGE_ANSWERS = 100_000_000
MEAN_WIDTH = (1e-6, 1e6)  # points of the scale


@dataclass(frozen=True)
class HybridTarget:
    """The hybrid question: beside ``judge_answers`` judge answers (on items no human
    answers), how many human answers give ``question``'s mean over every system a 95%
    interval at most ``width`` wide, or (``compare`` with ``difference``) detect that
    difference between two systems with probability ``power`` at level ``alpha``?"""

    question: str
    judge_answers: int
    width: float | None = None
    compare: tuple[str, str] | None = None
    difference: float | None = None
    power: float = DEFAULT_POWER
    alpha: float = DEFAULT_ALPHA


@dataclass(frozen=True)
class HybridPlan:
    target: HybridTarget
    rater: str
    pilot: PPIFit
    target_se: float
    needed: HumansNeeded


def plan_hybrid(study: Study, target: HybridTarget) -> HybridPlan:
    """The human answers the hybrid target needs, scaled from the pilot's humans and judge
    (``scoring.reports.hybrid.question_fit``: the reports' own pairing and clustering; the
    answers that count, with the machine raters' beside them) by ``stats.ppi.humans_needed``.
    Bad input raises ``InputError`` naming the field; nothing is written."""
    errors: dict[str, list[str]] = {}
    if not 1 <= target.judge_answers <= MAX_JUDGE_ANSWERS:
        errors["judge-answers"] = [f"From 1 to {MAX_JUDGE_ANSWERS:,} judge answers."]
    if target.compare is None:
        if target.width is None or not MEAN_WIDTH[0] <= target.width <= MEAN_WIDTH[1]:
            errors["width"] = [f"The interval width must be from {MEAN_WIDTH[0]:g} to {MEAN_WIDTH[1]:g}."]
    else:
        comparison = ComparisonTarget(*target.compare, target.question, target.difference or 0.0,
                                      target.power, target.alpha)  # fmt: skip
        try:
            check_design(comparison, price=None, items=ITEMS, answers_per_item=ANSWERS_PER_ITEM)
        except InputError as error:
            errors.update(error.errors)
    if errors:
        raise InputError(errors)
    with one_snapshot():
        data = load_study_data(study, report_for(study.kind), by=DEFAULT_BY)
    counted = data.population("passed").analysed()
    question_values(counted.humans(), target.question)  # the question's own errors
    found = question_fit(counted, target.question, target.compare)
    if found is None:
        raise InputError(
            {
                "judge-answers": [
                    "The pilot needs a model rater's answers beside the humans' (on two items or more "
                    "with human answers, and on items without)"
                    + (f", on both {target.compare[0]} and {target.compare[1]}." if target.compare else ".")
                ]
            }
        )
    rater, pilot = found
    if target.compare is None:
        wanted = stats_target_se(width=target.width)
    else:
        wanted = stats_target_se(difference=target.difference, power=target.power, alpha=target.alpha)
    needed = humans_needed(pilot, target.judge_answers, wanted)
    return HybridPlan(target, rater, pilot, wanted, needed)


def check_design(
    target: ComparisonTarget,
    *,
    price: float | None,
    items: Sequence[int],
    answers_per_item: Sequence[int],
    simulations: int = SIMULATIONS,
    seed: int = 0,
) -> None:
    """The numbers of a comparison plan, each named when out of range (before anything is
    read); the one check the page and ``manage.py plan`` go through."""
    errors = _design_errors(price, items, answers_per_item, simulations, seed)
    if target.first == target.second:
        errors["compare"] = ["Name two different systems."]
    if not target.difference > 0:
        errors["difference"] = ["The difference to detect must be positive."]
    elif not DIFFERENCE[0] <= target.difference <= DIFFERENCE[1]:
        errors["difference"] = [
            f"The difference to detect: from {DIFFERENCE[0]:g} to {DIFFERENCE[1]:g} points."
        ]
    if not POWER[0] <= target.power <= POWER[1]:
        errors["power"] = [f"The power must be from {POWER[0]:g} to {POWER[1]:g}."]
    if not ALPHA[0] <= target.alpha <= ALPHA[1]:
        errors["alpha"] = [f"The significance level must be from {ALPHA[0]:g} to {ALPHA[1]:g}."]
    if errors:
        raise InputError(errors)


def check_agreement_design(
    target: AgreementTarget,
    *,
    price: float | None,
    items: Sequence[int],
    answers_per_item: Sequence[int],
    simulations: int = SIMULATIONS,
    seed: int = 0,
) -> None:
    """The numbers of an agreement plan, each named when out of range (as ``check_design``)."""
    errors = _design_errors(price, items, answers_per_item, simulations, seed)
    if not target.width > 0:
        errors["agreement-width"] = ["The interval width must be positive."]
    elif not WIDTH[0] <= target.width <= WIDTH[1]:
        errors["agreement-width"] = [f"The interval width must be from {WIDTH[0]:g} to {WIDTH[1]:g}."]
    if answers_per_item and min(answers_per_item) < 2:
        errors["answers"] = ["Alpha compares answers: at least two answers per item."]
    if errors:
        raise InputError(errors)


def _design_errors(
    price: float | None, items: Sequence[int], answers_per_item: Sequence[int], simulations: int, seed: int
) -> dict:
    """What is wrong with the designs to try, the simulations and the price, by field. The
    bounds keep one plan's memory and time within what a web request or a command on the
    web machine may take (docs/statistics.md): the simulation's arrays are bounded by
    ``stats.planning.CHUNK_VALUES``, its time by ``MAX_SIMULATED_ANSWERS``."""
    errors: dict[str, list[str]] = {}
    if price is not None and not 0 <= price <= MAX_PRICE:
        errors["price"] = [f"The price per answer must be from 0 to {MAX_PRICE:,}."]
    if not items or min(items) < 2:
        errors["items"] = ["Designs need at least two items per system."]
    elif max(items) > MAX_ITEMS or len(items) > MAX_SIZES:
        errors["items"] = [f"At most {MAX_SIZES} sizes, each at most {MAX_ITEMS:,} items."]
    if not answers_per_item or min(answers_per_item) < 1:
        errors["answers"] = ["Designs need at least one answer per item."]
    elif max(answers_per_item) > MAX_ANSWERS or len(answers_per_item) > MAX_SIZES:
        errors["answers"] = [f"At most {MAX_SIZES} sizes, each at most {MAX_ANSWERS} answers per item."]
    if not MIN_SIMULATIONS <= simulations <= MAX_SIMULATIONS:
        errors["simulations"] = [
            f"From {MIN_SIMULATIONS} to {MAX_SIMULATIONS:,} simulated studies per design."
        ]
    if not 0 <= seed < 2**32:
        errors["seed"] = ["The seed is a whole number from 0 to 4294967295."]
    if not errors and (work := simulations * sum(items) * sum(answers_per_item)) > MAX_SIMULATED_ANSWERS:
        errors["items"] = [
            f"These designs simulate {work:,} answers (simulations × items × answers per item, over "
            f"every design); at most {MAX_SIMULATED_ANSWERS:,}: try fewer or smaller designs, or fewer "
            "simulations."
        ]
    return errors


def _counting(study: Study) -> StudyData:
    """The study's answers that count, read as the reports read them."""
    with one_snapshot():
        data = load_study_data(study, report_for(study.kind), by=DEFAULT_BY)
    return data.population("passed").humans().analysed()


def question_values(data: StudyData, question: str) -> tuple[np.ndarray, np.ndarray]:
    """Every value given to ``question`` (on a scale) and the row of its item."""
    observations = data.observations
    question_of = observations["question"]
    questions = sorted({str(q) for q in question_of})
    if question not in questions:
        raise InputError({"question": [f"No answers to {question!r}; questions: {_listed(questions)}."]})
    rows = np.flatnonzero(question_of == question)
    levels = {str(level) for level in observations["level"][rows]}
    if not levels <= set(NUMERIC_LEVELS):
        raise InputError({"question": [f"{question!r} is not on a scale ({_listed(levels)})."]})
    values = np.array([float(v) for v in observations["value"][rows]], dtype=np.float64)
    return values, data.responses["item"][observations["response"][rows]]


def pilot_answers(data: StudyData, target: ComparisonTarget) -> tuple[Answers, Answers, bool]:
    """The two systems' values on the target's question, by item (by case when paired:
    the cases that both systems were answered on)."""
    observations = data.observations
    question_of = observations["question"]
    questions = sorted({str(q) for q in question_of})
    if target.question not in questions:
        raise InputError(
            {"question": [f"No answers to {target.question!r}; questions: {_listed(questions)}."]}
        )
    rows = np.flatnonzero(question_of == target.question)
    levels = {str(level) for level in observations["level"][rows]}
    if not levels <= set(NUMERIC_LEVELS):
        raise InputError({"question": [f"{target.question!r} is not on a scale ({_listed(levels)})."]})
    responses = observations["response"][rows]
    values = np.array([float(v) for v in observations["value"][rows]], dtype=np.float64)
    item = data.responses["item"][responses]
    systems = data.items[SYSTEM][item]
    known = sorted({str(s) for s in systems if s})
    missing = [name for name in (target.first, target.second) if name not in known]
    if missing:
        raise InputError(
            {
                "compare": [
                    f"No answers for {_listed(missing)} on {target.question!r}; systems: {_listed(known)}."
                ]
            }
        )
    keys, shared = item, set()
    if SOURCE in data.items:
        sources = data.items[SOURCE][item]
        shared = (set(sources[systems == target.first]) & set(sources[systems == target.second])) - {""}
    paired = len(shared) >= 2  # else the systems' items are compared as independent samples
    if paired:
        keep = np.isin(sources, list(shared))
        values, systems, keys = values[keep], systems[keep], sources[keep]
    sides = [_side(values, keys, systems == name) for name in (target.first, target.second)]
    if min(int(side.items.max(initial=-1)) + 1 for side in sides) < 2:
        raise InputError({"compare": ["The pilot needs at least two items of each system to plan from."]})
    return sides[0], sides[1], paired


def _side(values: np.ndarray, keys: np.ndarray, mine: np.ndarray) -> Answers:
    """One system's values with its items (or cases) numbered from 0, in sorted key order
    (so a paired pilot's two systems number their shared cases alike)."""
    codes = np.unique(keys[mine], return_inverse=True)[1].ravel()
    return Answers(values[mine], codes)


def _listed(names) -> str:
    return ", ".join(sorted(str(n) for n in names)) or "none"
