"""The partition state shared by every kernel (docs/design.md §3.1, layer 3).

Clusters live in *slots*.  ``slots[:n_clusters[0]]`` are the occupied slots and
the rest of ``slots`` are free, with ``position`` its inverse permutation, so a
cluster is opened or closed in O(1).  Per slot the state keeps the size, the
sufficient statistics, the predictive cache and ``log_weight = log(size + s)``,
the prior's Gibbs weight for joining the cluster (``priors.size_shift``), and,
for parametric models, a row of cluster parameters ``theta``.  Each slot's
members form a doubly linked list (``head``, ``next_item``, ``prev_item``), so
a move that touches two clusters costs O(their sizes), not O(n).  Capacity
grows by doubling.

The state has an explicit *kind* (``_dispatch``), a tag whose type tells numba
how the statistics are laid out, so that each kind's code is chosen when a
kernel is compiled:

* additive: ``stats[slot]`` is the sum of the family's item statistics
  (``families``) and ``cache[slot]`` its predictive constants;
* relational (the Infinite Relational Model): ``stats`` is the square
  ``(cap, cap)`` matrix of edge counts between slots (``families.infinite_relational``)
  and there is no cache;
* parametric (``NormalMixture``'s ``families.normal``, the generic
  ``families.component``): the family's additive statistics, no cache, and the
  parameter block ``theta[cap, p]``, one row of cluster parameters per slot
  (``p = 0`` for the other kinds).  A slot's row follows its cluster through
  every move; :func:`close_slot` zeroes it, and :func:`rebuild` carries the
  rows over to a state rebuilt from the labels.

:func:`attach_items` and :func:`detach_item` update either kind; an item may be
*unplaced* (label ``-1``) while a kernel builds a proposal, and those two leave
the slot's cache stale for kernels that refresh a slot only when they read it
(``kernels.arm``); :func:`add_items` and :func:`remove_item` refresh it.

The steps keep a state between calls while ``z`` is the one they wrote
(``steps.base``): a change of hyperparameters only needs :func:`refresh_all`,
and a state is rebuilt from the labels when ``z`` comes from elsewhere and
every ``kernels.protocol.REBUILD_PERIOD`` transitions (``kernels.chain``).
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from pymc_partitions import families, priors
from pymc_partitions._dispatch import ADDITIVE, KIND_TAGS, RELATIONAL, Additive, Parametric, Relational, kind_function
from pymc_partitions._jit import jit
from pymc_partitions.families import infinite_relational as relational
from pymc_partitions.labels import canonical

State = namedtuple(
    "State",
    [
        "kind", "labels", "sizes", "stats", "cache", "log_weight", "slots", "position", "n_clusters",
        "head", "next_item", "prev_item", "theta",
    ],
)
State.__doc__ = """Partition state.

kind : tag                 ``_dispatch.KIND_TAGS[...]``: additive, relational or parametric
labels : int64[n]          slot of each item (-1: unplaced, inside a kernel only)
sizes : int64[cap]         items per slot (0 for free slots)
stats : float64[cap, s]    sufficient statistics per slot (relational: s = cap edge counts)
cache : float64[cap, c]    predictive cache per slot (``families.fill_cache``; c = 0 for relational)
log_weight : float64[cap]  ``log(size + size_shift)``, the prior weight of joining
slots : int64[cap]         occupied slots first, then free ones
position : int64[cap]      index of each slot in ``slots``
n_clusters : int64[1]      number of occupied slots
head : int64[cap]          first member item of each slot (-1 if empty)
next_item : int64[n]       next member of the same slot (-1 at the end)
prev_item : int64[n]       previous member of the same slot (-1 at the start)
theta : float64[cap, p]    cluster parameters (parametric models; p = 0 otherwise)
"""

Model = namedtuple(
    "Model", ["family", "data", "params", "prior", "prior_params", "log_v_table", "empty_cache", "origin"]
)
Model.__doc__ = """Everything a kernel needs to evaluate the posterior, frozen for one step.

