r"""Conjugate observation models given a partition, as PyMC distributions, built from the families' specs.

Each distribution here is the law of an ``n x d`` data matrix ``X`` given a
vector of cluster labels ``z`` (one per item, values in ``0 .. n-1``), with the
cluster parameters integrated out.  Its ``logp`` is the exact log marginal
likelihood

.. math::

    \log p(X \mid z, \eta) = \sum_i c(x_i) + \sum_{k:\, m_k > 0} \log M(T_k, m_k; \eta),
    \qquad T_k = \sum_{i:\, z_i = k} t(x_i), \quad m_k = \#\{i : z_i = k\},

where ``t`` are additive per-item sufficient statistics, ``c`` a per-item
constant, ``M`` the family's cluster marginal likelihood and ``\eta`` the
hyperparameters (constants or PyMC random variables).

**Coarsening.**  With ``coarsening=c`` every item's likelihood is raised to
:math:`\zeta = c / (c + n)` (Miller & Dunson 2019, the c-posterior): for these
conjugate families the log density is the same formula with every statistic
weighted by :math:`\zeta`, :math:`\zeta \sum_i c(x_i) + \sum_k \log M(\zeta T_k, \zeta m_k; \eta)`
(``M`` is valid for real "effective counts"; ``docs/exactness.md``, "Coarsened
posteriors").  :math:`\zeta` is the op's parameter before ``d``; draws
(``pm.sample_prior_predictive``) are those of the ordinary model.  The sum is computed in
PyTensor without loops: the item statistics are summed per label into a
``K x s`` array (``cluster_sums``, ``K = max(z) + 1``; a family whose item
statistics are large builds that array itself, ``graph_cluster_stats``: the
Normal-inverse-Wishart's ``d²`` second moments are one matrix product per
cluster), ``M`` is evaluated on
every row at once and rows with ``m_k = 0`` are masked (``pt.switch``) to
contribute exactly 0 (families that set ``GATHER_OCCUPIED``, the
Normal-inverse-Wishart, evaluate the occupied rows only).  The graph is
differentiable in the hyperparameters, so NUTS can move them.

**One class for every family.**  :class:`PartitionMixtureRV` and
:class:`PartitionMixture` are written once; every additive family of
``pymc_partitions.registry`` gets its op and distribution class from its
module's spec (``families.spec``: the hyperparameters in signature order,
their shapes, supports and defaults, the data they observe) and its PyTensor
math (``graph_item_stats`` or ``graph_cluster_stats``,
``graph_cluster_log_marginal``, optional ``graph_item_log_constant``,
``graph_support_point``, ``simulate`` and the
class docstring ``DOC``).  The Infinite Relational Model and ``NormalMixture``
subclass the two bases with a log density of their own
(``distributions.relational``, ``distributions.nonconjugate``).

Reading a model's observation model (for step methods): :func:`mixture_spec`
returns the family code, the partition, the hyperparameter graphs the kernels
read (canonical shapes, ``pack_params`` order), ``d`` and any explicit cluster
parameters; :func:`observed_data` the observed ``(n, d)`` array.
"""

from __future__ import annotations

import inspect
import warnings
from typing import NamedTuple

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from pymc.distributions.dist_math import check_parameters
from pymc.distributions.transforms import Interval
from pymc.distributions.distribution import Distribution, _support_point
from pymc.logprob.abstract import _logprob
from pytensor.compile.sharedvalue import SharedVariable
from pytensor.graph.basic import Constant, Variable
from pytensor.tensor.random.op import RandomVariable

