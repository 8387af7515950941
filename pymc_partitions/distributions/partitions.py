"""Partition priors as PyMC distributions over canonical label vectors.

A value ``z`` is an int32 vector of length ``n``: ``z[i]`` is the cluster of
item ``i``, labelled in order of first appearance (``z[0] = 0`` and every
``z[i] <= max(z[:i]) + 1``).  The log-probability is the log EPPF
``log V(n, K) + sum_c log W(|c|)`` of the partition (see ``pymc_partitions.priors``)
for canonical ``z`` and ``-inf`` otherwise, so it is a proper pmf over the
stored values.  It is vectorised (cluster sizes by ``cluster_counts``) and
differentiable in the hyperparameters, which may be PyMC random variables;
where one of those leaves its support (``priors.support``) the
log-probability is ``-inf`` (PyMC's ``check_parameters``), never NaN, so no
sampler accepts such a value.

A hyperprior whose initial value sits outside that support (on a boundary:
``sigma = pm.Uniform("sigma", -1, 1)`` starts at 0, ``pm.Normal`` at its
mean) is refused when PyMC computes the initial point, before any sampling:
every prior's initial point (and ``NGGAuxiliary``'s) is guarded by the
support conditions, which raise a ``ValueError`` naming the hyperparameter,
its support and the fix (:func:`_guarded_start`).

Random draws (``pm.draw``, prior predictive) are exact and come from the numba
functions of ``pymc_partitions.prior_draws``: sequential seating for DP, PY and
MFM, forward filtering and backward sampling for the NGG given ``u``; O(n K)
per draw.  The initial point of every partition prior is one cluster, built
from ``n`` without drawing.
"""

from __future__ import annotations

import inspect

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from pymc.distributions.continuous import PositiveContinuous
from pymc.distributions.dist_math import check_icdf_parameters, check_parameters
from pymc.distributions.distribution import Discrete, _support_point
from pymc.distributions.shape_utils import rv_size_is_none
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from pytensor.tensor.random.op import RandomVariable

from pymc_partitions import labels, prior_draws, priors
from pymc_partitions._validation import (
    check_hyperparameter,
    check_initial_partition,
    check_partition_shape,
    check_pitman_yor,
    check_positive_int,
    check_probabilities,
    check_single_partition,
)
from pymc_partitions.distributions.cluster_sums import cluster_counts
from pymc_partitions.distributions.sample_call import check_sample_call

__all__ = [
    "DirichletProcessPartition",
    "PitmanYorPartition",
    "NGGPartition",
    "NGGAuxiliary",
    "MixtureOfFiniteMixturesPartition",
]


def _canonical(value):
    """Numeric labels in canonical form, the same partition (the prior is a pmf over canonical label vectors:
    ``[2, 2, 0]`` becomes ``[0, 0, 1]``); strategy strings and PyTensor variables unchanged."""
    return labels.relabel(value) if isinstance(value, np.ndarray) else value


class IsCanonical(Op):
    """1 if a label vector is in canonical order of first appearance, else 0."""

    __props__ = ()

    def make_node(self, z):
        z = pt.as_tensor_variable(z)
        return Apply(self, [z], [pt.bscalar()])

    def perform(self, node, inputs, output_storage):
        (z,) = inputs
        output_storage[0][0] = np.asarray(labels.is_canonical(z.astype(np.int64, copy=False)), dtype=np.int8)

    def grad(self, inputs, output_grads):
        return [inputs[0].zeros_like(dtype="floatX")]


is_canonical = IsCanonical()


def n_clusters(partition):
    """The number of clusters of a canonical label vector (a graph): ``max(z) + 1``, as int64.

    The value PyMC records as ``f"{name}_n_clusters"``; every partition step
    writes canonical labels, so this is K.
    """
    return pt.cast(pt.max(partition) + 1, "int64")


def n_large_clusters(partition, n):
    """The number of large clusters of a label vector of ``n`` items (a graph): those of at least
    ``labels.large_cluster_size(n)`` items (1 % of them, and at least 2), as int64.

    The value PyMC records as ``f"{name}_n_large_clusters"``: K without the few tiny clusters every DP
    posterior holds (the partition steps' sample stat ``partition_n_large_clusters`` is the same count).
    """
    return pt.cast(pt.sum(pt.ge(cluster_counts(partition), labels.large_cluster_size(n))), "int64")


