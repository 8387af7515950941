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
mu0 → mu0 − o): mu0 is the spec's location, which
``families.shift_params`` moves when the kernels work relative to an origin
(``state.make_model``), so that Q − D²/κ_n sums centred values.

The predictive of one more item is Student-t per feature, ν = 2a_n, loc μ_n,
scale² s² = b_n (κ_n + 1)/(a_n κ_n)::

    log p(x | stats) = c + Σ_j e_j log1p(r_j (x_j − loc_j)²),
    r_j = 1/(ν s²),   e_j = −(ν + 1)/2,   c = Σ_j [log Γ((ν+1)/2) − log Γ(ν/2) − ½ log(π ν s²)].

Coarsened (ζ < 1, ``families``, "Coarsening"): n, Σx and Σx² count ζ each in
the update above, and the predictive of one more item (weight ζ) keeps the
same form with::

    r_j = ζ κ_n / (2 b_n (κ_n + ζ)),   e_j = −(a_n + ζ/2),
    c = Σ_j [log Γ(a_n + ζ/2) − log Γ(a_n) − (ζ/2) log(2π b_n) + ½ log(κ_n / (κ_n + ζ))].
"""

import math

import numpy as np

from pymc_partitions._dispatch import ADDITIVE
from pymc_partitions._jit import jit

from ._common import (
    KAPPA0, UNIT_ROUNDOFF, coarsen_block, coarsening, covariance, log_gamma_half_ratio_excess, log_gamma_variate,
    multiply_into, products_into, rounding,
)
from .spec import FEATURE, REAL, FamilySpec, Hyper, Hyperpriors, Learned

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
    """Posterior hyperparameters (μ_n, κ_n, a_n, b_n) of feature j (the statistics weighted by ζ)."""
    d = int(params[0])
    zeta = coarsening(params)
    n = zeta * stats[0]
    total = zeta * stats[1 + j]
    mu0 = params[1 + j]
    kappa_n = params[1 + d + j] + n
    deviation = total - n * mu0
    squares = zeta * stats[1 + d + j] - mu0 * (2.0 * total - n * mu0)
    b_n = params[1 + 3 * d + j] + 0.5 * (squares - deviation * deviation / kappa_n)
    return mu0 + deviation / kappa_n, kappa_n, params[1 + 2 * d + j] + 0.5 * n, b_n


@jit
def log_marginal(stats, params):
    """Exact log marginal likelihood (module docstring); 0 for an empty cluster."""
    if stats[0] == 0.0:
        return 0.0
    n = coarsening(params) * stats[0]
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
    a0, so consecutive features with equal a0 share E(a_n).  Coarsened: the
    module docstring's constants (:func:`_fill_coarsened_cache`).
    """
    d = int(params[0])
    zeta = coarsening(params)
    if zeta != 1.0:
        _fill_coarsened_cache(stats, params, zeta, out)
        return
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
def _fill_coarsened_cache(stats, params, zeta, out):
    """The predictive constants of one more item of weight ζ < 1 (module docstring, "Coarsened")."""
    d = int(params[0])
    c = 0.0
    for j in range(d):
        mu_n, kappa_n, a_n, b_n = _posterior(stats, params, j)
        out[1 + j] = mu_n
        out[1 + d + j] = zeta * kappa_n / (2.0 * b_n * (kappa_n + zeta))
        out[1 + 2 * d + j] = -(a_n + 0.5 * zeta)
        c += math.lgamma(a_n + 0.5 * zeta) - math.lgamma(a_n) - 0.5 * zeta * (_LOG_2PI + math.log(b_n))
        c += 0.5 * math.log(kappa_n / (kappa_n + zeta))
    out[0] = c


@jit(inline="always")
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


@jit(inline="always")
def log_density(theta, x, params):
    """ζ log p(x | μ, λ) = ζ Σ_j [½ log(λ_j/2π) − ½ λ_j (x_j − μ_j)²]."""
    d = x.shape[0]
    total = theta[2 * d]
    for j in range(d):
        delta = x[j] - theta[j]
        total -= 0.5 * theta[d + j] * delta * delta
    return coarsening(params) * total


BLOCK_ROWS = 256
"""Items per pass of :func:`log_densities` (its scratch is ``BLOCK_ROWS x 2d``)."""


