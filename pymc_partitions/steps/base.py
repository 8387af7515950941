"""Graph discovery and value plumbing shared by the partition step methods (layer 6).

A step is built for one partition variable ``z``.  It finds

* the partition prior: ``model.values_to_rvs[z_value]``, whose op says which
  Gibbs-type prior it is (``op.prior_code``) and whose inputs are the prior's
  hyperparameters;
* the observation model: the observed variable of ours whose partition input
  is that random variable (exactly one is supported);

and compiles one function from the model's value variables to the current
values of every hyperparameter, so hyperparameters moved by other PyMC steps
(NUTS, slice) are read fresh at each step.  The numba state is rebuilt from
``z`` at every step; the math lives in ``kernels``.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
from pymc.step_methods.compound import BlockedStep, Competence
from pymc.util import get_random_generator, get_value_vars_from_user_vars

from pymc_partitions import families, priors
from pymc_partitions.distributions.mixtures import PartitionMixtureRV, mixture_spec, observed_data
from pymc_partitions.distributions.partitions import _PartitionRV
from pymc_partitions.state import build_state, canonical_labels, largest_fraction, log_joint, make_model

SAMPLE_STATS = {
    "partition_accepted": (bool, []),
    "partition_accept": (np.float64, []),
    "partition_move": (np.int64, []),
    "partition_n_clusters": (np.int64, []),
    "partition_log_joint": (np.float64, []),
    "partition_largest_fraction": (np.float64, []),
}
"""Sample stats of every partition step.  ``partition_move``: 0 = Gibbs sweep,
1 = split proposal, 2 = merge proposal (of the step's last proposal);
``partition_log_joint`` is ``log p(z | hyperparameters) + log p(x | z, hyperparameters)``
after the step."""


LABEL_STAT_PREFIX = "partition_label_"
"""``keep_items=[i, ...]`` records ``z[i]`` as the scalar sample stat ``partition_label_{i}``."""


def _check_keep_items(items, n):
    """Validated tuple of distinct item indices (empty for ``None``)."""
    if items is None:
        return ()
    arr = np.asarray(items)
    if arr.ndim != 1 or arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"keep_items must be a 1-D list of integer item indices, got {items!r}")
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        raise ValueError(f"keep_items must be indices in 0 .. {n - 1}, got values from {arr.min()} to {arr.max()}")
    if np.unique(arr).shape[0] != arr.shape[0]:
        raise ValueError("keep_items must not contain repeated indices")
    return tuple(int(i) for i in arr)


def check_count(name, value, low):
    """``value`` must be an int >= ``low`` (step options such as ``n_moves``)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")


def check_flag(name, value):
    """``value`` must be True or False."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r}")


def is_partition_variable(var):
    """True for a partition-prior random variable (or its value variable's RV)."""
    return isinstance(getattr(var.owner, "op", None), _PartitionRV)


class PartitionStep(BlockedStep):
    """Base class: one partition variable, its prior and its observation model.

    Subclasses implement ``_transition(model, state, rng) -> (state, stats dict)``.
    ``keep_items`` (a list of item indices) records those items' labels as scalar
    sample stats ``partition_label_{i}``, so that a run that leaves ``z`` out of
    the trace (``pm.sample(var_names=...)``, for large n) still gives their
    co-clustering: ``posterior_similarity(idata, items=...)`` reads them.
    ``initial_point`` is accepted for ``pm.sample``'s automatic assignment and
    not needed (the state is rebuilt from every point); ``compile_kwargs`` go to
    the compiled hyperparameter function.
    """

    stats_dtypes_shapes = SAMPLE_STATS

    def __init__(
        self, vars=None, *, keep_items=None, model=None, rng=None, blocked=True, initial_point=None, compile_kwargs=None
    ):
        model = pm.modelcontext(model)
        value_vars = get_value_vars_from_user_vars(vars, model)
        if len(value_vars) != 1:
            raise ValueError(f"vars must be exactly one partition variable, got {len(value_vars)} variables")
        (value_var,) = value_vars
        rv = model.values_to_rvs[value_var]
        if not is_partition_variable(rv):
            raise TypeError(
                f"vars must be a partition variable (e.g. DirichletProcessPartition), got {rv.name!r} "
                f"of type {type(rv.owner.op).__name__}"
            )
        self.vars = [value_var]
        self.rng = get_random_generator(rng)
        self._z_name = value_var.name
        self._prior_code = rv.owner.op.prior_code
        self._n = int(rv.type.shape[0])
        obs_rv = _find_observation_model(model, rv)
        spec = mixture_spec(obs_rv)
        self._family = spec.family
        self._d = spec.d
        self._data = np.ascontiguousarray(observed_data(model, obs_rv).reshape(self._n, -1), dtype=np.float64)
        prior_inputs = list(rv.owner.op.dist_params(rv.owner)[:-1])
        hyper_graphs = model.replace_rvs_by_values([*prior_inputs, *spec.hypers])
        self._n_prior = len(prior_inputs)
        self._hyper_fn = model.compile_fn(
            hyper_graphs, inputs=model.value_vars, on_unused_input="ignore", point_fn=True, **(compile_kwargs or {})
        )
        self._mfm_cache = (None, None)
        self._memo = (None, None)
        self._keep_items = _check_keep_items(keep_items, self._n)
        self.stats_dtypes_shapes = {
            **type(self).stats_dtypes_shapes,
            **{f"{LABEL_STAT_PREFIX}{i}": (np.int64, []) for i in self._keep_items},
        }
        # pm.sample's NDArray backend reads the older ``stats_dtypes`` form
        self.stats_dtypes = [{name: dtype for name, (dtype, _) in self.stats_dtypes_shapes.items()}]

    @staticmethod
    def competence(var, has_grad=None):
        """IDEAL for partition variables, so ``pm.sample`` never assigns Metropolis to labels."""
        return Competence.IDEAL if is_partition_variable(var) else Competence.INCOMPATIBLE

    def _require_items(self, minimum):
        if self._n < minimum:
            raise ValueError(f"{type(self).__name__} needs a partition of at least {minimum} items, got {self._n}")

    def _kernel_model(self, point):
        """The kernels' ``Model`` tuple at the hyperparameter values of ``point``.

        Memoised on the hyperparameter values (a pure cache: the result depends
        only on them), so steps with fixed hyperparameters skip the packing.
        """
        values = [np.asarray(v, dtype=float) for v in self._hyper_fn(point)]
        last_values, last_model = self._memo
        if last_values is not None and all(np.array_equal(a, b) for a, b in zip(values, last_values)):
            return last_model
        kernel_model = self._build_kernel_model(values)
        self._memo = (values, kernel_model)
        return kernel_model

    def _build_kernel_model(self, values):
        prior_values, family_values = values[: self._n_prior], values[self._n_prior :]
        if self._prior_code == priors.MFM:
            gamma, log_k_prior = float(prior_values[0]), prior_values[1]
            prior_params = np.array([gamma])
            table = self._mfm_table(gamma, log_k_prior)
        else:
            prior_params = np.array([float(v) for v in prior_values])
            table = priors.empty_table()
        params = families.pack_params(self._family, self._d, *family_values)
        return make_model(self._family, self._data, params, self._prior_code, prior_params, table)

    def _mfm_table(self, gamma, log_k_prior):
        cached_gamma, table = self._mfm_cache
        if cached_gamma != gamma:
            table = priors.mfm_log_v_table(gamma, log_k_prior, self._n)
            self._mfm_cache = (gamma, table)
        return table

    def step(self, point):
        kernel_model = self._kernel_model(point)
        state = build_state(kernel_model, np.asarray(point[self._z_name], dtype=np.int64))
        state, stats = self._transition(kernel_model, state, self.rng)
        new_point = dict(point)
        new_point[self._z_name] = canonical_labels(state)
        stats["partition_n_clusters"] = int(state.n_clusters[0])
        stats["partition_log_joint"] = float(log_joint(kernel_model, state))
        stats["partition_largest_fraction"] = float(largest_fraction(state))
        for i in self._keep_items:
            stats[f"{LABEL_STAT_PREFIX}{i}"] = int(new_point[self._z_name][i])
        return new_point, [stats]

    def _transition(self, model, state, rng):  # pragma: no cover - abstract
        raise NotImplementedError


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
