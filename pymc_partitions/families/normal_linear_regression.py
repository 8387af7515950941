r"""Normal linear regression family: clusterwise linear regression with a Normal-inverse-gamma prior.

Model for the items i of one cluster, each a response ``y_i`` and ``p``
covariates ``x_i`` (a row of the design matrix, which is data)::

    σ² ~ InvGamma(a0, b0),   β | σ² ~ N(m0, σ² Λ0⁻¹),   y_i | β, σ² ~ N(x_iᵀβ, σ²).

The kernels hold each item as the row ``[y, x]`` (``d = p + 1`` columns; the
PyMC distribution takes ``observed=y`` and ``covariates=X`` and observes
their ``column_stack``).  With τ = 1/σ² the precision.

Layouts (float64 vectors, matrices row-major)::

    params = [d, m0 (p), Λ0 (p²), a0, b0, log|Λ0|, Λ0 m0 (p), m0ᵀΛ0 m0, ζ]    6 + 2p + p²
    stats  = [n, yᵀy, Xᵀy (p), XᵀX (p²)]                                     2 + p + p²
    cache  = [c, e, 1/(2 b_n), m_n (p), K (p²)]                               3 + p + p²
    theta  = [β (p), τ, ½ log(τ / 2π)]                                       p + 2

Conjugate update (e.g. Murphy 2007, "Conjugate Bayesian analysis of the
Gaussian distribution", sec. 7.6 in the precision form), every statistic
weighted by the coarsening power ζ (1: the ordinary posterior; ``families``,
"Coarsening")::

    Λ_n = Λ0 + ζ XᵀX,   m_n = Λ_n⁻¹ (Λ0 m0 + ζ Xᵀy),   a_n = a0 + ζ n/2,
    b_n = b0 + ½ (ζ yᵀy + m0ᵀΛ0 m0 − m_nᵀ Λ_n m_n),
    log p(y | X) = −(ζ n/2) log 2π + ½ log|Λ0| − ½ log|Λ_n| + a0 log b0 − a_n log b_n + log Γ(a_n) − log Γ(a0).

One more item (x, y) of weight ζ adds ζ x xᵀ to Λ_n, so with h = xᵀΛ_n⁻¹x and
the residual r = y − xᵀm_n (matrix determinant lemma and the rank-one update
of the residual sum of squares, ``b' = b_n + ½ ζ r² / (1 + ζ h)``)::

    log p(y | x, stats) = c − ½ log1p(ζ h) + e log1p(ζ r² / (2 b_n (1 + ζ h))),
    c = −(ζ/2) log(2π b_n) + log Γ(a_n + ζ/2) − log Γ(a_n),   e = −(a_n + ζ/2),

a Student-t for ζ = 1.  ``K`` is the inverse of the lower Cholesky factor R
of Λ_n (Λ_n = R Rᵀ), so h = |K x|² is one O(p²) triangular product.

There is no location hyperparameter (moving y changes the regression), so
the kernels' origin is zero; the statistics are raw sums of products, best
kept well conditioned by standardised covariates.
"""

import math

import numpy as np

from pymc_partitions._dispatch import ADDITIVE
from pymc_partitions._jit import jit

from ._common import KAPPA0, UNIT_ROUNDOFF, coarsen_block, coarsening, log_gamma_variate, products_into, rounding
from .normal_inverse_wishart import _cholesky, _lower_inverse
from .spec import COEFFICIENT_MATRIX, COEFFICIENTS, COVARIATES, REAL, SCALAR, FamilySpec, Hyper, Hyperpriors, Learned

_LOG_2PI = math.log(2.0 * math.pi)


@jit
def stat_size(d):
    """Length of a statistics row: n, yᵀy, Xᵀy (p) and XᵀX (p²), with p = d − 1."""
    p = d - 1
    return 2 + p + p * p


@jit
def cache_size(d):
    """Length of a predictive cache: c, e, 1/(2 b_n), m_n (p), K (p²)."""
    p = d - 1
    return 3 + p + p * p


@jit
def param_size(d):
    """Length of θ: β (p), τ and the log normaliser."""
    return d + 1


@jit
def item_stats(x, out):
    """Statistics of the single item ``x = [y, x_1..x_p]``: [1, y², x y, x xᵀ]."""
    p = x.shape[0] - 1
    y = x[0]
    out[0] = 1.0
    out[1] = y * y
    for i in range(p):
        out[2 + i] = x[1 + i] * y
        for j in range(p):
            out[2 + p + i * p + j] = x[1 + i] * x[1 + j]


