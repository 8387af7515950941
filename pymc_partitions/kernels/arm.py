"""Adaptive reconfiguration moves (Herlau, Mørup, Schmidt & Teh; ``papers/000_...``, Sec. 2, Algorithms 2-3).

One move, given items ``i != j`` and two past partitions ``za != zb`` with
``za_i = za_j`` and ``zb_i != zb_j`` (the *background* ``phi``), and a random
ranking of the items:

1. split if ``z_i = z_j``, else merge; unplace the items of ``z_i ∪ z_j``
   (the *inside* items);
2. ``c = za ∨ zb ∨ z`` (coarsest common refinement) on the inside items; place
   ``c_i`` and ``c_j`` as two clusters (split) or one (merge);
3. ``variant="arm"`` only: every other block ``a`` of ``c`` (size descending,
   then lowest rank first) is placed as a whole by a set move over all current
   clusters and a new one (eq. (5)); its lowest-ranked item, its *earmark*, is
   never moved again;
4. every other item in rank order (not ``i``, ``j`` or an earmark): an inside
   item makes an unrestricted Gibbs move (placed if still unplaced); an
   outside item may stay or join the cluster(s) of ``i``/``j``, unless it is
   the last original member of its cluster and others have joined it (it
   stays: eq. (17)).

``variant="sarm"`` skips step 3 (blocks placed item by item);
``variant="srm"`` (Algorithm 2) also uses ``c_i = {i}``, ``c_j = {j}`` and a
uniformly random pair ``i, j``.  ``variant="arm-past"`` (ours) takes the inside
set ``U = za_i`` and the blocks of ``za ∨ zb`` on ``U`` from the background
alone and moves no outside item.

``T(z*|z)`` is the product of the probabilities of the choices made; the
reverse ``T(z|z*)`` reruns the construction from ``z*`` with the same ``phi``
and ranking, forced towards ``z``.  The move is accepted with
``min(1, q(z*) T(z|z*) / (q(z) T(z*|z)))`` (eq. (8)).  Background: ``za`` from
this chain's own past states, ``zb`` from every chain's, both from the last
half of the run (diminishing adaptation, Sec. 2.4), never this chain's
current state; then ``i, j`` uniformly among the pairs on which they disagree.

Why the construction path is unique (anchors) and gives ``T(z|z*)``, why the
background may not depend on ``z``, and arm-past's construction and tests:
``docs/exactness.md``, Construction notes, "ARM: ..." and "arm-past: ...".
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from pymc_partitions._dispatch import ADDITIVE, RELATIONAL
from pymc_partitions._jit import jit
from pymc_partitions.kernels import gibbs
from pymc_partitions.kernels.background import choose_background, population_init, random_pair
from pymc_partitions.kernels.clusters import cluster_members, set_log_weights, weight_work, write_all_candidates
from pymc_partitions.kernels.info import MOVE_MERGE, MOVE_SPLIT, Move, no_move, report
from pymc_partitions.kernels.moves import choose_into, metropolis_accept, shuffle
from pymc_partitions.kernels.protocol import Kernel, Support
from pymc_partitions.state import attach_items, copy_state, detach_item, ensure_capacity, log_joint, open_slot, refresh

ARM = 0
SARM = 1
SRM = 2
ARM_PAST = 3
VARIANTS = {"arm": ARM, "sarm": SARM, "srm": SRM, "arm-past": ARM_PAST}

Options = namedtuple("Options", ["variant", "n_moves", "gibbs_sweep"])
Options.__doc__ = """Options of one ARM transition (``ARMStep``); its sampler state is a ``background.Population`` of them.

