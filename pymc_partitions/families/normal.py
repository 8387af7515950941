"""Conditionally conjugate Normal family: explicit cluster parameters (Jain & Neal 2007, Sec. 5.1).

The one *parametric* family (``_dispatch``): clusters keep their parameters
θ = (μ, τ) in the state instead of integrating them out.  Per cluster and
feature j = 1..d, independently::

    μ_j ~ N(m_j, precision t_j),   τ_j ~ Gamma(a_j, rate b_j),   x_ij | μ, τ ~ N(μ_j, precision τ_j).

Unlike the Normal-Gamma family (``normal_gamma``), μ and τ are independent a
priori, so the marginal likelihood of a cluster has no closed form, but each
parameter is conjugate given the other (``papers/001_...``, eqs. (5.3)-(5.4))::

    μ_j | τ_j, x_c ~ N((t_j m_j + τ_j S_j) / P_j, precision P_j),   P_j = t_j + n τ_j,
    τ_j | μ_j, x_c ~ Gamma(a_j + n/2, rate b_j + Q_j / 2),          Q_j = Σ_i (x_ij − μ_j)²,

with n items, ``S_j = Σ_i x_ij`` and ``Q_j = Σ_i x_ij² − 2 μ_j S_j + n μ_j²``.
With n = 0 these are the priors, so one update draws from the prior too.

Layouts (float64 vectors)::

    params = [d, m (d), t (d), a (d), b (d), k_max, ζ]   3 + 4d
    stats  = [n, Σ_i x_ij (d), Σ_i x_ij² (d)]            1 + 2d   (as ``normal_gamma``)
    theta  = [μ (d), τ (d), Σ_j ½ log(τ_j / 2π)]          2d + 1   (as ``normal_gamma.draw_params``)

The model is invariant under moving the data, m and μ together (x → x − o,
m → m − o, μ → μ − o): m is the spec's location, which
``families.shift_params`` moves when the kernels work relative to an origin
(``state.make_model``); the cluster means μ in ``theta`` are then relative to
it too (``kernels.parameters`` converts the PyMC rows).

``k_max`` is the number of parameter rows of the PyMC model (``NormalMixture``):
the partition is restricted to at most ``k_max`` clusters.  The last entry of
θ caches the log normaliser of the item density (``log_density``).

Coarsened (ζ < 1, ``families``, "Coarsening"): every item's likelihood is
raised to ζ, so the statistics count ζ each in the two conditionals above
(n → ζ n, S → ζ S, Q → ζ Q: still conjugate), ``cluster_log_likelihood`` is ζ
times the sum and ``log_density`` (``normal_gamma``'s) ζ log p(x | θ).
"""

import math

import numpy as np

from pymc_partitions._dispatch import PARAMETRIC
from pymc_partitions._jit import jit

from ._common import KAPPA0, coarsening, covariance, log_gamma_variate
from .spec import COUNT, FEATURE, REAL, FamilySpec, Hyper, Hyperpriors, Learned
from .normal_gamma import item_stats, log_density, param_size, stat_size  # the same layouts

__all__ = [
    "stat_size",
    "param_size",
    "item_stats",
    "log_density",
    "k_max",
    "log_prior_density",
    "cluster_log_likelihood",
    "update_parameters",
    "draw_prior",
    "draw_prior_rows",
    "theta_from_rows",
    "rows_from_theta",
    "initialise_parameters",
    "auxiliary_capacity",
    "auxiliary_values",
    "default_hyperpriors",
    "SPEC",
]

_LOG_2PI = math.log(2.0 * math.pi)


@jit
def k_max(params):
    """The largest number of clusters the model allows."""
    return int(params[1 + 4 * int(params[0])])


@jit(inline="always")
def _hyper(params, j):
    """``(m_j, t_j, a_j, b_j)`` of feature j."""
    d = int(params[0])
    return params[1 + j], params[1 + d + j], params[1 + 2 * d + j], params[1 + 3 * d + j]


