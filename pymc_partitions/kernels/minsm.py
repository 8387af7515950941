"""Smart-dumb/dumb-smart split-merge: MinSM, LSH split-merge and SDDS (``papers/004_...``, Sec. 3).

Each proposal flips a fair coin between the two move pairs of Wang & Russell
(2015), *smart split / dumb merge* and *smart merge / dumb split*, then a fair
coin between the pair's two moves (:func:`move`).  The reverse of a smart split
is the dumb merge of its parts and the reverse of a dumb split the smart merge
of its parts, so each pair is a Metropolis-Hastings kernel of its own and the
coins cancel.  Dumb merge: a uniformly random pair of clusters, ``1 / C(M, 2)``
(SDDS: the clusters of a random pair of items).  Dumb split: a uniform cluster
and a fair coin per item, ``(1/M) · 2 · 2^-|C|``.  The smart moves:

``VARIANT_MINSM`` (Sec. 3.2)
    split: ``u`` uniform names ``C``; a *fresh* weighted MinHash of ``C``
    (``hashing.draw_cut``) cuts it, probability eq. (4) over both labelings
    (``hashing.cut_log_prob``); merge: ``v`` uniform from ``u``'s bucket in a
    MinHash table fixed for the run, summed over every ``(u, v)`` across the
    two clusters (``hashing.table_merge_log_prob``).
``VARIANT_LSH`` (Sec. 3.1)
    split: ``v`` from the bucket of ``u``'s opposite sign-projection code; ``u``
    and ``v`` on opposite sides, the rest by fair coins, summed over every seed
    pair (``hashing.anti_pair_log_prob``, cf. eq. (2)); merge as MinSM's, on
    sign-projection tables (eq. (3)).
``VARIANT_SDDS`` (Wang & Russell 2015)
    split: a random pair ``i != j`` of one cluster, the rest sequentially
    allocated (``clusters.sequential_allocation``, Dahl 2003); merge: ``u``
    names ``a``, ``b`` drawn ``∝ pi(a ∪ b)`` (O(K s)), both orders summed.

A move with nothing to do (a singleton, a seed pair in two clusters, a one-sided
cut) reports ``MOVE_NONE``.  Costs: O(|C| · D) for a MinHash cut, O(L |C| log)
for the table sums, O(|C| s) for a split or merge; nothing is rebuilt from the
labels.  The probabilities as run, where and why they differ from the paper's
eqs. (2)-(8) and (10), and their enumeration test: ``docs/exactness.md``,
"MinHash split-merge".

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

from pymc_partitions import families
from pymc_partitions._dispatch import ADDITIVE, RELATIONAL
from pymc_partitions._jit import jit
from pymc_partitions.kernels import gibbs
from pymc_partitions.kernels.background import random_pair
from pymc_partitions.kernels.clusters import (
    log_merge_ratio, merge_clusters, pair_members, relocate, sequential_allocation, side_of, split_cluster,
)
from pymc_partitions.kernels.hashing import (
    anti_pair_log_prob, cut_log_prob, draw_cut, draw_from_bucket, minhash_tables, no_tables, sign_projection_tables,
    table_merge_log_prob,
)
from pymc_partitions.kernels.info import MOVE_MERGE, MOVE_SPLIT, Move, no_move, report
from pymc_partitions.kernels.moves import choose, metropolis_accept, shuffle
from pymc_partitions.kernels.protocol import Kernel, Support
from pymc_partitions.state import ensure_capacity, members_of, open_slot

VARIANT_MINSM = 0
VARIANT_LSH = 1
VARIANT_SDDS = 2
VARIANTS = {"minsm": VARIANT_MINSM, "lsh": VARIANT_LSH, "sdds": VARIANT_SDDS}
"""Variant name -> code."""

Options = namedtuple("Options", ["variant", "n_moves", "gibbs_sweep", "n_tables", "n_bits", "hash_seed"])
Options.__doc__ = """Options of a ``MinHashSplitMergeStep``.

