"""Categorical family: independent categorical features, each with a symmetric Dirichlet prior.

Model for the items i of one cluster and features j = 1..F, feature j taking
the values 0 .. C_j − 1 (survey answers, genotypes, ...)::

    θ_j ~ Dirichlet(β_j, ..., β_j)   (C_j categories),    x_ij | θ ~ Categorical(θ_j).

The kernels see each item one-hot encoded (:func:`one_hot`): a row of
``d = Σ_j C_j`` zeros and ones, column ``o_j + c`` set when ``x_ij = c``
(``o_j = Σ_{j' < j} C_j'``), so statistics are column sums and a predictive
is one dot product (the data the kernels hold, ``Model.data``, is that
matrix; the PyMC distribution observes the codes).

Layouts (float64 vectors)::

    params = [F, β_1..β_F, C_1..C_F]                          1 + 2F
    stats  = [n, n_1..n_d],         n_col = Σ_i x_i,col        1 + d
    cache  = [c, w_1..w_d]                                     1 + d
    theta  = [0, log θ_1..log θ_d]  (the cache layout, c = 0)  1 + d

Conjugate update: θ_j | x ~ Dirichlet(β_j + n_{o_j + c})_c, hence::

    log p(x_1..x_n) = Σ_j [log Γ(C_j β_j) − log Γ(C_j β_j + n) + Σ_c (log Γ(β_j + n_{o_j+c}) − log Γ(β_j))].

The predictive of one more item is Π_j (β_j + n_{o_j + x_j}) / (C_j β_j + n)::

    log p(x | stats) = c + Σ_col x_col w_col,   c = −Σ_j log(C_j β_j + n),   w_col = log(β_j + n_col).

Coarsened (ζ < 1, ``families``, "Coarsening"): n and the column counts count ζ
each, and the predictive of one more item of weight ζ keeps the linear form with::

    c = −Σ_j [log Γ(C_j β_j + ζ n + ζ) − log Γ(C_j β_j + ζ n)],
    w_col = log Γ(β_j + ζ n_col + ζ) − log Γ(β_j + ζ n_col).
"""

import math

import numpy as np

from pymc_partitions._dispatch import ADDITIVE
from pymc_partitions._jit import jit
from pymc_partitions._validation import constant_value

from ._common import coarsen_block, coarsening, log_gamma_variate, offset_weight_log_densities
from .beta_bernoulli import cache_size, item_stats, param_size, stat_size
from .spec import CATEGORIES, CODES, FEATURE, FamilySpec, Hyper, Hyperpriors, Learned

# A one-hot row is a vector of binary features: its statistics are the Beta-Bernoulli's ([1, x_1..x_d], column
# sums over a cluster), and the cache and θ hold, like the Beta-Bernoulli's, one constant and d column weights.
__all__ = [
    "stat_size",
    "cache_size",
    "param_size",
    "item_stats",
    "log_marginal",
    "fill_cache",
    "log_predictive",
    "draw_params",
    "log_density",
    "log_densities",
    "one_hot",
    "draw_data",
    "default_hyperparameters",
    "SPEC",
    "kernel_data",
    "graph_item_stats",
    "graph_cluster_log_marginal",
    "graph_support_point",
    "simulate",
    "DOC",
]


@jit
def log_marginal(stats, params):
    """Σ_j [log Γ(C_j β_j) − log Γ(C_j β_j + n) + Σ_c (log Γ(β_j + n_c) − log Γ(β_j))]; 0 for an empty cluster."""
    if stats[0] == 0.0:
        return 0.0
    zeta = coarsening(params)
    n = zeta * stats[0]
    n_features = int(params[0])
    total = 0.0
    col = 0
    for j in range(n_features):
        beta = params[1 + j]
        categories = int(params[1 + n_features + j])
        total += math.lgamma(categories * beta) - math.lgamma(categories * beta + n)
        for _ in range(categories):
            count = zeta * stats[1 + col]
            if count > 0.0:  # an unused category's term is exactly 0
                total += math.lgamma(beta + count) - math.lgamma(beta)
            col += 1
    return total


@jit
def fill_cache(stats, params, out):
    """Posterior predictive constants: c = −Σ_j log(C_j β_j + n) and w_col = log(β_j + n_col) (coarsened: module
    docstring)."""
    zeta = coarsening(params)
    n = zeta * stats[0]
    n_features = int(params[0])
    c = 0.0
    col = 0
    for j in range(n_features):
        beta = params[1 + j]
        categories = int(params[1 + n_features + j])
        if zeta == 1.0:
            c -= math.log(categories * beta + n)
        else:
            c -= math.lgamma(categories * beta + n + zeta) - math.lgamma(categories * beta + n)
        for _ in range(categories):
            if zeta == 1.0:
                out[1 + col] = math.log(beta + stats[1 + col])
            else:
                count = beta + zeta * stats[1 + col]
                out[1 + col] = math.lgamma(count + zeta) - math.lgamma(count)
            col += 1
    out[0] = c