@jit(_nrt=True)
def _posterior(stats, params, lower, m_n):
    """Fill the lower Cholesky factor R of Λ_n (Λ_n = R Rᵀ) and m_n; return ``(a_n, b_n, log|Λ_n|)``."""
    p = int(params[0]) - 1
    zeta = coarsening(params)
    lam = np.empty((p, p))
    rhs = np.empty(p)
    for i in range(p):
        rhs[i] = params[4 + p + p * p + i] + zeta * stats[2 + i]
        for j in range(p):
            lam[i, j] = params[1 + p + i * p + j] + zeta * stats[2 + p + i * p + j]
    log_det = _cholesky(lam, lower)
    half = np.empty(p)  # R⁻¹ rhs (forward), then m_n = R⁻ᵀ half (backward)
    quad = 0.0
    for i in range(p):
        s = rhs[i]
        for k in range(i):
            s -= lower[i, k] * half[k]
        half[i] = s / lower[i, i]
        quad += half[i] * half[i]
    for i in range(p - 1, -1, -1):
        s = half[i]
        for k in range(i + 1, p):
            s -= lower[k, i] * m_n[k]
        m_n[i] = s / lower[i, i]
    a_n = params[1 + p + p * p] + 0.5 * zeta * stats[0]
    b_n = params[2 + p + p * p] + 0.5 * (zeta * stats[1] + params[4 + 2 * p + p * p] - quad)
    return a_n, b_n, log_det


@jit(_nrt=True)
def log_marginal(stats, params):
    """Exact log marginal likelihood of the responses given the covariates (module docstring); 0 when empty."""
    if stats[0] == 0.0:
        return 0.0
    p = int(params[0]) - 1
    zeta = coarsening(params)
    a0, b0 = params[1 + p + p * p], params[2 + p + p * p]
    a_n, b_n, log_det = _posterior(stats, params, np.empty((p, p)), np.empty(p))
    total = -0.5 * zeta * stats[0] * _LOG_2PI + 0.5 * params[3 + p + p * p] - 0.5 * log_det
    return total + a0 * math.log(b0) - a_n * math.log(b_n) + math.lgamma(a_n) - math.lgamma(a0)


@jit(_nrt=True)
def fill_cache(stats, params, out):
    """Predictive constants (module docstring): c, e, 1/(2 b_n), m_n and K = R⁻¹."""
    p = int(params[0]) - 1
    zeta = coarsening(params)
    lower = np.empty((p, p))
    m_n = np.empty(p)
    a_n, b_n, _ = _posterior(stats, params, lower, m_n)
    inverse = np.empty((p, p))
    _lower_inverse(lower, inverse)
    out[0] = -0.5 * zeta * (_LOG_2PI + math.log(b_n)) + math.lgamma(a_n + 0.5 * zeta) - math.lgamma(a_n)
    out[1] = -(a_n + 0.5 * zeta)
    out[2] = 0.5 / b_n
    for i in range(p):
        out[3 + i] = m_n[i]
        for j in range(p):
            out[3 + p + i * p + j] = inverse[i, j]


@jit(inline="always")
def log_predictive(cache, x, params):
    """log p(y | x, stats) = c − ½ log1p(ζ h) + e log1p(ζ r² / (2 b_n (1 + ζ h))), h = |K x|², r = y − xᵀm_n."""
    p = x.shape[0] - 1
    zeta = coarsening(params)
    h = 0.0
    fitted = 0.0
    for i in range(p):
        row = 3 + p + i * p
        v = 0.0
        for k in range(i + 1):
            v += cache[row + k] * x[1 + k]
        h += v * v
        fitted += x[1 + i] * cache[3 + i]
    residual = x[0] - fitted
    spread = 1.0 + zeta * h
    return cache[0] - 0.5 * math.log(spread) + cache[1] * math.log1p(zeta * residual * residual * cache[2] / spread)


@jit(_nrt=True)
def draw_params(stats, params, rng, out):
    """Draw τ ~ Gamma(a_n, rate b_n), then β ~ N(m_n, Λ_n⁻¹/τ) as m_n + R⁻ᵀ ε/√τ; store the log normaliser."""
    p = int(params[0]) - 1
    lower = np.empty((p, p))
    m_n = np.empty(p)
    a_n, b_n, _ = _posterior(stats, params, lower, m_n)
    log_tau = log_gamma_variate(rng, a_n) - math.log(b_n)
    scale = math.exp(-0.5 * log_tau)
    noise = np.empty(p)
    for i in range(p):
        noise[i] = rng.standard_normal()
    for i in range(p - 1, -1, -1):  # solve Rᵀ w = ε
        s = noise[i]
        for k in range(i + 1, p):
            s -= lower[k, i] * noise[k]
        noise[i] = s / lower[i, i]
        out[i] = m_n[i] + scale * noise[i]
    out[p] = math.exp(log_tau)
    out[p + 1] = 0.5 * (log_tau - _LOG_2PI)


