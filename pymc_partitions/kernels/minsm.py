"""Smart-dumb/dumb-smart split-merge: MinSM, LSH split-merge and SDDS (``papers/004_...``, Sec. 3).

Each proposal first flips a coin between the two move pairs of Wang &
Russell (2015), then a second coin between the pair's two moves:

* **smart split / dumb merge**: a smart split of one cluster, or the merge of
  a pair of clusters drawn without looking at the data;
* **smart merge / dumb split**: a merge of two clusters drawn because their
  items look alike, or a uniformly random split of a cluster.

The reverse of a smart split is the dumb merge of its two parts and the
reverse of a dumb split the smart merge of its parts, so each pair is a
reversible Metropolis-Hastings kernel on its own and the coins cancel from
the ratios.  The variants differ in the smart moves:

``VARIANT_MINSM`` (Sec. 3.2)
    Smart split: an item ``u`` drawn uniformly names the cluster ``C``
    (``|C| / n``); a *fresh* weighted MinHash of ``C`` -- a point uniform
    under ``C``'s max envelope (``hashing.draw_cut``) -- splits it into the
    items whose region contains the point and the rest.  Its probability
    sums both labelings (``hashing.cut_log_prob``, eq. (4) twice); the
    paper's eq. (5) counts one and reads the collision probability as that
    of ``u``'s bucket, which is not the split drawn.  Smart merge: ``u``
    uniform, ``v`` uniform from ``u``'s bucket in a MinHash table fixed for
    the run; the probability sums every ``(u, v)`` across the two clusters
    (``hashing.table_merge_log_prob``), not eq. (7)'s one pair.
``VARIANT_LSH`` (Sec. 3.1)
    Smart split: ``u`` uniform, a table uniform, ``v`` uniform from the
    bucket of ``u``'s opposite sign-projection code (a query with ``-u``);
    if ``u`` and ``v`` share a cluster it is split with ``u`` and ``v`` on
    opposite sides and every other item on a uniformly random side
    (``2^-(|C|-2)``); the probability sums every seed pair
    (``hashing.anti_pair_log_prob``, eq. (2)).  Smart merge as MinSM's, on
    sign-projection tables (eq. (3)).
``VARIANT_SDDS`` (Wang & Russell 2015, the likelihood-guided baseline)
    Smart split: a uniformly random pair ``i != j`` in one cluster, the other
    items of the cluster sequentially allocated in random order between
    ``i``'s and ``j``'s sides with probability ``∝ (m_t + s) p(x_h | x_t)``
    (``clusters.sequential_allocation``, Dahl 2003); its dumb merge joins the
    clusters of a uniformly random pair, so the pair's probability cancels.
    Smart merge: ``u`` uniform names a cluster ``a``, which is merged with
    ``b`` drawn ``∝ pi(a ∪ b)`` over every other cluster (O(K s)); the
    probability sums both orders.

Dumb moves, shared: a dumb merge joins a uniformly random pair of clusters
(``1 / C(M, 2)``; SDDS: of a random pair of items, see above); a dumb split
picks a cluster uniformly (``1 / M``) and puts each item on a side with a
fair coin, both sides non-empty or no move (``2 · 2^-|C|``: both
labelings).  A move that finds nothing to do (a singleton, a seed pair in
two clusters, a one-sided cut) proposes no change and reports ``MOVE_NONE``.
Every probability is derived in ``docs/exactness.md``, "MinHash split-merge",
and checked against an independent enumeration in
``tests/kernels/test_minsm_construction.py``.

A move costs what it touches: O(|C| · D) for the MinHash moves, O(L |C| log)
for the table sums, O(|C| s) for a split or merge, O(K s) for SDDS's smart
merge; nothing is rebuilt from the labels.

References
----------
Luo, C. & Shrivastava, A. (2018). Scaling-up split-merge MCMC with locality
sensitive sampling (LSS).  ``papers/004_...``.
Wang, W. & Russell, S. (2015). A smart-dumb/dumb-smart algorithm for efficient
split-merge MCMC.  UAI.
Dahl, D. B. (2003). An improved merge-split sampler for conjugate Dirichlet
process mixture models.  Technical report, University of Wisconsin.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from pymc_partitions.kernels import gibbs
from pymc_partitions.kernels.background import random_pair
from pymc_partitions.kernels.clusters import (
    log_merge_ratio, merge_clusters, pair_members, relocate, sequential_allocation, side_of, split_cluster,
)
from pymc_partitions.kernels.hashing import (
    anti_pair_log_prob, cut_log_prob, draw_cut, draw_from_bucket, table_merge_log_prob,
)
from pymc_partitions.kernels.info import MOVE_MERGE, MOVE_SPLIT, Info, no_move
from pymc_partitions.kernels.moves import choose, metropolis_accept
from pymc_partitions.state import ensure_capacity, members_of, open_slot

VARIANT_MINSM = 0
VARIANT_LSH = 1
VARIANT_SDDS = 2
VARIANTS = {"minsm": VARIANT_MINSM, "lsh": VARIANT_LSH, "sdds": VARIANT_SDDS}
"""Variant name -> code."""

Config = namedtuple("Config", ["variant", "n_moves", "gibbs_sweep", "hashing"])
Config.__doc__ = """Options of one transition (``MinHashSplitMergeStep``).

