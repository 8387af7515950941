"""Helpers shared by the conjugate families (not part of the family interface).

Numba: the log rising-factorial ratio used by the count predictives, the
log-Gamma half ratio and a log of a product with few logs for the Normal-Gamma
cache, the sum of log factorials of a count vector, an underflow-free
log-Gamma variate, and the matrix products and rounding bounds of the block
log densities (``log_densities``: :func:`products_into`, :func:`tile_shape`,
:func:`rounding`).
PyTensor: :func:`betaln` (PyTensor is imported when a PyMC model is built, never by the kernels).
"""

import math

import numpy as np

from pymc_partitions._jit import jit

@jit(inline="always")
def coarsening(params):
    """ζ, the power of every item's likelihood: the last entry of a family's ``params`` (1 for the ordinary
    posterior; ``families``, "Coarsening")."""
    return params[params.shape[0] - 1]


@jit
def coarsen_block(out, bound, zeta):
    """``out *= ζ`` for a block of log densities (``log_densities``) and the bound on ``|out − loop|`` for a loop
    that multiplies its sum by ζ too: ζ · ``bound`` plus the rounding of both products (u ζ |value| each, with
    the values maximised over the block).  ζ = 1 leaves both unchanged."""
    if zeta == 1.0:
        return bound
    top = 0.0
    for i in range(out.shape[0]):
        for k in range(out.shape[1]):
            out[i, k] *= zeta
            top = max(top, abs(out[i, k]))
    return (zeta * bound + 2.0 * UNIT_ROUNDOFF * (top + zeta * bound)) * (1.0 + 4.0 * UNIT_ROUNDOFF)


RISING_PRODUCT_MAX = 16.0
"""Counts up to this size use a product of ratios and one log instead of lgamma."""


@jit(inline="always")
def log_rising_ratio(a, m):
    """R(a, m) = log Γ(a + m) − log Γ(a) − log Γ(m + 1) for an integer count m ≥ 0.

    Equals log Π_{k=0}^{m−1} (a + k)/(k + 1): for m ≤ ``RISING_PRODUCT_MAX`` this
    product costs one log (the predictive hot path); larger m use lgamma.
    """
    if m > RISING_PRODUCT_MAX:
        return math.lgamma(a + m) - math.lgamma(a) - math.lgamma(m + 1.0)
    product = 1.0
    k = 0.0
    while k < m:
        product *= (a + k) / (k + 1.0)
        k += 1.0
    return math.log(product)


HALF_RATIO_SERIES_MIN = 16.0
"""From this argument on :func:`log_gamma_half_ratio_excess` uses its asymptotic series instead of two lgamma."""


@jit(inline="always")
def log_gamma_half_ratio_excess(a):
    """log Γ(a + ½) − log Γ(a) − ½ log a for a > 0.

    For a ≥ ``HALF_RATIO_SERIES_MIN`` the asymptotic series (DLMF 5.11.13 for the
    two arguments, with B_k(½) = (2^(1−k) − 1) B_k for the Bernoulli numbers)::

        −1/(8a) + 1/(192a³) − 1/(640a⁵) + 17/(14336a⁷) − 31/(18432a⁹),

    whose first omitted term, 0.0038/a¹¹, is below 2.3e−16 there; it needs no
    log or lgamma at all (the Normal-Gamma predictive cache is refilled for every
    item of a Gibbs sweep, and folds the ½ log a into one log per cache).
    Smaller a use lgamma.
    """
    if a < HALF_RATIO_SERIES_MIN:
        return math.lgamma(a + 0.5) - math.lgamma(a) - 0.5 * math.log(a)
    inv = 1.0 / a
    inv2 = inv * inv
    return inv * (-1.0 / 8.0 + inv2 * (1.0 / 192.0 + inv2 * (-1.0 / 640.0 + inv2 * (17.0 / 14336.0 - inv2 * (31.0 / 18432.0)))))


PRODUCT_BOUND = 2.0**300
""":func:`multiply_into` keeps its running product within [1/PRODUCT_BOUND, PRODUCT_BOUND]."""


@jit(inline="always")
def multiply_into(product, log_sum, factor):
    """One step of log Π_j f_j = ``log_sum + log(product)`` with few logs; returns the new ``(product, log_sum)``.

    Factors are multiplied into ``product`` as long as it stays within
    [1/``PRODUCT_BOUND``, ``PRODUCT_BOUND``] (so it can neither overflow nor
    lose precision to underflow); a product leaving that range, or a factor
    outside it, goes into ``log_sum`` instead.  Start from ``(1.0, 0.0)``.
    """
    if 1.0 / PRODUCT_BOUND < factor < PRODUCT_BOUND:
        product *= factor
        if 1.0 / PRODUCT_BOUND < product < PRODUCT_BOUND:
            return product, log_sum
        return 1.0, log_sum + math.log(product)
    return product, log_sum + math.log(factor)