def _partition_logp(value, n, log_v_of_k, log_w_of_sizes):
    """Shared body: ``log V(n, K) + sum_{m_c > 0} log W(m_c)`` or ``-inf``.  Built by ``pm.sample`` before it
    uses its arguments, so it also checks those that concern the partition (``sample_call``)."""
    if value.name is not None:
        check_sample_call(value.name, int(pt.get_underlying_scalar_constant_value(n)))
    sizes = cluster_counts(value)
    occupied = sizes > 0
    k = pt.sum(occupied)
    safe_sizes = pt.switch(occupied, sizes, 1)
    log_w = pt.sum(pt.switch(occupied, log_w_of_sizes(safe_sizes), 0.0))
    logp = log_v_of_k(k) + log_w
    return pt.switch(pt.eq(is_canonical(value), 1), logp, -np.inf)


def _in_support(logp, prior, **hypers):
    """``logp`` where the hyperparameters lie in the prior's support, ``-inf`` elsewhere (PyMC's ``check_parameters``).

    The supports are :func:`~pymc_partitions.priors.support`'s,
    the ones the step methods check on the values they read.
    """
    conditions = priors.support(prior, hypers)
    return check_parameters(logp, *(ok for _, ok, _ in conditions), msg=priors.support_message(conditions))


def _guarded_start(value, distribution, prior, **hypers):
    """``value``, an initial point, guarded by the support of the prior's hyperparameters ``hypers`` (graphs).

    Each condition of :func:`~pymc_partitions.priors.support` is a
    check PyMC never turns into ``-inf`` (``check_icdf_parameters``): computing
    the initial point at a value outside the support raises a ``ValueError``
    (PyMC's ``ParameterValueError``) that names the hyperparameter, its support
    and the fix, before any sampler or random draw sees the value.
    """
    for name, ok, rule in priors.support(prior, hypers):
        value = check_icdf_parameters(
            value,
            ok,
            msg=(
                f"{distribution}: {name} must be {rule}, but its initial value is not: give {name} a prior, or an "
                "initval, inside that support"
            ),
        )
    return value


def _float64(value):
    """A float64 tensor: PyTensor would make a Python float such as 1.5 a float32
    constant, and gammaln of it would then be folded in single precision."""
    return pt.cast(pt.as_tensor_variable(value), "float64")


def _draw_batch(rng, size, draw_one):
    """``draw_one()``, or ``prod(size)`` draws stacked into shape ``size + draw shape``.

    With ``size`` given, PyTensor passes the scalar parameters expanded to the
    rank of ``size``, so the ``rng_fn`` read them with ``.item()``.
    """
    if size is None or len(size) == 0:
        return draw_one()
    out = [draw_one() for _ in range(int(np.prod(size)))]
    return np.stack(out).reshape(tuple(size) + out[0].shape)


class _PartitionRV(RandomVariable):
    """Base random variable: ``dist_params = (*hyperparameters, n)``, output ``(n,)`` int32."""

    dtype = "int32"

    def _supp_shape_from_params(self, dist_params, param_shapes=None):
        return (dist_params[-1],)