variant : int                 ``VARIANT_MINSM``, ``VARIANT_LSH`` or ``VARIANT_SDDS``
n_moves : int                 proposals per transition
gibbs_sweep : bool            follow the proposals with a full Gibbs sweep
hashing : hashing.Hashing     feature transform and the hash tables fixed for the run
"""

LOG2 = math.log(2.0)


@njit(cache=True)
def transition(model, state, config, history, own, rng):
    """``config.n_moves`` proposals, then optionally a Gibbs sweep; returns ``(state, Info)`` of the last proposal."""
    info = no_move()
    for _ in range(config.n_moves):
        state, info = propose(model, state, config, rng)
    if config.gibbs_sweep:
        state, _ = gibbs.sweep(model, state, rng)
    return state, info


@njit(cache=True)
def propose(model, state, config, rng):
    """One proposal: a coin for the move pair, a coin for the move, then accept or reject; returns ``(state, Info)``."""
    smart_split_pair = rng.random() < 0.5
    if rng.random() < 0.5:
        if smart_split_pair:
            state, found, a, b, log_forward, log_reverse = smart_split(model, state, config, rng)
        else:
            state, found, a, b, log_forward, log_reverse = dumb_split(model, state, config, rng)
        return _finish_split(model, state, found, a, b, log_forward, log_reverse, rng)
    if smart_split_pair:
        found, a, b, log_forward, log_reverse = dumb_merge(model, state, config, rng)
    else:
        found, a, b, log_forward, log_reverse = smart_merge(model, state, config, rng)
    return _finish_merge(model, state, found, a, b, log_forward, log_reverse, rng)


@njit(cache=True)
def _finish_split(model, state, found, a, b, log_forward, log_reverse, rng):
    """Accept or undo the split of ``a ∪ b`` into the clusters ``a`` and ``b`` (already made in ``state``)."""
    if not found:
        return state, no_move()
    log_target = -log_merge_ratio(model, state, a, b)
    log_proposal = log_reverse - log_forward
    accepted, accept_prob = metropolis_accept(log_target + log_proposal, rng)
    if not accepted:
        merge_clusters(model, state, a, b)
    return state, Info(MOVE_SPLIT, accepted, accept_prob, log_target, log_proposal, 1 if accepted else 0)


@njit(cache=True)
def _finish_merge(model, state, found, a, b, log_forward, log_reverse, rng):
    """Accept (merge) or reject the proposed merge of clusters ``a`` and ``b``."""
    if not found:
        return state, no_move()
    log_target = log_merge_ratio(model, state, a, b)
    log_proposal = log_reverse - log_forward
    accepted, accept_prob = metropolis_accept(log_target + log_proposal, rng)
    if accepted:
        merge_clusters(model, state, a, b)
    return state, Info(MOVE_MERGE, accepted, accept_prob, log_target, log_proposal, -1 if accepted else 0)


# --------------------------------------------------------------------------- the four moves


@njit(cache=True)
def smart_split(model, state, config, rng):
    """The variant's smart split, made in ``state``; returns ``(state, found, a, b, log q(split), log q(merge back))``.

    ``a`` keeps the first part, ``b`` is the new cluster; the reverse is the
    pair's dumb merge in the split state.
    """
    if config.variant == VARIANT_SDDS:
        return _allocation_split(model, state, rng)
    n = state.labels.shape[0]
    u = rng.integers(0, n)
    slot = state.labels[u]
    m = state.sizes[slot]
    members = np.empty(m, dtype=np.int64)
    members_of(state, slot, members, 0)
    sides = np.zeros(m, dtype=np.int64)
    if config.variant == VARIANT_MINSM:
        found = m > 1 and 0 < draw_cut(model, config.hashing, members, m, sides, rng) < m
    else:
        found = _seeded_sides(config.hashing, state, u, members, sides, rng)
    if not found:
        return state, False, slot, slot, 0.0, 0.0
    state, new = _split_by_sides(model, state, slot, members, sides)
    return state, True, slot, new, smart_split_log_prob(model, state, config, slot, new), _dumb_merge_log_prob(state, 0)


@njit(cache=True)
def dumb_merge(model, state, config, rng):
    """The pair's dumb merge (state unchanged); returns ``(found, a, b, log q(merge), log q(split back))``."""
    if config.variant == VARIANT_SDDS:
        return _pair_merge(model, state, rng)
    k = state.n_clusters[0]
    if k < 2:
        return False, 0, 0, 0.0, 0.0
    first = rng.integers(0, k)
    second = (first + 1 + rng.integers(0, k - 1)) % k
    a, b = state.slots[first], state.slots[second]
    return True, a, b, _dumb_merge_log_prob(state, 0), smart_split_log_prob(model, state, config, a, b)


