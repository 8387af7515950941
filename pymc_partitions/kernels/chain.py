"""Run a step's transition for many iterations inside numba and record the labels.

Used where thousands of cheap iterations would otherwise pay Python call
overhead each time: the enumeration tests (many steps on tiny problems) and
the benchmarks.  :func:`run` takes the transition function itself, the one a
PyMC step method calls (``type(step).transition``, with ``step.config``), so
one iteration here is exactly one ``step`` of that step method with fixed
hyperparameters: the same kernel, the same options, the state kept between
iterations and rebuilt from its labels every ``state.REBUILD_PERIOD``
iterations as the steps do.

The chains are updated synchronously, and each sees the last half of every
chain's history (iterations ``t//2 .. t-1``, the last row the current
states), exactly as the population steps (``ARMStep``,
``SplitMergeStep(init="past_states")``) see it inside ``pm.sample``; the
other transitions ignore the history, and the chains are then independent.

``run`` takes a function as an argument, which numba cannot cache: it is
compiled once per process and transition (it is small; the transitions it
calls are cached).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from pymc_partitions._jit import jit
from pymc_partitions.kernels.info import MOVE_MERGE, MOVE_SPLIT
from pymc_partitions.kernels.parameters import initialise
from pymc_partitions.state import REBUILD_PERIOD, build_state, canonical_labels, rebuild


@njit
def run(transition, model, z0, config, n_iterations, rng):
    """Run ``z0.shape[0]`` chains of ``transition`` for ``n_iterations``; returns ``(labels, accepted, proposed)``.

    ``z0`` holds the chains' starting labels (chains x items, non-negative;
    the clusters of parametric models get parameters from ``parameters.initialise``);
    ``labels[t, s]`` are chain ``s``'s canonical labels after iteration
    ``t``; ``accepted``/``proposed`` count, per chain, the split and merge
    proposals reported by the transitions' ``Info``.
    """
    n_chains, n = z0.shape
    history = np.empty((n_iterations + 1, n_chains, n), dtype=np.int32)
    states = [build_state(model, z0[s].astype(np.int64)) for s in range(n_chains)]
    for s in range(n_chains):
        initialise(model, states[s], rng)
        history[0, s] = canonical_labels(states[s])
    accepted = np.zeros(n_chains, dtype=np.int64)
    proposed = np.zeros(n_chains, dtype=np.int64)
    for t in range(1, n_iterations + 1):
        window = history[t // 2 : t]
        for s in range(n_chains):
            if t % REBUILD_PERIOD == 0:
                states[s] = rebuild(model, states[s])
            state, info = transition(model, states[s], config, window, s, rng)
            states[s] = state
            if info.move == MOVE_SPLIT or info.move == MOVE_MERGE:
                proposed[s] += 1
                accepted[s] += info.accepted
            history[t, s] = canonical_labels(state)
    return history[1:], accepted, proposed
