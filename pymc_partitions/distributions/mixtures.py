r"""Conjugate observation models given a partition, as PyMC distributions.

Each distribution here is the law of an ``n x d`` data matrix ``X`` given a
vector of cluster labels ``z`` (one per item, values in ``0 .. n-1``), with the
cluster parameters integrated out.  Its ``logp`` is the exact log marginal
likelihood

.. math::

    \log p(X \mid z, \eta) = \sum_i c(x_i) + \sum_{k:\, m_k > 0} \log M(T_k, m_k; \eta),
    \qquad T_k = \sum_{i:\, z_i = k} t(x_i), \quad m_k = \#\{i : z_i = k\},

where ``t`` are additive per-item sufficient statistics, ``c`` a per-item
constant, ``M`` the family's cluster marginal likelihood and ``\eta`` the
hyperparameters (constants or PyMC random variables).  The sum is computed in
PyTensor without loops: the item statistics are summed per label into a
``K x s`` array (``cluster_sums``, ``K = max(z) + 1``), ``M`` is evaluated on
every row at once and rows with ``m_k = 0`` are masked (``pt.switch``) to
contribute exactly 0.  The
Normal-inverse-Wishart model instead evaluates ``M`` on the occupied rows only
(gathered with ``pt.nonzero``): its batched Cholesky loops over the batch in
Python, so evaluating all n rows made the gradient ~100x slower at n = 2000.
The graph is differentiable in the hyperparameters, so NUTS can move them.

Reading a model's observation model (for step methods)
------------------------------------------------------
For an observed variable ``rv`` whose ``rv.owner.op`` is a
:class:`PartitionMixtureRV`::

    op = rv.owner.op
    op.family                        # int code, see the constants below
    params = op.dist_params(rv.owner)
    params[0]                        # the partition variable
    params[1 : 1 + op.n_hyper]       # hyperparameter graphs, in the order of the
                                     # distribution's signature, canonical shapes
    int(params[-1].data)             # d, the number of features (a constant)
    observed_data(model, rv)         # the (n, d) float64 data array

:func:`mixture_spec` returns the same as a named tuple.  Vector hyperparameters
given as scalars are broadcast to length ``d`` in the graph, so evaluating
``params[1 : 1 + op.n_hyper]`` always gives the canonical shapes listed in each
class's ``Notes``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytensor.tensor as pt
from pymc.distributions.dist_math import check_parameters
from pymc.distributions.distribution import Distribution, _support_point
from pymc.logprob.abstract import _logprob
from pytensor.compile.sharedvalue import SharedVariable
from pytensor.graph.basic import Constant, Variable
from pytensor.tensor.random.op import RandomVariable
from scipy.stats import invwishart

from pymc_partitions._validation import (
    check_data_matrix,
    check_dimension,
    check_hyperparameter,
    check_partition_input,
    check_spd_matrix,
    check_static_length,
    check_totals,
)
from pymc_partitions.distributions.cluster_sums import cluster_counts, cluster_sums
# family codes only (the integer identifiers shared with the numba layer); the math here is independent
from pymc_partitions.distributions import defaults
from pymc_partitions.families import (
    BETA_BERNOULLI,
    DIRICHLET_MULTINOMIAL,
    GAMMA_POISSON,
    NORMAL_GAMMA,
    NORMAL_INVERSE_WISHART,
)

__all__ = [
    "BETA_BERNOULLI",
    "NORMAL_GAMMA",
    "NORMAL_INVERSE_WISHART",
    "DIRICHLET_MULTINOMIAL",
    "GAMMA_POISSON",
    "PartitionMixtureRV",
    "PartitionMixture",
    "BetaBernoulliMixture",
    "NormalGammaMixture",
    "NormalInverseWishartMixture",
    "DirichletMultinomialMixture",
    "GammaPoissonMixture",
    "MixtureSpec",
    "mixture_spec",
    "observed_data",
]


_LOG_2PI = float(np.log(2.0 * np.pi))
_LOG_PI = float(np.log(np.pi))


# --------------------------------------------------------------------------- helpers


def _betaln(x, y):
    """``log B(x, y)`` elementwise."""
    return pt.gammaln(x) + pt.gammaln(y) - pt.gammaln(x + y)


def _static_int(var):
    """The Python int value of a constant scalar graph, or the graph itself if unknown."""
    try:
        return int(pt.get_underlying_scalar_constant_value(var))
    except Exception:
        return var


def _as_float(value):
    """``value`` as a float64 tensor."""
    var = pt.as_tensor_variable(value)
    return var if var.dtype == "float64" else pt.cast(var, "float64")


def _feature_vector(name, value, d, **bounds):
    """Validate a hyperparameter that is a scalar or one value per feature; return it as a length-``d`` tensor."""
    check_hyperparameter(name, value, length=d, **bounds)
    check_static_length(name, value, d)
    var = _as_float(value)
    # specify_shape (not broadcast_to) for vectors, so that the static shape is exactly (d,)
    return pt.specify_shape(var, (d,)) if var.type.ndim == 1 else pt.broadcast_to(var, (d,))


def _scalar(name, value, **bounds):
    """Validate a scalar hyperparameter; return it as a float64 0-d tensor."""
    check_hyperparameter(name, value, ndim_max=0, **bounds)
    return _as_float(value)


class MixtureSpec(NamedTuple):
    """What a step method needs to know about an observation model.

    Attributes
    ----------
    family : int
        One of ``BETA_BERNOULLI`` .. ``GAMMA_POISSON``.
    partition : Variable
        The partition variable (first distribution parameter).
    hypers : tuple of Variable
        Hyperparameter graphs in signature order, canonical shapes.
    d : int
        Number of features.
    parameters : tuple of Variable
        Random variables of explicit cluster parameters that a partition step
        moves together with the partition (``NormalMixture``'s ``mu`` and
        ``tau``); empty for the models that integrate them out.
    """

    family: int
    partition: Variable
    hypers: tuple
    d: int
    parameters: tuple = ()


def mixture_spec(rv):
    """Return the :class:`MixtureSpec` of a variable created by one of this module's distributions."""
    op = rv.owner.op
    if not isinstance(op, PartitionMixtureRV):
        raise TypeError(f"rv must be a partition observation model, got a variable of op {op}")
    params = op.dist_params(rv.owner)
    hypers, parameters = op.kernel_inputs(params)
    return MixtureSpec(op.family, params[0], hypers, int(_static_int(params[-1])), parameters)


