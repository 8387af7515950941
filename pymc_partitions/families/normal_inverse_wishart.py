"""Normal-Inverse-Wishart family: full-covariance Gaussian clusters.

Model for the items i of one cluster (x_i ∈ R^d)::

    Σ ~ InvWishart(nu0, Psi0)   (density ∝ |Σ|^{−(nu0+d+1)/2} exp(−½ tr(Psi0 Σ⁻¹))),
    μ | Σ ~ N(mu0, Σ/kappa0),   x_i | μ, Σ ~ N(μ, Σ).

Layouts (float64 vectors; matrices row-major, d² entries)::

    params = [d, mu0 (d), kappa0, nu0, Psi0 (d²), log|Psi0|]     4 + d + d²
    stats  = [n, Σ_i x_i (d), Σ_i x_i x_iᵀ (d²)]                1 + d + d²
    cache  = [c, e, loc (d), K (d²)]                             2 + d + d²
    theta  = [μ (d), Λ (d²), log|Λ| − (d/2) log 2π]              1 + d + d²

where Λ is the lower-triangular inverse Cholesky factor of Σ (Σ⁻¹ = ΛᵀΛ).

Conjugate update (Murphy 2007, sec. 9), with D = Σ_i (x_i − mu0) and
Q = Σ_i (x_i − mu0)(x_i − mu0)ᵀ::

    κ_n = κ0 + n,   ν_n = ν0 + n,   μ_n = mu0 + D/κ_n,   Ψ_n = Psi0 + Q − D Dᵀ/κ_n,
    log p(x_1..x_n) = −(n d/2) log π + log Γ_d(ν_n/2) − log Γ_d(ν0/2)
                      + (ν0/2) log|Psi0| − (ν_n/2) log|Ψ_n| + (d/2) log(κ0/κ_n).

The model is invariant under moving the data and mu0 together (x → x − o,
mu0 → mu0 − o): mu0 is the spec's location, which
``families.shift_params`` moves when the kernels work relative to an origin
(``state.make_model``), so that Q − D Dᵀ/κ_n sums centred values.

The predictive of one more item is multivariate t with ν_n − d + 1 degrees of
freedom, location μ_n and shape M/(ν_n − d + 1), M = Ψ_n (κ_n + 1)/κ_n. With
K = L⁻¹ for the Cholesky factor M = L Lᵀ::

    log p(x | stats) = c + e log1p(|K (x − μ_n)|²),   e = −(ν_n + 1)/2,
    c = log Γ((ν_n + 1)/2) − log Γ((ν_n − d + 1)/2) − (d/2) log π − ½ log|M|.

Caching the inverse factor K makes the predictive one O(d²) triangular
matrix-vector product, with no division or temporary array.

Coarsened (ζ < 1, ``families``, "Coarsening"): n, Σx and Σxxᵀ count ζ each in
the update above; one more item of weight ζ gives Ψ' = Ψ_n + (ζ κ_n/(κ_n + ζ))
(x − μ_n)(x − μ_n)ᵀ, so the predictive keeps the form c + e log1p(|K (x − μ_n)|²)
with M = Ψ_n (κ_n + ζ)/(ζ κ_n), e = −(ν_n + ζ)/2 and::

    c = Σ_{j<d} [log Γ((ν_n + ζ − j)/2) − log Γ((ν_n − j)/2)] − (ζ d/2) log π
        − (ζ/2) log|Ψ_n| + (d/2) log(κ_n/(κ_n + ζ)).
"""

import math

import numpy as np

from pymc_partitions._dispatch import ADDITIVE
from pymc_partitions._jit import jit

from ._common import KAPPA0, UNIT_ROUNDOFF, coarsen_block, coarsening, covariance, log_gamma_variate, rounding, tile_shape
from .spec import FEATURE, MATRIX, REAL, SCALAR, FamilySpec, Hyper, Hyperpriors, Learned

_LOG_PI = math.log(math.pi)
_LOG_2PI = math.log(2.0 * math.pi)