@jit
def log_predictive(cache, x, params):
    """log p(x | stats) = c + Σ_col x_col w_col (x one-hot)."""
    total = cache[0]
    for col in range(x.shape[0]):
        total += x[col] * cache[1 + col]
    return total


@jit
def draw_params(stats, params, rng, out):
    """Draw θ_j ~ Dirichlet(β_j + ζ n_col) as normalised Gamma variates, in log space (tiny shapes stay finite)."""
    zeta = coarsening(params)
    n_features = int(params[0])
    out[0] = 0.0
    col = 0
    for j in range(n_features):
        beta = params[1 + j]
        categories = int(params[1 + n_features + j])
        top = -math.inf
        for c in range(categories):
            out[1 + col + c] = log_gamma_variate(rng, beta + zeta * stats[1 + col + c])
            top = max(top, out[1 + col + c])
        total = 0.0
        for c in range(categories):
            total += math.exp(out[1 + col + c] - top)
        log_norm = top + math.log(total)
        for c in range(categories):
            out[1 + col + c] -= log_norm
        col += categories


@jit
def log_density(theta, x, params):
    """ζ log p(x | θ) = ζ Σ_col x_col log θ_col: θ has the cache layout with c = 0, so this is ζ ``log_predictive``."""
    return coarsening(params) * log_predictive(theta, x, params)


@jit
def log_densities(theta, x, params, out):
    """Block form of :func:`log_density`: ``out[i, k] = Σ_col x_i,col log θ_k,col`` for the one-hot items ``x``
    (m, d) and the parameter rows ``theta`` (K, 1 + d), i.e. ``X (log θ)ᵀ``, one matrix product.

    Returns a bound on ``|out − loop|``: 2 γ_{d+2} Σ_col |x_col log θ_col| maximised over the block
    (``_common.offset_weight_log_densities``).
    """
    return coarsen_block(out, offset_weight_log_densities(theta, x, out), coarsening(params))


def one_hot(codes, n_categories):
    """The one-hot encoding of integer codes ``codes`` (n, F), feature ``j`` with ``n_categories[j]`` values.

    Returns the (n, Σ_j C_j) float64 matrix the kernels hold (module docstring).
    """
    codes = np.asarray(codes, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(n_categories)[:-1]]).astype(np.int64)
    out = np.zeros((codes.shape[0], int(np.sum(n_categories))))
    out[np.arange(codes.shape[0])[:, None], offsets[None, :] + codes] = 1.0
    return out


def draw_data(theta, labels, data, params, rng):
    """Replicated items: row i drawn from p(x | θ_{labels[i]}), one category per feature, as codes (what the
    PyMC model observes, not the kernels' one-hot rows).

    Python (numpy), vectorised over items: ``theta`` is (K, 1 + d), one drawn
    θ per cluster (``draw_params`` layout: log probabilities after a zero);
    ``data`` (the items' one-hot rows) only gives their number.  Returns a
    float64 (len(labels), F) array of codes.
    """
    n_features = int(params[0])
    categories = params[1 + n_features : 1 + 2 * n_features].astype(np.int64)
    out = np.empty((labels.shape[0], n_features))
    start = 0
    for j, c in enumerate(categories):
        cumulative = np.cumsum(np.exp(theta[labels, 1 + start : 1 + start + c]), axis=1)
        out[:, j] = np.minimum((rng.random((labels.shape[0], 1)) * cumulative[:, -1:] > cumulative).sum(axis=1), c - 1)
        start += c
    return out


def default_hyperparameters(x):
    """``beta = 1`` for every feature of the codes ``x`` (n, F): each feature's categories uniformly distributed a
    priori (Dirichlet(1, ..., 1)), and ``n_categories`` the largest code of each feature plus one."""
    return {"beta": np.ones(x.shape[1]), "n_categories": x.max(axis=0).astype(np.int64) + 1}


def default_hyperpriors(x):
    """The learned default for the codes ``x`` (n, F): the symmetric Dirichlets' concentration ``c`` gets a
    log-normal prior.

    ``beta_j = c`` for every feature, ``c ~ LogNormal(0, 1)``, and
    ``n_categories`` as in :func:`default_hyperparameters`: a small ``c``
    lets each cluster concentrate on few categories, a large one spreads it
    over all.  At the median the fixed default (``c = 1``, the uniform Dirichlet).
    """
    fixed = default_hyperparameters(x)
    ones = np.ones(x.shape[1])

    def assemble(concentration):
        return {"beta": concentration * ones, "n_categories": fixed["n_categories"]}

    return Hyperpriors((Learned("concentration", 1.0),), assemble)