@jit(inline="always")
def log_density(theta, x, params):
    """ζ log N(y | xᵀβ, 1/τ) = ζ (½ log(τ/2π) − ½ τ (y − xᵀβ)²)."""
    p = x.shape[0] - 1
    residual = x[0]
    for j in range(p):
        residual -= x[1 + j] * theta[j]
    return coarsening(params) * (theta[p + 1] - 0.5 * theta[p] * residual * residual)


@jit(_nrt=True)
def log_densities(theta, x, params, out):
    """Block form of :func:`log_density` for the items ``x`` (m, d) and the parameter rows ``theta`` (K, p + 2):
    the fitted values ``X Bᵀ`` of every item under every cluster's β as one matrix product, then
    ``out[i, k] = ζ (c_k − ½ τ_k (y_i − x_iᵀβ_k)²)``.

    Rounding: each fitted value is within e = γ_{p+1} Σ_j |x_ij β_kj| of its
    exact value in any summation order (``_common.rounding``), the residual
    within e + u|r| more, so r² within (2|r| + e')e' + γ_2 r² with e' = e + u|r|;
    returns twice ½ τ times that plus the rounding of ``c − ½ τ r²``, each
    quantity maximised over the block, times ζ (``_common.coarsen_block``).
    """
    m, d = x.shape
    p = d - 1
    k = theta.shape[0]
    covariates = np.empty((m, p))
    top_y = 0.0
    top_x = 0.0
    for i in range(m):
        norm = 0.0
        for j in range(p):
            covariates[i, j] = x[i, 1 + j]
            norm += abs(x[i, 1 + j])
        top_x = max(top_x, norm)
        top_y = max(top_y, abs(x[i, 0]))
    coefficients = np.empty((k, p))
    top_beta = 0.0
    top_tau = 0.0
    top_constant = 0.0
    for c in range(k):
        for j in range(p):
            coefficients[c, j] = theta[c, j]
            top_beta = max(top_beta, abs(theta[c, j]))
        top_tau = max(top_tau, theta[c, p])
        top_constant = max(top_constant, abs(theta[c, p + 1]))
    products_into(covariates, coefficients, out)
    top_residual = 0.0
    for i in range(m):
        for c in range(k):
            residual = x[i, 0] - out[i, c]
            top_residual = max(top_residual, abs(residual))
            out[i, c] = theta[c, p + 1] - 0.5 * theta[c, p] * residual * residual
    error = rounding(p + 1.0) * top_x * top_beta + UNIT_ROUNDOFF * (top_residual + top_y)
    square = (2.0 * top_residual + error) * error + rounding(2.0) * top_residual * top_residual
    bound = 2.0 * (0.5 * top_tau * square + 2.0 * UNIT_ROUNDOFF * (top_constant + 0.5 * top_tau * top_residual**2))
    return coarsen_block(out, bound * (1.0 + 8.0 * UNIT_ROUNDOFF), coarsening(params))


def draw_data(theta, labels, data, params, rng):
    """Replicated items: ``y_rep,i ~ N(x_iᵀβ, 1/τ)`` of cluster ``labels[i]``, the covariates of ``data[i]`` kept.

    Python (numpy): ``theta`` is (K, p + 2) (``draw_params`` layout); returns
    the (len(labels), d) rows ``[y_rep, x]``.
    """
    p = data.shape[1] - 1
    covariates = data[:, 1:]
    mean = np.einsum("ij,ij->i", covariates, theta[labels, :p])
    response = rng.normal(mean, 1.0 / np.sqrt(theta[labels, p]))
    return np.column_stack([response, covariates])


def _least_squares(x):
    """The pooled fit of the rows ``x = [y, X]``: ``(β̂, s², G)`` with ``G = XᵀX/n`` made positive definite
    (a relative 1e-6 ridge, 1 on a zero diagonal) and ``s²`` the residual variance (at least 1e-12 of y's)."""
    y, covariates = x[:, 0], x[:, 1:]
    n, p = covariates.shape
    gram = covariates.T @ covariates / n
    diagonal = np.diag(gram)
    gram = gram + np.diag(np.where(diagonal > 0, 1e-6 * diagonal, 1.0))
    beta = np.linalg.solve(gram, covariates.T @ y / n)
    residuals = y - covariates @ beta
    variance = residuals @ residuals / max(n - p, 1)
    return beta, max(variance, 1e-12 * max(float(np.var(y)), 1e-300), 1e-300), gram


