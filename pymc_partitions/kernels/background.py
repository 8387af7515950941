"""The background of population moves: two past partitions and a pair of items (``papers/000_...``, Sec. 2.4).

ARM and past-state split-merge (bSM) choose what to split or merge from the
chains' past states.  The choice may depend on the history but never on the
current state of the chain that moves, or the move would not be reversible
for fixed history (``docs/exactness.md``).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from pymc_partitions._jit import jit
from pymc_partitions.kernels.moves import uniform_index

Population = namedtuple("Population", ["options", "history", "own"])
Population.__doc__ = """The sampler state of a population kernel (ARM, bSM) for one transition of one chain.

options : named tuple      the kernel's options
history : int32[t, S, n]   the window of every chain's past states (canonical labels; the last row the current states)
own : int                  this chain's index in the population

The population steps (``steps.population``) and ``tests/runners.py`` build it before each
transition from the shared history: it is the one input a population move reads besides the model and the state.
"""


def population_init(model, labels, options, rng):
    """A population kernel's ``init``: a :class:`Population` of ``options`` with an empty history (no move is
    possible until the population steps or the test runners give it the chains' history)."""
    return Population(options, np.zeros((0, 1, labels.shape[0]), dtype=np.int32), 0)


@jit
def choose_background(history, own, rng):
    """Draw ``(ok, i, j, za, zb)`` from ``history`` (iterations x chains x items, canonical labels).

    ``za`` is one of chain ``own``'s states, ``zb`` any chain's, never
    ``history[-1, own]`` (the chain's current state); ``za != zb``; ``(i, j)``
    uniform over the pairs they disagree on, relabelled so that ``za_i = za_j``.
    ``ok`` is False if no distinct pair was found in 50 draws (e.g. all states equal).
    """
    n_rows, n_chains, n = history.shape
    dummy = np.empty(0, dtype=history.dtype)
    if n_rows < 2:
        return False, 0, 0, dummy, dummy
    for _ in range(50):
        za = history[rng.integers(0, n_rows - 1), own]
        flat = rng.integers(0, n_rows * n_chains - 1)
        if flat >= (n_rows - 1) * n_chains + own:
            flat += 1  # skip the current state
        zb = history[flat // n_chains, flat % n_chains]
        if not np.array_equal(za, zb):
            i, j = disagreeing_pair(za, zb, rng)
            if za[i] != za[j]:
                za, zb = zb, za
            return True, i, j, za, zb
    return False, 0, 0, dummy, dummy


@jit
def disagreeing_pair(za, zb, rng):
    """``(i, j)`` uniform over ordered pairs with ``[za_i = za_j] != [zb_i = zb_j]`` (at least one exists). O(n log n)."""
    n = za.shape[0]
    size_a = np.zeros(n, dtype=np.int64)
    size_b = np.zeros(n, dtype=np.int64)
    for h in range(n):
        size_a[za[h]] += 1
        size_b[zb[h]] += 1
    joint_key = za.astype(np.int64) * n + zb
    order = np.argsort(joint_key)
    joint = np.empty(n, dtype=np.int64)
    lo = 0
    for q in range(1, n + 1):
        if q == n or joint_key[order[q]] != joint_key[order[lo]]:
            for r in range(lo, q):
                joint[order[r]] = q - lo
            lo = q
    partners = np.empty(n, dtype=np.int64)
    total = 0
    for h in range(n):
        partners[h] = (size_a[za[h]] - 1) + (size_b[zb[h]] - 1) - 2 * (joint[h] - 1)
        total += partners[h]
    r = rng.integers(0, total)
    i = 0
    while r >= partners[i]:
        r -= partners[i]
        i += 1
    for j in range(n):
        if j != i and (za[j] == za[i]) != (zb[j] == zb[i]):
            if r == 0:
                return i, j
            r -= 1
    return i, i  # unreachable


@jit
def random_pair(n, rng):
    """A uniformly random ordered pair of distinct items (the background of ``srm``)."""
    i = uniform_index(n, rng)
    j = uniform_index(n - 1, rng)
    return i, (j + 1 if j >= i else j)