def observed_data(model, rv):
    """The observed ``(n, d)`` float64 data array of the observed variable ``rv`` of ``model``."""
    data = model.rvs_to_values[rv]
    if isinstance(data, Constant):
        return np.asarray(data.data, dtype=float)
    if isinstance(data, SharedVariable):
        return np.asarray(data.get_value(), dtype=float)
    raise TypeError(f"{rv} is not an observed variable of the model")


# --------------------------------------------------------------------------- RV ops


class PartitionMixtureRV(RandomVariable):
    r"""Base op: ``n x d`` data given a partition, cluster parameters integrated out.

    Distribution parameters are ``(partition, *hypers, *extra, d)``: the label
    vector, ``n_hyper`` hyperparameters in canonical shapes, family-specific
    internal parameters, and the number of features ``d`` (a constant).
    Subclasses provide the family's math through four hooks:

    * :meth:`center` -- the exact location shift before the statistics (for families with ``location``);
    * :meth:`item_stats` -- the additive ``(n, s)`` item sufficient statistics ``t(x_i)``;
    * :meth:`item_log_constant` -- ``sum_i c(x_i)``;
    * :meth:`cluster_log_marginal` -- ``log M(T_k, m_k)`` for every row ``k`` at once;

    plus :meth:`support_conditions` (hyperparameter support), :meth:`draw`
    (forward simulation) and :meth:`support_point_graph`.
    """

    family: int = -1
    n_hyper: int = 0
    #: index among the hyperparameters of the location (mu0) that :meth:`center` moves with the data, or None
    location = None
    dtype = "float64"
    #: evaluate ``cluster_log_marginal`` on occupied rows only (instead of all n rows, masked)
    gather_occupied = False

    # -- shape ------------------------------------------------------------
    def _supp_shape_from_params(self, dist_params, param_shapes=None):
        n = param_shapes[0][0] if param_shapes is not None else dist_params[0].shape[0]
        return (n, dist_params[-1])

    # -- log density --------------------------------------------------------
    def logp_graph(self, value, partition, *params):
        """Exact log marginal likelihood of ``value`` given ``partition`` (a scalar graph)."""
        hypers, d = params[: self.n_hyper], _static_int(params[-1])
        value = _as_float(value)
        conditions = self.support_conditions(d, *hypers)
        value, hypers = self.center(value, hypers)
        item = self.item_stats(value, d)
        counts = cluster_counts(partition)
        cluster = cluster_sums(partition, item)
        if self.gather_occupied:
            # Costly per-cluster math (batched Cholesky, whose Blockwise loops in Python):
            # evaluate the occupied rows only.
            rows = pt.nonzero(pt.gt(counts, 0))[0]
            cluster_total = self.cluster_log_marginal(cluster[rows], counts[rows], d, *hypers).sum()
        else:
            log_marginal = self.cluster_log_marginal(cluster, counts, d, *hypers)
            cluster_total = pt.switch(pt.gt(counts, 0), log_marginal, 0.0).sum()
        total = cluster_total + self.item_log_constant(value)
        return check_parameters(total, *conditions, msg=self.support_message)

    support_message = ""

    def support_conditions(self, d, *hypers):
        """Boolean graphs that are all true inside the hyperparameters' support."""
        return ()

    def center(self, value, hypers):
        """An equivalent ``(value, hypers)``: the data and the location hyperparameter minus the data's column means.

        The families with a location (``location``) are invariant under moving
        both together, so the log density is unchanged, but the per-cluster
        sums are then of centred values: ``sum(x^2) - sum(x)^2/m`` no longer
        cancels for data far from zero (the kernels do the same,
        ``pymc_partitions.families``, "Coordinates").  Unchanged for the others.
        """
        if self.location is None:
            return value, hypers
        shift = value.mean(axis=0)
        hypers = list(hypers)
        hypers[self.location] = hypers[self.location] - shift
        return value - shift, tuple(hypers)

    def item_stats(self, value, d):
        """Additive ``(n, s)`` per-item sufficient statistics."""
        raise NotImplementedError

    def item_log_constant(self, value):
        """Sum over items of the per-item log constant ``c(x_i)`` (default 0)."""
        return pt.constant(0.0, dtype="float64")

    def cluster_log_marginal(self, stats, counts, d, *hypers):
        """``log M`` for every row of the ``(n, s)`` cluster statistics; ``counts`` are the sizes."""
        raise NotImplementedError

    def kernel_inputs(self, params):
        """``(hypers, parameters)`` of :class:`MixtureSpec` from the op's distribution parameters.

        The kernels' hyperparameters are the op's own (``params[1 : 1 + n_hyper]``)
        and there are no parameter variables; ``NormalMixture`` overrides this.
        """
        return tuple(params[1 : 1 + self.n_hyper]), ()

    # -- simulation ---------------------------------------------------------
    def rng_fn(self, rng, partition, *args):
        *params, d, size = args
        if size not in (None, ()):
            raise ValueError(f"{type(self).__name__} does not support batched draws (size={size})")
        labels, inverse = np.unique(np.asarray(partition), return_inverse=True)
        return self.draw(rng, inverse.reshape(-1), labels.shape[0], int(d), *params)

    def draw(self, rng, inverse, n_clusters, d, *params):
        """Draw ``(n, d)`` data: parameters of ``n_clusters`` clusters, then item ``i`` from cluster ``inverse[i]``."""
        raise NotImplementedError

    def support_point_graph(self, partition, *params):
        """A representative ``(n, d)`` value."""
        raise NotImplementedError


