"""Annotator competence and aggregated labels, for every kind's categorical questions.

Written once for every kind over the agreement observations (``Ratings``): each nominal
question, and each ordinal one with few values (its values then count as categories, the
order unused), gets Dawid–Skene and MACE (``stats.competence``) fitted on the humans'
answers of the population. Stored as figures:

- ``competence.mace`` / ``competence.dawid_skene`` per annotator and question
  (``{question, level, annotator}``, when two questions or more are fitted) and pooled
  over the questions (``{annotator}``: the mean of the questions' competences weighted by
  the annotator's answers to each, least competent first);
- ``competence.label`` per unit and model, in the ``passed`` population only (the answers
  that count; ``all`` has the competences, which the participants page reads, but no
  label rows) (``{question, level, model, item}``, plus
  ``unit`` when a question has several units per item): the value is the posterior
  probability of the aggregated label, the label in details with the majority vote's
  (up to ``MAX_LABELLED_UNITS`` units per question; a question with more than
  ``MAX_FITTED_ANSWERS`` answers is not fitted, and an undefined row says so);
- ``competence.majority_agreement`` and ``competence.adjudicated_agreement`` per question
  and model: the share of units whose aggregated label is the majority's (units with one
  most frequent answer) and the adjudicator's (items with an adjudicated answer).

The ``adjudicated`` population gets none: there the adjudicator's answer stands for the
item, so an aggregate would only repeat it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np

from stats.bootstrap import seed_for
from stats.competence import Answers, LabelModel, competence_identifiability, dawid_skene, mace
from stats.estimate import Estimate
from stats.groups import factorize
from stats.raters import majority_codes

from .agreement import Labels, Ratings, labeller, numbers_or_text
from .base import ReportRow, StudyData, TableSpec, row

MODELS = ("mace", "dawid_skene")
# An ordinal scale with more values than this is a rating, not a set of categories.
MAX_ORDINAL_CATEGORIES = 7
# MACE in reports: restarts, and the change of log-likelihood per answer that ends one
# (a run of at most 50 EM steps over the question's answers; about 25 at this tolerance).
REPORT_MACE_RESTARTS = 2
REPORT_MACE_TOLERANCE = 1e-5
# The dashboard lists this many rows of a label or annotator table; the API and exports have all.
DASHBOARD_LABELS = 200
# Beyond this many answers to one question the models are not fitted (EM's time grows
# with the answers: about 200 passes over them), and the figures say so.
MAX_FITTED_ANSWERS = 100_000
# Beyond this many units of one question their labels are not stored one row each.
MAX_LABELLED_UNITS = 50_000

COMPETENCE_TABLE = TableSpec(
    title="Annotator competence, all categorical questions",
    metrics=("competence.mace", "competence.dawid_skene"),
    keys=("annotator",),
    max_rows=DASHBOARD_LABELS,
    note="MACE: the estimated probability that the annotator knows the answer rather than "
    "guessing; Dawid–Skene: the estimated probability that their answer is right. Both fitted "
    "on the questions with categories (docs/statistics.md says what each assumes); the mean "
    "over questions weighted by answers; n = answers. Least competent (MACE) first. Each "
    "item's aggregated label is listed without the attention-check failures.",
)
QUESTION_COMPETENCE_TABLE = TableSpec(
    title="Annotator competence per question",
    metrics=("competence.mace", "competence.dawid_skene"),
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
    note="The model's most probable label and its posterior probability; the exports' "
    "aggregated-labels table and the reports API list every item.",
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
    rows: list[ReportRow] = []
    pooled: dict[str, dict[str, list[tuple[float, int, str | None]]]] = {model: {} for model in MODELS}
    labels = data.population_name != "all"  # the answers that count label the items
    per_question: list[ReportRow] = []
    fitted = 0
    for question in _categorical_questions(ratings):
        if isinstance(question, dict):
            rows += _not_fitted_rows(question)
            continue
        fitted += 1
        annotators, others = question_rows(question, context, pooled, labels=labels)
        per_question += annotators
        rows += others
    # per question only when there are several: else the pooled rows say the same
    return (per_question if fitted > 1 else []) + _pooled_rows(pooled) + rows


def _not_fitted_rows(group: dict) -> list[ReportRow]:
    """A question with too many answers to fit: one undefined row per model says so."""
    reason = f"more than {MAX_FITTED_ANSWERS} answers to the question: not fitted"
    return [
        row(f"competence.{model}", {**group, "annotator": "all"}, Estimate.undefined(reason))
        for model in MODELS
    ]


@dataclass(frozen=True)
class _Question:
    """One question's answers as codes, with the names to report them by."""

    group: dict
    answers: Answers
    annotators: np.ndarray  # participant row of each annotator code
    units: np.ndarray  # unit code → row of one of its ratings (for its item and name)
    categories: np.ndarray  # the label of each category code


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
    """Each (question, level) whose values are categories, as a ``_Question`` (its group
    alone when it has too many answers to fit: counted before anything is copied)."""
    for lv, level in enumerate(str(name) for name in ratings.levels):
        domain = ratings.domains[lv]
        if domain is None or level not in ("nominal", "ordinal"):
            continue
        at_level = ratings.level == lv
        for q in np.unique(ratings.question[at_level]).tolist():
            rows = np.flatnonzero(at_level & (ratings.question == q))
            group = {"question": str(ratings.questions[q]), "level": level}
            given = int(np.count_nonzero(np.bincount(ratings.value[rows], minlength=len(domain))))
            if given < 2 or (level == "ordinal" and given > MAX_ORDINAL_CATEGORIES):
                continue  # one value only, or a rating scale rather than categories
            if len(rows) > MAX_FITTED_ANSWERS:
                yield group
                continue
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
            )


