"""Annotator competence and aggregated labels, for every kind's categorical questions.

Written once for every kind over the agreement observations (``Ratings``): each nominal
question gets Dawid–Skene and MACE (``stats.competence``) fitted on the humans' answers of
the population; each ordinal one (a scale) is aggregated by the median of its answers and
an annotator's competence on it is the Spearman correlation of their answers with the other
annotators' median (``stats.competence_intervals``): the nominal models treat a scale's
points as unrelated categories and aggregated a 7-point scale worse than the median. Every
competence has a 95% interval from a bootstrap over items (``RESAMPLES`` refits at most),
and an annotator with too few answers gets the reason instead of a number
(``stats.competence.too_few_answers``). Stored as figures:

- ``competence.mace`` / ``competence.dawid_skene`` (nominal questions) and
  ``competence.median_correlation`` (ordinal ones) per annotator and question
  (``{question, level, annotator}``, when two questions or more are analysed) and pooled
  over the questions (``{annotator}``: the mean of the questions' competences weighted by
  the annotator's answers to each, least competent first), each with ``ci_low``/``ci_high``;
- ``competence.label`` per unit and model (``mace``, ``dawid_skene``; ``median`` for an
  ordinal question), in the ``passed`` population only (the answers
  that count; ``all`` has the competences, which the participants page reads, but no
  label rows) (``{question, level, model, item}``, plus
  ``unit`` when a question has several units per item): the value is the posterior
  probability of the aggregated label (the median: the share of the unit's answers equal
  to it), the label in details with the majority vote's
  (up to ``MAX_LABELLED_UNITS`` units per question; a question with more than
  ``MAX_FITTED_ANSWERS`` answers is not fitted, and an undefined row says so);
- ``competence.majority_agreement`` and ``competence.adjudicated_agreement`` per question
  and model: the share of units whose aggregated label is the majority's (units with one
  most frequent answer) and the adjudicator's (items with an adjudicated answer).

The ``adjudicated`` population gets none: there the adjudicator's answer stands for the
item, so an aggregate would only repeat it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Protocol

import numpy as np

from stats.bootstrap import Interval, seed_for
from stats.competence import Answers, LabelModel, competence_identifiability, dawid_skene, mace
from stats.competence_intervals import (
    INTERVAL_METHOD,
    MIN_RESAMPLED,
    RESAMPLES,
    Bounds,
    OrdinalAnswers,
    bootstrap_median_correlation,
    item_resamples,
    median_correlation,
    median_correlation_reasons,
    median_labels,
    percentile_bounds,
    weighted_replicates,
)
from stats.competence_refits import bootstrap_dawid_skene, bootstrap_mace
from stats.estimate import Estimate
from stats.groups import factorize, plain
from stats.raters import majority_codes

from .agreement import Labels, Ratings, labeller, numbers_or_text
from .base import ReportRow, StudyData, TableSpec, row

MODELS = ("mace", "dawid_skene")
# The competence of an ordinal question: Spearman's correlation with the others' median.
ORDINAL_MEASURE = "median_correlation"
MEASURES = (*MODELS, ORDINAL_MEASURE)
# The bootstrap refits each model RESAMPLES times on a question's answers; beyond this many
# answers × resamples per question it uses fewer resamples, and below MIN_RESAMPLED none
# (the interval is then missing, with the reason): reports stay within seconds.
MAX_RESAMPLED_ANSWERS = 500_000
# MACE in reports: restarts, and the change of log-likelihood per answer that ends one
# (a run of at most 50 EM steps over the question's answers; about 25 at this tolerance).
REPORT_MACE_RESTARTS = 2
REPORT_MACE_TOLERANCE = 1e-5
# A refit on a resample runs as the whole question's fit does (the same seeded restarts and
# tolerance): refits started at the whole fit instead stayed near it, and their intervals
# covered 0.80–0.88 where these cover 0.89–0.94 (bench/coverage_competence.py). All resamples
# are refitted at once (stats/competence_refits.py), which made the restarts affordable.
# The dashboard lists this many rows of a label or annotator table; the API and exports have all.
DASHBOARD_LABELS = 200
# Beyond this many answers to one question the models are not fitted (EM's time grows
# with the answers: about 200 passes over them), and the figures say so.
MAX_FITTED_ANSWERS = 100_000
# Beyond this many units of one question their labels are not stored one row each.
MAX_LABELLED_UNITS = 50_000

COMPETENCE_TABLE = TableSpec(
    title="Annotator competence, all categorical questions",
    metrics=("competence.mace", "competence.dawid_skene", f"competence.{ORDINAL_MEASURE}"),
    keys=("annotator",),
    max_rows=DASHBOARD_LABELS,
    note="MACE: the estimated probability that the annotator knows the answer rather than "
    "guessing; Dawid–Skene: the estimated probability that their answer is right; both fitted "
    "on the nominal questions. Median correlation: on the ordinal (scale) questions, Spearman's "
    "correlation of their answers with the other annotators' median (docs/statistics.md says "
    "what each assumes). The mean over questions weighted by answers; n = answers; 95% "
    "intervals by a bootstrap over items. Fewer than 10 answers on items others answered: no "
    "figure. Least competent (MACE) first. Each item's aggregated label is listed without the "
    "attention-check failures.",
)
QUESTION_COMPETENCE_TABLE = TableSpec(
    title="Annotator competence per question",
    metrics=("competence.mace", "competence.dawid_skene", f"competence.{ORDINAL_MEASURE}"),
    keys=("question", "level", "annotator"),
    max_rows=DASHBOARD_LABELS,
    note="When a study has several categorical questions.",
)
AGGREGATE_AGREEMENT_TABLE = TableSpec(
    title="Aggregated labels against the majority vote and the adjudicated answers",
    metrics=("competence.majority_agreement", "competence.adjudicated_agreement"),
    keys=("question", "level", "model"),
    note="Share of units whose aggregated label is the majority's (units with one most frequent "
    "answer) and the adjudicator's (items with an adjudicated answer); n = units compared.",
)
LABEL_TABLE = TableSpec(
    title="Aggregated label per item",
    metrics=("competence.label",),
    keys=("question", "level", "model", "item"),
    details=("label", "majority", "adjudicated", "answers"),
    value_label="posterior",
    max_rows=DASHBOARD_LABELS,
    note="Nominal questions: the model's most probable label and its posterior probability. "
    "Ordinal (scale) questions: the median answer (model 'median'; the lower middle one of an "
    "even number) and the share of answers equal to it. The exports' aggregated-labels table "
    "and the reports API list every item.",
)
PART_LABEL_TABLE = TableSpec(
    title="Aggregated label per part of an item",
    metrics=("competence.label",),
    keys=("question", "level", "model", "item", "unit"),
    details=("label", "majority", "adjudicated", "answers"),
    value_label="posterior",
    max_rows=DASHBOARD_LABELS,
    note="Questions asked of each part of an item (the claim's evidence sentences), as above.",
)
COMPETENCE_TABLES = (
    COMPETENCE_TABLE,
    QUESTION_COMPETENCE_TABLE,
    AGGREGATE_AGREEMENT_TABLE,
    LABEL_TABLE,
    PART_LABEL_TABLE,
)


def competence_rows(
    data: StudyData, question_order: Sequence[str] = (), *, ratings: Ratings | None = None
) -> list[ReportRow]:
    """Every competence and aggregated-label figure of one analysed population (humans);
    ``ratings``: ``Ratings.of(data, question_order)`` when the caller has read them."""
    if data.population_name == "adjudicated" or not len(data.observations):
        return []
    if ratings is None:
        ratings = Ratings.of(data, question_order)
    if not {str(level) for level in ratings.levels} & {"nominal", "ordinal"}:
        return []  # no categories (the game's guesses)
    context = _Context.of(data, ratings)
    human = ~ratings.model
    if not human.all():
        ratings, context = ratings.take(human), context.take(human)
    questions = list(_categorical_questions(ratings))
    resampling = _Resampling.of(context, data.population_name)
    rows: list[ReportRow] = []
    pooled: dict[str, dict[str, list[_Figure]]] = {measure: {} for measure in MEASURES}
    labels = data.population_name != "all"  # the answers that count label the items
    per_question: list[ReportRow] = []
    for question in questions:
        if isinstance(question, dict):
            rows += _not_fitted_rows(question)
            continue
        annotators, others = question_rows(question, context, pooled, resampling, labels=labels)
        per_question += annotators
        rows += others
    analysed = sum(1 for question in questions if not isinstance(question, dict))
    # per question only when there are several: else the pooled rows say the same
    return (per_question if analysed > 1 else []) + _pooled_rows(pooled) + rows


@dataclass(frozen=True)
class _Figure:
    """One annotator's competence on one question, for pooling: the estimate's value, the
    answers it rests on, why it is missing, and its value in each bootstrap resample."""

    value: float
    answers: int
    reason: str | None
    replicates: np.ndarray | None
    no_interval: str = ""  # why it has no interval, when it has a value


@dataclass(frozen=True)
class _Resampling:
    """The study's bootstrap resamples of items (resamples × items: each item's multiplicity),
    shared by every question so that the pooled figures resample items jointly. A question
    uses the first ``resamples_for`` of them: fewer when it has many answers (bounded time),
    none below ``MIN_RESAMPLED``."""

    item_counts: np.ndarray

    @classmethod
    def of(cls, context: _Context, population: str) -> _Resampling:
        items = int(context.item_of_rating.max()) + 1 if len(context.item_of_rating) else 0
        return cls(item_resamples(items, resamples=RESAMPLES, seed=seed_for("competence", population)))

    @staticmethod
    def resamples_for(question: _Question) -> int:
        return min(RESAMPLES, MAX_RESAMPLED_ANSWERS // max(len(question.answers), 1))

    @staticmethod
    def reason(question: _Question) -> str:
        """Why the question's competences have no interval ('' when they have one)."""
        if _Resampling.resamples_for(question) >= MIN_RESAMPLED:
            return ""
        return f"no interval: more than {MAX_RESAMPLED_ANSWERS // MIN_RESAMPLED} answers to the question"

    def replicates(
        self, question: _Question, context: _Context, bootstrap: Callable[[np.ndarray], np.ndarray]
    ) -> np.ndarray | None:
        """Resamples × annotators: ``bootstrap`` (competences on each row of the question's
        unit multiplicities, resamples × units); None: no resamples."""
        if self.reason(question):
            return None
        counts = self.item_counts[: self.resamples_for(question), context.item_of_rating[question.units]]
        return bootstrap(counts)


