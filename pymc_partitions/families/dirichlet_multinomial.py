"""Dirichlet-multinomial family: count vectors (documents) with a Dirichlet prior.

Model for the items i of one cluster, with N_i = Σ_j x_ij::

    θ ~ Dirichlet(beta_1..beta_d),   x_i | θ ~ Multinomial(N_i, θ).

Rows with N_i = 0 are allowed (probability 1).

Layouts (float64 vectors)::

    params = [d, beta (d)]                                          1 + d
    stats  = [n, c (d), Σ_i log(N_i! / Π_j x_ij!)],  c = Σ_i x_i    2 + d
    cache  = [A, α (d)],   α_j = beta_j + c_j,  A = Σ_j α_j          1 + d
    theta  = [log θ_1..log θ_d]                                      d

Conjugate update: θ | x ~ Dirichlet(beta + c), hence (Pólya formula), with
B = Σ_j beta_j and C = Σ_j c_j::

    log p(x_1..x_n) = Σ_i log(N_i! / Π_j x_ij!) + log Γ(B) − log Γ(B + C)
                      + Σ_j [log Γ(beta_j + c_j) − log Γ(beta_j)].

The predictive of one more item is Dirichlet-multinomial(N, α); with
R(a, m) = log Γ(a + m) − log Γ(a) − log m! (one log for small m)::

    log p(x | stats) = Σ_{j: x_j > 0} R(α_j, x_j) − R(A, N).

Coarsened (ζ < 1, ``families``, "Coarsening"): the counts and the sum of log
multinomial coefficients count ζ each (α_j = beta_j + ζ c_j), and::

    log p(x | stats) = ζ log(N!/Π_j x_j!) + Σ_{j: x_j > 0} [log Γ(α_j + ζ x_j) − log Γ(α_j)]
                       − log Γ(A + ζ N) + log Γ(A).

θ is stored in log space (normalised log-Gamma variates), so tiny concentrations
never produce log 0 and ``log_density`` needs no log of θ.
"""

import math

import numpy as np

from pymc_partitions._dispatch import ADDITIVE
from pymc_partitions._jit import jit

from ._common import (
    UNIT_ROUNDOFF, affine_log_densities, coarsen_block, coarsening, log_factorial_table, log_gamma_variate, log_rising_ratio, rounding,
    sum_log_factorial, sum_log_factorial_from,
)
from .spec import COUNTS, FEATURE, ITEMS, FamilySpec, Hyper, Hyperpriors, Learned


@jit
def stat_size(d):
    """Length of a statistics row: n, d count sums, the sum of log multinomial coefficients."""
    return 2 + d


@jit
def cache_size(d):
    """Length of a predictive cache: A and d posterior concentrations."""
    return 1 + d


@jit
def param_size(d):
    """Length of θ: d log probabilities."""
    return d


@jit
def _log_multinomial_coefficient(x):
    """log(N! / Π_j x_j!) with N = Σ_j x_j."""
    total = 0.0
    for j in range(x.shape[0]):
        total += x[j]
    return math.lgamma(total + 1.0) - sum_log_factorial(x)


@jit
def item_stats(x, out):
    """Statistics of the single item ``x``: [1, x, log(N!/Π_j x_j!)]."""
    d = x.shape[0]
    out[0] = 1.0
    for j in range(d):
        out[1 + j] = x[j]
    out[1 + d] = _log_multinomial_coefficient(x)


@jit
def log_marginal(stats, params):
    """Exact log marginal likelihood (Pólya formula, module docstring); 0 for an empty cluster.

    Words a cluster does not use (``c_j = 0``) add ``log Γ(beta_j) - log Γ(beta_j) = 0``
    exactly and are skipped: the same number for a fraction of the ``lgamma``
    calls on sparse counts (a cluster of a few documents uses a few of the words).
    """
    if stats[0] == 0.0:
        return 0.0
    zeta = coarsening(params)
    d = int(params[0])
    total = zeta * stats[1 + d]
    prior_total = 0.0
    count_total = 0.0
    for j in range(d):
        beta = params[1 + j]
        count = zeta * stats[1 + j]
        if count != 0.0:
            total += math.lgamma(beta + count) - math.lgamma(beta)
        prior_total += beta
        count_total += count
    return total + math.lgamma(prior_total) - math.lgamma(prior_total + count_total)


@jit
def fill_cache(stats, params, out):
    """Posterior concentrations α_j = beta_j + ζ c_j and their total A."""
    zeta = coarsening(params)
    d = int(params[0])
    total = 0.0
    for j in range(d):
        alpha = params[1 + j] + zeta * stats[1 + j]
        out[1 + j] = alpha
        total += alpha
    out[0] = total


@jit(inline="always")
def log_predictive(cache, x, params):
    """log p(x | stats) = Σ_{j: x_j > 0} R(α_j, x_j) − R(A, N) (coarsened: module docstring)."""
    zeta = coarsening(params)
    if zeta != 1.0:
        return _coarsened_log_predictive(cache, x, zeta)
    total = 0.0
    count = 0.0
    for j in range(x.shape[0]):
        if x[j] > 0.0:
            total += log_rising_ratio(cache[1 + j], x[j])
            count += x[j]
    if count == 0.0:
        return 0.0
    return total - log_rising_ratio(cache[0], count)


