"""Independent random streams for the shards of one iteration (SplitMix64, in numba).

The hybrid sampler (``kernels.hybrid``) updates its shards in parallel: in
numba threads on one machine, or on Dask workers.  Its chain must not depend
on where or in which order the shards run, so each shard draws from its own
stream, a pure function of ``(seed, shard)``: ``seed`` is drawn once per
iteration from the step's ``np.random.Generator``, and the shard's stream
starts at ``mix64(seed + γ (shard + 1))``.  A stream is a one-element
``uint64`` array (the generator's state), advanced in place.

The generator is SplitMix64 (Steele, Lea & Flood 2014, "Fast splittable
pseudorandom number generators", OOPSLA), the seeding generator of the
xoshiro family: state ``x ← x + γ`` with the odd Weyl constant
``γ = 0x9E3779B97F4A7C15``, output ``mix64(x)``, a bijective 64-bit
finaliser; it passes BigCrush.  Two streams are the same Weyl sequence from
different starting points, so they overlap only if their starts lie within
the number of draws made of each other, about ``2^-64 × draws × shards²``
for random starts (below ``10^-6`` for 10^6 draws on each of 10^3 shards).
:func:`uniform` keeps the top 53 bits: a float64 in ``[0, 1)`` on the grid
``2^-53 k``, as ``np.random.Generator.random``.

:func:`keyed_uniform` is the counter-based form of the same generator: the
``(key + 1)``-th output of the stream that starts at ``seed``, computed
directly.  A loop that draws one uniform per item keyed by the item's index
(the sub-cluster split-merge's passes, ``kernels.subcluster``) then gets the
same numbers whatever the order of the items, how they are split into shards
or which thread runs them.
"""

from __future__ import annotations

import numpy as np

from pymc_partitions._jit import jit

GAMMA = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)
_UNIT = 2.0**-53


@jit(inline="always")
def mix64(x):
    """SplitMix64's output function (a bijection of uint64)."""
    x = (x ^ (x >> _S30)) * _M1
    x = (x ^ (x >> _S27)) * _M2
    return x ^ (x >> _S31)


@jit
def stream(seed, index):
    """The stream of shard ``index`` for the iteration seed ``seed`` (non-negative integers)."""
    return np.array([mix64(np.uint64(seed) + GAMMA * np.uint64(index + 1))], dtype=np.uint64)


@jit(inline="always")
def next_uint64(state):
    """The next 64-bit output of the stream ``state`` (advanced in place)."""
    state[0] += GAMMA
    return mix64(state[0])


@jit(inline="always")
def uniform(state):
    """A float64 uniform on ``[0, 1)`` (53 random bits) from the stream ``state``."""
    return np.float64(next_uint64(state) >> _S11) * _UNIT


@jit(inline="always")
def keyed_uniform(seed, key):
    """A float64 uniform on ``[0, 1)`` for ``key`` (a non-negative integer) under ``seed``, with no state.

    ``mix64(seed + γ (key + 1))``, the ``(key + 1)``-th SplitMix64 output from
    the state ``seed``, top 53 bits: distinct keys under one seed are
    distinct outputs of one SplitMix64 sequence.
    """
    return np.float64(mix64(np.uint64(seed) + GAMMA * np.uint64(key + 1)) >> _S11) * _UNIT
