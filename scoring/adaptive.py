"""Adaptive collection, on the reports' side: each item's priority and the stopping rule.

The reports job (``services.compute_study_reports``) calls ``refresh_adaptive`` with the
study it has just read, so an adaptive study's answers are read once for both. From the
answers that count (``StudyData.population("passed").humans().analysed()``, the rule of
``annotation/services/populations.py``), ``stats.adaptive`` scores how unsettled each item
is (for a question comparing systems, how close the comparison of its systems is over the
whole study: the kind's ``KindReport.comparisons``); the scores become ``Item.priority``,
which the pick reads through its index
(``annotation.services.participation.assignment``). The researcher's stopping rule (``adaptive.stop``)
is checked on the same answers: once the confidence sequence of the difference between
the two systems on the question excludes 0 (or is narrow enough), the study is closed,
exactly once, with the interval recorded (``study_status.close_study_by_rule``). Whether met or
not, the rule's interval at this look is stored with the reports (``STOPPING_METRIC``), so
the dashboard and the overview show how far the study is from stopping.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.db import transaction

from annotation.errors import InputError
from annotation.models import Item, Study
from annotation.services.participation.adaptive import StopRule, adaptive_settings
from annotation.services.study_status import close_study_by_rule
from scoring.models import Report
from scoring.planning import question_values
from scoring.reports.base import KindReport, ReportRow, StudyData, TableSpec, row
from stats.adaptive import (
    Look,
    comparison_priorities,
    difference_sequence,
    item_priorities,
    pair_uncertainty,
    settled,
)
from stats.bootstrap import Interval
from stats.estimate import Estimate

PRIORITY_BATCH = 500  # items per UPDATE: each batch holds its rows' locks only briefly
# The stopping rule's interval at the last recompute, stored with every population (it is
# always over the answers that count); read back from ``passed``, which every recompute has.
STOPPING_METRIC = "adaptive.stopping_interval"
STOPPING_POPULATION = "passed"
STOPPING_TABLE = TableSpec(
    "Stopping rule: the difference now, with its confidence sequence",
    (STOPPING_METRIC,),
    ("question", "system", "over"),
    details=("n_first", "n_second", "items_first", "items_second", "looks", "alpha", "rule", "met"),
    note="The mean of the first system's item means less the second's over the answers that count; "
    "the interval holds at every look together and counts each item once however often it was "
    'answered (docs/statistics.md, "Adaptive collection"). n: answers of both systems; '
    "looks: recomputes that measured it.",
)


@dataclass(frozen=True)
class AdaptiveResult:
    items: int  # priorities written
    look: Look | None  # the stopping rule's interval now (None: no rule, or not measurable yet)
    closed: bool  # this call closed the study
    row: ReportRow | None = None  # the rule's figure (None: no rule)


def refresh_adaptive(study: Study, data: StudyData, builder: KindReport) -> AdaptiveResult | None:
    """Write the priorities of an adaptive study's items and apply its stopping rule;
    None for a study assigned uniformly. ``data``: the study as the reports read it, with
    its kind's ``builder``."""
    options = adaptive_settings(study)
    if options is None:
        return None
    counting = data.population("passed").humans().analysed()
    written = write_priorities(study, counting.items["external_id"], priorities_of(counting, builder))
    if options.stop is None:
        return AdaptiveResult(items=written, look=None, closed=False)
    look = stop_look(counting, options.stop, builder)
    closed = False
    if look is not None and _met(look, options.stop):
        closed = close_study_by_rule(
            study, because=Study.ClosedBecause.STOPPING_RULE, details=stop_details(look, options.stop)
        )
    looks = previous_looks(study) + (look is not None)
    return AdaptiveResult(written, look, closed, stopping_row(look, options.stop, looks))


def priorities_of(data: StudyData, builder: KindReport) -> np.ndarray:
    """Each item row's priority from the answers in ``data`` (``stats.adaptive``): the
    comparisons of systems by how close they are, the other questions by their answers."""
    n_items = len(data.items)
    closeness = np.full(n_items, np.nan)
    compared: set[str] = set()
    for comparison in builder.comparisons(data):
        uncertainty = pair_uncertainty(comparison.wins())
        found = comparison_priorities(data.responses["item"], comparison.shown, uncertainty, n_items)
        closeness = np.fmax(closeness, found)
        compared.update(comparison.questions)
    observations = data.observations
    questions = np.asarray(observations["question"]).astype(str)
    rest = ~np.isin(questions, sorted(compared))
    items = data.responses["item"][observations["response"]][rest]
    nominal = np.asarray(observations["level"]).astype(str)[rest] == "nominal"
    values = np.asarray(observations["value"])[rest]
    # what is settled or not: a question, or a (question, passage) of a per-passage one
    keys = builder.priority_keys(data)[rest]
    return item_priorities(items, keys, values, nominal, n_items, closeness)


