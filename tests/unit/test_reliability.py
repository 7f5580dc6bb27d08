"""ICC(2,k), Cronbach's alpha and within-k agreement against published values and statsmodels.

pingouin is not installed; the references are Shrout & Fleiss (1979), Table 2 (six targets,
four judges: ICC(2,1) = .29, ICC(2,4) = .62, ICC(3,4) = .91, the last being Cronbach's
alpha with judges as statements), the mean squares of statsmodels' two-way ANOVA, and
brute-force enumeration of pairs.
"""

import itertools

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats
from statsmodels.stats.anova import anova_lm

from stats.agreement import percent_agreement_from_value_counts, value_counts_from_pairs
from stats.reliability import cronbach_alpha, icc_2k, within_points_from_value_counts

SHROUT_FLEISS = np.array(
    [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]], dtype=float
)


def test_icc_2k_reproduces_shrout_and_fleiss_table_2():
    result = icc_2k(SHROUT_FLEISS)
    assert round(result.value, 2) == 0.62
    assert round(result.details["icc2_1"], 2) == 0.29
    assert result.n == 6
    assert result.details["dof"] == [5, 15]


def _statsmodels_mean_squares(table: np.ndarray) -> tuple[float, float, float]:
    n, k = table.shape
    frame = pd.DataFrame(
        {"y": table.ravel(), "target": np.repeat(np.arange(n), k), "rater": np.tile(np.arange(k), n)}
    )
    anova = anova_lm(smf.ols("y ~ C(target) + C(rater)", data=frame).fit())
    ms = anova["sum_sq"] / anova["df"]
    return float(ms["C(target)"]), float(ms["C(rater)"]), float(ms["Residual"])


def test_icc_2k_equals_the_shrout_fleiss_formula_on_statsmodels_anova():
    rng = np.random.default_rng(3)
    for _ in range(20):
        n, k = int(rng.integers(3, 30)), int(rng.integers(2, 6))
        table = rng.integers(1, 8, (n, 1)) + rng.integers(-1, 2, (n, k)) + rng.integers(0, 2, (1, k))
        msr, msc, mse = _statsmodels_mean_squares(table.astype(float))
        result = icc_2k(table)
        assert result.value == pytest.approx((msr - mse) / (msr + (msc - mse) / n), abs=1e-9)
        single = (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)
        assert result.details["icc2_1"] == pytest.approx(single, abs=1e-9)
        assert result.details["p_value"] == pytest.approx(stats.f.sf(msr / mse, n - 1, (n - 1) * (k - 1)))


def test_icc_leaves_out_incomplete_targets_and_says_when_undefined():
    table = np.vstack([SHROUT_FLEISS, [[np.nan, 1, 2, 3]]])
    result = icc_2k(table)
    assert round(result.value, 2) == 0.62 and result.details["rows_dropped"] == 1
    assert "fewer than two raters" in icc_2k(SHROUT_FLEISS[:, :1]).reason
    assert "no variation" in icc_2k(np.ones((4, 3))).reason


def test_cronbach_alpha_is_icc_3k_of_shrout_fleiss_and_the_variance_formula():
    alpha, (low, high) = cronbach_alpha(SHROUT_FLEISS)
    assert round(alpha.value, 2) == 0.91
    k = SHROUT_FLEISS.shape[1]
    item_variances = SHROUT_FLEISS.var(axis=0, ddof=1).sum()
    textbook = k / (k - 1) * (1 - item_variances / SHROUT_FLEISS.sum(axis=1).var(ddof=1))
    assert alpha.value == pytest.approx(textbook, abs=1e-12)
    assert low < alpha.value < high < 1
    # Feldt: (1 - alpha) / (1 - bound) follows F(n - 1, (n - 1)(k - 1))
    assert (1 - alpha.value) / (1 - low) == pytest.approx(1 / stats.f.ppf(0.975, 5, 15))


def test_cronbach_alpha_undefined_without_variation():
    alpha, interval = cronbach_alpha(np.full((5, 3), 4.0))
    assert not alpha.defined and interval is None and "no variation" in alpha.reason


def _within_brute_force(units, values, points):
    agreeing = total = 0
    for unit in set(units):
        mine = [v for u, v in zip(units, values, strict=True) if u == unit]
        for a, b in itertools.combinations(mine, 2):
            total += 1
            agreeing += abs(a - b) <= points
    return agreeing / total, total


@pytest.mark.parametrize("dense", [True, False])
def test_within_points_equals_counting_every_pair(dense):
    rng = np.random.default_rng(4)
    units = rng.integers(0, 40, 200)
    values = rng.integers(1, 8, 200).astype(float)
    counts, domain = value_counts_from_pairs(units, values)
    if not dense:
        from scipy import sparse

        counts = sparse.csr_matrix(counts)
    for points in (0, 1, 2):
        expected, pairs = _within_brute_force(units.tolist(), values.tolist(), points)
        result = within_points_from_value_counts(counts, domain, points)
        assert result.value == pytest.approx(expected, abs=1e-12) and result.n == pairs
    assert within_points_from_value_counts(counts, domain, 0).value == pytest.approx(
        percent_agreement_from_value_counts(counts).value
    )


def test_within_points_needs_a_unit_with_two_values():
    counts, domain = value_counts_from_pairs([1, 2], [3.0, 4.0])
    assert "no unit has two" in within_points_from_value_counts(counts, domain, 1).reason