@jit(_nrt=True)
def log_densities(theta, x, params, out):
    """Block form of :func:`log_density` for the items ``x`` (m, d) and the parameter rows ``theta`` (K, 2d + 1):
    one matrix product.

    With the square expanded, Σ_j λ_kj (x_ij − μ_kj)² = Σ_j λ_kj x_ij² − 2 Σ_j λ_kj μ_kj x_ij + Σ_j λ_kj μ_kj², so::

        out[i, k] = Σ_j [−½ λ_kj x_ij² + λ_kj μ_kj x_ij] + c_k − ½ Σ_j λ_kj μ_kj²
                  = ([X², X] [−½λ, λμ]ᵀ)_ik + c'_k          (X² elementwise, c_k = θ_k[2d]).

    Rounding: returns a bound on ``|out − loop|`` (the loop of
    :func:`log_density`), 2 γ_{2d+4} (|c_k| + Σ_j λ_kj (x_ij² + μ_kj²))
    maximised over the block (``_common.rounding``; the loop's own error has
    the same bound, as (x − μ)² ≤ 2(x² + μ²)).  Relative to the loop's value
    this is about u R for an item near its cluster, R = Σ_j λ_kj μ_kj² the
    squared distance of the cluster from the origin in its standard
    deviations: the expanded square cancels for clusters far from the
    origin.  The kernels' data are relative to ``families.origin`` (the
    data's means), so this is the range in which the statistics themselves
    are accurate (``docs/exactness.md``, "Coordinates and rounding":
    1e-9 relative for R ≤ 1e6).
    """
    m, d = x.shape
    k = theta.shape[0]
    weights = np.empty((k, 2 * d))
    offsets = np.empty(k)
    top_lambda = 0.0
    top_offset = 0.0
    for c in range(k):
        offset = theta[c, 2 * d]
        magnitude = abs(offset)
        for j in range(d):
            precision = theta[c, d + j]
            location = theta[c, j]
            weights[c, j] = -0.5 * precision
            weights[c, d + j] = precision * location
            square = precision * location * location
            offset -= 0.5 * square
            magnitude += square
            top_lambda = max(top_lambda, precision)
        offsets[c] = offset
        top_offset = max(top_offset, magnitude)
    features = np.empty((min(m, BLOCK_ROWS), 2 * d))
    top_norm = 0.0
    for r0 in range(0, m, BLOCK_ROWS):
        r1 = min(m, r0 + BLOCK_ROWS)
        for i in range(r1 - r0):
            norm = 0.0
            for j in range(d):
                value = x[r0 + i, j]
                features[i, j] = value * value
                features[i, d + j] = value
                norm += value * value
            top_norm = max(top_norm, norm)
        products_into(features[: r1 - r0], weights, out[r0:r1])
        for i in range(r0, r1):
            for c in range(k):
                out[i, c] += offsets[c]
    bound = 2.0 * rounding(2.0 * d + 4.0) * (top_offset + top_lambda * top_norm) * (1.0 + 8.0 * UNIT_ROUNDOFF)
    return coarsen_block(out, bound, coarsening(params))


def draw_data(theta, labels, data, params, rng):
    """Replicated items: row i drawn from p(x | θ_{labels[i]}), x_ij ~ N(μ_j, 1/λ_j).

    Python (numpy), vectorised over items: ``theta`` is (K, 2d + 1), one drawn
    θ per cluster (``draw_params`` layout); ``data`` (the observed rows) only
    gives the shape.  Returns a float64 (len(labels), d) array.
    """
    d = data.shape[1]
    return rng.normal(theta[labels, :d], 1.0 / np.sqrt(theta[labels, d : 2 * d]))


def default_hyperparameters(x):
    """``mu0 = m``, ``kappa0 = 0.1``, ``a0 = 1.5``, ``b0 = diag(S) / 2`` for data ``x`` (n, d) with column means
    ``m`` and covariance ``S``: a Gamma(1.5, rate ``b0``) precision, whose inverse has mean ``2 b0 = S_jj``."""
    d = x.shape[1]
    return {"mu0": x.mean(axis=0), "kappa0": np.full(d, KAPPA0), "a0": np.full(d, 1.5), "b0": np.diag(covariance(x)) / 2.0}


def default_hyperpriors(x):
    """The learned default for data ``x`` (n, d): ``kappa0``, ``a0`` and a scale of ``b0`` get log-normal priors.

    The one-feature case of the Normal-inverse-Wishart's (``nu0 = 2 a0``,
    ``Psi0 = 2 b0``, ``d = 1``), one value shared by every feature::

        mu0 = m,   kappa0 ~ LogNormal(log 0.1, 1),   a0 ~ LogNormal(log 1.5, 1),
        b0_j = scale · a0 · S_jj / 3,   scale ~ LogNormal(0, 1),

    so that ``b0_j / a0``, the inverse of the prior mean of a cluster's
    precision, is ``scale · S_jj / 3`` whatever ``a0``.  At the medians the
    fixed default (``a0 = 1.5``, ``b0 = S_jj / 2``).
    """
    fixed = default_hyperparameters(x)
    variance = np.diag(covariance(x))

    def assemble(kappa0, a0, scale):
        return {"mu0": fixed["mu0"], "kappa0": kappa0, "a0": a0, "b0": scale * a0 * variance / 3.0}

    return Hyperpriors((Learned("kappa0", KAPPA0), Learned("a0", 1.5), Learned("scale", 1.0)), assemble)


