"""Graph discovery and value plumbing shared by the partition step methods (layer 7, docs/design.md §3.1).

A step is built for one partition variable ``z``.  It finds

* the partition prior: ``model.values_to_rvs[z_value]``, whose op says which
  Gibbs-type prior it is (``op.prior_code``) and whose inputs are the prior's
  hyperparameters;
* the observation model: the observed variable of ours whose partition input
  is that random variable (exactly one is supported);

checks that its kernel supports them (each step class declares the model
``kinds`` and partition ``priors`` it samples), and compiles one function
from the model's value variables to the current values of every
hyperparameter, so hyperparameters moved by other PyMC steps (NUTS, slice)
are read fresh at each step; only what changed is validated and repacked.
An observation model with explicit cluster parameters (``NormalMixture``)
gives the step a ``steps.parameters.ParameterBlock``: it owns those
variables too.  The math lives in ``kernels``: each step class names its
kernel (``kernel``, a ``kernels.protocol.Kernel``) and builds its
``options``; a chain's first step makes the sampler state
``kernel.init(model, labels, options, rng)`` (a guide tree, hash tables,
shards and an executor, or just the options), and every step is one call of
``kernel.transition(model, state, sampler, rng) -> (state, sampler, Info)``,
whose ``Info`` carries the move and the partition's summaries and labels --
the same kernel the test runners (``tests/runners.py``) run in the
enumeration tests.

The numba state is kept between calls while ``z`` (and the parameter
variables) are the ones the step wrote last: a step then costs what its moves
touch plus O(n) to copy ``z`` out.  Other hyperparameter values only refresh
the cluster caches (O(K c)); a ``z`` from elsewhere (the initial point,
another step) is validated and the state rebuilt from it, as it is every
``state.REBUILD_PERIOD`` steps.
"""

from __future__ import annotations

import logging
from collections import namedtuple
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from pymc.step_methods.compound import BlockedStep, Competence, StepMethodState
from pymc.step_methods.state import dataclass_state
from pytensor.graph.basic import Variable
from pytensor.graph.traversal import ancestors
from pymc.util import get_random_generator, get_value_vars_from_user_vars

from pymc_partitions import families, priors
from pymc_partitions._dispatch import ADDITIVE, PARAMETRIC, RELATIONAL
from pymc_partitions._jit import announcing_compilation
from pymc_partitions._validation import check_item_indices, check_label_vector, check_random_seed, constant_value
from pymc_partitions.distributions.components import ComponentModel, find_component_model
from pymc_partitions.distributions.mixtures import MixtureSpec, PartitionMixtureRV, mixture_spec, observed_data
from pymc_partitions.distributions.observed import model_observed_rvs
from pymc_partitions.distributions.partitions import _PartitionRV
from pymc_partitions.kernels.info import LABEL_STAT_PREFIX, SAMPLE_STATS, info_stats
from pymc_partitions.labels import relabel
from pymc_partitions.state import REBUILD_PERIOD, make_model, refresh_all, state_of, with_hyperparameters
from pymc_partitions.steps.components import ComponentRows
from pymc_partitions.steps.parameters import ParameterBlock


def is_partition_variable(var):
    """True for a partition-prior random variable (or its value variable's RV)."""
    return isinstance(getattr(var.owner, "op", None), _PartitionRV)


Kept = namedtuple("Kept", ["written", "model", "state", "steps"])
Kept.__doc__ = """The numba state a step keeps between calls: the values it wrote (``z`` and any parameter
variables, in the order of ``vars``), the kernel model, the state, and the number of steps this chain has taken."""


@dataclass_state
class PartitionStepState(StepMethodState):
    """What differs between chains: whether PyMC is tuning, the numba state kept between calls, and the
    kernel's sampler state (made by its ``init`` at the chain's first step)."""

    tune: bool = True
    kept: Any = field(default=None)
    sampler: Any = field(default=None)


