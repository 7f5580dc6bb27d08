"""Agreement figures every kind gets, grouped the way papers report them.

The kinds only say what the agreement values are (``agreement_values``); everything here
is written once for all of them:

- *scopes*: per question (``{question, level}``), pooled over every question of a level
  (``{questions: all, level}``: each (unit, question) is one unit, one alpha over all
  statements), per question group a study's config declares (``{question_group, level}``),
  and per value of a provenance key of the items (``{system, question, level}``, any key
  passed as ``by``);
- in each scope, among humans: Krippendorff's alpha, percent agreement, within-1 and
  within-2 points agreement and ICC(2,k) for numeric scales, Fleiss' kappa for nominal
  ones, Cronbach's alpha over the statements of a pooled scope, the pairwise Cohen's kappa
  matrix (unweighted, and linear and quadratic for ordinal scales) and its mean;
- humans and machine raters (participants with source ``model``): each model's alpha and
  kappa against the humans, against each human and against the human majority, and its mean
  absolute error against the humans' mean rating, beside the same figures of the humans
  among themselves (against the majority and the mean of the *other* humans), the ceiling;
  one ``agreement.rater_calibration`` row per rater and scope gathers them with the verdict
  (calibrated, or below the ceiling by more than the margin).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from stats.agreement import (
    alpha_and_percent_from_value_counts,
    alpha_from_pairs,
    alpha_from_value_counts,
    alpha_interval,
    percent_interval,
    value_counts_from_pairs,
)
from stats.bootstrap import Interval, seed_for
from stats.counting import count_distinct, distinct_counts
from stats.estimate import Estimate
from stats.groups import factorize
from stats.kappa import SharedUnits, fleiss_kappa, fleiss_kappa_interval, resampled_kappas
from stats.raters import (
    CEILING,
    DEFAULT_CALIBRATION_MARGIN,
    MAX_MAJORITY_VALUES,
    calibration_verdict,
    majority_references,
    mean_absolute_error,
    means_of_others,
    rating_pairs,
    unit_means,
)
from stats.reliability import (
    cronbach_alpha,
    icc_2k,
    icc_2k_interval,
    within_points_from_value_counts,
    within_points_interval,
)

from .base import ReportRow, StudyData, row

# Group keys the scopes use themselves: a provenance key may not take one of these names.
RESERVED_KEYS = frozenset(
    {"question", "questions", "question_group", "level", "weights", "annotator", "with", "rater", "against"}
)
# The pairwise kappa matrix is stored pair by pair up to this many annotators (else its mean).
MAX_MATRIX_RATERS = 12
# Beyond this many annotators (a crowd) no pairwise kappa is computed: alpha is the figure.
MAX_PAIRWISE_ANNOTATORS = 1000
# Pairs of annotators sharing fewer units than this have no kappa worth reporting.
MIN_SHARED = 2
# Largest units × annotators table built for ICC(2,k) (32 MiB of floats).
MAX_TABLE_CELLS = 4_000_000
# Kappa compares categories; scales with more values than this are not categories.
MAX_KAPPA_CATEGORIES = 64
NUMERIC_LEVELS = ("ordinal", "interval", "ratio")


@dataclass(frozen=True)
class Ratings:
    """The agreement values of one population, one row each, as integer codes: ``unit``,
    ``question`` (into ``questions``), ``level`` (into ``levels``), ``value`` (into the
    level's entry of ``domains``: sorted numbers, or texts at the nominal level; None when
    the level's values are not numbers and must be), who gave them (``rater``, participant
    row; ``model``, a machine rater) and each item's provenance values (codes, names)."""

    unit: np.ndarray
    question: np.ndarray
    level: np.ndarray
    value: np.ndarray
    response: np.ndarray
    rater: np.ndarray
    model: np.ndarray
    provenance: dict[str, tuple[np.ndarray, np.ndarray]]
    questions: np.ndarray
    levels: np.ndarray
    domains: tuple[np.ndarray | None, ...]

    @classmethod
    def of(
        cls, data: StudyData, question_order: Sequence[str] = (), systems: np.ndarray | None = None
    ) -> Ratings:
        """``systems``: per observation, the system it is about where that is not its item's
        ``provenance.system`` (a questionnaire's per-passage answers: their passage's), None
        elsewhere (``KindReport.observation_systems``)."""
        observations = data.observations
        response = observations["response"]
        rater = data.responses["participant"][response]
        item = data.responses["item"][response]
        provenance = {}
        for name in data.items.data:
            if name.startswith("provenance:"):
                names, codes = data.items.factorized(name)
                provenance[name.split(":", 1)[1]] = (codes[item], names)
        if systems is not None and "system" in provenance:
            codes, names = provenance["system"]
            own = np.array(
                [names[c] if s is None else s for c, s in zip(codes, systems, strict=True)], dtype=object
            )
            names, codes = factorize(own)
            provenance["system"] = (codes, names)
        questions, question = _in_order(*factorize(observations["question"]), question_order)
        levels, level = factorize(observations["level"])
        value = np.full(len(response), -1, dtype=np.int64)
        domains: list[np.ndarray | None] = []
        one_level = len(levels) == 1  # then every rating is at it: no masks, no copies
        for code, name in enumerate(levels):
            at_level = level == code
            raw = observations["value"] if one_level else observations["value"][at_level]
            values = numbers_or_text(raw, str(name))
            if values is None:
                domains.append(None)
                continue
            domain, codes = factorize(values)
            if one_level:
                value = codes.astype(np.int64, copy=False)
            else:
                value[at_level] = codes
            domains.append(domain)
        return cls(
            unit=factorize(observations["unit"])[1].astype(np.int64, copy=False),
            question=question,
            level=level,
            value=value,
            response=response,
            rater=rater,
            model=data.machine_responses()[response],
            provenance=provenance,
            questions=questions,
            levels=levels,
            domains=tuple(domains),
        )

    def take(self, mask: np.ndarray) -> Ratings:
        if mask.all():
            return self
        return self.rows(np.flatnonzero(mask))  # once, not once per field

    def rows(self, rows: np.ndarray) -> Ratings:
        """The ratings at these row numbers (a scope is often a small part)."""
        provenance = {key: (codes[rows], names) for key, (codes, names) in self.provenance.items()}
        fields = {name: getattr(self, name)[rows] for name in _RATING_FIELDS}
        return replace(self, provenance=provenance, **fields)

    def __len__(self) -> int:
        return len(self.unit)


