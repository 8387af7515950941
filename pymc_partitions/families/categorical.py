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

    params = [d, F, C_1..C_F, β_1..β_F]                       2 + 2F
    stats  = [n, n_1..n_d],         n_col = Σ_i x_i,col        1 + d
    cache  = [c, w_1..w_d]                                     1 + d
    theta  = [0, log θ_1..log θ_d]  (the cache layout, c = 0)  1 + d

Conjugate update: θ_j | x ~ Dirichlet(β_j + n_{o_j + c})_c, hence::

    log p(x_1..x_n) = Σ_j [log Γ(C_j β_j) − log Γ(C_j β_j + n) + Σ_c (log Γ(β_j + n_{o_j+c}) − log Γ(β_j))].

The predictive of one more item is Π_j (β_j + n_{o_j + x_j}) / (C_j β_j + n)::

    log p(x | stats) = c + Σ_col x_col w_col,   c = −Σ_j log(C_j β_j + n),   w_col = log(β_j + n_col).
"""

import math

import numpy as np

from pymc_partitions._jit import jit
from pymc_partitions._validation import check_dimension, check_per_feature

from ._common import concatenate_params, log_gamma_variate


@jit
def stat_size(d):
    """Length of a statistics row: n and the d one-hot column counts."""
    return 1 + d


@jit
def cache_size(d):
    """Length of a predictive cache: c and d log weights."""
    return 1 + d


@jit
def param_size(d):
    """Length of θ: a zero (the cache's c) and d log probabilities."""
    return 1 + d


@jit
def item_stats(x, out):
    """Statistics of the single one-hot item ``x``: [1, x_1..x_d]."""
    out[0] = 1.0
    for col in range(x.shape[0]):
        out[1 + col] = x[col]


@jit
def log_marginal(stats, params):
    """Σ_j [log Γ(C_j β_j) − log Γ(C_j β_j + n) + Σ_c (log Γ(β_j + n_c) − log Γ(β_j))]; 0 for an empty cluster."""
    n = stats[0]
    if n == 0.0:
        return 0.0
    n_features = int(params[1])
    total = 0.0
    col = 0
    for j in range(n_features):
        categories = int(params[2 + j])
        beta = params[2 + n_features + j]
        total += math.lgamma(categories * beta) - math.lgamma(categories * beta + n)
        for _ in range(categories):
            count = stats[1 + col]
            if count > 0.0:  # an unused category's term is exactly 0
                total += math.lgamma(beta + count) - math.lgamma(beta)
            col += 1
    return total


@jit
def fill_cache(stats, params, out):
    """Posterior predictive constants: c = −Σ_j log(C_j β_j + n) and w_col = log(β_j + n_col)."""
    n = stats[0]
    n_features = int(params[1])
    c = 0.0
    col = 0
    for j in range(n_features):
        categories = int(params[2 + j])
        beta = params[2 + n_features + j]
        c -= math.log(categories * beta + n)
        for _ in range(categories):
            out[1 + col] = math.log(beta + stats[1 + col])
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
    """Draw θ_j ~ Dirichlet(β_j + n_col) as normalised Gamma variates, in log space (tiny shapes stay finite)."""
    n_features = int(params[1])
    out[0] = 0.0
    col = 0
    for j in range(n_features):
        categories = int(params[2 + j])
        beta = params[2 + n_features + j]
        top = -math.inf
        for c in range(categories):
            out[1 + col + c] = log_gamma_variate(rng, beta + stats[1 + col + c])
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
    """log p(x | θ) = Σ_col x_col log θ_col: θ has the cache layout with c = 0, so this is ``log_predictive``."""
    return log_predictive(theta, x, params)


def one_hot(codes, n_categories):
    """The one-hot encoding of integer codes ``codes`` (n, F), feature ``j`` with ``n_categories[j]`` values.

    Returns the (n, Σ_j C_j) float64 matrix the kernels hold (module docstring).
    """
    codes = np.asarray(codes, dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(n_categories)[:-1]]).astype(np.int64)
    out = np.zeros((codes.shape[0], int(np.sum(n_categories))))
    out[np.arange(codes.shape[0])[:, None], offsets[None, :] + codes] = 1.0
    return out


def pack_params(d, beta, n_categories):
    """``params`` = [d, F, C, β] for one-hot width ``d``; β (scalar or per feature) > 0, C integers >= 1 summing to d."""
    d = check_dimension(d)
    counts = np.atleast_1d(np.asarray(n_categories))
    if counts.ndim != 1 or counts.dtype.kind not in "iuf" or not np.all(counts == np.round(counts)) or np.any(counts < 1):
        raise ValueError(f"n_categories must be a vector of integers >= 1 (one per feature), got {n_categories!r}")
    if int(counts.sum()) != d:
        raise ValueError(f"n_categories must sum to the one-hot width d = {d}, got {counts.tolist()}")
    n_features = counts.shape[0]
    return concatenate_params(d, [float(n_features)], counts.astype(float), check_per_feature("beta", beta, n_features, positive=True))