SPEC = FamilySpec(
    kind=ADDITIVE,
    data=REAL,
    hypers=(
        Hyper("mu0", FEATURE, default=0.0, location=True),
        Hyper("kappa0", FEATURE, lower=0.0, default=1.0),
        Hyper("a0", FEATURE, lower=0.0, default=1.0),
        Hyper("b0", FEATURE, lower=0.0, default=1.0),
    ),
    defaults=default_hyperparameters,
    hyperpriors=default_hyperpriors,
)


# --------------------------------------------------------------------------- the PyMC model's log density (PyTensor)


def graph_item_stats(value, d, mu0, kappa0, a0, b0):
    """The additive statistics of each item: ``[x, x²]``."""
    import pytensor.tensor as pt

    return pt.concatenate([value, value**2], axis=1)


def graph_cluster_log_marginal(stats, counts, d, mu0, kappa0, a0, b0):
    """The module docstring's log marginal for every row, with ``b_n`` from the scatter about the cluster mean."""
    import pytensor.tensor as pt

    total, squares = stats[:, :d], stats[:, d:]
    m = counts[:, None]
    mean = total / pt.switch(pt.gt(m, 0.0), m, 1.0)  # m may be a coarsened count below 1
    kappa_n = kappa0 + m
    a_n = a0 + 0.5 * m
    b_n = b0 + 0.5 * (squares - total * mean) + 0.5 * kappa0 * m * (mean - mu0) ** 2 / kappa_n
    log_m = (
        -0.5 * m * _LOG_2PI
        + 0.5 * (pt.log(kappa0) - pt.log(kappa_n))
        + a0 * pt.log(b0)
        - a_n * pt.log(b_n)
        + pt.gammaln(a_n)
        - pt.gammaln(a0)
    )
    return log_m.sum(axis=1)


def graph_support_point(partition, d, mu0, kappa0, a0, b0):
    import pytensor.tensor as pt

    return pt.broadcast_to(mu0, (partition.shape[0], d))


def simulate(rng, inverse, n_clusters, d, mu0, kappa0, a0, b0):
    """``λ ~ Gamma(a0, b0)``, ``μ ~ N(mu0, 1/(κ0 λ))`` per cluster, then the items (numpy)."""
    lam = rng.gamma(a0, 1.0 / b0, size=(n_clusters, d))
    mu = rng.normal(mu0, 1.0 / np.sqrt(kappa0 * lam))
    return rng.normal(mu[inverse], 1.0 / np.sqrt(lam[inverse]))


DOC = r"""Real features, independent Normal-Gamma per cluster and feature (diagonal Gaussian).

    .. math::

        \lambda_{kj} \sim \operatorname{Gamma}(a_{0j}, \text{rate } b_{0j}), \quad
        \mu_{kj} \mid \lambda_{kj} \sim N(\mu_{0j}, (\kappa_{0j}\lambda_{kj})^{-1}), \quad
        x_{ij} \mid z_i = k \sim N(\mu_{kj}, \lambda_{kj}^{-1}),

        \log p(X \mid z) = \sum_{k:\, m_k > 0} \sum_j \Big[
            -\tfrac{m_k}{2}\log 2\pi + \tfrac12 \log\tfrac{\kappa_0}{\kappa_n}
            + a_0 \log b_0 - a_n \log b_n + \log\Gamma(a_n) - \log\Gamma(a_0) \Big],

    with :math:`\kappa_n = \kappa_0 + m_k`, :math:`a_n = a_0 + m_k/2`,
    :math:`b_n = b_0 + \tfrac12 \sum_{i \in k} (x_{ij} - \bar x_{kj})^2
    + \kappa_0 m_k (\bar x_{kj} - \mu_0)^2 / (2\kappa_n)`
    (Murphy 2007, "Conjugate Bayesian analysis of the Gaussian distribution").

    ``default_hyperparameters(X)`` centres the prior on the data's means, with
    a cluster variance of prior mean the data's variance and ``kappa0 = 0.1``.

    Parameters
    ----------
    name : str
    partition : integer vector of length n
    mu0 : scalar or length-d
    kappa0, a0, b0 : scalar or length-d, > 0
    observed : array (n, d) or (n,)

    Examples
    --------
    >>> import numpy as np, pymc as pm, pytensor.tensor as pt
    >>> import pymc_partitions as pmp
    >>> X = np.array([[0.1, 2.0], [0.3, 1.5], [5.0, -1.0]])
    >>> with pm.Model() as model:
    ...     z = pt.as_tensor(np.array([0, 0, 1]))
    ...     x = pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=0.1, a0=2.0, b0=1.0, observed=X)
    >>> round(float(model.compile_logp()({})), 4)
    -11.6125
    """
