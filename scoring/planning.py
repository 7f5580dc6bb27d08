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
from dataclasses import dataclass, replace

import numpy as np

from annotation.errors import InputError
from annotation.models import Item, Participant, Response, Study
from scoring.data import DEFAULT_BY, load_study_data, one_snapshot
from scoring.reports import report_for
from scoring.reports.base import KindReport, StudyData
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
    pick: bool = False  # a pick's share of the picks (its difference is in shares)
    both_on_a_page: bool = False  # one answer covers both systems: a design's answers count pages


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
    pilot_answers: int  # the answers (pages) the values come from
    table: list[DesignWidth]
    best: DesignWidth | None  # the cheapest design narrow enough; None if none is
    pilot_values: int = 0  # the values: more than the answers for a question asked per passage


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
    found = question_values(*_reading(study, target.question))
    values = found.values
    answers = _side(values, found.unit, np.ones(len(values), dtype=bool))
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
        pilot_answers=found.answers,
        pilot_values=len(values),
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
    data, builder = _counting(study)
    pilot = read_pilot(data, target, builder)
    first, second, paired = pilot.first, pilot.second, pilot.paired
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
    pick = is_pick(builder, data, target.question)
    if pilot.both_on_a_page:  # one answer covers both systems: n cases × k answers is n·k answers
        table = [
            replace(d, answers=d.answers // 2, cost=None if price is None else d.answers // 2 * price)
            for d in table
        ]
    return Plan(
        target=target,
        paired=paired,
        pilot_items=(int(first.items.max()) + 1, int(second.items.max()) + 1),
        pilot_answers=pilot.answers,
        pilot_difference=float(first.values.mean() - second.values.mean()),
        table=table,
        best=cheapest(table, target.power),
        pick=pick,
        both_on_a_page=pilot.both_on_a_page,
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

    @property
    def saving(self) -> float | None:
        """The share of the humans-only answers the judge saves (None where either is unknown)."""
        hybrid, alone = self.needed.hybrid, self.needed.humans_only
        return 1 - hybrid / alone if hybrid is not None and alone else None


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
    builder = report_for(study.kind)
    with one_snapshot():
        data = load_study_data(study, builder, by=DEFAULT_BY)
    counted = data.population("passed").analysed()
    question_values(counted.humans(), target.question)  # the question's own errors
    found = question_fit(builder, counted, target.question, target.compare)
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


def _reading(study: Study, question: str) -> tuple[StudyData, str, KindReport]:
    data, builder = _counting(study)
    return data, question, builder


def _counting(study: Study) -> tuple[StudyData, KindReport]:
    """The study's answers that count, read as the reports read them, and its report builder."""
    builder = report_for(study.kind)
    with one_snapshot():
        data = load_study_data(study, builder, by=DEFAULT_BY)
    return data.population("passed").humans().analysed(), builder


@dataclass(frozen=True)
class QuestionAnswers:
    """Every value given to one question on a scale, per observation: its item row, its
    unit (what a design counts as an item: the item, or the (item, passage) of a question
    asked per passage), the system it is about and the case the systems are compared within
    ("" for none)."""

    values: np.ndarray
    item: np.ndarray
    unit: np.ndarray
    system: np.ndarray
    case: np.ndarray
    response: np.ndarray  # the answer (response row) each value comes from

    @property
    def answers(self) -> int:
        """The answers (pages) these values come from: a page's ratings of several passages,
        or a pick's two values, are one answer."""
        return int(np.unique(self.response).size)


def question_values(data: StudyData, question: str, builder: KindReport | None = None) -> QuestionAnswers:
    """Every value given to ``question`` (on a scale), with what each is about: the kind's
    own reading where its report gives one (``KindReport.observation_design``: a
    questionnaire's passage systems), else the items' ``provenance.system`` and
    ``provenance.source_id``."""
    rows = _question_rows(data, question)
    values = np.array([float(v) for v in data.observations["value"][rows]], dtype=np.float64)
    return _described(data, rows, values, builder)


def _question_rows(data: StudyData, question: str) -> np.ndarray:
    observations = data.observations
    question_of = observations["question"]
    questions = sorted({str(q) for q in question_of})
    if question not in questions:
        raise InputError({"question": [f"No answers to {question!r}; questions: {_listed(questions)}."]})
    rows = np.flatnonzero(question_of == question)
    levels = {str(level) for level in observations["level"][rows]}
    if not levels <= set(NUMERIC_LEVELS):
        raise InputError({"question": [f"{question!r} is not on a scale ({_listed(levels)})."]})
    return rows


def _described(data: StudyData, rows: np.ndarray, values: np.ndarray, builder: KindReport | None):
    observations = data.observations
    item = data.responses["item"][observations["response"][rows]]
    design = builder.observation_design(data, rows) if builder is not None else None
    if design is not None:
        system, case, unit = design
    else:
        unit = item.astype(str)
        system = (
            data.items[SYSTEM][item].astype(str)
            if SYSTEM in data.items
            else np.full(len(rows), "", dtype=object)
        )
        case = (
            data.items[SOURCE][item].astype(str)
            if SOURCE in data.items
            else np.full(len(rows), "", dtype=object)
        )
    response = observations["response"][rows]
    return QuestionAnswers(
        values, item, unit, np.asarray(system).astype(str), np.asarray(case).astype(str), response
    )


@dataclass(frozen=True)
class Pilot:
    """The two systems' pilot values (``Answers``), whether paired, the answers (pages) they
    come from, and whether one page holds both systems' values (a pick; a question asked per
    passage on pages showing both): a design of n cases × k answers is then n·k pages."""

    first: Answers
    second: Answers
    paired: bool
    answers: int
    both_on_a_page: bool


def pilot_answers(
    data: StudyData, target: ComparisonTarget, builder: KindReport | None = None
) -> tuple[Answers, Answers, bool]:
    """``read_pilot``'s values and pairing (what ``stats.planning`` reads)."""
    pilot = read_pilot(data, target, builder)
    return pilot.first, pilot.second, pilot.paired


def read_pilot(data: StudyData, target: ComparisonTarget, builder: KindReport | None = None) -> Pilot:
    """The two systems' values on the target's question, by item (by case when paired:
    the cases that both systems were answered on). A pick question (a kind whose report
    compares systems by picks: ``KindReport.comparisons``) gives, per answer that showed
    both systems, 1 to the one picked and 0 to the other (½ each for a tie or a pick of
    neither), paired by the answer's page: the difference of the two means is then the
    difference of their shares of the picks (a win rate of 60 % is 0.2)."""
    picks = _pick_answers(data, target, builder)
    found = picks if picks is not None else question_values(data, target.question, builder)
    values, systems = found.values, found.system
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
    keys, cases = found.unit, found.case
    shared = (set(cases[systems == target.first]) & set(cases[systems == target.second])) - {""}
    paired = len(shared) >= 2  # else the systems' items are compared as independent samples
    responses = found.response
    mine = (systems == target.first) | (systems == target.second)
    if paired:
        keep = np.isin(cases, list(shared))
        values, systems, keys, responses = values[keep], systems[keep], cases[keep], responses[keep]
        mine = mine[keep]
    sides = [_side(values, keys, systems == name) for name in (target.first, target.second)]
    if min(int(side.items.max(initial=-1)) + 1 for side in sides) < 2:
        raise InputError({"compare": ["The pilot needs at least two items of each system to plan from."]})
    used = responses[mine]
    # a page holds both systems when its answer gave values to both
    first_pages = set(responses[systems == target.first].tolist())
    both = paired and bool(first_pages & set(responses[systems == target.second].tolist()))
    return Pilot(sides[0], sides[1], paired, int(np.unique(used).size), both)


def is_pick(builder: KindReport | None, data: StudyData, question: str) -> bool:
    """Whether ``question`` compares systems by picks in its kind's report."""
    return builder is not None and any(question in c.questions[:1] for c in builder.comparisons(data))


def _pick_answers(
    data: StudyData, target: ComparisonTarget, builder: KindReport | None
) -> QuestionAnswers | None:
    """A pick question's answers as two values per answer that showed both systems (see
    ``pilot_answers``); None when ``target.question`` is no pick of the kind's report."""
    if not is_pick(builder, data, target.question):
        return None
    assert builder is not None
    comparison = next((c for c in builder.comparisons(data) if target.question in c.questions[:1]), None)
    if comparison is None:
        return None
    names = list(comparison.names)
    codes = [names.index(n) if n in names else -1 for n in (target.first, target.second)]
    if -1 in codes:
        missing = [n for n in (target.first, target.second) if n not in names]
        raise InputError(
            {
                "compare": [
                    f"No answers for {_listed(missing)} on {target.question!r}; systems: {_listed(names)}."
                ]
            }
        )
    first, second = codes
    both = (comparison.shown == first).any(axis=1) & (comparison.shown == second).any(axis=1)
    answered = both & (data.responses["item"] >= 0)
    responses = np.flatnonzero(answered)
    best = comparison.best[responses]
    worst = comparison.worst[responses] if comparison.worst is not None else None
    won = np.where(best == first, 1.0, np.where(best == second, 0.0, 0.5))
    if worst is not None:  # best-worst: LEAST decides when MOST picked neither of the two
        undecided = (best != first) & (best != second)
        won = np.where(undecided & (worst == second), 1.0, np.where(undecided & (worst == first), 0.0, won))
    item = data.responses["item"][responses]
    sources = data.items[SOURCE][item].astype(str) if SOURCE in data.items else np.full(len(item), "")
    # an answer's case is its item (the item's source where it has one): the item's answers
    # are the several answers the simulation resamples
    page = np.array([s or f"\x00{r}" for s, r in zip(sources, item, strict=True)], dtype=object)
    return QuestionAnswers(
        values=np.concatenate([won, 1.0 - won]),
        item=np.concatenate([item, item]),
        unit=np.concatenate([page, page]).astype(str),
        system=np.array([target.first] * len(won) + [target.second] * len(won)),
        case=np.concatenate([page, page]).astype(str),
        response=np.concatenate([responses, responses]),
    )


def _side(values: np.ndarray, keys: np.ndarray, mine: np.ndarray) -> Answers:
    """One system's values with its items (or cases) numbered from 0, in sorted key order
    (so a paired pilot's two systems number their shared cases alike)."""
    codes = np.unique(keys[mine], return_inverse=True)[1].ravel()
    return Answers(values[mine], codes)


def _listed(names) -> str:
    return ", ".join(sorted(str(n) for n in names)) or "none"


@dataclass(frozen=True)
class PlanChoices:
    """What the plan page offers: ``questions`` as (id, what it plans), ``systems`` by name,
    and whether a model rater (a judge) answered beside the people (the hybrid question)."""

    questions: list[tuple[str, str]]
    systems: list[str]
    judged: bool = False


def plan_choices(study: Study) -> PlanChoices:
    """The study's questions a plan can be made for (a scale, a per-passage scale, a
    pick's win rate) and the systems its items name (``provenance.system`` and each
    passage's ``system``); read from the config and the items, no answers needed."""
    config = study.config or {}
    kind = study.task_kind
    questions: list[tuple[str, str]] = []
    defined = {q.get("id"): q for q in config.get("questions", []) if isinstance(q, dict)}
    for name in kind.scale_questions(config):
        per = defined.get(name, {}).get("per") == "passage"
        questions.append((name, f"{name}: scale{', per passage' if per else ''}"))
    for name, q in defined.items():
        if q.get("type") == "pick":
            questions.append((str(name), f"{name}: pick, share of the picks ({q.get('pick')})"))
    systems: set[str] = set()
    rows = Item.objects.filter(study=study).values_list("provenance__system", "payload__passages")
    for provenance_system, passages in rows.iterator(chunk_size=2000):
        if isinstance(provenance_system, str) and provenance_system:
            systems.add(provenance_system)
        for passage in passages if isinstance(passages, list) else []:
            if isinstance(passage, dict) and isinstance(passage.get("system"), str) and passage["system"]:
                systems.add(passage["system"])
    judged = Response.objects.filter(study=study, participant__source=Participant.Source.MODEL).exists()
    return PlanChoices(questions, sorted(systems), judged)
