"""Beta-Bernoulli family: binary features with independent Beta priors.

Model for the items i of one cluster and features j = 1..d::

    θ_j ~ Beta(a_j, b_j),    x_ij | θ ~ Bernoulli(θ_j).

Layouts (float64 vectors)::

    params = [d, a_1..a_d, b_1..b_d]                          1 + 2d
    stats  = [n, s_1..s_d],           s_j = Σ_i x_ij          1 + d
    cache  = [c, w_1..w_d]                                    1 + d
    theta  = [c, w_1..w_d],  c = Σ_j log(1−θ_j),  w_j = log(θ_j/(1−θ_j))   1 + d

Conjugate update: θ_j | x ~ Beta(a_j + s_j, b_j + n − s_j), hence::

    log p(x_1..x_n) = Σ_j [log B(a_j + s_j, b_j + n − s_j) − log B(a_j, b_j)].

The predictive of one more item is Bernoulli(p_j), p_j = (a_j + s_j)/(a_j + b_j + n)::

    log p(x | stats) = c + Σ_j x_j w_j,   c = Σ_j log(1 − p_j),   w_j = log(p_j / (1 − p_j)).

Coarsened (ζ < 1, ``families``, "Coarsening"): the statistics count ζ each,
A_j = a_j + ζ s_j, B_j = b_j + ζ (n − s_j), and the predictive stays linear in x
with r_j(1) = log Γ(A_j + ζ) − log Γ(A_j) − log Γ(A_j + B_j + ζ) + log Γ(A_j + B_j),
r_j(0) the same with B_j: c = Σ_j r_j(0), w_j = r_j(1) − r_j(0).

θ is stored like the cache (c and log-odds, so log p(x | θ) = c + Σ_j x_j w_j) and
drawn from log-Gamma variates, so tiny Beta shapes never produce log 0 and
``log_density`` is one branch-free multiply-add per feature.
"""

import math

import numpy as np

from pymc_partitions._dispatch import ADDITIVE
from pymc_partitions._jit import jit

from ._common import betaln, coarsen_block, coarsening, log_gamma_variate, offset_weight_log_densities
from .spec import BINARY, FEATURE, FamilySpec, Hyper, Hyperpriors, Learned


@jit
def stat_size(d):
    """Length of a statistics row: n and d feature sums."""
    return 1 + d


@jit
def cache_size(d):
    """Length of a predictive cache: c and d log-odds."""
    return 1 + d


@jit
def param_size(d):
    """Length of θ: c = Σ_j log(1 − θ_j) and d log-odds."""
    return 1 + d


@jit
def item_stats(x, out):
    """Statistics of the single item ``x``: [1, x_1..x_d]."""
    out[0] = 1.0
    for j in range(x.shape[0]):
        out[1 + j] = x[j]


@jit
def log_marginal(stats, params):
    """Σ_j [log B(a_j + s_j, b_j + n − s_j) − log B(a_j, b_j)]; 0 for an empty cluster."""
    if stats[0] == 0.0:
        return 0.0
    zeta = coarsening(params)
    n = zeta * stats[0]
    d = int(params[0])
    total = 0.0
    for j in range(d):
        a = params[1 + j]
        b = params[1 + d + j]
        s = zeta * stats[1 + j]
        total += math.lgamma(a + s) - math.lgamma(a) + math.lgamma(b + n - s) - math.lgamma(b)
        total += math.lgamma(a + b) - math.lgamma(a + b + n)
    return total


@jit
def fill_cache(stats, params, out):
    """Posterior predictive constants: c = Σ_j log(1 − p_j) and w_j = log(p_j/(1 − p_j)) (coarsened: c = Σ_j r_j(0),
    w_j = r_j(1) − r_j(0), module docstring)."""
    zeta = coarsening(params)
    n = zeta * stats[0]
    d = int(params[0])
    c = 0.0
    for j in range(d):
        ones = params[1 + j] + zeta * stats[1 + j]
        zeros = params[1 + d + j] + n - zeta * stats[1 + j]
        if zeta == 1.0:
            c += math.log(zeros / (ones + zeros))
            out[1 + j] = math.log(ones / zeros)
        else:
            total = math.lgamma(ones + zeros + zeta) - math.lgamma(ones + zeros)
            one = math.lgamma(ones + zeta) - math.lgamma(ones) - total
            zero = math.lgamma(zeros + zeta) - math.lgamma(zeros) - total
            c += zero
            out[1 + j] = one - zero
    out[0] = c