@jit
def sum_log_factorial(x):
    """Σ_j log x_j! for a vector of non-negative integer counts (0! = 1! = 1 are skipped)."""
    total = 0.0
    for j in range(x.shape[0]):
        if x[j] > 1.0:
            total += math.lgamma(x[j] + 1.0)
    return total


LOG_FACTORIAL_TABLE_SIZE = 64
"""Counts below this are looked up in :func:`log_factorial_table` by the block log densities."""


@jit
def log_factorial_table():
    """``table[m] = log m! = lgamma(m + 1)`` for m < ``LOG_FACTORIAL_TABLE_SIZE``, from the same ``lgamma`` as
    :func:`sum_log_factorial`, so a sum of looked-up terms equals its sum bit for bit."""
    table = np.empty(LOG_FACTORIAL_TABLE_SIZE)
    for m in range(LOG_FACTORIAL_TABLE_SIZE):
        table[m] = math.lgamma(m + 1.0)
    return table


@jit
def sum_log_factorial_from(table, x):
    """:func:`sum_log_factorial` of ``x`` with the counts below the table's size looked up in ``table``
    (:func:`log_factorial_table`): the same terms added in the same order."""
    total = 0.0
    for j in range(x.shape[0]):
        if x[j] > 1.0:
            total += table[int(x[j])] if x[j] < table.shape[0] else math.lgamma(x[j] + 1.0)
    return total


@jit
def log_gamma_variate(rng, shape):
    """log G for G ~ Gamma(shape, rate 1), accurate even where G underflows.

    For shape < 1, G = G' U^{1/shape} with G' ~ Gamma(shape + 1) and U ~ Uniform(0, 1]
    (Marsaglia & Tsang 2000, sec. 6), so log G = log G' + log(U)/shape stays finite.
    """
    if shape >= 1.0:
        return math.log(rng.gamma(shape, 1.0))
    return math.log(rng.gamma(shape + 1.0, 1.0)) + math.log1p(-rng.random()) / shape


# --------------------------------------------------------------------------- block log densities (linear algebra)

GEMM_MAX_WORK = 2**18
"""Multiply-adds of one matrix product call of the block log densities (``log_densities``).

OpenBLAS (numpy's and scipy's, which numba's ``np.dot`` calls) runs a product
of m·n·k ≤ 2^18 multiply-adds on the calling thread (its ``interface/gemm.c``:
``SMP_THRESHOLD_MIN * GEMM_MULTITHREAD_THRESHOLD = 65536 * 4``) and wakes its
thread pool for a larger one.  On the shared 2-core machine that made a
128 x 128 x 64 product 5-7x slower, and inside the hybrid sampler's numba
threads it would oversubscribe the cores; tiles of this size keep every
product on the caller's thread (``docs/benchmarks.md``, "Block log densities").
"""

GEMM_ROWS = 64
"""Rows (items) of a product tile when its columns do not all fit in :data:`GEMM_MAX_WORK` with more rows."""

UNIT_ROUNDOFF = 2.0**-53
"""u, the unit roundoff of float64."""


@jit
def rounding(terms):
    """γ_n = n u / (1 − n u) for n = ``terms`` (Higham 2002, "Accuracy and Stability of Numerical Algorithms",
    Lemma 3.1): a sum of n products computed in any order (blocked, with or without fused multiply-adds) is
    within γ_n Σ|products| of the exact sum, and so is any other order."""
    nu = terms * UNIT_ROUNDOFF
    return nu / (1.0 - nu)