variant : int       ``VARIANT_MINSM``, ``VARIANT_LSH`` or ``VARIANT_SDDS``
n_moves : int       proposals per transition
gibbs_sweep : bool  follow the proposals with a full Gibbs sweep
n_tables : int      hash tables of the smart merges (MinSM, LSH; the paper's ``L``)
n_bits : int        bits per sign-projection code (LSH; the paper's ``K``)
hash_seed : int     seed of the tables
"""

Sampler = namedtuple("Sampler", ["variant", "n_moves", "gibbs_sweep", "hashing"])
Sampler.__doc__ = """The sampler state (:func:`init`): the options a transition reads and the hashing fixed for the run.

variant, n_moves, gibbs_sweep   as in :class:`Options`
hashing : hashing.Hashing       feature transform and the hash tables
"""

def init(model, labels, options, rng):
    """The :class:`Sampler`: the hash tables of ``model.data`` for ``options``, built once, in O(n D L), from
    ``options.hash_seed`` (not ``rng``: they are a fixed part of the kernel)."""
    signed = not families.integer_data(model.family)  # real data: hashed through the positive and negative parts
    if options.variant == VARIANT_MINSM:
        tables = minhash_tables(model.data, signed, options.n_tables, options.hash_seed)
    elif options.variant == VARIANT_LSH:
        tables = sign_projection_tables(model.data, signed, options.n_tables, options.n_bits, options.hash_seed)
    else:
        tables = no_tables(model.data, signed)
    return Sampler(options.variant, options.n_moves, options.gibbs_sweep, tables)

LOG2 = math.log(2.0)

SMART_SPLIT = 0
DUMB_MERGE = 1
DUMB_SPLIT = 2
SMART_MERGE = 3
"""The four moves (:func:`move`); a proposal draws one uniformly (the two fair coins of the module docstring)."""


@jit
def transition(model, state, sampler, rng):
    """``sampler.n_moves`` proposals, then optionally a Gibbs sweep; returns ``(state, sampler, Info)``, the ``Info``
    of the last proposal.

    Each proposal draws one of the four moves uniformly (:func:`move`) and
    accepts or rejects it: a split is made in the state by :func:`move` and
    merged back if rejected, a merge is made only if accepted.
    """
    last = no_move()
    for _ in range(sampler.n_moves):
        kind = rng.integers(0, 4)
        state, found, a, b, log_forward, log_reverse = move(model, state, sampler, kind, rng)
        if not found:
            last = no_move()
            continue
        split = kind == SMART_SPLIT or kind == DUMB_SPLIT
        log_target = -log_merge_ratio(model, state, a, b) if split else log_merge_ratio(model, state, a, b)
        log_proposal = log_reverse - log_forward
        accepted, accept_prob = metropolis_accept(log_target + log_proposal, rng)
        if accepted != split:  # a rejected split is merged back, an accepted merge made
            merge_clusters(model, state, a, b)
        change = (1 if split else -1) if accepted else 0
        last = Move(MOVE_SPLIT if split else MOVE_MERGE, accepted, accept_prob, log_target, log_proposal, change)
    if sampler.gibbs_sweep:
        state, _ = gibbs.sweep(model, state, rng)
    return state, sampler, report(model, state, last)


@jit
def move(model, state, sampler, kind, rng):
    """Draw the move ``kind`` (``SMART_SPLIT``, ...); returns ``(state, found, a, b, log q(forward), log q(reverse))``.

    A split is made in ``state``: ``a`` keeps one part, ``b`` is the new
    cluster.  A merge of ``a`` and ``b`` is only drawn (state unchanged).
    ``found`` is False when the move has nothing to propose.  The reverse of
    a smart split is the dumb merge of its parts and the reverse of a dumb
    split the smart merge of its parts (module docstring).
    """
    data, hashing, variant = model.data, sampler.hashing, sampler.variant
    if variant == VARIANT_SDDS and kind == SMART_SPLIT:
        return _allocation_split(model, state, rng)
    if variant == VARIANT_SDDS and kind == DUMB_MERGE:
        return _pair_merge(model, state, rng)
    if kind == SMART_SPLIT or kind == DUMB_SPLIT:
        if kind == SMART_SPLIT:
            found, slot, movers = draw_smart_split(data, state, hashing, variant, rng)
        else:
            found, slot, movers = draw_dumb_split(state, rng)
        if not found:
            return state, False, slot, slot, 0.0, 0.0
        state, new = split_cluster(model, state, slot, movers, movers.shape[0])
        if kind == SMART_SPLIT:
            return state, True, slot, new, smart_split_log_prob(data, state, hashing, variant, slot, new), dumb_merge_log_prob(state.n_clusters[0])
        return state, True, slot, new, dumb_split_log_prob(state, slot, new, state.n_clusters[0] - 1), _smart_merge_log_prob(model, state, sampler, slot, new)
    if kind == DUMB_MERGE:
        found, a, b = draw_dumb_merge(state, rng)
        if not found:
            return state, False, a, b, 0.0, 0.0
        return state, True, a, b, dumb_merge_log_prob(state.n_clusters[0]), smart_split_log_prob(data, state, hashing, variant, a, b)
    if variant == VARIANT_SDDS:
        found, a, b = _draw_partner(model, state, rng)
    else:
        found, a, b = draw_table_merge(state, hashing, rng)
    if not found:
        return state, False, a, b, 0.0, 0.0
    return state, True, a, b, _smart_merge_log_prob(model, state, sampler, a, b), dumb_split_log_prob(state, a, b, state.n_clusters[0] - 1)


# --------------------------------------------------------------------------- drawing (the same code for every family)


@jit
def draw_smart_split(data, state, hashing, variant, rng):
    """MinSM or LSH smart split of the cluster of a uniform item ``u``: ``(found, slot, items moving to the new cluster)``."""
    n = state.labels.shape[0]
    u = rng.integers(0, n)
    slot = state.labels[u]
    m = state.sizes[slot]
    members = np.empty(m, dtype=np.int64)
    members_of(state, slot, members, 0)
    sides = np.zeros(m, dtype=np.int64)
    if variant == VARIANT_MINSM:
        found = m > 1 and 0 < draw_cut(data, hashing, members, m, sides, rng) < m
    else:
        found = _seeded_sides(hashing, state, u, members, sides, rng)
    return found, slot, _movers(members, sides)


@jit
def draw_dumb_split(state, rng):
    """A cluster drawn uniformly, each item to the new cluster by a fair coin: ``(found, slot, movers)``."""
    slot = state.slots[rng.integers(0, state.n_clusters[0])]
    m = state.sizes[slot]
    members = np.empty(m, dtype=np.int64)
    members_of(state, slot, members, 0)
    sides = np.empty(m, dtype=np.int64)
    moved = 0
    for q in range(m):
        sides[q] = 1 if rng.random() < 0.5 else 0
        moved += sides[q]
    return 0 < moved < m, slot, _movers(members, sides)


@jit
def draw_dumb_merge(state, rng):
    """A uniformly random pair of clusters: ``(found, a, b)``."""
    k = state.n_clusters[0]
    if k < 2:
        return False, 0, 0
    first = rng.integers(0, k)
    second = (first + 1 + rng.integers(0, k - 1)) % k
    return True, state.slots[first], state.slots[second]


@jit
def draw_table_merge(state, hashing, rng):
    """``u`` uniform, a table uniform, ``v`` uniform from ``u``'s bucket without ``u``: ``(found, cluster of u, cluster of v)``."""
    u = rng.integers(0, state.labels.shape[0])
    table = rng.integers(0, hashing.bucket.shape[0])
    v = draw_from_bucket(hashing, table, hashing.bucket[table, u], u, rng)
    if v < 0 or state.labels[v] == state.labels[u]:
        return False, 0, 0
    return True, state.labels[u], state.labels[v]


# --------------------------------------------------------------------------- proposal probabilities


@jit
def smart_split_log_prob(data, state, hashing, variant, a, b):
    """``log q``: the MinSM or LSH smart split proposes splitting ``a ∪ b`` into the clusters ``a`` and ``b``.

    MinSM: ``|a ∪ b| / n`` (the cluster of ``u``) times the cut probability;
    LSH: the seed-pair probability times ``2^-(|a ∪ b| - 2)`` for the other items.
    """
    m = state.sizes[a] + state.sizes[b]
    if variant == VARIANT_MINSM:
        return math.log(m / state.labels.shape[0]) + cut_log_prob(data, hashing, state, a, b)
    return anti_pair_log_prob(hashing, state, a, b) - (m - 2) * LOG2


@jit
def dumb_merge_log_prob(k):
    """``-log C(k, 2)``: a dumb merge's choice of one pair among ``k`` clusters."""
    return -math.log(k * (k - 1) / 2.0)


@jit
def dumb_split_log_prob(state, a, b, k):
    """A dumb split of ``a ∪ b`` into ``a`` and ``b`` among ``k`` clusters: ``-log k + log 2 - |a ∪ b| log 2``."""
    m = state.sizes[a] + state.sizes[b]
    return -math.log(k) + LOG2 - m * LOG2


@jit
def _smart_merge_log_prob(model, state, sampler, a, b):
    """``log q``: the variant's smart merge proposes merging clusters ``a`` and ``b``.

    Tables: ``hashing.table_merge_log_prob``.  SDDS: ``(|a|/n) P(b | a) + (|b|/n) P(a | b)``,
    ``P(b | a) ∝ pi(a ∪ b)`` over the clusters other than ``a``.
    """
    if sampler.variant != VARIANT_SDDS:
        return table_merge_log_prob(sampler.hashing, state, a, b)
    n = state.labels.shape[0]
    from_a = math.log(state.sizes[a] / n) + _partner_log_prob(model, state, a, b)
    from_b = math.log(state.sizes[b] / n) + _partner_log_prob(model, state, b, a)
    top = max(from_a, from_b)
    return top + math.log(math.exp(from_a - top) + math.exp(from_b - top))


# --------------------------------------------------------------------------- SDDS


@jit
def _allocation_split(model, state, rng):
    """SDDS smart split: a random pair ``i, j`` of one cluster, the rest sequentially allocated in a random order.

    Each item goes to ``i``'s or ``j``'s side with probability ``∝ (m_t + s) p(x_h | x_t)``
    (``docs/exactness.md``, "MinHash split-merge", SDDS).
    """
    i, j = random_pair(state.labels.shape[0], rng)
    slot = state.labels[i]
    if state.labels[j] != slot:
        return state, False, slot, slot, 0.0, 0.0
    members = shuffle(pair_members(state, i, j), rng)  # the other items of the pair's clusters, in random order
    state = ensure_capacity(state, 1)
    new = open_slot(state)
    relocate(model, state, j, new, np.empty(1, dtype=np.int64), np.empty(state.stats.shape[1]))
    log_q = sequential_allocation(model, state, members, np.array([slot, new]), members[:0], rng)
    return state, True, slot, new, log_q, 0.0  # the pair's and the order's probabilities are the same both ways


@jit
def _pair_merge(model, state, rng):
    """SDDS dumb merge: the clusters of a random pair ``i, j``; the reverse allocation is forced to the current split.

    Running the forced allocation re-places the items on their own sides, so
    the partition is unchanged.
    """
    i, j = random_pair(state.labels.shape[0], rng)
    a, b = state.labels[i], state.labels[j]
    if a == b:
        return state, False, a, b, 0.0, 0.0
    members = shuffle(pair_members(state, i, j), rng)  # the other items of the pair's clusters, in random order
    log_q = sequential_allocation(model, state, members, np.array([a, b]), side_of(state, members, a), rng)
    return state, True, a, b, 0.0, log_q


@jit
def _draw_partner(model, state, rng):
    """SDDS smart merge: ``u`` uniform names ``a``; ``b`` drawn ``∝ pi(a ∪ b)`` over the other clusters.  O(K s)."""
    if state.n_clusters[0] < 2:
        return False, 0, 0
    a = state.labels[rng.integers(0, state.labels.shape[0])]
    log_weights, slots = _partner_log_weights(model, state, a)
    return True, a, slots[choose(log_weights, log_weights.shape[0], -1, rng)[0]]


@jit
def _partner_log_weights(model, state, a):
    """``log pi(a ∪ c) - log pi(current)`` for every other cluster ``c``, and those clusters' slots."""
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


@jit
def _partner_log_prob(model, state, a, b):
    """``log P(b | a)`` of :func:`_draw_partner`."""
    log_weights, slots = _partner_log_weights(model, state, a)
    top = log_weights.max()
    total = 0.0
    mine = -np.inf
    for q in range(log_weights.shape[0]):
        total += math.exp(log_weights[q] - top)
        if slots[q] == b:
            mine = log_weights[q]
    return mine - top - math.log(total)


# --------------------------------------------------------------------------- helpers


@jit
def _movers(members, sides):
    """The items of ``members`` with ``sides[q] = 1``."""
    count = 0
    for q in range(sides.shape[0]):
        count += sides[q]
    out = np.empty(count, dtype=np.int64)
    count = 0
    for q in range(sides.shape[0]):
        if sides[q] == 1:
            out[count] = members[q]
            count += 1
    return out


@jit
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


KERNEL = Kernel(init, transition, Options, Support((ADDITIVE, RELATIONAL), min_items=2))
"""The MinHash split-merge (``MinHashSplitMergeStep``) (``kernels.protocol``)."""
