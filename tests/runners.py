"""Test support: run a kernel's transition for many iterations inside numba and record the labels.

Used where thousands of cheap iterations would otherwise pay Python call
overhead each time: the enumeration tests (many steps on tiny problems) and
the benchmarks (which import this module from ``tests/``).  The runners take
the transition function itself, the one a PyMC step method runs (its
``kernel.transition``, compiled: ``twofold.compiled``), with the sampler
state its ``init`` builds from the step's options, so one iteration here is
exactly one ``step`` of that step method with fixed hyperparameters: the
same kernel, the same options and the same loop, ``kernels.chain``'s
(``advance``, compiled here: the state kept between iterations and rebuilt
from its labels every ``kernel.rebuild_period`` transitions; a population
kernel's ``Population`` from ``population_sampler``), past tuning (the
runners never tune).

* :func:`run`: independent chains, each carrying its own sampler state
  (:func:`run_with_gibbs`: one chain, each iteration followed by collapsed
  Gibbs sweeps);
* :func:`run_population`: the chains of a population kernel (ARM, bSM),
  updated synchronously, each transition given the window of every chain's
  history (``chain.population_sampler``), exactly as the population steps
  (``ARMStep``, ``PastStatesSplitMergeStep``) see it inside ``pm.sample``.

Both take a function as an argument, which numba cannot cache: each is
compiled once per process and transition (they are small; the transitions
they call are cached).  :func:`run_kernel` runs a ``kernels.protocol.Kernel``
with the right one.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from pymc_partitions.kernels import gibbs
from pymc_partitions.kernels.chain import advance, population_sampler
from pymc_partitions.kernels.info import MOVE_MERGE, MOVE_SPLIT
from pymc_partitions.kernels.parameters import initialise
from pymc_partitions.kernels.twofold import compiled
from pymc_partitions.labels import relabel
from pymc_partitions.state import build_state, canonical_labels

_advance = compiled(advance)


def run_kernel(kernel, options, model, z0, n_iterations, rng):
    """:func:`run` or :func:`run_population` of ``kernel`` (a ``kernels.protocol.Kernel``, e.g. a step's
    ``step.kernel``) with ``options``: its compiled transition, and for a kernel that is not a population kernel
    the sampler state its ``init`` builds from the first chain's start.  ``model`` is a kernel model
    (``step.kernel_model(point)``)."""
    transition = compiled(kernel.transition)
    if kernel.population:
        return run_population(transition, model, z0, options, kernel.rebuild_period, n_iterations, rng)
    sampler = kernel.init(model, relabel(np.asarray(z0[0])).astype(np.int64), options, rng)
    return run(transition, model, z0, sampler, kernel.rebuild_period, n_iterations, rng)


def run_chain(kernel, options, model, z, n_iterations, n_gibbs, rng):
    """One chain of ``kernel`` with ``options`` from the labels ``z``, each iteration followed by ``n_gibbs``
    collapsed Gibbs sweeps (:func:`run_with_gibbs`): the canonical labels after each iteration."""
    sampler = kernel.init(model, relabel(np.asarray(z)).astype(np.int64), options, rng)
    transition = compiled(kernel.transition)
    return run_with_gibbs(transition, model, np.asarray(z), sampler, kernel.rebuild_period, n_iterations, n_gibbs, rng)


@njit
def run(transition, model, z0, sampler, period, n_iterations, rng):
    """Run ``z0.shape[0]`` chains of ``transition`` for ``n_iterations`` (``chain.advance``, states rebuilt every
    ``period`` transitions); returns ``(labels, accepted, proposed)``.

    ``z0`` holds the chains' starting labels (chains x items, non-negative;
    the clusters of parametric models get parameters from
    ``parameters.initialise``); every chain starts from the sampler state
    ``sampler`` and carries its own.  ``labels[t, s]`` are chain ``s``'s
    canonical labels after iteration ``t``; ``accepted``/``proposed`` count,
    per chain, the split and merge proposals reported by the transitions' ``Info``.
    """
    n_chains, n = z0.shape
    labels = np.empty((n_iterations, n_chains, n), dtype=np.int32)
    states = [_start(model, z0[s], rng) for s in range(n_chains)]
    samplers = [sampler for _ in range(n_chains)]
    accepted = np.zeros(n_chains, dtype=np.int64)
    proposed = np.zeros(n_chains, dtype=np.int64)
    for t in range(n_iterations):
        for s in range(n_chains):
            states[s], samplers[s], info = _advance(transition, model, states[s], samplers[s], t, period, rng)
            _count(info, s, accepted, proposed)
            labels[t, s] = info.labels
    return labels, accepted, proposed


@njit
def run_population(transition, model, z0, options, period, n_iterations, rng):
    """:func:`run` for a population kernel: each transition given ``population_sampler(options, history, 0, s)``."""
    n_chains, n = z0.shape
    history = np.empty((n_iterations + 1, n_chains, n), dtype=np.int32)
    states = [_start(model, z0[s], rng) for s in range(n_chains)]
    for s in range(n_chains):
        history[0, s] = canonical_labels(states[s])
    accepted = np.zeros(n_chains, dtype=np.int64)
    proposed = np.zeros(n_chains, dtype=np.int64)
    for t in range(1, n_iterations + 1):
        for s in range(n_chains):
            sampler = population_sampler(options, history[:t], 0, s)
            states[s], _, info = _advance(transition, model, states[s], sampler, t - 1, period, rng)
            _count(info, s, accepted, proposed)
            history[t, s] = info.labels
    return history[1:], accepted, proposed


@njit
def run_with_gibbs(transition, model, z, sampler, period, n_iterations, n_gibbs, rng):
    """:func:`run` of one chain from the labels ``z``, each iteration followed by ``n_gibbs`` collapsed Gibbs sweeps
    (``gibbs.sweep``): ``labels[t]``, the canonical labels after iteration ``t``."""
    labels = np.empty((n_iterations, z.shape[0]), dtype=np.int32)
    state = _start(model, z, rng)
    for t in range(n_iterations):
        state, sampler, _ = _advance(transition, model, state, sampler, t, period, rng)
        for _ in range(n_gibbs):
            state, _ = gibbs.sweep(model, state, rng)
        labels[t] = canonical_labels(state)
    return labels


@njit
def _start(model, z, rng):
    """The state of labels ``z``, its clusters given parameters if the model keeps them."""
    state = build_state(model, z.astype(np.int64))
    initialise(model, state, rng)
    return state


@njit
def _count(info, s, accepted, proposed):
    if info.move == MOVE_SPLIT or info.move == MOVE_MERGE:
        proposed[s] += 1
        accepted[s] += info.accepted