@jit
def stat_size(d):
    """Length of a statistics row: n, the sum (d) and the sum of outer products (d²)."""
    return 1 + d + d * d


@jit
def cache_size(d):
    """Length of a predictive cache: c, e, location (d), inverse Cholesky factor (d²)."""
    return 2 + d + d * d


@jit
def param_size(d):
    """Length of θ: mean (d), inverse Cholesky factor of Σ (d²), log normaliser."""
    return 1 + d + d * d


@jit
def item_stats(x, out):
    """Statistics of the single item ``x``: [1, x, x xᵀ]."""
    d = x.shape[0]
    out[0] = 1.0
    for i in range(d):
        out[1 + i] = x[i]
        for j in range(d):
            out[1 + d + i * d + j] = x[i] * x[j]


@jit
def _cholesky(a, out):
    """Lower Cholesky factor L of the SPD matrix ``a`` (a = L Lᵀ) into ``out``; returns log|a|."""
    d = a.shape[0]
    log_det = 0.0
    for j in range(d):
        s = a[j, j]
        for k in range(j):
            s -= out[j, k] * out[j, k]
        pivot = math.sqrt(s)
        out[j, j] = pivot
        log_det += 2.0 * math.log(pivot)
        for i in range(j):
            out[i, j] = 0.0
        for i in range(j + 1, d):
            s = a[i, j]
            for k in range(j):
                s -= out[i, k] * out[j, k]
            out[i, j] = s / pivot
    return log_det


@jit
def _lower_inverse(lower, out):
    """Inverse of a lower-triangular matrix into ``out`` (forward substitution, column by column)."""
    d = lower.shape[0]
    for j in range(d):
        for i in range(j):
            out[i, j] = 0.0
        out[j, j] = 1.0 / lower[j, j]
        for i in range(j + 1, d):
            s = 0.0
            for k in range(j, i):
                s -= lower[i, k] * out[k, j]
            out[i, j] = s / lower[i, i]


@jit(_nrt=True)
def _posterior(stats, params, mu_n, psi_n):
    """Fill μ_n (d) and Ψ_n (d × d); return (κ_n, ν_n) (the statistics weighted by ζ)."""
    d = int(params[0])
    zeta = coarsening(params)
    n = zeta * stats[0]
    kappa_n = params[1 + d] + n
    deviation = np.empty(d)
    for i in range(d):
        deviation[i] = zeta * stats[1 + i] - n * params[1 + i]
        mu_n[i] = params[1 + i] + deviation[i] / kappa_n
    for i in range(d):
        mu_i = params[1 + i]
        for j in range(d):
            mu_j = params[1 + j]
            scatter = (
                zeta * stats[1 + d + i * d + j] - mu_i * (zeta * stats[1 + j]) - (zeta * stats[1 + i]) * mu_j
                + n * mu_i * mu_j
            )
            psi_n[i, j] = params[3 + d + i * d + j] + scatter - deviation[i] * deviation[j] / kappa_n
    return kappa_n, params[2 + d] + n


@jit(_nrt=True)
def log_marginal(stats, params):
    """Exact log marginal likelihood (module docstring); 0 for an empty cluster."""
    if stats[0] == 0.0:
        return 0.0
    n = coarsening(params) * stats[0]
    d = int(params[0])
    kappa0 = params[1 + d]
    nu0 = params[2 + d]
    mu_n = np.empty(d)
    psi_n = np.empty((d, d))
    kappa_n, nu_n = _posterior(stats, params, mu_n, psi_n)
    log_det_n = _cholesky(psi_n, np.empty((d, d)))
    total = -0.5 * n * d * _LOG_PI + 0.5 * d * math.log(kappa0 / kappa_n)
    total += 0.5 * nu0 * params[3 + d + d * d] - 0.5 * nu_n * log_det_n
    for j in range(d):
        total += math.lgamma(0.5 * (nu_n - j)) - math.lgamma(0.5 * (nu0 - j))
    return total