@_logprob.register(PartitionMixtureRV)
def _partition_mixture_logprob(op, values, rng, size, *params, **kwargs):
    [value] = values
    return op.logp_graph(value, *params)


@_support_point.register(PartitionMixtureRV)
def _partition_mixture_support_point(op, rv, rng, size, *params):
    return op.support_point_graph(*params)


class BetaBernoulliMixtureRV(PartitionMixtureRV):
    name = "beta_bernoulli_mixture"
    signature = "(n),(d),(d),()->(n,d)"
    _print_name = ("BetaBernoulliMixture", "\\operatorname{BetaBernoulliMixture}")
    family = BETA_BERNOULLI
    n_hyper = 2
    support_message = "a > 0, b > 0"

    def support_conditions(self, d, a, b):
        return (pt.gt(a, 0), pt.gt(b, 0))

    def item_stats(self, value, d):
        return value

    def cluster_log_marginal(self, ones, counts, d, a, b):
        zeros = counts[:, None] - ones
        return (_betaln(a + ones, b + zeros) - _betaln(a, b)).sum(axis=1)

    def draw(self, rng, inverse, n_clusters, d, a, b):
        theta = rng.beta(a, b, size=(n_clusters, d))
        return (rng.random((inverse.shape[0], d)) < theta[inverse]).astype(float)

    def support_point_graph(self, partition, a, b, d):
        return pt.broadcast_to(pt.round(a / (a + b)), (partition.shape[0], d))


class NormalGammaMixtureRV(PartitionMixtureRV):
    name = "normal_gamma_mixture"
    signature = "(n),(d),(d),(d),(d),()->(n,d)"
    _print_name = ("NormalGammaMixture", "\\operatorname{NormalGammaMixture}")
    family = NORMAL_GAMMA
    n_hyper = 4
    support_message = "kappa0 > 0, a0 > 0, b0 > 0"
    location = 0  # mu0

    def support_conditions(self, d, mu0, kappa0, a0, b0):
        return (pt.gt(kappa0, 0), pt.gt(a0, 0), pt.gt(b0, 0))

    def item_stats(self, value, d):
        return pt.concatenate([value, value**2], axis=1)

    def cluster_log_marginal(self, stats, counts, d, mu0, kappa0, a0, b0):
        total, squares = stats[:, :d], stats[:, d:]
        m = counts[:, None]
        mean = total / pt.maximum(m, 1.0)
        kappa_n = kappa0 + m
        a_n = a0 + 0.5 * m
        b_n = b0 + 0.5 * (squares - total * mean) + 0.5 * kappa0 * m * (mean - mu0) ** 2 / kappa_n
        log_m = (
            -0.5 * m * _LOG_2PI
            + 0.5 * (pt.log(kappa0) - pt.log(kappa_n))
            + a0 * pt.log(b0)
            - a_n * pt.log(b_n)
            + pt.gammaln(a_n)
            - pt.gammaln(a0)
        )
        return log_m.sum(axis=1)

    def draw(self, rng, inverse, n_clusters, d, mu0, kappa0, a0, b0):
        lam = rng.gamma(a0, 1.0 / b0, size=(n_clusters, d))
        mu = rng.normal(mu0, 1.0 / np.sqrt(kappa0 * lam))
        return rng.normal(mu[inverse], 1.0 / np.sqrt(lam[inverse]))

    def support_point_graph(self, partition, mu0, kappa0, a0, b0, d):
        return pt.broadcast_to(mu0, (partition.shape[0], d))


