"""The sub-cluster split-merge's passes over items, per shard: numba loops, what a Dask worker runs too.

A *pass* runs over ``R``, the items of a proposal's pair of clusters but
the anchors (indices in increasing order), split by the sampler's
contiguous global shards (``hybrid.shard_bounds``).  Each item takes side 1
with probability ``p_h(1)`` -- ``w_1 f(x_h | θ_1) / Σ_t w_t f(x_h | θ_t)``,
or the anchors' predictive ``p(x_h | x_anchor_t)`` for the seeding pass --
when its *keyed uniform* ``streams.keyed_uniform(seed, h)`` is below it, so
its side is a function of the pass's seed and of the item alone, whatever
shard, thread or worker draws it (:func:`drawn_side`); or the side is
forced by the labels (a merge's current split).  Per shard a pass returns
the two sides' counts and statistics and ``Σ log p_h`` (O(s)), which the
driver adds in shard order (:func:`reduce_shards`).

Loops over shards are written once with ``prange`` (``twofold.threaded``):
numba threads from Python on many items, serial below and in compiled code.
:func:`scan_pair` finds ``R`` from the labels by shard (what a worker
holding labels does); :func:`assign_labels` and :func:`relink_sides` apply
a pass's sides to a label vector or a state.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import prange

from pymc_partitions import families
from pymc_partitions._jit import jit
from pymc_partitions.kernels.streams import keyed_uniform
from pymc_partitions.kernels.twofold import driver, threaded
from pymc_partitions.state import relink

PassPlan = namedtuple(
    "PassPlan",
    ["items", "bounds", "offset", "predictive", "densities", "log_w", "seed", "labels", "forced_slot", "want_log_q"],
)
PassPlan.__doc__ = """What every shard of one pass reads, beside the family tag, the data and the parameters (the pass's
counterpart of ``hybrid.Plan``; the arrays a pass writes are arguments of their own, since a parallel loop's writes
into a named tuple's array can be lost).

items : int64[m]           the pass's items (indices into the data rows), increasing ...
bounds : int64[P + 1]      ... those of shard ``s`` being ``items[bounds[s]:bounds[s + 1]]``
offset : int               the index among all items of the first data row: item ``h``'s key is ``h + offset``
predictive : bool          the sides' weights are the predictives ``p(x_h | cache densities[t])`` (the seeding
                           pass), else ``log_w[t] + log f(x_h | θ = densities[t])``