def question_rows(
    question: _Question, context: _Context, pooled: dict, *, labels: bool = True
) -> tuple[list[ReportRow], list[ReportRow]]:
    """The question's competence rows per annotator (also added to ``pooled``), and its
    label and agreement rows."""
    answers = question.answers
    majority = majority_codes(answers.unit, answers.label, answers.units, answers.categories)
    per_annotator = np.bincount(answers.annotator, minlength=answers.annotators)
    per_unit = np.bincount(answers.unit, minlength=answers.units)
    names = context.labels(question.annotators)
    adjudicated = _adjudicated_codes(question, context)
    identifiability = competence_identifiability(answers)
    if not identifiability.identifiable:  # no fit: its figures would look like findings
        reasons = [identifiability.reason] * len(names)
        return _competence_rows(question, names, per_annotator, None, reasons, pooled), []
    annotators, rows = [], []
    for model in fit_models(question):
        annotators += _competence_rows(
            question, names, per_annotator, model, identifiability.annotators, pooled
        )
        if labels and answers.units <= MAX_LABELLED_UNITS:
            rows += _label_rows(question, context, model, majority, adjudicated, per_unit)
        rows += _agreement_rows(question.group, model, majority, adjudicated)
    return annotators, rows


def _competence_rows(
    question: _Question,
    names: Sequence[str],
    per_annotator: np.ndarray,
    model: LabelModel | None,
    reasons: Sequence[str | None],
    pooled: dict,
) -> list[ReportRow]:
    """Each annotator's competence row under ``model`` (every model when None: nothing
    fitted), undefined with its reason where ``reasons`` gives one; also added to ``pooled``."""
    rows = []
    for model_name in MODELS if model is None else (model.model,):
        for code, name in enumerate(names):
            n, reason = int(per_annotator[code]), reasons[code]
            if reason is not None or model is None:
                competence = Estimate.undefined(reason or "not fitted", n=n)
            else:
                competence = Estimate(float(model.competence[code]), n=n)
            rows.append(row(f"competence.{model_name}", {**question.group, "annotator": name}, competence))
            pooled[model_name].setdefault(name, []).append((competence.value, n, reason))
    return rows


def fit_models(question: _Question) -> list[LabelModel]:
    """MACE (seeded by the question) and Dawid–Skene on one question's answers."""
    seed = seed_for("competence", question.group["question"], question.group["level"])
    fitted = mace(question.answers, seed=seed, restarts=REPORT_MACE_RESTARTS, tolerance=REPORT_MACE_TOLERANCE)
    return [fitted, dawid_skene(question.answers)]


def _label_rows(question, context, model: LabelModel, majority, adjudicated, per_unit) -> list[ReportRow]:
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


def _agreement_rows(group: dict, model: LabelModel, majority, adjudicated) -> list[ReportRow]:
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


def _pooled_rows(pooled: dict[str, dict[str, list[tuple[float, int, str | None]]]]) -> list[ReportRow]:
    """Each annotator's competence over the questions, weighted by their answers; the
    least competent by MACE first (the order the dashboard lists them in)."""
    rows = []
    by_model = {model: dict(_weighted_means(figures)) for model, figures in pooled.items()}
    order = sorted(by_model["mace"], key=lambda name: _ascending(by_model["mace"][name][0]))
    for model, means in by_model.items():
        for name in order:
            estimate, questions = means[name]
            rows.append(row(f"competence.{model}", {"annotator": name}, estimate, questions=questions))
    return rows


def _ascending(estimate: Estimate) -> tuple:
    return (0, estimate.value) if estimate.defined else (1, 0.0)


def _weighted_means(
    by_annotator: dict[str, list[tuple[float, int, str | None]]],
) -> Iterator[tuple[str, tuple[Estimate, int]]]:
    """Annotator → (mean competence over their questions weighted by answers, questions);
    over the questions where it is identifiable, undefined with the reasons where it is on none."""
    for name, figures in by_annotator.items():
        values = np.array([v for v, _, _ in figures])
        weights = np.array([n for _, n, _ in figures], dtype=np.float64)
        known = ~np.isnan(values) & (weights > 0)
        if not known.any():
            reasons = sorted({reason for _, _, reason in figures if reason})
            estimate = Estimate.undefined("; ".join(reasons) or "no answers", n=int(weights.sum()))
        else:
            mean = float(np.average(values[known], weights=weights[known]))
            estimate = Estimate(mean, n=int(weights[known].sum()))
        yield name, (estimate, len(figures))


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
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value
