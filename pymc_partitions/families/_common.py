"""Helpers shared by the conjugate families (not part of the family interface).

Numba: the log rising-factorial ratio used by the count predictives, the
log-Gamma half ratio and a log of a product with few logs for the Normal-Gamma
cache, the sum of log factorials of a count vector, and an underflow-free
log-Gamma variate.
PyTensor: :func:`betaln` (PyTensor is imported when a PyMC model is built, never by the kernels).
"""

import math

import numpy as np

from pymc_partitions._jit import jit

RISING_PRODUCT_MAX = 16.0
"""Counts up to this size use a product of ratios and one log instead of lgamma."""


@jit
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


@jit
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


@jit
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


@jit
def log_gamma_variate(rng, shape):
    """log G for G ~ Gamma(shape, rate 1), accurate even where G underflows.

    For shape < 1, G = G' U^{1/shape} with G' ~ Gamma(shape + 1) and U ~ Uniform(0, 1]
    (Marsaglia & Tsang 2000, sec. 6), so log G = log G' + log(U)/shape stays finite.
    """
    if shape >= 1.0:
        return math.log(rng.gamma(shape, 1.0))
    return math.log(rng.gamma(shape + 1.0, 1.0)) + math.log1p(-rng.random()) / shape


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
