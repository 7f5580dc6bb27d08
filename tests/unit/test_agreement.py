"""Krippendorff's alpha: published values, the krippendorff package on random data, the
undefined cases, and reading the data block by block."""

import itertools
import tracemalloc
import warnings

import krippendorff
import numpy as np
import pytest
from scipy import sparse

from stats import agreement
from stats.agreement import (
    alpha_from_pairs,
    alpha_from_value_counts,
    krippendorff_alpha,
    percent_agreement,
    percent_agreement_from_pairs,
)

nan = np.nan
# Krippendorff's canonical example: 4 coders × 12 units, values 1-5, missing cells.
CANONICAL = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]
LEVELS = ("nominal", "ordinal", "interval", "ratio")


@pytest.mark.parametrize(
    ("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_canonical_example_gives_the_published_values(level, published):
    result = krippendorff_alpha(CANONICAL, level)
    assert round(result.value, 3) == published
    assert result.n == 40  # pairable values: units with two or more values
    assert result.details["units"] == 11


def test_ordinal_text_labels_follow_the_given_order():
    names = {1: "very low", 2: "low", 3: "mid", 4: "high", 5: "very high"}
    text = [[names.get(v) for v in row] for row in CANONICAL]
    domain = ["very low", "low", "mid", "high", "very high"]
    assert round(krippendorff_alpha(text, "ordinal", value_domain=domain).value, 3) == 0.815
    assert round(krippendorff_alpha(text, "nominal").value, 3) == 0.743


def _package(data, level, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return krippendorff.alpha(data, level_of_measurement=level, **kwargs)


def _random_table(rng):
    coders, units = int(rng.integers(2, 9)), int(rng.integers(1, 40))
    values = rng.integers(0, int(rng.integers(1, 8)), size=(coders, units)).astype(float)
    values = values * rng.choice([1.0, 0.5, 2.5]) + rng.choice([0.0, -3.0, 1.0])
    values[rng.random((coders, units)) < rng.random() * 0.8] = nan
    return values


def test_equals_the_krippendorff_package_on_random_data_with_missing_values():
    rng = np.random.default_rng(20240501)
    compared = 0
    for _ in range(400):
        table = _random_table(rng)
        for level in LEVELS:
            try:
                expected = _package(table, level)
            except ValueError:
                # the package refuses: no pairable unit or one value; we say why instead
                result = krippendorff_alpha(table, level)
                assert np.isnan(result.value) and result.reason
                continue
            result = krippendorff_alpha(table, level)
            one_unit = int(((~np.isnan(table)).sum(axis=0) >= 2).sum()) == 1  # the package: 0 by construction
            if np.isnan(expected) or one_unit:
                assert np.isnan(result.value) and result.reason
            else:
                assert result.value == pytest.approx(expected, abs=1e-9)
                compared += 1
    assert compared > 1000


def test_equals_the_package_on_continuous_values_and_value_counts():
    rng = np.random.default_rng(7)
    for _ in range(50):
        table = np.round(rng.normal(size=(5, 30)), 2)
        table[rng.random(table.shape) < 0.3] = nan
        for level in LEVELS:
            assert krippendorff_alpha(table, level).value == pytest.approx(_package(table, level), abs=1e-9)
        counts = rng.integers(0, 4, size=(25, 6))
        for level in LEVELS:
            expected = _package(None, level, value_counts=counts) if counts.sum(1).max() > 1 else nan
            assert alpha_from_value_counts(counts, level).value == pytest.approx(
                expected, abs=1e-9, nan_ok=True
            )


def test_a_wider_value_domain_changes_nothing_but_is_checked():
    domain = [0, 1, 2, 3, 4, 5, 6]
    assert krippendorff_alpha(CANONICAL, "ordinal", value_domain=domain).value == pytest.approx(
        _package(CANONICAL, "ordinal", value_domain=domain), abs=1e-12
    )
    with pytest.raises(ValueError, match="outside value_domain"):
        krippendorff_alpha(CANONICAL, "ordinal", value_domain=[1, 2, 3])


@pytest.mark.parametrize("values", [5, 40])
def test_blocks_of_units_give_the_same_result(monkeypatch, values):
    rng = np.random.default_rng(3)
    table = rng.integers(1, values + 1, size=(7, 500)).astype(float)
    table[rng.random(table.shape) < 0.4] = nan
    whole = {level: krippendorff_alpha(table, level).value for level in LEVELS}
    monkeypatch.setattr(agreement, "BLOCK_CELLS", 50)  # seven units per block
    for level in LEVELS:
        assert krippendorff_alpha(table, level).value == pytest.approx(whole[level], abs=1e-12)
        assert whole[level] == pytest.approx(_package(table, level), abs=1e-9)


def test_a_tile_of_more_than_65535_coders_is_counted_exactly():
    """Tiles of few units hold many coders; their per-column hit counts pass 16 bits."""
    rng = np.random.default_rng(5)
    table = np.full((70_000, 2), 3.0)  # unit 0: all 70,000 agree, over 2**16 hits in one tile
    table[: 70_000 // 3, 1] = 1.0
    table[rng.random(70_000) < 0.1, 1] = nan
    for level in ("nominal", "ordinal"):
        assert krippendorff_alpha(table, level).value == pytest.approx(_package(table, level), abs=1e-9)


@pytest.mark.parametrize("tile_cells", [64, 1 << 16])
def test_small_domains_counted_in_any_tile_shape_equal_the_coded_path(monkeypatch, tile_cells):
    """Small domains are counted by comparing tiles with every value, into byte totals flushed
    past 255 coders (64: one coder's row per tile, then two-row tiles for the last narrow
    block; 2**16: tall tiles with 16-bit totals), and alpha is read off the coincidences.
    The same table coded and read through its pairable values gives the same alpha at every
    level, and so does the package."""
    rng = np.random.default_rng(64)
    table = rng.integers(0, 6, size=(600, 150)) * 0.5 + 1.0
    table[rng.random(table.shape) < 0.4] = nan
    table[:, 3] = nan
    table[1:, 7] = nan  # a unit with one value, and one with none
    table[:, 5] = 2.0  # 600 hits of one value in one unit: past a byte
    monkeypatch.setattr(agreement, "TILE_CELLS", tile_cells)
    compared = {level: krippendorff_alpha(table, level) for level in LEVELS}
    monkeypatch.setattr(agreement, "EQUALITY_VALUES", 0)
    for level in LEVELS:
        coded = krippendorff_alpha(table, level)
        assert compared[level].value == pytest.approx(coded.value, abs=1e-12)
        assert (compared[level].n, compared[level].details) == (coded.n, coded.details)
        assert compared[level].value == pytest.approx(_package(table, level), abs=1e-9)


def test_a_rare_value_missed_by_the_sample_is_still_counted():
    rng = np.random.default_rng(5)
    table = rng.integers(1, 4, size=(300, 1000)).astype(float)
    table[rng.random(table.shape) < 0.3] = nan
    table[17, 400] = 9.0  # one cell in 300,000: the sampled guess of the domain misses it
    assert 9.0 not in agreement._sampled_distinct(table)
    for level in LEVELS:
        assert krippendorff_alpha(table, level).value == pytest.approx(_package(table, level), abs=1e-9)
    assert krippendorff_alpha(table.T.copy().T, "nominal").details["values"] == 4


def test_pairs_give_the_same_alpha_as_the_coder_table():
    rng = np.random.default_rng(11)
    table = rng.integers(1, 6, size=(4, 20)).astype(float)
    table[rng.random(table.shape) < 0.3] = nan
    coders, units = np.nonzero(~np.isnan(table))
    for level in LEVELS:
        from_pairs = alpha_from_pairs([f"u{u}" for u in units], table[coders, units], level)
        assert from_pairs.value == pytest.approx(krippendorff_alpha(table, level).value, abs=1e-12)
        assert from_pairs.value == pytest.approx(_package(table, level), abs=1e-9)


@pytest.mark.parametrize(
    ("table", "reason"),
    [
        ([[1, 1, 1], [1, 1, 1]], "fewer than two distinct"),
        ([[1, 1, 2], [1, 1, nan]], "same"),
        ([[1, 2, 3]], "no unit"),
        ([[1, nan, nan], [nan, 2, nan]], "no unit"),
        ([[nan, nan], [nan, nan]], "fewer than two"),
        (np.zeros((0, 3)), "fewer than two"),  # no coders
    ],
)
@pytest.mark.parametrize("compared_values", [16, 0])
def test_undefined_cases_give_nan_with_a_reason(table, reason, compared_values, monkeypatch):
    """Both ways of reading a table: comparing with each value, and coding the values (the
    interval level then reads the units' moments off the cells)."""
    monkeypatch.setattr(agreement, "EQUALITY_VALUES", compared_values)
    for level in LEVELS:
        result = krippendorff_alpha(table, level)
        assert np.isnan(result.value)
        assert reason in result.reason


def test_bad_input_is_refused_clearly():
    with pytest.raises(ValueError, match="2-D"):
        krippendorff_alpha([1, 2, 3], "nominal")
    with pytest.raises(ValueError, match="level_of_measurement"):
        krippendorff_alpha(CANONICAL, "cardinal")
    with pytest.raises(ValueError, match="needs numbers"):
        krippendorff_alpha([["a", "b"], ["a", "a"]], "interval")
    with pytest.raises(ValueError, match="ordered value_domain"):
        krippendorff_alpha([["a", "b"], ["a", "a"]], "ordinal")


def test_percent_agreement_counts_pairs_within_units():
    table = [[1, 1, 2, nan], [1, 2, 2, 3], [1, 2, nan, nan]]
    # unit 1: 3 agreeing pairs of 3; unit 2: 1 of 3; unit 3: 1 of 1; unit 4: none pairable
    result = percent_agreement(table)
    assert result.value == pytest.approx(5 / 7)
    assert result.n == 7
    units = ["a", "a", "a", "b", "b", "b", "c", "c", "d"]
    values = [1, 1, 1, 1, 2, 2, 2, 2, 3]
    assert percent_agreement_from_pairs(units, values).value == pytest.approx(5 / 7)


def test_sparse_value_counts_are_accepted():
    counts = np.array([[2, 0, 1], [0, 3, 0], [1, 1, 1], [0, 0, 1]])
    dense = alpha_from_value_counts(counts, "nominal").value
    assert alpha_from_value_counts(sparse.csr_matrix(counts), "nominal").value == pytest.approx(
        dense, abs=1e-12
    )
    assert dense == pytest.approx(_package(None, "nominal", value_counts=counts), abs=1e-12)


# --- many distinct values: the closed and spectral forms ----------------------------------


def _direct_alpha(table: np.ndarray, level: str) -> float:
    """Alpha straight from its definition, over every ordered pair of pairable values (no
    counts, no coincidences): an independent reference, O(values²)."""
    present = ~np.isnan(table)
    pairable = present.sum(axis=0) >= 2
    coders, units = np.nonzero(present[:, pairable])
    values = table[:, pairable][coders, units]
    order = np.argsort(units, kind="stable")
    values, units = values[order], units[order]
    ranked = np.sort(values)
    below, upto = np.searchsorted(ranked, values, "left"), np.searchsorted(ranked, values, "right")

    def differences(i: np.ndarray, j: np.ndarray) -> np.ndarray:
        a, b = values[i][:, None], values[j][None, :]
        if level == "nominal":
            return (a != b).astype(float)
        if level == "interval":
            return (a - b) ** 2
        if level == "ratio":
            total = a + b
            return np.divide(a - b, total, out=np.zeros_like(total), where=total != 0) ** 2
        low = np.where(a <= b, below[i][:, None], below[j][None, :])
        high = np.where(a <= b, upto[j][None, :], upto[i][:, None])
        ends = (upto[i] - below[i])[:, None] + (upto[j] - below[j])[None, :]
        return (high - low - ends / 2.0) ** 2

    everything = np.arange(values.size)
    expected = sum(differences(rows, everything).sum() for rows in np.array_split(everything, 20))
    starts = np.flatnonzero(np.diff(units, prepend=-1))
    bounds = np.append(starts, values.size)
    observed = sum(
        differences(np.arange(s, e), np.arange(s, e)).sum() / (e - s - 1)
        for s, e in itertools.pairwise(bounds)
    )
    return 1.0 - (values.size - 1) * observed / expected


def _ratings(rng, coders: int, units: int, decimals: int | None, missing: float = 0.3) -> np.ndarray:
    """Positive ratings around a true value per unit; continuous when ``decimals`` is None."""
    table = np.abs(rng.uniform(2, 22, units)[None, :] + rng.normal(size=(coders, units)))
    if decimals is not None:
        table = np.maximum(np.round(table, decimals), 10.0**-decimals)
    table[rng.random(table.shape) < missing] = nan
    return table


def test_equals_the_package_on_integer_float_and_many_valued_tables():
    """Integer and float tables, coders per unit varying with the missing cells, from two to
    hundreds of distinct values (past the ratio level's direct-pairs limit), negatives too."""
    rng = np.random.default_rng(20261123)
    compared = 0
    for trial in range(60):
        coders, units = int(rng.integers(2, 25)), int(rng.integers(2, 30))
        if trial % 3 == 0:
            table = rng.integers(-2 if trial % 2 else 0, 40, size=(coders, units))
        else:
            table = _ratings(rng, coders, units, int(rng.integers(0, 4)), missing=rng.random() * 0.6)
            table = table - 5.0 if trial % 5 == 1 else table
        for level in LEVELS:
            expected = _package(table, level)
            assert krippendorff_alpha(table, level).value == pytest.approx(expected, abs=1e-9)
            compared += 1
    assert compared == 240


def test_the_spectral_ratio_form_equals_the_package(monkeypatch):
    """Every group summed with the spectral form (zeros, tight and wide spreads of values)."""
    monkeypatch.setattr(agreement, "RATIO_DIRECT_VALUES", 1)
    rng = np.random.default_rng(41)
    for spread in (0.01, 0.3, 1.0, 4.0):
        for _ in range(10):
            table = np.round(rng.lognormal(rng.normal(), spread, size=(int(rng.integers(2, 12)), 25)), 3)
            table[rng.random(table.shape) < 0.1] = 0.0
            table[rng.random(table.shape) < 0.3] = nan
            assert krippendorff_alpha(table, "ratio").value == pytest.approx(
                _package(table, "ratio"), abs=1e-9
            )


def test_the_direct_reference_agrees_with_the_package():
    rng = np.random.default_rng(8)
    table = _ratings(rng, 6, 30, 1)
    for level in LEVELS:
        assert _direct_alpha(table, level) == pytest.approx(_package(table, level), abs=1e-9)


def test_continuous_ratings_with_350k_distinct_values_in_bounded_memory():
    """50 coders × 10k units of continuous ratings: about 350k distinct values, where a
    values × values matrix would take 915 GiB. Checked against the direct definition on a
    subsample of units, a per-unit variance computation of interval alpha on all of it, and
    the invariances of each level."""
    rng = np.random.default_rng(350)
    table = _ratings(rng, 50, 10_000, None)
    assert np.unique(table[~np.isnan(table)]).size > 340_000
    tracemalloc.start()
    found = {level: krippendorff_alpha(table, level) for level in ("interval", "ordinal", "ratio")}
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 160 * 2**20
    assert all(0.8 < result.value < 1.0 and result.details["values"] > 340_000 for result in found.values())

    counts = (~np.isnan(table)).sum(axis=0)
    within = np.nanvar(table, axis=0) * counts
    n = counts.sum()
    observed = (2.0 * counts * within / (counts - 1.0)).sum()
    expected = 2.0 * n * np.nanvar(table) * n / (n - 1.0)
    assert found["interval"].value == pytest.approx(1.0 - observed / expected, abs=1e-9)
    assert krippendorff_alpha(2.5 * table - 7.0, "interval").value == pytest.approx(
        found["interval"].value, abs=1e-9
    )
    assert krippendorff_alpha(np.log(table), "ordinal").value == pytest.approx(
        found["ordinal"].value, abs=1e-12
    )
    assert krippendorff_alpha(3.7 * table, "ratio").value == pytest.approx(found["ratio"].value, abs=1e-9)

    sample = table[:, :120]
    assert np.unique(sample[~np.isnan(sample)]).size > agreement.RATIO_DIRECT_VALUES  # spectral
    for level in ("interval", "ordinal", "ratio"):
        assert krippendorff_alpha(sample, level).value == pytest.approx(
            _direct_alpha(sample, level), abs=1e-9
        )


def test_units_with_many_distinct_values_take_the_spectral_form_too():
    """Units rated by hundreds of coders with continuous values: each unit's own ratio sum is
    spectral; checked against the direct definition."""
    rng = np.random.default_rng(12)
    table = _ratings(rng, 400, 6, None, missing=0.1)
    for level in LEVELS:
        assert krippendorff_alpha(table, level).value == pytest.approx(_direct_alpha(table, level), abs=1e-9)


@pytest.mark.parametrize("level", LEVELS)
def test_one_pairable_unit_is_undefined_with_its_reason_not_zero(level):
    # The package gives 0 here: with one unit the expected disagreement is the observed one.
    one_item = [[2, nan, 1], [5, 3, nan], [4, nan, nan]]  # only the first unit has two values or more
    result = krippendorff_alpha(one_item, level)
    assert np.isnan(result.value)
    assert result.reason.startswith("only one item has two or more answers")
    assert result.details["units"] == 1
    units, values = [0, 0, 0, 1], [1, 2, 2, 3]
    assert np.isnan(alpha_from_pairs(units, values, "nominal").value)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_and_percent_together_are_the_two_apart(level):
    rng = np.random.default_rng(11)
    counts = rng.integers(0, 3, (40, 5))
    domain = np.array([1.0, 2.0, 3.0, 5.0, 8.0])
    for table in (counts, sparse.csr_matrix(counts)):
        alpha, percent = agreement.alpha_and_percent_from_value_counts(table, level, value_domain=domain)
        assert alpha == agreement.alpha_from_value_counts(table, level, value_domain=domain)
        assert percent == agreement.percent_agreement_from_value_counts(table)
