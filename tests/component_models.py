"""Component models written in plain PyMC, and their exact posteriors, for the tests of ``distributions.components``.

Each model has ``K_max`` i.i.d. rows of cluster parameters and a likelihood
taking them by ``param[z]``, on ``N_ITEMS = 5`` items:

* ``poisson``: ``y_i ~ Poisson(lam[z_i])``, ``lam_r ~ LogNormal(1, 1)``;
* ``regression``: ``y_i ~ N(a[z_i] + b[z_i] x_i, 0.5)``, ``a_r, b_r ~ N(0, 2)``
  (known noise), or with one noise scale ``sigma ~ HalfNormal(1)`` shared by
  all clusters (``shared_noise=True``);
* ``student_t``: ``y_i ~ StudentT(3, mu[z_i], 0.7)``, ``mu_r ~ N(0, 2)``;
* ``logistic``: ``y_i ~ Bernoulli(sigmoid(beta[z_i, 0] + beta[z_i, 1] x_i))``,
  ``beta_r ~ N(0, 1.5)`` (a ``(K_max, 2)`` block, indexed ``beta[z, j]``).

:func:`cluster_log_marginal` integrates a cluster's parameters out
independently of the package: closed form (Gaussian regression) or
quadrature (trapezoid on a fine grid, Gauss-Hermite in 2-D), with densities
from scipy; with ``zeta < 1`` every item's likelihood raised to ``zeta`` (the
c-posterior of a likelihood wrapped in ``pmp.Coarsened``).
:func:`marginal_posterior` turns those into the exact posterior of ``z`` over
the 52 set partitions, the partition prior (and any grid variable) from the
PyMC model, restricted to ``K <= K_max``.
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pymc as pm
from exact import _log_trapezoid, set_partitions
from scipy import special, stats

import pymc_partitions as pmp

N_ITEMS = 5
X = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
DATA = {
    "poisson": np.array([0, 1, 4, 7, 9]),
    "regression": np.array([-1.4, -0.2, 0.3, 1.1, -0.6]),
    "student_t": np.array([-1.6, -1.1, 0.2, 1.3, 3.5]),
    "logistic": np.array([0, 0, 1, 1, 0]),
}
MODELS = tuple(DATA)
NOISE, T_SCALE, T_NU = 0.5, 0.7, 3.0
K_PRIOR = stats.poisson.pmf(np.arange(30), 2.0)
K_PRIOR /= K_PRIOR.sum()


def add_prior(name, alpha=1.2):
    """The partition prior ``name`` (dp, py, mfm, ngg) for ``N_ITEMS`` items; ``alpha`` may be a variable (DP)."""
    if name == "dp":
        return pmp.DirichletProcessPartition("z", alpha=alpha, n=N_ITEMS)
    if name == "py":
        return pmp.PitmanYorPartition("z", alpha=0.8, sigma=0.3, n=N_ITEMS)
    if name == "mfm":
        return pmp.MixtureOfFiniteMixturesPartition("z", gamma=1.0, k_prior=K_PRIOR, n=N_ITEMS)
    u = pmp.NGGAuxiliary("u", alpha=1.2, sigma=0.4, tau=1.0, n=N_ITEMS)
    return pmp.NGGPartition("z", alpha=1.2, sigma=0.4, tau=1.0, u=u, n=N_ITEMS)


def add_likelihood(name, z, k_max, shared_noise=False, observed=None, coarsening=None):
    """The rows and the likelihood of model ``name`` on partition ``z`` (module docstring); with ``coarsening=c``
    the likelihood wrapped in ``pmp.Coarsened``."""
    y = DATA[name] if observed is None else observed

    def likelihood(distribution, *args, **kwargs):
        if coarsening is None:
            return distribution("y", *args, observed=y, **kwargs)
        return pmp.Coarsened("y", distribution.dist(*args, **kwargs), coarsening=coarsening, observed=y)

    if name == "poisson":
        lam = pm.LogNormal("lam", 1.0, 1.0, shape=k_max)
        return likelihood(pm.Poisson, lam[z])
    if name == "regression":
        a = pm.Normal("a", 0.0, 2.0, shape=k_max)
        b = pm.Normal("b", 0.0, 2.0, shape=k_max)
        sigma = pm.HalfNormal("sigma", 1.0) if shared_noise else NOISE
        return likelihood(pm.Normal, a[z] + b[z] * X, sigma)
    if name == "student_t":
        mu = pm.Normal("mu", 0.0, 2.0, shape=k_max)
        return likelihood(pm.StudentT, nu=T_NU, mu=mu[z], sigma=T_SCALE)
    beta = pm.Normal("beta", 0.0, 1.5, shape=(k_max, 2))
    return likelihood(pm.Bernoulli, logit_p=beta[z, 0] + beta[z, 1] * X)


def build(name, prior="dp", k_max=N_ITEMS, alpha=1.2, shared_noise=False, coarsening=None):
    with pm.Model() as model:
        z = add_prior(prior, alpha)
        add_likelihood(name, z, k_max, shared_noise, coarsening=coarsening)
    return model


_MU_GRID = np.linspace(-16.0, 16.0, 16001)
_LOG_LAMBDA_GRID = np.linspace(-12.0, 8.0, 20001)
_HERMITE_T, _HERMITE_W = np.polynomial.hermite.hermgauss(80)


def cluster_log_marginal(name, members, sigma=NOISE, y=None, zeta=1.0):
    """``log ∫ prod_{i in members} f(y_i | theta)^zeta g(theta) dtheta`` for model ``name`` (scipy densities).

    The regression in closed form: ``N(y | m, s²)^zeta = (2 pi s²)^((1 - zeta)/2) zeta^(-1/2) N(y | m, s²/zeta)``,
    so the cluster's items are jointly ``N(0, 4 D Dᵀ + (s²/zeta) I)`` times that factor per item."""
    y = (DATA[name] if y is None else y)[list(members)]
    x = X[list(members)]
    if name == "poisson":
        u = _LOG_LAMBDA_GRID
        log_f = zeta * stats.poisson.logpmf(y[:, None], np.exp(u)).sum(axis=0) + stats.norm.logpdf(u, 1.0, 1.0)
        return _log_trapezoid(log_f, [u])
    if name == "regression":
        design = np.column_stack([np.ones_like(x), x])
        covariance = 4.0 * design @ design.T + sigma**2 / zeta * np.eye(len(y))
        per_item = 0.5 * (1.0 - zeta) * math.log(2.0 * math.pi * sigma**2) - 0.5 * math.log(zeta)
        return len(y) * per_item + float(stats.multivariate_normal.logpdf(y, np.zeros(len(y)), covariance))
    if name == "student_t":
        mu = _MU_GRID
        log_f = zeta * stats.t.logpdf(y[:, None], T_NU, mu, T_SCALE).sum(axis=0) + stats.norm.logpdf(mu, 0.0, 2.0)
        return _log_trapezoid(log_f, [mu])
    # logistic: Gauss-Hermite in both coefficients, beta = sqrt(2) 1.5 t
    a = math.sqrt(2.0) * 1.5 * _HERMITE_T
    eta = a[:, None, None] + a[None, :, None] * x[None, None, :]
    log_f = zeta * stats.bernoulli.logpmf(y, special.expit(eta)).sum(axis=-1)
    log_w = np.log(_HERMITE_W)[:, None] + np.log(_HERMITE_W)[None, :] - math.log(math.pi)
    return float(special.logsumexp(log_f + log_w))