def _not_fitted_rows(group: dict) -> list[ReportRow]:
    """A question with too many answers to analyse: one undefined row per measure says so."""
    reason = f"more than {MAX_FITTED_ANSWERS} answers to the question: not fitted"
    measures = (ORDINAL_MEASURE,) if group["level"] == "ordinal" else MODELS
    return [
        row(f"competence.{measure}", {**group, "annotator": "all"}, Estimate.undefined(reason))
        for measure in measures
    ]


@dataclass(frozen=True)
class _Question:
    """One question's answers as codes, with the names to report them by."""

    group: dict
    answers: Answers
    annotators: np.ndarray  # participant row of each annotator code
    units: np.ndarray  # unit code → row of one of its ratings (for its item and name)
    categories: np.ndarray  # the label of each category code
    ordinal: bool = False  # codes are positions on the scale (0 = lowest), in its order


@dataclass(frozen=True)
class _Context:
    """What every question's rows need from the study: annotators' labels, each rating's
    item and raw unit, and the adjudicated values by (unit, question)."""

    labels: Labels
    item_of_rating: np.ndarray
    raw_units: np.ndarray
    item_names: np.ndarray | None
    adjudicated: dict[tuple, tuple[str, object]]

    @classmethod
    def of(cls, data: StudyData, ratings: Ratings) -> _Context:
        """For ``ratings`` as ``Ratings.of`` read them: one per observation, in order."""
        return cls(
            labels=labeller(data),
            item_of_rating=data.responses["item"][ratings.response],
            raw_units=data.observations["unit"],
            item_names=data.items.data.get("external_id"),
            adjudicated=_adjudicated_values(data),
        )

    def take(self, mask: np.ndarray) -> _Context:
        """The same context for ``Ratings.take(mask)``."""
        return replace(self, item_of_rating=self.item_of_rating[mask], raw_units=self.raw_units[mask])


