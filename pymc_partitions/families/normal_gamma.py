"""Normal-Gamma family: diagonal Gaussian features, independent Normal-Gamma priors.

Model for the items i of one cluster, each feature j = 1..d independently::

    λ_j ~ Gamma(shape a0_j, rate b0_j),   μ_j | λ_j ~ N(mu0_j, 1/(kappa0_j λ_j)),
    x_ij | μ, λ ~ N(μ_j, 1/λ_j).

Layouts (float64 vectors)::

    params = [d, mu0 (d), kappa0 (d), a0 (d), b0 (d)]          1 + 4d
    stats  = [n, Σ_i x_ij (d), Σ_i x_ij² (d)]                  1 + 2d
    cache  = [c, loc (d), r (d), e (d)]                         1 + 3d
    theta  = [μ (d), λ (d), Σ_j ½ log(λ_j / 2π)]               2d + 1

Conjugate update (Murphy 2007, "Conjugate Bayesian analysis of the Gaussian
distribution", sec. 3), with D_j = Σ_i (x_ij − mu0_j) and Q_j = Σ_i (x_ij − mu0_j)²::

    κ_n = κ0 + n,   μ_n = mu0 + D/κ_n,   a_n = a0 + n/2,   b_n = b0 + ½ (Q − D²/κ_n),
    log p(x_1..x_n) = Σ_j [log Γ(a_n) − log Γ(a0) + a0 log b0 − a_n log b_n
                           + ½ log(κ0/κ_n) − (n/2) log 2π].

The model is invariant under moving the data and mu0 together (x → x − o,
mu0 → mu0 − o): ``params[LOCATION : LOCATION + d]`` is mu0, which
``families.shift_params`` moves when the kernels work relative to an origin
(``state.make_model``), so that Q − D²/κ_n sums centred values.

The predictive of one more item is Student-t per feature, ν = 2a_n, loc μ_n,
scale² s² = b_n (κ_n + 1)/(a_n κ_n)::

    log p(x | stats) = c + Σ_j e_j log1p(r_j (x_j − loc_j)²),
    r_j = 1/(ν s²),   e_j = −(ν + 1)/2,   c = Σ_j [log Γ((ν+1)/2) − log Γ(ν/2) − ½ log(π ν s²)].
"""

import math

import numpy as np

from pymc_partitions._jit import jit
from pymc_partitions._validation import check_dimension, check_per_feature

from ._common import concatenate_params, log_gamma_half_ratio_excess, log_gamma_variate, multiply_into

LOCATION = 1
"""Index of mu0 (d entries) in ``params``: the location hyperparameter (``families.shift_params``)."""

_LOG_2PI = math.log(2.0 * math.pi)
_INV_PI = 1.0 / math.pi


@jit
def stat_size(d):
    """Length of a statistics row: n, d sums and d sums of squares."""
    return 1 + 2 * d


@jit
def cache_size(d):
    """Length of a predictive cache: c, d locations, d inverse scales, d exponents."""
    return 1 + 3 * d


@jit
def param_size(d):
    """Length of θ: d means, d precisions and the log normaliser."""
    return 2 * d + 1


@jit
def item_stats(x, out):
    """Statistics of the single item ``x``: [1, x, x²]."""
    d = x.shape[0]
    out[0] = 1.0
    for j in range(d):
        out[1 + j] = x[j]
        out[1 + d + j] = x[j] * x[j]


@jit
def _posterior(stats, params, j):
    """Posterior hyperparameters (μ_n, κ_n, a_n, b_n) of feature j."""
    d = int(params[0])
    n = stats[0]
    mu0 = params[1 + j]
    kappa_n = params[1 + d + j] + n
    deviation = stats[1 + j] - n * mu0
    squares = stats[1 + d + j] - mu0 * (2.0 * stats[1 + j] - n * mu0)
    b_n = params[1 + 3 * d + j] + 0.5 * (squares - deviation * deviation / kappa_n)
    return mu0 + deviation / kappa_n, kappa_n, params[1 + 2 * d + j] + 0.5 * n, b_n


@jit
def log_marginal(stats, params):
    """Exact log marginal likelihood (module docstring); 0 for an empty cluster."""
    n = stats[0]
    if n == 0.0:
        return 0.0
    d = int(params[0])
    total = -0.5 * n * d * _LOG_2PI
    for j in range(d):
        kappa0 = params[1 + d + j]
        a0 = params[1 + 2 * d + j]
        b0 = params[1 + 3 * d + j]
        _, kappa_n, a_n, b_n = _posterior(stats, params, j)
        total += math.lgamma(a_n) - math.lgamma(a0) + a0 * math.log(b0) - a_n * math.log(b_n)
        total += 0.5 * math.log(kappa0 / kappa_n)
    return total


