"""Data-based default hyperparameters of the observation models, so that a first model needs no prior elicitation.

Each observation model's ``default_hyperparameters(observed)`` returns the
keyword arguments computed here from validated data (``_validation``), in
the spirit of scikit-learn's ``BayesianGaussianMixture`` (prior centred on the
data's mean, scale from its covariance).  The rule for every model: **the
prior of one cluster's parameters is centred on the whole data set and about
as broad as the data**, so that a cluster may sit anywhere the data are and a
new cluster's prior predictive covers them.  Centring and scaling on the data
makes the Gaussian models' results invariant to shifting and rescaling each
feature.

===============================  ==============================================================
model                            defaults (``m``, ``S``: column means and covariance; ``n`` items)
===============================  ==============================================================
``NormalInverseWishartMixture``  ``mu0 = m``, ``kappa0 = 0.1``, ``nu0 = d + 2``, ``Psi0 = S``
``NormalGammaMixture``           ``mu0 = m``, ``kappa0 = 0.1``, ``a0 = 1.5``, ``b0 = diag(S) / 2``
``BetaBernoulliMixture``         ``a = 2 p``, ``b = 2 (1 - p)``, ``p = (Σ_i x_ij + 1) / (n + 2)``
``GammaPoissonMixture``          ``a = 1``, ``b = 1 / max(m, 1/n)``
``DirichletMultinomialMixture``  ``beta = d (C_j + 1) / (Σ_j C_j + d)``, ``C_j = Σ_i x_ij``
``InfiniteRelationalModel``      ``a = 2 ρ``, ``b = 2 (1 - ρ)``, ``ρ = (edges + 1) / (pairs + 2)``
===============================  ==============================================================

Gaussian models: ``nu0 = d + 2`` is the smallest whole number of degrees of
freedom for which the prior mean of a cluster's covariance,
``Psi0 / (nu0 - d - 1)``, exists; it is then the data's covariance
(Normal-Gamma: per feature, the same prior with ``d = 1``, a Gamma(1.5, rate
``b0``) precision whose inverse has mean ``2 b0 = S_jj``).  ``kappa0 = 0.1``
lets a cluster's mean spread ``1 / sqrt(0.1) ≈ 3`` times as widely as its
items do.  ``kappa0`` and the covariance scale set how readily the posterior
opens clusters: a smaller ``kappa0`` or a larger ``Psi0`` gives fewer, broader
clusters.

Binary, count and network models: the prior mean of each feature's
probability (rate, block edge density) is its frequency in the data, smoothed
away from 0 and 1, with the weight of two observations (Beta) or one
(Gamma(1, rate)); for ``p = 1/2`` the Beta default is the uniform Beta(1, 1).
The Dirichlet's concentrations are the smoothed word frequencies times ``d``,
the total mass of the symmetric Dirichlet(1).

These defaults are a start, not a recommendation: replace them when you know
the scale of the clusters you look for (e.g. a measurement's within-group
spread), when clusters should be as fine as the data allow, or when the
posterior's number of clusters moves with them (check by refitting with
``kappa0`` or the prior scale halved and doubled).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "beta_bernoulli",
    "dirichlet_multinomial",
    "gamma_poisson",
    "infinite_relational",
    "normal_gamma",
    "normal_inverse_wishart",
]

KAPPA0 = 0.1
"""Prior precision of a cluster mean relative to the cluster's own (Gaussian models)."""


def _covariance(x):
    """Sample covariance of the rows of ``x`` (``ddof=1``), made positive definite.

    Each variance grows by a relative 1e-6 (so the result scales with the
    features), and a constant feature, or one item, gets variance 1.
    """
    n, d = x.shape
    cov = np.cov(x, rowvar=False, ddof=1).reshape(d, d) if n > 1 else np.zeros((d, d))
    variance = np.diag(cov)
    return cov + np.diag(np.where(variance > 0, 1e-6 * variance, 1.0))


def normal_inverse_wishart(x):
    """``mu0``, ``kappa0``, ``nu0``, ``Psi0`` of ``NormalInverseWishartMixture`` for data ``x`` (n, d)."""
    d = x.shape[1]
    return {"mu0": x.mean(axis=0), "kappa0": KAPPA0, "nu0": d + 2.0, "Psi0": _covariance(x)}


def normal_gamma(x):
    """``mu0``, ``kappa0``, ``a0``, ``b0`` of ``NormalGammaMixture`` for data ``x`` (n, d)."""
    d = x.shape[1]
    return {
        "mu0": x.mean(axis=0),
        "kappa0": np.full(d, KAPPA0),
        "a0": np.full(d, 1.5),
        "b0": np.diag(_covariance(x)) / 2.0,
    }


def beta_bernoulli(x):
    """``a``, ``b`` of ``BetaBernoulliMixture`` for 0/1 data ``x`` (n, d)."""
    p = (x.sum(axis=0) + 1.0) / (x.shape[0] + 2.0)
    return {"a": 2.0 * p, "b": 2.0 * (1.0 - p)}


def gamma_poisson(x):
    """``a``, ``b`` of ``GammaPoissonMixture`` for count data ``x`` (n, d)."""
    n, d = x.shape
    return {"a": np.ones(d), "b": 1.0 / np.maximum(x.mean(axis=0), 1.0 / n)}


def dirichlet_multinomial(x):
    """``beta`` of ``DirichletMultinomialMixture`` for count vectors ``x`` (n, d)."""
    d = x.shape[1]
    counts = x.sum(axis=0)
    return {"beta": d * (counts + 1.0) / (counts.sum() + d)}


def infinite_relational(adjacency):
    """``a``, ``b`` of ``InfiniteRelationalModel`` for a symmetric 0/1 adjacency matrix with zero diagonal."""
    n = adjacency.shape[0]
    edges = float(np.triu(adjacency, 1).sum())
    density = (edges + 1.0) / (n * (n - 1) / 2.0 + 2.0)
    return {"a": 2.0 * density, "b": 2.0 * (1.0 - density)}