@jit(_nrt=True)
def fill_cache(stats, params, out):
    """Multivariate-t predictive constants: c, e, location μ_n and K = L⁻¹ with L Lᵀ = M.

    Allocates its d x d work arrays, so it asks for reference counting itself:
    the kernels compiled without it (``kernels.clusters.update_items``) would
    otherwise pass that setting on.
    """
    d = int(params[0])
    zeta = coarsening(params)
    mu_n = np.empty(d)
    scale = np.empty((d, d))
    kappa_n, nu_n = _posterior(stats, params, mu_n, scale)
    if zeta == 1.0:
        scale *= (kappa_n + 1.0) / kappa_n
    else:
        factor = (kappa_n + zeta) / (zeta * kappa_n)
        scale *= factor
    lower = np.empty((d, d))
    log_det = _cholesky(scale, lower)
    inverse = np.empty((d, d))
    _lower_inverse(lower, inverse)
    if zeta == 1.0:
        out[0] = math.lgamma(0.5 * (nu_n + 1.0)) - math.lgamma(0.5 * (nu_n - d + 1.0)) - 0.5 * d * _LOG_PI - 0.5 * log_det
    else:  # module docstring, "Coarsened": log|Ψ_n| = log|M| − d log(factor)
        c = -0.5 * zeta * (d * _LOG_PI + log_det - d * math.log(factor)) + 0.5 * d * math.log(kappa_n / (kappa_n + zeta))
        for j in range(d):
            c += math.lgamma(0.5 * (nu_n + zeta - j)) - math.lgamma(0.5 * (nu_n - j))
        out[0] = c
    out[1] = -0.5 * (nu_n + zeta)
    for i in range(d):
        out[2 + i] = mu_n[i]
        for j in range(d):
            out[2 + d + i * d + j] = inverse[i, j]


@jit(inline="always")
def log_predictive(cache, x, params):
    """log p(x | stats) = c + e log1p(|K (x − loc)|²), K lower triangular."""
    d = x.shape[0]
    squared = 0.0
    for i in range(d):
        row = 2 + d + i * d
        y = 0.0
        for k in range(i + 1):
            y += cache[row + k] * (x[k] - cache[2 + k])
        squared += y * y
    return cache[0] + cache[1] * math.log1p(squared)


@jit(_nrt=True)
def draw_params(stats, params, rng, out):
    """Draw Σ ~ InvWishart(ν_n, Ψ_n), then μ ~ N(μ_n, Σ/κ_n); store (μ, Λ, log normaliser).

    Bartlett decomposition: with Ψ_n = U Uᵀ and T lower triangular,
    T_ii² ~ χ²(ν_n − d + 1 + i) (i = 0..d−1), T_ij ~ N(0, 1) below the diagonal,
    Σ⁻¹ = U⁻ᵀ Tᵀ T U⁻¹ ~ Wishart(ν_n, Ψ_n⁻¹), so Λ = T U⁻¹ and μ = μ_n + Λ⁻¹ z/√κ_n.
    """
    d = int(params[0])
    mu_n = np.empty(d)
    psi_n = np.empty((d, d))
    kappa_n, nu_n = _posterior(stats, params, mu_n, psi_n)
    factor = np.empty((d, d))
    _cholesky(psi_n, factor)
    factor_inverse = np.empty((d, d))
    _lower_inverse(factor, factor_inverse)
    bartlett = np.zeros((d, d))
    for i in range(d):
        bartlett[i, i] = math.sqrt(2.0 * math.exp(log_gamma_variate(rng, 0.5 * (nu_n - d + 1.0 + i))))
        for j in range(i):
            bartlett[i, j] = rng.standard_normal()
    log_norm = -0.5 * d * _LOG_2PI
    shift = np.empty(d)
    for i in range(d):
        for j in range(d):
            s = 0.0
            for k in range(j, i + 1):
                s += bartlett[i, k] * factor_inverse[k, j]
            out[d + i * d + j] = s
        log_norm += math.log(out[d + i * d + i])
        s = rng.standard_normal() / math.sqrt(kappa_n)
        for k in range(i):
            s -= out[d + i * d + k] * shift[k]
        shift[i] = s / out[d + i * d + i]
        out[i] = mu_n[i] + shift[i]
    out[d + d * d] = log_norm


