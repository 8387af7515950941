"""Sampling from unnormalised log weights (``kernels.moves``)."""

import math

import numpy as np

from pymc_partitions.kernels.moves import NEGLIGIBLE_LOG_WEIGHT, choose, exp_normalise


def test_exp_normalise_zeroes_only_negligible_weights():
    """Weights more than exp(NEGLIGIBLE_LOG_WEIGHT) below the largest become 0; the others are exact."""
    log_weights = np.array([-3.0, 5.0, 5.0 + NEGLIGIBLE_LOG_WEIGHT + 1e-9, 5.0 + NEGLIGIBLE_LOG_WEIGHT - 1e-9, -800.0])
    scratch = np.full(5, np.nan)
    top, total = exp_normalise(log_weights, 5, scratch)
    expected = np.exp(log_weights - 5.0)
    assert top == 5.0
    np.testing.assert_array_equal(scratch[:3], expected[:3])
    assert scratch[3] == 0.0 and scratch[4] == 0.0
    # the dropped weight is below a quarter of the sum's rounding unit: the sum is unchanged
    assert total == expected[0] + expected[1] + expected[2]
    assert expected[3] < 0.25 * math.ulp(total)


def test_choose_frequencies_and_log_probability():
    """Draw frequencies within 4 binomial standard errors of the normalised weights; the log probability is exact."""
    log_weights = np.array([0.0, math.log(3.0), -60.0, math.log(0.5)])
    probabilities = np.exp(log_weights) / np.exp(log_weights).sum()
    rng = np.random.default_rng(0)
    n = 20000
    counts = np.zeros(4)
    for _ in range(n):
        pick, log_p = choose(log_weights, 4, -1, rng)
        counts[pick] += 1
        assert abs(log_p - math.log(probabilities[pick])) < 1e-12
    se = np.sqrt(probabilities * (1 - probabilities) / n)
    assert np.all(np.abs(counts / n - probabilities) <= 4 * se + 1e-12)
    assert choose(log_weights, 4, 2, rng)[1] == -60.0 - math.log(np.exp(log_weights).sum())