@jit
def fill_cache(stats, params, out):
    """Student-t predictive constants per feature: loc, r = 1/(ν s²), e = −(ν+1)/2, and c.

    With ν = 2 a_n, c = Σ_j [log Γ(a_n + ½) − log Γ(a_n) − ½ log(π ν s²)]
    = Σ_j E(a_n) + ½ log Π_j (a_n r_j / π), where E(a) = log Γ(a + ½) −
    log Γ(a) − ½ log a (``_common.log_gamma_half_ratio_excess``, no log for
    a ≥ 16).  The product costs one log per cache (``_common.multiply_into``)
    instead of one per feature, and a_n depends on the feature only through
    a0, so consecutive features with equal a0 share E(a_n).
    """
    d = int(params[0])
    excess = 0.0
    shape_a = math.nan
    shape_excess = 0.0
    product, log_product = 1.0, 0.0
    for j in range(d):
        mu_n, kappa_n, a_n, b_n = _posterior(stats, params, j)
        r = kappa_n / (2.0 * b_n * (kappa_n + 1.0))
        out[1 + j] = mu_n
        out[1 + d + j] = r
        out[1 + 2 * d + j] = -(a_n + 0.5)
        if a_n != shape_a:  # features sharing a0 share the term
            shape_a = a_n
            shape_excess = log_gamma_half_ratio_excess(a_n)
        excess += shape_excess
        product, log_product = multiply_into(product, log_product, a_n * r * _INV_PI)
    out[0] = excess + 0.5 * (log_product + math.log(product))


@jit
def log_predictive(cache, x, params):
    """log p(x | stats) = c + Σ_j e_j log1p(r_j (x_j − loc_j)²)."""
    d = x.shape[0]
    total = cache[0]
    for j in range(d):
        delta = x[j] - cache[1 + j]
        total += cache[1 + 2 * d + j] * math.log1p(cache[1 + d + j] * delta * delta)
    return total


@jit
def draw_params(stats, params, rng, out):
    """Draw λ_j ~ Gamma(a_n, rate b_n), then μ_j ~ N(μ_n, 1/(κ_n λ_j)); store the log normaliser."""
    d = int(params[0])
    log_norm = 0.0
    for j in range(d):
        mu_n, kappa_n, a_n, b_n = _posterior(stats, params, j)
        log_precision = log_gamma_variate(rng, a_n) - math.log(b_n)
        precision = math.exp(log_precision)
        out[j] = mu_n + rng.standard_normal() / math.sqrt(kappa_n * precision)
        out[d + j] = precision
        log_norm += 0.5 * (log_precision - _LOG_2PI)
    out[2 * d] = log_norm


@jit
def log_density(theta, x, params):
    """log p(x | μ, λ) = Σ_j [½ log(λ_j/2π) − ½ λ_j (x_j − μ_j)²]."""
    d = x.shape[0]
    total = theta[2 * d]
    for j in range(d):
        delta = x[j] - theta[j]
        total -= 0.5 * theta[d + j] * delta * delta
    return total


def pack_params(d, mu0, kappa0, a0, b0):
    """``params`` = [d, mu0, kappa0, a0, b0]; each a scalar (broadcast) or length-d vector.

    kappa0, a0, b0 must be > 0.
    """
    d = check_dimension(d)
    return concatenate_params(
        d,
        check_per_feature("mu0", mu0, d),
        check_per_feature("kappa0", kappa0, d, positive=True),
        check_per_feature("a0", a0, d, positive=True),
        check_per_feature("b0", b0, d, positive=True),
    )


def draw_data(theta, labels, data, params, rng):
    """Replicated items: row i drawn from p(x | θ_{labels[i]}), x_ij ~ N(μ_j, 1/λ_j).

    Python (numpy), vectorised over items: ``theta`` is (K, 2d + 1), one drawn
    θ per cluster (``draw_params`` layout); ``data`` (the observed rows) only
    gives the shape.  Returns a float64 (len(labels), d) array.
    """
    d = data.shape[1]
    return rng.normal(theta[labels, :d], 1.0 / np.sqrt(theta[labels, d : 2 * d]))