@njit(cache=True)
def smart_merge(model, state, config, rng):
    """The variant's smart merge (state unchanged); returns ``(found, a, b, log q(merge), log q(split back))``."""
    n = state.labels.shape[0]
    if config.variant == VARIANT_SDDS:
        if state.n_clusters[0] < 2:
            return False, 0, 0, 0.0, 0.0
        a = state.labels[rng.integers(0, n)]
        log_weights, slots = _partner_log_weights(model, state, a)
        b = slots[choose(log_weights, log_weights.shape[0], -1, rng)[0]]
    else:
        u = rng.integers(0, n)
        table = rng.integers(0, config.hashing.bucket.shape[0])
        v = draw_from_bucket(config.hashing, table, config.hashing.bucket[table, u], u, rng)
        if v < 0 or state.labels[v] == state.labels[u]:
            return False, 0, 0, 0.0, 0.0
        a, b = state.labels[u], state.labels[v]
    return True, a, b, smart_merge_log_prob(model, state, config, a, b), _dumb_split_log_prob(state, a, b, -1)


@njit(cache=True)
def dumb_split(model, state, config, rng):
    """A cluster drawn uniformly split by fair coins, made in ``state``; returns ``(state, found, a, b, log q(split), log q(merge back))``."""
    k = state.n_clusters[0]
    slot = state.slots[rng.integers(0, k)]
    m = state.sizes[slot]
    members = np.empty(m, dtype=np.int64)
    members_of(state, slot, members, 0)
    sides = np.empty(m, dtype=np.int64)
    moved = 0
    for q in range(m):
        sides[q] = 1 if rng.random() < 0.5 else 0
        moved += sides[q]
    if moved == 0 or moved == m:
        return state, False, slot, slot, 0.0, 0.0
    state, new = _split_by_sides(model, state, slot, members, sides)
    return state, True, slot, new, _dumb_split_log_prob(state, slot, new, -1), smart_merge_log_prob(model, state, config, slot, new)


# --------------------------------------------------------------------------- proposal probabilities


@njit(cache=True)
def smart_split_log_prob(model, state, config, a, b):
    """``log q``: the variant's smart split proposes splitting ``a ∪ b`` into the clusters ``a`` and ``b`` (MinSM, LSH).

    MinSM: ``|a ∪ b| / n`` (the cluster of ``u``) times the cut probability;
    LSH: the seed-pair probability times ``2^-(|a ∪ b| - 2)`` for the other items.
    """
    m = state.sizes[a] + state.sizes[b]
    if config.variant == VARIANT_MINSM:
        return math.log(m / state.labels.shape[0]) + cut_log_prob(model, config.hashing, state, a, b)
    return anti_pair_log_prob(config.hashing, state, a, b) - (m - 2) * LOG2


@njit(cache=True)
def smart_merge_log_prob(model, state, config, a, b):
    """``log q``: the variant's smart merge proposes merging clusters ``a`` and ``b``."""
    if config.variant != VARIANT_SDDS:
        return table_merge_log_prob(config.hashing, state, a, b)
    n = state.labels.shape[0]
    log_weights, slots = _partner_log_weights(model, state, a)
    from_a = math.log(state.sizes[a] / n) + _log_share(log_weights, slots, b)
    log_weights, slots = _partner_log_weights(model, state, b)
    from_b = math.log(state.sizes[b] / n) + _log_share(log_weights, slots, a)
    top = max(from_a, from_b)
    return top + math.log(math.exp(from_a - top) + math.exp(from_b - top))


@njit(cache=True)
def _dumb_merge_log_prob(state, extra):
    """``-log C(M + extra, 2)``: a dumb merge's choice of one pair among ``M + extra`` clusters."""
    k = state.n_clusters[0] + extra
    return -math.log(k * (k - 1) / 2.0)


