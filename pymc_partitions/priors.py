"""Gibbs-type partition priors in numba: ``log V`` and ``log W``.

Every prior here is of Gibbs type (Gnedin & Pitman 2006): the probability of a
partition ``Pi`` of ``n`` items into ``K`` clusters of sizes ``m_1..m_K`` is

    p(Pi) = V(n, K) * prod_c W(m_c).

Kernels only ever need ``log V`` and ``log W``; the prior is encoded as an
integer code plus a float64 parameter vector (and, for the mixture of finite
mixtures, a precomputed table of ``log V(n, t)``), so one numba specialisation
serves every prior.

Codes and parameter vectors:

=========  ===========================  ========================================
code       params                       V(n, K) and W(m)
=========  ===========================  ========================================
``DP``     ``[alpha]``                  V = alpha^K Gamma(alpha)/Gamma(alpha+n);  W = Gamma(m)
``PY``     ``[alpha, sigma]``           V = prod_{k<K}(alpha+k sigma)/(alpha+1)_{n-1};  W = (1-sigma)_{m-1}
``NGGP``   ``[alpha, sigma, tau, u]``   joint p(Pi, u) of Lee & Choi (2015), eq. (4), see below
``MFM``    ``[gamma]`` + table          V = sum_k k_(K)/(gamma k)^(n) p(k);  W = (gamma)^(m)
=========  ===========================  ========================================

NGGP: the generalized gamma CRM with Levy intensity
``rho(dw) = alpha sigma / Gamma(1-sigma) w^(-1-sigma) exp(-tau w) dw``
(the parameterisation of ``papers/003_...``, Sec. 2.1, with a rate ``tau``) has
``psi(u) = alpha((u+tau)^sigma - tau^sigma)`` and
``kappa(m, u) = alpha sigma Gamma(m-sigma)/Gamma(1-sigma) (u+tau)^(sigma-m)``;
eq. (4) gives

    p(Pi, u) = u^(n-1)/Gamma(n) exp(-psi(u)) (alpha sigma)^K (u+tau)^(sigma K - n)
               * prod_c Gamma(m_c - sigma)/Gamma(1 - sigma),

so with ``u`` held fixed it is Gibbs type with the ``V`` below.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln, logsumexp

from pymc_partitions._jit import jit

DP = 0
PY = 1
NGGP = 2
MFM = 3

PARAM_NAMES = {DP: ("alpha",), PY: ("alpha", "sigma"), NGGP: ("alpha", "sigma", "tau", "u"), MFM: ("gamma", "k_prior")}
"""The hyperparameters of each prior, in the order of its distribution's parameters."""

_EMPTY_TABLE = np.zeros(0)


@jit
def log_v(prior, params, log_v_table, n, k):
    """``log V(n, k)`` for ``k >= 1`` clusters of ``n`` items."""
    if prior == DP:
        alpha = params[0]
        return k * math.log(alpha) + math.lgamma(alpha) - math.lgamma(alpha + n)
    if prior == PY:
        alpha, sigma = params[0], params[1]
        total = 0.0
        for j in range(1, k):
            total += math.log(alpha + j * sigma)
        return total - (math.lgamma(alpha + n) - math.lgamma(alpha + 1.0))
    if prior == NGGP:
        alpha, sigma, tau, u = params[0], params[1], params[2], params[3]
        log_ut = math.log(u + tau)
        psi = alpha * ((u + tau) ** sigma - tau**sigma)
        return k * math.log(alpha * sigma) + (sigma * k - n) * log_ut + (n - 1) * math.log(u) - math.lgamma(n) - psi
    return log_v_table[k]


@jit
def log_w(prior, params, m):
    """``log W(m)`` for a cluster of size ``m >= 1``."""
    if prior == DP:
        return math.lgamma(m)
    if prior == MFM:
        return math.lgamma(m + params[0]) - math.lgamma(params[0])
    sigma = params[1]
    return math.lgamma(m - sigma) - math.lgamma(1.0 - sigma)


@jit
def size_shift(prior, params):
    """The constant ``s`` with ``W(m+1)/W(m) = m + s``: 0 (DP), -sigma (PY, NGGP), gamma (MFM)."""
    if prior == DP:
        return 0.0
    if prior == MFM:
        return params[0]
    return -params[1]


@jit
def log_new_cluster(prior, params, log_v_table, n, k):
    """``log[V(n, k+1)/V(n, k) W(1)]``: prior weight of opening a new cluster when ``k`` exist.

    Together with ``log(m + size_shift)`` for joining a cluster of size ``m``
    these are the unnormalised Gibbs-sampling weights (Neal 2000, Algorithm 3).
    """
    if prior == DP:
        return math.log(params[0])
    if prior == PY:
        return math.log(params[0] + k * params[1])
    if prior == NGGP:
        return math.log(params[0] * params[1]) + params[1] * math.log(params[3] + params[2])
    return log_v_table[k + 1] - log_v_table[k] + math.log(params[0])


