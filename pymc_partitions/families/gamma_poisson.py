"""Gamma-Poisson family: count features with independent Gamma priors on the rates.

Model for the items i of one cluster and features j = 1..d::

    λ_j ~ Gamma(shape a_j, rate b_j),   x_ij | λ ~ Poisson(λ_j).

Layouts (float64 vectors)::

    params = [d, a (d), b (d)]                                   1 + 2d
    stats  = [n, s (d), Σ_ij log x_ij!],   s_j = Σ_i x_ij        2 + d
    cache  = [c, α (d), g (d)]                                   1 + 2d
    theta  = [λ (d), log λ (d)]                                  2d

Conjugate update: λ_j | x ~ Gamma(α_j = a_j + s_j, rate β_j = b_j + n), hence::

    log p(x_1..x_n) = Σ_j [a_j log b_j − log Γ(a_j) + log Γ(α_j) − α_j log β_j] − Σ_ij log x_ij!.

The predictive of one more item is negative binomial per feature; with
R(a, m) = log Γ(a + m) − log Γ(a) − log m! (one log for small m)::

    log p(x | stats) = c + Σ_{j: x_j > 0} [R(α_j, x_j) + x_j g_j],
    g_j = −log(1 + β_j),   c = Σ_j α_j log(β_j / (1 + β_j)).

Coarsened (ζ < 1, ``families``, "Coarsening"): n, s and Σ log x! count ζ each
(α_j = a_j + ζ s_j, β_j = b_j + ζ n), and one more item of weight ζ gives::

    log p(x | stats) = c + Σ_{j: x_j > 0} [log Γ(α_j + ζ x_j) − log Γ(α_j) − ζ log x_j! + x_j g_j],
    g_j = −ζ log(β_j + ζ),   c = Σ_j α_j log(β_j / (β_j + ζ)).
"""

import math

import numpy as np

from pymc_partitions._dispatch import ADDITIVE
from pymc_partitions._jit import jit

from ._common import (
    UNIT_ROUNDOFF, affine_log_densities, coarsen_block, coarsening, log_factorial_table, log_gamma_variate, log_rising_ratio, rounding,
    sum_log_factorial, sum_log_factorial_from,
)
from .spec import COUNTS, FEATURE, FamilySpec, Hyper, Hyperpriors, Learned


@jit
def stat_size(d):
    """Length of a statistics row: n, d count sums, the sum of log factorials."""
    return 2 + d


@jit
def cache_size(d):
    """Length of a predictive cache: c, d posterior shapes, d log success factors."""
    return 1 + 2 * d


@jit
def param_size(d):
    """Length of θ: d rates and their logs."""
    return 2 * d


@jit
def item_stats(x, out):
    """Statistics of the single item ``x``: [1, x, Σ_j log x_j!]."""
    d = x.shape[0]
    out[0] = 1.0
    for j in range(d):
        out[1 + j] = x[j]
    out[1 + d] = sum_log_factorial(x)


@jit
def log_marginal(stats, params):
    """Exact log marginal likelihood (module docstring); 0 for an empty cluster."""
    if stats[0] == 0.0:
        return 0.0
    zeta = coarsening(params)
    n = zeta * stats[0]
    d = int(params[0])
    total = -zeta * stats[1 + d]
    for j in range(d):
        a = params[1 + j]
        b = params[1 + d + j]
        alpha = a + zeta * stats[1 + j]
        total += a * math.log(b) - math.lgamma(a) + math.lgamma(alpha) - alpha * math.log(b + n)
    return total


@jit
def fill_cache(stats, params, out):
    """Negative-binomial predictive constants: α_j, g_j = −log(1 + β_j) and c (coarsened: module docstring)."""
    zeta = coarsening(params)
    n = zeta * stats[0]
    d = int(params[0])
    c = 0.0
    for j in range(d):
        alpha = params[1 + j] + zeta * stats[1 + j]
        rate = params[1 + d + j] + n
        out[1 + j] = alpha
        out[1 + d + j] = -math.log1p(rate) if zeta == 1.0 else -zeta * math.log(rate + zeta)
        c -= alpha * math.log1p(zeta / rate)
    out[0] = c