def _log_multigamma_ratio(x, x0, d):
    r"""``log Gamma_d(x) - log Gamma_d(x0)`` for a vector ``x`` and scalar ``x0`` (``d`` a Python int).

    A sum of ``d`` elementwise terms rather than a reduction over an axis:
    PyTensor fuses the gradient of the latter (digamma) into a reduction whose
    C code lacks digamma's definition (a compile error in PyTensor 2.38).
    """
    return sum(pt.gammaln(x - 0.5 * j) - pt.gammaln(x0 - 0.5 * j) for j in range(d))


def _chol_logdet(matrices):
    """``log det`` of a (batch of) symmetric positive definite matrices via Cholesky."""
    chol = pt.linalg.cholesky(matrices)
    return 2.0 * pt.log(pt.diagonal(chol, axis1=-2, axis2=-1)).sum(axis=-1), chol


class NormalInverseWishartMixtureRV(PartitionMixtureRV):
    name = "normal_inverse_wishart_mixture"
    signature = "(n),(d),(),(),(d,d),()->(n,d)"
    _print_name = ("NormalInverseWishartMixture", "\\operatorname{NormalInverseWishartMixture}")
    family = NORMAL_INVERSE_WISHART
    n_hyper = 4
    gather_occupied = True
    support_message = "kappa0 > 0, nu0 > d - 1, Psi0 symmetric positive definite"
    location = 0  # mu0

    def support_conditions(self, d, mu0, kappa0, nu0, psi0):
        # The Cholesky reads one triangle only, so symmetry is a condition of its own, with the
        # tolerance of numpy.allclose that the kernels' pack_params applies to the values it reads.
        _, chol = _chol_logdet(psi0)
        symmetric = pt.all(pt.le(pt.abs(psi0 - psi0.T), 1e-8 + 1e-5 * pt.abs(psi0.T)))
        return (pt.gt(kappa0, 0), pt.gt(nu0, d - 1), symmetric, ~pt.any(pt.isnan(chol)))

    def item_stats(self, value, d):
        outer = (value[:, :, None] * value[:, None, :]).reshape((value.shape[0], d * d))
        return pt.concatenate([value, outer], axis=1)

    def cluster_log_marginal(self, stats, counts, d, mu0, kappa0, nu0, psi0):
        n = stats.shape[0]  # number of rows evaluated (occupied clusters)
        total = stats[:, :d]
        squares = stats[:, d:].reshape((n, d, d))
        m = counts
        mean = total / pt.maximum(m, 1.0)[:, None]
        dev = mean - mu0
        kappa_n = kappa0 + m
        nu_n = nu0 + m
        scatter = squares - total[:, :, None] * mean[:, None, :]
        psi_n = psi0 + scatter + (kappa0 * m / kappa_n)[:, None, None] * (dev[:, :, None] * dev[:, None, :])
        logdet_n, _ = _chol_logdet(psi_n)
        logdet_0, _ = _chol_logdet(psi0)
        return (
            -0.5 * d * _LOG_PI * m
            + _log_multigamma_ratio(0.5 * nu_n, 0.5 * nu0, d)
            + 0.5 * nu0 * logdet_0
            - 0.5 * nu_n * logdet_n
            + 0.5 * d * (pt.log(kappa0) - pt.log(kappa_n))
        )

    def draw(self, rng, inverse, n_clusters, d, mu0, kappa0, nu0, psi0):
        sigma = np.reshape(
            invwishart.rvs(df=float(nu0), scale=np.atleast_2d(psi0), size=n_clusters, random_state=rng),
            (n_clusters, d, d),
        )
        chol = np.linalg.cholesky(sigma)
        mu = mu0 + np.einsum("kab,kb->ka", chol, rng.standard_normal((n_clusters, d))) / np.sqrt(kappa0)
        noise = np.einsum("iab,ib->ia", chol[inverse], rng.standard_normal((inverse.shape[0], d)))
        return mu[inverse] + noise

    def support_point_graph(self, partition, mu0, kappa0, nu0, psi0, d):
        return pt.broadcast_to(mu0, (partition.shape[0], d))


