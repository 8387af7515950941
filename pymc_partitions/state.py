"""The partition state shared by every kernel (DESIGN.md §3, layer 3).

Clusters live in *slots*.  ``slots[:n_clusters[0]]`` are the occupied slots and
the rest of ``slots`` are free, with ``position`` its inverse permutation, so a
cluster is opened or closed in O(1).  Per slot the state keeps the size, the
additive sufficient statistics of the family, the family's predictive cache
(``families.fill_cache``) and ``log_weight = log(size + s)``, the prior's
Gibbs weight for joining the cluster (``priors.size_shift``).  Each slot's members
form a doubly linked list (``head``, ``next_item``, ``prev_item``), so a move
that touches two clusters costs O(their sizes), not O(n).  Capacity grows by
doubling.  A state is rebuilt from the label vector at every PyMC step, so
it never outlives the hyperparameters it was computed with.

The Infinite Relational Model (``families.INFINITE_RELATIONAL``) is not
additive over items: its ``stats`` is the square ``(cap, cap)`` matrix of edge
counts between slots (``families.relational``) and its ``cache`` has no
columns, which is how :func:`ensure_capacity` recognises it.  :func:`add_items`
and :func:`remove_item` update either kind of state; an item may be
*unplaced* (label ``-1``) while a kernel builds a proposal.  Their parts
:func:`attach_items` and :func:`detach_item` leave the slot's cache stale, for
kernels that refresh a slot only when they read it (``kernels.arm``).
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from pymc_partitions import families, priors
from pymc_partitions.families import INFINITE_RELATIONAL, relational

State = namedtuple(
    "State", ["labels", "sizes", "stats", "cache", "log_weight", "slots", "position", "n_clusters", "head", "next_item", "prev_item"]
)
State.__doc__ = """Partition state.

labels : int64[n]          slot of each item (-1: unplaced, inside a kernel only)
sizes : int64[cap]         items per slot (0 for free slots)
stats : float64[cap, s]    additive sufficient statistics per slot (IRM: s = cap edge counts)
cache : float64[cap, c]    predictive cache per slot (``families.fill_cache``)
log_weight : float64[cap]  ``log(size + size_shift)``, the prior weight of joining
slots : int64[cap]         occupied slots first, then free ones
position : int64[cap]      index of each slot in ``slots``
n_clusters : int64[1]      number of occupied slots
head : int64[cap]          first member item of each slot (-1 if empty)
next_item : int64[n]       next member of the same slot (-1 at the end)
prev_item : int64[n]       previous member of the same slot (-1 at the start)
"""

Model = namedtuple("Model", ["family", "data", "params", "prior", "prior_params", "log_v_table", "empty_cache"])
Model.__doc__ = """Everything a kernel needs to evaluate the posterior, frozen for one step.

family : int                one of the ``families`` codes
data : float64[n, d]
params : float64[:]         ``families.pack_params`` output
prior : int                 one of the ``priors`` codes
prior_params : float64[:]
log_v_table : float64[:]    ``log V(n, t)`` (mixture of finite mixtures only)
empty_cache : float64[c]    predictive cache of an empty cluster (the prior predictive)
"""


def make_model(family, data, params, prior, prior_params, log_v_table):
    """Bundle a step's fixed quantities, precomputing the prior predictive cache."""
    data = np.ascontiguousarray(data, dtype=np.float64)
    params = np.ascontiguousarray(params, dtype=np.float64)
    d = data.shape[1]
    if family == INFINITE_RELATIONAL:
        empty_cache = np.zeros(0)
    else:
        empty = np.zeros(families.stat_size(family, d))
        empty_cache = np.zeros(families.cache_size(family, d))
        families.fill_cache(family, empty, params, empty_cache)
    return Model(
        family,
        data,
        params,
        prior,
        np.ascontiguousarray(prior_params, dtype=np.float64),
        np.ascontiguousarray(log_v_table, dtype=np.float64),
        empty_cache,
    )


@njit(cache=True)
def is_relational(state):
    """True for an Infinite Relational Model state (square edge counts, no predictive cache)."""
    return state.cache.shape[1] == 0