@jit(inline="always")
def log_density(theta, x, params):
    """ζ log N(x | μ, Σ) = ζ (log|Λ| − (d/2) log 2π − ½ |Λ (x − μ)|²)."""
    d = x.shape[0]
    squared = 0.0
    for i in range(d):
        row = d + i * d
        y = 0.0
        for k in range(i + 1):
            y += theta[row + k] * (x[k] - theta[k])
        squared += y * y
    return coarsening(params) * (theta[d + d * d] - 0.5 * squared)


@jit(_nrt=True)
def log_densities(theta, x, params, out):
    """Block form of :func:`log_density` for the items ``x`` (m, d) and the parameter rows ``theta`` (K, 1 + d + d²):
    the items whitened by every cluster at once.

    With y_ik = Λ_k (x_i − μ_k) = Λ_k x_i − Λ_k μ_k::

        out[i, k] = log|Λ_k| − (d/2) log 2π − ½ |Λ_k x_i − Λ_k μ_k|²,

    where the Λ_k x_i for all k are one stacked matrix product
    ``X [Λ_1ᵀ … Λ_Kᵀ]`` (in tiles of ``_common.tile_shape``: items by
    clusters, each product on the calling thread) and Λ_k μ_k is computed
    once per cluster; then one pass of row norms.  Only the whitened mean is
    subtracted after the product, so the error grows with √R, not R (R the
    squared distance of the cluster from the origin in its standard
    deviations), unlike an expanded quadratic form.

    Rounding: with e = γ_{d+2} ‖Λ_k‖_F (‖x_i‖ + ‖μ_k‖) + u ‖y‖ (a bound on
    the error of each computed y, here and in the loop), q = |y|² is within
    (1 + γ_d)(2 e ‖y‖ + e²) + γ_d q of its exact value; returns twice that
    halved (both evaluations' errors) plus the rounding of ``c − ½ q``,
    with every norm maximised over the block (``_common.rounding``).
    """
    m, d = x.shape
    k = theta.shape[0]
    factors = np.zeros((k * d, d))  # row c d + r: row r of Λ_c (its upper triangle zero)
    shifts = np.empty(k * d)  # Λ_c μ_c
    top_factor = 0.0
    top_mean = 0.0
    top_constant = 0.0
    for c in range(k):
        frobenius = 0.0
        mean = 0.0
        for r in range(d):
            shift = 0.0
            for j in range(r + 1):
                value = theta[c, d + r * d + j]
                factors[c * d + r, j] = value
                shift += value * theta[c, j]
                frobenius += value * value
            shifts[c * d + r] = shift
            mean += theta[c, r] * theta[c, r]
        top_factor = max(top_factor, frobenius)
        top_mean = max(top_mean, mean)
        top_constant = max(top_constant, abs(theta[c, d + d * d]))
    top_norm = 0.0
    for i in range(m):
        norm = 0.0
        for j in range(d):
            norm += x[i, j] * x[i, j]
        top_norm = max(top_norm, norm)
    top_square = 0.0
    if m > 0 and k > 0 and d > 0:
        rows, cols = tile_shape(m, k, d * d)
        scratch = np.empty(rows * cols * d)
        for c0 in range(0, k, cols):
            c1 = min(k, c0 + cols)
            for r0 in range(0, m, rows):
                r1 = min(m, r0 + rows)
                width = (c1 - c0) * d
                tile = scratch[: (r1 - r0) * width].reshape((r1 - r0, width))
                np.dot(x[r0:r1], factors[c0 * d : c1 * d].T, tile)
                for i in range(r1 - r0):
                    for c in range(c0, c1):
                        square = 0.0
                        for r in range(d):
                            y = tile[i, (c - c0) * d + r] - shifts[c * d + r]
                            square += y * y
                        out[r0 + i, c] = theta[c, d + d * d] - 0.5 * square
                        top_square = max(top_square, square)
    else:
        for i in range(m):
            for c in range(k):
                out[i, c] = theta[c, d + d * d]
    gamma = rounding(d + 2.0)
    products = gamma * math.sqrt(top_factor) * (math.sqrt(top_norm) + math.sqrt(top_mean))
    length = math.sqrt(top_square) * (1.0 + gamma) + products  # bounds the exact ‖y‖
    error = (products + UNIT_ROUNDOFF * length) * (1.0 + 4.0 * UNIT_ROUNDOFF)
    square_error = (1.0 + gamma) * (2.0 * error * length + error * error) + gamma * top_square
    bound = 2.0 * (0.5 * square_error + 2.0 * UNIT_ROUNDOFF * (top_constant + 0.5 * top_square)) * (1.0 + 8.0 * UNIT_ROUNDOFF)
    return coarsen_block(out, bound, coarsening(params))


