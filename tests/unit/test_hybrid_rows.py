"""The hybrid rows (``scoring.reports.hybrid``): humans on a subset of the items, a judge on
every item; per mean and difference three intervals side by side, the PPI figure equal to
``stats.ppi`` on the same answers, and the warnings."""

import numpy as np
import pytest

from scoring.reports.base import Columns, KindReport, ReportRow, StudyData, observation_columns
from scoring.reports.hybrid import ASSUMED, DISAGREES, LOGGED, NO_GAIN, hybrid_rows
from stats.ppi import ppi_mean

ITEMS, HUMANS = 200, 6


def study(judge_noise: float = 0.3, inclusion=None, seed: int = 1) -> StudyData:
    """Items of two systems; humans (rows 0..5) answer the first 40 items twice each, the
    judge (row 6) every item once, off by +1 on average."""
    rng = np.random.default_rng(seed)
    system = np.where(np.arange(ITEMS) % 2 == 0, "A", "B").astype(object)
    truth = 3 + (system == "A") + rng.normal(0, 1, ITEMS)
    human_items = np.repeat(np.arange(40), 2)
    item = np.concatenate([human_items, np.arange(ITEMS)])
    person = np.concatenate([rng.integers(0, HUMANS, human_items.size), np.full(ITEMS, HUMANS)])
    value = np.concatenate(
        [
            truth[human_items] + rng.normal(0, 0.5, human_items.size),
            truth + 1 + rng.normal(0, judge_noise, ITEMS),
        ]
    )
    size = item.size
    responses = Columns(
        {
            "item": item,
            "participant": person,
            "attention": np.zeros(size, dtype=bool),
            "flagged": np.zeros(size, dtype=bool),
            "excluded": np.zeros(size, dtype=bool),
            "adjudicator": np.zeros(size, dtype=bool),
        }
    )
    items = {"attention": np.zeros(ITEMS, dtype=bool), "provenance:system": system}
    if inclusion is not None:
        items["inclusion"] = inclusion
    names = np.array([""] * HUMANS + ["llm:judge:v1:abc"], dtype=object)
    return StudyData(
        kind="likert",
        config={},
        annotations_per_item=2,
        items=Columns(items),
        responses=responses,
        participants=Columns({"model": np.arange(HUMANS + 1) == HUMANS, "name": names}),
        observations=observation_columns(np.arange(size), item.astype(str), "fluency", value, "ordinal"),
    )


def by_metric(rows, **group):
    return {r.metric: r for r in rows if r.group == group}


def test_three_intervals_per_mean_and_difference_and_the_ppi_one_is_stats_ppi():
    data = study()
    rows = hybrid_rows(KindReport(), data, [])
    base = {"question": "fluency", "rater": "llm:judge:v1:abc"}
    pooled = by_metric(rows, **base, system="all systems")
    assert set(pooled) == {"hybrid.mean", "hybrid.mean_humans", "hybrid.mean_judge"}
    ppi, humans, judge = pooled["hybrid.mean"], pooled["hybrid.mean_humans"], pooled["hybrid.mean_judge"]
    values = data.observations["value"]
    human, judge_rows = np.arange(80), np.arange(80, 280)
    reference = ppi_mean(
        values[human],
        values[judge_rows][data.responses["item"][human]],
        values[judge_rows][40:],
        units=data.responses["item"][human],
        units_unlabeled=np.arange(40, ITEMS),
        participants=data.responses["participant"][human],
    )
    assert ppi.value == pytest.approx(reference.estimate, abs=1e-12)
    interval = reference.interval()
    assert (ppi.ci_low, ppi.ci_high) == pytest.approx((interval.low, interval.high), abs=1e-12)
    assert humans.value == pytest.approx(values[human].mean())
    assert judge.value == pytest.approx(values[judge_rows].mean())  # the judge's own, biased by +1
    assert judge.ci_low > ppi.ci_high  # the judge alone misses the humans' mean entirely
    assert ppi.ci_high - ppi.ci_low < humans.ci_high - humans.ci_low
    assert ppi.details["effective_n"] > 80 and ppi.details["humans_low"] == humans.ci_low
    assert ppi.details["judge_low"] == judge.ci_low and ppi.details["design"] == ASSUMED
    assert ppi.details["warning"] == "" and ppi.details["rectifier"] == pytest.approx(-1, abs=0.3)
    difference = by_metric(rows, **base, system="A", over="B")
    assert set(difference) == {"hybrid.difference", "hybrid.difference_humans", "hybrid.difference_judge"}
    assert difference["hybrid.difference"].ci_low < 1 < difference["hybrid.difference"].ci_high
    assert set(by_metric(rows, **base, system="A")) == set(pooled)


def test_warnings_a_useless_judge_and_one_the_calibration_rejects():
    data = study(judge_noise=30.0)
    calibration = ReportRow(
        "agreement.rater_calibration",
        {"question": "fluency", "level": "ordinal", "rater": "llm:judge:v1:abc"},
        0.1,
        10,
        details={"calibrated": "not calibrated"},
    )
    rows = hybrid_rows(KindReport(), data, [calibration])
    ppi = by_metric(rows, question="fluency", rater="llm:judge:v1:abc", system="all systems")["hybrid.mean"]
    assert ppi.details["warning"] == f"{NO_GAIN}; {DISAGREES}"


