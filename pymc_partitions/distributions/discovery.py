"""The model read once: :func:`read_problem` finds everything a reader of a partition model needs, in one place.

Every reader of a model with a partition variable -- the step methods,
``pm.sample``'s default step assignment (``steps.default``), the summaries,
the posterior predictive draws and the calibration of the coarsening -- takes
the :class:`Problem` of its partition from here.  Reading it:

1. the partition prior: ``model.values_to_rvs[z_value]``, whose op says which
   Gibbs-type prior it is (``op.prior_code``) and whose inputs are the prior's
   hyperparameters;
2. the observation model: the observed variable of the package whose
   partition input is that random variable (exactly one), or else the
   component model written in PyMC that the observed variables depending on
   it form (``distributions.components.find_component_model``);
3. its kind (``_dispatch``: additive, relational, parametric), family, number
   of features and coarsening power ``zeta``;
4. the data in the kernels' coordinates (``families.kernel_data`` minus the
   origin of ``families.origin``: the column means for the families with a
   location), computed once; a component model's data are the log
   likelihoods under the current rows, computed at every step
   (``cluster_rows.ComponentRows``);
5. the cluster rows a step moves with ``z`` (``cluster_rows.ClusterRows``:
   ``NormalMixture``'s parameters, a component model's row variables), or
   ``None``;
6. :class:`Hyperparameters`: the graphs of the prior's and the family's
   hyperparameters, evaluated at a step's point (so hyperparameters moved by
   other PyMC steps, NUTS or slice, are read fresh at each step) or at a
   posterior draw, each function compiled once, at its first use.

Reading compiles PyTensor functions (the component model's checks, the
hyperparameter function: about a second each), so a problem is read once for
a model and its variables and shared: the last :data:`READ_KEPT` are
remembered, and a variable added to a model makes it a new one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
from pytensor.graph.replace import clone_replace
from pytensor.graph.traversal import ancestors

from pymc_partitions import families
from pymc_partitions._dispatch import PARAMETRIC
from pymc_partitions._jit import announcing_if_slow
from pymc_partitions._validation import constant_value
from pymc_partitions.distributions.cluster_rows import ClusterRows, ComponentRows, ParameterBlock
from pymc_partitions.distributions.components import ComponentModel, find_component_model
from pymc_partitions.distributions.mixtures import PartitionMixtureRV, mixture_spec, observed_data
from pymc_partitions.distributions.observed import model_observed_rvs
from pymc_partitions.distributions.partitions import _PartitionRV

__all__ = ["Problem", "Hyperparameters", "read_problem", "read_observed", "partition_variables", "is_partition_variable"]

READ_KEPT = 8
"""How many problems :func:`read_problem` remembers (the last ones read)."""
_read = {}


def is_partition_variable(var):
    """True for a partition-prior random variable (or its value variable's RV)."""
    return isinstance(getattr(var.owner, "op", None), _PartitionRV)


def partition_variables(model):
    """The value variables of ``model``'s partition variables, in the model's order."""
    return [v for v in model.value_vars if is_partition_variable(model.values_to_rvs[v])]


class Hyperparameters:
    """The current values of a partition prior's and its observation model's hyperparameters.

    The graphs are the model's, read once; they are evaluated two ways, each
    compiled at its first use and then shared by every reader of the problem:

    * :meth:`__call__` at a PyMC *point* (the value variables, transformed:
      what a step sees), ``model.compile_fn(..., point_fn=True)``;
    * :meth:`at_draw` at a *posterior draw* (the values of the free random
      variables :attr:`draw_inputs` by name, untransformed: what ``idata``
      holds), for the summaries, the posterior predictive and the calibration.

    Either gives ``(prior_values, family_values)``: the prior's
    hyperparameters in the order of ``priors.PARAM_NAMES`` and the family's
    kernel hyperparameters in ``families.pack_params`` order, float64 arrays.
    """

    def __init__(self, model, prior_inputs, family_hypers, compile_kwargs):
        graphs = [*prior_inputs, *family_hypers]
        self.n_prior = len(prior_inputs)
        self._model = model
        self._compile_kwargs = compile_kwargs
        self._point_graphs = model.replace_rvs_by_values(graphs)
        stand_ins = {free: free.type(name=free.name) for free in model.free_RVs}
        self._draw_graphs = clone_replace(graphs, replace=stand_ins)
        needed = set(ancestors(self._draw_graphs))
        self._draw_stand_ins = [stand_in for stand_in in stand_ins.values() if stand_in in needed]
        self.draw_inputs = tuple(v.name for v in self._draw_stand_ins)
        """The free random variables the hyperparameters depend on, by name (what :meth:`at_draw` reads)."""
        self.draw_shapes = tuple(tuple(v.type.shape) for v in self._draw_stand_ins)
        """The shape of one draw of each of :attr:`draw_inputs` (``None`` entries: not fixed)."""
        self._at_point = self._at_draw = None

    def __call__(self, point):
        if self._at_point is None:  # at the first call: pm.sample's step assignment reads the problem, not this
            with announcing_if_slow("compiling the partition's hyperparameters with PyTensor, first use only"):
                self._at_point = self._model.compile_fn(
                    self._point_graphs, inputs=self._model.value_vars, on_unused_input="ignore", point_fn=True,
                    **self._compile_kwargs,
                )
        return self._split(self._at_point(point))

    def at_draw(self, values):
        """The values at one posterior draw: ``values[q]`` is the draw of :attr:`draw_inputs` ``[q]``."""
        if self._at_draw is None:
            self._at_draw = pytensor.function(
                self._draw_stand_ins, self._draw_graphs, on_unused_input="ignore", allow_input_downcast=True
            )
        return self._split(self._at_draw(*values))

    def _split(self, outputs):
        values = [np.asarray(v, dtype=float) for v in outputs]
        return values[: self.n_prior], values[self.n_prior :]


@dataclass(frozen=True, eq=False)
class Problem:
    """A partition variable and everything about its model that a sampler or a summary reads (module docstring).

    Attributes
    ----------
    model : pm.Model
    partition : TensorVariable
        The partition's random variable; ``name`` its name (that of its value variable and of ``z`` in a point).
    value_var : TensorVariable
    n : int
        Number of items.
    prior : int
        The partition prior's ``priors`` code.
    kind : str
        The observation model's kind (``_dispatch``: ``ADDITIVE``, ``RELATIONAL``, ``PARAMETRIC``).
    family : int
        Its family code (``families``; ``families.COMPONENT`` for a component model).
    observation : TensorVariable or ComponentModel
        The package's observed variable, or the component model written in PyMC.
    d : int
        Number of features (``K_max`` for a component model: the kernels' data are its log likelihoods).
    zeta : float
        The power of every item's likelihood (``coarsening=c``; 1 without).
    data, origin : ndarray
        The data in the kernels' coordinates and the origin they are relative to (``state.Model``).
    constants : tuple
        The family's hyperparameters that encode the data, as constants (``None`` where not constant).
    rows : ClusterRows or None
        The cluster rows a step moves with ``z`` (``distributions.cluster_rows``).
    hyperparameters : Hyperparameters
    observed : ndarray or None
        The observation model's observed data as given, ``(n, d)`` float64 (``None`` for a component model).
    """

    model: pm.Model
    partition: object
    value_var: object
    n: int
    prior: int
    kind: str
    family: int
    observation: object
    d: int
    zeta: float
    data: np.ndarray
    origin: np.ndarray
    rows: ClusterRows | None
    hyperparameters: Hyperparameters
    observed: np.ndarray | None

    @property
    def name(self):
        """The partition variable's name (``None`` for labels given as a constant, :func:`read_observed`)."""
        return None if self.value_var is None else self.value_var.name

    @property
    def component(self):
        """The component model written in PyMC, or ``None`` for an observation model of the package."""
        return self.observation if isinstance(self.observation, ComponentModel) else None


def read_problem(model, vars=None, compile_kwargs=None):
    """The :class:`Problem` of the partition variable ``vars`` of ``model`` (module docstring).

    ``vars`` is the partition variable (its random or value variable, or its
    name), or ``None`` for the model's only one; ``model`` a ``pm.Model`` (``None``:
    the model in context).  A ``TypeError`` or ``ValueError`` names what is
    missing or not allowed.  Remembered for the model and its variables
    (:data:`READ_KEPT`).

    Examples
    --------
    >>> import numpy as np, pymc as pm, pymc_partitions as pmp
    >>> from pymc_partitions.distributions.discovery import read_problem
    >>> with pm.Model() as model:
    ...     z = pmp.DirichletProcessPartition("z", alpha=1.0, n=4)
    ...     x = pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=1.0, a0=2.0, b0=2.0, observed=np.ones((4, 2)))
    >>> problem = read_problem(model, z)
    >>> problem.name, problem.n, problem.kind, problem.d
    ('z', 4, 'additive', 2)
    """
    if model is not None and not isinstance(model, pm.Model):
        raise TypeError(f"model must be a pm.Model or None (the model in context), got {type(model).__name__}")
    model = pm.modelcontext(model)
    value_var = _partition_value_var(model, vars)
    kwargs = dict(compile_kwargs or {})
    key = (model, value_var, tuple(model.basic_RVs), tuple(model.potentials), repr(sorted(kwargs.items())))
    if key not in _read:
        if len(_read) >= READ_KEPT:
            _read.pop(next(iter(_read)))
        _read[key] = _read_problem(model, value_var, kwargs)
    return _read[key]


def _partition_value_var(model, vars):
    """The value variable of the one partition variable among ``vars`` (``None``: the model's)."""
    if vars is None:
        found = partition_variables(model)
        if len(found) != 1:
            raise ValueError(
                f"the model has {len(found)} partition variables {[v.name for v in found]}: name one"
                if found else "the model has no partition variable (e.g. pmp.DirichletProcessPartition)"
            )
        return found[0]
    if isinstance(vars, str):
        if vars not in model.named_vars:
            raise ValueError(f"the model has no variable {vars!r} (the partition variable)")
        vars = model.named_vars[vars]
    value_var = model.rvs_to_values.get(vars, vars)
    if value_var not in model.values_to_rvs:
        raise ValueError(f"{getattr(vars, 'name', vars)!r} is not a variable of the model")
    if not is_partition_variable(model.values_to_rvs[value_var]):
        rv = model.values_to_rvs[value_var]
        raise TypeError(
            f"vars must hold a partition variable (e.g. DirichletProcessPartition), got {value_var.name!r} of type "
            f"{type(rv.owner.op).__name__}"
        )
    return value_var


def read_observed(model, observed):
    """The :class:`Problem` of the partition that ``observed``, an observed variable of the package's observation
    models, takes: its partition variable's (:func:`read_problem`), or for labels given as a constant (a partition
    held fixed, as a posterior predictive check of one clustering can) a problem with no prior (``prior`` and
    ``value_var`` ``None``, ``partition`` the constant's graph)."""
    partition = observed.owner.op.dist_params(observed.owner)[0]
    if is_partition_variable(partition):
        return read_problem(model, partition)
    return _read_problem(model, None, {}, observed=observed, partition=partition)


def _read_problem(model, value_var, compile_kwargs, observed=None, partition=None):
    if value_var is not None:
        partition = model.values_to_rvs[value_var]
        observation = observation_model(model, partition)
        prior, prior_inputs = partition.owner.op.prior_code, list(partition.owner.op.dist_params(partition.owner)[:-1])
    else:  # fixed labels: the observed variable is the observation model
        observation, prior, prior_inputs = observed, None, []
    n = int(partition.type.shape[0])
    if isinstance(observation, ComponentModel):
        k_max = observation.k_max
        family, kind, d, zeta = families.COMPONENT, PARAMETRIC, k_max, 1.0
        hypers = (pt.constant(float(k_max)),)
        rows = ComponentRows(observation, value_var.name)
        data, origin = np.zeros((n, k_max)), np.zeros(k_max)  # the log likelihoods under the rows, at each step
        observed_values = None
    else:
        spec = mixture_spec(observation)
        family, d, zeta, hypers = spec.family, spec.d, spec.zeta, spec.hypers
        kind = families.tag(family).kind
        rows = ParameterBlock(model, spec.parameters) if spec.parameters else None
        constants = [constant_value(graph) for graph in hypers]  # what encodes the data (None if not constant)
        observed_values = np.ascontiguousarray(observed_data(model, observation))
        encoded = families.kernel_data(family, observed_values.reshape(n, -1), *constants)
        data, origin = families.centred(family, encoded)
    hyperparameters = Hyperparameters(model, prior_inputs, hypers, compile_kwargs)
    return Problem(
        model, partition, value_var, n, prior, kind, family, observation, d, zeta, data, origin, rows,
        hyperparameters, observed_values,
    )


def observation_model(model, partition_rv):
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
    for obs in model_observed_rvs(model):
        op = getattr(obs.owner, "op", None)
        if isinstance(op, PartitionMixtureRV):
            try:
                _, parameters = op.kernel_inputs(op.dist_params(obs.owner))
            except (TypeError, ValueError):  # not a parameter a step can sample (the step says why)
                continue
            if any(var is parameter for parameter in parameters):
                return True
    return False
