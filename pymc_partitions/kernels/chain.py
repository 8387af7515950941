"""The loop around a kernel's transition, written once: what a step runs at each draw and the test runners in numba.

A chain of a kernel (``kernels.protocol.Kernel``) that has made ``t``
transitions makes the next one in two steps:

1. its sampler state for this transition (:func:`sampler_for`): ``init``'s
   at the chain's first transition, and again wherever the kernel's tuning
   schedule restarts it while PyMC tunes (with the options its ``adapt``
   makes from the last sampler state), then the schedule's ``prepare``;
   for a population kernel, a ``background.Population`` of the last half of
   every chain's history (:func:`window_start`);
2. :func:`advance`: the state rebuilt from its labels when ``t`` is a
   positive multiple of the kernel's ``rebuild_period`` (``state.rebuild``:
   bounds the drift of incrementally updated statistics), then the
   transition.

:func:`advance` is a driver (``kernels.twofold``): a step method runs it
interpreted, so that the transition it calls may itself be a driver run on
threads or an executor; the test runners (``tests/runners.py``) call its
compiled twin inside their numba loops, with the compiled transition.  The
enumeration tests thus run the loop ``pm.sample`` runs, but for the tuning
schedule, which only acts while PyMC tunes (its ``prepare`` leaves a
sampler state that ``init`` made unchanged once tuning is over, and the
runners never tune).
"""

from __future__ import annotations

from pymc_partitions._jit import jit
from pymc_partitions.kernels.background import Population
from pymc_partitions.kernels.twofold import driver
from pymc_partitions.state import canonical_labels, rebuild


@driver
def advance(transition, model, state, sampler, t, period, rng):
    """Transition number ``t + 1`` of a chain that has made ``t``: ``(state, sampler, info)`` of ``transition``,
    from ``state`` rebuilt from its labels first if ``t`` is a positive multiple of ``period``."""
    if t > 0 and t % period == 0:
        state = rebuild(model, state)
    return transition(model, state, sampler, rng)


def sampler_for(kernel, options, model, state, sampler, tuning_step, rng):
    """The sampler state of a chain's next transition (step 1 of the module docstring).

    ``sampler`` is the one the last transition returned (``None`` before the
    first); ``tuning_step`` the number of tuning transitions before this one,
    ``-1`` once PyMC has stopped tuning.  ``init`` reads the chain's current
    labels (canonical, from ``state``); at a restart it gets the options the
    schedule's ``adapt`` makes from the last sampler state, if it has one.
    """
    schedule = kernel.schedule
    restart = tuning_step >= 0 and schedule.restart is not None and schedule.restart(tuning_step)
    if sampler is None or restart:
        if sampler is not None and schedule.adapt is not None:
            options = schedule.adapt(options, sampler)
        sampler = kernel.init(model, canonical_labels(state).astype(state.labels.dtype), options, rng)
    if schedule.prepare is not None:
        sampler = schedule.prepare(sampler, tuning_step)
    return sampler


@jit
def window_start(count):
    """The first row of a population's history window when ``count`` rows are recorded: rows ``count // 2 ..
    count - 1`` (the last half of the run, diminishing adaptation; the last row the current states)."""
    return count // 2


@jit
def population_sampler(options, history, first, own):
    """The sampler state of a population kernel's transition for chain ``own``: the window of the history, of which
    ``history`` (rows x chains x items) holds rows ``first, first + 1, ...`` (the older ones dropped)."""
    start = window_start(first + history.shape[0]) - first
    return Population(options, history[start:], own)