@jit
def log_prior(prior, params, log_v_table, sizes):
    """``log p(Pi)``; ``sizes`` lists the cluster sizes (zeros are ignored)."""
    n = 0
    k = 0
    total = 0.0
    for m in sizes:
        if m > 0:
            n += m
            k += 1
            total += log_w(prior, params, m)
    return total + log_v(prior, params, log_v_table, n, k)


def mfm_log_v_table(gamma, log_k_prior, n):
    """``log V_n(t)`` for ``t = 0..n+1`` (Miller & Harrison 2018, eq. (3.2)).

    ``V_n(t) = sum_{k>=t} k!/(k-t)! Gamma(gamma k)/Gamma(gamma k + n) p(k)``, with
    ``log_k_prior[j] = log p(k = j + 1)`` (the support is truncated at its length).
    Entries with ``t`` above the largest ``k`` are ``-inf``.
    """
    k = np.arange(1, len(log_k_prior) + 1, dtype=float)
    t = np.arange(0, n + 2, dtype=float)[:, None]
    with np.errstate(invalid="ignore"):
        log_falling = np.where(k[None, :] >= t, gammaln(k[None, :] + 1) - gammaln(np.maximum(k[None, :] - t, 0) + 1), -np.inf)
    terms = log_falling + gammaln(gamma * k) - gammaln(gamma * k + n) + log_k_prior
    table = logsumexp(terms, axis=1)
    table[0] = -np.inf
    return np.ascontiguousarray(table)


def empty_table():
    """The (unused) ``log V`` table for priors with closed-form ``V``."""
    return _EMPTY_TABLE


# --------------------------------------------------------------------------- supports (Python: numbers or PyTensor graphs)


def support(prior, values):
    """The support of the hyperparameters of a partition prior (``priors`` code ``prior``).

    ``values`` maps hyperparameter names to numbers or to PyTensor graphs.
    Returns ``(name, condition, rule)`` triples, all finiteness conditions
    first: ``condition`` is built with arithmetic and comparison operators
    only, so it is a numpy bool for numbers (:func:`check_values`) and a
    boolean graph for graphs (the distributions' log densities, ``-inf`` where
    one is false).  Supports: ``alpha > 0`` (DP, NGGP), ``0 <= sigma < 1`` and
    ``alpha > -sigma`` (PY), ``0 < sigma < 1``, ``tau >= 0`` and ``u > 0``
    (NGGP; ``u`` only when ``values`` holds it, ``NGGAuxiliary`` has none),
    ``gamma > 0`` (MFM; its ``k_prior`` is a constant checked at construction).
    """
    v = {name: value for name, value in values.items() if name != "k_prior"}
    finite = [(name, abs(value) < np.inf, "finite") for name, value in v.items()]
    if prior == DP:
        support = [("alpha", v["alpha"] > 0.0, "> 0")]
    elif prior == PY:
        sigma = v["sigma"]
        support = [
            ("sigma", sigma >= 0.0, "in [0, 1)"),
            ("sigma", sigma < 1.0, "in [0, 1)"),
            ("alpha", v["alpha"] > -sigma, "> -sigma"),
        ]
    elif prior == MFM:
        support = [("gamma", v["gamma"] > 0.0, "> 0")]
    elif prior == NGGP:
        sigma = v["sigma"]
        support = [
            ("alpha", v["alpha"] > 0.0, "> 0"),
            ("sigma", sigma > 0.0, "in (0, 1)"),
            ("sigma", sigma < 1.0, "in (0, 1)"),
            ("tau", v["tau"] >= 0.0, ">= 0"),
        ]
        if "u" in v:
            support.append(("u", v["u"] > 0.0, "> 0"))
    else:
        raise ValueError(f"prior must be a prior code of pymc_partitions.priors, got {prior!r}")
    return finite + support


def support_message(conditions):
    """The rules of :func:`support`'s ``conditions`` as one text, e.g. ``"alpha finite, alpha > 0"``."""
    return ", ".join(dict.fromkeys(f"{name} {rule}" for name, _, rule in conditions))


def check_values(prior, values, source=None):
    """Numeric hyperparameter values of a partition prior (``priors`` code ``prior``) must lie in its support.

    ``values`` are in the order of ``priors.PARAM_NAMES[prior]`` (a prefix of
    it will do).  A step reads them from PyMC's point: a value outside the
    support (the model's log density there is ``-inf``) raises a ``ValueError``
    naming it and the fix, so no kernel computes with it.  ``source`` says
    where the values come from (default: the sampler's point).  The supports
    are those of :func:`support`.
    """
    named = dict(zip(PARAM_NAMES[prior], (np.asarray(v, dtype=float) for v in values)))
    for name, ok, rule in support(prior, named):
        if not np.all(ok):
            where = source or "read from the sampler's current point"
            raise ValueError(
                f"{name} must be {rule}, got {named[name]} ({where}); give {name} a prior, or an initval, "
                "inside that support"
            )