class DirichletMultinomialMixtureRV(PartitionMixtureRV):
    name = "dirichlet_multinomial_mixture"
    signature = "(n),(d),(n),()->(n,d)"
    _print_name = ("DirichletMultinomialMixture", "\\operatorname{DirichletMultinomialMixture}")
    family = DIRICHLET_MULTINOMIAL
    n_hyper = 1
    support_message = "beta > 0"

    def support_conditions(self, d, beta):
        return (pt.gt(beta, 0),)

    def item_stats(self, value, d):
        return value

    def item_log_constant(self, value):
        return pt.gammaln(value.sum(axis=1) + 1.0).sum() - pt.gammaln(value + 1.0).sum()

    def cluster_log_marginal(self, counts_kj, sizes, d, beta):
        beta_sum = beta.sum()
        return (
            pt.gammaln(beta_sum)
            - pt.gammaln(beta_sum + counts_kj.sum(axis=1))
            + (pt.gammaln(beta + counts_kj) - pt.gammaln(beta)).sum(axis=1)
        )

    def draw(self, rng, inverse, n_clusters, d, beta, totals):
        theta = rng.dirichlet(beta, size=n_clusters)
        return rng.multinomial(np.asarray(totals, dtype=np.int64), theta[inverse]).astype(float)

    def support_point_graph(self, partition, beta, totals, d):
        return pt.floor(pt.cast(totals, "float64")[:, None] * (beta / beta.sum())[None, :])


class GammaPoissonMixtureRV(PartitionMixtureRV):
    name = "gamma_poisson_mixture"
    signature = "(n),(d),(d),()->(n,d)"
    _print_name = ("GammaPoissonMixture", "\\operatorname{GammaPoissonMixture}")
    family = GAMMA_POISSON
    n_hyper = 2
    support_message = "a > 0, b > 0"

    def support_conditions(self, d, a, b):
        return (pt.gt(a, 0), pt.gt(b, 0))

    def item_stats(self, value, d):
        return value

    def item_log_constant(self, value):
        return -pt.gammaln(value + 1.0).sum()

    def cluster_log_marginal(self, total, counts, d, a, b):
        a_n = a + total
        log_m = a * pt.log(b) - pt.gammaln(a) + pt.gammaln(a_n) - a_n * pt.log(b + counts[:, None])
        return log_m.sum(axis=1)

    def draw(self, rng, inverse, n_clusters, d, a, b):
        lam = rng.gamma(a, 1.0 / b, size=(n_clusters, d))
        return rng.poisson(lam[inverse]).astype(float)

    def support_point_graph(self, partition, a, b, d):
        return pt.broadcast_to(pt.floor(a / b), (partition.shape[0], d))


beta_bernoulli_mixture = BetaBernoulliMixtureRV()
normal_gamma_mixture = NormalGammaMixtureRV()
normal_inverse_wishart_mixture = NormalInverseWishartMixtureRV()
dirichlet_multinomial_mixture = DirichletMultinomialMixtureRV()
gamma_poisson_mixture = GammaPoissonMixtureRV()


# --------------------------------------------------------------------------- distributions


