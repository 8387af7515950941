"""The generic partition step: a problem, a kernel and its options, speaking PyMC's step protocol (docs/design.md §3.6).

A step method is one :class:`PartitionStep` built from

* a problem (``distributions.discovery.Problem``: the model read once --
  the partition, its prior and observation model, the data in kernel
  coordinates, the compiled hyperparameter function, the cluster rows);
* a kernel (``kernels.protocol.Kernel``), whose declared support the step
  checks (``steps.support``);
* the kernel's options, which the subclass validates;
* optionally moves on PyMC's point made before the kernel's transition
  (``NonconjugateSplitMergeStep`` on a component model:
  ``steps.component_split_merge``).

Each draw reads the kernel model at the point's hyperparameter values
(``steps.kernel_model``) and makes one transition of the chain the step
keeps (``steps.kept``, the loop of ``kernels.chain``); the kernel's ``Info``
becomes the sample stats (``kernels.info``).  Subclasses validate their
options, name their kernel and add only what PyMC's protocol needs of them
(the population steps' history); none builds states or sampler states.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

import numpy as np
import pymc as pm
from pymc.step_methods.compound import BlockedStep, StepMethodState
from pymc.step_methods.state import dataclass_state
from pymc.util import get_random_generator, get_value_vars_from_user_vars
from pytensor.graph.basic import Variable

from pymc_partitions._jit import announcing_compilation
from pymc_partitions._validation import check_item_indices, check_random_seed
from pymc_partitions.distributions.discovery import is_partition_variable, partition_variables, read_problem
from pymc_partitions.kernels.info import LABEL_STAT_PREFIX, SAMPLE_STATS, info_stats
from pymc_partitions.steps.default import competence_for
from pymc_partitions.steps.kept import KeptChain
from pymc_partitions.steps.kernel_model import KernelModels
from pymc_partitions.steps.support import check_support, register

_log = logging.getLogger("pymc")
_MOVE_FIELDS = ("move", "accepted", "accept_prob", "log_target_ratio", "log_proposal_ratio")
"""The fields of a move made before the kernel's transition that its sample stats report."""
_STEPPED = set()
"""The step classes that made a draw in this process (:meth:`PartitionStep.step`)."""


@dataclass_state
class PartitionStepState(StepMethodState):
    """What differs between chains: whether PyMC is tuning, and the chain the step keeps (``steps.kept``)."""

    tune: bool = True
    chain: Any = field(default=None)


def problem_of(vars, *, model=None, compile_kwargs=None, initial_point=None, blocked=True):
    """``(problem, others)``: the problem of the one partition variable in ``vars`` (``None``: the model's) and the
    other value variables ``vars`` lists, for a step's constructor; ``initial_point`` and ``blocked`` are accepted
    for ``pm.sample``'s automatic assignment and not needed."""
    if model is not None and not isinstance(model, pm.Model):
        raise TypeError(f"model must be a pm.Model or None (the model in context), got {type(model).__name__}")
    if compile_kwargs is not None and not isinstance(compile_kwargs, Mapping):
        raise TypeError(f"compile_kwargs must be a dict of keyword arguments or None, got {type(compile_kwargs).__name__}")
    model = pm.modelcontext(model)
    value_vars = _value_vars(vars, model)
    partitions = [v for v in value_vars if is_partition_variable(model.values_to_rvs[v])]
    if not partitions:
        given = ", ".join(f"{v.name!r} of type {type(model.values_to_rvs[v].owner.op).__name__}" for v in value_vars)
        raise TypeError(f"vars must hold a partition variable (e.g. DirichletProcessPartition), got {given}")
    if len(partitions) > 1:
        raise ValueError(f"vars must hold one partition variable, got {[v.name for v in partitions]}")
    problem = read_problem(model, partitions[0], compile_kwargs)
    owned = () if problem.rows is None else problem.rows.value_vars
    return problem, [v for v in value_vars if v is not partitions[0] and v not in owned]