from pymc_partitions import families
from pymc_partitions._dispatch import ADDITIVE
from pymc_partitions._validation import (
    check_categories,
    check_coarsening,
    check_covariates,
    check_data_matrix,
    check_dimension,
    check_hyperparameter,
    check_partition_input,
    check_spd_matrix,
    check_static_length,
    check_totals,
    coarsening_power,
    constant_value,
)
from pymc_partitions.distributions.cluster_sums import cluster_counts, cluster_sums
from pymc_partitions.distributions.observed import check_forward_draw
from pymc_partitions.families.spec import (
    ADJACENCY, BINARY, CATEGORIES, CODES, COEFFICIENT_MATRIX, COEFFICIENTS, COUNT, COUNTS, COVARIATES, FEATURE, ITEMS,
    MATRIX, SCALAR,
)

__all__ = [
    "PartitionMixtureRV",
    "PartitionMixture",
    *(name for code, name in enumerate(families.CLASS_NAMES) if families.SPECS[code].kind == ADDITIVE),
    "MixtureSpec",
    "mixture_spec",
    "observed_data",
]


# --------------------------------------------------------------------------- helpers


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


_SIGNATURES = {
    FEATURE: "(d)", SCALAR: "()", MATRIX: "(d,d)", COUNT: "()", CATEGORIES: "(d)", ITEMS: "(n)", COEFFICIENTS: "(p)",
    COEFFICIENT_MATRIX: "(p,p)", COVARIATES: "(n,p)",
}


def hyper_graph(hyper, value, d, n_items=None):
    """The validated graph of hyperparameter ``hyper`` (``families.spec.Hyper``) with ``value`` for ``d`` features.

    Constants are checked against the support (a ``ValueError`` naming the
    hyperparameter); random variables only for their shape (outside the
    support the log density is ``-inf``).  Canonical shapes: ``(d,)`` for
    :data:`FEATURE` (a scalar is broadcast) and :data:`CATEGORIES`, ``()``,
    ``(d, d)``, ``(n,)`` for :data:`ITEMS`.  Integer shapes must be constants.
    """
    name = hyper.name
    if hyper.shape == FEATURE:
        check_hyperparameter(name, value, length=d, lower=hyper.bound(d))
        check_static_length(name, value, d)
        var = _as_float(value)
        # specify_shape (not broadcast_to) for vectors, so that the static shape is exactly (d,)
        return pt.specify_shape(var, (d,)) if var.type.ndim == 1 else pt.broadcast_to(var, (d,))
    if hyper.shape == SCALAR:
        check_hyperparameter(name, value, ndim_max=0, lower=hyper.bound(d))
        return _as_float(value)
    if hyper.shape == MATRIX:
        check_spd_matrix(name, value, d)
        return pt.specify_shape(_as_float(value), (d, d))
    if hyper.shape == COEFFICIENTS:
        check_hyperparameter(name, value, length=d - 1, lower=hyper.bound(d))
        check_static_length(name, value, d - 1)
        var = _as_float(value)
        return pt.specify_shape(var, (d - 1,)) if var.type.ndim == 1 else pt.broadcast_to(var, (d - 1,))
    if hyper.shape == COEFFICIENT_MATRIX:
        check_spd_matrix(name, value, d - 1)
        return pt.specify_shape(_as_float(value), (d - 1, d - 1))
    if hyper.shape == COVARIATES:
        if value is None:
            raise ValueError(f"{name} is required: the (n, p) design matrix (data)")
        return pt.constant(check_covariates(name, value, n_items))
    if hyper.shape == CATEGORIES:
        return pt.constant(check_categories(name, value, d))
    if hyper.shape == ITEMS:
        return pt.constant(check_totals(name, value, n_items))
    raise ValueError(f"{name}: a {hyper.shape} hyperparameter has no graph")  # COUNT: NormalMixture's own


class MixtureSpec(NamedTuple):
    """What a step method needs to know about an observation model.

    Attributes
    ----------
    family : int
        The family's code (``families``).
    partition : Variable
        The partition variable (first distribution parameter).
    hypers : tuple of Variable
        The graphs of the hyperparameters the kernels read, in ``pack_params`` order, canonical shapes.
    d : int
        Number of features.
    parameters : tuple of Variable
        Random variables of explicit cluster parameters that a partition step
        moves together with the partition (``NormalMixture``'s ``mu`` and
        ``tau``); empty for the models that integrate them out.
    zeta : float
        The power of every item's likelihood (``coarsening=c``: ``c / (c + n)``; 1 without coarsening).
    """

    family: int
    partition: Variable
    hypers: tuple
    d: int
    parameters: tuple = ()
    zeta: float = 1.0