class _PartitionDistribution(Discrete):
    """Common PyMC plumbing for partition priors.

    In a model a partition variable is one label vector of ``n`` items: no
    ``size``, and ``shape``/``dims`` of one dimension (batches are for
    ``.dist`` draws).  A numeric ``initval`` or ``observed`` must hold integer
    labels, one per item, and is stored in canonical form (the same partition).

    Every partition variable ``name`` that is not observed also records its
    number of clusters as the deterministic ``f"{name}_n_clusters"``
    (:func:`n_clusters`) and its number of large clusters, those of at least
    1 % of the items and at least 2, as ``f"{name}_n_large_clusters"``
    (:func:`n_large_clusters`), so that ``az.summary``, ``az.plot_trace`` and
    ``az.plot_posterior`` show both counts with their R-hat and ESS;
    ``record_n_clusters=False`` leaves them out.  (The labels themselves are no
    diagnostic target: ``z[0]`` is always 0, so ArviZ's R-hat of it is NaN,
    with a ``RuntimeWarning``, and the other labels' R-hat measures label
    switching; ``az.summary(idata, var_names=["~z"])`` leaves them out.)
    """

    def __new__(
        cls, name, *args, size=None, shape=None, dims=None, initval=None, observed=None, record_n_clusters=True, **kwargs
    ):
        check_single_partition(size, shape, dims)
        if not isinstance(record_n_clusters, (bool, np.bool_)):
            raise TypeError(f"record_n_clusters must be True or False, got {record_n_clusters!r}")
        n = inspect.signature(cls.dist).bind_partial(*args, **kwargs).arguments.get("n")
        if n is not None:
            n = check_positive_int("n", n, "the number of items")
            initval = _canonical(check_initial_partition("initval", initval, n))
            observed = _canonical(check_initial_partition("observed", observed, n))
        rv = super().__new__(
            cls, name, *args, size=size, shape=shape, dims=dims, initval=initval, observed=observed, **kwargs
        )
        if record_n_clusters and observed is None:
            pm.Deterministic(f"{name}_n_clusters", n_clusters(rv))
            if n is not None:
                pm.Deterministic(f"{name}_n_large_clusters", n_large_clusters(rv, n))
        return rv

    @classmethod
    def dist(cls, dist_params, *, shape=None, **kwargs):
        check_partition_shape(shape, int(dist_params[-1].data))
        return super().dist(dist_params, shape=shape, **kwargs)

    @classmethod
    def _n_from(cls, n):
        return pt.constant(check_positive_int("n", n, "the number of items"), dtype="int64")


# --- Dirichlet process (Ewens / CRP) -------------------------------------------------------


class DirichletProcessPartitionRV(_PartitionRV):
    name = "dirichlet_process_partition"
    signature = "(),()->(n)"
    _print_name = ("DPPartition", "\\operatorname{DPPartition}")
    prior_code = priors.DP

    @classmethod
    def rng_fn(cls, rng, alpha, n, size):
        """Exact draw by the Chinese restaurant process (``prior_draws.dirichlet_process_partition``)."""
        return _draw_batch(rng, size, lambda: prior_draws.dirichlet_process_partition(n.item(), alpha.item(), rng))


class DirichletProcessPartition(_PartitionDistribution):
    r"""Partition of ``n`` items from a Dirichlet process (Ewens distribution, CRP).

    .. math:: p(\Pi) = \frac{\alpha^K \Gamma(\alpha)}{\Gamma(\alpha + n)} \prod_{c} \Gamma(|c|)

    Parameters
    ----------
    alpha : float or PyMC variable, > 0
        Concentration.
    n : int
        Number of items.

    Examples
    --------
    >>> import pymc as pm, pymc_partitions as pmp
    >>> with pm.Model():
    ...     alpha = pm.Gamma("alpha", 1.0, 1.0)
    ...     z = pmp.DirichletProcessPartition("z", alpha=alpha, n=10)
    """

    rv_op = DirichletProcessPartitionRV()

    @classmethod
    def dist(cls, alpha, n, **kwargs):
        check_hyperparameter("alpha", alpha, lower=0.0, ndim_max=0)
        return super().dist([_float64(alpha), cls._n_from(n)], **kwargs)

    @staticmethod
    def logp(value, alpha, n):
        logp = _partition_logp(
            value,
            n,
            lambda k: k * pt.log(alpha) + pt.gammaln(alpha) - pt.gammaln(alpha + n),
            lambda m: pt.gammaln(m),
        )
        return _in_support(logp, priors.DP, alpha=alpha)


# --- Pitman-Yor -------------------------------------------------------------------------


def _py_log_v(alpha, sigma, n, k):
    j = pt.arange(1, n)
    rising = pt.sum(pt.switch(j < k, pt.log(alpha + j * sigma), 0.0))
    return rising - (pt.gammaln(alpha + n) - pt.gammaln(alpha + 1.0))


class PitmanYorPartitionRV(_PartitionRV):
    name = "pitman_yor_partition"
    signature = "(),(),()->(n)"
    _print_name = ("PYPartition", "\\operatorname{PYPartition}")
    prior_code = priors.PY

    @classmethod
    def rng_fn(cls, rng, alpha, sigma, n, size):
        """Exact draw by sequential seating (``prior_draws.pitman_yor_partition``)."""
        return _draw_batch(rng, size, lambda: prior_draws.pitman_yor_partition(n.item(), alpha.item(), sigma.item(), rng))