def marginal_posterior(model, name, k_max, grids=None, sigma_grid=None, zeta=1.0):
    """Exact posterior of ``z`` over ``set_partitions(N_ITEMS)`` with the rows integrated out.

    ``log p(z)`` (and the variables of ``grids``, integrated out by the
    trapezoid rule in their value space) from the PyMC model; the
    likelihood from :func:`cluster_log_marginal`, each item's raised to ``zeta``.  ``sigma_grid``: the shared
    noise scale ``sigma ~ HalfNormal(1)`` integrated out on that grid of
    ``log sigma`` (its density from scipy, with the Jacobian).
    """
    assert sigma_grid is None or zeta == 1.0, "the shared noise scale is integrated out for zeta = 1 only"
    grids = dict(grids or {})
    names = list(grids)
    value_vars = {v.name: v for v in model.value_vars}
    prior_vars = [model["z"], *(model.values_to_rvs[value_vars[name]] for name in names)]
    logp = model.compile_logp(vars=prior_vars)
    fixed = model.initial_point()
    partitions = set_partitions(N_ITEMS)
    log_mass = np.full(len(partitions), -np.inf)
    for row, z in enumerate(partitions):
        if z.max() + 1 > k_max:
            continue
        clusters = [tuple(np.flatnonzero(z == k)) for k in range(z.max() + 1)]
        if sigma_grid is None:
            likelihood = sum(_cached_marginal(name, members, zeta) for members in clusters)
        else:
            sigma = np.exp(sigma_grid)
            per_sigma = sum(_regression_log_marginals(members, tuple(sigma_grid)) for members in clusters)
            prior = stats.halfnorm.logpdf(sigma) + sigma_grid
            likelihood = _log_trapezoid(per_sigma + prior, [sigma_grid])
        if names:
            values = [logp({**fixed, "z": z, **dict(zip(names, combo))}) for combo in itertools.product(*grids.values())]
            prior_term = _log_trapezoid(np.asarray(values).reshape([len(g) for g in grids.values()]), list(grids.values()))
        else:
            prior_term = logp({**fixed, "z": z})
        log_mass[row] = likelihood + prior_term
    return partitions, np.exp(log_mass - special.logsumexp(log_mass))