def mixture_spec(rv):
    """Return the :class:`MixtureSpec` of a variable created by one of the package's observation models."""
    op = rv.owner.op
    if not isinstance(op, PartitionMixtureRV):
        raise TypeError(f"rv must be a partition observation model, got a variable of op {op}")
    params = op.dist_params(rv.owner)
    hypers, parameters = op.kernel_inputs(params)
    zeta = float(constant_value(params[-2]))
    return MixtureSpec(op.family, params[0], hypers, int(_static_int(params[-1])), parameters, zeta)


def observed_data(model, rv):
    """The observed ``(n, d)`` float64 data array of the observed variable ``rv`` of ``model``."""
    data = model.rvs_to_values[rv]
    if isinstance(data, Constant):
        return np.asarray(data.data, dtype=float)
    if isinstance(data, SharedVariable):
        return np.asarray(data.get_value(), dtype=float)
    raise TypeError(f"{rv} is not an observed variable of the model")


# --------------------------------------------------------------------------- the op


class PartitionMixtureRV(RandomVariable):
    r"""Base op: ``n x d`` data given a partition, cluster parameters integrated out.

    Distribution parameters are ``(partition, *hypers, zeta, d)``: the label
    vector, the hyperparameters of the family's spec in canonical shapes, the
    power ``zeta`` of every item's likelihood (a constant in (0, 1],
    ``coarsening``) and the number of features ``d`` (a constant).  The family's math comes from its
    module (``math``: ``graph_*`` functions and ``simulate``), the support of
    the hyperparameters from its spec (``spec``).
    """

    family: int = -1
    spec = None
    math = None
    dtype = "float64"

    # -- shape ------------------------------------------------------------
    def _supp_shape_from_params(self, dist_params, param_shapes=None):
        n = param_shapes[0][0] if param_shapes is not None else dist_params[0].shape[0]
        return (n, dist_params[-1])

    # -- log density --------------------------------------------------------
    def logp_graph(self, value, partition, *params):
        """Exact log marginal likelihood of ``value`` given ``partition`` (a scalar graph); coarsened, the
        statistics, sizes and per-item constants weighted by ``zeta`` (module docstring)."""
        hypers, zeta, d = params[:-2], params[-2], _static_int(params[-1])
        value = _as_float(value)
        conditions = self.support_conditions(d, hypers)
        value, hypers = self.center(value, hypers)
        counts = cluster_counts(partition)
        if hasattr(self.math, "graph_cluster_stats"):
            cluster = zeta * self.math.graph_cluster_stats(partition, value, d)
        else:
            cluster = zeta * cluster_sums(partition, self.math.graph_item_stats(value, d, *hypers))
        if getattr(self.math, "GATHER_OCCUPIED", False):
            rows = pt.nonzero(pt.gt(counts, 0))[0]
            cluster_total = self.math.graph_cluster_log_marginal(cluster[rows], zeta * counts[rows], d, *hypers).sum()
        else:
            log_marginal = self.math.graph_cluster_log_marginal(cluster, zeta * counts, d, *hypers)
            cluster_total = pt.switch(pt.gt(counts, 0), log_marginal, 0.0).sum()
        item_constant = getattr(self.math, "graph_item_log_constant", None)
        total = cluster_total + (0.0 if item_constant is None else zeta * item_constant(value))
        return check_parameters(total, *conditions, msg=self.spec.support_message())

    def support_conditions(self, d, hypers):
        """Boolean graphs that are all true inside the hyperparameters' support (from the spec)."""
        conditions = []
        for hyper, value in zip(self.spec.hypers, hypers):
            if hyper.shape in (MATRIX, COEFFICIENT_MATRIX):
                # the Cholesky reads one triangle only, so symmetry is a condition of its own, with the
                # tolerance of numpy.allclose that the kernels' pack_params applies
                chol = pt.linalg.cholesky(value)
                conditions += [pt.all(pt.le(pt.abs(value - value.T), 1e-8 + 1e-5 * pt.abs(value.T))), ~pt.any(pt.isnan(chol))]
            elif hyper.shape in (FEATURE, SCALAR) and hyper.lower is not None:
                conditions.append(pt.gt(value, hyper.bound(d)))
        return conditions

    def center(self, value, hypers):
        """An equivalent ``(value, hypers)``: the data and the location hyperparameter minus the data's column means.

        The families with a location (a spec hyperparameter with ``location``)
        are invariant under moving both together, so the log density is
        unchanged, but the per-cluster sums are then of centred values:
        ``sum(x^2) - sum(x)^2/m`` no longer cancels for data far from zero
        (the kernels do the same, ``pymc_partitions.families``, "Coordinates").
        Unchanged for the others.
        """
        where = [q for q, hyper in enumerate(self.spec.hypers) if hyper.location]
        if not where:
            return value, hypers
        shift = value.mean(axis=0)
        hypers = list(hypers)
        hypers[where[0]] = hypers[where[0]] - shift
        return value - shift, tuple(hypers)

    def kernel_inputs(self, params):
        """``(hypers, parameters)`` of :class:`MixtureSpec` from the op's distribution parameters: the graphs of the
        spec's kernel hyperparameters, and no parameter variables (``NormalMixture`` overrides this)."""
        hypers = params[1:-2]
        return tuple(value for hyper, value in zip(self.spec.hypers, hypers) if hyper.kernel), ()

    # -- simulation ---------------------------------------------------------
    def rng_fn(self, rng, partition, *args):
        """A forward draw: each cluster's parameters from their prior, then the items (``draw``); under
        ``pm.sample_posterior_predictive`` also repairs the model and warns (``distributions.observed``)."""
        check_forward_draw(self, integrates_out=True)
        *params, zeta, d, size = args  # the ordinary model's draws (zeta weighs the likelihood only)
        if size not in (None, ()):
            raise ValueError(f"{type(self).__name__} does not support batched draws (size={size})")
        labels, inverse = np.unique(np.asarray(partition), return_inverse=True)
        return self.draw(rng, inverse.reshape(-1), labels.shape[0], int(d), *params)

    def draw(self, rng, inverse, n_clusters, d, *params):
        """Draw ``(n, d)`` data: parameters of ``n_clusters`` clusters, then item ``i`` from cluster ``inverse[i]``."""
        return self.math.simulate(rng, inverse, n_clusters, d, *params)

    def support_point_graph(self, partition, *params):
        """A representative ``(n, d)`` value."""
        *hypers, zeta, d = params
        return self.math.graph_support_point(partition, _static_int(d), *hypers)