class PitmanYorPartition(_PartitionDistribution):
    r"""Partition of ``n`` items from a Pitman-Yor process.

    .. math:: p(\Pi) = \frac{\prod_{k=1}^{K-1} (\alpha + k\sigma)}{(\alpha + 1)_{n-1}}
              \prod_c (1 - \sigma)_{|c| - 1}

    Parameters
    ----------
    alpha : float or PyMC variable, > -sigma
    sigma : float or PyMC variable, in [0, 1)
    n : int

    Examples
    --------
    >>> import pymc as pm, pymc_partitions as pmp
    >>> with pm.Model():
    ...     z = pmp.PitmanYorPartition("z", alpha=1.0, sigma=0.25, n=10)
    """

    rv_op = PitmanYorPartitionRV()

    @classmethod
    def dist(cls, alpha, sigma, n, **kwargs):
        check_pitman_yor(alpha, sigma)
        return super().dist([_float64(alpha), _float64(sigma), cls._n_from(n)], **kwargs)

    @staticmethod
    def logp(value, alpha, sigma, n):
        logp = _partition_logp(
            value,
            n,
            lambda k: _py_log_v(alpha, sigma, n, k),
            lambda m: pt.gammaln(m - sigma) - pt.gammaln(1.0 - sigma),
        )
        return _in_support(logp, priors.PY, alpha=alpha, sigma=sigma)


# --- Normalized generalized gamma process with auxiliary u -------------------------------


def _ngg_aux_logp(u, alpha, sigma, tau, n):
    """The factor of ``p(Pi, u)`` (``priors`` module docstring) that does not involve ``Pi``."""
    psi = alpha * ((u + tau) ** sigma - tau**sigma)
    return (n - 1) * pt.log(u) - pt.gammaln(n) - psi - n * pt.log(u + tau)


def _ngg_partition_logp(value, alpha, sigma, tau, u, n):
    """The factor of ``p(Pi, u)`` that involves ``Pi``: ``(alpha sigma (u+tau)^sigma)^K prod_c W(|c|)``."""
    return _partition_logp(
        value,
        n,
        lambda k: k * (pt.log(alpha * sigma) + sigma * pt.log(u + tau)),
        lambda m: pt.gammaln(m - sigma) - pt.gammaln(1.0 - sigma),
    )


def _draw_log_total_mass(rng, alpha, sigma, tau):
    """``log T`` for the total mass ``T`` of the generalized gamma CRM, ``E exp(-lam T) = exp(-alpha((lam+tau)^sigma - tau^sigma))``.

    ``T`` is a sum of ``m`` independent exponentially tilted positive stable
    variables with mass ``alpha/m``; each is drawn exactly by rejection (draw a
    stable ``S`` with Kanter's representation, accept with probability
    ``exp(-tau S)``), and ``m`` keeps the acceptance rate ``exp(-alpha tau^sigma/m)``
    above ``exp(-1)``.  Everything is in logarithms: for small ``sigma`` a
    stable draw ``S = (alpha/m)^(1/sigma) (a/E)^((1-sigma)/sigma)`` is far
    outside the range of a float (``sigma = 0.001`` raises to the power 1000).
    """
    m = max(1, int(np.ceil(alpha * tau**sigma)))
    log_scale = np.log(alpha / m) / sigma
    log_total = -np.inf
    for _ in range(m):
        while True:
            angle = rng.uniform(0.0, np.pi)
            e = rng.exponential()
            log_a = (
                (np.log(np.sin(sigma * angle)) - np.log(np.sin(angle))) / (1.0 - sigma)
                + np.log(np.sin((1.0 - sigma) * angle))
                - np.log(np.sin(sigma * angle))
            )
            log_s = log_scale + (1.0 - sigma) / sigma * (log_a - np.log(e))
            accept = rng.uniform() < (np.exp(-tau * np.exp(log_s)) if log_s < _LOG_FLOAT_MAX else 0.0)
            if accept:
                log_total = np.logaddexp(log_total, log_s)
                break
    return log_total


