"""Drawing from unnormalised log weights and the Metropolis-Hastings accept step.

Every sampler picks among a few options with probabilities proportional to
``exp(log_weights)`` (a Gibbs update, a set move, one step of a restricted
scan) and reports the log probability of its pick, which is what its
proposal probabilities are made of; :func:`metropolis_accept` then decides.
"""

from __future__ import annotations

import math

import numpy as np

from pymc_partitions._jit import jit

TWO_53 = 9007199254740992  # 2**53
NEGLIGIBLE_LOG_WEIGHT = -40.0
"""Weights below ``exp(-40) < 2**-57`` times the largest are set to 0 by :func:`exp_normalise`."""


@jit
def shuffle(values, rng):
    """Put the entries of the 1-d array ``values`` in a uniformly random order, in place (Fisher-Yates); returns it.

    Used in place of numba's ``rng.permutation`` and ``rng.shuffle``, whose
    compiled code carries numpy's shape-error messages (about 2 s of a first
    draw, ``docs/benchmarks.md``).
    """
    for q in range(values.shape[0] - 1, 0, -1):
        r = rng.integers(0, q + 1)
        values[q], values[r] = values[r], values[q]
    return values


@jit(inline="always")
def exp_normalise(log_weights, count, scratch):
    """``scratch[k] = exp(log_weights[k] - top)`` for ``k < count``; returns ``(top, sum of scratch)``.

    A weight below ``exp(NEGLIGIBLE_LOG_WEIGHT)`` relative to the largest is
    stored as 0 without calling ``exp``.  The largest contributes 1 to the
    sum, so each such weight is below a tenth of the sum's rounding unit, and
    the distribution changes by less than ``count * 2**-57`` in total
    variation (the uniform draw that picks the index resolves ``2**-53``).
    In a Gibbs sweep over well-separated clusters most ``exp`` calls go
    (``benchmarks/gibbs_throughput.py``).
    """
    top = log_weights[0]
    for k in range(1, count):
        top = max(top, log_weights[k])
    cutoff = top + NEGLIGIBLE_LOG_WEIGHT
    total = 0.0
    for k in range(count):
        scratch[k] = math.exp(log_weights[k] - top) if log_weights[k] > cutoff else 0.0
        total += scratch[k]
    return top, total


@jit(inline="always")
def draw_index(scratch, count, total, rng):
    """Index ``k < count`` drawn with probability ``scratch[k] / total``."""
    return index_at(scratch, count, rng.random() * total)


@jit(inline="always")
def index_at(scratch, count, target):
    """The ``k < count`` with ``sum(scratch[:k]) <= target < sum(scratch[:k+1])`` (the last if none).

    ``target = u * total`` for a uniform ``u`` draws ``k`` with probability
    ``scratch[k] / total``; the uniform may come from any generator (the
    hybrid sampler's shards use ``kernels.streams``).
    """
    for k in range(count - 1):
        target -= scratch[k]
        if target < 0.0:
            return k
    return count - 1


@jit
def choose(log_weights, count, forced, rng):
    """Index drawn ∝ ``exp(log_weights[:count])`` (or ``forced`` if >= 0) and its log probability."""
    return choose_into(log_weights, count, forced, np.empty(count), rng)


@jit(inline="always")
def choose_into(log_weights, count, forced, scratch, rng):
    """:func:`choose` with a caller's ``scratch`` buffer of at least ``count`` floats (allocation-free)."""
    top, total = exp_normalise(log_weights, count, scratch)
    pick = forced if forced >= 0 else draw_index(scratch, count, total, rng)
    return pick, log_weights[pick] - top - math.log(total)


@jit
def metropolis_accept(log_ratio, rng):
    """``(accepted, min(1, exp(log_ratio)))`` for a Metropolis-Hastings log acceptance ratio."""
    accept_prob = 1.0 if log_ratio >= 0 else math.exp(log_ratio)
    return rng.random() < accept_prob, accept_prob


@jit
def uniform_index(n, rng):
    """An integer drawn uniformly from ``0, ..., n - 1`` (``0 < n <= 2**53``), exactly.

    ``rng.random()`` is ``k / 2**53`` with ``k`` uniform on ``0, ..., 2**53 - 1``
    (NumPy's and numba's ``Generator``); ``k`` is accepted if it is below the
    largest multiple of ``n`` not above ``2**53`` (probability above 1/2) and
    returns ``k mod n``, so every index has probability exactly ``1/n``.  It
    replaces ``rng.integers(0, n)``, whose implementation compiles five
    functions into each kernel that draws a pair (``benchmarks/first_draw.py``).
    """
    limit = (TWO_53 // n) * n
    while True:
        k = np.int64(rng.random() * TWO_53)
        if k < limit:
            return k % n