@jit(inline="always")
def log_predictive(cache, x, params):
    """log p(x | stats) = c + Σ_{j: x_j > 0} [R(α_j, x_j) + x_j g_j] (coarsened: module docstring)."""
    d = x.shape[0]
    zeta = coarsening(params)
    total = cache[0]
    for j in range(d):
        if x[j] > 0.0:
            if zeta == 1.0:
                total += log_rising_ratio(cache[1 + j], x[j]) + x[j] * cache[1 + d + j]
            else:
                alpha = cache[1 + j]
                total += math.lgamma(alpha + zeta * x[j]) - math.lgamma(alpha) - zeta * math.lgamma(x[j] + 1.0)
                total += x[j] * cache[1 + d + j]
    return total


@jit
def draw_params(stats, params, rng, out):
    """Draw λ_j ~ Gamma(a_j + ζ s_j, rate b_j + ζ n); store λ_j and log λ_j."""
    zeta = coarsening(params)
    n = zeta * stats[0]
    d = int(params[0])
    for j in range(d):
        log_rate = log_gamma_variate(rng, params[1 + j] + zeta * stats[1 + j]) - math.log(params[1 + d + j] + n)
        out[j] = math.exp(log_rate)
        out[d + j] = log_rate


@jit(inline="always")
def log_density(theta, x, params):
    """ζ log p(x | λ) = ζ Σ_j [x_j log λ_j − λ_j − log x_j!]."""
    d = x.shape[0]
    total = 0.0
    for j in range(d):
        total -= theta[j]
        if x[j] > 0.0:
            total += x[j] * theta[d + j]
            if x[j] > 1.0:
                total -= math.lgamma(x[j] + 1.0)
    return coarsening(params) * total


@jit(_nrt=True)
def log_densities(theta, x, params, out):
    """Block form of :func:`log_density`: ``out[i, k] = Σ_j [x_ij log λ_kj − λ_kj − log x_ij!]`` for the items ``x``
    (m, d) and the parameter rows ``theta`` (K, 2d), i.e. ``X (log λ)ᵀ − Σ_j λ_j`` (one matrix product) minus each
    item's ``Σ_j log x_ij!``.

    The item's term does not depend on the cluster (it cancels in a choice
    between clusters); it is kept so that the block equals
    :func:`log_density`, at O(m d) instead of O(m K d) (counts below 64
    looked up: ``_common.log_factorial_table``).  Returns a bound on ``|out − loop|``: 2 γ_{3d+2} (Σ_j λ_j +
    Σ_j x_j |log λ_j| + Σ_j log x_j!), maximised over the block
    (``_common.rounding``).
    """
    k = theta.shape[0]
    d = x.shape[1]
    weights = np.empty((k, d))
    offsets = np.empty(k)
    for c in range(k):
        total = 0.0
        for j in range(d):
            weights[c, j] = theta[c, d + j]
            total -= theta[c, j]
        offsets[c] = total
    magnitude = affine_log_densities(x, weights, offsets, out)
    table = log_factorial_table()
    top_constant = 0.0
    for i in range(x.shape[0]):
        factorials = sum_log_factorial_from(table, x[i])
        top_constant = max(top_constant, factorials)
        for c in range(k):
            out[i, c] -= factorials
    bound = 2.0 * rounding(3.0 * d + 2.0) * (magnitude + top_constant) * (1.0 + 8.0 * UNIT_ROUNDOFF)
    return coarsen_block(out, bound, coarsening(params))


def draw_data(theta, labels, data, params, rng):
    """Replicated items: row i drawn from p(x | θ_{labels[i]}), x_ij ~ Poisson(λ_j).

    Python (numpy), vectorised over items: ``theta`` is (K, 2d), one drawn θ
    per cluster (``draw_params`` layout); ``data`` (the observed rows) only
    gives the shape.  Returns a float64 (len(labels), d) array of counts.
    """
    d = data.shape[1]
    return rng.poisson(theta[labels, :d]).astype(float)


def default_hyperparameters(x):
    """``a = 1``, ``b = 1 / max(m, 1/n)``: each rate an exponential prior whose mean is the feature's mean count
    ``m`` in the data ``x`` (n, d)."""
    n, d = x.shape
    return {"a": np.ones(d), "b": 1.0 / np.maximum(x.mean(axis=0), 1.0 / n)}


