"""A small, seeded slice of ``bench/coverage.py``: on simulated studies whose items differ
(ICC 0.4) and whose participants answer many items, the scale means' and the system
differences' 95% intervals cover the truth about 95% of the time, and with four equal
systems the pair table shows "p < 0.05" for some pair in at most about 5% of studies.
The bands are wide (Monte-Carlo error of 100-120 runs, fixed seed); the full table is in
docs/statistics.md."""

from __future__ import annotations

import numpy as np

from bench.coverage import Row, run_row, true_mean

SEED = 20261129


def test_means_and_differences_cover_when_items_and_participants_repeat():
    truth = true_mean(0.4, np.random.default_rng([SEED, 7]), draws=1_000_000)
    found = run_row(Row(0.4, 2, 20), 120, SEED, truth)
    for figure in ("mean_new", "all_new", "diff_new"):
        assert 0.88 <= found[figure] <= 0.995, (figure, found)
    # resampling answers as independent does not (0.67 in the full table)
    assert found["all_old"] < 0.85, found


def test_the_pair_table_keeps_its_family_wise_level_with_four_systems():
    truth = true_mean(0.2, np.random.default_rng([SEED, 7]), draws=1_000_000)
    found = run_row(Row(0.2, 4, 20), 100, SEED, truth)
    assert found["fwer_new"] <= 0.10, found
    # the one-sided p in the data's direction, uncorrected: about a third
    assert found["fwer_old"] >= 0.2, found


def test_systems_on_different_items_are_compared_at_their_level():
    """Every item its own case: the unpaired difference covers and the Mann-Whitney tests,
    Holm-adjusted, keep the family-wise level."""
    truth = true_mean(0.4, np.random.default_rng([SEED, 7]), draws=1_000_000)
    found = run_row(Row(0.4, 2, 15, paired=False), 120, SEED, truth)
    assert 0.88 <= found["diff_new"] <= 0.995 and 0.88 <= found["all_new"] <= 0.995, found
    assert found["fwer_new"] <= 0.10, found


def test_agreement_intervals_cover_when_items_repeat_and_the_pairs_bootstrap_did_not():
    """A slice of ``bench/coverage_agreement.py``: alpha (crowd of participants crossing
    items, items differing in level and difficulty), within-1, the mean pairwise kappa and
    ICC(2,k) of a team of 4, each by a bootstrap over items. The old mean kappa interval,
    a bootstrap over the 6 pairs of annotators, covers about two times in three."""
    from bench.coverage_agreement import Row as AgreementRow
    from bench.coverage_agreement import run_row as agreement_row

    found = agreement_row(AgreementRow(0.4, 2, 25), 50, SEED, resamples=200)
    for figure in ("alpha", "within", "kappa", "icc"):
        assert 0.84 <= found[figure] <= 1.0, (figure, found)
    assert found["kappa_old"] <= 0.8, found


def test_the_suite_skips_a_family_whose_module_is_missing(monkeypatch):
    import sys

    from bench.coverage import suite_rows

    monkeypatch.setitem(sys.modules, "bench.coverage_shares", None)  # an import of it fails
    messages: list[str] = []
    assert suite_rows(["shares"], quick=True, report=messages.append) == []
    assert messages and "shares" in messages[0]