def _categorical_questions(ratings: Ratings) -> Iterator[_Question | dict]:
    """Each nominal or ordinal (question, level) with two values or more, as a ``_Question``
    (its group alone when it has too many answers to fit: counted before anything is copied)."""
    for lv, level in enumerate(str(name) for name in ratings.levels):
        domain = ratings.domains[lv]
        if domain is None or level not in ("nominal", "ordinal"):
            continue
        at_level = ratings.level == lv
        for q in np.unique(ratings.question[at_level]).tolist():
            rows = np.flatnonzero(at_level & (ratings.question == q))
            group = {"question": str(ratings.questions[q]), "level": level}
            given = int(np.count_nonzero(np.bincount(ratings.value[rows], minlength=len(domain))))
            if given < 2:
                continue  # one value only
            if len(rows) > MAX_FITTED_ANSWERS:
                yield group
                continue
            ordinal = level == "ordinal"
            if ordinal:  # the domain's positions: its values sorted, so the scale's order
                categories, label = domain, ratings.value[rows]
            else:
                categories, label = factorize(domain[ratings.value[rows]])
            unit_ids, unit = factorize(ratings.unit[rows])
            annotators, annotator = factorize(ratings.rater[rows])
            first_rating = np.zeros(len(unit_ids), dtype=np.int64)
            first_rating[unit[::-1]] = rows[::-1]  # the first rating of each unit wins
            yield _Question(
                group=group,
                answers=Answers.of(
                    unit,
                    annotator,
                    label,
                    units=len(unit_ids),
                    annotators=len(annotators),
                    categories=len(categories),
                ),
                annotators=annotators,
                units=first_rating,
                categories=categories,
                ordinal=ordinal,
            )