_LOG_FLOAT_MAX = float(np.log(np.finfo(np.float64).max))


class NGGAuxiliaryRV(RandomVariable):
    name = "ngg_auxiliary"
    signature = "(),(),(),()->()"
    dtype = "floatX"
    _print_name = ("NGGAuxiliary", "\\operatorname{NGGAuxiliary}")

    @classmethod
    def rng_fn(cls, rng, alpha, sigma, tau, n, size):
        """``u = G / T`` with ``G ~ Gamma(n, 1)`` and ``T`` the CRM total mass (James, Lijoi & Prunster 2009).

        For very small ``sigma`` the exact ``u`` can exceed the largest float
        (about 1.8e308); that draw raises a ``ValueError`` rather than
        returning ``inf``.
        """

        priors.check_values(priors.NGGP, [alpha, sigma, tau], "in NGGAuxiliary's random draw")

        def draw_one():
            log_u = np.log(rng.gamma(float(n))) - _draw_log_total_mass(rng, float(alpha), float(sigma), float(tau))
            if not log_u < _LOG_FLOAT_MAX:
                raise ValueError(
                    f"NGGAuxiliary: a draw of u is exp({log_u:.4g}), beyond the largest float, at alpha={float(alpha)}, "
                    f"sigma={float(sigma)}, tau={float(tau)}; give sigma a prior that keeps it away from 0"
                )
            return np.asarray(np.exp(log_u))

        return _draw_batch(rng, size, draw_one)


class NGGAuxiliary(PositiveContinuous):
    r"""Auxiliary variable ``u`` of a normalized generalized gamma partition prior.

    ``NGGAuxiliary`` and :class:`NGGPartition` together have the joint law of
    ``papers/003_...`` eq. (4) (Lee & Choi 2015, Theorem 1): their log
    densities add up to

    .. math:: \log p(\Pi, u) = (n-1)\log u - \log\Gamma(n) - \psi(u)
              + K \log(\alpha\sigma) + (\sigma K - n)\log(u + \tau)
              + \sum_c \log\frac{\Gamma(|c| - \sigma)}{\Gamma(1 - \sigma)}

    with :math:`\psi(u) = \alpha((u+\tau)^\sigma - \tau^\sigma)`.  This variable
    carries the terms without :math:`\Pi`; neither factor alone is a normalised
    density, only the joint is.  Random draws are from the exact marginal of ``u``.

    Examples
    --------
    >>> import pymc as pm, pymc_partitions as pmp
    >>> with pm.Model():
    ...     u = pmp.NGGAuxiliary("u", alpha=1.0, sigma=0.3, tau=1.0, n=10)
    ...     z = pmp.NGGPartition("z", alpha=1.0, sigma=0.3, tau=1.0, u=u, n=10)
    """

    rv_op = NGGAuxiliaryRV()

    @classmethod
    def dist(cls, alpha, sigma, tau, n, **kwargs):
        _check_ngg(alpha, sigma, tau)
        n = pt.constant(check_positive_int("n", n, "the number of items"), dtype="int64")
        return super().dist([_float64(alpha), _float64(sigma), _float64(tau), n], **kwargs)

    @staticmethod
    def logp(value, alpha, sigma, tau, n):
        logp = pt.switch(value > 0, _ngg_aux_logp(value, alpha, sigma, tau, n), -np.inf)
        return _in_support(logp, priors.NGGP, alpha=alpha, sigma=sigma, tau=tau)

    @staticmethod
    def support_point(rv, size, alpha, sigma, tau, n):
        """Mode-scale start: ``u = n / E[T]`` with ``E[T] = alpha sigma tau^(sigma-1)`` (or ``n`` if ``tau = 0``).

        Built from the hyperparameters only (never from ``rv``, whose
        evaluation would be a random draw) and guarded by their support
        (:func:`_guarded_start`).
        """
        mean_total = pt.switch(tau > 0, alpha * sigma * tau ** (sigma - 1.0), 1.0)
        start = n / mean_total
        if not rv_size_is_none(size):
            start = pt.full(size, start)
        return _guarded_start(start, "NGGAuxiliary", priors.NGGP, alpha=alpha, sigma=sigma, tau=tau)


