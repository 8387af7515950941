"""Run a kernel schedule for many iterations inside numba and record the labels.

Used where thousands of cheap iterations would otherwise pay Python call
overhead each time: the enumeration tests (many steps on tiny problems) and
the benchmarks.  One iteration of each schedule is exactly one step of the
corresponding PyMC step method with fixed hyperparameters.

Schedules: ``GIBBS`` (one sweep), ``SPLIT_MERGE`` (one proposal),
``SPLIT_MERGE_GIBBS`` (one proposal followed by one sweep).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from pymc_partitions.kernels import gibbs, split_merge
from pymc_partitions.state import build_state, canonical_labels

GIBBS = 0
SPLIT_MERGE = 1
SPLIT_MERGE_GIBBS = 2


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