def draw_data(theta, labels, data, params, rng):
    """Replicated items: row i drawn from p(x | θ_{labels[i]}), x = μ + Λ⁻¹ ε with ε ~ N(0, I).

    Σ⁻¹ = ΛᵀΛ, so Cov(Λ⁻¹ ε) = (ΛᵀΛ)⁻¹ = Σ.  Python (numpy), vectorised over
    items: ``theta`` is (K, 1 + d + d²), one drawn θ per cluster
    (``draw_params`` layout); ``data`` (the observed rows) only gives the
    shape.  Returns a float64 (len(labels), d) array.
    """
    d = data.shape[1]
    factor = np.linalg.inv(theta[:, d : d + d * d].reshape(-1, d, d))  # Λ⁻¹ of each cluster
    noise = rng.standard_normal(data.shape)
    return theta[labels, :d] + np.einsum("iab,ib->ia", factor[labels], noise)


def default_hyperparameters(x):
    """``mu0 = m``, ``kappa0 = 0.1``, ``nu0 = d + 2``, ``Psi0 = S`` for data ``x`` (n, d) with column means ``m``
    and covariance ``S``: ``nu0 = d + 2`` is the smallest whole number of degrees of freedom for which the prior
    mean of a cluster's covariance, ``Psi0 / (nu0 − d − 1)``, exists; it is then the data's covariance."""
    d = x.shape[1]
    return {"mu0": x.mean(axis=0), "kappa0": KAPPA0, "nu0": d + 2.0, "Psi0": covariance(x)}


def default_hyperpriors(x):
    """The learned default for data ``x`` (n, d): ``kappa0``, ``nu0`` and a scale of ``Psi0`` get log-normal priors.

    With ``m`` the column means and ``D = diag(S)`` the diagonal of the data's covariance::

        mu0 = m,   kappa0 ~ LogNormal(log 0.1, 1),   nu0 = d − 1 + e,  e ~ LogNormal(log 3, 1),
        Psi0 = scale · nu0 / (d + 2) · D,   scale ~ LogNormal(0, 1).

    ``Psi0 / nu0`` is the inverse of the prior mean of a cluster's precision,
    ``E[Σ⁻¹]⁻¹ = scale · D / (d + 2)``, whatever ``nu0``: ``scale`` sets the
    size of a cluster and ``nu0`` how closely the clusters' covariances follow
    it (a large ``nu0`` shares one shape between clusters), nearly independent
    directions for the samplers.  At the medians (``scale = 1``, ``nu0 = d + 2``)
    ``Psi0 = D``: the fixed default's ``Psi0 = S`` without its off-diagonal
    terms, which in data with groups come mostly from the differences between
    the groups, not from the shape of one (``docs/defaults.md``).  Shifting or
    rescaling a feature changes ``m`` and ``D`` with it and the model's fit not
    at all.
    """
    d = x.shape[1]
    fixed = default_hyperparameters(x)
    diagonal = np.diag(np.diag(fixed["Psi0"]))

    def assemble(kappa0, nu0, scale):
        return {"mu0": fixed["mu0"], "kappa0": kappa0, "nu0": nu0, "Psi0": scale * nu0 / (d + 2.0) * diagonal}

    learned = (Learned("kappa0", KAPPA0), Learned("nu0", d + 2.0, lower=d - 1.0), Learned("scale", 1.0))
    return Hyperpriors(learned, assemble)