class PartitionMixture(Distribution):
    """Base PyMC distribution for the observation models; handles data, ``partition``, ``d`` and shapes.

    ``observed`` is required when adding the variable to a model; it is
    validated, made 2-D (a 1-D array is one feature per item) and fixes ``d``.
    With ``.dist`` pass ``d`` (or ``shape=(n, d)``) instead.
    """

    _binary = False
    _counts = False
    _defaults = None
    """The function of :mod:`.defaults` that computes this model's default hyperparameters."""

    @classmethod
    def default_hyperparameters(cls, observed):
        """Data-based hyperparameters to start with: keyword arguments for this model.

        The prior of one cluster's parameters is centred on the data and about
        as broad as them (the rule and each model's formulas are in
        :mod:`pymc_partitions.distributions.defaults`).  Use them for a first
        fit; replace them when you know the scale of the clusters you look for.

        Parameters
        ----------
        observed : array (n, d)
            The data the model will observe (validated as ``observed`` is).

        Returns
        -------
        dict
            Hyperparameter name to value (floats or length-d arrays).

        Examples
        --------
        >>> import numpy as np
        >>> import pymc_partitions as pmp
        >>> X = np.array([[0.0, 10.0], [1.0, 14.0], [2.0, 12.0]])
        >>> hyper = pmp.NormalGammaMixture.default_hyperparameters(X)
        >>> hyper["mu0"].tolist(), hyper["b0"].round(3).tolist()
        ([1.0, 12.0], [0.5, 2.0])
        """
        data = check_data_matrix("observed", observed, binary=cls._binary, counts=cls._counts)
        return cls._defaults(data)

    def __new__(cls, name, *args, observed=None, **kwargs):
        if observed is None:
            raise ValueError(f"observed is required for {cls.__name__} (an items x features data matrix)")
        if isinstance(observed, SharedVariable):
            data = check_data_matrix("observed", observed.get_value(), binary=cls._binary, counts=cls._counts)
            if observed.type.ndim != 2:
                raise ValueError("observed pm.Data must be 2-D (items x features); wrap a 1-D array as X[:, None]")
        else:
            observed = data = check_data_matrix("observed", observed, binary=cls._binary, counts=cls._counts)
        return super().__new__(cls, name, *args, observed=observed, _data=data, **kwargs)

    @classmethod
    def _build(cls, partition, make_hypers, *, d=None, shape=None, size=None, _data=None, extra=None, **kwargs):
        """Validate the common inputs, then call ``make_hypers(d)`` and create the variable."""
        if size is not None:
            raise ValueError(f"size is not supported by {cls.__name__}: one draw is the whole n x d data matrix")
        n_items = None
        if _data is not None:
            n_items, data_d = _data.shape
            if d is not None and int(d) != data_d:
                raise ValueError(f"d={d} does not match the {data_d} columns of observed")
            d = data_d
        elif d is None and shape is not None and len(shape) == 2 and isinstance(shape[-1], (int, np.integer)):
            d = int(shape[-1])
        if d is None:
            raise ValueError(f"d (the number of features) is required for {cls.__name__}.dist without observed data")
        d = check_dimension(d)
        if shape is not None:
            shape = tuple(shape)
            if len(shape) != 2 or (isinstance(shape[1], (int, np.integer)) and shape[1] != d):
                raise ValueError(f"shape must be (n, {d}) for {cls.__name__}, got {shape}")
        if n_items is None and shape is not None and isinstance(shape[0], (int, np.integer)):
            n_items = int(shape[0])
        partition = check_partition_input("partition", partition, n_items)
        hypers = make_hypers(d)
        extra = [] if extra is None else list(extra(partition, _data))
        return super().dist([partition, *hypers, *extra, pt.constant(d, dtype="int64")], **kwargs)


class BetaBernoulliMixture(PartitionMixture):
    r"""Binary features, independent Beta-Bernoulli per cluster and feature.

    .. math::

        \theta_{kj} \sim \operatorname{Beta}(a_j, b_j), \qquad
        x_{ij} \mid z_i = k \sim \operatorname{Bernoulli}(\theta_{kj}),

        \log p(X \mid z) = \sum_{k:\, m_k > 0} \sum_{j=1}^d
            \log \frac{B(a_j + S_{kj},\, b_j + m_k - S_{kj})}{B(a_j, b_j)},

    with :math:`S_{kj} = \sum_{i: z_i = k} x_{ij}` and :math:`m_k` the cluster size.

    ``default_hyperparameters(X)`` centres each feature's Beta prior on its
    frequency in the data with the weight of two observations
    (:mod:`~pymc_partitions.distributions.defaults`).

    Parameters
    ----------
    name : str
    partition : integer vector of length n
        Cluster label of each item (a partition prior variable, or fixed labels).
    a, b : scalar or length-d, > 0
        Beta prior parameters (constants or PyMC variables).
    observed : array (n, d) or (n,)
        0/1 data; required.

    Notes
    -----
    Op parameters: ``(partition, a (d,), b (d,), d)``; ``family = BETA_BERNOULLI``.

    Examples
    --------
    >>> import numpy as np, pymc as pm, pytensor.tensor as pt
    >>> import pymc_partitions as pmp
    >>> X = np.array([[1, 0], [1, 1], [0, 0]])
    >>> with pm.Model() as model:
    ...     a = pm.Gamma("a", 2.0, 2.0)
    ...     z = pt.as_tensor(np.array([0, 0, 2]))
    ...     x = pmp.BetaBernoulliMixture("x", partition=z, a=a, b=1.0, observed=X)
    >>> # a = 1: log(1/72) from the data plus log Gamma(1 | 2, 2) from the prior on a
    >>> round(float(model.compile_logp()({"a_log__": 0.0})), 4)
    -4.8904
    """

    rv_op = beta_bernoulli_mixture
    _defaults = staticmethod(defaults.beta_bernoulli)
    _binary = True

    @classmethod
    def dist(cls, partition, a=1.0, b=1.0, **kwargs):
        def hypers(d):
            return (_feature_vector("a", a, d, lower=0), _feature_vector("b", b, d, lower=0))

        return cls._build(partition, hypers, **kwargs)