def default_hyperpriors(x):
    """The learned default for the data ``x`` (n, d): the Gamma priors' shape ``c`` gets a log-normal prior.

    ``a_j = c``, ``b_j = c / max(m_j, 1/n)`` with ``c ~ LogNormal(0, 1)``: each
    cluster's rate of feature ``j`` has prior mean ``max(m_j, 1/n)`` (the
    feature's mean count, as in :func:`default_hyperparameters`) and
    coefficient of variation ``1/√c``, so ``c`` sets how far clusters' rates
    spread around the data's.  At the median the fixed default (``c = 1``).
    """
    n = x.shape[0]
    mean = np.maximum(x.mean(axis=0), 1.0 / n)

    def assemble(concentration):
        return {"a": concentration, "b": concentration / mean}

    return Hyperpriors((Learned("concentration", 1.0),), assemble)


SPEC = FamilySpec(
    kind=ADDITIVE,
    data=COUNTS,
    hypers=(Hyper("a", FEATURE, lower=0.0, default=1.0), Hyper("b", FEATURE, lower=0.0, default=1.0)),
    defaults=default_hyperparameters,
    hyperpriors=default_hyperpriors,
)


# --------------------------------------------------------------------------- the PyMC model's log density (PyTensor)


def graph_item_stats(value, d, a, b):
    """The additive statistics of each item: its counts."""
    return value


def graph_item_log_constant(value):
    """``−Σ_{i,j} log x_ij!``."""
    import pytensor.tensor as pt

    return -pt.gammaln(value + 1.0).sum()


def graph_cluster_log_marginal(total, counts, d, a, b):
    """``Σ_j [a_j log b_j − log Γ(a_j) + log Γ(a_j + S_kj) − (a_j + S_kj) log(b_j + m_k)]`` for every row ``k``."""
    import pytensor.tensor as pt

    a_n = a + total
    log_m = a * pt.log(b) - pt.gammaln(a) + pt.gammaln(a_n) - a_n * pt.log(b + counts[:, None])
    return log_m.sum(axis=1)


def graph_support_point(partition, d, a, b):
    import pytensor.tensor as pt

    return pt.broadcast_to(pt.floor(a / b), (partition.shape[0], d))


def simulate(rng, inverse, n_clusters, d, a, b):
    """``λ_kj ~ Gamma(a_j, b_j)``, then the items' Poisson counts (numpy)."""
    lam = rng.gamma(a, 1.0 / b, size=(n_clusters, d))
    return rng.poisson(lam[inverse]).astype(float)


DOC = r"""Count features, independent Gamma-Poisson per cluster and feature.

    .. math::

        \lambda_{kj} \sim \operatorname{Gamma}(a_j, \text{rate } b_j), \quad
        x_{ij} \mid z_i = k \sim \operatorname{Poisson}(\lambda_{kj}),

        \log p(X \mid z) = -\sum_{i,j}\log x_{ij}! + \sum_{k:\, m_k > 0}\sum_j \Big[
            a_j\log b_j - \log\Gamma(a_j) + \log\Gamma(a_j + S_{kj}) - (a_j + S_{kj})\log(b_j + m_k) \Big],

    with :math:`S_{kj} = \sum_{i \in k} x_{ij}`.

    ``default_hyperparameters(X)`` gives each rate an exponential prior
    (``a = 1``) whose mean is the feature's mean count.

    Parameters
    ----------
    name : str
    partition : integer vector of length n
    a, b : scalar or length-d, > 0
    observed : array (n, d) or (n,) of non-negative integer counts

    Examples
    --------
    >>> import numpy as np, pymc as pm, pytensor.tensor as pt
    >>> import pymc_partitions as pmp
    >>> X = np.array([3, 4, 0, 1])
    >>> with pm.Model() as model:
    ...     z = pt.as_tensor(np.array([0, 0, 3, 3]))
    ...     x = pmp.GammaPoissonMixture("x", partition=z, a=2.0, b=1.0, observed=X)
    >>> round(float(model.compile_logp()({})), 4)
    -6.8554
    """