def _log_det(params):
    """``log|Psi0|`` of packed ``params`` (appended to them: every marginal reads it)."""
    d = int(params[0])
    psi = params[3 + d : 3 + d + d * d].reshape(d, d)
    return 2.0 * np.sum(np.log(np.diag(np.linalg.cholesky(psi))))


SPEC = FamilySpec(
    kind=ADDITIVE,
    data=REAL,
    hypers=(
        Hyper("mu0", FEATURE, default=0.0, location=True),
        Hyper("kappa0", SCALAR, lower=0.0, default=1.0),
        Hyper("nu0", SCALAR, lower=-1.0, lower_plus_d=True, default=lambda d, data: d + 1.0),
        Hyper("Psi0", MATRIX, default=lambda d, data: np.eye(d)),
    ),
    defaults=default_hyperparameters,
    derived=_log_det,
    hyperpriors=default_hyperpriors,
)


# --------------------------------------------------------------------------- the PyMC model's log density (PyTensor)

GATHER_OCCUPIED = True
"""Evaluate the log marginal on the occupied rows only: its batched Cholesky loops over the rows in Python."""


def graph_cluster_stats(partition, value, d):
    """Every cluster's statistics ``[Σ x, Σ x xᵀ]`` (``K x (d + d²)``), the second moments as one matrix product
    per cluster (``families._cluster_moments``): never the ``n x d²`` per-item outer products."""
    from ._cluster_moments import cluster_moments

    return cluster_moments(partition, value)


def graph_cluster_log_marginal(stats, counts, d, mu0, kappa0, nu0, psi0):
    """The module docstring's log marginal for every row, with ``Ψ_n`` from the scatter about the cluster mean."""
    import pytensor.tensor as pt

    n = stats.shape[0]  # number of rows evaluated (occupied clusters)
    total = stats[:, :d]
    squares = stats[:, d:].reshape((n, d, d))
    m = counts
    mean = total / pt.switch(pt.gt(m, 0.0), m, 1.0)[:, None]  # m may be a coarsened count below 1
    dev = mean - mu0
    kappa_n = kappa0 + m
    nu_n = nu0 + m
    scatter = squares - total[:, :, None] * mean[:, None, :]
    psi_n = psi0 + scatter + (kappa0 * m / kappa_n)[:, None, None] * (dev[:, :, None] * dev[:, None, :])
    logdet_n = _graph_log_det(psi_n)
    logdet_0 = _graph_log_det(psi0)
    # log Γ_d(ν_n/2) − log Γ_d(ν0/2): one op whatever d (``families._multigamma`` says why)
    from ._multigamma import multigammaln

    multigamma = multigammaln(0.5 * nu_n, d) - multigammaln(0.5 * nu0, d)
    return (
        -0.5 * d * _LOG_PI * m
        + multigamma
        + 0.5 * nu0 * logdet_0
        - 0.5 * nu_n * logdet_n
        + 0.5 * d * (pt.log(kappa0) - pt.log(kappa_n))
    )


def _graph_log_det(matrices):
    """``log det`` of a (batch of) symmetric positive definite matrices (PyTensor): one batched op whose gradient
    is one batched inverse (``families._log_det``; PyTensor's Cholesky form costs 200 times more under NUTS)."""
    from ._log_det import log_det

    return log_det(matrices)