class PartitionStep(BlockedStep):
    """Base class: one partition variable, its prior and its observation model.

    Subclasses set ``kernel`` (a ``kernels.protocol.Kernel``) and build ``self.options``.  ``keep_items`` (a list of item
    indices) records those items' labels as scalar sample stats
    ``partition_label_{i}``, so that a run that leaves ``z`` out of the trace
    (``pm.sample(var_names=...)``, for large n) still gives their
    co-clustering: ``posterior_similarity(idata, items=...)`` reads them.
    ``initial_point`` is accepted for ``pm.sample``'s automatic assignment
    and not needed; ``compile_kwargs`` go to the compiled hyperparameter
    function.  ``self.tune`` is true until PyMC calls ``stop_tuning``.
    """

    stats_dtypes_shapes = SAMPLE_STATS
    kernel = None
    """The step's ``kernels.protocol.Kernel``: its ``init`` and ``transition``."""
    kinds = (ADDITIVE, RELATIONAL)
    """The kinds of observation model (``_dispatch``) the step's kernel supports."""
    partition_priors = (priors.DP, priors.PY, priors.NGGP, priors.MFM)
    """The partition priors (``priors`` codes) the step's kernel supports."""
    component_models = False
    """Whether the step samples a user's component model (``distributions.components``)."""
    _state_class = PartitionStepState

    def __init__(
        self, vars=None, *, keep_items=None, model=None, rng=None, blocked=True, initial_point=None, compile_kwargs=None
    ):
        if model is not None and not isinstance(model, pm.Model):
            raise TypeError(f"model must be a pm.Model or None (the model in context), got {type(model).__name__}")
        if compile_kwargs is not None and not isinstance(compile_kwargs, Mapping):
            raise TypeError(f"compile_kwargs must be a dict of keyword arguments or None, got {type(compile_kwargs).__name__}")
        model = pm.modelcontext(model)
        value_vars = _value_vars(vars, model)
        partition_vars = [v for v in value_vars if is_partition_variable(model.values_to_rvs[v])]
        if not partition_vars:
            given = ", ".join(f"{v.name!r} of type {type(model.values_to_rvs[v].owner.op).__name__}" for v in value_vars)
            raise TypeError(f"vars must hold a partition variable (e.g. DirichletProcessPartition), got {given}")
        if len(partition_vars) > 1:
            raise ValueError(f"vars must hold one partition variable, got {[v.name for v in partition_vars]}")
        (value_var,) = partition_vars
        rv = model.values_to_rvs[value_var]
        observation = _find_observation_model(model, rv)
        component = observation if isinstance(observation, ComponentModel) else None
        self._check_supported(rv.owner.op.prior_code, observation)
        if component is not None:
            spec = MixtureSpec(families.COMPONENT, rv, (pt.constant(float(component.k_max)),), component.k_max)
            self._parameters = ComponentRows(component, value_var.name)
        else:
            spec = mixture_spec(observation)
            self._parameters = ParameterBlock(model, spec.parameters) if spec.parameters else None
        parameter_vars = [] if self._parameters is None else self._parameters.value_vars
        others = [v for v in value_vars if v is not value_var and v not in parameter_vars]
        if others and not self._can_sample(others):
            owned = f"the partition variable {value_var.name!r}"
            if parameter_vars:
                owned += f" and its cluster parameters {', '.join(repr(v.name) for v in parameter_vars)}"
            raise TypeError(
                f"{type(self).__name__} samples {owned} only, "
                f"not {[v.name for v in others]}; leave those to another step method"
            )
        self.vars = [value_var, *parameter_vars, *others]
        self.rng = get_random_generator(check_random_seed("rng", rng))
        self.tune = True
        self.kept = None
        self.sampler = None
        self._z_name = value_var.name
        self._written_names = (self._z_name, *(() if self._parameters is None else self._parameters.names))
        self._prior_code = rv.owner.op.prior_code
        self._n = int(rv.type.shape[0])
        self._family = spec.family
        self._d = spec.d
        self._zeta = spec.zeta  # the power of every item's likelihood (coarsening; 1 without)
        prior_inputs = list(rv.owner.op.dist_params(rv.owner)[:-1])
        hyper_graphs = model.replace_rvs_by_values([*prior_inputs, *spec.hypers])
        self._n_prior = len(prior_inputs)
        self._hyper_fn = model.compile_fn(
            hyper_graphs, inputs=model.value_vars, on_unused_input="ignore", point_fn=True, **(compile_kwargs or {})
        )
        if component is None:
            observed = observed_data(model, observation).reshape(self._n, -1)
            constants = [constant_value(graph) for graph in spec.hypers]  # what encodes the data (None if not constant)
            self._data = families.kernel_data(self._family, observed, *constants)
            self._origin = families.origin(self._family, self._data)  # the kernels' coordinates (families, "Coordinates")
        else:  # the data are the log likelihoods under the current rows (steps.components), replaced at each step
            self._data = np.zeros((self._n, component.k_max))
            self._origin = np.zeros(component.k_max)
        self._dynamic = getattr(self._parameters, "dynamic", False)
        self._mfm_cache = (None, None)
        self._memo = None
        self._keep_items = tuple(check_item_indices("keep_items", keep_items, self._n, allow_empty=True).tolist())
        self.stats_dtypes_shapes = {
            **type(self).stats_dtypes_shapes,
            **{f"{LABEL_STAT_PREFIX}{i}": (np.int64, []) for i in self._keep_items},
        }
        # pm.sample's NDArray backend reads the older ``stats_dtypes`` form
        self.stats_dtypes = [{name: dtype for name, (dtype, _) in self.stats_dtypes_shapes.items()}]

    def _can_sample(self, value_vars):
        """Whether this step also moves ``value_vars`` besides the partition and its cluster parameters
        (subclasses that own hyperparameters say so)."""
        return False

    def _check_supported(self, prior, observation):
        """A ``TypeError`` naming what the step cannot sample and the steps that can, unless it supports both."""
        if isinstance(observation, ComponentModel):
            if not self.component_models:
                raise TypeError(
                    f"{type(self).__name__} samples the package's observation models, not a component model written "
                    f"in PyMC ({', '.join(repr(o.name) for o in observation.observed)} taking cluster parameters "
                    f"from {observation.partition.name!r} by row indexing); for your own component model use "
                    f"{_steps_for(lambda step: step.component_models)}"
                )
            kind, obs_rv = PARAMETRIC, observation.observed[0]
        else:
            kind, obs_rv = families.tag(mixture_spec(observation).family).kind, observation
        if kind not in self.kinds:
            supported = " or ".join(_KIND_MODELS[k] for k in self.kinds)
            raise TypeError(
                f"{type(self).__name__} samples {supported}, not {_KIND_MODELS[kind]} "
                f"({type(obs_rv.owner.op).__name__}); for this observation model use "
                f"{_steps_for(lambda step: kind in step.kinds)}"
            )
        if prior not in self.partition_priors:
            names = " or ".join(_PRIOR_NAMES[p] for p in self.partition_priors)
            raise TypeError(
                f"{type(self).__name__} needs a {names} prior, got a {_PRIOR_NAMES[prior]}; for this prior use "
                f"{_steps_for(lambda step: prior in step.partition_priors and kind in step.kinds)}"
            )

    @classmethod
    def competence(cls, var, has_grad=None):
        """IDEAL for the partition variables whose default step this is (``steps.default``), COMPATIBLE for the
        other partition variables, so ``pm.sample`` never assigns Metropolis to labels."""
        from pymc_partitions.steps.default import competence_for

        return competence_for(cls, var, is_partition_variable(var))

    def _require_items(self, minimum):
        if self._n < minimum:
            raise ValueError(f"{type(self).__name__} needs a partition of at least {minimum} items, got {self._n}")

    # -- the kernel model ---------------------------------------------------------

    def _kernel_model(self, point):
        """The kernels' ``Model`` tuple at the hyperparameter values of ``point``.

        Memoised on those values: unchanged values give the same model object
        (which tells :meth:`_state_at` that the kept state's caches are
        current), and only the part that changed -- the prior's or the
        family's hyperparameters -- is validated and repacked; the data are
        shared (``state.with_hyperparameters``).
        """
        values = [np.asarray(v, dtype=float) for v in self._hyper_fn(point)]
        memo = self._memo
        if memo is not None and _equal(values, memo[0]):
            return memo[1]
        prior_values, family_values = values[: self._n_prior], values[self._n_prior :]
        if memo is None or not _equal(prior_values, memo[0][: self._n_prior]):
            prior = self._prior_parameters(prior_values)
        else:
            prior = (memo[1].prior_params, memo[1].log_v_table)
        if memo is None or not _equal(family_values, memo[0][self._n_prior :]):
            params = self._family_parameters(family_values)
        else:
            params = memo[2]
        if memo is None:
            kernel_model = make_model(self._family, self._data, params, self._prior_code, *prior, origin=self._origin)
        else:
            kernel_model = with_hyperparameters(memo[1], params, self._prior_code, *prior)
        self._memo = (values, kernel_model, params)
        return kernel_model

    def _prior_parameters(self, values):
        """``(prior_params, log_v_table)`` of the partition prior at ``values``, validated (``priors.check_values``)."""
        priors.check_values(self._prior_code, values)
        if self._prior_code == priors.MFM:
            gamma, log_k_prior = float(values[0]), values[1]
            return np.array([gamma]), self._mfm_table(gamma, log_k_prior)
        return np.array([float(v) for v in values]), priors.empty_table()

    def _family_parameters(self, values):
        """The family's ``params`` (data units) at ``values``, validated against the family's spec.

        A value outside its support (a hyperprior whose initial value sits
        on the boundary, e.g. ``kappa0 = pm.Normal("kappa0", 0, 1)`` starting
        at 0, or a value another step proposed without the model's ``-inf``)
        raises a ``ValueError`` naming it and the fix, at the step's first
        call for an initial point: the kernels never compute with it.  (The
        partition prior's own hyperparameters are refused earlier, when PyMC
        computes the initial point: ``distributions.partitions``.)
        """
        try:
            return families.pack_params(self._family, self._d, *values, zeta=self._zeta)
        except ValueError as err:
            names = ""
            if self._family == families.NORMAL:
                names = "; m and t = 1/sigma**2 are mu's pm.Normal parameters, a and b tau's pm.Gamma alpha and beta"
            raise ValueError(
                f"{err} (read from the sampler's current point{names}): "
                "give it a prior, or an initval, inside its support"
            ) from None

    def _mfm_table(self, gamma, log_k_prior):
        cached_gamma, table = self._mfm_cache
        if cached_gamma != gamma:
            table = priors.mfm_log_v_table(gamma, log_k_prior, self._n)
            self._mfm_cache = (gamma, table)
        return table

    # -- the state ------------------------------------------------------------------

    def _kept_state(self, point):
        """The state kept from the last call if ``point`` holds the values it wrote (and no rebuild is due), else ``None``."""
        kept = self.kept
        if kept is None or kept.steps % REBUILD_PERIOD == 0 or self._dynamic:
            return None
        for name, written in zip(self._written_names, kept.written):
            value = point[name]
            if value is not written and not np.array_equal(value, written):
                return None
        return kept.state

    def _state_at(self, point):
        """The kernel model at ``point`` and the numba state for its labels: the kept one, refreshed if the
        hyperparameters changed, or one rebuilt from ``z`` after validating it (integer, length n; labels are
        relabelled canonically, so negative or sparse ones are fine) -- before numba or PyTensor reads it.
        With cluster parameters, the parameter block loads (and checks) their rows; a component model's data are
        the log likelihoods at the point's rows (``steps.components``)."""
        state = self._kept_state(point)
        if state is None:  # validate z before PyTensor reads the point
            z = point[self._z_name]
            labels = relabel(check_label_vector(self._z_name, z, self._n)).astype(np.int64)
        kernel_model = self._kernel_model(point)
        if self._dynamic:
            kernel_model = kernel_model._replace(data=self._parameters.data(point))
        if state is None:
            state = state_of(kernel_model, labels)
            if self._parameters is not None:
                self._parameters.load(kernel_model, state, z, point)
        elif self.kept.model is not kernel_model:
            refresh_all(kernel_model, state)
        return kernel_model, state

    def _sampler_for(self, kernel_model, point):
        """The kernel's sampler state for this draw: the chain's, made by ``kernel.init`` at its first step from the
        labels of ``point`` (validated by :meth:`_state_at`)."""
        if self.sampler is None:
            labels = relabel(np.asarray(point[self._z_name])).astype(np.int64)
            self.sampler = self.kernel.init(kernel_model, labels, self.options, self.rng)
        return self.sampler

    def _sampler_stats(self, sampler):
        """Sample stats of the step's own besides ``info.info_stats``'s (none here)."""
        return {}

    def step(self, point):
        """One draw (``kernel.transition``).  The first draw of a step class in a process says, in one line of
        PyMC's log, that numba compiles its kernels, if it does (not when they load from the cache)."""
        if type(self) in _STEPPED:
            return self._step(point)
        _STEPPED.add(type(self))
        message = f"compiling numba kernels for {type(self).__name__}, first use only"
        with announcing_compilation(lambda: _log.info(message)):
            return self._step(point)

    def _step(self, point):
        kernel_model, state = self._state_at(point)
        sampler = self._sampler_for(kernel_model, point)
        state, self.sampler, info = self.kernel.transition(kernel_model, state, sampler, self.rng)
        new_point = dict(point)
        new_point[self._z_name] = info.labels
        if self._parameters is not None:
            self._parameters.write(kernel_model, state, info.labels, new_point, self.rng)
        written = tuple(new_point[name] for name in self._written_names)
        self.kept = Kept(written, kernel_model, state, 1 if self.kept is None else self.kept.steps + 1)
        stats = info_stats(info)
        stats.update(self._sampler_stats(sampler))
        stats["partition_tune"] = bool(self.tune)
        for i in self._keep_items:
            stats[f"{LABEL_STAT_PREFIX}{i}"] = int(info.labels[i])
        return new_point, [stats]