@jit
def log_prior_density(theta, params):
    """log g(θ) = Σ_j [log N(μ_j; m_j, 1/t_j) + log Gamma(τ_j; a_j, rate b_j)]."""
    d = int(params[0])
    total = 0.0
    for j in range(d):
        m, t, a, b = _hyper(params, j)
        delta = theta[j] - m
        tau = theta[d + j]
        total += 0.5 * (math.log(t) - _LOG_2PI) - 0.5 * t * delta * delta
        total += a * math.log(b) - math.lgamma(a) + (a - 1.0) * math.log(tau) - b * tau
    return total


@jit(inline="always")
def _squares(stats, d, j, mu):
    """Q_j = Σ_i (x_ij − μ)² from the statistics (clipped at 0 against rounding)."""
    n = stats[0]
    return max(stats[1 + d + j] - mu * (2.0 * stats[1 + j] - n * mu), 0.0)


@jit
def cluster_log_likelihood(stats, theta, params):
    """ζ Σ_{i in c} log p(x_i | θ) = ζ [n Σ_j ½ log(τ_j/2π) − Σ_j τ_j Q_j / 2], from the statistics."""
    d = int(params[0])
    total = stats[0] * theta[2 * d]
    for j in range(d):
        total -= 0.5 * theta[d + j] * _squares(stats, d, j, theta[j])
    return coarsening(params) * total


@jit
def update_parameters(stats, params, theta, target, rng):
    """One Gibbs update of θ given the cluster's statistics (weighted by ζ); returns its log density.

    For each feature j in turn, μ_j is drawn given the current τ_j, then τ_j
    given the new μ_j (module docstring).  With a non-empty ``target`` (a θ
    row) nothing is drawn: θ is set to ``target`` and the log density of
    that outcome is returned, the probability a restricted Gibbs scan needs
    for the reverse of a split-merge move (``papers/001_...``, eq. (4.5)).
    ``theta`` is updated in place, its log normaliser included.
    """
    d = int(params[0])
    zeta = coarsening(params)
    n = zeta * stats[0]
    forced = target.shape[0] > 0
    log_q = 0.0
    log_norm = 0.0
    for j in range(d):
        m, t, a, b = _hyper(params, j)
        precision = t + n * theta[d + j]
        mean = (t * m + theta[d + j] * (zeta * stats[1 + j])) / precision
        mu = target[j] if forced else mean + rng.standard_normal() / math.sqrt(precision)
        delta = mu - mean
        log_q += 0.5 * (math.log(precision) - _LOG_2PI) - 0.5 * precision * delta * delta
        shape = a + 0.5 * n
        rate = b + 0.5 * zeta * _squares(stats, d, j, mu)
        log_tau = math.log(target[d + j]) if forced else log_gamma_variate(rng, shape) - math.log(rate)
        tau = math.exp(log_tau)
        log_q += shape * math.log(rate) - math.lgamma(shape) + (shape - 1.0) * log_tau - rate * tau
        theta[j] = mu
        theta[d + j] = tau
        log_norm += 0.5 * (log_tau - _LOG_2PI)
    theta[2 * d] = log_norm
    return log_q


@jit
def draw_prior(params, rng, theta):
    """θ ~ g: μ_j ~ N(m_j, 1/t_j) and τ_j ~ Gamma(a_j, rate b_j) into ``theta``, its log normaliser included."""
    d = int(params[0])
    log_norm = 0.0
    for j in range(d):
        m, t, a, b = _hyper(params, j)
        theta[j] = m + rng.standard_normal() / math.sqrt(t)
        log_tau = log_gamma_variate(rng, a) - math.log(b)
        theta[d + j] = math.exp(log_tau)
        log_norm += 0.5 * (log_tau - _LOG_2PI)
    theta[2 * d] = log_norm


@jit
def draw_prior_rows(params, rng, theta):
    """Every row of the block ``theta`` (m, 2d + 1) drawn from the prior g (:func:`draw_prior`), in order."""
    for r in range(theta.shape[0]):
        draw_prior(params, rng, theta[r])