@jit
def _coarsened_log_predictive(cache, x, zeta):
    """log p(x | stats) for items of weight ζ < 1 (module docstring, "Coarsened")."""
    total = 0.0
    count = 0.0
    for j in range(x.shape[0]):
        if x[j] > 0.0:
            total += math.lgamma(cache[1 + j] + zeta * x[j]) - math.lgamma(cache[1 + j]) - zeta * math.lgamma(x[j] + 1.0)
            count += x[j]
    if count == 0.0:
        return 0.0
    return total + zeta * math.lgamma(count + 1.0) - math.lgamma(cache[0] + zeta * count) + math.lgamma(cache[0])


@jit
def draw_params(stats, params, rng, out):
    """Draw θ ~ Dirichlet(beta + ζ c) as normalised Gamma variates, in log space."""
    zeta = coarsening(params)
    d = int(params[0])
    top = -math.inf
    for j in range(d):
        out[j] = log_gamma_variate(rng, params[1 + j] + zeta * stats[1 + j])
        top = max(top, out[j])
    total = 0.0
    for j in range(d):
        total += math.exp(out[j] - top)
    log_total = top + math.log(total)
    for j in range(d):
        out[j] -= log_total


@jit(inline="always")
def log_density(theta, x, params):
    """ζ log Multinomial(x | N, θ) = ζ [log N! + Σ_{j: x_j > 0} (x_j log θ_j − log x_j!)]."""
    total = 0.0
    count = 0.0
    for j in range(x.shape[0]):
        if x[j] > 0.0:
            total += x[j] * theta[j]
            count += x[j]
            if x[j] > 1.0:
                total -= math.lgamma(x[j] + 1.0)
    return coarsening(params) * (total + math.lgamma(count + 1.0))


@jit(_nrt=True)
def log_densities(theta, x, params, out):
    """Block form of :func:`log_density`: ``out[i, k] = log N_i! − Σ_j log x_ij! + Σ_j x_ij log θ_kj`` for the items
    ``x`` (m, d) and the parameter rows ``theta`` (K, d), i.e. ``X (log θ)ᵀ`` (one matrix product) plus each
    item's multinomial coefficient.

    The coefficient does not depend on the cluster, so it cancels in a choice
    between clusters; it is kept so that the block equals :func:`log_density`
    (the hybrid's hot shard weighs these densities against collapsed
    predictives, which include it), at O(m d), not O(m K d) as in a loop of
    :func:`log_density` (counts below 64 looked up:
    ``_common.log_factorial_table``).  Returns a bound on
    ``|out − loop|``: 2 γ_{2d+2} (Σ_j x_j |log θ_j| + Σ_j log x_j! + log N!),
    maximised over the block (``_common.rounding``).
    """
    k, d = theta.shape
    weights = np.empty((k, d))
    for c in range(k):
        for j in range(d):
            weights[c, j] = theta[c, j]
    magnitude = affine_log_densities(x, weights, np.zeros(k), out)
    table = log_factorial_table()
    top_constant = 0.0
    for i in range(x.shape[0]):
        count = 0.0
        for j in range(d):
            count += x[i, j]
        factorials = sum_log_factorial_from(table, x[i])
        total = table[int(count)] if count < table.shape[0] else math.lgamma(count + 1.0)
        top_constant = max(top_constant, total + factorials)
        constant = total - factorials
        for c in range(k):
            out[i, c] += constant
    bound = 2.0 * rounding(2.0 * d + 2.0) * (magnitude + top_constant) * (1.0 + 8.0 * UNIT_ROUNDOFF)
    return coarsen_block(out, bound, coarsening(params))


def draw_data(theta, labels, data, params, rng):
    """Replicated items: row i drawn from Multinomial(N_i, θ_{labels[i]}), N_i the total of ``data[i]``.

    The model conditions on the row totals N_i, so a replicate keeps them.
    Python (numpy), vectorised over items: ``theta`` is (K, d), one drawn
    log θ per cluster (``draw_params`` layout).  Returns a float64
    (len(labels), d) array of counts.
    """
    probability = np.exp(theta[labels])
    probability /= probability.sum(axis=1, keepdims=True)
    totals = np.rint(data.sum(axis=1)).astype(np.int64)
    return rng.multinomial(totals, probability).astype(float)


def default_hyperparameters(x):
    """``beta = d (C_j + 1) / (Σ_j C_j + d)``, ``C_j = Σ_i x_ij``: the smoothed word frequencies of the whole
    corpus ``x`` (n, d) times ``d``, the total mass of the symmetric Dirichlet(1)."""
    d = x.shape[1]
    counts = x.sum(axis=0)
    return {"beta": d * (counts + 1.0) / (counts.sum() + d)}