def _in_order(names: np.ndarray, codes: np.ndarray, order: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """``factorize``'s sorted names and codes renumbered so that the names in ``order`` come
    first, in that order (the rest keep their sorted order after them)."""
    if not len(order):
        return names, codes
    rank = {name: position for position, name in enumerate(order)}
    new_order = sorted(range(len(names)), key=lambda i: (rank.get(str(names[i]), len(rank)), i))
    renumber = np.empty(len(names), dtype=np.int64)
    renumber[new_order] = np.arange(len(names))
    return names[new_order], renumber[codes]


_RATING_FIELDS = ("unit", "question", "level", "value", "response", "rater", "model")


@dataclass(frozen=True)
class Scope:
    """One group of ratings agreement is computed over: its report group, its level, the
    ratings (humans and machines), per rating its unit (an integer code) and its value
    (numbers, or texts at the nominal level; None when they must be numbers and are not)."""

    group: dict
    level: str
    ratings: Ratings
    units: np.ndarray
    values: np.ndarray | None
    questions: int
    pairs: bool  # whether this scope gets the kappa matrix and the human-machine figures


Labels = Callable[[np.ndarray], list[str]]


@dataclass(frozen=True)
class Calibration:
    """How machine raters are judged against the humans: the ``margin`` below the humans'
    own agreement a rater may stay (the setting ``RATER_CALIBRATION_MARGIN``), and each
    rater's recorded definition by name (shown beside its figures)."""

    margin: float = DEFAULT_CALIBRATION_MARGIN
    definitions: dict[str, dict] = field(default_factory=dict)


def agreement_scope_rows(
    data: StudyData,
    question_groups: dict[str, str],
    question_order: Sequence[str] = (),
    *,
    margin: float = DEFAULT_CALIBRATION_MARGIN,
    ratings: Ratings | None = None,
) -> list[ReportRow]:
    """Every grouped agreement figure of one (analysed) population, questions in
    ``question_order`` (the kind's, as its own tables list them), any others after, sorted;
    ``ratings``: ``Ratings.of(data, question_order)`` when the caller has read them."""
    if not len(data.observations):
        return []
    if ratings is None:
        ratings = Ratings.of(data, question_order)
    labels = labeller(data)
    calibration = Calibration(margin, _definitions(data))
    rows: list[ReportRow] = []
    for scope in scopes(ratings, question_groups):
        rows += scope_rows(scope, labels, calibration)
    return rows


def _definitions(data: StudyData) -> dict[str, dict]:
    """Machine raters' definitions by name (when the loader read them)."""
    if "definition" not in data.participants:
        return {}
    model, names = data.participants["model"], data.participants["name"]
    definitions = data.participants["definition"]
    return {str(names[r]): definitions[r] or {} for r in np.flatnonzero(model).tolist()}


def scopes(ratings: Ratings, question_groups: dict[str, str]) -> Iterator[Scope]:
    """Per question, pooled over a level's questions, per question group, per provenance value."""
    questions = [str(q) for q in ratings.questions]
    pooled_units = ratings.unit * max(len(questions), 1) + ratings.question
    for lv, level in enumerate(str(name) for name in ratings.levels):
        at_level = ratings.level == lv
        asked = distinct_counts(ratings.question[at_level])[0].tolist()
        scope = _Scoper(ratings, lv, level)
        for q in asked:
            mask = at_level & (ratings.question == q)
            yield scope({"question": questions[q], "level": level}, mask, ratings.unit, 1, True)
        if len(asked) > 1:
            yield scope({"questions": "all", "level": level}, at_level, pooled_units, len(asked), True)
        for name in sorted(set(question_groups.values())):
            members = [q for q in asked if question_groups.get(questions[q]) == name]
            if members:
                mask = at_level & np.isin(ratings.question, members)
                group = {"question_group": name, "level": level}
                yield scope(group, mask, pooled_units, len(members), False)
        for key, (codes, names) in sorted(ratings.provenance.items()):
            for code in distinct_counts(codes[at_level])[0].tolist():
                if names[code] == "":
                    continue
                for q in asked:
                    mask = at_level & (ratings.question == q) & (codes == code)
                    if mask.any():
                        group = {key: str(names[code]), "question": questions[q], "level": level}
                        yield scope(group, mask, ratings.unit, 1, False)


@dataclass(frozen=True)
class _Scoper:
    ratings: Ratings
    level_code: int
    level: str

    def __call__(
        self, group: dict, mask: np.ndarray, units: np.ndarray, questions: int, pairs: bool
    ) -> Scope:
        if mask.all():
            ratings = self.ratings
        else:  # the rows found once, for the ratings and the units alike
            rows = np.flatnonzero(mask)
            ratings, units = self.ratings.rows(rows), units[rows]
        domain = self.ratings.domains[self.level_code]
        values = None if domain is None else domain[ratings.value]
        return Scope(group, self.level, ratings, units, values, questions, pairs)


def scope_rows(scope: Scope, labels: Labels, calibration: Calibration | None = None) -> list[ReportRow]:
    humans = ~scope.ratings.model
    values = scope.values
    if values is None:
        reason = f"{scope.level} values must be numbers"
        return [row("agreement.krippendorff_alpha", scope.group, Estimate.undefined(reason))]
    human_ratings = scope.ratings.take(humans)
    every = human_ratings is scope.ratings  # no machine rater here: no copies
    human_values = values if every else values[humans]
    rows = human_rows(scope, human_values, scope.units if every else scope.units[humans], human_ratings)
    if scope.pairs:
        rows += kappa_matrix_rows(scope, human_values, human_ratings, labels)
        if scope.ratings.model.any():
            rows += machine_rows(scope, values, labels, calibration or Calibration())
    return rows


def human_rows(scope: Scope, values: np.ndarray, units: np.ndarray, ratings: Ratings) -> list[ReportRow]:
    """Agreement among human annotators in one scope, each figure with its interval from a
    bootstrap over the scope's units (``_unit_ci``; Cronbach's alpha: Feldt's)."""
    group, level = scope.group, scope.level
    counts, domain = value_counts_from_pairs(units, values)
    alpha, percent = alpha_and_percent_from_value_counts(counts, level, value_domain=domain)
    rows = [row("agreement.krippendorff_alpha", group, alpha, _alpha_ci(alpha, counts, domain, level, group))]
    if level == "ordinal":
        interval = alpha_from_value_counts(counts, "interval", value_domain=domain)
        as_interval = {**group, "level": "interval"}
        ci = _alpha_ci(interval, counts, domain, "interval", as_interval)
        rows.append(row("agreement.krippendorff_alpha", as_interval, interval, ci))
    seed = seed_for("agreement.percent", group)
    rows.append(
        row("agreement.percent", group, percent, _unit_ci(percent, percent_interval, counts, seed=seed))
    )
    if level == "nominal":
        dense = counts if isinstance(counts, np.ndarray) else counts.toarray()
        fleiss = fleiss_kappa(dense)
        seed = seed_for("agreement.fleiss_kappa", group)
        rows.append(
            row(
                "agreement.fleiss_kappa",
                group,
                fleiss,
                _unit_ci(fleiss, fleiss_kappa_interval, dense, seed=seed),
            )
        )
        return rows
    if level == "ordinal":
        for points in (1, 2):
            within = within_points_from_value_counts(counts, domain, points)
            seed = seed_for(f"agreement.within_{points}", group)
            ci = _unit_ci(within, within_points_interval, counts, domain, points, seed=seed)
            rows.append(row(f"agreement.within_{points}", group, within, ci))
    icc, table = _icc(units, ratings.rater, values)
    rows.append(
        row(
            "agreement.icc2k",
            group,
            icc,
            _unit_ci(icc, icc_2k_interval, table, seed=seed_for("agreement.icc2k", group)),
        )
    )
    if scope.questions > 1:
        cronbach, bounds = cronbach_alpha(_respondents_by_question(ratings, values))
        ci = None if bounds is None else Interval(bounds[0], bounds[1], "feldt")
        rows.append(row("agreement.cronbach_alpha", group, cronbach, ci))
    return rows


def _alpha_ci(alpha: Estimate, counts, domain: np.ndarray, level: str, group: dict) -> Interval | None:
    """Alpha's interval from a bootstrap over units (``stats.agreement.alpha_interval``),
    seeded by the figure's group so that a recomputed report shows the same interval."""
    seed = seed_for("agreement.krippendorff_alpha", group)
    return _unit_ci(alpha, alpha_interval, counts, level, value_domain=domain, seed=seed)


def _unit_ci(
    estimate: Estimate, interval: Callable[..., Interval | None], *args, **kwargs
) -> Interval | None:
    """The interval of a defined figure (an undefined one has none)."""
    return interval(*args, **kwargs) if estimate.defined else None


def _icc(units: np.ndarray, raters: np.ndarray, values: np.ndarray) -> tuple[Estimate, np.ndarray | None]:
    """ICC(2,k) over the units every annotator of the scope rated (a fully crossed design),
    and the units × annotators table it was computed from."""
    unit_ids, unit_codes = factorize(units)
    rater_ids, rater_codes = factorize(raters)
    if len(unit_ids) * len(rater_ids) > MAX_TABLE_CELLS:
        return Estimate.undefined("too many units × annotators for a fully crossed table"), None
    table = np.full((len(unit_ids), len(rater_ids)), np.nan)
    table[unit_codes, rater_codes] = values
    estimate = icc_2k(table)
    if estimate.reason == "fewer than two complete rows":
        reason = (
            f"fewer than two units rated by all {len(rater_ids)} annotators: ICC(2,k) needs a crossed design"
        )
        return Estimate.undefined(reason, n=estimate.n, **estimate.details), table
    return estimate, table


def _respondents_by_question(ratings: Ratings, values: np.ndarray) -> np.ndarray:
    """Responses × questions (a response rates every statement of its page)."""
    _, response_codes = factorize(ratings.response)
    questions, question_codes = factorize(ratings.question)
    table = np.full((int(response_codes.max()) + 1 if len(response_codes) else 0, len(questions)), np.nan)
    table[response_codes, question_codes] = values
    return table


def kappa_matrix_rows(scope: Scope, values: np.ndarray, ratings: Ratings, labels: Labels) -> list[ReportRow]:
    """Cohen's kappa of every pair of human annotators sharing two units or more, and the
    mean over those pairs."""
    domain, codes = factorize(values)
    if len(domain) > MAX_KAPPA_CATEGORIES:
        reason = f"more than {MAX_KAPPA_CATEGORIES} distinct values: kappa needs categories"
        return [
            row("agreement.pairwise_kappa", {**scope.group, "weights": "none"}, Estimate.undefined(reason))
        ]
    rater, annotators = ratings.rater, count_distinct(ratings.rater)
    if annotators > MAX_PAIRWISE_ANNOTATORS:
        reason = (
            f"more than {MAX_PAIRWISE_ANNOTATORS} annotators: pairwise kappa is for small teams; see alpha"
        )
        group = {**scope.group, "weights": _weightings(scope.level)[0] or "none"}
        return [row("agreement.pairwise_kappa", group, Estimate.undefined(reason), annotators=annotators)]
    units = scope.units[~scope.ratings.model]
    first, second = rating_pairs(units, rater)
    shared = SharedUnits.of(
        rater[first], rater[second], codes[first], codes[second], min_shared=MIN_SHARED, unit=units[first]
    )
    names = {}
    if annotators <= MAX_MATRIX_RATERS:
        ids = np.unique(np.concatenate([shared.first, shared.second]))
        names = dict(zip(ids.tolist(), labels(ids), strict=True))
    rows = []
    for weights in _weightings(scope.level):
        kappas = shared.kappas(len(domain), weights, _positions(domain))
        group = {**scope.group, "weights": weights or "none"}
        mean = kappas.mean("no two annotators share two units with a defined kappa", MIN_SHARED)
        resampled = _resampled_kappas(
            shared, len(domain), weights, domain, seed_for("agreement.pairwise_kappa", group)
        )
        ci = resampled.mean_interval() if mean.defined else None
        rows.append(row("agreement.pairwise_kappa", group, mean, ci, annotators=annotators))
        if names:
            for index, (a, b) in enumerate(zip(kappas.first.tolist(), kappas.second.tolist(), strict=True)):
                pair = {**group, "annotator": names[a], "with": names[b]}
                estimate = kappas.estimate(index)
                pair_ci = resampled.pair_interval(index) if estimate.defined else None
                rows.append(row("agreement.cohen_kappa", pair, estimate, pair_ci))
    return rows


def _resampled_kappas(shared: SharedUnits, categories: int, weights, domain: np.ndarray, seed: int):
    """Every pair's kappa in each resample of the units (``stats.kappa.resampled_kappas``):
    the intervals of the mean over pairs and of each pair come from the same draws."""
    return resampled_kappas(shared, categories, weights, _positions(domain), min_shared=MIN_SHARED, seed=seed)


def _weightings(level: str) -> tuple[str | None, ...]:
    """Categories unweighted; ordinal scales also linear and quadratic; numbers quadratic."""
    return {"nominal": (None,), "ordinal": (None, "linear", "quadratic")}.get(level, ("quadratic",))


def machine_rows(
    scope: Scope, values: np.ndarray, labels: Labels, calibration: Calibration
) -> list[ReportRow]:
    """Each machine rater's alpha and kappa against the humans, each human and the human
    majority, its MAE against the humans' mean (numeric scales), and the humans' own
    figures (``rater: humans``) as the ceiling; then one ``agreement.rater_calibration``
    row per rater gathering them with the verdict."""
    domain, codes = factorize(values)
    if len(domain) > min(MAX_KAPPA_CATEGORIES, MAX_MAJORITY_VALUES):
        return []
    ratings, units = scope.ratings, scope.units
    weights = None if scope.level == "nominal" else "quadratic"
    compare = _Comparison(scope.level, domain, len(domain), weights, scope.units)
    first, second = rating_pairs(units, ratings.rater)
    model = ratings.model
    # the human first in every human-machine pair
    swap = model[first] & ~model[second]
    first, second = np.where(swap, second, first), np.where(swap, first, second)
    both_human = ~model[first] & ~model[second]
    pairs = compare.rows(
        scope.group, "humans", "humans", ratings.rater, codes, first[both_human], second[both_human]
    )
    human = ~model
    unit_ids, unit_codes = factorize(units)
    # A human's rating meets the other humans' majority, a machine's all the humans'.
    majority = majority_references(unit_codes, codes, human, len(unit_ids), len(domain))
    majority_rows = compare.against_majority(scope.group, "humans", ratings.rater, codes, majority, human)
    errors = _RatingErrors.of(scope, values, unit_codes, len(unit_ids))
    ceiling = _figures(pairs, majority_rows, errors.of_humans(), errors.human_units())
    rows = [*pairs, *majority_rows]
    calibration_rows = [_calibration_row(scope.group, "humans", ceiling, None, calibration)]
    machines = np.unique(ratings.rater[model])
    names = labels(machines)
    humans_by_name = _human_names(ratings.rater[human], labels)
    for machine, name in zip(machines.tolist(), names, strict=True):
        mine = (ratings.rater[second] == machine) & ~model[first]
        pairs = compare.rows(scope.group, name, "humans", ratings.rater, codes, first[mine], second[mine])
        pairs += compare.each_human(
            scope.group, name, ratings.rater, codes, first[mine], second[mine], humans_by_name
        )
        own = ratings.rater == machine
        majority_rows = compare.against_majority(scope.group, name, ratings.rater, codes, majority, own)
        figures = _figures(pairs, majority_rows, errors.of_rater(own), errors.rater_units(own))
        rows += [*pairs, *majority_rows]
        calibration_rows.append(_calibration_row(scope.group, name, figures, ceiling, calibration))
    return rows + calibration_rows


def _human_names(humans: np.ndarray, labels: Labels) -> dict[int, str] | None:
    """The humans' labels by participant row, when they are few enough to compare one by one."""
    ids = np.unique(humans)
    if len(ids) > MAX_MATRIX_RATERS:
        return None
    return dict(zip(ids.tolist(), labels(ids), strict=True))


@dataclass(frozen=True)
class _RatingErrors:
    """Absolute errors of ratings against the humans' mean rating of the unit (numeric
    scales only: ``values`` None at the nominal level)."""

    scope: Scope
    values: np.ndarray | None
    unit_codes: np.ndarray
    units: int

    @classmethod
    def of(cls, scope: Scope, values: np.ndarray, unit_codes: np.ndarray, units: int) -> _RatingErrors:
        numeric = scope.level != "nominal" and values.dtype.kind in "biuf"
        return cls(scope, values.astype(np.float64) if numeric else None, unit_codes, units)

    @property
    def _human(self) -> np.ndarray:
        return ~self.scope.ratings.model

    def of_humans(self) -> Estimate | None:
        """Each human rating against the mean of the *other* humans of its unit."""
        if self.values is None:
            return None
        human = self._human
        return mean_absolute_error(
            self.values[human], means_of_others(self.unit_codes[human], self.values[human], self.units)
        )

    def of_rater(self, own: np.ndarray) -> Estimate | None:
        """The rater's ratings against the mean of the humans' ratings of the unit."""
        if self.values is None:
            return None
        human = self._human
        means = unit_means(self.unit_codes[human], self.values[human], self.units)
        return mean_absolute_error(self.values[own], means[self.unit_codes[own]])

    def human_units(self) -> int:
        """Units two humans or more rated (where the humans can be compared)."""
        return int((np.bincount(self.unit_codes[self._human], minlength=self.units) >= 2).sum())

    def rater_units(self, own: np.ndarray) -> int:
        """Units the rater and at least one human rated."""
        rated = np.bincount(self.unit_codes[self._human], minlength=self.units) > 0
        return int(rated[np.unique(self.unit_codes[own])].sum())


def _figures(pairs: list[ReportRow], majority: list[ReportRow], mae: Estimate | None, items: int) -> dict:
    """The figures of one rater the calibration row gathers (None: undefined)."""
    value = {(r.metric, r.group["against"]): r.value for r in (*pairs, *majority)}
    return {
        "alpha": value[("agreement.machine_alpha", "humans")],
        "kappa_vs_humans": value[("agreement.machine_kappa", "humans")],
        "kappa_vs_majority": value[("agreement.machine_kappa", "majority")],
        "mae": None if mae is None else (None if np.isnan(mae.value) else mae.value),
        "items": items,
    }


def _calibration_row(
    group: dict, rater: str, figures: dict, ceiling: dict | None, calibration: Calibration
) -> ReportRow:
    """Value: the rater's alpha against the humans; details: its kappas and MAE beside the
    humans' (``*_ceiling``) and the verdict (``calibrated``: ``yes`` / ``not calibrated`` /
    ``unknown``). ``ceiling`` None: this is the humans' own row (``calibrated: ceiling``)."""
    alpha, items = figures["alpha"], figures["items"]
    if alpha is None:
        estimate = Estimate.undefined("no alpha against the humans", n=items)
    else:
        estimate = Estimate(alpha, n=items)
    if ceiling is None:
        ceiling, verdict = figures, CEILING
    else:
        verdict = calibration_verdict(alpha, ceiling["alpha"], calibration.margin)
    details = {
        **{name: figures[name] for name in ("items", "kappa_vs_humans", "kappa_vs_majority", "mae")},
        "ceiling": ceiling["alpha"],
        "kappa_ceiling": ceiling["kappa_vs_majority"],
        "mae_ceiling": ceiling["mae"],
        "margin": calibration.margin,
        "calibrated": verdict,
    }
    if rater in calibration.definitions:
        details["definition"] = calibration.definitions[rater]
    return row("agreement.rater_calibration", {**group, "rater": rater}, estimate, **details)


@dataclass(frozen=True)
class _Comparison:
    level: str
    domain: np.ndarray
    categories: int
    weights: str | None
    units: np.ndarray  # per rating of the scope, its unit: what the intervals resample

    def rows(self, group, rater: str, against: str, raters, codes, first, second) -> list[ReportRow]:
        """Alpha over the pairs (each pair a unit of two values) and the mean of the pairs'
        raters' Cohen's kappas."""
        shared = self._shared(raters[first], raters[second], codes[first], codes[second], self.units[first])
        return self._rows(group, rater, against, codes[first], codes[second], shared, self.units[first])

    def each_human(
        self, group, rater: str, raters, codes, first, second, humans: dict[int, str] | None
    ) -> list[ReportRow]:
        """Cohen's kappa between ``rater`` (``second`` of each pair) and each human
        (``first``): ``against: annotator``, the human's label in ``annotator``; only when
        the humans are few enough to list."""
        if humans is None:
            return []
        shared = self._shared(raters[first], raters[second], codes[first], codes[second], self.units[first])
        kappas = shared.kappas(self.categories, self.weights, _positions(self.domain))
        weights = self.weights or "none"
        resampled = self._resampled(shared, {**group, "rater": rater, "against": "annotator"})
        rows = []
        for index, human in enumerate(kappas.first.tolist()):
            keys = {**group, "rater": rater, "against": "annotator", "annotator": humans[human]}
            estimate = kappas.estimate(index)
            ci = resampled.pair_interval(index) if estimate.defined else None
            rows.append(row("agreement.machine_kappa", keys, estimate, ci, weights=weights))
        return rows

    def against_majority(self, group, rater: str, raters, codes, reference, mine) -> list[ReportRow]:
        """Each rating of ``mine`` with the majority ``reference`` of its unit (when there is one)."""
        keep = mine & (reference >= 0)
        shared = self._shared(
            raters[keep], np.full(int(keep.sum()), -1), codes[keep], reference[keep], self.units[keep]
        )
        return self._rows(
            group,
            rater,
            "majority",
            codes[keep],
            reference[keep],
            shared,
            self.units[keep],
            "no two units with both a rating and a majority to compare it with",
        )

    def _shared(self, first_rater, second_rater, first_code, second_code, unit) -> SharedUnits:
        return SharedUnits.of(
            first_rater, second_rater, first_code, second_code, min_shared=MIN_SHARED, unit=unit
        )

    def _resampled(self, shared: SharedUnits, keys: dict):
        return _resampled_kappas(
            shared, self.categories, self.weights, self.domain, seed_for("agreement.machine_kappa", keys)
        )

    def _rows(
        self,
        group,
        rater,
        against,
        a,
        b,
        shared: SharedUnits,
        units: np.ndarray,
        reason: str = "no two raters share two units with a defined kappa",
    ) -> list[ReportRow]:
        """Alpha over the compared pairs (each pair a unit of alpha; the interval draws the
        scope's units, each with all of its pairs) and the mean of the pairs' kappas (the
        interval from the same bootstrap over units)."""
        pair_units = np.repeat(np.arange(len(a)), 2)
        pair_values = self.domain[np.column_stack([a, b]).ravel()]
        keys = {**group, "rater": rater, "against": against}
        alpha_ci = None
        if len(a):
            alpha = alpha_from_pairs(pair_units, pair_values, self.level)
            if alpha.defined:
                counts, domain = value_counts_from_pairs(pair_units, pair_values)
                seed = seed_for("agreement.machine_alpha", keys)
                alpha_ci = alpha_interval(counts, self.level, value_domain=domain, clusters=units, seed=seed)
        else:
            alpha = Estimate.undefined("nothing to compare")
        kappa = shared.kappas(self.categories, self.weights, _positions(self.domain)).mean(reason, MIN_SHARED)
        ci = self._resampled(shared, keys).mean_interval() if kappa.defined else None
        return [
            row("agreement.machine_alpha", keys, alpha, alpha_ci, pairs=len(a)),
            row("agreement.machine_kappa", keys, kappa, ci, weights=self.weights or "none"),
        ]


def _positions(domain: np.ndarray) -> np.ndarray | None:
    """Numeric values are their own positions on the scale (weights in points)."""
    return domain.astype(np.float64) if domain.dtype.kind in "biuf" else None


def numbers_or_text(raw: np.ndarray, level: str) -> np.ndarray | None:
    """Numbers as floats; at the nominal level anything else compares as text."""
    try:
        numeric = np.asarray(raw, dtype=np.float64)  # no copy of numbers already floats
    except (TypeError, ValueError):
        numeric = None
    if numeric is not None:
        return numeric
    if level != "nominal":
        return None
    return np.array(["" if v is None else str(v) for v in raw], dtype=object).astype(str)


def labeller(data: StudyData) -> Labels:
    """Machine raters by name; humans by the study's pseudonyms when the loader gave them."""
    names = data.participants["name"]
    model = data.participants["model"]
    human_labels = data.rater_labels

    def labels(rows: np.ndarray) -> list[str]:
        rows = np.asarray(rows, dtype=np.int64)
        found = [str(names[r]) if model[r] else "" for r in rows]
        humans = [r for r in rows.tolist() if not model[r]]
        if humans:
            given = (
                human_labels(np.asarray(humans)) if human_labels else [f"annotator {r + 1}" for r in humans]
            )
            by_row = dict(zip(humans, given, strict=True))
            found = [label or by_row[r] for label, r in zip(found, rows.tolist(), strict=True)]
        return found

    return labels