class PartitionStep(BlockedStep):
    """One partition variable's step method: ``kernel`` with ``options`` on ``problem`` (module docstring).

    ``others`` are further value variables the caller listed in ``vars``
    (refused unless :meth:`_can_sample` says the step moves them);
    ``moves`` an object of the ``steps.component_split_merge`` kind
    (``support``, ``propose(models, point, rng) -> (point, move)``) made
    before each transition.  ``support`` is what the step samples: by default
    the moves' (with ``moves``) or the kernel's declaration.  ``keep_items`` (item indices) records those
    items' labels as scalar sample stats ``partition_label_{i}``, so that a
    run that leaves ``z`` out of the trace (``pm.sample(var_names=...)``,
    for large n) still gives their co-clustering
    (``posterior_similarity(idata, items=...)``).  ``self.tune`` is true until
    PyMC calls ``stop_tuning``.  ``described_as`` names the step in refusals.
    """

    stats_dtypes_shapes = SAMPLE_STATS
    kernel = None
    """The step's kernel (``kernels.protocol.Kernel``)."""
    supports = ()
    """The supports (``kernels.protocol.Support``) of every kernel or move the class may run: its kernel's by default."""
    _state_class = PartitionStepState

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "supports" not in vars(cls) and cls.kernel is not None:
            cls.supports = (cls.kernel.support,)
        register(cls)

    def __init__(
        self, problem, kernel, options, *, others=(), moves=None, keep_items=None, rng=None, support=None,
        described_as=None,
    ):
        if support is None:
            support = kernel.support if moves is None else moves.support
        check_support(described_as or type(self).__name__, support, problem, type(self).supports)
        rows = () if problem.rows is None else problem.rows.value_vars
        if others and not self._can_sample(others):
            owned = f"the partition variable {problem.name!r}"
            if rows:
                owned += f" and its cluster parameters {', '.join(repr(v.name) for v in rows)}"
            raise TypeError(
                f"{type(self).__name__} samples {owned} only, not {[v.name for v in others]}; leave those to another "
                "step method"
            )
        self.problem, self.kernel, self.options, self._moves = problem, kernel, options, moves
        self.vars = [problem.value_var, *rows, *others]
        self.rng = get_random_generator(check_random_seed("rng", rng))
        self.tune = True
        self.chain = KeptChain()
        self._models = KernelModels(problem)
        self._keep_items = tuple(check_item_indices("keep_items", keep_items, problem.n, allow_empty=True).tolist())
        self.stats_dtypes_shapes = {
            **type(self).stats_dtypes_shapes,
            **{f"{LABEL_STAT_PREFIX}{i}": (np.int64, []) for i in self._keep_items},
        }
        # pm.sample's NDArray backend reads the older ``stats_dtypes`` form
        self.stats_dtypes = [{name: dtype for name, (dtype, _) in self.stats_dtypes_shapes.items()}]

    def _can_sample(self, value_vars):
        """Whether this step also moves ``value_vars`` besides the partition and its cluster rows (the population
        steps' slice sampler does)."""
        return False

    @classmethod
    def competence(cls, var, has_grad=None):
        """IDEAL for the partition variables whose default step this is (``steps.default``), COMPATIBLE for the
        other partition variables, so ``pm.sample`` never assigns Metropolis to labels."""
        return competence_for(cls, var, is_partition_variable(var))

    def kernel_model(self, point):
        """The kernels' ``state.Model`` at the hyperparameter values of ``point`` (what the next draw's transition
        reads; a component model's data are the log likelihoods at the point's rows)."""
        kernel_model = self._models.at(point)
        rows = self.problem.rows
        return kernel_model._replace(data=rows.data(point)) if rows is not None and rows.dynamic else kernel_model

    def step(self, point):
        """One draw.  The first draw of a step class in a process says, in one line of PyMC's log, that numba
        compiles its kernels, if it does (not when they load from the cache)."""
        if type(self) in _STEPPED:
            return self._draw(point)
        _STEPPED.add(type(self))
        message = f"compiling numba kernels for {type(self).__name__}, first use only"
        with announcing_compilation(lambda: _log.info(message)):
            return self._draw(point)

    def _draw(self, point):
        move = None
        if self._moves is not None:
            point, move = self._moves.propose(self._models, point, self.rng)
        new_point, info, sampler = self.chain.draw(
            self.problem, self.kernel, self.options, self._models, point, self.rng, self.tune, self._population()
        )
        if move is not None:  # the stats describe the last proposal; the number of clusters changes as the kernel says
            info = info._replace(**{name: getattr(move, name) for name in _MOVE_FIELDS})
        stats = info_stats(info)
        stats.update(self._sampler_stats(sampler))
        stats["partition_tune"] = bool(self.tune)
        for i in self._keep_items:
            stats[f"{LABEL_STAT_PREFIX}{i}"] = int(info.labels[i])
        return new_point, [stats]

    def _population(self):
        """A population kernel's history ``(history, first, own)`` (``steps.population``); ``None`` here."""
        return None

    def _sampler_stats(self, sampler):
        """Sample stats of the step's own besides ``info.info_stats``'s, from the sampler state (none here)."""
        return {}

    @property
    def executor(self):
        """Where a sharded step's item work runs (``distributed.DaskShards``, with its ``volume`` of bytes moved);
        ``None`` in this process."""
        return getattr(getattr(self, "options", None), "executor", None)

    def __reduce_ex__(self, protocol):
        if self.executor is not None:
            self.executor.__reduce__()  # raises, naming the fix: a live Dask client cannot go to another process
        return super().__reduce_ex__(protocol)


def _value_vars(vars, model):
    """The value variables of ``vars`` (a variable or a list of them; ``None``: the model's partition variables)."""
    if vars is None:
        return partition_variables(model)
    items = vars if isinstance(vars, Sequence) and not isinstance(vars, str) else [vars]
    if not items or not all(isinstance(v, Variable) for v in items):
        raise TypeError(f"vars must be a model variable or a list of them (the partition variable), got {vars!r}")
    return get_value_vars_from_user_vars(vars, model)