@jit(inline="always")
def log_predictive(cache, x, params):
    """log p(x | stats) = c + Σ_j x_j w_j (x binary)."""
    total = cache[0]
    for j in range(x.shape[0]):
        total += x[j] * cache[1 + j]
    return total


@jit
def draw_params(stats, params, rng, out):
    """Draw θ_j ~ Beta(a_j + ζ s_j, b_j + ζ (n − s_j)) as θ_j = G_1/(G_1 + G_0), G_1, G_0 ~ Gamma.

    In log space: w_j = log G_1 − log G_0 and log(1 − θ_j) = −log(1 + e^{w_j}).
    """
    zeta = coarsening(params)
    n = zeta * stats[0]
    d = int(params[0])
    c = 0.0
    for j in range(d):
        log_odds = log_gamma_variate(rng, params[1 + j] + zeta * stats[1 + j])
        log_odds -= log_gamma_variate(rng, params[1 + d + j] + n - zeta * stats[1 + j])
        out[1 + j] = log_odds
        c -= _log1p_exp(log_odds)
    out[0] = c


@jit(inline="always")
def log_density(theta, x, params):
    """ζ log p(x | θ) = ζ Σ_j [x_j log θ_j + (1 − x_j) log(1 − θ_j)] = ζ (c + Σ_j x_j w_j).

    θ has the layout of a predictive cache ([c, w]), so this is ζ ``log_predictive``.
    """
    return coarsening(params) * log_predictive(theta, x, params)


@jit
def log_densities(theta, x, params, out):
    """Block form of :func:`log_density`: ``out[i, k] = c_k + Σ_j x_ij w_kj`` for the items ``x`` (m, d) and the
    parameter rows ``theta`` (K, 1 + d), i.e. ``X Wᵀ + c``, one matrix product.

    Returns a bound on ``|out − loop|`` (the loop of :func:`log_density`):
    2 γ_{d+2} (|c| + Σ_j |x_j w_j|) maximised over the block (``_common.offset_weight_log_densities``);
    coarsened, both times ζ (``_common.coarsen_block``).
    """
    return coarsen_block(out, offset_weight_log_densities(theta, x, out), coarsening(params))


@jit
def _log1p_exp(w):
    """log(1 + e^w) without overflow."""
    if w > 0.0:
        return w + math.log1p(math.exp(-w))
    return math.log1p(math.exp(w))


def draw_data(theta, labels, data, params, rng):
    """Replicated items: row i drawn from p(x | θ_{labels[i]}), x_ij ~ Bernoulli(θ_j) with θ_j = 1/(1 + e^{−w_j}).

    Python (numpy), vectorised over items: ``theta`` is (K, 1 + d), one drawn
    θ per cluster (``draw_params`` layout); ``data`` (the observed rows) only
    gives the shape.  Returns a float64 (len(labels), d) array of 0/1.
    """
    probability = np.exp(-np.logaddexp(0.0, -theta[labels, 1:]))
    return (rng.random(data.shape) < probability).astype(float)


def default_hyperparameters(x):
    """``a = 2 p``, ``b = 2 (1 − p)``, ``p = (Σ_i x_ij + 1) / (n + 2)``: each feature's Beta prior centred on its
    smoothed frequency in the data ``x`` (n, d), with the weight of two observations (``p = ½``: Beta(1, 1))."""
    p = (x.sum(axis=0) + 1.0) / (x.shape[0] + 2.0)
    return {"a": 2.0 * p, "b": 2.0 * (1.0 - p)}


