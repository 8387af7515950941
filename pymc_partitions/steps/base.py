"""Graph discovery and value plumbing shared by the partition step methods (layer 6).

A step is built for one partition variable ``z``.  It finds

* the partition prior: ``model.values_to_rvs[z_value]``, whose op says which
  Gibbs-type prior it is (``op.prior_code``) and whose inputs are the prior's
  hyperparameters;
* the observation model: the observed variable of ours whose partition input
  is that random variable (exactly one is supported);

and compiles one function from the model's value variables to the current
values of every hyperparameter, so hyperparameters moved by other PyMC steps
(NUTS, slice) are read fresh at each step.  An observation model with explicit
cluster parameters (``NormalMixture``: the parametric kind, ``_dispatch``)
makes the step own those variables too (``mu`` and ``tau``, whether or not
``vars`` names them): it reads their rows of the occupied clusters from the
point and writes them back in canonical order, the unused rows drawn from
their prior (``kernels.parameters``).  ``kinds`` says which kinds of model a
step's kernel supports.  The math lives in ``kernels``: each
step class names its kernel's ``transition`` and builds its ``config``, and
``step`` calls ``transition(model, state, config, history, chain, rng)`` --
the same function the in-numba chain runner (``kernels.chain.run``) calls in
the enumeration tests.

The numba state is kept between calls while ``z`` (and the parameter
variables) are the ones the step wrote last: a step then costs what its moves
touch plus O(n) to copy ``z`` out.
Other hyperparameter values only refresh the cluster caches (O(K c)); a
``z`` from elsewhere (the initial point, another step) is validated and the
state rebuilt from it, as it is every ``state.REBUILD_PERIOD`` steps.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

import numpy as np
import pymc as pm
from pymc.logprob.transforms import LogTransform
from pymc.step_methods.compound import BlockedStep, Competence, StepMethodState
from pymc.step_methods.state import dataclass_state
from pytensor.graph.basic import Variable
from pymc.util import get_random_generator, get_value_vars_from_user_vars

from pymc_partitions import families, priors
from pymc_partitions._dispatch import ADDITIVE, PARAMETRIC, RELATIONAL
from pymc_partitions._validation import (
    check_item_indices, check_label_vector, check_parameter_values, check_prior_values, check_random_seed,
)
from pymc_partitions.distributions.mixtures import PartitionMixtureRV, mixture_spec, observed_data
from pymc_partitions.distributions.partitions import _PartitionRV
from pymc_partitions.kernels.info import LABEL_STAT_PREFIX, SAMPLE_STATS, info_stats
from pymc_partitions.kernels.parameters import load_rows, parameter_rows
from pymc_partitions.labels import relabel
from pymc_partitions.state import (
    REBUILD_PERIOD, build_state, canonical_labels, largest_fraction, log_joint, make_model, refresh_all,
)


def is_partition_variable(var):
    """True for a partition-prior random variable (or its value variable's RV)."""
    return isinstance(getattr(var.owner, "op", None), _PartitionRV)


def is_cluster_parameter(var):
    """True for an explicit cluster parameter (``NormalMixture``'s ``mu`` or ``tau``) of the model on the context stack.

    ``pm.sample`` asks each step method's ``competence`` about a variable
    without saying which model it belongs to, so this looks in the model
    context (``with model: pm.sample()``); without one it is False.
    """
    try:
        model = pm.modelcontext(None)
    except TypeError:
        return False
    for obs in model.observed_RVs:
        op = getattr(obs.owner, "op", None)
        if isinstance(op, PartitionMixtureRV):
            try:
                _, parameters = op.kernel_inputs(op.dist_params(obs.owner))
            except (TypeError, ValueError):  # not a parameter a step can sample (the step says why)
                continue
            if any(var is parameter for parameter in parameters):
                return True
    return False


Kept = namedtuple("Kept", ["written", "model", "state", "steps"])
Kept.__doc__ = """The numba state a step keeps between calls: the values it wrote (``z`` and any parameter
variables, in the order of ``vars``), the kernel model, the state, and the number of steps this chain has taken."""


@dataclass_state
class PartitionStepState(StepMethodState):
    """What differs between chains: whether PyMC is tuning, and the numba state kept between calls."""

    tune: bool = True
    kept: Any = field(default=None)


class PartitionStep(BlockedStep):
    """Base class: one partition variable, its prior and its observation model.

    Subclasses set ``transition`` (a kernel's numba transition function) and
    build ``self.config`` (its options).  ``keep_items`` (a list of item
    indices) records those items' labels as scalar sample stats
    ``partition_label_{i}``, so that a run that leaves ``z`` out of the trace
    (``pm.sample(var_names=...)``, for large n) still gives their
    co-clustering: ``posterior_similarity(idata, items=...)`` reads them.
    ``initial_point`` is accepted for ``pm.sample``'s automatic assignment
    and not needed; ``compile_kwargs`` go to the compiled hyperparameter
    function.  ``self.tune`` is true until PyMC calls ``stop_tuning``.
    """

    stats_dtypes_shapes = SAMPLE_STATS
    transition = None
    kinds = (ADDITIVE, RELATIONAL)
    """The kinds of observation model (``_dispatch``) the step's kernel supports."""
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
        obs_rv = _find_observation_model(model, rv)
        spec = mixture_spec(obs_rv)
        kind = families.tag(spec.family).kind
        if kind not in self.kinds:
            raise TypeError(self._unsupported_kind_message(kind))
        parameter_vars = [model.rvs_to_values[p] for p in spec.parameters]
        self._parameter_vars = parameter_vars
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
        self._z_name = value_var.name
        self._parameter_names = [v.name for v in parameter_vars]
        self._k_max = int(spec.parameters[0].type.shape[0]) if spec.parameters else None
        self._log_transformed = [_log_transformed(model, p) for p in spec.parameters]
        self._prior_code = rv.owner.op.prior_code
        self._n = int(rv.type.shape[0])
        self._family = spec.family
        self._d = spec.d
        self._data = np.ascontiguousarray(observed_data(model, obs_rv).reshape(self._n, -1), dtype=np.float64)
        self._origin = families.origin(self._family, self._data)  # the kernels' coordinates (families, "Coordinates")
        prior_inputs = list(rv.owner.op.dist_params(rv.owner)[:-1])
        hyper_graphs = model.replace_rvs_by_values([*prior_inputs, *spec.hypers])
        self._n_prior = len(prior_inputs)
        self._hyper_fn = model.compile_fn(
            hyper_graphs, inputs=model.value_vars, on_unused_input="ignore", point_fn=True, **(compile_kwargs or {})
        )
        self._mfm_cache = (None, None)
        self._memo = (None, None)
        self._no_history = np.zeros((0, 1, self._n), dtype=np.int32)
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

    def _unsupported_kind_message(self, kind):
        name = type(self).__name__
        if kind == PARAMETRIC:
            return (
                f"{name} integrates cluster parameters out and cannot sample a model whose clusters keep explicit "
                "parameters (NormalMixture); use pmp.GibbsStep, pmp.IncrementalMetropolisStep or "
                "pmp.NonconjugateSplitMergeStep"
            )
        return (
            f"{name} samples models whose clusters keep explicit parameters (NormalMixture); "
            "for this observation model use pmp.GibbsStep or pmp.SplitMergeStep"
        )

    @staticmethod
    def competence(var, has_grad=None):
        """IDEAL for partition variables, so ``pm.sample`` never assigns Metropolis to labels."""
        return Competence.IDEAL if is_partition_variable(var) else Competence.INCOMPATIBLE

    def _require_items(self, minimum):
        if self._n < minimum:
            raise ValueError(f"{type(self).__name__} needs a partition of at least {minimum} items, got {self._n}")

    # -- the kernel model ---------------------------------------------------------

    def _kernel_model(self, point):
        """The kernels' ``Model`` tuple at the hyperparameter values of ``point``.

        Memoised on the hyperparameter values (a pure cache: the result depends
        only on them), so steps with fixed hyperparameters skip the packing,
        and an unchanged model object tells :meth:`_state_at` that the kept
        state's caches are current.
        """
        values = [np.asarray(v, dtype=float) for v in self._hyper_fn(point)]
        last_values, last_model = self._memo
        if last_values is not None and all(np.array_equal(a, b) for a, b in zip(values, last_values)):
            return last_model
        kernel_model = self._build_kernel_model(values)
        self._memo = (values, kernel_model)
        return kernel_model

    def _build_kernel_model(self, values):
        """Validate the hyperparameter values read from the point and pack them for the kernels.

        A value outside its support (a hyperprior whose initial value sits
        on the boundary, e.g. ``kappa0 = pm.Normal("kappa0", 0, 1)`` starting
        at 0, or a value another step proposed without the model's ``-inf``)
        raises a ``ValueError`` naming it and the fix, at the step's first
        call for an initial point: the kernels never compute with it.  (The
        partition prior's own hyperparameters are refused earlier, when PyMC
        computes the initial point: ``distributions.partitions``.)
        """
        prior_values, family_values = values[: self._n_prior], values[self._n_prior :]
        check_prior_values(self._prior_code, prior_values)
        if self._prior_code == priors.MFM:
            gamma, log_k_prior = float(prior_values[0]), prior_values[1]
            prior_params = np.array([gamma])
            table = self._mfm_table(gamma, log_k_prior)
        else:
            prior_params = np.array([float(v) for v in prior_values])
            table = priors.empty_table()
        try:
            params = families.pack_params(self._family, self._d, *family_values)
        except ValueError as err:
            names = ""
            if self._family == families.NORMAL:
                names = "; m and t = 1/sigma**2 are mu's pm.Normal parameters, a and b tau's pm.Gamma alpha and beta"
            raise ValueError(
                f"{err} (read from the sampler's current point{names}): "
                "give it a prior, or an initval, inside its support"
            ) from None
        return make_model(self._family, self._data, params, self._prior_code, prior_params, table, origin=self._origin)

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
        if kept is None or kept.steps % REBUILD_PERIOD == 0:
            return None
        for name, written in zip((self._z_name, *self._parameter_names), kept.written):
            value = point[name]
            if value is not written and not np.array_equal(value, written):
                return None
        return kept.state

    def _state_at(self, point):
        """The kernel model at ``point`` and the numba state for its labels: the kept one, refreshed if the
        hyperparameters changed, or one rebuilt from ``z`` after validating it (integer, length n; labels are
        relabelled canonically, so negative or sparse ones are fine) -- before numba or PyTensor reads it.
        With cluster parameters ``z`` must be canonical and the occupied rows valid (``_validation.check_parameter_values``)."""
        z = point[self._z_name]
        state = self._kept_state(point)
        labels = None if state is not None else relabel(check_label_vector(self._z_name, z, self._n)).astype(np.int64)
        kernel_model = self._kernel_model(point)
        if state is None:
            if self._parameter_names:
                rows = self._parameter_rows(point)
                check_parameter_values(z, *rows, families.normal.k_max(kernel_model.params))
            state = build_state(kernel_model, labels)
            if self._parameter_names:
                load_rows(kernel_model, state, canonical_labels(state), *rows)
            return kernel_model, state
        if self.kept.model is not kernel_model:
            refresh_all(kernel_model, state)
        return kernel_model, state

    def _parameter_rows(self, point):
        """The parameter variables' values at ``point`` (``tau``, not its log), as float64 arrays."""
        rows = []
        for name, logged in zip(self._parameter_names, self._log_transformed):
            value = np.asarray(point[name], dtype=np.float64)
            rows.append(np.exp(value) if logged else value)
        return rows

    def _write_parameters(self, kernel_model, state, z, point):
        """Write the cluster parameters into ``point`` in canonical order, unused rows drawn from the prior.

        The state then takes its rows back from ``point``: PyMC holds ``mu`` in
        data units (``origin`` plus the state's means, rounded to the float
        grid there, 1.5e-8 wide at 1e8) and ``tau`` through its log, so the
        kept state is the one a rebuild from ``point`` gives, and
        ``partition_log_joint`` is the log density of what PyMC records.
        """
        rows = parameter_rows(kernel_model, state, z, self.rng)
        for name, logged, value in zip(self._parameter_names, self._log_transformed, rows):
            point[name] = np.log(value) if logged else value
        load_rows(kernel_model, state, z, *self._parameter_rows(point))

    def _history_window(self):
        """Past states for the transition: none for a single-chain step."""
        return self._no_history

    def _chain_index(self):
        return 0

    def _before_transition(self, kernel_model, state):
        """Hook run with the kernel model and state just before each transition (e.g. to adapt while tuning)."""

    def step(self, point):
        kernel_model, state = self._state_at(point)
        self._before_transition(kernel_model, state)
        state, info = self.transition(kernel_model, state, self.config, self._history_window(), self._chain_index(), self.rng)
        z = canonical_labels(state)
        new_point = dict(point)
        new_point[self._z_name] = z
        if self._parameter_names:
            self._write_parameters(kernel_model, state, z, new_point)
        written = tuple(new_point[name] for name in (self._z_name, *self._parameter_names))
        self.kept = Kept(written, kernel_model, state, 1 if self.kept is None else self.kept.steps + 1)
        stats = info_stats(info)
        stats["partition_n_clusters"] = int(state.n_clusters[0])
        stats["partition_log_joint"] = float(log_joint(kernel_model, state))
        stats["partition_largest_fraction"] = float(largest_fraction(state))
        stats["partition_tune"] = bool(self.tune)
        for i in self._keep_items:
            stats[f"{LABEL_STAT_PREFIX}{i}"] = int(z[i])
        return new_point, [stats]


def _value_vars(vars, model):
    """The value variables of ``vars`` (a variable or a list of them; ``None``: the model's partition variables)."""
    if vars is None:
        return [v for v in model.value_vars if is_partition_variable(model.values_to_rvs[v])]
    items = vars if isinstance(vars, Sequence) and not isinstance(vars, str) else [vars]
    if not items or not all(isinstance(v, Variable) for v in items):
        raise TypeError(f"vars must be a model variable or a list of them (the partition variable), got {vars!r}")
    return get_value_vars_from_user_vars(vars, model)


def _find_observation_model(model, partition_rv):
    found = []
    for obs in model.observed_RVs:
        op = getattr(obs.owner, "op", None)
        if isinstance(op, PartitionMixtureRV) and op.dist_params(obs.owner)[0] is partition_rv:
            found.append(obs)
    if not found:
        raise ValueError(
            f"no observation model uses partition {partition_rv.name!r}: add e.g. "
            f"pmp.NormalGammaMixture('x', partition={partition_rv.name}, ..., observed=X)"
        )
    if len(found) > 1:
        raise ValueError(
            f"partition {partition_rv.name!r} has {len(found)} observation models "
            f"({', '.join(o.name for o in found)}); one per partition is supported"
        )
    return found[0]


def _log_transformed(model, rv):
    """Whether the value variable of parameter ``rv`` is its log (PyMC's default for ``pm.Gamma``); other transforms are a ``TypeError``."""
    transform = model.rvs_to_transforms.get(rv)
    if transform is None:
        return False
    if isinstance(transform, LogTransform):
        return True
    raise TypeError(
        f"{rv.name} has the transform {type(transform).__name__}; a partition step writes cluster parameters "
        "untransformed or through the default log transform only"
    )