class NormalGammaMixture(PartitionMixture):
    r"""Real features, independent Normal-Gamma per cluster and feature (diagonal Gaussian).

    .. math::

        \lambda_{kj} \sim \operatorname{Gamma}(a_{0j}, \text{rate } b_{0j}), \quad
        \mu_{kj} \mid \lambda_{kj} \sim N(\mu_{0j}, (\kappa_{0j}\lambda_{kj})^{-1}), \quad
        x_{ij} \mid z_i = k \sim N(\mu_{kj}, \lambda_{kj}^{-1}),

        \log p(X \mid z) = \sum_{k:\, m_k > 0} \sum_j \Big[
            -\tfrac{m_k}{2}\log 2\pi + \tfrac12 \log\tfrac{\kappa_0}{\kappa_n}
            + a_0 \log b_0 - a_n \log b_n + \log\Gamma(a_n) - \log\Gamma(a_0) \Big],

    with :math:`\kappa_n = \kappa_0 + m_k`, :math:`a_n = a_0 + m_k/2`,
    :math:`b_n = b_0 + \tfrac12 \sum_{i \in k} (x_{ij} - \bar x_{kj})^2
    + \kappa_0 m_k (\bar x_{kj} - \mu_0)^2 / (2\kappa_n)`
    (Murphy 2007, "Conjugate Bayesian analysis of the Gaussian distribution").

    ``default_hyperparameters(X)`` centres the prior on the data's means, with
    a cluster variance of prior mean the data's variance and ``kappa0 = 0.1``
    (:mod:`~pymc_partitions.distributions.defaults`).

    Parameters
    ----------
    name : str
    partition : integer vector of length n
    mu0 : scalar or length-d
    kappa0, a0, b0 : scalar or length-d, > 0
    observed : array (n, d) or (n,)

    Notes
    -----
    Op parameters: ``(partition, mu0 (d,), kappa0 (d,), a0 (d,), b0 (d,), d)``;
    ``family = NORMAL_GAMMA``.

    Examples
    --------
    >>> import numpy as np, pymc as pm, pytensor.tensor as pt
    >>> import pymc_partitions as pmp
    >>> X = np.array([[0.1, 2.0], [0.3, 1.5], [5.0, -1.0]])
    >>> with pm.Model() as model:
    ...     z = pt.as_tensor(np.array([0, 0, 1]))
    ...     x = pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=0.1, a0=2.0, b0=1.0, observed=X)
    >>> round(float(model.compile_logp()({})), 4)
    -11.6125
    """

    rv_op = normal_gamma_mixture
    _defaults = staticmethod(defaults.normal_gamma)

    @classmethod
    def dist(cls, partition, mu0=0.0, kappa0=1.0, a0=1.0, b0=1.0, **kwargs):
        def hypers(d):
            return (
                _feature_vector("mu0", mu0, d),
                _feature_vector("kappa0", kappa0, d, lower=0),
                _feature_vector("a0", a0, d, lower=0),
                _feature_vector("b0", b0, d, lower=0),
            )

        return cls._build(partition, hypers, **kwargs)