def theta_from_rows(mu, tau, origin):
    """θ rows ``[mu - origin, tau, Σ_j ½ log(tau_j / 2π)]`` (m, 2d + 1) from PyMC's rows ``mu`` (data units) and
    ``tau``, each (m, d): the coordinates of the kernels (module docstring)."""
    mu, tau = np.asarray(mu, dtype=np.float64), np.asarray(tau, dtype=np.float64)
    log_norm = 0.5 * (np.log(tau) - _LOG_2PI).sum(axis=1, keepdims=True)
    return np.ascontiguousarray(np.concatenate([mu - origin, tau, log_norm], axis=1))


def rows_from_theta(theta, origin):
    """``(mu, tau)``, PyMC's rows in data units, of the θ rows ``theta`` (m, 2d + 1); :func:`theta_from_rows` inverted."""
    d = (theta.shape[1] - 1) // 2
    return theta[:, :d] + origin, theta[:, d : 2 * d].copy()


@jit
def initialise_parameters(params, stats, theta, slots, k, rng):
    """θ for the clusters in ``slots[:k]``: each a prior draw, then each one Gibbs update given its items.

    Any starting value is valid for MCMC; this one is in the bulk of the conditional posterior.
    """
    no_target = np.empty(0)
    for j in range(k):
        draw_prior(params, rng, theta[slots[j]])
    for j in range(k):
        update_parameters(stats[slots[j]], params, theta[slots[j]], no_target, rng)


@jit
def auxiliary_capacity(params, n_auxiliary):
    """``n_auxiliary``: Algorithm 8's ``m`` auxiliary values."""
    return n_auxiliary


@jit(inline="always")
def auxiliary_values(params, theta, slots, k, auxiliary, fresh, rng):
    """Algorithm 8's auxiliary values: ``auxiliary[fresh:]`` drawn from the prior; returns ``m = len(auxiliary)``.

    ``auxiliary[:fresh]`` keeps the parameters of the item's own cluster if it
    was alone (Neal 2000, Algorithm 8); ``theta``, ``slots`` and ``k`` are unused.
    """
    for a in range(fresh, auxiliary.shape[0]):
        draw_prior(params, rng, auxiliary[a])
    return auxiliary.shape[0]


def default_hyperpriors(x):
    """The learned default for data ``x`` (n, d): the priors of ``mu`` and ``tau`` as ``NormalGammaMixture``'s.

    With ``m`` the column means and ``S_jj`` the variances of the data::

        mu_kj ~ N(m_j, precision t_j),  t_j = kappa0 / S_jj,     kappa0 ~ LogNormal(log 0.1, 1),
        tau_kj ~ Gamma(a, rate b_j),    b_j = scale · a · S_jj / 3,  a ~ LogNormal(log 1.5, 1),  scale ~ LogNormal(0, 1).

    As for the Normal-Gamma (``normal_gamma.default_hyperpriors``), ``b_j / a``
    is ``scale · S_jj / 3`` whatever ``a``; at the medians a cluster's variance
    ``1/tau`` has prior mean ``S_jj`` and its mean the prior variance
    ``S_jj / kappa0`` that the Normal-Gamma's has on average.  The
    hyperparameters are those of the spec (``m``, ``t``, ``a``, ``b``), which
    ``NormalMixture.with_default_priors`` gives to ``mu``'s ``pm.Normal`` and
    ``tau``'s ``pm.Gamma``.
    """
    variance = np.diag(covariance(x))
    mean = x.mean(axis=0)

    def assemble(kappa0, a, scale):
        return {"m": mean, "t": kappa0 / variance, "a": a, "b": scale * a * variance / 3.0}

    return Hyperpriors((Learned("kappa0", KAPPA0), Learned("a", 1.5), Learned("scale", 1.0)), assemble)


SPEC = FamilySpec(
    kind=PARAMETRIC,
    data=REAL,
    hypers=(  # the priors of the cluster parameters, as ``NormalMixture`` reads them from ``mu`` and ``tau``
        Hyper("m", FEATURE, location=True),
        Hyper("t", FEATURE, lower=0.0),
        Hyper("a", FEATURE, lower=0.0),
        Hyper("b", FEATURE, lower=0.0),
        Hyper("k_max", COUNT),
    ),
    hyperpriors=default_hyperpriors,
)