def _check_ngg(alpha, sigma, tau):
    check_hyperparameter("alpha", alpha, lower=0.0, ndim_max=0)
    check_hyperparameter("sigma", sigma, lower=0.0, upper=1.0, ndim_max=0)
    check_hyperparameter("tau", tau, lower=0.0, lower_inclusive=True, ndim_max=0)


class NGGPartitionRV(_PartitionRV):
    name = "ngg_partition"
    signature = "(),(),(),(),()->(n)"
    _print_name = ("NGGPartition", "\\operatorname{NGGPartition}")
    prior_code = priors.NGGP

    @classmethod
    def rng_fn(cls, rng, alpha, sigma, tau, u, n, size):
        """Exact draw of ``Pi | u`` (``prior_draws.ngg_partition``).

        Given ``u``, ``p(Pi | u) ∝ theta^K prod_c (1-sigma)_{|c|-1}`` with
        ``theta = alpha sigma (u+tau)^sigma``, which is not projective in ``n``, so
        items cannot be seated by the unconditional rule.  Forward filtering of
        the weight ``F(i, k)`` of the open/join paths of the first ``i`` items
        with ``k`` clusters, backward sampling of the path, then seating of the
        joins with weight ``|c| - sigma``: O(n k_cap) work, O(sqrt(n) k_cap)
        memory, with ``k_cap`` doubled until ``P(K > k_cap) <= 2^-64``.
        """
        hyper = alpha.item(), sigma.item(), tau.item(), u.item()
        return _draw_batch(rng, size, lambda: prior_draws.ngg_partition(n.item(), *hyper, rng))


class NGGPartition(_PartitionDistribution):
    r"""Partition of ``n`` items from a normalized generalized gamma process, given its auxiliary ``u``.

    Use together with :class:`NGGAuxiliary` (their joint is ``papers/003_...``
    eq. (4)); the Levy intensity is
    :math:`\rho(dw) = \frac{\alpha\sigma}{\Gamma(1-\sigma)} w^{-1-\sigma} e^{-\tau w} dw`.
    This factor is :math:`K\log(\alpha\sigma) + \sigma K \log(u+\tau) + \sum_c \log\frac{\Gamma(|c|-\sigma)}{\Gamma(1-\sigma)}`.

    Parameters
    ----------
    alpha : float or PyMC variable, > 0
    sigma : float or PyMC variable, in (0, 1)
    tau : float or PyMC variable, >= 0
    u : PyMC variable (an ``NGGAuxiliary``) or float, > 0
    n : int
    """

    rv_op = NGGPartitionRV()

    @classmethod
    def dist(cls, alpha, sigma, tau, u, n, **kwargs):
        _check_ngg(alpha, sigma, tau)
        check_hyperparameter("u", u, lower=0.0, ndim_max=0)
        return super().dist([_float64(alpha), _float64(sigma), _float64(tau), _float64(u), cls._n_from(n)], **kwargs)

    @staticmethod
    def logp(value, alpha, sigma, tau, u, n):
        logp = _ngg_partition_logp(value, alpha, sigma, tau, u, n)
        return _in_support(logp, priors.NGGP, alpha=alpha, sigma=sigma, tau=tau, u=u)


# --- Mixture of finite mixtures -----------------------------------------------------------


def _mfm_log_v(gamma, log_k_prior, n, t):
    """``log V_n(t)`` in PyTensor (Miller & Harrison 2018, eq. (3.2)); differentiable in ``gamma``."""
    k = pt.arange(1, log_k_prior.shape[0] + 1, dtype="float64")
    log_falling = pt.switch(k >= t, pt.gammaln(k + 1) - pt.gammaln(pt.maximum(k - t, 0) + 1), -np.inf)
    terms = log_falling + pt.gammaln(gamma * k) - pt.gammaln(gamma * k + n) + log_k_prior
    return pt.logsumexp(terms)


