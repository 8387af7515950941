"""Coarsened marginal likelihoods written from the math (Miller & Dunson 2019), independent of the package.

Every item's likelihood is raised to ``zeta``; each function below is the
log of ``∫ Π_i p(x_i | θ)^zeta p(θ) dθ`` for the items ``rows`` of one cluster,
as a closed form with the statistics weighted by ``zeta`` (scipy's special
functions, written here, not the package's numba or PyTensor code), or by
quadrature (``normal_mixture_log_marginal``, and the quadratures of
``tests/families/test_coarsening.py`` that check the closed forms).  With the
Dirichlet-process prior written out too (:func:`dp_log_prior`),
:func:`exact_posterior` is the c-posterior over every partition of a few
items: the reference of the coarsened enumeration tests.
"""

from __future__ import annotations

import numpy as np
from exact import LOG_TAU_GRID, set_partitions
from scipy.special import betaln, gammaln, logsumexp, multigammaln


def beta_bernoulli(rows, a, b, zeta):
    n, s = len(rows), rows.sum(axis=0)
    return float(np.sum(betaln(a + zeta * s, b + zeta * (n - s)) - betaln(a, b)))


def normal_gamma(rows, mu0, kappa0, a0, b0, zeta):
    """Per feature: λ ~ Gamma(a0, b0), μ | λ ~ N(mu0, 1/(κ0 λ)); Π_i N(x_i | μ, 1/λ)^ζ integrated over (μ, λ)."""
    n = zeta * len(rows)
    mean = rows.mean(axis=0)
    scatter = zeta * ((rows - mean) ** 2).sum(axis=0)
    kappa_n, a_n = kappa0 + n, a0 + 0.5 * n
    b_n = b0 + 0.5 * scatter + 0.5 * kappa0 * n * (mean - mu0) ** 2 / kappa_n
    terms = (
        -0.5 * n * np.log(2 * np.pi) + 0.5 * np.log(kappa0 / kappa_n) + a0 * np.log(b0) - a_n * np.log(b_n)
        + gammaln(a_n) - gammaln(a0)
    )
    return float(np.sum(np.broadcast_to(terms, rows.shape[1:])))


def normal_inverse_wishart(rows, mu0, kappa0, nu0, psi0, zeta):
    d = rows.shape[1]
    n = zeta * len(rows)
    mean = rows.mean(axis=0)
    centred = rows - mean
    kappa_n, nu_n = kappa0 + n, nu0 + n
    dev = mean - mu0
    psi_n = psi0 + zeta * centred.T @ centred + kappa0 * n / kappa_n * np.outer(dev, dev)
    return float(
        -0.5 * n * d * np.log(np.pi) + multigammaln(0.5 * nu_n, d) - multigammaln(0.5 * nu0, d)
        + 0.5 * nu0 * np.linalg.slogdet(psi0)[1] - 0.5 * nu_n * np.linalg.slogdet(psi_n)[1]
        + 0.5 * d * np.log(kappa0 / kappa_n)
    )


def dirichlet_multinomial(rows, beta, zeta):
    beta = np.broadcast_to(np.asarray(beta, dtype=float), rows.shape[1:])
    coefficients = gammaln(rows.sum(axis=1) + 1).sum() - gammaln(rows + 1).sum()
    counts = zeta * rows.sum(axis=0)
    return float(
        zeta * coefficients + gammaln(beta.sum()) - gammaln(beta.sum() + counts.sum())
        + np.sum(gammaln(beta + counts) - gammaln(beta))
    )


def gamma_poisson(rows, a, b, zeta):
    n, s = zeta * len(rows), zeta * rows.sum(axis=0)
    terms = a * np.log(b) - gammaln(a) + gammaln(a + s) - (a + s) * np.log(b + n)
    return float(np.sum(terms) - zeta * gammaln(rows + 1).sum())


def categorical(codes, beta, n_categories, zeta):
    """``codes`` (m, F) integer codes; feature j has ``n_categories[j]`` values and a symmetric Dirichlet(β_j)."""
    total = 0.0
    n = zeta * len(codes)
    for j, (concentration, size) in enumerate(zip(beta, n_categories)):
        counts = zeta * np.bincount(codes[:, j].astype(int), minlength=size)
        total += gammaln(size * concentration) - gammaln(size * concentration + n)
        total += np.sum(gammaln(concentration + counts) - gammaln(concentration))
    return float(total)