@njit(cache=True)
def build_state(model, z):
    """State of the partition given by labels ``z`` (any non-negative integer labels)."""
    n, d = model.data.shape
    n_labels = 0
    for i in range(n):
        n_labels = max(n_labels, z[i] + 1)
    cap = max(4, 2 * n_labels)
    if model.family == INFINITE_RELATIONAL:
        s, c = cap, 0
    else:
        s, c = families.stat_size(model.family, d), families.cache_size(model.family, d)
    state = State(
        np.full(n, -1, dtype=np.int64),
        np.zeros(cap, dtype=np.int64),
        np.zeros((cap, s)),
        np.zeros((cap, c)),
        np.zeros(cap),
        np.arange(cap),
        np.arange(cap),
        np.zeros(1, dtype=np.int64),
        np.full(cap, -1, dtype=np.int64),
        np.full(n, -1, dtype=np.int64),
        np.full(n, -1, dtype=np.int64),
    )
    slot_of_label = np.full(n_labels, -1, dtype=np.int64)
    one = np.empty(1, dtype=np.int64)
    item = np.empty(s)
    for i in range(n):
        if slot_of_label[z[i]] < 0:
            slot_of_label[z[i]] = open_slot(state)
        slot = slot_of_label[z[i]]
        if model.family == INFINITE_RELATIONAL:
            one[0] = i
            attach_items(model, state, slot, one, 1, item)
        else:  # the common case inline: no per-item allocation (n can be large)
            families.item_stats(model.family, model.data[i], item)
            move_stats(state.stats, state.sizes, slot, item, 1)
            state.labels[i] = slot
            link(state, slot, i)
    for k in range(state.n_clusters[0]):
        refresh(model, state, state.slots[k])
    return state


@njit(cache=True)
def copy_state(state):
    """An independent copy of ``state``."""
    return State(
        state.labels.copy(), state.sizes.copy(), state.stats.copy(), state.cache.copy(), state.log_weight.copy(),
        state.slots.copy(), state.position.copy(), state.n_clusters.copy(), state.head.copy(),
        state.next_item.copy(), state.prev_item.copy(),
    )


@njit(cache=True, inline="always")
def attach_items(model, state, slot, members, count, row):
    """Place the unplaced items ``members[:count]`` in the open ``slot``: labels, lists, sizes, statistics.

    ``row`` is a float buffer of length ``state.stats.shape[1]`` (overwritten).
    The slot's cache and prior weight are left stale (:func:`refresh`).
    Inlined and allocation-free, for kernels compiled without reference
    counting (``kernels.arm._construct``).
    """
    if model.family == INFINITE_RELATIONAL:
        for q in range(count):
            row[:] = 0.0
            relational.item_edges_to_slots(model.data, state.labels, members[q], row)
            relational.move_edges(state.stats, row, slot, 1)
            state.sizes[slot] += 1
            state.labels[members[q]] = slot
            link(state, slot, members[q])
        return
    for q in range(count):
        families.item_stats(model.family, model.data[members[q]], row)
        move_stats(state.stats, state.sizes, slot, row, 1)
        state.labels[members[q]] = slot
        link(state, slot, members[q])


@njit(cache=True)
def add_items(model, state, slot, members, count):
    """Place the unplaced items ``members[:count]`` in ``slot`` (``-1``: a new cluster); returns ``(state, slot)``.

    Kernels must continue with the returned state (capacity may grow).
    """
    if slot < 0:
        state = ensure_capacity(state, 1)
        slot = open_slot(state)
    attach_items(model, state, slot, members, count, np.empty(state.stats.shape[1]))
    refresh(model, state, slot)
    return state, slot


@njit(cache=True)
def remove_item(model, state, i):
    """Unplace item ``i`` (label ``-1``), closing its cluster if it empties."""
    slot = detach_item(model, state, i, np.empty(state.stats.shape[1]))
    if slot >= 0:
        refresh(model, state, slot)


@njit(cache=True, inline="always")
def detach_item(model, state, i, row):
    """Unplace item ``i`` like :func:`remove_item` but leave its slot's cache and prior weight stale.

    Returns the slot, or ``-1`` if the cluster emptied and was closed.
    ``row`` is a float buffer as for :func:`attach_items`.
    """
    slot = state.labels[i]
    unlink(state, slot, i)
    state.labels[i] = -1
    if model.family == INFINITE_RELATIONAL:
        row[:] = 0.0
        relational.item_edges_to_slots(model.data, state.labels, i, row)
        relational.move_edges(state.stats, row, slot, -1)
        state.sizes[slot] -= 1
    else:
        families.item_stats(model.family, model.data[i], row)
        move_stats(state.stats, state.sizes, slot, row, -1)
    if state.sizes[slot] == 0:
        close_slot(state, slot)
        return -1
    return slot


@njit(cache=True, inline="always")
def open_slot(state):
    """Mark the first free slot occupied and return it (the caller fills it); needs spare capacity."""
    slot = state.slots[state.n_clusters[0]]
    state.n_clusters[0] += 1
    return slot


@njit(cache=True, inline="always")
def close_slot(state, slot):
    """Return an empty slot to the free list by swapping it behind the occupied ones."""
    last = state.n_clusters[0] - 1
    pos = state.position[slot]
    other = state.slots[last]
    state.slots[pos] = other
    state.position[other] = pos
    state.slots[last] = slot
    state.position[slot] = last
    state.n_clusters[0] = last
    state.stats[slot, :] = 0.0
    if is_relational(state):
        state.stats[:, slot] = 0.0
    state.sizes[slot] = 0
    state.head[slot] = -1