variant : int       ``ARM``, ``SARM``, ``SRM`` or ``ARM_PAST``
n_moves : int       reconfiguration moves per transition
gibbs_sweep : bool  follow the moves with a full Gibbs sweep (the paper's experiments)
"""

Construction = namedtuple(
    "Construction",
    [
        "i", "j", "split", "inside_items", "inside", "head_i", "head_j", "block_items", "starts", "j_block", "order",
        "target", "anchor", "fixed",
    ],
)
Construction.__doc__ = """What :func:`_construct` builds: the move's items, sets and order (:func:`reconfigure` finds them).

i, j : int                  the move's pair of items
split : bool                ``z_i = z_j``: ``c_i`` and ``c_j`` become two clusters, else one
inside_items : int64[m]     the items unplaced first (the inside set)
inside : bool[n]            whether each item is inside
head_i : int64[:]           ``c_i``, placed first as a new cluster (for a merge ``c_i ∪ c_j``; empty for ``arm-past``)
head_j : int64[:]           ``c_j``, placed next as another new cluster (split only)
block_items : int64[:]      the blocks placed whole, each with its earmark first (none for sARM/sRM) ...
starts : int64[B + 1]       ... block ``b`` being ``block_items[starts[b]:starts[b + 1]]``
j_block : int               ``arm-past``'s block of ``j``, which joins ``i``'s cluster for a merge and any other for
                            a split (-1: none)
order : int64[n]            the items in rank order
target : int64[n] or [0]    forced mode: the labels the construction must end at; empty: the choices are sampled
anchor : int64[:]           forced mode: ``anchor[t]``, a placed item of target cluster ``t`` that stays with it to
                            the end (-1: none yet); updated
fixed : bool[n]             the items never moved again: on entry ``i``, ``j`` or the outside items; updated
"""

Scratch = namedtuple(
    "Scratch", ["original", "stale", "one", "candidates", "log_weights", "weights", "row", "work", "saved"]
)
Scratch.__doc__ = """The buffers :func:`_construct` overwrites (it allocates nothing), sized for the reserved capacity ``cap``.

original : int64[cap]        zeros on entry: the original members left in each slot (eq. (17))
stale : bool[cap]            slots whose cache and prior weight await ``refresh`` (all False on entry; the caller
                             refreshes those left stale)
one : int64[1]               the one item of an item move
candidates : int64[cap + 1]  the slots a choice is among (-1: a new cluster)
log_weights : float64[cap + 1]
                             their log weights (``clusters.set_log_weights``)
weights : float64[cap + 1]   their normalised weights (``moves.choose_into``)
row : float64[s]             one item's statistics (``state.attach_items``)
work : float64[3, s]         ``clusters.set_log_weights``'s work rows (``clusters.weight_work``)
saved : float64[c]           a cache row saved before a removal, restored if the item comes back
"""


init = population_init
"""The sampler state of :func:`transition`: a ``background.Population`` of the options."""


@jit
def transition(model, state, population, rng):
    """One ``ARMStep`` for chain ``population.own``: ``n_moves`` moves, then optionally a Gibbs sweep; returns
    ``(state, population, Info)``.

    ``population.history`` is the window of every chain's past states
    (iterations x chains x items, canonical labels, the last row the current
    states); ``Info`` describes the last move (``MOVE_NONE`` without a usable
    background).
    """
    options = population.options
    move = no_move()
    for _ in range(options.n_moves):
        state, move = background_move(model, state, population.history, population.own, options.variant, rng)
    if options.gibbs_sweep:
        state, _ = gibbs.sweep(model, state, rng)
    return state, population, report(model, state, move)


@jit
def _refinement_keys(state, inside_items, za, zb, slot_i, with_current):
    """Key of each inside item's block of ``za ∨ zb``, and of ``z`` too if ``with_current`` (its clusters ``slot_i`` and the other)."""
    n = za.shape[0]
    keys = np.empty(inside_items.shape[0], dtype=np.int64)
    for q in range(inside_items.shape[0]):
        h = inside_items[q]
        side = 0 if not with_current or state.labels[h] == slot_i else 1
        keys[q] = (np.int64(za[h]) * n + zb[h]) * 2 + side
    return keys


@jit
def _past_inside(za, i):
    """The inside items of ``arm-past``: the cluster of ``i`` (and ``j``) in the past state ``za``."""
    count = 0
    for h in range(za.shape[0]):
        if za[h] == za[i]:
            count += 1
    items = np.empty(count, dtype=np.int64)
    count = 0
    for h in range(za.shape[0]):
        if za[h] == za[i]:
            items[count] = h
            count += 1
    return items


@jit
def _blocks_in_order(inside_items, keys, key_i, key_j, rank, i, j, lead):
    """Blocks of equal key, ordered by size (descending) then earmark rank.

    Returns ``(items, starts)``: block ``b`` is ``items[starts[b]:starts[b+1]]``
    with its earmark first, the member of lowest rank.  With ``lead``
    (``arm-past``) the blocks of ``i`` and ``j`` come first, in that order, with
    ``i`` and ``j`` as their earmarks; otherwise they are left out (Algorithm 3
    places them before any block).
    """
    order = np.argsort(keys, kind="mergesort")
    count = 0
    for q in range(keys.shape[0]):
        if lead or (keys[q] != key_i and keys[q] != key_j):
            count += 1
    grouped = np.empty(count, dtype=np.int64)
    bounds = np.empty(count + 1, dtype=np.int64)
    n_blocks = 0
    pos = 0
    last_key = -1
    for q in range(order.shape[0]):
        key = keys[order[q]]
        if not lead and (key == key_i or key == key_j):
            continue
        if pos == 0 or key != last_key:
            bounds[n_blocks] = pos
            n_blocks += 1
            last_key = key
        grouped[pos] = inside_items[order[q]]
        pos += 1
    bounds[n_blocks] = pos
    sort_key = np.empty(n_blocks)
    first = (rank.shape[0] + 1.0) ** 2  # below any size-and-rank key
    for b in range(n_blocks):
        lo, hi = bounds[b], bounds[b + 1]
        best = lo
        for q in range(lo, hi):
            if grouped[q] == i or grouped[q] == j:
                best = q
                break
            if rank[grouped[q]] < rank[grouped[best]]:
                best = q
        grouped[lo], grouped[best] = grouped[best], grouped[lo]
        if grouped[lo] == i:
            sort_key[b] = -2.0 * first
        elif grouped[lo] == j:
            sort_key[b] = -first
        else:  # size descending, then earmark rank ascending (ranks < n, sizes <= n)
            sort_key[b] = -(hi - lo) * (rank.shape[0] + 1.0) + rank[grouped[lo]]
    block_order = np.argsort(sort_key)
    items = np.empty(count, dtype=np.int64)
    starts = np.empty(n_blocks + 1, dtype=np.int64)
    pos = 0
    for b in range(n_blocks):
        src = block_order[b]
        starts[b] = pos
        for q in range(bounds[src], bounds[src + 1]):
            items[pos] = grouped[q]
            pos += 1
    starts[n_blocks] = pos
    return items, starts


@jit
def reconfigure(model, state, i, j, za, zb, order, variant, target, rng):
    """Build ``z*`` from ``state`` (modified; pass a copy) by Algorithm 3 (or 2, or ``arm-past``).

    ``order`` lists the items by rank (a random permutation: the paper's
    relabelling, Sec. 2.4).  With an empty ``target`` the choices are
    sampled; otherwise each is forced towards the partition with labels
    ``target``.  Returns
    ``(state, log_probability, reached)``; ``reached`` is False if a forced
    choice was impossible or the result differs from ``target``.

    This function finds the inside items, the blocks and their order, and
    allocates every buffer; :func:`_construct` makes the choices.  Room for
    as many more clusters as there are inside items is reserved first, so no
    step reallocates the state: every slot the construction opens holds an
    inside item that stays there (``i``, ``j``, an earmark or a moved inside
    item), except when an outside item that was alone "stays", which first
    frees its own slot.  The free slots keep their order, so the slots used
    are those of an unreserved state.
    """
    n = model.data.shape[0]
    forced = target.shape[0] > 0
    slot_i, slot_j = state.labels[i], state.labels[j]
    split = slot_i == slot_j
    past = variant == ARM_PAST
    if past:
        inside_items = _past_inside(za, i)
    else:
        inside_items = np.empty(state.sizes[slot_i] + (0 if split else state.sizes[slot_j]), dtype=np.int64)
        cluster_members(state, slot_i, slot_j, inside_items)
    n_inside = inside_items.shape[0]
    state = ensure_capacity(state, n_inside)
    cap = state.sizes.shape[0]
    inside = np.zeros(n, dtype=np.bool_)
    for h in inside_items:
        inside[h] = True

    keys = _refinement_keys(state, inside_items, za, zb, slot_i, not past)
    key_i = key_j = -1
    for q in range(n_inside):
        if inside_items[q] == i:
            key_i = keys[q]
        if inside_items[q] == j:
            key_j = keys[q]
    rank = np.empty(n, dtype=np.int64)
    for q in range(n):
        rank[order[q]] = q
    # Algorithm 2-3: the first set(s) placed, c_i and c_j (their union for a merge), as new clusters
    head_i = np.empty(0 if past else n_inside, dtype=np.int64)
    head_j = np.empty(0 if past else n_inside, dtype=np.int64)
    n_head_i = n_head_j = 0
    if not past:
        for q in range(n_inside):
            h = inside_items[q]
            if h == i or (variant != SRM and keys[q] == key_i):
                head_i[n_head_i] = h
                n_head_i += 1
            elif h == j or (variant != SRM and keys[q] == key_j):
                head_j[n_head_j] = h
                n_head_j += 1
        if not split:
            for q in range(n_head_j):
                head_i[n_head_i + q] = head_j[q]
            n_head_i += n_head_j

    if variant == ARM or past:
        block_items, starts = _blocks_in_order(inside_items, keys, key_i, key_j, rank, i, j, past)
    else:
        block_items, starts = np.empty(0, dtype=np.int64), np.zeros(1, dtype=np.int64)
    # fixed items are never moved again: i and j from the start (Algorithm 2-3), every outside item (arm-past)
    fixed = np.zeros(n, dtype=np.bool_)
    for h in range(n):
        fixed[h] = (not inside[h]) if past else (h == i or h == j)

    # forced mode: anchor[t] is a placed item of target cluster t that stays with it to the end
    anchor = np.full(n + 1 if not forced else max(n, target.max() + 1), -1, dtype=np.int64)
    if forced:
        for h in range(n):
            stays = past or (target[h] != target[i] and target[h] != target[j])
            if not inside[h] and stays and anchor[target[h]] < 0:
                anchor[target[h]] = h

    construction = Construction(
        i, j, split, inside_items, inside, head_i[:n_head_i], head_j[:n_head_j], block_items, starts,
        1 if past else -1, order, target, anchor, fixed,
    )
    scratch = Scratch(
        np.zeros(cap, dtype=np.int64), np.zeros(cap, dtype=np.bool_), np.empty(1, dtype=np.int64),
        np.empty(cap + 1, dtype=np.int64), np.empty(cap + 1), np.empty(cap + 1), np.empty(state.stats.shape[1]),
        weight_work(state), np.empty(state.cache.shape[1]),
    )
    log_prob, possible = _construct(model, state, construction, scratch, rng)
    _refresh_stale(model, state, scratch.stale)
    if not possible:
        return state, -math.inf, False
    return state, log_prob, _same_partition(state.labels, target) if forced else True


@jit(_nrt=False)
def _construct(model, state, construction, scratch, rng):
    """The choices of :func:`reconfigure` (a :class:`Construction`, with the buffers of a :class:`Scratch`); returns
    ``(log probability, possible)``.

    Unplaces the inside items, places ``head_i`` (and ``head_j`` for a
    ``split``; for a merge ``head_i`` holds both) as new clusters if they are
    not empty, then the blocks (none for sARM/sRM), then the items in
    ``order`` that are not ``fixed``.  ``possible`` is False if a forced
    choice was impossible.  The construction's ``anchor`` and ``fixed`` are
    updated and the scratch buffers overwritten; ``scratch.stale`` ends with
    the slots left to refresh.

    Compiled without reference counting (``_nrt=False``), like
    ``clusters.update_items``: it allocates nothing and all its arrays belong to
    the caller, and each inlined helper taking the state would otherwise
    increment and decrement the counts of its 11 arrays, which was half of a
    move's time.  A slot's predictive cache is refreshed only when a choice
    reads it (:func:`_choose`), not after every removal and placement; and
    when an item returns to the cluster it was taken from (an outside item
    that stays, a block member that stays with its block), the cluster's
    cache row from before the removal is put back, as in the Gibbs sweep.
    """
    i, j, split, target = construction.i, construction.j, construction.split, construction.target
    head_i, head_j, inside, order = construction.head_i, construction.head_j, construction.inside, construction.order
    anchor, fixed, starts = construction.anchor, construction.fixed, construction.starts
    original, stale, one, candidates = scratch.original, scratch.stale, scratch.one, scratch.candidates
    row, saved = scratch.row, scratch.saved
    n = model.data.shape[0]
    forced = target.shape[0] > 0
    for h in construction.inside_items:
        _detach(model, state, h, stale, row)
    # original members per slot (eq. (17)); slots opened later start at 0
    for q in range(state.n_clusters[0]):
        original[state.slots[q]] = state.sizes[state.slots[q]]
    target_i = target[i] if forced else -1
    target_j = target[j] if forced else -1
    if head_i.shape[0] > 0:
        slot_i = _place(model, state, -1, head_i, head_i.shape[0], stale, row)
        slot_j = _place(model, state, -1, head_j, head_j.shape[0], stale, row) if split else slot_i
        original[slot_i] = 0
        original[slot_j] = 0
        if forced:
            anchor[target_i] = i
            anchor[target_j] = j

    log_prob = 0.0
    for b in range(starts.shape[0] - 1):
        block = construction.block_items[starts[b] : starts[b + 1]]
        earmark = block[0]
        n_candidates = write_all_candidates(state, candidates)
        if b == construction.j_block:
            n_candidates = _direction_candidates(candidates, n_candidates, state.labels[i], split)
        pick = -1
        if forced:
            pick = _forced_index(candidates, n_candidates, _forced_slot(state, target, earmark, anchor))
            if pick < 0:
                return -math.inf, False
        pick, lp = _choose(model, state, block, block.shape[0], n_candidates, pick, scratch, rng)
        log_prob += lp
        slot = _place(model, state, candidates[pick], block, block.shape[0], stale, row)
        if candidates[pick] < 0:
            original[slot] = 0
        fixed[earmark] = True
        if forced and anchor[target[earmark]] < 0:
            anchor[target[earmark]] = earmark

    for q in range(n):
        h = order[q]
        if fixed[h]:
            continue
        one[0] = h
        source = state.labels[h]  # -1: an unplaced inside item (sARM, sRM)
        if not inside[h] and original[source] == 1 and state.sizes[source] >= 2:
            # eq. (17): the last original member stays once others have joined
            fixed[h] = True
            if forced and (target[h] == target_i or target[h] == target_j):
                return -math.inf, False
            continue
        # a fresh cache row of h's cluster is saved, to be restored if h comes back to it
        restorable = source >= 0 and not stale[source]
        saved_weight = _save_row(state, source, saved) if restorable else 0.0
        if inside[h]:
            if source >= 0:
                _detach(model, state, h, stale, row)
            n_candidates = write_all_candidates(state, candidates)
        else:
            home = source
            stay = _detach(model, state, h, stale, row)  # -1 if h was alone
            n_candidates = 3 if split else 2
            candidates[0] = state.labels[i]
            candidates[1] = state.labels[j]
            candidates[n_candidates - 1] = stay
        pick = -1
        if forced:
            if inside[h]:
                pick = _forced_index(candidates, n_candidates, _forced_slot(state, target, h, anchor))
            elif target[h] == target_i:
                pick = 0
            elif target[h] == target_j:
                pick = 1
            else:
                pick = n_candidates - 1  # stay
            if pick < 0:
                return -math.inf, False
        # one.shape[0], not a literal 1: numba would compile set_log_weights again for Literal[int](1)
        pick, lp = _choose(model, state, one, one.shape[0], n_candidates, pick, scratch, rng)
        log_prob += lp
        slot = _place(model, state, candidates[pick], one, one.shape[0], stale, row)
        if restorable and slot == source:  # the cluster is again what it was when its cache was computed
            _restore_row(state, slot, saved, saved_weight, stale)
        if not inside[h]:
            if slot != home:
                original[home] -= 1
                if candidates[pick] < 0:
                    original[slot] = 1  # h was alone and stays alone
        elif candidates[pick] < 0:
            original[slot] = 0
        fixed[h] = True
        if forced and anchor[target[h]] < 0:
            anchor[target[h]] = h
    return log_prob, True


@jit(inline="always")
def _direction_candidates(candidates, n_candidates, slot_i, split):
    """Restrict ``candidates[:n_candidates]`` for ``arm-past``'s block of ``j``: ``slot_i`` alone for a merge, every other for a split."""
    if not split:
        candidates[0] = slot_i
        return 1
    for c in range(n_candidates):
        if candidates[c] == slot_i:
            candidates[c] = candidates[n_candidates - 1]
            return n_candidates - 1
    return n_candidates


@jit(inline="always")
def _detach(model, state, h, stale, row):
    """Unplace item ``h``; returns its slot (marked stale) or -1 if the cluster closed."""
    slot = detach_item(model, state, h, row)
    if slot >= 0:
        stale[slot] = True
    return slot


@jit(inline="always")
def _save_row(state, slot, saved):
    """Copy ``slot``'s cache row into ``saved``; returns its prior weight."""
    for r in range(saved.shape[0]):
        saved[r] = state.cache[slot, r]
    return state.log_weight[slot]


@jit(inline="always")
def _restore_row(state, slot, saved, saved_weight, stale):
    """Undo a removal and re-placement of one item: put back the cache row and weight saved by :func:`_save_row`."""
    for r in range(saved.shape[0]):
        state.cache[slot, r] = saved[r]
    state.log_weight[slot] = saved_weight
    stale[slot] = False


@jit(inline="always")
def _place(model, state, slot, members, count, stale, row):
    """Put the unplaced ``members[:count]`` in ``slot`` (-1: a new one, within the reserved room); returns the slot (marked stale)."""
    if slot < 0:
        slot = open_slot(state)
    attach_items(model, state, slot, members, count, row)
    stale[slot] = True
    return slot


@jit(inline="always")
def _choose(model, state, members, count, n_candidates, forced, scratch, rng):
    """The set move (eq. (5)) of ``members[:count]`` over ``scratch.candidates[:n_candidates]``: ``(index, log
    probability)``.

    Refreshes the stale candidate slots first, so the weights are exactly those of an always-refreshed state.
    """
    candidates = scratch.candidates
    for c in range(n_candidates):
        if candidates[c] >= 0:
            _refresh_if_stale(model, state, candidates[c], scratch.stale)
    set_log_weights(model, state, members, count, candidates, n_candidates, scratch.log_weights, scratch.work)
    return choose_into(scratch.log_weights, n_candidates, forced, scratch.weights, rng)


@jit
def _refresh_stale(model, state, stale):
    """Refresh every occupied stale slot."""
    for q in range(state.n_clusters[0]):
        _refresh_if_stale(model, state, state.slots[q], stale)


@jit(inline="always")
def _refresh_if_stale(model, state, slot, stale):
    """``refresh`` the occupied ``slot`` if a removal or placement has changed it since its last refresh."""
    if stale[slot]:
        refresh(model, state, slot)
        stale[slot] = False


@jit(inline="always")
def _forced_slot(state, target, e, anchor):
    """Slot that set/item ``e`` must join for the construction to end at ``target`` (-1: a new cluster)."""
    t = target[e]
    return state.labels[anchor[t]] if anchor[t] >= 0 else -1


@jit(inline="always")
def _forced_index(candidates, n_candidates, slot):
    """Index of ``slot`` in ``candidates[:n_candidates]`` (-1: absent)."""
    for c in range(n_candidates):
        if candidates[c] == slot:
            return c
    return -1


@jit
def _same_partition(a, b):
    """True if label vectors ``a`` and ``b`` (non-negative) define the same partition."""
    n = a.shape[0]
    size = 1
    for h in range(n):
        size = max(size, a[h] + 1, b[h] + 1)
    a_to_b = np.full(size, -1, dtype=np.int64)
    b_to_a = np.full(size, -1, dtype=np.int64)
    for h in range(n):
        if a_to_b[a[h]] < 0 and b_to_a[b[h]] < 0:
            a_to_b[a[h]] = b[h]
            b_to_a[b[h]] = a[h]
        elif a_to_b[a[h]] != b[h] or b_to_a[b[h]] != a[h]:
            return False
    return True


@jit
def propose(model, state, i, j, za, zb, variant, rng):
    """One reconfiguration move with background ``(i, j, za, zb)``; returns ``(state, Move)``.

    If the forced reverse construction does not end at ``z`` (impossible while
    the construction path is unique, ``docs/exactness.md``, "ARM: a unique
    path, and the reverse move"), ``T(z|z*) = 0`` and the move is rejected.
    """
    n = model.data.shape[0]
    order = shuffle(np.arange(n), rng)  # the items in rank order: a random relabelling (Sec. 2.4)
    move = MOVE_SPLIT if state.labels[i] == state.labels[j] else MOVE_MERGE
    no_target = state.labels[:0]  # empty, and of the reverse target's type (a global array would be read-only)
    forward, log_forward, _ = reconfigure(model, copy_state(state), i, j, za, zb, order, variant, no_target, rng)
    _, log_reverse, reverse_found = reconfigure(model, copy_state(forward), i, j, za, zb, order, variant, state.labels, rng)
    if not reverse_found:
        log_reverse = -math.inf
    log_target = log_joint(model, forward) - log_joint(model, state)
    log_proposal = log_reverse - log_forward
    accepted, accept_prob = metropolis_accept(log_target + log_proposal, rng)
    change = forward.n_clusters[0] - state.n_clusters[0] if accepted else 0
    return (forward if accepted else state), Move(move, accepted, accept_prob, log_target, log_proposal, change)


@jit
def background_move(model, state, history, own, variant, rng):
    """One move of chain ``own``: background from ``history`` (or a random pair for ``srm``), then :func:`propose`.

    ``history`` is the window of past states (see ``background.choose_background``);
    without a usable background the state is returned unchanged with ``move = MOVE_NONE``.
    """
    if variant == SRM:
        i, j = random_pair(state.labels.shape[0], rng)
        return propose(model, state, i, j, history[-1, own], history[-1, own], variant, rng)
    ok, i, j, za, zb = choose_background(history, own, rng)
    if not ok:
        return state, no_move()
    return propose(model, state, i, j, za, zb, variant, rng)


KERNEL = Kernel(init, transition, Options, Support((ADDITIVE, RELATIONAL), min_items=2), population=True)
"""The adaptive reconfiguration moves (``ARMStep``), a population kernel (``kernels.protocol``)."""