def normal_mixture(rows, m, t, a, b, zeta):
    """Independent μ ~ N(m, 1/t), τ ~ Gamma(a, b) per feature: μ integrated in closed form given τ,
    ``(τ/2π)^(ζn/2) sqrt(t/P) exp(-½ [ζ τ SS + (ζ n τ t / P)(x̄ − m)²])`` with ``P = t + ζ n τ``, then τ by the
    trapezoid rule in log τ on ``exact.LOG_TAU_GRID``."""
    n = len(rows)
    mean = rows.mean(axis=0)
    ss = ((rows - mean) ** 2).sum(axis=0)
    u = LOG_TAU_GRID[:, None]
    tau = np.exp(u)
    precision = t + zeta * n * tau
    log_given_tau = (
        0.5 * zeta * n * (u - np.log(2 * np.pi)) + 0.5 * (np.log(t) - np.log(precision))
        - 0.5 * (zeta * tau * ss + zeta * n * tau * t / precision * (mean - m) ** 2)
    )
    log_gamma = a * np.log(b) - gammaln(a) + (a - 1.0) * u - b * tau
    step = np.diff(LOG_TAU_GRID)
    weights = np.zeros(len(LOG_TAU_GRID))
    weights[:-1] += step / 2
    weights[1:] += step / 2
    return float(logsumexp(log_given_tau + log_gamma + u + np.log(weights)[:, None], axis=0).sum())


def normal_linear_regression(y, covariates, m0, lambda0, a0, b0, zeta):
    """``σ² ~ InvGamma(a0, b0)``, ``β | σ² ~ N(m0, σ² Λ0⁻¹)``, ``Π_i N(y_i | x_iᵀβ, σ²)^ζ``, by quadrature in σ².

    Given σ², ``Π_i N(y_i | x_iᵀβ, σ²)^ζ = (2πσ²)^(n(1−ζ)/2) ζ^(−n/2) N(y | Xβ, σ²/ζ I)`` and β integrates out
    to ``N(y | X m0, σ² (I/ζ + X Λ0⁻¹ Xᵀ))``; σ² by the trapezoid rule in ``log σ²``.
    """
    from scipy.stats import invgamma

    n = len(y)
    covariance = np.eye(n) / zeta + covariates @ np.linalg.inv(lambda0) @ covariates.T
    residual = y - covariates @ m0
    quadratic = residual @ np.linalg.solve(covariance, residual)
    log_det = np.linalg.slogdet(covariance)[1]
    grid = np.linspace(-25.0, 15.0, 8001)
    variance = np.exp(grid)
    log_given = -0.5 * (n * np.log(2 * np.pi * variance) + log_det + quadratic / variance)  # N(y | X m0, σ² C)
    log_given += 0.5 * n * (1 - zeta) * np.log(2 * np.pi * variance) - 0.5 * n * np.log(zeta)
    integrand = log_given + invgamma.logpdf(variance, a0, scale=b0) + grid
    weights = np.full(len(grid), grid[1] - grid[0])
    weights[[0, -1]] /= 2
    return float(logsumexp(integrand + np.log(weights)))


def relational(adjacency, z, a, b, zeta):
    """IRM: every unordered vertex pair's Bernoulli likelihood to the power ζ, blocks ``k <= l`` integrated."""
    labels = np.unique(z)
    total = 0.0
    for p, k in enumerate(labels):
        for l in labels[p:]:
            rows, cols = np.flatnonzero(z == k), np.flatnonzero(z == l)
            block = adjacency[np.ix_(rows, cols)]
            if k == l:
                edges, pairs = np.triu(block, 1).sum(), len(rows) * (len(rows) - 1) / 2
            else:
                edges, pairs = block.sum(), len(rows) * len(cols)
            if pairs:
                total += betaln(a + zeta * edges, b + zeta * (pairs - edges)) - betaln(a, b)
    return float(total)


def dp_log_prior(z, alpha):
    """Ewens: ``log [α^K Γ(α) / Γ(α + n) Π_k Γ(m_k)]``."""
    sizes = np.bincount(z)
    sizes = sizes[sizes > 0]
    return float(len(sizes) * np.log(alpha) + gammaln(alpha) - gammaln(alpha + len(z)) + gammaln(sizes).sum())


def cluster_likelihood(cluster_log_marginal):
    """``log p(x | z) = Σ_clusters cluster_log_marginal(items)`` with each cluster's value cached by its items."""
    cache = {}

    def log_likelihood(z):
        total = 0.0
        for label in np.unique(z):
            members = tuple(np.flatnonzero(z == label))
            if members not in cache:
                cache[members] = cluster_log_marginal(np.array(members))
            total += cache[members]
        return total

    return log_likelihood


def exact_posterior(n, log_likelihood, alpha):
    """The partitions of ``n`` items (``exact.set_partitions``) and their posterior under a DP(α) prior and
    ``log_likelihood(z)``; also every partition's unnormalised log mass (for comparisons with a model's logp)."""
    partitions = set_partitions(n)
    log_mass = np.array([dp_log_prior(z, alpha) + log_likelihood(z) for z in partitions])
    return partitions, np.exp(log_mass - logsumexp(log_mass)), log_mass