@njit(cache=True)
def ensure_capacity(state, extra):
    """A state with room for ``extra`` more clusters (the same state if there is room).

    Kernels must continue with the returned state.
    """
    cap = state.sizes.shape[0]
    if state.n_clusters[0] + extra <= cap:
        return state
    new_cap = max(2 * cap, state.n_clusters[0] + extra)
    sizes = np.zeros(new_cap, dtype=np.int64)
    stats = np.zeros((new_cap, new_cap if is_relational(state) else state.stats.shape[1]))
    cache = np.zeros((new_cap, state.cache.shape[1]))
    log_weight = np.zeros(new_cap)
    slots = np.arange(new_cap)
    sizes[:cap] = state.sizes
    stats[:cap, : state.stats.shape[1]] = state.stats
    cache[:cap] = state.cache
    log_weight[:cap] = state.log_weight
    slots[:cap] = state.slots
    position = np.empty(new_cap, dtype=np.int64)
    position[slots] = np.arange(new_cap)
    head = np.full(new_cap, -1, dtype=np.int64)
    head[:cap] = state.head
    # fresh arrays throughout: the old state stays valid (and unchanged) for its capacity
    return State(
        state.labels.copy(), sizes, stats, cache, log_weight, slots, position, state.n_clusters.copy(),
        head, state.next_item.copy(), state.prev_item.copy(),
    )


@njit(cache=True, inline="always")
def link(state, slot, i):
    """Add item ``i`` to the member list of ``slot`` (at its front)."""
    first = state.head[slot]
    state.next_item[i] = first
    state.prev_item[i] = -1
    if first >= 0:
        state.prev_item[first] = i
    state.head[slot] = i


@njit(cache=True, inline="always")
def unlink(state, slot, i):
    """Remove item ``i`` from the member list of ``slot``."""
    before, after = state.prev_item[i], state.next_item[i]
    if before >= 0:
        state.next_item[before] = after
    else:
        state.head[slot] = after
    if after >= 0:
        state.prev_item[after] = before


@njit(cache=True, inline="always")
def relink(state, old_slot, new_slot, i):
    """Move item ``i``'s label and list membership from ``old_slot`` to ``new_slot`` (statistics untouched)."""
    unlink(state, old_slot, i)
    link(state, new_slot, i)
    state.labels[i] = new_slot


@njit(cache=True)
def members_of(state, slot, out, start):
    """Write the items of ``slot`` into ``out[start:]``; returns the index after the last one."""
    i = state.head[slot]
    while i >= 0:
        out[start] = i
        start += 1
        i = state.next_item[i]
    return start


@njit(cache=True, inline="always")
def move_stats(stats, sizes, slot, item, sign):
    """``stats[slot] += sign * item`` and ``sizes[slot] += sign``, without temporaries."""
    sizes[slot] += sign
    for q in range(item.shape[0]):
        stats[slot, q] += sign * item[q]


@njit(cache=True, inline="always")
def refresh(model, state, slot):
    """Recompute the cached predictive constants and prior weight of ``slot`` after its stats changed."""
    if model.family != INFINITE_RELATIONAL:
        families.fill_cache(model.family, state.stats[slot], model.params, state.cache[slot])
    state.log_weight[slot] = math.log(state.sizes[slot] + priors.size_shift(model.prior, model.prior_params))


@njit(cache=True)
def canonical_labels(state):
    """Labels ``0..K-1`` in order of first appearance (int32), the stored form of ``z``."""
    n = state.labels.shape[0]
    cap = state.sizes.shape[0]
    label_of_slot = np.full(cap, -1, dtype=np.int64)
    z = np.empty(n, dtype=np.int32)
    next_label = 0
    for i in range(n):
        slot = state.labels[i]
        if label_of_slot[slot] < 0:
            label_of_slot[slot] = next_label
            next_label += 1
        z[i] = label_of_slot[slot]
    return z


@njit(cache=True)
def log_joint(model, state):
    """``log p(Pi) + sum_c log marginal(c)``: the collapsed log posterior up to ``log p(data)``."""
    k = state.n_clusters[0]
    n = state.labels.shape[0]
    total = priors.log_v(model.prior, model.prior_params, model.log_v_table, n, k)
    relational_model = model.family == INFINITE_RELATIONAL
    for j in range(k):
        slot = state.slots[j]
        total += priors.log_w(model.prior, model.prior_params, state.sizes[slot])
        if not relational_model:
            total += families.log_marginal(model.family, state.stats[slot], model.params)
    if relational_model:
        total += relational.log_likelihood(state.stats, state.sizes, state.slots, k, model.params)
    return total


@njit(cache=True)
def largest_fraction(state):
    """Fraction of the items in the largest cluster."""
    best = 0
    for j in range(state.n_clusters[0]):
        best = max(best, state.sizes[state.slots[j]])
    return best / state.labels.shape[0]