class NormalInverseWishartMixture(PartitionMixture):
    r"""Real vectors, full-covariance Gaussian clusters with a Normal-inverse-Wishart prior.

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
    The determinants use a batched Cholesky, so the graph is differentiable in
    ``mu0``, ``kappa0``, ``nu0`` and ``Psi0``.

    ``default_hyperparameters(X)`` centres the prior on the data's mean, with
    ``nu0 = d + 2``, ``Psi0`` the data's covariance (the prior mean of a
    cluster's covariance) and ``kappa0 = 0.1``
    (:mod:`~pymc_partitions.distributions.defaults`).

    Parameters
    ----------
    name : str
    partition : integer vector of length n
    mu0 : scalar or length-d
    kappa0 : scalar > 0
    nu0 : scalar > d - 1
    Psi0 : (d, d) symmetric positive definite
    observed : array (n, d) or (n,)

    Notes
    -----
    Op parameters: ``(partition, mu0 (d,), kappa0 (), nu0 (), Psi0 (d, d), d)``;
    ``family = NORMAL_INVERSE_WISHART``.

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

    rv_op = normal_inverse_wishart_mixture
    _defaults = staticmethod(defaults.normal_inverse_wishart)

    @classmethod
    def dist(cls, partition, mu0=0.0, kappa0=1.0, nu0=None, Psi0=None, **kwargs):
        def hypers(d):
            nu = d + 1.0 if nu0 is None else nu0
            psi = np.eye(d) if Psi0 is None else Psi0
            check_spd_matrix("Psi0", psi, d)
            return (
                _feature_vector("mu0", mu0, d),
                _scalar("kappa0", kappa0, lower=0),
                _scalar("nu0", nu, lower=d - 1),
                pt.specify_shape(_as_float(psi), (d, d)),
            )

        return cls._build(partition, hypers, **kwargs)


class DirichletMultinomialMixture(PartitionMixture):
    r"""Count vectors (e.g. documents), one Dirichlet-multinomial per cluster.

    .. math::

        \theta_k \sim \operatorname{Dirichlet}(\beta), \quad
        x_i \mid z_i = k \sim \operatorname{Multinomial}(N_i, \theta_k), \quad N_i = \textstyle\sum_j x_{ij},

        \log p(X \mid z) = \sum_i \Big[\log N_i! - \sum_j \log x_{ij}!\Big]
            + \sum_{k:\, m_k > 0} \Big[ \log\Gamma(B) - \log\Gamma(B + C_k)
            + \sum_j \big(\log\Gamma(\beta_j + C_{kj}) - \log\Gamma(\beta_j)\big) \Big],

    with :math:`B = \sum_j \beta_j`, :math:`C_{kj} = \sum_{i \in k} x_{ij}`,
    :math:`C_k = \sum_j C_{kj}`.  The multinomial coefficients are included.

    ``default_hyperparameters(X)`` sets ``beta`` to the smoothed word
    frequencies of the whole corpus times ``d``
    (:mod:`~pymc_partitions.distributions.defaults`).

    Parameters
    ----------
    name : str
    partition : integer vector of length n
    beta : scalar or length-d, > 0
    observed : array (n, d) or (n,) of non-negative integer counts
    totals : integer vector of length n, optional
        Row totals :math:`N_i` used only when *drawing* data (prior/posterior
        predictive).  Defaults to the row sums of ``observed``; required with
        ``.dist`` when there is no observed data.  The log density always uses
        the row sums of the value it is evaluated at.

    Notes
    -----
    Op parameters: ``(partition, beta (d,), totals (n,), d)``; ``family = DIRICHLET_MULTINOMIAL``.

    Examples
    --------
    >>> import numpy as np, pymc as pm, pytensor.tensor as pt
    >>> import pymc_partitions as pmp
    >>> X = np.array([[3, 0, 1], [2, 1, 0], [0, 0, 5]])
    >>> with pm.Model() as model:
    ...     z = pt.as_tensor(np.array([1, 1, 0]))
    ...     x = pmp.DirichletMultinomialMixture("x", partition=z, beta=0.5, observed=X)
    >>> round(float(model.compile_logp()({})), 4)
    -7.5839
    """

    rv_op = dirichlet_multinomial_mixture
    _defaults = staticmethod(defaults.dirichlet_multinomial)
    _counts = True

    @classmethod
    def dist(cls, partition, beta=1.0, totals=None, **kwargs):
        def hypers(d):
            return (_feature_vector("beta", beta, d, lower=0),)

        def extra(partition, data):
            if totals is not None:
                values = check_totals("totals", totals, partition.type.shape[0] if data is None else data.shape[0])
            elif data is not None:
                values = data.sum(axis=1)
            else:
                raise ValueError("totals (the row totals N_i used for draws) is required without observed data")
            return (pt.constant(values.astype(np.int64)),)

        return cls._build(partition, hypers, extra=extra, **kwargs)


class GammaPoissonMixture(PartitionMixture):
    r"""Count features, independent Gamma-Poisson per cluster and feature.

    .. math::

        \lambda_{kj} \sim \operatorname{Gamma}(a_j, \text{rate } b_j), \quad
        x_{ij} \mid z_i = k \sim \operatorname{Poisson}(\lambda_{kj}),

        \log p(X \mid z) = -\sum_{i,j}\log x_{ij}! + \sum_{k:\, m_k > 0}\sum_j \Big[
            a_j\log b_j - \log\Gamma(a_j) + \log\Gamma(a_j + S_{kj}) - (a_j + S_{kj})\log(b_j + m_k) \Big],

    with :math:`S_{kj} = \sum_{i \in k} x_{ij}`.

    ``default_hyperparameters(X)`` gives each rate an exponential prior
    (``a = 1``) whose mean is the feature's mean count
    (:mod:`~pymc_partitions.distributions.defaults`).

    Parameters
    ----------
    name : str
    partition : integer vector of length n
    a, b : scalar or length-d, > 0
    observed : array (n, d) or (n,) of non-negative integer counts

    Notes
    -----
    Op parameters: ``(partition, a (d,), b (d,), d)``; ``family = GAMMA_POISSON``.

    Examples
    --------
    >>> import numpy as np, pymc as pm, pytensor.tensor as pt
    >>> import pymc_partitions as pmp
    >>> X = np.array([3, 4, 0, 1])
    >>> with pm.Model() as model:
    ...     z = pt.as_tensor(np.array([0, 0, 3, 3]))
    ...     x = pmp.GammaPoissonMixture("x", partition=z, a=2.0, b=1.0, observed=X)
    >>> round(float(model.compile_logp()({})), 4)
    -6.8554
    """

    rv_op = gamma_poisson_mixture
    _defaults = staticmethod(defaults.gamma_poisson)
    _counts = True

    @classmethod
    def dist(cls, partition, a=1.0, b=1.0, **kwargs):
        def hypers(d):
            return (_feature_vector("a", a, d, lower=0), _feature_vector("b", b, d, lower=0))

        return cls._build(partition, hypers, **kwargs)