def write_priorities(study: Study, external_ids: np.ndarray, priorities: np.ndarray) -> int:
    """Store the priorities (per item row, by external id), in id order and small batches:
    picks skip a locked item (SKIP LOCKED) and look again, so a batch held for long would
    only send them to other items; several recomputes at once (a job and the command) wait
    for each other instead of deadlocking."""
    ids = dict(Item.objects.filter(study=study).values_list("external_id", "pk"))
    pairs = zip((str(name) for name in external_ids), priorities, strict=True)
    rows = sorted((ids[name], float(value)) for name, value in pairs if name in ids)
    for start in range(0, len(rows), PRIORITY_BATCH):
        batch = [Item(pk=pk, priority=value) for pk, value in rows[start : start + PRIORITY_BATCH]]
        with transaction.atomic():
            # Locked in id order first, as every other writer of several items does
            # (``assignment.take_slots``): an UPDATE of many rows locks them in the order it
            # finds them, which changes as other writers move their row versions, and two
            # such updates could each wait for the other.
            locked = Item.objects.select_for_update().filter(pk__in=[item.pk for item in batch])
            list(locked.order_by("pk").values_list("pk", flat=True))
            Item.objects.bulk_update(batch, ["priority"])
    return len(rows)


def stop_look(data: StudyData, rule: StopRule, builder: KindReport | None = None) -> Look | None:
    """The confidence sequence of the first system's mean less the second's on the rule's
    question (means of item means: ``stats.adaptive.difference_sequence``), from the answers
    in ``data``; None while the question has no answers yet or none is about a system. The
    systems and items are read as the plan reads them (``planning.question_values``: a
    per-passage question's answer is about its passage's system, its unit the (item,
    passage))."""
    try:
        found = question_values(data, rule.question, builder)
    except InputError:
        return None
    values, systems = found.values, found.system
    if not (systems != "").any():
        return None
    unit = np.unique(found.unit, return_inverse=True)[1].ravel()
    first, second = systems == rule.first, systems == rule.second
    # the range the question's answers took in the study (every system): the scale's width as
    # far as the answers show it, which keeps answers that all agree from a certain interval
    span = float(values.max() - values.min()) if values.size else 0.0
    # by item: an item's answers are one draw of its system's items, however many there are
    return difference_sequence(
        values[first], unit[first], values[second], unit[second], rule.alpha, span=span
    )


def _met(look: Look, rule: StopRule) -> bool:
    return settled(look, excludes_zero=rule.excludes_zero, width=rule.width)


def previous_looks(study: Study) -> int:
    """How many recomputes measured the rule before this one (from the stored figure)."""
    stored = Report.objects.filter(study=study, metric=STOPPING_METRIC).chosen(STOPPING_POPULATION)
    details = stored.values_list("details", flat=True).first() or {}
    return int(details.get("looks", 0))


def stopping_row(look: Look | None, rule: StopRule, looks: int) -> ReportRow:
    """The rule's figure: the difference now and its interval (empty, with the reason, while
    it cannot be measured), the answers of each system, and whether it is met."""
    group = {"question": rule.question, "system": rule.first, "over": rule.second}
    details = {"alpha": rule.alpha, "rule": _rule_name(rule), "looks": looks}
    if look is None:
        reason = f"no answers that count to {rule.question!r} of items with a system yet"
        return ReportRow(STOPPING_METRIC, group, None, 0, details={**details, "met": False, "reason": reason})
    n_first, n_second = look.counts
    items_first, items_second = look.items
    met = _met(look, rule)
    # ``row`` stores an infinite bound (too few answers) as empty
    estimate = Estimate(look.estimate, n=look.n)
    return row(
        STOPPING_METRIC,
        group,
        estimate,
        Interval(look.low, look.high, "confidence sequence"),
        n_first=n_first,
        n_second=n_second,
        items_first=items_first,
        items_second=items_second,
        met=met,
        **details,
    )


def _rule_name(rule: StopRule) -> str:
    return "ci_excludes_zero" if rule.excludes_zero else f"width <= {rule.width}"


def stop_details(look: Look, rule: StopRule) -> dict:
    """What the study records when its stopping rule closes it."""
    return {
        "question": rule.question,
        "systems": [rule.first, rule.second],
        "difference": look.estimate,
        "ci_low": look.low,
        "ci_high": look.high,
        "answers": look.n,
        "alpha": rule.alpha,
        "rule": _rule_name(rule),
    }