_STEPPED = set()
"""The step classes that made a draw in this process (:meth:`PartitionStep.step`)."""
_log = logging.getLogger("pymc")


def _value_vars(vars, model):
    """The value variables of ``vars`` (a variable or a list of them; ``None``: the model's partition variables)."""
    if vars is None:
        return [v for v in model.value_vars if is_partition_variable(model.values_to_rvs[v])]
    items = vars if isinstance(vars, Sequence) and not isinstance(vars, str) else [vars]
    if not items or not all(isinstance(v, Variable) for v in items):
        raise TypeError(f"vars must be a model variable or a list of them (the partition variable), got {vars!r}")
    return get_value_vars_from_user_vars(vars, model)


def _find_observation_model(model, partition_rv):
    """The observation model of ``partition_rv``: the package's observed variable that takes it, or else the
    :class:`~pymc_partitions.distributions.components.ComponentModel` of the observed variables that depend on it."""
    observed = [obs for obs in model_observed_rvs(model) if partition_rv in ancestors([obs])]
    ours = [obs for obs in observed if isinstance(getattr(obs.owner, "op", None), PartitionMixtureRV)]
    name = partition_rv.name
    if not observed:
        raise ValueError(
            f"no observation model uses partition {name!r}: add one, e.g. "
            f"pmp.NormalGammaMixture('x', partition={name}, ..., observed=X), or your own likelihood taking cluster "
            f"parameters by row, e.g. pm.Poisson('y', lam[{name}], observed=y) with lam of shape (K_max,)"
        )
    if len(ours) > 1 or (ours and len(observed) > 1):
        raise ValueError(
            f"partition {name!r} has {len(observed)} observation models "
            f"({', '.join(o.name for o in observed)}); a package observation model must be the only one"
        )
    if ours:
        return ours[0]
    return find_component_model(model, partition_rv, observed)


def _equal(values, others):
    return all(np.array_equal(a, b) for a, b in zip(values, others))


_KIND_MODELS = {
    ADDITIVE: "conjugate mixtures (cluster parameters integrated out)",
    RELATIONAL: "relational models (InfiniteRelationalModel)",
    PARAMETRIC: "models whose clusters keep explicit parameters (NormalMixture, your own component model)",
}
_PRIOR_NAMES = {
    priors.DP: "DirichletProcessPartition", priors.PY: "PitmanYorPartition", priors.NGGP: "NGGPartition",
    priors.MFM: "MixtureOfFiniteMixturesPartition",
}


def _steps_for(supports):
    """The package's partition steps (the subclasses of :class:`PartitionStep` with a ``name``) for which
    ``supports(step_class)`` holds, as text."""
    found, pending = set(), [PartitionStep]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if "name" in vars(cls) and cls.__module__.startswith("pymc_partitions.steps") and supports(cls):
            found.add(cls.__name__)
    return ", ".join(f"pmp.{name}" for name in sorted(found))
