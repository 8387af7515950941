"""Helpers shared by the conjugate families (not part of the family interface).

Numba: the log rising-factorial ratio used by the count predictives, the sum of
log factorials of a count vector, and an underflow-free log-Gamma variate.
Python: validation and broadcasting of hyperparameters for ``pack_params``.
"""

import math

import numba
import numpy as np

RISING_PRODUCT_MAX = 16.0
"""Counts up to this size use a product of ratios and one log instead of lgamma."""


@numba.njit(cache=True, inline="always")
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


@numba.njit(cache=True)
def sum_log_factorial(x):
    """Σ_j log x_j! for a vector of non-negative integer counts (0! = 1! = 1 are skipped)."""
    total = 0.0
    for j in range(x.shape[0]):
        if x[j] > 1.0:
            total += math.lgamma(x[j] + 1.0)
    return total


@numba.njit(cache=True)
def log_gamma_variate(rng, shape):
    """log G for G ~ Gamma(shape, rate 1), accurate even where G underflows.

    For shape < 1, G = G' U^{1/shape} with G' ~ Gamma(shape + 1) and U ~ Uniform(0, 1]
    (Marsaglia & Tsang 2000, sec. 6), so log G = log G' + log(U)/shape stays finite.
    """
    if shape >= 1.0:
        return math.log(rng.gamma(shape, 1.0))
    return math.log(rng.gamma(shape + 1.0, 1.0)) + math.log1p(-rng.random()) / shape


def check_dimension(d):
    """``d`` (the number of features) must be a positive integer; returns it as ``int``."""
    if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)) or d < 1:
        raise ValueError(f"d must be a positive integer (the number of features), got {d!r}")
    return int(d)


def per_feature(name, value, d, *, positive=False):
    """Broadcast a scalar or length-``d`` hyperparameter to a float64 vector of length ``d``.

    Raises ``ValueError`` naming ``name`` for another shape, non-finite values, or
    (with ``positive``) values ≤ 0.
    """
    arr = np.asarray(value, dtype=float)
    if arr.ndim > 1 or (arr.ndim == 1 and arr.shape[0] != d):
        raise ValueError(f"{name} must be a scalar or have length d={d}, got shape {arr.shape}")
    arr = np.broadcast_to(arr, (d,))
    _check_values(name, arr, positive)
    return arr


def scalar(name, value, *, lower=None):
    """A finite scalar hyperparameter, strictly greater than ``lower`` when given."""
    arr = np.asarray(value, dtype=float)
    if arr.ndim != 0:
        raise ValueError(f"{name} must be a scalar, got shape {arr.shape}")
    _check_values(name, arr, False)
    if lower is not None and not arr > lower:
        raise ValueError(f"{name} must be > {lower}, got {float(arr)}")
    return float(arr)


def _check_values(name, arr, positive):
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {arr}")
    if positive and np.any(arr <= 0):
        raise ValueError(f"{name} must be > 0, got {arr}")


def concatenate_params(d, *parts):
    """The packed ``params`` vector ``[d, *parts]`` as a C-contiguous float64 array."""
    return np.ascontiguousarray(np.concatenate([[float(d)], *[np.ravel(p) for p in parts]]))