@_logprob.register(PartitionMixtureRV)
def _partition_mixture_logprob(op, values, rng, size, *params, **kwargs):
    [value] = values
    return op.logp_graph(value, *params)


@_support_point.register(PartitionMixtureRV)
def _partition_mixture_support_point(op, rv, rng, size, *params):
    return op.support_point_graph(*params)


# --------------------------------------------------------------------------- distributions


_DATA_CHECKS = {BINARY: dict(binary=True), COUNTS: dict(counts=True), CODES: dict(counts=True), ADJACENCY: dict(binary=True)}
"""``check_data_matrix`` options by the data a spec observes (real data: none)."""


class PartitionMixture(Distribution):
    """Base PyMC distribution for the observation models; handles data, ``partition``, ``d``, shapes and
    ``coarsening``.

    ``observed`` is required when adding the variable to a model; it is
    validated, made 2-D (a 1-D array is one feature per item) and fixes ``d``.
    With ``.dist`` pass ``d`` (or ``shape=(n, d)``) instead.

    ``coarsening=c`` (a number > 0; default ``None``, no coarsening) raises
    every item's likelihood to ``zeta = c / (c + n)`` (:meth:`observation_count`
    observations; Miller & Dunson 2019, "Robust Bayesian inference via
    coarsening", JASA 114:1113): the c-posterior, which no longer adds
    clusters to fit the data's departures from the cluster model once ``n``
    exceeds about ``c`` (``docs/defaults.md``, "When to coarsen";
    ``calibrate_coarsening`` chooses ``c``).  The partition steps sample the
    same coarsened posterior.
    """

    spec = None
    """The family's spec (``families.spec.FamilySpec``)."""

    @classmethod
    def _check_data(cls, data):
        return check_data_matrix("observed", data, **_DATA_CHECKS.get(cls.spec.data, {}))

    @classmethod
    def default_hyperparameters(cls, observed, covariates=None):
        """Data-based hyperparameters to start with: keyword arguments for this model.

        The prior of one cluster's parameters is centred on the data and about
        as broad as them (each family module's ``default_hyperparameters``
        states its rule).  Use them for a first fit; replace them when you know
        the scale of the clusters you look for.

        Parameters
        ----------
        observed : array (n, d)
            The data the model will observe (validated as ``observed`` is).
        covariates : array (n, p), optional
            The design matrix, for the models that take one (``NormalLinearRegressionMixture``).

        Returns
        -------
        dict
            Hyperparameter name to value (floats or arrays).

        Examples
        --------
        >>> import numpy as np
        >>> import pymc_partitions as pmp
        >>> X = np.array([[0.0, 10.0], [1.0, 14.0], [2.0, 12.0]])
        >>> hyper = pmp.NormalGammaMixture.default_hyperparameters(X)
        >>> hyper["mu0"].tolist(), hyper["b0"].round(3).tolist()
        ([1.0, 12.0], [0.5, 2.0])
        """
        return cls.spec.defaults(cls._check_data(_with_covariates(cls, observed, covariates)))

    @classmethod
    def with_default_priors(cls, name, partition, observed, **kwargs):
        r"""The observation model with its learned default: hyperpriors on the hyperparameters that decide how
        readily clusters open, centred on the data-based values of :meth:`default_hyperparameters`.

        Call it inside a model context.  It creates one PyMC variable
        ``f"{name}_{param}"`` for each learned hyperparameter ``param`` of the
        family (``families.spec.Learned``: a value ``v`` with
        :math:`\log(v - \text{lower}) \sim N(\log(\text{median} - \text{lower}), \sigma)`,
        the median the data-based value, :math:`\sigma = 1`), then the
        observed variable ``name`` with every hyperparameter set from them
        (each family module's ``default_hyperpriors`` states its rule;
        ``docs/defaults.md`` explains the choices), and returns the observed
        variable.  PyMC samples the new variables beside the partition (NUTS,
        or a population step's slice sampler).

        Parameters
        ----------
        name : str
            The observed variable; the hyperprior variables are named after it.
        partition : partition variable or integer vector of length n
        observed : array or pm.Data
            The data (validated as for the class itself); its current values
            set the centres of the hyperpriors.
        **kwargs
            A learned hyperparameter's name with a number fixes it there (or a
            PyMC variable gives it your own prior) instead of learning it with
            the default hyperprior; other keywords go to the distribution
            (e.g. ``dims``).  The hyperparameters themselves are set by the
            learned ones: to choose them, build the model with
            :meth:`default_hyperparameters` instead.

        Returns
        -------
        TensorVariable
            The observed variable.

        Examples
        --------
        >>> import numpy as np, pymc as pm
        >>> import pymc_partitions as pmp
        >>> X = np.random.default_rng(0).normal(size=(20, 2))
        >>> with pm.Model() as model:
        ...     z = pmp.DirichletProcessPartition("z", alpha=1.0, n=20)
        ...     x = pmp.NormalInverseWishartMixture.with_default_priors("x", partition=z, observed=X)
        >>> sorted(rv.name for rv in model.free_RVs)
        ['x_kappa0', 'x_nu0', 'x_scale', 'z']
        """
        return _with_default_priors(cls, name, partition, observed, kwargs)

    def __new__(cls, name, *args, observed=None, **kwargs):
        if observed is None:
            raise ValueError(f"observed is required for {cls.__name__} (an items x features data matrix)")
        if _covariates_hyper(cls) is not None:
            observed = _with_covariates(cls, observed, kwargs.get(_covariates_hyper(cls).name))
        if isinstance(observed, SharedVariable):
            data = cls._check_data(observed.get_value())
            if observed.type.ndim != 2:
                raise ValueError("observed pm.Data must be 2-D (items x features); wrap a 1-D array as X[:, None]")
        else:
            observed = data = cls._check_data(observed)
        _warn_if_transposed(cls, name, data)
        return super().__new__(cls, name, *args, observed=observed, _data=data, **kwargs)

    @classmethod
    def dist(cls, partition, *args, **kwargs):
        """The distribution of the data given ``partition``; the hyperparameters in the order of the class's
        signature, by position or by name (defaults from the spec)."""
        names = [hyper.name for hyper in cls.spec.hypers]
        if len(args) > len(names):
            raise TypeError(f"{cls.__name__}.dist takes at most {len(names)} hyperparameters, got {len(args)}")
        values = dict(zip(names, args))
        for name in names[len(args) :]:
            if name in kwargs:
                values[name] = kwargs.pop(name)

        def hypers(d, data, n_items):
            graphs = []
            for hyper in cls.spec.hypers:
                value = values.get(hyper.name, hyper.default)
                if value is None and callable(hyper.default):  # None asks for the computed default
                    value = hyper.default
                if callable(value):
                    value = value(d, data)
                    if value is None:
                        raise ValueError(f"{hyper.name} is required for {cls.__name__}.dist without observed data")
                graphs.append(hyper_graph(hyper, value, d, n_items))
            return graphs

        return cls._build(partition, hypers, **kwargs)

    @classmethod
    def observation_count(cls, n_items):
        """The number of observations whose likelihoods ``coarsening`` raises to ``zeta``: the ``n`` items."""
        return n_items

    @classmethod
    def _build(cls, partition, make_hypers, *, d=None, shape=None, size=None, _data=None, coarsening=None, **kwargs):
        """Validate the common inputs, then call ``make_hypers(d, data, n_items)`` and create the variable."""
        coarsening = check_coarsening(coarsening)
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
        if n_items is None and partition.type.shape[0] is not None:
            n_items = int(partition.type.shape[0])
        hypers = make_hypers(d, _data, n_items)
        cls._check_data_against(_data, hypers)
        zeta = 1.0
        if coarsening is not None:
            if n_items is None:
                raise ValueError(
                    f"coarsening needs the number of items n (zeta = c / (c + n)): give {cls.__name__}.dist a "
                    "partition of known length or shape=(n, ...)"
                )
            zeta = coarsening_power(coarsening, cls.observation_count(n_items))
        return super().dist(
            [partition, *hypers, pt.constant(zeta, dtype="float64"), pt.constant(d, dtype="int64")], **kwargs
        )

    @classmethod
    def _check_data_against(cls, data, hypers):
        """Codes must lie below their feature's number of categories (the categorical family)."""
        if data is None:
            return
        for hyper, graph in zip(cls.spec.hypers, hypers):
            if hyper.shape == CATEGORIES:
                limit = constant_value(graph)
                if np.any(data >= limit[None, :]):
                    column = int(np.flatnonzero(np.any(data >= limit[None, :], axis=0))[0])
                    raise ValueError(
                        f"observed codes of feature {column} reach {int(data[:, column].max())}, but "
                        f"{hyper.name}[{column}] = {int(limit[column])}: codes must lie in 0 .. {hyper.name} - 1"
                    )


