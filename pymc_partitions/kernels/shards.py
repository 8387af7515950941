"""The sub-cluster split-merge's executor operations in this process (``kernels.protocol.Executor``).

The driver (``kernels.subcluster``) keeps the clusters' sizes and statistics
and decides; what it does to items goes through these operations: the slots
of a pair (:func:`item_slots`), a proposal's items (:func:`select`), a pass
(:func:`pair_pass`), applying a pass's sides (:func:`assign`: an accepted
split, a restricted sweep) and a merge (:func:`merge_items`).  With
``sampler.executor`` ``None`` (and always in the compiled driver) they act
on the state's labels and member lists, as here; an executor such as
``distributed.cluster.DaskShards`` does them on workers that hold their
shards' labels.  The hybrid iteration's operations (``begin``,
``summaries``, ``sweep``, ``finish``) are in ``kernels.hybrid``.
"""

from __future__ import annotations

import math

import numpy as np

from pymc_partitions.kernels.clusters import merge_members, pair_members
from pymc_partitions.kernels.passes import PassPlan, item_bounds, reduce_shards, relink_sides, scan_pair, shard_sums
from pymc_partitions.kernels.twofold import driver, executed
from pymc_partitions.state import relink


@executed
def item_slots(sampler, model, state, i, j):
    """The current slots of items ``i`` and ``j``."""
    return state.labels[i], state.labels[j]


@executed
def select(sampler, model, state, i, j):
    """The *selection* of the pair ``i``, ``j``, which the passes of a proposal run over: here ``(R, sides)``, the
    items of their clusters but ``i`` and ``j`` in increasing order (:func:`pair_items`) and a buffer for the
    sides of the last pass."""
    items = pair_items(state, sampler, i, j)
    return items, np.empty(items.shape[0], dtype=np.int8)


@executed
def pair_pass(sampler, model, state, selection, predictive, densities, log_w, seed, forced_slot, want_log_q):
    """One pass over the selection's items (``passes.pass_shard`` per global shard); returns the sides'
    ``(stats[2, s], sizes[2], log q)`` without the anchors, reduced in shard order (``passes.reduce_shards``).

    ``predictive``: side ``t`` has log weight ``log p(x_h | cache densities[t])``
    (the seeding pass), else ``log_w[t] + log f(x_h | θ = densities[t])``.
    The sides are drawn with the keyed uniforms of ``seed``, or forced by
    the labels (``forced_slot >= 0``).
    """
    items, sides = selection
    bounds = item_bounds(items, sampler.bounds)
    plan = PassPlan(items, bounds, 0, predictive, densities, log_w, seed, state.labels, forced_slot, want_log_q)
    shard_stats, shard_sizes, shard_log_q = shard_sums(model.family, model.data, model.params, plan, sides)
    return reduce_shards(shard_stats, shard_sizes, shard_log_q)


@executed
def assign(sampler, model, state, selection, slot_a, slot_b, i, j, theta, log_w, seed):
    """Give the selection's items the sides of its pass with ``seed`` (drawn with ``theta``, ``log_w``): side 0
    to ``slot_a``, side 1 to ``slot_b``; ``i`` to ``slot_a`` and ``j`` to ``slot_b``.  Labels and member lists
    only: the caller sets the two slots' summaries (``subcluster.set_summaries``).  O(|R|) label checks, O(1) per
    item that moves."""
    items, sides = selection
    if state.labels[i] != slot_a:
        relink(state, state.labels[i], slot_a, i)
    if state.labels[j] != slot_b:
        relink(state, state.labels[j], slot_b, j)
    relink_sides(state, items, sides, slot_a, slot_b)


@executed
def merge_items(sampler, model, state, keep, drop):
    """Give the items of ``drop`` the label ``keep`` (``clusters.merge_members``; the caller merges the slots)."""
    merge_members(state, keep, drop)


@driver
def pair_items(state, sampler, i, j):
    """``R``: the items of the clusters of ``i`` and ``j`` other than ``i`` and ``j``, in increasing order.

    Small sets come from the member lists, sorted (``clusters.pair_members``,
    O(m log m)); a set with ``m log2 m > n`` from a scan of the labels by
    shard (``passes.scan_pair``, O(n), on threads when interpreted).  The result is the same.
    """
    n = state.labels.shape[0]
    slot_i, slot_j = state.labels[i], state.labels[j]
    m = state.sizes[slot_i] + (state.sizes[slot_j] if slot_j != slot_i else 0)
    if m * math.log2(max(m, 2)) <= n:
        return pair_members(state, i, j)
    items, _ = scan_pair(state.labels, slot_i, slot_j, i, j, sampler.bounds)
    return items