@jit
def tile_shape(m, k, p):
    """``(rows, cols)`` of the tiles of an (m x k) product with inner dimension ``p``: rows·cols·p ≤
    :data:`GEMM_MAX_WORK` (at least 1 x 1), all ``k`` columns at once if :data:`GEMM_ROWS` rows of them fit
    (then as many rows as fit), else :data:`GEMM_ROWS` rows and as many columns as fit."""
    per_row = max(1, p * k)
    if per_row * GEMM_ROWS <= GEMM_MAX_WORK:
        return max(1, min(m, GEMM_MAX_WORK // per_row)), k
    rows = max(1, min(m, GEMM_ROWS, GEMM_MAX_WORK // max(1, p)))
    return rows, max(1, min(k, GEMM_MAX_WORK // (rows * max(1, p))))


@jit(_nrt=True)
def products_into(a, w, out):
    """``out = a @ wᵀ`` for ``a`` (m, p), ``w`` (k, p) and ``out`` (m, k), all C-contiguous, as BLAS products of
    :func:`tile_shape` tiles (single-threaded BLAS, :data:`GEMM_MAX_WORK`); a tile narrower than ``out`` goes
    through a scratch buffer."""
    m, p = a.shape
    k = w.shape[0]
    if m == 0 or k == 0:
        return
    if p == 0:
        for i in range(m):
            for c in range(k):
                out[i, c] = 0.0
        return
    rows, cols = tile_shape(m, k, p)
    if cols == k:
        for r0 in range(0, m, rows):
            r1 = min(m, r0 + rows)
            np.dot(a[r0:r1], w.T, out[r0:r1])
        return
    scratch = np.empty(rows * cols)
    for c0 in range(0, k, cols):
        c1 = min(k, c0 + cols)
        for r0 in range(0, m, rows):
            r1 = min(m, r0 + rows)
            tile = scratch[: (r1 - r0) * (c1 - c0)].reshape((r1 - r0, c1 - c0))
            np.dot(a[r0:r1], w[c0:c1].T, tile)
            for i in range(r1 - r0):
                for c in range(c1 - c0):
                    out[r0 + i, c0 + c] = tile[i, c]


@jit
def affine_log_densities(x, weights, offsets, out):
    """``out[i, k] = offsets[k] + Σ_j x[i, j] weights[k, j]``: one matrix product (:func:`products_into`) and the
    offsets; returns the magnitude ``max_k |offsets_k| + max_i Σ_j |x_ij| · max_kj |weights_kj|``, which bounds
    ``|offsets_k| + Σ_j |x_ij weights_kj|`` for every entry (the families' rounding bounds, :func:`rounding`).

    ``x`` (m, d), ``weights`` (k, d) and ``out`` (m, k) C-contiguous.  The
    linear families' block log densities (Beta-Bernoulli, categorical, and
    the Dirichlet-multinomial and Gamma-Poisson before their per-item terms).
    """
    m, d = x.shape
    k = weights.shape[0]
    products_into(x, weights, out)
    top_offset = 0.0
    top_weight = 0.0
    for c in range(k):
        top_offset = max(top_offset, abs(offsets[c]))
        for j in range(d):
            top_weight = max(top_weight, abs(weights[c, j]))
    top_row = 0.0
    for i in range(m):
        row = 0.0
        for j in range(d):
            row += abs(x[i, j])
        top_row = max(top_row, row)
        for c in range(k):
            out[i, c] += offsets[c]
    return top_offset + top_row * top_weight


@jit(_nrt=True)
def offset_weight_log_densities(theta, x, out):
    """``out[i, k] = θ_k[0] + Σ_j x_ij θ_k[1 + j]`` for parameter rows ``theta`` (k, 1 + d) laid out ``[c, w]``
    (Beta-Bernoulli: log(1 − θ) sum and log-odds; categorical: 0 and log-probabilities): ``X Wᵀ + c``, one
    matrix product.  Returns the bound 2 γ_{d+2} (|c| + Σ_j |x_j w_j|) on ``|out − loop|`` for a loop adding the
    same terms in another order (``log_predictive``'s), the magnitude maximised over the block."""
    k = theta.shape[0]
    d = x.shape[1]
    weights = np.empty((k, d))
    offsets = np.empty(k)
    for c in range(k):
        offsets[c] = theta[c, 0]
        for j in range(d):
            weights[c, j] = theta[c, 1 + j]
    magnitude = affine_log_densities(x, weights, offsets, out)
    return 2.0 * rounding(d + 2.0) * magnitude * (1.0 + 8.0 * UNIT_ROUNDOFF)


KAPPA0 = 0.1
"""Default prior precision of a cluster mean relative to the cluster's own (Gaussian families): a cluster's
mean spreads ``1 / sqrt(0.1) ≈ 3`` times as widely as its items do."""


def covariance(x):
    """Sample covariance of the rows of ``x`` (``ddof=1``), made positive definite (numpy; the Gaussian defaults).

    Each variance grows by a relative 1e-6 (so the result scales with the
    features), and a constant feature, or one item, gets variance 1.
    """
    n, d = x.shape
    cov = np.cov(x, rowvar=False, ddof=1).reshape(d, d) if n > 1 else np.zeros((d, d))
    variance = np.diag(cov)
    return cov + np.diag(np.where(variance > 0, 1e-6 * variance, 1.0))


# --------------------------------------------------------------------------- PyTensor (the PyMC models' log densities)


def betaln(x, y):
    """``log B(x, y)`` elementwise, a PyTensor graph."""
    import pytensor.tensor as pt

    return pt.gammaln(x) + pt.gammaln(y) - pt.gammaln(x + y)
