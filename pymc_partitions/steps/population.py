"""Population partition steps: a history of every chain's past states, and slice sampling for hyperparameters.

``pm.sample`` runs a step that is a ``PopulationArrayStepShared`` as a
population (at least 3 chains): each chain gets a shallow copy of the step,
linked to the list of all chains' current points, and the chains advance
synchronously (each sees the others' states from the previous iteration), in
one process or one process per chain.  The history is therefore created per
chain in :meth:`link_population` and updated from the population at every step,
so ``cores=1`` and ``cores>1`` see identical histories and, under
``random_seed``, give identical traces.

PyMC's NUTS copies share their step-size adaptation in population mode, so by
default (``hyperparameters="slice"``) a population step also owns every other
continuous free variable of the model and moves it with its own ``pm.Slice``
after the partition move, logging that it does so.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import field

import numpy as np
import pymc as pm
from pymc.step_methods.arraystep import PopulationArrayStepShared
from pymc.step_methods.state import dataclass_state

from pymc_partitions._validation import check_option
from pymc_partitions.kernels.chain import window_start
from pymc_partitions.steps.base import PartitionStep, PartitionStepState
from pymc_partitions.steps.kept import KeptChain
from pymc_partitions.steps.kernel_model import KernelModels

_log = logging.getLogger("pymc")

MIN_CHAINS = 3
"""Population steps need at least this many chains (PyMC's population sampler needs two others per chain)."""


@dataclass_state
class PopulationStepState(PartitionStepState):
    history: np.ndarray | None = field(default=None)
    history_first: int = 0
    history_count: int = 0


class PopulationPartitionStep(PartitionStep, PopulationArrayStepShared):
    """Base of ``ARMStep`` and past-state split-merge: population link, history window, hyperparameter slice.

    The history keeps the canonical labels of every chain after each
    iteration; :meth:`_history_window` returns the last half of it
    (iterations ``t//2 .. t-1`` of ``t``, diminishing adaptation), whose last row
    holds the current states.  Rows older than the window are dropped, so memory
    is about ``S * t/2 * n`` int32 values.
    """

    _state_class = PopulationStepState
    min_chains = MIN_CHAINS
    """Checked when ``pm.sample`` starts (``distributions.sample_call``), and again when PyMC links the population."""

    def __init__(self, problem, kernel, options, *, hyperparameters="slice", **kwargs):
        self._hyperparameters = check_option("hyperparameters", hyperparameters, ("slice", None))
        super().__init__(problem, kernel, options, **kwargs)
        self.population = None
        self.this_chain = None
        self.other_chains = None
        self.history = None
        self.history_first = 0
        self.history_count = 0
        self._hyper_step = None
        if hyperparameters == "slice":
            self._own_hyperparameters(problem.model)

    def _can_sample(self, value_vars):
        """With ``hyperparameters="slice"`` the step also moves continuous variables (all of the model's)."""
        return self._hyperparameters == "slice" and all(v.dtype.startswith("float") for v in value_vars)

    def _own_hyperparameters(self, model):
        continuous = [v for v in model.value_vars if v is not self.vars[0] and v.dtype.startswith("float")]
        if not continuous:
            return
        # one blocked slice sampler over all of them (coordinate-wise, a width per coordinate): PyMC turns an
        # unblocked Slice over several variables into a CompoundStep, whose per-chain state is spread over its methods
        self._hyper_step = pm.Slice(continuous, model=model, blocked=True)
        self.vars = [self.vars[0], *continuous]  # this step owns them: pm.sample assigns them no other step
        names = ", ".join(model.values_to_rvs[v].name for v in continuous)
        _log.info(
            f"{type(self).__name__}: sampling {names} with one pm.Slice (NUTS adaptation is shared between chains "
            "in population sampling); pass hyperparameters=None to assign those variables yourself"
        )

    def set_rng(self, rng):
        super().set_rng(rng)
        if self._hyper_step is not None:
            self._hyper_step.set_rng(self.rng.spawn(1)[0])

    def stop_tuning(self):
        super().stop_tuning()
        if self._hyper_step is not None:
            self._hyper_step.stop_tuning()

    def link_population(self, population, chain_index):
        if len(population) < MIN_CHAINS:
            raise ValueError(
                f"{type(self).__name__} is a population step and needs pm.sample(chains=...) >= {MIN_CHAINS}, "
                f"got {len(population)} chain(s); the paper uses 8"
            )
        super().link_population(population, chain_index)
        self.history = None
        self.history_first = 0
        self.history_count = 0
        self.chain = KeptChain()  # the chains' copies share attributes: give each its own chain and kernel models
        self._models = KernelModels(self.problem)
        if self._hyper_step is not None:
            # the chains' copies share attributes: give each its own slice sampler state
            self._hyper_step = copy.copy(self._hyper_step)
            self._hyper_step.w = np.copy(self._hyper_step.w)
            self._hyper_step.set_rng(self.rng.spawn(1)[0])

    def _record_population(self):
        if self.population is None:
            raise ValueError(
                f"{type(self).__name__} is a population step: use it in pm.sample with chains >= {MIN_CHAINS} "
                "(the chains share their history)"
            )
        rows = np.stack([np.asarray(p[self.problem.name], dtype=np.int32) for p in self.population])
        if self.history is None:
            self.history = np.empty((16, *rows.shape), dtype=np.int32)
        used = self.history_count - self.history_first
        if used == self.history.shape[0]:
            drop = window_start(self.history_count) - self.history_first
            if drop > 0:
                self.history[: used - drop] = self.history[drop:used]
                self.history_first += drop
                used -= drop
            else:
                grown = np.empty((2 * self.history.shape[0], *rows.shape), dtype=np.int32)
                grown[:used] = self.history[:used]
                self.history = grown
        self.history[used] = rows
        self.history_count += 1

    def _population(self):
        """The rows of the history kept (``history_first ..``; rows before the window are dropped) for the
        transition's ``Population`` (``kernels.chain.population_sampler``), and this chain's index."""
        return self.history[: self.history_count - self.history_first], self.history_first, self.this_chain

    def astep(self, q0):  # pragma: no cover - step() is overridden; ArrayStepShared declares it abstract
        raise NotImplementedError("population partition steps work on points, see step()")

    def step(self, point):
        self._record_population()
        new_point, stats = super().step(point)
        if self._hyper_step is not None:
            new_point, _ = self._hyper_step.step(new_point)
        return new_point, stats