def test_logged_inclusion_probabilities_are_the_weights():
    """Items of system A were drawn with probability 0.4, B's with 0.1 (the first 40 items
    drawn, one more drawn but not yet answered): the pooled mean weighs each human answer by
    1/π and each judge answer on an undrawn item by 1/(1 − π), and leaves the drawn but
    unanswered item out."""
    inclusion = np.where(np.arange(ITEMS) % 2 == 0, 0.4, 0.1)
    data = study(inclusion=inclusion)
    data.items.data["for_humans"] = np.arange(ITEMS) < 41
    rows = hybrid_rows(KindReport(), data, [])
    ppi = by_metric(rows, question="fluency", rater="llm:judge:v1:abc", system="all systems")["hybrid.mean"]
    assert ppi.details["design"] == LOGGED
    values, item = data.observations["value"], data.responses["item"]
    human, judge = np.arange(80), values[80:]
    alone = np.arange(41, ITEMS)
    reference = ppi_mean(
        values[human],
        judge[item[human]],
        judge[alone],
        units=item[human],
        units_unlabeled=alone,
        participants=data.responses["participant"][human],
        weights=1 / inclusion[item[human]],
        weights_unlabeled=1 / (1 - inclusion[alone]),
    )
    assert ppi.value == pytest.approx(reference.estimate, abs=1e-12)
    assert ppi.details["n_judge"] == 40 + alone.size  # the judge's answers: one per item


def test_no_judge_no_rows():
    data = study()
    humans = data.where(~data.machine_responses())
    assert hybrid_rows(KindReport(), humans, []) == []


class _Picks(KindReport):
    """Every response compared systems A and B; ``best``: the one it picked (-1: a tie)."""

    def __init__(self, best):
        self.best = best

    def comparisons(self, data):
        from scoring.reports.base import Comparisons

        shown = np.tile([0, 1], (len(data.responses), 1))
        return [Comparisons(("preference",), ["A", "B"], shown, self.best)]


def test_win_rates_of_humans_judge_and_both():
    data = study()
    rng = np.random.default_rng(4)
    # humans prefer A 70% of the time; the judge, always
    best = np.concatenate([np.where(rng.random(80) < 0.7, 0, 1), np.zeros(ITEMS, dtype=int)])
    best[:4] = -1  # ties count half
    rows = hybrid_rows(_Picks(best), data, [])
    found = by_metric(rows, question="preference", system="A", over="B", rater="llm:judge:v1:abc")
    assert found["hybrid.win_rate_judge"].value == 1.0
    humans = found["hybrid.win_rate_humans"]
    share = np.where(best[:80] == 0, 1.0, np.where(best[:80] == 1, 0.0, 0.5)).mean()
    assert humans.value == pytest.approx(share)
    assert found["hybrid.win_rate"].details["lam"] == 0.0  # a constant judge carries no information
    assert found["hybrid.win_rate"].value == pytest.approx(share)


def test_bradley_terry_strengths_of_humans_judge_and_both_with_rank_sets():
    from stats import bradley_terry as bt

    data = study()
    rng = np.random.default_rng(6)
    item_quality = rng.random(ITEMS) < 0.7  # on this item A is better
    human_item = data.responses["item"][:80]
    humans = np.where(
        rng.random(80) < 0.85,
        np.where(item_quality[human_item], 0, 1),
        np.where(item_quality[human_item], 1, 0),
    )
    judge = np.where(rng.random(ITEMS) < 0.9, np.where(item_quality, 0, 1), np.where(item_quality, 1, 0))
    rows = hybrid_rows(_Picks(np.concatenate([humans, judge])), data, [])
    found = by_metric(rows, question="preference", system="A", rater="llm:judge:v1:abc")
    assert set(found) == {"hybrid.strength", "hybrid.strength_humans", "hybrid.strength_judge"}
    shown = np.tile([0, 1], (80, 1))
    reference = bt.rank_systems(
        bt.from_picks(
            shown, humans, np.zeros(80, dtype=bool), human_item, data.responses["participant"][:80]
        ),
        2,
    )
    assert found["hybrid.strength_humans"].value == pytest.approx(reference.strengths[0], abs=1e-9)
    assert found["hybrid.strength_humans"].ci_low == pytest.approx(reference.low[0], abs=1e-9)  # two ways
    ppi = found["hybrid.strength"]
    assert ppi.details["rank_low"] == 1 and ppi.details["lam"] >= 0.3
    assert (
        ppi.ci_high - ppi.ci_low
        < found["hybrid.strength_humans"].ci_high - found["hybrid.strength_humans"].ci_low
    )


def test_no_rows_when_the_humans_answered_every_item_the_judge_did():
    data = study()
    judged = data.responses["item"] < 40  # the judge's answers on the humans' 40 items only
    keep = ~data.machine_responses() | judged
    assert hybrid_rows(KindReport(), data.where(keep), []) == []