def question_rows(
    question: _Question, context: _Context, pooled: dict, resampling: _Resampling, *, labels: bool = True
) -> tuple[list[ReportRow], list[ReportRow]]:
    """The question's competence rows per annotator (also added to ``pooled``), and its
    label and agreement rows."""
    answers = question.answers
    majority = majority_codes(answers.unit, answers.label, answers.units, answers.categories)
    per_unit = np.bincount(answers.unit, minlength=answers.units)
    adjudicated = _adjudicated_codes(question, context)
    if question.ordinal:
        annotators, aggregates = _ordinal_rows(question, context, pooled, resampling)
    else:
        annotators, aggregates = _nominal_rows(question, context, pooled, resampling)
    rows = []
    for aggregate in aggregates:
        if labels and answers.units <= MAX_LABELLED_UNITS:
            rows += _label_rows(question, context, aggregate, majority, adjudicated, per_unit)
        rows += _agreement_rows(question.group, aggregate, majority, adjudicated)
    return annotators, rows


class _Aggregate(Protocol):
    """What the label and agreement rows read of a fitted model (or the median)."""

    @property
    def model(self) -> str: ...

    @property
    def labels(self) -> np.ndarray: ...

    @property
    def confidence(self) -> np.ndarray: ...


@dataclass(frozen=True)
class _MedianLabels:
    """An ordinal question's aggregate: each unit's median answer, and the share of its
    answers equal to it (where a model has its posterior)."""

    labels: np.ndarray
    confidence: np.ndarray
    model: str = "median"


