"""Run a kernel schedule for many iterations inside numba and record the labels.

Used where thousands of cheap iterations would otherwise pay Python call
overhead each time: the enumeration tests (many steps on tiny problems) and
the benchmarks.  One iteration of each schedule is exactly one step of the
corresponding PyMC step method with fixed hyperparameters.

Schedules: ``GIBBS`` (one sweep), ``SPLIT_MERGE`` (one proposal),
``SPLIT_MERGE_GIBBS`` (one proposal followed by one sweep).

:func:`run_population` runs the population samplers (ARM and its variants,
and past-state split-merge, bSM) over ``S`` chains updated synchronously,
each seeing the last half of every chain's history, exactly as ``ARMStep`` and
``SplitMergeStep(init="past_states")`` do inside ``pm.sample``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from pymc_partitions.kernels import arm, gibbs, split_merge
from pymc_partitions.state import build_state, canonical_labels

GIBBS = 0
SPLIT_MERGE = 1
SPLIT_MERGE_GIBBS = 2

PAST_STATES_SPLIT_MERGE = -1
"""``run_population``'s ``variant`` for bSM (the others are ``arm.ARM``, ``arm.SARM``, ``arm.SRM``)."""


@njit(cache=True)
def run_chain(model, z, schedule, n_iterations, n_intermediate, rng):
    """Canonical labels after each of ``n_iterations`` iterations, shape ``(n_iterations, n)``."""
    state = build_state(model, z)
    trace = np.empty((n_iterations, z.shape[0]), dtype=np.int32)
    for t in range(n_iterations):
        if schedule != GIBBS:
            state, _ = split_merge.propose(model, state, rng, n_intermediate)
        if schedule != SPLIT_MERGE:
            state, _ = gibbs.sweep(model, state, rng)
        trace[t] = canonical_labels(state)
    return trace


@njit(cache=True)
def population_move(model, state, history, own, variant, n_intermediate, rng):
    """One population move of chain ``own``: ARM/sARM/sRM (``variant`` >= 0) or bSM; returns ``(state, ARMInfo)``.

    For bSM, the split-merge outcome is reported in the same record
    (``cluster_change`` = +1/-1 if accepted).
    """
    if variant >= 0:
        return arm.background_move(model, state, history, own, variant, rng)
    ok, i, j, za, zb = arm.choose_background(history, own, rng)
    if not ok:
        return state, arm.ARMInfo(arm.MOVE_NONE, False, 0.0, 0.0, 0.0, 0, True)
    state, info = split_merge.propose_pair(model, state, i, j, za, zb, rng, n_intermediate)
    change = 0
    if info.accepted:
        change = 1 if info.move == split_merge.MOVE_SPLIT else -1
    return state, arm.ARMInfo(info.move, info.accepted, info.accept_prob, info.log_target_ratio, info.log_proposal_ratio, change, True)


@njit(cache=True)
def run_population(model, z0, variant, n_iterations, n_intermediate, gibbs_sweep, rng):
    """Run ``z0.shape[0]`` chains for ``n_iterations``; returns ``(labels, accepted, moved)``.

    ``labels[t, s]`` are chain ``s``'s canonical labels after iteration ``t``;
    ``accepted``/``moved`` count accepted and attempted moves per chain.
    """
    n_chains, n = z0.shape
    states = np.empty((n_iterations + 1, n_chains, n), dtype=np.int32)
    for s in range(n_chains):
        states[0, s] = canonical_labels(build_state(model, z0[s]))
    accepted = np.zeros(n_chains, dtype=np.int64)
    moved = np.zeros(n_chains, dtype=np.int64)
    for t in range(1, n_iterations + 1):
        history = states[t // 2 : t]
        for s in range(n_chains):
            state = build_state(model, states[t - 1, s].astype(np.int64))
            state, info = population_move(model, state, history, s, variant, n_intermediate, rng)
            if info.move != arm.MOVE_NONE:
                moved[s] += 1
                accepted[s] += info.accepted
            if gibbs_sweep:
                state, _ = gibbs.sweep(model, state, rng)
            states[t, s] = canonical_labels(state)
    return states[1:], accepted, moved