SPEC = FamilySpec(
    kind=ADDITIVE,
    data=CODES,
    hypers=(
        Hyper("beta", FEATURE, lower=0.0, default=1.0),
        # the number of values of each feature: the largest observed code plus one by default
        Hyper("n_categories", CATEGORIES, default=lambda d, data: None if data is None else data.max(axis=0) + 1),
    ),
    defaults=default_hyperparameters,
    hyperpriors=default_hyperpriors,
)


def kernel_data(codes, beta, n_categories):
    """The kernels' data: the one-hot encoding of the observed codes (:func:`one_hot`)."""
    return one_hot(codes, np.asarray(n_categories, dtype=np.int64))


# --------------------------------------------------------------------------- the PyMC model's log density (PyTensor)


def _columns(n_categories):
    """``(feature, category)`` of each one-hot column, from the constant ``n_categories`` graph (numpy)."""
    counts = np.asarray(constant_value(n_categories), dtype=np.int64)
    return np.repeat(np.arange(counts.shape[0]), counts), np.concatenate([np.arange(c) for c in counts])


def graph_item_stats(value, d, beta, n_categories):
    """The additive statistics of each item: its one-hot encoding (``value[i, f] == c`` for each column)."""
    import pytensor.tensor as pt

    feature, category = _columns(n_categories)
    return pt.cast(pt.eq(value[:, feature], category[None, :]), "float64")


def graph_cluster_log_marginal(stats, counts, d, beta, n_categories):
    """``Σ_j [log Γ(C_j β_j) − log Γ(C_j β_j + m_k) + Σ_c (log Γ(β_j + n_kc) − log Γ(β_j))]`` for every row ``k``."""
    import pytensor.tensor as pt

    feature, _ = _columns(n_categories)
    beta_col = beta[feature]
    size = pt.cast(n_categories, "float64") * beta
    per_feature = pt.gammaln(size)[None, :] - pt.gammaln(size[None, :] + counts[:, None])
    return per_feature.sum(axis=1) + (pt.gammaln(beta_col + stats) - pt.gammaln(beta_col)).sum(axis=1)


def graph_support_point(partition, d, beta, n_categories):
    import pytensor.tensor as pt

    return pt.zeros((partition.shape[0], d))


def simulate(rng, inverse, n_clusters, d, beta, n_categories):
    """``θ_kj ~ Dirichlet(β_j, ..., β_j)``, then each item's code of each feature (numpy)."""
    out = np.empty((inverse.shape[0], d))
    for j in range(d):
        theta = rng.dirichlet(np.full(int(n_categories[j]), beta[j]), size=n_clusters)
        cumulative = np.cumsum(theta[inverse], axis=1)
        out[:, j] = np.minimum((rng.random((inverse.shape[0], 1)) > cumulative).sum(axis=1), int(n_categories[j]) - 1)
    return out


DOC = r"""Categorical features (survey answers, genotypes), independent symmetric Dirichlet-categorical per cluster and feature.

    .. math::

        \theta_{kj} \sim \operatorname{Dirichlet}(\beta_j, \ldots, \beta_j), \qquad
        x_{ij} \mid z_i = k \sim \operatorname{Categorical}(\theta_{kj}),

        \log p(X \mid z) = \sum_{k:\, m_k > 0} \sum_{j=1}^d \Big[
            \log\Gamma(C_j \beta_j) - \log\Gamma(C_j \beta_j + m_k)
            + \sum_{c=0}^{C_j - 1} \big(\log\Gamma(\beta_j + n_{kjc}) - \log\Gamma(\beta_j)\big) \Big],

    with :math:`n_{kjc} = \#\{i: z_i = k, x_{ij} = c\}`, :math:`C_j` the number of
    values of feature :math:`j` and :math:`m_k` the cluster size.

    ``default_hyperparameters(X)`` gives every feature the uniform Dirichlet (``beta = 1``).

    Parameters
    ----------
    name : str
    partition : integer vector of length n
    beta : scalar or length-d, > 0
        Concentration of each feature's symmetric Dirichlet prior.
    n_categories : integer vector of length d, optional
        Values each feature takes, coded ``0 .. n_categories[j] - 1``; by
        default the largest observed code plus one (required with ``.dist``
        without observed data).
    observed : array (n, d) or (n,) of integer codes

    Examples
    --------
    >>> import numpy as np, pymc as pm, pytensor.tensor as pt
    >>> import pymc_partitions as pmp
    >>> X = np.array([[0, 2], [0, 1], [1, 2]])
    >>> with pm.Model() as model:
    ...     z = pt.as_tensor(np.array([0, 0, 1]))
    ...     x = pmp.CategoricalMixture("x", partition=z, beta=1.0, observed=X)
    >>> # cluster 0: (1/2 · 2/3) (1/3 · 1/4) ; cluster 1: 1/2 · 1/3
    >>> round(float(model.compile_logp()({})), 4)
    -5.3753
    """