@functools.lru_cache(maxsize=None)
def _regression_log_marginals(members, log_sigma):
    """The regression's :func:`cluster_log_marginal` at every noise scale ``exp(log_sigma)``, vectorised: the
    covariance ``4 D Dᵀ + sigma² I`` has the eigenvectors of ``4 D Dᵀ`` and eigenvalues ``lambda_j + sigma²``."""
    y, x = DATA["regression"][list(members)], X[list(members)]
    design = np.column_stack([np.ones_like(x), x])
    eigenvalues, vectors = np.linalg.eigh(4.0 * design @ design.T)
    projected = (vectors.T @ y) ** 2
    variance = np.maximum(eigenvalues, 0.0)[None, :] + np.exp(2.0 * np.asarray(log_sigma))[:, None]
    return -0.5 * (np.log(2.0 * np.pi * variance) + projected / variance).sum(axis=1)


@functools.lru_cache(maxsize=None)
def _cached_marginal(name, members, zeta):
    return cluster_log_marginal(name, members, zeta=zeta)


def conditional_posterior(model, point, k_max, row_names):
    """Exact posterior of the partition given every row at ``point`` (and every other value there).

    In the joint of row labels ``c`` and rows with the clusters placed in rows
    by a uniformly random injective map (``docs/exactness.md``, "Your own
    component model"), ``p(Pi | rows) ∝ sum_{c: Pi(c) = Pi} (K_max - K)!/K_max!
    p(Pi) prod_r g(row r) prod_i f(y_i | row c_i)``.  Each term is the PyMC
    model's density at the canonical labels of ``c`` with the rows (the value
    variables ``row_names``) reordered so that canonical cluster ``k`` has the
    row ``c`` gives it (the prior of the rows does not change when they are
    reordered).  Enumerates all ``K_max^n`` labellings.
    """
    logp = model.compile_logp()
    partitions = set_partitions(N_ITEMS)
    index = {tuple(p): i for i, p in enumerate(partitions)}
    log_mass = [[] for _ in partitions]
    for labels in itertools.product(range(k_max), repeat=N_ITEMS):
        rows = list(dict.fromkeys(labels))  # the occupied rows in order of first appearance
        canonical = np.array([rows.index(r) for r in labels], dtype=np.int32)
        order = rows + [r for r in range(k_max) if r not in rows]
        moved = {name: np.asarray(point[name])[order] for name in row_names}
        weight = math.lgamma(k_max - len(rows) + 1) - math.lgamma(k_max + 1)
        log_mass[index[tuple(canonical.tolist())]].append(weight + logp({**point, **moved, "z": canonical}))
    total = np.array([special.logsumexp(values) if values else -np.inf for values in log_mass])
    return partitions, np.exp(total - special.logsumexp(total))