@njit(cache=True)
def _dumb_split_log_prob(state, a, b, extra):
    """A dumb split of ``a ∪ b`` into ``a`` and ``b`` among ``M + extra`` clusters: ``-log M' + log 2 - |a ∪ b| log 2``."""
    m = state.sizes[a] + state.sizes[b]
    return -math.log(state.n_clusters[0] + extra) + LOG2 - m * LOG2


# --------------------------------------------------------------------------- helpers


@njit(cache=True)
def _split_by_sides(model, state, slot, members, sides):
    """Move the items with ``sides[q] = 1`` of ``slot`` to a new cluster; returns ``(state, new slot)``."""
    movers = np.empty(members.shape[0], dtype=np.int64)
    count = 0
    for q in range(members.shape[0]):
        if sides[q] == 1:
            movers[count] = members[q]
            count += 1
    return split_cluster(model, state, slot, movers, count)


@njit(cache=True)
def _seeded_sides(hashing, state, u, members, sides, rng):
    """LSH split's sides: ``v`` from the bucket of ``u``'s opposite code; ``u`` side 0, ``v`` side 1, the rest by coins.

    False (no split) if the bucket is empty or ``v`` is in another cluster.
    """
    table = rng.integers(0, hashing.bucket.shape[0])
    v = draw_from_bucket(hashing, table, hashing.anti[table, hashing.bucket[table, u]], -1, rng)
    if v < 0 or state.labels[v] != state.labels[u]:
        return False
    for q in range(members.shape[0]):
        if members[q] == u:
            sides[q] = 0
        elif members[q] == v:
            sides[q] = 1
        else:
            sides[q] = 1 if rng.random() < 0.5 else 0
    return True


@njit(cache=True)
def _shuffled_pair_members(state, i, j, rng):
    """The other items of the clusters of ``i`` and ``j`` in a uniformly random order (Fisher-Yates)."""
    members = pair_members(state, i, j)
    for q in range(members.shape[0] - 1, 0, -1):
        r = rng.integers(0, q + 1)
        members[q], members[r] = members[r], members[q]
    return members


@njit(cache=True)
def _allocation_split(model, state, rng):
    """SDDS smart split: a random pair ``i, j`` of one cluster, the rest sequentially allocated (module docstring)."""
    i, j = random_pair(state.labels.shape[0], rng)
    slot = state.labels[i]
    if state.labels[j] != slot:
        return state, False, slot, slot, 0.0, 0.0
    members = _shuffled_pair_members(state, i, j, rng)
    state = ensure_capacity(state, 1)
    new = open_slot(state)
    relocate(model, state, j, new, np.empty(1, dtype=np.int64), np.empty(state.stats.shape[1]))
    slots = np.array([slot, new])
    log_q = sequential_allocation(model, state, members, slots, members[:0], rng)
    return state, True, slot, new, log_q, 0.0  # the pair's probability is the same both ways


@njit(cache=True)
def _pair_merge(model, state, rng):
    """SDDS dumb merge: the clusters of a random pair ``i, j``; the reverse allocation is forced to the current split.

    Running the forced allocation re-places the items on their own sides, so
    the partition is unchanged.
    """
    i, j = random_pair(state.labels.shape[0], rng)
    a, b = state.labels[i], state.labels[j]
    if a == b:
        return False, a, b, 0.0, 0.0
    members = _shuffled_pair_members(state, i, j, rng)
    slots = np.array([a, b])
    log_q = sequential_allocation(model, state, members, slots, side_of(state, members, a), rng)
    return True, a, b, 0.0, log_q


@njit(cache=True)
def _partner_log_weights(model, state, a):
    """``log pi(a ∪ c) - log pi(current)`` for every other cluster ``c``, and those clusters' slots.  O(K s)."""
    k = state.n_clusters[0]
    log_weights = np.empty(k - 1)
    slots = np.empty(k - 1, dtype=np.int64)
    q = 0
    for p in range(k):
        c = state.slots[p]
        if c != a:
            log_weights[q] = log_merge_ratio(model, state, a, c)
            slots[q] = c
            q += 1
    return log_weights, slots


@njit(cache=True)
def _log_share(log_weights, slots, b):
    """``log`` of ``b``'s normalised weight among ``slots``."""
    top = log_weights.max()
    total = 0.0
    mine = -np.inf
    for q in range(log_weights.shape[0]):
        total += math.exp(log_weights[q] - top)
        if slots[q] == b:
            mine = log_weights[q]
    return mine - top - math.log(total)