def default_hyperparameters(x):
    """For the rows ``x = [y, X]`` (n, p + 1): the pooled least-squares fit β̂ and its residual variance s²::

        m0 = β̂,   Λ0 = 0.1 XᵀX / n,   a0 = 1.5,   b0 = s² / 2,

    a cluster's coefficients spread about the pooled fit with the information
    of 0.1 items (the Gaussian families' ``kappa0 = 0.1``; Zellner's g-prior
    with g = 10 n), and its noise variance has prior mean ``b0/(a0 − 1) = s²``.
    """
    beta, variance, gram = _least_squares(np.asarray(x, dtype=float))
    return {"m0": beta, "Lambda0": KAPPA0 * gram, "a0": 1.5, "b0": variance / 2.0}


def default_hyperpriors(x):
    """The learned default for the rows ``x = [y, X]``: ``kappa0``, ``a0`` and a scale of ``b0`` get log-normal
    priors, as for the Normal-Gamma family::

        m0 = β̂,   Λ0 = kappa0 XᵀX / n,   kappa0 ~ LogNormal(log 0.1, 1),
        a0 ~ LogNormal(log 1.5, 1),   b0 = scale · a0 · s² / 3,   scale ~ LogNormal(0, 1),

    so that ``b0 / a0`` is ``scale · s² / 3`` whatever ``a0``; at the medians the fixed default.
    """
    beta, variance, gram = _least_squares(np.asarray(x, dtype=float))

    def assemble(kappa0, a0, scale):
        return {"m0": beta, "Lambda0": kappa0 * gram, "a0": a0, "b0": scale * a0 * variance / 3.0}

    return Hyperpriors((Learned("kappa0", KAPPA0), Learned("a0", 1.5), Learned("scale", 1.0)), assemble)


def _derived(params):
    """``[log|Λ0|, Λ0 m0, m0ᵀΛ0 m0]`` of packed ``params`` (appended to them: every marginal reads them)."""
    p = int(params[0]) - 1
    m0 = params[1 : 1 + p]
    lam = params[1 + p : 1 + p + p * p].reshape(p, p)
    weighted = lam @ m0
    return np.concatenate([[2.0 * np.sum(np.log(np.diag(np.linalg.cholesky(lam))))], weighted, [m0 @ weighted]])


SPEC = FamilySpec(
    kind=ADDITIVE,
    data=REAL,
    hypers=(
        Hyper("m0", COEFFICIENTS, default=0.0),
        Hyper("Lambda0", COEFFICIENT_MATRIX, default=lambda d, data: np.eye(d - 1)),
        Hyper("a0", SCALAR, lower=0.0, default=1.0),
        Hyper("b0", SCALAR, lower=0.0, default=1.0),
        Hyper("covariates", COVARIATES),
    ),
    defaults=default_hyperparameters,
    derived=_derived,
    hyperpriors=default_hyperpriors,
)


# --------------------------------------------------------------------------- the PyMC model's log density (PyTensor)

GATHER_OCCUPIED = True
"""Evaluate the log marginal on the occupied rows only (batched solves and determinants over clusters)."""


def graph_cluster_stats(partition, value, d):
    """Every cluster's ``[Σ v, Σ v vᵀ]`` for the rows ``v = [y, x]`` (``families._cluster_moments``: one matrix
    product per cluster); ``yᵀy``, ``Xᵀy`` and ``XᵀX`` are blocks of ``Σ v vᵀ``."""
    from ._cluster_moments import cluster_moments

    return cluster_moments(partition, value)


def graph_cluster_log_marginal(stats, counts, d, m0, Lambda0, a0, b0, covariates):
    """The module docstring's log marginal for every row (batched over clusters; counts may be coarsened)."""
    import pytensor.tensor as pt

    from .normal_inverse_wishart import _graph_log_det

    k = stats.shape[0]
    second = stats[:, d:].reshape((k, d, d))
    yy, xy, xx = second[:, 0, 0], second[:, 1:, 0], second[:, 1:, 1:]
    lam_n = Lambda0 + xx
    rhs = pt.dot(Lambda0, m0) + xy
    m_n = pt.linalg.solve(lam_n, rhs[:, :, None], assume_a="pos")[:, :, 0]
    b_n = b0 + 0.5 * (yy + pt.dot(m0, pt.dot(Lambda0, m0)) - (rhs * m_n).sum(axis=1))
    a_n = a0 + 0.5 * counts
    return (
        -0.5 * counts * _LOG_2PI + 0.5 * _graph_log_det(Lambda0) - 0.5 * _graph_log_det(lam_n)
        + a0 * pt.log(b0) - a_n * pt.log(b_n) + pt.gammaln(a_n) - pt.gammaln(a0)
    )