family : tag                one of ``families.TAGS`` (its type selects the family's code)
data : float64[n, d]        the items minus ``origin`` (the adjacency matrix for the relational model)
params : float64[:]         ``families.pack_params`` output, its location hyperparameter minus ``origin``
prior : int                 one of the ``priors`` codes
prior_params : float64[:]
log_v_table : float64[:]    ``log V(n, t)`` (mixture of finite mixtures only)
empty_cache : float64[c]    predictive cache of an empty cluster (the prior predictive)
origin : float64[d]         the point the kernels' coordinates are relative to (``families``, "Coordinates"):
                            data units are ``origin`` plus the kernels' (cluster means in ``theta``, drawn θ)
"""

ModelArrays = namedtuple(
    "ModelArrays", ["data", "params", "prior", "prior_params", "log_v_table", "empty_cache", "origin"]
)
ModelArrays.__doc__ = """A :class:`Model` without its family tag: what numba's parallel loops take beside the tag.

A ``prange`` loop takes a family tag only as an argument of its own, not
inside a named tuple, so a threaded loop over shards (``kernels.hybrid``)
takes ``family`` and these, and its body puts the :class:`Model` back
together.  The fields are the model's:

data : float64[n, d]        the items minus ``origin``
params : float64[:]         ``families.pack_params`` output, its location hyperparameter minus ``origin``
prior : int                 one of the ``priors`` codes
prior_params : float64[:]
log_v_table : float64[:]    ``log V(n, t)`` (mixture of finite mixtures only)
empty_cache : float64[c]    predictive cache of an empty cluster
origin : float64[d]         the point the kernels' coordinates are relative to
"""


def make_model(family, data, params, prior, prior_params, log_v_table, origin=None):
    """Bundle a step's fixed quantities for the family with code ``family``, precomputing the prior predictive cache.

    ``data`` and ``params`` are in data units.  The model holds them relative
    to ``origin`` (``families.shift_params``), by default the data's column
    means for the families with a location (``families.origin``), so that
    every statistic the kernels sum is a sum of centred values: exact up to
    rounding of the centred values whatever the data's offset.  Pass an
    explicit ``origin`` to share one across models (zeros: data and params
    already relative to another model's origin, as a shard host's are).
    """
    data, origin = families.centred(family, data, origin)
    return centred_model(family, data, origin, params, prior, prior_params, log_v_table)


def centred_model(family, data, origin, params, prior, prior_params, log_v_table):
    """:func:`make_model` of data already in the kernels' coordinates: ``data`` relative to ``origin`` (the
    problem a step reads, ``distributions.discovery``, centres them once); ``params`` in data units."""
    base = Model(families.tag(family), data, np.zeros(0), prior, np.zeros(0), np.zeros(0), np.zeros(0), origin)
    return with_hyperparameters(base, params, prior, prior_params, log_v_table)


def with_hyperparameters(model, params, prior, prior_params, log_v_table):
    """``model`` (its data and origin) with other hyperparameters: ``params`` in data units (shifted to the
    model's origin here), the prior and its parameters; O(s), the data are shared, not copied."""
    family = model.family.code
    params = families.shift_params(family, params, model.origin)
    if model.family.kind == ADDITIVE:
        module = families.MODULES[family]
        d = model.data.shape[1]
        empty_cache = np.zeros(module.cache_size(d))
        module.fill_cache(np.zeros(module.stat_size(d)), params, empty_cache)
    else:
        empty_cache = np.zeros(0)
    return Model(
        model.family, model.data, params, prior, np.ascontiguousarray(prior_params, dtype=np.float64),
        np.ascontiguousarray(log_v_table, dtype=np.float64), empty_cache, model.origin,
    )


# --------------------------------------------------------------------------- construction


@jit
def _assemble(kind, labels, sizes, stats, cache, log_weight, slots, position, n_clusters, head, next_item, prev_item, theta):
    """The one place a :class:`State` is put together (by field name)."""
    return State(
        kind=kind, labels=labels, sizes=sizes, stats=stats, cache=cache, log_weight=log_weight, slots=slots,
        position=position, n_clusters=n_clusters, head=head, next_item=next_item, prev_item=prev_item, theta=theta,
    )


@jit
def _additive_kind(model):
    return Additive()


@jit
def _relational_kind(model):
    return Relational()


@jit
def _parametric_kind(model):
    return Parametric()


@kind_function(additive=_additive_kind, relational=_relational_kind, parametric=_parametric_kind)
def kind_of(model):
    """The kind tag (``_dispatch.KIND_TAGS``) of the states of ``model``."""


@jit
def _additive_widths(model, capacity):
    d = model.data.shape[1]
    return families.stat_size(model.family, d), families.cache_size(model.family, d), 0


@jit
def _relational_widths(model, capacity):
    return capacity, 0, 0


@jit
def _parametric_widths(model, capacity):
    d = model.data.shape[1]
    return families.stat_size(model.family, d), 0, families.param_size(model.family, d)


@kind_function(additive=_additive_widths, relational=_relational_widths, parametric=_parametric_widths)
def summary_widths(model, capacity):
    """``(s, c, p)``: the widths of a slot's statistics, cache and parameter rows at ``capacity`` slots."""


@jit
def empty_state(model, n, capacity):
    """A state of ``model``'s kind for ``n`` items, none placed, with ``capacity`` free slots."""
    s, c, p = summary_widths(model, capacity)
    return _assemble(
        kind_of(model),
        np.full(n, -1, dtype=np.int64),
        np.zeros(capacity, dtype=np.int64),
        np.zeros((capacity, s)),
        np.zeros((capacity, c)),
        np.zeros(capacity),
        np.arange(capacity),
        np.arange(capacity),
        np.zeros(1, dtype=np.int64),
        np.full(capacity, -1, dtype=np.int64),
        np.full(n, -1, dtype=np.int64),
        np.full(n, -1, dtype=np.int64),
        np.zeros((capacity, p)),
    )


@jit
def build_state(model, z):
    """State of the partition with labels ``z`` (non-negative integers, e.g. canonical labels).

    O(n s) for the additive kinds, O(n²) for the relational one (each item's edges).
    """
    for i in range(z.shape[0]):
        if z[i] < 0:
            raise ValueError("build_state: labels must be non-negative")
    return build_partial_state(model, z)


def state_of(model, z):
    """:func:`build_state` of canonical labels ``z`` computed from Python: the same state (field by field), built
    with numpy around one small compiled loop (every item's statistics added to its label's row,
    :func:`label_stats`), so that a step's first draw does not compile the state's item-by-item construction.  The
    relational kind (its statistics are edge counts between slots) is built by :func:`build_state`."""
    z = np.asarray(z, dtype=np.int64)
    if model.family.kind == RELATIONAL:
        return build_state(model, z)
    n, k = z.shape[0], int(z.max()) + 1
    capacity = max(4, 2 * k)
    sums = label_stats(model, z, k)
    stats = np.zeros((capacity, sums.shape[1]))
    stats[:k] = sums
    sizes = np.zeros(capacity, dtype=np.int64)
    sizes[:k] = np.bincount(z, minlength=k)
    _, c, p = summary_widths(model, capacity)
    cache = np.zeros((capacity, c))
    if model.family.kind == ADDITIVE:
        module = families.MODULES[model.family.code]
        for slot in range(k):
            module.fill_cache(stats[slot], model.params, cache[slot])
    log_weight = np.zeros(capacity)
    log_weight[:k] = np.log(sizes[:k] + priors.size_shift(model.prior, model.prior_params))
    # member lists as link() leaves them after adding items 0, 1, ..., n-1: head the last item, next the previous one
    order = np.lexsort((np.arange(n), z))
    same = z[order[1:]] == z[order[:-1]]
    next_item, prev_item = np.full(n, -1, dtype=np.int64), np.full(n, -1, dtype=np.int64)
    next_item[order[1:][same]] = order[:-1][same]
    prev_item[order[:-1][same]] = order[1:][same]
    head = np.full(capacity, -1, dtype=np.int64)
    last = np.append(~same, True)
    head[z[order[last]]] = order[last]
    return State(
        KIND_TAGS[model.family.kind], z.copy(), sizes, stats, cache, log_weight, np.arange(capacity),
        np.arange(capacity), np.array([k], dtype=np.int64), head, next_item, prev_item, np.zeros((capacity, p)),
    )


@jit
def _additive_label_stats(model, z, k):
    out = np.zeros((k, families.stat_size(model.family, model.data.shape[1])))
    row = np.empty(out.shape[1])
    for i in range(z.shape[0]):
        families.item_stats(model.family, model.data[i], row)
        for s in range(row.shape[0]):  # element by element: a row assignment compiles numba's shape-error message
            out[z[i], s] += row[s]
    return out


@kind_function(additive=_additive_label_stats, parametric=_additive_label_stats)
def label_stats(model, z, k):
    """The statistics of the ``k`` clusters of labels ``z`` (0 .. k-1): a (k, s) array, row ``c`` the sum of the
    statistics of the items labelled ``c``.  One pass with one item's row in scratch, O(n s) time and O(k s)
    memory: never the (n, s) matrix of every item's row (n x d² for the Normal-inverse-Wishart)."""


@jit
def build_partial_state(model, z):
    """State in which item ``i`` is in the cluster labelled ``z[i]``, or unplaced where ``z[i] < 0``.

    Clusters get slots in order of first appearance; a kernel that keeps only
    some items in a state (the hybrid sampler's collapsed clusters) builds it here.
    """
    n = model.data.shape[0]
    n_labels = 0
    for i in range(n):
        n_labels = max(n_labels, z[i] + 1)
    state = empty_state(model, n, max(4, 2 * n_labels))
    slot_of_label = np.full(n_labels, -1, dtype=np.int64)
    row = np.empty(state.stats.shape[1])
    for i in range(n):
        if z[i] < 0:
            continue
        if slot_of_label[z[i]] < 0:
            slot_of_label[z[i]] = open_slot(state)
        slot = slot_of_label[z[i]]
        add_to_summary(model, state, slot, i, row, 1)
        state.labels[i] = slot
        link(state, slot, i)
    refresh_all(model, state)
    return state


@jit
def copy_state(state):
    """An independent copy of ``state``."""
    return _assemble(
        state.kind, state.labels.copy(), state.sizes.copy(), state.stats.copy(), state.cache.copy(),
        state.log_weight.copy(), state.slots.copy(), state.position.copy(), state.n_clusters.copy(),
        state.head.copy(), state.next_item.copy(), state.prev_item.copy(), state.theta.copy(),
    )


@jit
def rebuild(model, state):
    """A fresh state of ``state``'s partition: built from its canonical labels, its parameter rows carried over.

    Bounds the rounding drift of incrementally updated statistics
    (``kernels.protocol.REBUILD_PERIOD``); the same as ``build_state(model, canonical_labels(state))``
    for kinds without parameters.  ``build_state`` opens label ``k``'s
    cluster in slot ``k``.
    """
    z = canonical_labels(state)
    order = cluster_order(state, z)
    fresh = build_state(model, z.astype(np.int64))
    for k in range(order.shape[0]):
        for q in range(state.theta.shape[1]):
            fresh.theta[k, q] = state.theta[order[k], q]
    return fresh


@jit
def _extended(values, length, fill):
    """``values`` (1-D or 2-D) copied into a new array of ``length`` rows, the new rows set to ``fill``.

    Written as loops: a slice assignment would compile numpy's broadcasting
    and its error messages into every kernel that grows a state, and
    ``np.full`` one more function per array type.
    """
    out = np.empty((length,) + values.shape[1:], dtype=values.dtype)
    flat, source = out.reshape(-1), values.reshape(-1)
    for q in range(source.shape[0]):
        flat[q] = source[q]
    for q in range(source.shape[0], flat.shape[0]):
        flat[q] = fill
    return out


@jit
def _additive_resized_stats(state, capacity):
    return _extended(state.stats, capacity, 0.0)


@jit
def _relational_resized_stats(state, capacity):
    old = state.stats.shape[0]
    stats = np.zeros((capacity, capacity))
    for k in range(old):
        for slot in range(old):
            stats[k, slot] = state.stats[k, slot]
    return stats


@kind_function(additive=_additive_resized_stats, relational=_relational_resized_stats, parametric=_additive_resized_stats)
def resized_stats(state, capacity):
    """``state.stats`` copied into a new array for ``capacity`` slots (free slots zero)."""


@jit
def ensure_capacity(state, extra):
    """A state with room for ``extra`` more clusters (the same state if there is room).

    Kernels must continue with the returned state: it shares the per-item
    arrays (labels, member lists) with the old one, whose per-slot arrays
    are left behind.  Growing doubles the capacity, so it costs
    O(K s) amortised over the clusters opened.
    """
    cap = state.sizes.shape[0]
    if state.n_clusters[0] + extra <= cap:
        return state
    new_cap = max(2 * cap, state.n_clusters[0] + extra)
    zero, no_item = np.int64(0), np.int64(-1)  # literal fills would compile _extended once more for each value
    slots = _extended(state.slots, new_cap, zero)
    position = _extended(state.position, new_cap, zero)
    for slot in range(cap, new_cap):  # the new slots are free, behind the old ones, each at its own position
        slots[slot] = slot
        position[slot] = slot
    return _assemble(
        state.kind, state.labels, _extended(state.sizes, new_cap, zero), resized_stats(state, new_cap),
        _extended(state.cache, new_cap, 0.0), _extended(state.log_weight, new_cap, 0.0), slots, position,
        state.n_clusters, _extended(state.head, new_cap, no_item), state.next_item, state.prev_item,
        _extended(state.theta, new_cap, 0.0),
    )


# --------------------------------------------------------------------------- cluster summaries


@jit
def _additive_add_to_summary(model, state, slot, i, row, sign):
    families.item_stats(model.family, model.data[i], row)
    move_stats(state.stats, state.sizes, slot, row, sign)


@jit
def _relational_add_to_summary(model, state, slot, i, row, sign):
    row[:] = 0.0
    relational.item_edges_to_slots(model.data, state.labels, i, row)
    relational.move_edges(state.stats, row, slot, sign)
    state.sizes[slot] += sign


@kind_function(additive=_additive_add_to_summary, relational=_relational_add_to_summary, parametric=_additive_add_to_summary)
def add_to_summary(model, state, slot, i, row, sign):
    """Add (``sign = 1``) or remove (``-1``) item ``i``'s contribution to ``slot``'s size and statistics.

    Additive and parametric: ``stats[slot] += sign * item_stats(x_i)``.  Relational: the
    edges from ``i`` to the placed items of every slot move in or out of
    ``slot``'s row and column (O(n)).  ``row`` is a float buffer of length
    ``stats.shape[1]`` (overwritten); nothing is allocated.
    """


@jit
def _additive_clear_summary(state, slot):
    state.stats[slot, :] = 0.0


@jit
def _relational_clear_summary(state, slot):
    state.stats[slot, :] = 0.0
    state.stats[:, slot] = 0.0


@kind_function(additive=_additive_clear_summary, relational=_relational_clear_summary, parametric=_additive_clear_summary)
def clear_summary(state, slot):
    """Zero the statistics of an emptied ``slot`` (relational: its row and column of edge counts)."""


@jit
def _additive_refresh_cache(model, state, slot):
    families.fill_cache(model.family, state.stats[slot], model.params, state.cache[slot])


@jit
def _relational_refresh_cache(model, state, slot):
    pass


@kind_function(additive=_additive_refresh_cache, relational=_relational_refresh_cache, parametric=_relational_refresh_cache)
def refresh_cache(model, state, slot):
    """Recompute ``slot``'s predictive cache from its statistics (nothing to do for the relational and parametric kinds)."""


@jit(inline="always")
def refresh(model, state, slot):
    """Recompute the cached predictive constants and prior weight of ``slot`` after its stats changed."""
    refresh_cache(model, state, slot)
    state.log_weight[slot] = math.log(state.sizes[slot] + priors.size_shift(model.prior, model.prior_params))


@jit
def refresh_all(model, state):
    """Refresh every occupied slot: after a change of hyperparameters, O(K c)."""
    for k in range(state.n_clusters[0]):
        refresh(model, state, state.slots[k])


# --------------------------------------------------------------------------- placing items


@jit(inline="always")
def attach_items(model, state, slot, members, count, row):
    """Place the unplaced items ``members[:count]`` in the open ``slot``: labels, lists, sizes, statistics.

    ``row`` is a float buffer of length ``state.stats.shape[1]`` (overwritten).
    The slot's cache and prior weight are left stale (:func:`refresh`).
    Inlined and allocation-free, for kernels compiled without reference
    counting (``kernels.arm._construct``).
    """
    for q in range(count):
        add_to_summary(model, state, slot, members[q], row, 1)
        state.labels[members[q]] = slot
        link(state, slot, members[q])


@jit(inline="always")
def detach_item(model, state, i, row):
    """Unplace item ``i`` like :func:`remove_item` but leave its slot's cache and prior weight stale.

    Returns the slot, or ``-1`` if the cluster emptied and was closed.
    ``row`` is a float buffer as for :func:`attach_items`.
    """
    slot = state.labels[i]
    unlink(state, slot, i)
    state.labels[i] = -1
    add_to_summary(model, state, slot, i, row, -1)
    if state.sizes[slot] == 0:
        close_slot(state, slot)
        return -1
    return slot


@jit
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


@jit
def remove_item(model, state, i):
    """Unplace item ``i`` (label ``-1``), closing its cluster if it empties; returns its former slot or -1."""
    slot = detach_item(model, state, i, np.empty(state.stats.shape[1]))
    if slot >= 0:
        refresh(model, state, slot)
    return slot


# --------------------------------------------------------------------------- slots and member lists


@jit(inline="always")
def open_slot(state):
    """Mark the first free slot occupied and return it (the caller fills it); needs spare capacity."""
    slot = state.slots[state.n_clusters[0]]
    state.n_clusters[0] += 1
    return slot


@jit(inline="always")
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
    clear_summary(state, slot)
    state.theta[slot, :] = 0.0
    state.sizes[slot] = 0
    state.head[slot] = -1


@jit
def link_all(state):
    """Rebuild every member list from ``state.labels`` (each in increasing item order).  O(n + capacity)."""
    state.head[:] = -1
    for h in range(state.labels.shape[0] - 1, -1, -1):  # link puts an item first: backwards gives increasing lists
        if state.labels[h] >= 0:
            link(state, state.labels[h], h)


@jit(inline="always")
def link(state, slot, i):
    """Add item ``i`` to the member list of ``slot`` (at its front)."""
    first = state.head[slot]
    state.next_item[i] = first
    state.prev_item[i] = -1
    if first >= 0:
        state.prev_item[first] = i
    state.head[slot] = i


@jit(inline="always")
def unlink(state, slot, i):
    """Remove item ``i`` from the member list of ``slot``."""
    before, after = state.prev_item[i], state.next_item[i]
    if before >= 0:
        state.next_item[before] = after
    else:
        state.head[slot] = after
    if after >= 0:
        state.prev_item[after] = before


@jit(inline="always")
def relink(state, old_slot, new_slot, i):
    """Move item ``i``'s label and list membership from ``old_slot`` to ``new_slot`` (statistics untouched)."""
    unlink(state, old_slot, i)
    link(state, new_slot, i)
    state.labels[i] = new_slot


@jit(inline="always")
def members_of(state, slot, out, start):
    """Write the items of ``slot`` into ``out[start:]``; returns the index after the last one."""
    i = state.head[slot]
    while i >= 0:
        out[start] = i
        start += 1
        i = state.next_item[i]
    return start


@jit(inline="always")
def move_stats(stats, sizes, slot, item, sign):
    """``stats[slot] += sign * item`` and ``sizes[slot] += sign``, without temporaries."""
    sizes[slot] += sign
    for q in range(item.shape[0]):
        stats[slot, q] += sign * item[q]


# --------------------------------------------------------------------------- reading the state


@jit
def canonical_labels(state):
    """Labels ``0..K-1`` in order of first appearance (int32), the stored form of ``z`` (``labels.canonical``)."""
    return canonical(state.labels, state.sizes.shape[0])


@jit
def cluster_order(state, z):
    """The slot of each label of ``z = canonical_labels(state)``: ``state.theta[cluster_order(state, z)]``
    are the cluster parameters in canonical order."""
    order = np.empty(state.n_clusters[0], dtype=np.int64)
    for i in range(z.shape[0]):
        order[z[i]] = state.labels[i]
    return order


@jit
def _additive_log_likelihood(model, state):
    total = 0.0
    for j in range(state.n_clusters[0]):
        total += families.log_marginal(model.family, state.stats[state.slots[j]], model.params)
    return total


@jit
def _relational_log_likelihood(model, state):
    return relational.log_likelihood(state.stats, state.sizes, state.slots, state.n_clusters[0], model.params)


@jit
def _parametric_log_likelihood(model, state):
    total = 0.0
    for j in range(state.n_clusters[0]):
        slot = state.slots[j]
        theta = state.theta[slot]
        total += families.log_prior_density(model.family, theta, model.params)
        total += families.cluster_log_likelihood(model.family, state.stats[slot], theta, model.params)
    return total


@kind_function(
    additive=_additive_log_likelihood, relational=_relational_log_likelihood, parametric=_parametric_log_likelihood
)
def log_likelihood(model, state):
    """``log p(x | Pi)`` with the cluster parameters integrated out: O(K s) additive, O(K²) relational.

    Parametric: ``sum_c [log g(theta_c) + log p(x_c | theta_c)]``, the log
    density of the occupied clusters' parameters and the data given ``Pi``
    (the parameter rows of unused clusters are not part of the state).
    """


@jit
def log_prior(model, state):
    """``log p(Pi) = log V(n, K) + sum_c log W(|c|)``."""
    k = state.n_clusters[0]
    total = priors.log_v(model.prior, model.prior_params, model.log_v_table, state.labels.shape[0], k)
    for j in range(k):
        total += priors.log_w(model.prior, model.prior_params, state.sizes[state.slots[j]])
    return total


@jit
def log_joint(model, state):
    """``log p(Pi) + log p(x | Pi)``: the collapsed log posterior up to ``log p(data)``.

    Parametric: ``log p(Pi) + sum_c [log g(theta_c) + log p(x_c | theta_c)]``
    (:func:`log_likelihood`).
    """
    return log_prior(model, state) + log_likelihood(model, state)


@jit
def largest_fraction(state):
    """Fraction of the items in the largest cluster."""
    best = 0
    for j in range(state.n_clusters[0]):
        best = max(best, state.sizes[state.slots[j]])
    return best / state.labels.shape[0]