def default_hyperpriors(x):
    """The learned default for the data ``x`` (n, d): the Beta priors' concentration ``c`` gets a log-normal prior.

    ``a_j = c p_j``, ``b_j = c (1 − p_j)`` with the smoothed frequencies ``p_j``
    of :func:`default_hyperparameters` and ``c ~ LogNormal(log 2, 1)``, one
    value for every feature: each cluster's probability of feature ``j`` has
    prior mean ``p_j`` and the weight of ``c`` observations.  A small ``c``
    lets clusters differ sharply (probabilities near 0 and 1), a large one
    keeps them near the data's frequencies.  At the median the fixed default.
    """
    p = (x.sum(axis=0) + 1.0) / (x.shape[0] + 2.0)

    def assemble(concentration):
        return {"a": concentration * p, "b": concentration * (1.0 - p)}

    return Hyperpriors((Learned("concentration", 2.0),), assemble)


SPEC = FamilySpec(
    kind=ADDITIVE,
    data=BINARY,
    hypers=(Hyper("a", FEATURE, lower=0.0, default=1.0), Hyper("b", FEATURE, lower=0.0, default=1.0)),
    defaults=default_hyperparameters,
    hyperpriors=default_hyperpriors,
)


# --------------------------------------------------------------------------- the PyMC model's log density (PyTensor)


def graph_item_stats(value, d, a, b):
    """The additive statistics of each item: its features."""
    return value


def graph_cluster_log_marginal(ones, counts, d, a, b):
    """``Σ_j [log B(a_j + S_kj, b_j + m_k − S_kj) − log B(a_j, b_j)]`` for every row ``k``."""
    zeros = counts[:, None] - ones
    return (betaln(a + ones, b + zeros) - betaln(a, b)).sum(axis=1)


def graph_support_point(partition, d, a, b):
    import pytensor.tensor as pt

    return pt.broadcast_to(pt.round(a / (a + b)), (partition.shape[0], d))


def simulate(rng, inverse, n_clusters, d, a, b):
    """``θ_kj ~ Beta(a_j, b_j)``, then item ``i`` of cluster ``inverse[i]`` (numpy)."""
    theta = rng.beta(a, b, size=(n_clusters, d))
    return (rng.random((inverse.shape[0], d)) < theta[inverse]).astype(float)


DOC = r"""Binary features, independent Beta-Bernoulli per cluster and feature.

    .. math::

        \theta_{kj} \sim \operatorname{Beta}(a_j, b_j), \qquad
        x_{ij} \mid z_i = k \sim \operatorname{Bernoulli}(\theta_{kj}),

        \log p(X \mid z) = \sum_{k:\, m_k > 0} \sum_{j=1}^d
            \log \frac{B(a_j + S_{kj},\, b_j + m_k - S_{kj})}{B(a_j, b_j)},

    with :math:`S_{kj} = \sum_{i: z_i = k} x_{ij}` and :math:`m_k` the cluster size.

    ``default_hyperparameters(X)`` centres each feature's Beta prior on its
    frequency in the data with the weight of two observations.

    Parameters
    ----------
    name : str
    partition : integer vector of length n
        Cluster label of each item (a partition prior variable, or fixed labels).
    a, b : scalar or length-d, > 0
        Beta prior parameters (constants or PyMC variables).
    observed : array (n, d) or (n,)
        0/1 data; required.

    Examples
    --------
    >>> import numpy as np, pymc as pm, pytensor.tensor as pt
    >>> import pymc_partitions as pmp
    >>> X = np.array([[1, 0], [1, 1], [0, 0]])
    >>> with pm.Model() as model:
    ...     a = pm.Gamma("a", 2.0, 2.0)
    ...     z = pt.as_tensor(np.array([0, 0, 2]))
    ...     x = pmp.BetaBernoulliMixture("x", partition=z, a=a, b=1.0, observed=X)
    >>> # a = 1: log(1/72) from the data plus log Gamma(1 | 2, 2) from the prior on a
    >>> round(float(model.compile_logp()({"a_log__": 0.0})), 4)
    -4.8904
    """