def _nominal_rows(
    question: _Question, context: _Context, pooled: dict, resampling: _Resampling
) -> tuple[list[ReportRow], list[_Aggregate]]:
    """MACE and Dawid–Skene with their intervals, where the answers identify them."""
    answers = question.answers
    names = context.labels(question.annotators)
    per_annotator = np.bincount(answers.annotator, minlength=answers.annotators)
    identifiability = competence_identifiability(answers)
    if not identifiability.identifiable:  # no fit: its figures would look like findings
        reasons = [identifiability.reason] * len(names)
        return _competence_rows(question, names, per_annotator, None, reasons, pooled), []
    rows: list[ReportRow] = []
    models = fit_models(question)
    for model, bootstrap in zip(models, _bootstraps(question), strict=True):
        figures = _Competences(
            model.model,
            model.competence,
            identifiability.annotators,
            resampling,
            question,
            context,
            bootstrap,
        )
        rows += _competence_rows(question, names, per_annotator, figures, figures.reasons, pooled)
    return rows, list(models)


def _ordinal_rows(
    question: _Question, context: _Context, pooled: dict, resampling: _Resampling
) -> tuple[list[ReportRow], list[_Aggregate]]:
    """The median per unit, and each annotator's correlation with the others' median."""
    answers = question.answers
    names = context.labels(question.annotators)
    per_annotator = np.bincount(answers.annotator, minlength=answers.annotators)
    ordinal = OrdinalAnswers.of(answers)
    found = median_correlation(ordinal)
    figures = _Competences(
        ORDINAL_MEASURE,
        found,
        median_correlation_reasons(ordinal, found),
        resampling,
        question,
        context,
        partial(bootstrap_median_correlation, ordinal),
    )
    rows = _competence_rows(question, names, per_annotator, figures, figures.reasons, pooled)
    labels, share = median_labels(answers)
    return rows, [_MedianLabels(labels, share)]


class _Competences:
    """One measure's competences on one question (``values``, or per annotator the reason
    there is none) with their bootstrap intervals."""

    def __init__(
        self,
        measure: str,
        values: np.ndarray,
        reasons: Sequence[str | None],
        resampling: _Resampling,
        question: _Question,
        context: _Context,
        bootstrap: Callable[[np.ndarray], np.ndarray],
    ) -> None:
        self.measure, self.values, self.reasons = measure, values, reasons
        anyone = any(reason is None for reason in reasons)  # else no interval to compute
        self.replicates = resampling.replicates(question, context, bootstrap) if anyone else None
        if self.replicates is None:
            size = len(values)
            reason = resampling.reason(question) or "no interval"
            self.bounds = Bounds(np.full(size, np.nan), np.full(size, np.nan), (reason,) * size)
        else:
            self.bounds = percentile_bounds(self.replicates)

    def interval(self, code: int) -> tuple[Interval | None, str]:
        """The annotator's interval, or why there is none."""
        low, high = self.bounds.low[code], self.bounds.high[code]
        if np.isnan(low):
            return None, self.bounds.reason[code]
        return Interval(float(low), float(high), INTERVAL_METHOD), ""


def _bootstraps(question: _Question) -> list[Callable[[np.ndarray], np.ndarray]]:
    """The competences of ``fit_models``'s models refitted with the same settings on
    resamples of the question's answers (resamples × units → resamples × annotators), all
    resamples at once."""
    return [
        partial(
            bootstrap_mace,
            question.answers,
            seed=_mace_seed(question),
            restarts=REPORT_MACE_RESTARTS,
            tolerance=REPORT_MACE_TOLERANCE,
        ),
        partial(bootstrap_dawid_skene, question.answers),
    ]