_FEATURES_MAY_OUTNUMBER_ITEMS = (COUNTS, ADJACENCY)
"""Data whose features routinely outnumber the items: word counts (a vocabulary), a network's adjacency (square)."""


def _warn_if_transposed(cls, name, data):
    """A ``UserWarning`` naming the shapes when ``data`` has more features (columns) than items (rows), which for
    the families of other data usually means it was transposed: ``X.T`` of 272 items x 2 features is 2 items of 272
    features, and a full-covariance model of 272 dimensions fitted to 2 items runs for minutes to say K = 1."""
    n, d = data.shape
    if d > n and cls.spec.data not in _FEATURES_MAY_OUTNUMBER_ITEMS:
        warnings.warn(
            f"{cls.__name__} {name!r}: observed has {n} items (rows) and {d} features (columns), more features "
            f"than items; if the data are transposed, pass one row per item (X.T) and n={d} to the partition prior",
            UserWarning,
            stacklevel=4,
        )


def _covariates_hyper(cls):
    """The spec's design-matrix hyperparameter (``families.spec.COVARIATES``), or ``None``."""
    return next((hyper for hyper in cls.spec.hypers if hyper.shape == COVARIATES), None)


def _with_covariates(cls, observed, covariates):
    """The observed value of a model with a design matrix: ``column_stack([y, covariates])`` from the responses
    ``observed`` (n,) or (n, 1); ``observed`` unchanged for the other models (``covariates`` must then be ``None``)."""
    hyper = _covariates_hyper(cls)
    if hyper is None:
        if covariates is not None:
            raise TypeError(f"{cls.__name__} takes no covariates")
        return observed
    if covariates is None:
        raise ValueError(f"{hyper.name} is required for {cls.__name__}: the (n, p) design matrix (data)")
    if isinstance(observed, SharedVariable):
        raise TypeError(f"observed must be an array of responses for {cls.__name__}, not pm.Data")
    response = check_data_matrix("observed", observed)
    if response.shape[1] != 1:
        raise ValueError(f"observed must be the n responses, shape (n,) or (n, 1), got {response.shape}")
    design = check_covariates(hyper.name, covariates, response.shape[0])
    return np.column_stack([response, design])