def graph_support_point(partition, d, m0, Lambda0, a0, b0, covariates):
    import pytensor.tensor as pt

    return pt.concatenate([pt.dot(covariates, m0)[:, None], covariates], axis=1)


def simulate(rng, inverse, n_clusters, d, m0, Lambda0, a0, b0, covariates):
    """``τ_k ~ Gamma(a0, b0)``, ``β_k ~ N(m0, Λ0⁻¹/τ_k)``, then ``y_i ~ N(x_iᵀβ, 1/τ)``; rows ``[y, x]`` (numpy)."""
    p = d - 1
    tau = rng.gamma(a0, 1.0 / b0, size=n_clusters)
    chol = np.linalg.cholesky(np.linalg.inv(np.atleast_2d(Lambda0)))
    beta = m0 + (rng.standard_normal((n_clusters, p)) @ chol.T) / np.sqrt(tau)[:, None]
    covariates = np.asarray(covariates, dtype=float)
    mean = np.einsum("ij,ij->i", covariates, beta[inverse])
    return np.column_stack([rng.normal(mean, 1.0 / np.sqrt(tau[inverse])), covariates])


DOC = r"""Clusterwise linear regression: a Normal linear model per cluster with a Normal-inverse-gamma prior.

    .. math::

        \sigma^2_k \sim \operatorname{InvGamma}(a_0, b_0), \quad
        \beta_k \mid \sigma^2_k \sim N(m_0, \sigma^2_k \Lambda_0^{-1}), \quad
        y_i \mid z_i = k \sim N(x_i^\top \beta_k, \sigma^2_k),

        \log p(y \mid X, z) = \sum_{k:\, m_k > 0} \Big[ -\tfrac{m_k}{2}\log 2\pi
            + \tfrac12 \log|\Lambda_0| - \tfrac12 \log|\Lambda_n|
            + a_0 \log b_0 - a_n \log b_n + \log\Gamma(a_n) - \log\Gamma(a_0) \Big],

    with :math:`\Lambda_n = \Lambda_0 + X_k^\top X_k`,
    :math:`m_n = \Lambda_n^{-1}(\Lambda_0 m_0 + X_k^\top y_k)`,
    :math:`a_n = a_0 + m_k/2`,
    :math:`b_n = b_0 + \tfrac12 (y_k^\top y_k + m_0^\top \Lambda_0 m_0 - m_n^\top \Lambda_n m_n)`.
    The cluster statistics ``XᵀX``, ``Xᵀy``, ``yᵀy`` and ``n`` are additive, so
    every step that samples conjugate mixtures samples this one.

    The design matrix ``covariates`` is data, like ``observed``: include a
    column of ones for an intercept per cluster.  The observed variable's
    value is ``np.column_stack([y, covariates])`` (what the samplers and
    ``posterior_predictive`` see: replicated rows keep their covariates).
    ``default_hyperparameters(y, covariates=X)`` centres every cluster's
    coefficients on the pooled least-squares fit, with the information of
    0.1 items (``Lambda0 = 0.1 XᵀX / n``) and a noise variance of prior mean
    the pooled residual variance.

    Parameters
    ----------
    name : str
    partition : integer vector of length n
    m0 : scalar or length-p
        Prior mean of each cluster's coefficients.
    Lambda0 : (p, p) symmetric positive definite
        Prior precision of the coefficients in units of the noise variance.
    a0, b0 : scalar, > 0
        Inverse-gamma prior of each cluster's noise variance.
    covariates : array (n, p)
        The design matrix (constant data).
    observed : array (n,) or (n, 1)
        The responses.

    Examples
    --------
    >>> import numpy as np, pymc as pm, pytensor.tensor as pt
    >>> import pymc_partitions as pmp
    >>> X = np.column_stack([np.ones(4), [0.0, 1.0, 2.0, 3.0]])
    >>> y = np.array([0.1, 0.9, 6.2, 8.8])
    >>> with pm.Model() as model:
    ...     z = pt.as_tensor(np.array([0, 0, 1, 1]))
    ...     fit = pmp.NormalLinearRegressionMixture("y", partition=z, m0=0.0, Lambda0=np.eye(2), a0=2.0, b0=1.0,
    ...                                             covariates=X, observed=y)
    >>> round(float(model.compile_logp()({})), 4)
    -9.5241
    """