def _competence_rows(
    question: _Question,
    names: Sequence[str],
    per_annotator: np.ndarray,
    figures: _Competences | None,
    reasons: Sequence[str | None],
    pooled: dict,
) -> list[ReportRow]:
    """Each annotator's competence row under one measure (every nominal model when
    ``figures`` is None: nothing fitted), undefined with its reason where ``reasons`` gives
    one; also added to ``pooled``."""
    rows = []
    for measure in MODELS if figures is None else (figures.measure,):
        for code, name in enumerate(names):
            n, reason = int(per_annotator[code]), reasons[code]
            ci, replicates, extra, why = None, None, {}, ""
            if reason is not None or figures is None:
                competence = Estimate.undefined(reason or "not fitted", n=n)
            else:
                competence = Estimate(float(figures.values[code]), n=n)
                ci, why = figures.interval(code)
                extra = {"interval": why} if why else {}
                if figures.replicates is not None:
                    replicates = figures.replicates[:, code]
            group = {**question.group, "annotator": name}
            rows.append(row(f"competence.{measure}", group, competence, ci, **extra))
            figure = _Figure(competence.value, n, reason, replicates, why)
            pooled[measure].setdefault(name, []).append(figure)
    return rows


def fit_models(question: _Question) -> list[LabelModel]:
    """MACE (seeded by the question) and Dawid–Skene on one question's answers."""
    fitted = mace(
        question.answers,
        seed=_mace_seed(question),
        restarts=REPORT_MACE_RESTARTS,
        tolerance=REPORT_MACE_TOLERANCE,
    )
    return [fitted, dawid_skene(question.answers)]


def _mace_seed(question: _Question) -> int:
    return seed_for("competence", question.group["question"], question.group["level"])


def _label_rows(question, context, model: _Aggregate, majority, adjudicated, per_unit) -> list[ReportRow]:
    rows = []
    labels, confidence = model.labels, model.confidence
    for unit, rating in enumerate(question.units.tolist()):
        group = {**question.group, "model": model.model, **_unit_keys(context, rating)}
        details = {
            "label": _plain(question.categories[labels[unit]]),
            "majority": _plain(question.categories[majority[unit]]) if majority[unit] >= 0 else None,
            "adjudicated": _plain(question.categories[adjudicated[unit]]) if adjudicated[unit] >= 0 else None,
            "answers": int(per_unit[unit]),
        }
        rows.append(
            row(
                "competence.label", group, Estimate(float(confidence[unit]), n=int(per_unit[unit])), **details
            )
        )
    return rows


def _agreement_rows(group: dict, model: _Aggregate, majority, adjudicated) -> list[ReportRow]:
    keys = {**group, "model": model.model}
    rows = []
    for metric, reference, nothing in (
        ("competence.majority_agreement", majority, "no unit has one most frequent answer"),
        ("competence.adjudicated_agreement", adjudicated, "no adjudicated answer"),
    ):
        compared = reference >= 0
        if not compared.any():
            if metric == "competence.adjudicated_agreement":
                continue  # no adjudication yet: no row, not an undefined one on every study
            rows.append(row(metric, keys, Estimate.undefined(nothing)))
            continue
        share = float((model.labels[compared] == reference[compared]).mean())
        rows.append(row(metric, keys, Estimate(share, n=int(compared.sum()))))
    return rows


def _pooled_rows(pooled: dict[str, dict[str, list[_Figure]]]) -> list[ReportRow]:
    """Each annotator's competence over the questions, weighted by their answers, with the
    interval of the same weighted mean over the joint item resamples; the least competent
    by MACE first (the order the dashboard lists them in), then by median correlation."""
    rows = []
    by_measure = {measure: dict(_weighted_means(figures)) for measure, figures in pooled.items()}
    names = list(dict.fromkeys(name for means in by_measure.values() for name in means))

    def ascending(name: str) -> tuple:
        return tuple(
            _ascending(by_measure[m][name][0]) if name in by_measure[m] else (2, 0.0) for m in MEASURES
        )

    for measure, means in by_measure.items():
        for name in sorted(names, key=ascending):
            if name not in means:
                continue
            estimate, ci, why, questions = means[name]
            extra = {"interval": why} if estimate.defined and ci is None else {}
            rows.append(
                row(f"competence.{measure}", {"annotator": name}, estimate, ci, questions=questions, **extra)
            )
    return rows