def graph_support_point(partition, d, mu0, kappa0, nu0, psi0):
    import pytensor.tensor as pt

    return pt.broadcast_to(mu0, (partition.shape[0], d))


def simulate(rng, inverse, n_clusters, d, mu0, kappa0, nu0, psi0):
    """``Σ ~ IW(nu0, Psi0)``, ``μ ~ N(mu0, Σ/κ0)`` per cluster, then the items (numpy, scipy)."""
    from scipy.stats import invwishart

    sigma = np.reshape(
        invwishart.rvs(df=float(nu0), scale=np.atleast_2d(psi0), size=n_clusters, random_state=rng), (n_clusters, d, d)
    )
    chol = np.linalg.cholesky(sigma)
    mu = mu0 + np.einsum("kab,kb->ka", chol, rng.standard_normal((n_clusters, d))) / np.sqrt(kappa0)
    noise = np.einsum("iab,ib->ia", chol[inverse], rng.standard_normal((inverse.shape[0], d)))
    return mu[inverse] + noise


DOC = r"""Real vectors, full-covariance Gaussian clusters with a Normal-inverse-Wishart prior.

    .. math::

        \Sigma_k \sim \operatorname{IW}(\nu_0, \Psi_0), \quad
        \mu_k \mid \Sigma_k \sim N(\mu_0, \Sigma_k / \kappa_0), \quad
        x_i \mid z_i = k \sim N(\mu_k, \Sigma_k),

        \log p(X \mid z) = \sum_{k:\, m_k > 0} \Big[ -\tfrac{m_k d}{2}\log\pi
            + \log\Gamma_d(\tfrac{\nu_n}{2}) - \log\Gamma_d(\tfrac{\nu_0}{2})
            + \tfrac{\nu_0}{2}\log|\Psi_0| - \tfrac{\nu_n}{2}\log|\Psi_n|
            + \tfrac d2 \log\tfrac{\kappa_0}{\kappa_n} \Big],

    with :math:`\kappa_n = \kappa_0 + m_k`, :math:`\nu_n = \nu_0 + m_k`,
    :math:`\Psi_n = \Psi_0 + \sum_{i \in k}(x_i - \bar x_k)(x_i - \bar x_k)^T
    + \tfrac{\kappa_0 m_k}{\kappa_n}(\bar x_k - \mu_0)(\bar x_k - \mu_0)^T`
    (Murphy 2007, op. cit.).  The IW density is
    :math:`\propto |\Sigma|^{-(\nu_0+d+1)/2}\exp(-\tfrac12 \operatorname{tr}(\Psi_0\Sigma^{-1}))`.
    The determinants use a batched ``slogdet``, so the graph is differentiable in
    ``mu0``, ``kappa0``, ``nu0`` and ``Psi0``.

    ``default_hyperparameters(X)`` centres the prior on the data's mean, with
    ``nu0 = d + 2``, ``Psi0`` the data's covariance (the prior mean of a
    cluster's covariance) and ``kappa0 = 0.1``.

    Parameters
    ----------
    name : str
    partition : integer vector of length n
    mu0 : scalar or length-d
    kappa0 : scalar > 0
    nu0 : scalar > d - 1
    Psi0 : (d, d) symmetric positive definite
    observed : array (n, d) or (n,)

    Examples
    --------
    >>> import numpy as np, pymc as pm, pytensor.tensor as pt
    >>> import pymc_partitions as pmp
    >>> X = np.array([[0.1, 2.0], [0.3, 1.5], [5.0, -1.0]])
    >>> with pm.Model() as model:
    ...     nu0 = pm.Gamma("nu0", 4.0, 1.0) + 1.0
    ...     z = pt.as_tensor(np.array([0, 0, 1]))
    ...     x = pmp.NormalInverseWishartMixture(
    ...         "x", partition=z, mu0=0.0, kappa0=0.1, nu0=nu0, Psi0=np.eye(2), observed=X)
    >>> round(float(model.compile_logp()({"nu0_log__": 1.0})), 4)
    -12.0771
    """