class MixtureOfFiniteMixturesPartitionRV(_PartitionRV):
    name = "mfm_partition"
    signature = "(),(k),()->(n)"
    _print_name = ("MFMPartition", "\\operatorname{MFMPartition}")
    prior_code = priors.MFM

    @classmethod
    def rng_fn(cls, rng, gamma, log_k_prior, n, size):
        """Exact draw by the MFM restaurant process (``prior_draws.mixture_of_finite_mixtures_partition``)."""
        log_k_prior = np.ascontiguousarray(log_k_prior, dtype=np.float64).reshape(-1)
        draw = prior_draws.mixture_of_finite_mixtures_partition
        return _draw_batch(rng, size, lambda: draw(n.item(), gamma.item(), log_k_prior, rng))


class MixtureOfFiniteMixturesPartition(_PartitionDistribution):
    r"""Partition of ``n`` items from a mixture of finite mixtures (Miller & Harrison 2018).

    ``k ~ k_prior``, weights ``~ Dirichlet_k(gamma, ..., gamma)``; the induced partition has

    .. math:: p(\Pi) = V_n(K) \prod_c \gamma^{(|c|)}, \quad
              V_n(t) = \sum_{k \ge t} \frac{k_{(t)}}{(\gamma k)^{(n)}} p(k)

    Parameters
    ----------
    gamma : float or PyMC variable, > 0
        Dirichlet concentration of the mixture weights.
    k_prior : array of floats
        ``p(k)`` for ``k = 1..k_max`` (a truncated pmf summing to 1), e.g.
        ``scipy.stats.poisson.pmf(np.arange(50), 1.0)`` for ``k - 1 ~ Poisson(1)``.
    n : int

    Examples
    --------
    >>> import numpy as np, pymc as pm, pymc_partitions as pmp
    >>> from scipy.stats import poisson
    >>> k_prior = poisson.pmf(np.arange(60), 1.0); k_prior /= k_prior.sum()
    >>> with pm.Model():
    ...     z = pmp.MixtureOfFiniteMixturesPartition("z", gamma=1.0, k_prior=k_prior, n=10)
    """

    rv_op = MixtureOfFiniteMixturesPartitionRV()

    @classmethod
    def dist(cls, gamma, k_prior, n, **kwargs):
        check_hyperparameter("gamma", gamma, lower=0.0, ndim_max=0)
        log_k_prior = pt.constant(check_probabilities("k_prior", k_prior, "p(k) for k = 1..k_max"))
        return super().dist([_float64(gamma), log_k_prior, cls._n_from(n)], **kwargs)

    @staticmethod
    def logp(value, gamma, log_k_prior, n):
        logp = _partition_logp(
            value,
            n,
            lambda k: _mfm_log_v(gamma, log_k_prior, n, k),
            lambda m: pt.gammaln(m + gamma) - pt.gammaln(gamma),
        )
        return _in_support(logp, priors.MFM, gamma=gamma)


def _all_in_one_cluster(op, rv, rng, size, *dist_params):
    """Initial point of every partition prior: all items in one cluster (canonical, always valid).

    Built from ``n`` (the last distribution parameter, a constant, which PyTensor
    expands to the rank of ``size`` when ``size`` is given) and ``size``, never
    from ``rv`` itself: ``zeros_like(rv)`` would make the initial-point function
    evaluate a random draw.  Guarded by the support of the prior's
    hyperparameters (:func:`_guarded_start`): a hyperprior starting outside it
    is a ``ValueError`` naming it when PyMC computes the initial point.
    """
    n = pt.atleast_1d(pt.as_tensor_variable(dist_params[-1]).squeeze())
    shape = n if rv_size_is_none(size) else pt.concatenate([size, n])
    names = priors.PARAM_NAMES[op.prior_code]
    hypers = {name: value for name, value in zip(names, dist_params[:-1]) if name != "k_prior"}
    return _guarded_start(pt.zeros(shape, dtype=rv.dtype), _DISTRIBUTION_NAMES[type(op)], op.prior_code, **hypers)


_DISTRIBUTION_NAMES = {
    DirichletProcessPartitionRV: "DirichletProcessPartition",
    PitmanYorPartitionRV: "PitmanYorPartition",
    NGGPartitionRV: "NGGPartition",
    MixtureOfFiniteMixturesPartitionRV: "MixtureOfFiniteMixturesPartition",
}

for _rv_type in _DISTRIBUTION_NAMES:
    _support_point.register(_rv_type)(_all_in_one_cluster)
