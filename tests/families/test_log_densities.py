"""Block log densities (``families.log_densities``) against the per-item loop of ``families.log_density``.

Every family, parameter rows drawn with ``draw_params`` from random subsets of
the data; blocks that exercise the product tiles (more rows than a tile, more
columns than fit in one, an empty block); the Gaussian families with data at
offset 1e8 and at scale 1e-8 through the kernels' coordinates
(``families.origin``, ``shift_params``), the issue-33 cases; and clusters far
from the origin, where the Normal-Gamma's expanded square loses what its
docstring says it loses and the Normal-inverse-Wishart's whitening does not.
Every comparison also checks the bound each call returns.
"""

import numpy as np
import pytest

import pymc_partitions.families as F
from pymc_partitions.families._common import GEMM_MAX_WORK, UNIT_ROUNDOFF, products_into, tile_shape

CAT_CATEGORIES = np.array([2, 3, 4, 5])

HYPER = {
    F.BETA_BERNOULLI: lambda d: (np.linspace(0.3, 2.0, d), 0.7),
    F.NORMAL_GAMMA: lambda d: (np.linspace(-1.0, 1.0, d), 0.5, 2.0, np.linspace(0.5, 2.0, d)),
    F.NORMAL_INVERSE_WISHART: lambda d: (np.linspace(-1.0, 1.0, d), 0.5, d + 3.0, np.eye(d) + 0.3),
    F.DIRICHLET_MULTINOMIAL: lambda d: (np.linspace(0.2, 3.0, d),),
    F.GAMMA_POISSON: lambda d: (np.linspace(0.5, 3.0, d), np.linspace(0.5, 2.0, d)),
    F.CATEGORICAL: lambda d: (np.linspace(0.5, 2.0, CAT_CATEGORIES.shape[0]), CAT_CATEGORIES),
}
FAMILIES = pytest.mark.parametrize("family", list(HYPER), ids=[F.MODULES[code].__name__.rsplit(".")[-1] for code in HYPER])


def _data(family, rng, n, d):
    """``n`` items of ``family`` with ``d`` features (the categorical family: one-hot codes of 4 features)."""
    if family == F.BETA_BERNOULLI:
        return rng.integers(0, 2, size=(n, d)).astype(float)
    if family == F.CATEGORICAL:
        codes = np.stack([rng.integers(0, c, size=n) for c in CAT_CATEGORIES], axis=1)
        return F.categorical.one_hot(codes, CAT_CATEGORIES)
    if family in (F.DIRICHLET_MULTINOMIAL, F.GAMMA_POISSON):
        counts = rng.poisson(rng.uniform(0.2, 4.0, size=d), size=(n, d)).astype(float)
        counts[0, 0] = 40.0  # a count above RISING_PRODUCT_MAX and lgamma's branch
        return counts
    centres = rng.normal(0.0, 4.0, size=(5, d))
    return centres[rng.integers(0, 5, size=n)] + rng.normal(size=(n, d)) @ (np.eye(d) + 0.2 * rng.normal(size=(d, d)))


def _params(family, d):
    return F.pack_params(family, CAT_CATEGORIES.shape[0] if family == F.CATEGORICAL else d, *HYPER[family](d))


def _thetas(family, data, params, k, rng):
    """``k`` parameter rows, each drawn from the posterior of a random subset of ``data``."""
    width = data.shape[1]
    theta = np.empty((k, F.param_size(family, width)))
    item = np.zeros(F.stat_size(family, width))
    for c in range(k):
        stats = np.zeros_like(item)
        for x in data[rng.choice(data.shape[0], size=rng.integers(1, 30))]:
            F.item_stats(family, x, item)
            stats += item
        F.draw_params(family, stats, params, rng, theta[c])
    return theta


def _loop(family, theta, data, params):
    return np.array([[F.log_density(family, row, x, params) for row in theta] for x in data])


def _block(family, theta, data, params):
    out = np.full((data.shape[0], theta.shape[0]), np.nan)
    bound = F.log_densities(family, theta, np.ascontiguousarray(data), params, out)
    return out, bound


def _check(family, theta, data, params, relative=1e-12):
    """Block == loop within the returned bound, and within ``relative`` of the loop's magnitude."""
    loop = _loop(family, theta, data, params)
    block, bound = _block(family, theta, data, params)
    difference = np.abs(block - loop)
    assert np.all(np.isfinite(block))
    assert np.all(difference <= bound), (difference.max(), bound)
    assert np.all(difference <= relative * np.maximum(1.0, np.abs(loop))), np.max(difference / np.maximum(1, np.abs(loop)))
    return loop, block, bound


@FAMILIES
@pytest.mark.parametrize("d", [3, 17])
def test_block_equals_the_per_item_loop(family, d):
    """300 items (several product tiles) under 7 drawn parameter rows: the block equals the loop to 1e-12
    relative, within the bound it returns, which is itself tiny."""
    rng = np.random.default_rng(d + 10 * family)
    data = _data(family, rng, 300, d)
    params = _params(family, d)
    theta = _thetas(family, data, params, 7, rng)
    loop, _, bound = _check(family, theta, data, params)
    assert bound <= 1e-10 * max(1.0, np.abs(loop).max())


@FAMILIES
def test_block_with_more_clusters_than_one_product_holds(family):
    """Enough clusters that a product tile holds only some of them (``tile_shape``'s column tiles), and one
    item, one cluster and an empty block."""
    rng = np.random.default_rng(5 + family)
    d = 40 if family != F.NORMAL_INVERSE_WISHART else 9
    data = _data(family, rng, 150, d)
    params = _params(family, d)
    k = 300
    width = {F.NORMAL_GAMMA: 2 * data.shape[1], F.NORMAL_INVERSE_WISHART: d * d}.get(family, data.shape[1])
    assert tile_shape(150, k, width)[1] < k  # the case this test is for
    theta = _thetas(family, data, params, k, rng)
    _check(family, theta, data, params)
    _check(family, theta[:1], data[:1], params)
    out = np.empty((0, k))
    F.log_densities(family, theta, np.ascontiguousarray(data[:0]), params, out)


