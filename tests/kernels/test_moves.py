"""Sampling from unnormalised log weights (``kernels.moves``)."""

import math

import numpy as np

from pymc_partitions.kernels.background import random_pair
from pymc_partitions.kernels.moves import NEGLIGIBLE_LOG_WEIGHT, TWO_53, choose, exp_normalise, uniform_index


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


def test_uniform_index_follows_its_rejection_rule():
    """Replayed on the same stream: k = 2**53 u, rejected at or above the largest multiple of n, else k mod n."""
    for n in (1, 2, 3, 7, 1000, 2**52 + 1, TWO_53):
        rng, replay = np.random.default_rng(n), np.random.default_rng(n)
        limit = (TWO_53 // n) * n
        for _ in range(200):
            k = int(replay.random() * TWO_53)
            while k >= limit:
                k = int(replay.random() * TWO_53)
            assert uniform_index(n, rng) == k % n
        assert rng.random() == replay.random()  # the same number of uniforms used


def test_random_pair_is_uniform_over_ordered_pairs():
    """All 12 ordered pairs of 4 items, each within 4 binomial standard errors of 1/12; never i == j."""
    rng = np.random.default_rng(1)
    draws = 24000
    counts = np.zeros((4, 4))
    for _ in range(draws):
        i, j = random_pair(4, rng)
        counts[i, j] += 1
    assert np.all(np.diag(counts) == 0)
    p = 1 / 12
    off = counts[~np.eye(4, dtype=bool)] / draws
    assert np.all(np.abs(off - p) <= 4 * np.sqrt(p * (1 - p) / draws))