def _with_default_priors(cls, name, partition, observed, kwargs, build=None):
    """``cls.with_default_priors``: the hyperprior variables of ``cls``'s learned default (``spec.hyperpriors``)
    and the observed variable, made by ``build(hyperparameters)`` (default: ``cls(name, partition=partition,
    observed=observed, **hyperparameters, **kwargs)``)."""
    try:
        pm.modelcontext(None)
    except TypeError:
        raise TypeError(
            f"{cls.__name__}.with_default_priors creates PyMC variables: call it inside a model context "
            f"(`with pm.Model():`)"
        ) from None
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty string (the observed variable's name), got {name!r}")
    if observed is None:
        raise ValueError(f"observed is required for {cls.__name__}.with_default_priors (its values centre the hyperpriors)")
    covariates = _covariates_hyper(cls)
    stacked = observed if covariates is None else _with_covariates(cls, observed, kwargs.get(covariates.name))
    data = cls._check_data(stacked.get_value() if isinstance(stacked, SharedVariable) else stacked)
    priors = cls.spec.hyperpriors(data)
    learned_names = {p.name for p in priors.learned}
    assembled = priors.assemble(**{p.name: p.median for p in priors.learned})  # the names it sets
    set_by_priors = [key for key in kwargs if key in assembled and key not in learned_names]
    if set_by_priors:
        learned = ", ".join(p.name for p in priors.learned)
        raise TypeError(
            f"{cls.__name__}.with_default_priors sets {', '.join(set_by_priors)} from its learned hyperparameters "
            f"({learned}); fix one of those instead, or build the model with "
            f"{cls.__name__}.default_hyperparameters(X) to choose every hyperparameter yourself"
        )
    given = {
        p.name: check_hyperparameter(p.name, kwargs.pop(p.name), ndim_max=0, lower=p.lower)
        for p in priors.learned
        if p.name in kwargs
    }
    # every check passed before the first variable is created (a failed call leaves the model as it was)
    values = {p.name: given[p.name] if p.name in given else _hyperprior(f"{name}_{p.name}", p) for p in priors.learned}
    hyperparameters = priors.assemble(**values)
    if build is not None:
        return build(hyperparameters)
    return cls(name, partition=partition, observed=observed, **hyperparameters, **kwargs)


def _hyperprior(var_name, learned):
    """A new variable ``var_name`` with the log-normal hyperprior of ``learned`` (``families.spec.Learned``)."""

    mu = float(np.log(learned.median - learned.lower))
    if learned.lower == 0.0:
        return pm.LogNormal(var_name, mu=mu, sigma=learned.sigma)
    # lower + LogNormal: a variable of its own value (traced as such), moved on log(v - lower)
    return pm.CustomDist(
        var_name, mu, learned.sigma, learned.lower, dist=_shifted_log_normal, transform=Interval(learned.lower, None)
    )


def _shifted_log_normal(mu, sigma, lower, size):
    """``lower + LogNormal(mu, sigma)`` (the symbolic distribution of a learned hyperparameter with a lower bound)."""
    return lower + pm.LogNormal.dist(mu, sigma, size=size)


def _snake(name):
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")


def _family_classes(code):
    """The op class, op and distribution class of the additive family with ``code``, from its spec and module."""
    module, spec, name = families.MODULES[code], families.SPECS[code], families.CLASS_NAMES[code]
    signature = ",".join(["(n)", *(_SIGNATURES[hyper.shape] for hyper in spec.hypers), "()", "()"]) + "->(n,d)"
    rv_class = type(f"{name}RV", (PartitionMixtureRV,), {
        "__module__": __name__, "__doc__": f"Op of :class:`{name}`: parameters ``(partition, *hypers, zeta, d)``.",
        "name": _snake(name), "signature": signature, "_print_name": (name, f"\\operatorname{{{name}}}"),
        "family": code, "spec": spec, "math": module,
    })
    rv_op = rv_class()
    dist_class = type(name, (PartitionMixture,), {
        "__module__": __name__, "__doc__": module.DOC, "rv_op": rv_op, "spec": spec,
        "dist": classmethod(_signed_dist(spec)),
    })
    return rv_class, rv_op, dist_class


def _signed_dist(spec):
    """``PartitionMixture.dist`` with the family's hyperparameters and defaults in its signature (``help()``)."""

    def dist(cls, partition, *args, **kwargs):
        return PartitionMixture.dist.__func__(cls, partition, *args, **kwargs)

    def shown(default):
        return None if callable(default) else default

    parameters = [
        inspect.Parameter("cls", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        inspect.Parameter("partition", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        *(inspect.Parameter(h.name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=shown(h.default)) for h in spec.hypers),
        inspect.Parameter("coarsening", inspect.Parameter.KEYWORD_ONLY, default=None),
        inspect.Parameter("kwargs", inspect.Parameter.VAR_KEYWORD),
    ]
    dist.__signature__ = inspect.Signature(parameters)
    dist.__doc__ = PartitionMixture.dist.__doc__
    return dist


for _code, _spec in enumerate(families.SPECS):
    if _spec.kind == ADDITIVE:
        _rv_class, _rv_op, _dist_class = _family_classes(_code)
        globals()[_rv_class.__name__] = _rv_class  # importable by name: ops are pickled by reference
        globals()[_rv_op.name] = _rv_op
        globals()[_dist_class.__name__] = _dist_class