@pytest.mark.parametrize("family", [F.NORMAL_GAMMA, F.NORMAL_INVERSE_WISHART], ids=["normal_gamma", "normal_inverse_wishart"])
@pytest.mark.parametrize("offset, scale", [(1e8, 1.0), (0.0, 1e-8), (1e8, 1e-8)], ids=["offset 1e8", "scale 1e-8", "both"])
def test_gaussian_blocks_far_from_zero_in_the_kernels_coordinates(family, offset, scale):
    """Issue 33's cases: data at ``offset + scale * y``, relative to their origin (``families.origin``) as the
    kernels see them, with the location hyperparameter shifted alike (``shift_params``): the block equals the
    loop to 1e-12 relative, as for data near zero."""
    rng = np.random.default_rng(33)
    d = 6
    raw = offset + scale * _data(family, rng, 400, d)
    origin = F.origin(family, raw)
    data = np.ascontiguousarray(raw - origin)
    mu0 = np.full(d, offset)
    hyper = (mu0, 0.5, 2.0, np.full(d, scale**2)) if family == F.NORMAL_GAMMA else (mu0, 0.5, d + 3.0, scale**2 * np.eye(d))
    params = F.shift_params(family, F.pack_params(family, d, *hyper), origin)
    theta = _thetas(family, data, params, 8, rng)
    loop, _, bound = _check(family, theta, data, params)
    assert bound <= 1e-10 * np.abs(loop).max()


def _far_clusters(family, separation):
    """Two unit-spread clusters ``±separation / 2`` standard deviations from their common mean (the origin), and
    each cluster's parameter row drawn from its own items."""
    rng = np.random.default_rng(7)
    d = 4
    data = np.concatenate([rng.normal(size=(100, d)) - separation / 2, rng.normal(size=(100, d)) + separation / 2])
    data -= F.origin(family, data)
    # a vague prior on the means (kappa0 = 1e-12): the clusters' spreads are drawn near 1, not inflated by it
    hyper = (np.zeros(d), 1e-12, 2.0, np.ones(d)) if family == F.NORMAL_GAMMA else (np.zeros(d), 1e-12, d + 3.0, np.eye(d))
    params = F.pack_params(family, d, *hyper)
    theta = np.empty((2, F.param_size(family, d)))
    item = np.zeros(F.stat_size(family, d))
    for c, rows in enumerate((data[:100], data[100:])):
        stats = np.zeros_like(item)
        for x in rows:
            F.item_stats(family, x, item)
            stats += item
        F.draw_params(family, stats, params, rng, theta[c])
    return data, params, theta


def test_normal_gamma_expanded_square_loses_u_R_far_from_the_origin():
    """Clusters 2e4 standard deviations apart (R = λμ² about 1e8 per feature): the expanded square's error in the
    items' own clusters is of order u R, as ``normal_gamma.log_densities`` documents -- measurably above the
    loop's rounding, below its bound and 1e-6 relative; at 200 deviations (R about 1e4) within 1e-11 relative."""
    d = 4
    for separation, relative in [(2e4, 1e-6), (200.0, 1e-11)]:
        data, params, theta = _far_clusters(F.NORMAL_GAMMA, separation)
        loop, block, bound = _check(F.NORMAL_GAMMA, theta, data, params, relative=relative)
        own = np.r_[np.abs(block - loop)[:100, 0], np.abs(block - loop)[100:, 1]]
        r = np.max(theta[:, d : 2 * d] * theta[:, :d] ** 2)  # λ μ² of the farthest feature
        assert separation**2 / 8 < r < separation**2 / 2
        assert own.max() <= 64 * d * UNIT_ROUNDOFF * r
        if separation == 2e4:
            assert own.max() > 1e6 * UNIT_ROUNDOFF  # the cancellation is real: ~u R, not ~u


def test_normal_inverse_wishart_whitening_stays_accurate_far_from_the_origin():
    """The same clusters 2e4 standard deviations apart: whitening the items (only the whitened mean subtracted
    after the product) keeps the block within 1e-11 of the loop in the items' own clusters."""
    data, params, theta = _far_clusters(F.NORMAL_INVERSE_WISHART, 2e4)
    loop, block, _ = _check(F.NORMAL_INVERSE_WISHART, theta, data, params, relative=1e-6)
    own = np.r_[np.abs(block - loop)[:100, 0], np.abs(block - loop)[100:, 1]]
    assert own.max() <= 1e-11 * np.abs(loop[:100, 0]).max()


def test_tiles_keep_every_product_under_the_single_thread_size():
    """``tile_shape``: each product tile does at most ``GEMM_MAX_WORK`` multiply-adds (at least one row and one
    column), and ``products_into`` equals numpy's product for shapes that need row and column tiles."""
    for m, k, p in [(1, 1, 1), (300, 7, 16), (300, 400, 80), (5, 10_000, 30), (64, 64, 64), (1000, 3, 3)]:
        rows, cols = tile_shape(m, k, p)
        assert 1 <= rows <= m and 1 <= cols <= k
        assert rows * cols * p <= GEMM_MAX_WORK
    rng = np.random.default_rng(0)
    a, w = rng.normal(size=(300, 80)), rng.normal(size=(400, 80))
    out = np.empty((300, 400))
    products_into(a, w, out)
    np.testing.assert_allclose(out, a @ w.T, rtol=1e-12, atol=1e-12)