def _ascending(estimate: Estimate) -> tuple:
    return (0, estimate.value) if estimate.defined else (1, 0.0)


def _weighted_means(
    by_annotator: dict[str, list[_Figure]],
) -> Iterator[tuple[str, tuple[Estimate, Interval | None, str, int]]]:
    """Annotator → (mean competence over their questions weighted by answers, its interval or
    why it has none, questions); over the questions where it is defined, undefined with the
    reasons where it is on none."""
    for name, figures in by_annotator.items():
        values = np.array([f.value for f in figures])
        weights = np.array([f.answers for f in figures], dtype=np.float64)
        known = ~np.isnan(values) & (weights > 0)
        if not known.any():
            reasons = sorted({f.reason for f in figures if f.reason})
            estimate = Estimate.undefined("; ".join(reasons) or "no answers", n=int(weights.sum()))
            yield name, (estimate, None, "", len(figures))
            continue
        mean = float(np.average(values[known], weights=weights[known]))
        estimate = Estimate(mean, n=int(weights[known].sum()))
        ci, why = _pooled_interval([f for f, k in zip(figures, known, strict=True) if k])
        yield name, (estimate, ci, why, len(figures))


def _pooled_interval(figures: list[_Figure]) -> tuple[Interval | None, str]:
    """The percentile interval of the weighted mean over the questions' replicates (the
    resamples they share: a question with many answers has fewer), or why there is none."""
    missing = sorted({f.no_interval or "no interval" for f in figures if f.replicates is None})
    if missing:
        return None, "; ".join(missing)
    shared = min(len(f.replicates) for f in figures if f.replicates is not None)
    replicates = [f.replicates[:shared] for f in figures if f.replicates is not None]
    pooled = weighted_replicates(replicates, [f.answers for f in figures])
    bounds = percentile_bounds(pooled[:, None])
    if np.isnan(bounds.low[0]):
        return None, bounds.reason[0]
    return Interval(float(bounds.low[0]), float(bounds.high[0]), INTERVAL_METHOD), ""


def _unit_keys(context: _Context, rating: int) -> dict:
    """The item a unit belongs to by its external id, and the unit's own name when it is a
    part of the item (the claim's evidence sentences)."""
    item = int(context.item_of_rating[rating])
    name = str(context.item_names[item]) if context.item_names is not None else str(item + 1)
    raw = context.raw_units[rating]
    if isinstance(raw, str) and raw != name:
        return {"item": name, "unit": raw}
    return {"item": name}


def _adjudicated_values(data: StudyData) -> dict[tuple, tuple[str, object]]:
    """(raw unit, question) → the adjudicator's value, from the study's adjudicated answers."""
    found = data.adjudications
    if found is None or not len(found):
        return {}
    return {
        (unit, str(question)): (str(level), value)
        for unit, question, value, level in zip(
            found["unit"].tolist(),
            found["question"].tolist(),
            found["value"].tolist(),
            found["level"].tolist(),
            strict=True,
        )
    }


def _adjudicated_codes(question: _Question, context: _Context) -> np.ndarray:
    """Per unit of the question, the category code of its adjudicated answer (-1: none)."""
    codes = np.full(question.answers.units, -1, dtype=np.int64)
    if not context.adjudicated:
        return codes
    name, level = question.group["question"], question.group["level"]
    position = {_plain(v): c for c, v in enumerate(question.categories)}
    for unit, rating in enumerate(question.units.tolist()):
        found = context.adjudicated.get((context.raw_units[rating], name))
        if found is None or found[0] != level:
            continue
        value = numbers_or_text(np.array([found[1]], dtype=object), level)
        if value is not None:
            codes[unit] = position.get(_plain(value[0]), -1)
    return codes


def _plain(value):
    """A category as JSON has it: whole numbers as ints, other numbers as floats, else text."""
    value = plain(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
