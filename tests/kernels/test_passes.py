"""The sub-cluster passes' blocked log densities (``kernels.passes.pass_shard`` from ``BLOCK_MIN_PARAMS`` on).

At high D a pass takes its log odds from one block of matrix products per ``PASS_BLOCK`` items
(``families.log_densities``) and recomputes by the loop the items within ``FAR_LOG_ODDS`` of a tie and the
unfavoured sides' ``log p``.  Checked against independent computations: the sides are those of the loop
(``passes.drawn_side``, bit for bit) and of scipy's Gaussian densities, the sums are ``[1, x, x xᵀ]`` per side,
``log q`` is ``Σ log p_h(side)`` from scipy, drawn and forced, with items both near and far from a tie.
"""

import numpy as np
import pytest
from scipy import stats
from scipy.special import expit, log_expit

from pymc_partitions import families
from pymc_partitions.kernels import passes
from pymc_partitions.kernels.streams import keyed_uniform

NIW = families.NORMAL_INVERSE_WISHART
TAG = families.TAGS[NIW]


def two_clusters(d, n, separation, rng):
    """Items of two Gaussian clusters in D = d, ``separation`` apart along every axis, their params and one θ
    drawn from each cluster's posterior."""
    truth = (rng.random(n) < 0.4).astype(np.int64)
    x = rng.normal(size=(n, d)) + separation * truth[:, None]
    x = np.ascontiguousarray(x - x.mean(axis=0))
    params = families.pack_params(NIW, d, np.zeros(d), 0.1, d + 2.0, np.cov(x.T))
    theta = np.empty((2, families.param_size(NIW, d)))
    for t in range(2):
        members = x[truth == t]
        row = np.concatenate([[len(members)], members.sum(axis=0), (members.T @ members).ravel()])
        families.draw_params(NIW, row, params, rng, theta[t])
    return x, truth, params, theta


def reference_log_density(theta, x):
    """log N(x | μ, Σ) from θ = (μ, Λ, ...) with Σ⁻¹ = ΛᵀΛ, by scipy."""
    d = x.shape[1]
    factor = theta[d : d + d * d].reshape(d, d)
    return stats.multivariate_normal(theta[:d], np.linalg.inv(factor.T @ factor)).logpdf(x)


def run_pass(x, params, theta, log_w, seed, labels, forced_slot):
    n = x.shape[0]
    items = np.arange(n, dtype=np.int64)
    plan = passes.PassPlan(items, np.array([0, n]), 0, False, theta, log_w, np.int64(seed), labels, forced_slot, True)
    sides = np.empty(n, dtype=np.int64)
    sums = np.zeros((2, families.stat_size(NIW, x.shape[1])))
    sizes = np.zeros(2, dtype=np.int64)
    log_q = passes.pass_shard(TAG, x, params, plan, 0, n, sides, sums, sizes)
    return sides, sums, sizes, log_q


@pytest.mark.parametrize("forced", [False, True])
def test_blocked_pass_gives_the_loops_sides_sums_and_log_q(forced):
    d, n = 32, 3000
    assert families.param_size(NIW, d) >= passes.BLOCK_MIN_PARAMS  # the blocked path
    rng = np.random.default_rng(5)
    x, truth, params, theta = two_clusters(d, n, 1.5, rng)
    log_w = np.log([0.6, 0.4])
    gap = (log_w[1] + reference_log_density(theta[1], x)) - (log_w[0] + reference_log_density(theta[0], x))
    near = np.abs(gap) < passes.FAR_LOG_ODDS + 5.0
    assert near.sum() > 100 and (~near).sum() > 100, "items near and far from a tie: the test has power"
    seed = 987654321
    labels = np.where(rng.random(n) < 0.3, 1 - truth, truth)  # forced: many items on their unfavoured side
    sides, sums, sizes, log_q = run_pass(x, params, theta, log_w, seed, labels, 1 if forced else -1)
    if forced:
        expected = labels
        assert np.sum((expected == 1) != (gap > 0)) > 300, "unfavoured forced sides: the test has power"
    else:
        uniforms = np.array([keyed_uniform(seed, h) for h in range(n)])
        expected = (uniforms < expit(gap)).astype(np.int64)
        loop = np.array([passes.drawn_side(TAG, x[h], params, theta, log_w, seed, h) for h in range(n)])
        np.testing.assert_array_equal(sides, loop)  # the loop's draws, bit for bit
    np.testing.assert_array_equal(sides, expected)
    np.testing.assert_array_equal(sizes, np.bincount(expected, minlength=2))
    for t in range(2):
        members = x[expected == t]
        row = np.concatenate([[len(members)], members.sum(axis=0), (members.T @ members).ravel()])
        np.testing.assert_allclose(sums[t], row, rtol=1e-12, atol=1e-9)
    reference = np.sum(np.where(expected == 1, log_expit(gap), log_expit(-gap)))
    assert log_q == pytest.approx(reference, rel=1e-9, abs=1e-9)


def test_blocked_pass_takes_the_same_sides_below_the_block_threshold():
    """Below ``BLOCK_MIN_PARAMS`` (D = 8) the pass is the loop: the same sides as ``drawn_side``."""
    d, n = 8, 500
    assert families.param_size(NIW, d) < passes.BLOCK_MIN_PARAMS
    rng = np.random.default_rng(2)
    x, truth, params, theta = two_clusters(d, n, 0.8, rng)
    log_w = np.log([0.5, 0.5])
    sides, _, _, _ = run_pass(x, params, theta, log_w, 11, truth, -1)
    loop = np.array([passes.drawn_side(TAG, x[h], params, theta, log_w, 11, h) for h in range(n)])
    np.testing.assert_array_equal(sides, loop)


def test_block_log_densities_match_the_loop_at_d128():
    """``families.log_densities`` at the anchor's D = 128 against ``log_density`` item by item (1e-10 relative)
    and against scipy; its bound holds."""
    d, n = 128, 400
    rng = np.random.default_rng(3)
    x, _, params, theta = two_clusters(d, n, 0.3, rng)
    block = np.empty((n, 2))
    bound = families.log_densities(NIW, theta, x, params, block)
    loop = np.array([[families.log_density(NIW, theta[t], x[i], params) for t in range(2)] for i in range(n)])
    assert np.max(np.abs(block - loop) / np.maximum(1.0, np.abs(loop))) < 1e-10
    assert np.max(np.abs(block - loop)) <= bound
    for t in range(2):
        np.testing.assert_allclose(block[:, t], reference_log_density(theta[t], x), rtol=1e-9)
