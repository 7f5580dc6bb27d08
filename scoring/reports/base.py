"""What a kind's report builder receives and returns (plain NumPy data, no Django).

The loader (``scoring.data``) reads a study in bulk into a ``StudyData``: column arrays
for items, responses and participants, plus the agreement observations. A builder turns
one population of it into ``ReportRow`` values; the service stores them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np

from annotation.services.populations import authentic_mask
from stats import ranking as bws
from stats.bootstrap import Interval
from stats.estimate import Estimate
from stats.groups import GroupMean, factorize, is_repeated, repeated

# Embeds a list of texts as rows of a matrix (the workers' sentence encoder); optional.
Embed = Callable[[list[str]], np.ndarray]


@dataclass(frozen=True)
class ReportRow:
    """One stored figure (``scoring.models.Report`` without study, population, time)."""

    metric: str
    group: dict[str, Any]
    value: float | None
    n: int
    ci_low: float | None = None
    ci_high: float | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "metric": self.metric,
            "group": self.group,
            "value": self.value,
            "n": self.n,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "details": self.details,
        }


def row(metric: str, group: dict, estimate: Estimate, ci: Interval | None = None, **details) -> ReportRow:
    """A row from an ``Estimate``: NaN becomes an empty value with the reason in details."""
    extra = {**estimate.details, **details}
    if estimate.reason:
        extra["reason"] = estimate.reason
    if ci is not None:
        extra["ci_method"] = ci.method
    return ReportRow(
        metric=metric,
        group=group,
        value=_number(estimate.value),
        n=estimate.n,
        ci_low=_number(ci.low) if ci else None,
        ci_high=_number(ci.high) if ci else None,
        details=_json_safe(extra),
    )


def mean_row(metric: str, group: dict, mean: GroupMean, **details) -> ReportRow:
    """A row for a mean or share with its sd and bootstrap interval."""
    extra = {"sd": mean.sd, **details} if not math.isnan(mean.sd) else details
    return row(metric, group, Estimate(mean.mean, n=mean.n), mean.ci, **extra)


@dataclass
class Columns:
    """Equal-length named arrays, filtered together.

    ``codes``: ``factorize`` of some columns, by name, with the array it was computed from
    (a column replaced since is factorised again): the loader gives those it has (the item
    cache stores text as codes into its sorted labels), ``factorized`` adds the others once,
    so the items' texts are not factorised again for every population and figure."""

    data: dict[str, np.ndarray]
    codes: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] = field(
        default_factory=dict, repr=False, compare=False
    )

    def __len__(self) -> int:
        return len(next(iter(self.data.values()))) if self.data else 0

    def __getitem__(self, name: str) -> np.ndarray:
        return self.data[name]

    def __contains__(self, name: str) -> bool:
        return name in self.data

    def factorized(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """``factorize(self[name])`` (sorted distinct values, each row's index), computed once."""
        values = self.data[name]
        known = self.codes.get(name)
        if known is None or known[0] is not values:
            known = (values, *factorize(values))
            self.codes[name] = known
        return known[1], known[2]

    def take(self, selector: np.ndarray) -> Columns:
        """The rows ``selector`` (a mask or row numbers) picks, in every column; a column of
        one repeated value stays one (a view: nothing copied per row)."""
        count = None
        taken = {}
        for name, values in self.data.items():
            if is_repeated(values):
                if count is None:
                    count = int(np.count_nonzero(selector)) if selector.dtype == bool else len(selector)
                taken[name] = np.broadcast_to(values[:1], (count,))
            else:
                taken[name] = values[selector]
        return Columns(taken)


@dataclass
class StudyData:
    """A study read for its reports.

    ``responses`` always has ``item`` and ``participant`` (row numbers into ``items`` and
    ``participants``), ``points``, ``correct`` (NaN when unscored), ``attention``,
    ``flagged``, ``excluded``, ``seconds`` (and, as the loader reads them, ``strong_sign``);
    plus what the builder asked for.
    ``items`` always has ``attention``; ``participants`` has ``model`` (an LLM simulator or
    automatic rater) and, for models, ``name`` (and ``definition`` when the loader read
    it). ``observations`` (agreement values) has ``response`` (row number), ``unit``,
    ``question``, ``value`` and ``level``.
    """

    kind: str
    config: dict
    annotations_per_item: int
    items: Columns
    responses: Columns
    participants: Columns
    observations: Columns
    # Participant row numbers → the pseudonyms the study's exports show (None: not known).
    rater_labels: Callable[[np.ndarray], list[str]] | None = None
    # The population these responses are ("": the study as read, every response).
    population_name: str = ""
    # The adjudicated answers' observations (``unit``, ``question``, ``value``, ``level``),
    # kept beside every population (those without adjudicators too) to compare with.
    adjudications: Columns | None = None

    def where(self, keep: np.ndarray) -> StudyData:
        """The same study with only the responses in ``keep`` (and their observations)."""
        if keep.all():
            return self  # nothing left out: no copy of a million-row column
        observations = self.observations
        if len(observations):
            renumber = np.cumsum(keep)
            renumber -= 1  # in place: one array of a million, not two
            mask = keep[observations["response"]]
            observations = observations.take(mask)
            observations.data["response"] = renumber[observations["response"]]
        return replace(self, responses=self.responses.take(keep), observations=observations)

    def population(self, name: str) -> StudyData:
        """The populations of ``annotation/services/populations.py``, over the columns
        ``scoring/data.py`` reads with its constants; ``population("passed").humans()
        .analysed()`` is exactly ``populations.counts_mask`` (the answers that count).

        ``all``: the annotators' answers, without participants a researcher excluded;
        ``passed``: also without the responses of participants who failed attention checks;
        ``adjudicated``: ``passed``, except that on an item with an adjudicated answer that
        answer alone stands for the item (adjudicated answers are in no other population).
        ``authentic``: ``passed`` less the answers with a strong sign of text not typed on the
        page (``populations.authentic_mask``).

        ``passed`` of the ``all`` population is derived from it (its responses less the
        flagged ones: the same rows, without filtering the whole study again), and
        ``authentic`` of ``passed`` likewise."""
        if name == self.population_name:
            return self
        if name == "passed" and self.population_name == "all":
            return replace(self.where(~self.responses["flagged"]), population_name="passed")
        if name == "authentic" and self.population_name == "passed":
            keep = authentic_mask(strong_sign=self._column("strong_sign"))
            return replace(self.where(keep), population_name="authentic")
        if self.population_name:
            raise ValueError(f"the {self.population_name!r} population has no population {name!r}")
        adjudicator = self._column("adjudicator")
        keep = ~self.responses["excluded"] & ~adjudicator
        if name in ("passed", "adjudicated", "authentic"):
            keep &= ~self.responses["flagged"]
        elif name != "all":
            raise ValueError(f"unknown population {name!r}")
        if name == "authentic":
            keep &= authentic_mask(strong_sign=self._column("strong_sign"))
        if name == "adjudicated" and "adjudicated" in self.items:
            keep = (keep & ~self.items["adjudicated"][self.responses["item"]]) | adjudicator
        adjudications = self._observations_of(adjudicator) if adjudicator.any() else None
        return replace(self.where(keep), population_name=name, adjudications=adjudications)

    def _observations_of(self, responses: np.ndarray) -> Columns:
        """The observations of the responses in the mask ``responses``, without row numbers."""
        observations = self.observations
        if not len(observations):
            return observations
        taken = observations.take(responses[observations["response"]])
        return Columns({name: values for name, values in taken.data.items() if name != "response"})

    def machine_responses(self) -> np.ndarray:
        """Per response, whether a machine rater gave it (a participant with source ``model``:
        an LLM simulator or automatic rater). The one test of "not a human answer": every
        figure is computed on the others (``humans``); only the rows that compare machines
        with humans, grouped by rater, look at these."""
        return self.participants["model"][self.responses["participant"]]

    def humans(self) -> StudyData:
        """The same population with the human answers only (adjudicators are humans)."""
        machine = self.machine_responses()
        return self.where(~machine) if machine.any() else self

    def _column(self, name: str) -> np.ndarray:
        """A boolean response column, all False when the loader did not provide it."""
        if name in self.responses:
            return self.responses[name]
        return np.zeros(len(self.responses), dtype=bool)

    def analysed(self) -> StudyData:
        """Without attention-check responses: they test the participant, not the systems."""
        return self.where(~self.responses["attention"])


@dataclass(frozen=True)
class Field:
    """A value the builder needs from each response or item: a Django lookup path and its
    type. Into a JSON field (``answer__guess``, ``payload__p``, ``provenance__system``):
    ``number`` (float, NaN when absent), ``text`` ("" when absent), ``length`` (a text's
    length in characters, as a number) or ``json`` (decoded).
    The loader also reads plain columns: ``column`` (a number), ``truth`` (a boolean, as
    0/1) and ``label`` (text)."""

    path: str
    type: str = "number"


@dataclass(frozen=True)
class TableSpec:
    """A dashboard table: rows are the distinct values of ``keys`` among the reports of
    ``metrics`` (one column each, with CI when stored); ``details`` adds columns read from
    the first metric's details (p-values…). Rows follow the order the builder wrote the
    figures in (scale order for categories)."""

    title: str
    metrics: tuple[str, ...]
    keys: tuple[str, ...]
    details: tuple[str, ...] = ()
    note: str = ""
    # The header of the metric's column when it is not the metric's name (a test's p).
    value_label: str = ""
    # The headers of the metrics' columns, one per metric, where they read better than the
    # metrics' names (the hybrid tables: "prediction-powered", "humans only", "judge only").
    labels: tuple[str, ...] = ()
    # Two keys naming the two sides of a comparison (``system``, ``over``): each pair is
    # shown once, in the direction where the detail ``pair_prefer`` is larger (``value``:
    # where the figure itself is).
    pair: tuple[str, ...] = ()
    pair_prefer: str = ""
    # Detail values the page marks as a warning (a rater ``not calibrated``).
    marks: frozenset[str] = frozenset()
    # The page lists at most this many rows (0: all), saying how many it left out.
    max_rows: int = 0


@dataclass(frozen=True)
class PlotSpec:
    """A dashboard plot of one metric: ``x`` group key on the axis, optional ``hue`` key
    for side-by-side bars, ``style`` ``bar`` / ``line`` / ``histogram``; only rows whose
    group has exactly the keys ``x`` (+ ``hue``) (+ ``fixed``) are drawn."""

    name: str
    title: str
    metric: str
    x: str
    hue: str | None = None
    style: str = "bar"
    ylabel: str = ""
    fixed: tuple[str, ...] = ()


@dataclass(frozen=True)
class Comparisons:
    """One question's comparisons of systems, per response of a ``StudyData``: the systems
    it showed (``shown``: codes into ``names``, -1 padding), the one it preferred (``best``:
    a pick, or MOST; -1 for none, a tie or no answer) and, for a best-worst choice, the one
    it put last (``worst``: LEAST). ``questions``: the agreement observations' questions this
    comparison stands for (the adaptive priority reads it instead of their vote shares)."""

    questions: tuple[str, ...]
    names: list[str]
    shown: np.ndarray
    best: np.ndarray
    worst: np.ndarray | None = None

    def wins(self) -> np.ndarray:
        """``W[i, j]``: answers that put system i above system j (``stats.ranking``)."""
        if self.worst is None:
            return bws.pick_win_matrix(self.shown, self.best, len(self.names))
        return bws.win_matrix(bws.appearances(self.shown, self.best, self.worst), len(self.names))


class KindReport:
    """The report builder of one task kind; subclasses live one per module in this package,
    each named by its kind (``TaskKind.report``).

    ``response_fields`` / ``item_fields`` name what the loader must read. ``rows`` turns
    the human answers of one population into report rows; ``machine_rows`` adds figures of
    machine raters, explicitly per rater. Agreement values are not a builder's business: the
    loader asks the kind (``agreement_fields`` / ``agreement_values``), their only source.
    """

    response_fields: ClassVar[dict[str, Field]] = {}
    item_fields: ClassVar[dict[str, Field]] = {}
    tables: ClassVar[tuple[TableSpec, ...]] = ()
    plots: ClassVar[tuple[PlotSpec, ...]] = ()

    def rows(self, data: StudyData, *, embed: Embed | None = None) -> list[ReportRow]:
        """The kind's figures; ``data`` holds human answers only."""
        return []

    def observation_systems(self, data: StudyData) -> np.ndarray | None:
        """Per agreement observation, the system it is about where that is not its item's
        ``provenance.system`` (None there); None: the items' for every one. The agreement
        per system reads it."""
        return None

    def priority_keys(self, data: StudyData) -> np.ndarray:
        """Per agreement observation, what the adaptive priority judges settled or not on
        its own (``stats.adaptive.item_priorities``): by default its question."""
        return np.asarray(data.observations["question"]).astype(str)

    def observation_design(self, data: StudyData, rows: np.ndarray) -> tuple[np.ndarray, ...] | None:
        """For the agreement observations ``rows``: the system each is about, the case its
        systems are compared within ("" none) and the unit a plan counts as an item; None:
        the item's ``provenance.system``, ``provenance.source_id`` and the item itself (the
        planner's and the stopping rule's default)."""
        return None

    def machine_rows(self, data: StudyData, *, embed: Embed | None = None) -> list[ReportRow]:
        """Figures of machine raters beside the humans, each row grouped by ``rater``;
        ``data`` holds every answer of the population (``data.machine_responses()`` tells
        them apart). Most kinds have none: the common ``agreement.machine_*`` rows compare
        every kind's machine raters with the humans."""
        return []

    def comparisons(self, data: StudyData) -> list[Comparisons]:
        """The kind's comparisons of systems (a pick among passages, MOST / LEAST), one per
        question; none for kinds that compare no systems."""
        return []

    def question_groups(self, config: dict) -> dict[str, str]:
        """Question → the group the study's config puts it in (agreement per group)."""
        return {}

    def question_order(self, config: dict) -> list[str]:
        """The questions in the order the study asks them, which the agreement tables follow
        so that they list questions as the kind's own tables do (others after, sorted)."""
        return []


def observation_columns(response, unit, question, value, level) -> Columns:
    """Agreement observations as columns (every argument a sequence or a scalar to repeat)."""
    response = np.asarray(response, dtype=np.int64)
    size = len(response)

    def column(values) -> np.ndarray:
        if isinstance(values, str):  # one str object on every row, held once
            return repeated(values, size)
        return np.asarray(values)

    return Columns(
        {
            "response": response,
            "unit": column(unit),
            "question": column(question),
            "value": column(value),
            "level": column(level),
        }
    )


def empty_observations() -> Columns:
    return observation_columns([], [], [], [], [])


def stacked(parts: list[Columns]) -> Columns:
    """Observations of several questions, one after the other."""
    if not parts:
        return empty_observations()
    if len(parts) == 1:  # one question: its columns as they are, not copied
        return parts[0]
    return Columns({name: np.concatenate([part[name] for part in parts]) for name in parts[0].data})


def _number(value) -> float | None:
    if value is None:
        return None
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else value


def _json_safe(value):
    """Details go into a JSON column: NumPy scalars → Python, NaN → None."""
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, np.ndarray):
        return [_json_safe(v) for v in value.tolist()]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    return value