densities : float64[2, :]  the two sides' predictive caches or parameters θ
log_w : float64[2]         the two sides' log weights (not read if ``predictive``)
seed : int                 the seed of the items' keyed uniforms (``streams.keyed_uniform``)
labels : int64[:]          the data rows' labels (read only if the sides are forced)
forced_slot : int          ``>= 0``: each item's side is forced, 1 if its label is ``forced_slot``; ``-1``: drawn
want_log_q : bool          sum ``log p_h`` of the sides (one ``log1p`` per item), else return 0
"""


@jit
def relink_sides(state, items, sides, slot_a, slot_b):
    """Move each of ``items`` to ``slot_a`` (side 0) or ``slot_b`` (side 1) if it is not there (``state.relink``)."""
    for r in range(items.shape[0]):
        target = slot_a if sides[r] == 0 else slot_b
        if state.labels[items[r]] != target:
            relink(state, state.labels[items[r]], target, items[r])


@jit
def assign_labels(labels, items, sides, slot_a, slot_b, i, j):
    """:func:`assign` on a plain label vector (a shard host's rows): ``items`` to ``slot_a`` (side 0) or ``slot_b``
    (side 1), and ``i`` to ``slot_a``, ``j`` to ``slot_b`` if they are rows of ``labels``."""
    for r in range(items.shape[0]):
        labels[items[r]] = slot_a if sides[r] == 0 else slot_b
    if 0 <= i < labels.shape[0]:
        labels[i] = slot_a
    if 0 <= j < labels.shape[0]:
        labels[j] = slot_b


@driver
def shard_sums(family, data, params, plan, sides):
    """A pass (a :class:`PassPlan`) over the items' rows ``data``: per shard, the sides' ``stats[P, 2, s]``,
    ``sizes[P, 2]`` and ``Σ log p`` (:func:`pass_shard`); ``sides`` receives the sides, one per item of
    ``plan.items``.  What a shard host returns (O(s) per shard)."""
    n_shards = plan.bounds.shape[0] - 1
    width = families.stat_size(family, data.shape[1])
    shard_stats = np.zeros((n_shards, 2, width))
    shard_sizes = np.zeros((n_shards, 2), dtype=np.int64)
    shard_log_q = np.zeros(n_shards)
    run_pass(family, data, params, plan, sides, shard_stats, shard_sizes, shard_log_q)
    return shard_stats, shard_sizes, shard_log_q


@jit
def reduce_shards(shard_stats, shard_sizes, shard_log_q):
    """The per-shard sums of a pass (:func:`shard_sums`) added in shard order: ``(stats[2, s], sizes[2], log q)``."""
    n_shards, _, width = shard_stats.shape
    stats = np.zeros((2, width))
    sizes = np.zeros(2, dtype=np.int64)
    log_q = 0.0
    for s in range(n_shards):
        log_q += shard_log_q[s]
        for t in range(2):
            sizes[t] += shard_sizes[s, t]
            for r in range(width):
                stats[t, r] += shard_stats[s, t, r]
    return stats, sizes, log_q


@jit
def item_bounds(items, bounds):
    """Positions in the increasing ``items`` where each global shard's items start (and the end)."""
    out = np.empty(bounds.shape[0], dtype=np.int64)
    r = 0
    for s in range(bounds.shape[0]):
        while r < items.shape[0] and items[r] < bounds[s]:
            r += 1
        out[s] = r
    out[bounds.shape[0] - 1] = items.shape[0]
    return out


@jit(inline="always")
def _log_odds(family, x, params, predictive, densities, log_w):
    """The log odds of side 1 against side 0 for the item with data ``x`` (:func:`pair_pass`'s weights)."""
    if predictive:
        gap = families.log_predictive(family, densities[1], x, params)
        return gap - families.log_predictive(family, densities[0], x, params)
    return (log_w[1] + families.log_density(family, densities[1], x, params)) - (
        log_w[0] + families.log_density(family, densities[0], x, params)
    )


@jit
def drawn_side(family, x, params, theta, log_w, seed, key):
    """The side a pass with ``seed`` (weights ``log_w[t] + log f(x | θ_t)``) draws for the item with data ``x``
    and key ``key`` (its index among all items): what :func:`pass_shard` gives it."""
    return 1 if keyed_uniform(seed, key) < _logistic(_log_odds(family, x, params, False, theta, log_w)) else 0


PASS_BLOCK = 256
"""Items per block of a pass's log densities by matrix products (``families.log_densities``, :func:`pass_shard`)."""

BLOCK_MIN_PARAMS = 1_000
"""A pass computes its log densities in blocks when a parameter row θ has at least this many entries (the
Normal-inverse-Wishart from d = 31 on: O(d²) per item and side), item by item below, where a block's copy of the
rows costs about what it saves (``benchmarks/pass_densities.py``)."""

FAR_LOG_ODDS = 40.0
"""``|log odds|`` beyond which a side's probability rounds to 1 (``1 + e^{−40}`` is 1 in float64) and the other's,
below ``e^{−40} < 2^{−53}``, is below every nonzero keyed uniform (``streams.keyed_uniform``: multiples of
``2^{−53}``): the draw is the same for any log odds beyond it (:func:`block_gaps`)."""


@jit
def pass_shard(family, data, params, plan, lo, hi, sides, stats, sizes):
    """Items ``plan.items[lo:hi]`` of one shard: sides drawn or forced into ``sides``, sums into ``stats``/``sizes``;
    returns ``Σ log p``.

    Item ``h`` (data row ``data[h]``, key ``h + plan.offset``) takes side 1
    when ``keyed_uniform(plan.seed, h + plan.offset) < p_h(1)``, a function of
    the item and the seed alone.  ``log p`` is summed only if
    ``plan.want_log_q`` (one ``log1p`` per item).  Its result is O(s).

    With parameters θ of :data:`BLOCK_MIN_PARAMS` entries or more (not the
    seeding pass) the log odds come from :func:`block_gaps`, :data:`PASS_BLOCK`
    items at a time: the same sides as the loop of ``families.log_density``,
    bit for bit, and the same ``log q`` up to the terms below ``e^{−40}``.
    """
    item = np.empty(stats.shape[1])
    log_q = 0.0
    if plan.predictive or plan.densities.shape[1] < BLOCK_MIN_PARAMS:  # the loop, as it always was
        for r in range(lo, hi):
            log_q += _item_side(family, data, params, plan, r, False, 0.0, sides, stats, sizes, item)
        return log_q
    blocked = True
    gaps = np.empty(min(max(hi - lo, 0), PASS_BLOCK))
    rows = np.empty((gaps.shape[0], data.shape[1]))
    densities = np.empty((rows.shape[0], 2))
    for b0 in range(lo, hi, PASS_BLOCK):
        b1 = min(hi, b0 + PASS_BLOCK)
        block_gaps(family, data, params, plan, b0, b1, rows, densities, gaps)
        for r in range(b0, b1):
            log_q += _item_side(family, data, params, plan, r, blocked, gaps[r - b0], sides, stats, sizes, item)
    return log_q


@jit
def block_gaps(family, data, params, plan, b0, b1, rows, densities, gaps):
    """The log odds of side 1 for the items ``plan.items[b0:b1]`` by one block of matrix products
    (``families.log_densities`` of the two sides' θ); an item whose block log odds are within
    ``FAR_LOG_ODDS + 2 bound + 1`` of 0 (``bound`` the block's rounding bound, 1 nat for adding the weights)
    gets NaN instead: :func:`_item_side` takes its log odds from the loop.

    Beyond that margin the loop's log odds are beyond ``±FAR_LOG_ODDS`` on the same side, so the drawn side is
    the loop's (:data:`FAR_LOG_ODDS`), and the favoured side's ``log p`` is within ``e^{−40}`` of 0 either way.
    """
    m = b1 - b0
    for r in range(m):
        h = plan.items[b0 + r]
        for c in range(data.shape[1]):
            rows[r, c] = data[h, c]
    bound = families.log_densities(family, plan.densities, rows[:m], params, densities[:m])
    margin = FAR_LOG_ODDS + 2.0 * bound + 1.0
    for r in range(m):
        gap = (plan.log_w[1] + densities[r, 1]) - (plan.log_w[0] + densities[r, 0])
        gaps[r] = gap if abs(gap) >= margin else np.nan


@jit
def _item_side(family, data, params, plan, r, blocked, block_gap, sides, stats, sizes, item):
    """Side, sums and ``log p`` of the pass's item ``plan.items[r]`` (:func:`pass_shard`); ``block_gap`` its log odds
    from :func:`block_gaps` if ``blocked`` (NaN: from the loop)."""
    h = plan.items[r]
    x = data[h]
    far = blocked and not np.isnan(block_gap)
    gap = block_gap if far else _log_odds(family, x, params, plan.predictive, plan.densities, plan.log_w)
    if plan.forced_slot >= 0:
        side = 1 if plan.labels[h] == plan.forced_slot else 0
    else:
        side = 1 if keyed_uniform(plan.seed, h + plan.offset) < _logistic(gap) else 0
    log_q = 0.0
    if plan.want_log_q:
        if far and (side == 1) != (gap > 0.0):  # the unfavoured side: its log p is -|gap|, from the loop
            gap = _log_odds(family, x, params, False, plan.densities, plan.log_w)
        log_q = -_softplus(-gap if side == 1 else gap)
    sides[r] = side
    sizes[side] += 1
    families.item_stats(family, x, item)
    for c in range(item.shape[0]):
        stats[side, c] += item[c]
    return log_q


@jit(inline="always")
def _logistic(gap):
    """``1 / (1 + exp(-gap))``, the probability of side 1 when ``gap`` is its log odds."""
    if gap >= 0.0:
        return 1.0 / (1.0 + math.exp(-gap))
    e = math.exp(gap)
    return e / (1.0 + e)


@jit(inline="always")
def _softplus(v):
    """``log(1 + exp(v))`` without overflow: ``-log p`` of a side whose log odds against it are ``v``."""
    if v > 0.0:
        return v + math.log1p(math.exp(-v))
    return math.log1p(math.exp(v))


@threaded("sides")
def run_pass(family, data, params, plan, sides, shard_stats, shard_sizes, shard_log_q):
    """Every shard of a pass (:func:`pass_shard`), shard ``s``'s sums in row ``s``; on numba threads from Python
    on many items (``twofold.threaded``).  The arrays it writes are arguments of their own, not fields of
    ``plan``: a parallel loop's writes into a named tuple's array can be lost."""
    for s in prange(plan.bounds.shape[0] - 1):
        shard_log_q[s] = pass_shard(
            family, data, params, plan, plan.bounds[s], plan.bounds[s + 1], sides, shard_stats[s], shard_sizes[s]
        )


@driver
def scan_pair(labels, slot_i, slot_j, i, j, bounds):
    """The items (indices into ``labels``) with label ``slot_i`` or ``slot_j`` but ``i`` and ``j``, in increasing
    order, and where each shard's start in them (``bounds`` are the shards' items): ``(items, item_bounds)``."""
    counts = np.zeros(bounds.shape[0] - 1, dtype=np.int64)
    scan_labels(labels, slot_i, slot_j, i, j, bounds, counts, np.empty(0, dtype=np.int64))
    offsets = np.zeros(bounds.shape[0], dtype=np.int64)
    for s in range(counts.shape[0]):
        offsets[s + 1] = offsets[s] + counts[s]
    out = np.empty(offsets[-1], dtype=np.int64)
    scan_labels(labels, slot_i, slot_j, i, j, bounds, offsets, out)
    return out, offsets


@jit
def _scan_shard(labels, slot_i, slot_j, i, j, lo, hi, start, out):
    """Shard ``lo:hi``: count the items of either slot but ``i``, ``j`` (``out`` empty) or write them from ``start``."""
    count = 0
    for h in range(lo, hi):
        if (labels[h] == slot_i or labels[h] == slot_j) and h != i and h != j:
            if out.shape[0] > 0:
                out[start + count] = h
            count += 1
    return count


@threaded("labels")
def scan_labels(labels, slot_i, slot_j, i, j, bounds, counts, out):
    """Per shard: ``counts[s]`` = its items of either slot but ``i``, ``j`` (``out`` empty), or write them there
    from ``counts[s]`` (then the shard's start); on numba threads from Python on many items."""
    for s in prange(bounds.shape[0] - 1):
        c = _scan_shard(labels, slot_i, slot_j, i, j, bounds[s], bounds[s + 1], counts[s], out)
        if out.shape[0] == 0:
            counts[s] = c