def default_hyperpriors(x):
    """The learned default for the corpus ``x`` (n, d): the Dirichlet's total mass ``c`` gets a log-normal prior.

    ``beta_j = c q_j`` with the smoothed word frequencies
    ``q_j = (C_j + 1) / (Σ_j C_j + d)`` of :func:`default_hyperparameters` and
    ``c ~ LogNormal(log d, 1)``: each cluster's word distribution has prior
    mean ``q`` and the weight of ``c`` words.  At the median the fixed default
    (``c = d``, the mass of the symmetric Dirichlet(1)).
    """
    d = x.shape[1]
    counts = x.sum(axis=0)
    frequencies = (counts + 1.0) / (counts.sum() + d)

    def assemble(concentration):
        return {"beta": concentration * frequencies}

    return Hyperpriors((Learned("concentration", float(d)),), assemble)


SPEC = FamilySpec(
    kind=ADDITIVE,
    data=COUNTS,
    hypers=(
        Hyper("beta", FEATURE, lower=0.0, default=1.0),
        # the row totals N_i, used only to draw data: the row sums of the observed data by default
        Hyper("totals", ITEMS, default=lambda d, data: None if data is None else data.sum(axis=1)),
    ),
    defaults=default_hyperparameters,
    hyperpriors=default_hyperpriors,
)


# --------------------------------------------------------------------------- the PyMC model's log density (PyTensor)


def graph_item_stats(value, d, beta, totals):
    """The additive statistics of each item: its counts."""
    return value


def graph_item_log_constant(value):
    """``Σ_i [log N_i! − Σ_j log x_ij!]``, the multinomial coefficients (``N_i`` the row sums of the value)."""
    import pytensor.tensor as pt

    return pt.gammaln(value.sum(axis=1) + 1.0).sum() - pt.gammaln(value + 1.0).sum()


def graph_cluster_log_marginal(counts_kj, sizes, d, beta, totals):
    """``log Γ(B) − log Γ(B + C_k) + Σ_j [log Γ(β_j + C_kj) − log Γ(β_j)]`` for every row ``k``."""
    import pytensor.tensor as pt

    beta_sum = beta.sum()
    return (
        pt.gammaln(beta_sum) - pt.gammaln(beta_sum + counts_kj.sum(axis=1))
        + (pt.gammaln(beta + counts_kj) - pt.gammaln(beta)).sum(axis=1)
    )


def graph_support_point(partition, d, beta, totals):
    import pytensor.tensor as pt

    return pt.floor(pt.cast(totals, "float64")[:, None] * (beta / beta.sum())[None, :])


def simulate(rng, inverse, n_clusters, d, beta, totals):
    """``θ_k ~ Dirichlet(β)``, then item ``i`` ``~ Multinomial(N_i, θ_{inverse[i]})`` (numpy)."""
    theta = rng.dirichlet(beta, size=n_clusters)
    return rng.multinomial(np.asarray(totals, dtype=np.int64), theta[inverse]).astype(float)


DOC = r"""Count vectors (e.g. documents), one Dirichlet-multinomial per cluster.

    .. math::

        \theta_k \sim \operatorname{Dirichlet}(\beta), \quad
        x_i \mid z_i = k \sim \operatorname{Multinomial}(N_i, \theta_k), \quad N_i = \textstyle\sum_j x_{ij},

        \log p(X \mid z) = \sum_i \Big[\log N_i! - \sum_j \log x_{ij}!\Big]
            + \sum_{k:\, m_k > 0} \Big[ \log\Gamma(B) - \log\Gamma(B + C_k)
            + \sum_j \big(\log\Gamma(\beta_j + C_{kj}) - \log\Gamma(\beta_j)\big) \Big],

    with :math:`B = \sum_j \beta_j`, :math:`C_{kj} = \sum_{i \in k} x_{ij}`,
    :math:`C_k = \sum_j C_{kj}`.  The multinomial coefficients are included.

    ``default_hyperparameters(X)`` sets ``beta`` to the smoothed word
    frequencies of the whole corpus times ``d``.

    Parameters
    ----------
    name : str
    partition : integer vector of length n
    beta : scalar or length-d, > 0
    observed : array (n, d) or (n,) of non-negative integer counts
    totals : integer vector of length n, optional
        Row totals :math:`N_i` used only when *drawing* data (prior/posterior
        predictive).  Defaults to the row sums of ``observed``; required with
        ``.dist`` when there is no observed data.  The log density always uses
        the row sums of the value it is evaluated at.

    Examples
    --------
    >>> import numpy as np, pymc as pm, pytensor.tensor as pt
    >>> import pymc_partitions as pmp
    >>> X = np.array([[3, 0, 1], [2, 1, 0], [0, 0, 5]])
    >>> with pm.Model() as model:
    ...     z = pt.as_tensor(np.array([1, 1, 0]))
    ...     x = pmp.DirichletMultinomialMixture("x", partition=z, beta=0.5, observed=X)
    >>> round(float(model.compile_logp()({})), 4)
    -7.5839
    """
