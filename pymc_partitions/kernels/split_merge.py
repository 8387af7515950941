"""Conjugate restricted-Gibbs split-merge (Jain & Neal 2004; ``papers/000_...``, Algorithm 1).

One proposal:

1. choose items ``i != j`` uniformly; ``S`` are the other items of their cluster(s);
2. launch state: ``i`` and ``j`` in two separate components, every item of
   ``S`` placed in one of them uniformly at random, then ``n_intermediate``
   restricted Gibbs scans of ``S`` between the two components, with
   ``p(h -> A) ∝ (m_A + s) p(x_h | x_A)`` (the prior's ``W(m+1)/W(m) = m + s``);
3. if ``z_i = z_j`` propose the split obtained by one more restricted scan,
   with proposal probability ``q(split | launch)`` the product of that scan's
   conditional probabilities; accept with
   ``min(1, [pi(split)/pi(z)] / q(split | launch))``;
4. otherwise propose the merge of the two clusters and accept with
   ``min(1, [pi(merge)/pi(z)] q(z | launch))``, where ``q(z | launch)`` is the
   probability that a restricted scan from the launch state would produce the
   current split (each item forced to its current side).

The launch state depends on the random choices of steps 1-2 only, not on the
state being split or merged beyond ``S``, which makes the pair of moves
reversible (Jain & Neal 2004, Sec. 3).  ``pi`` is the collapsed posterior
``p(Pi) prod_c p(x_c)``; its ratio ``log_target_ratio`` is reported for the
delta tests.

References
----------
Jain, S. & Neal, R. M. (2004). A split-merge Markov chain Monte Carlo procedure
for the Dirichlet process mixture model. JCGS 13(1), 158-182.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from pymc_partitions import families, priors
from pymc_partitions.families import INFINITE_RELATIONAL
from pymc_partitions.kernels.moves import choose_into, metropolis_accept, set_log_weights, weight_work
from pymc_partitions.state import (
    add_items, close_slot, copy_state, ensure_capacity, link, log_joint, members_of, open_slot, refresh, relink, remove_item,
)

MOVE_GIBBS = 0
MOVE_SPLIT = 1
MOVE_MERGE = 2

SplitMergeInfo = namedtuple("SplitMergeInfo", ["move", "accepted", "accept_prob", "log_target_ratio", "log_proposal_ratio"])
SplitMergeInfo.__doc__ = """What a proposal did.

move : int                 MOVE_SPLIT (1) or MOVE_MERGE (2)
accepted : bool
accept_prob : float        min(1, exp(log_target_ratio + log_proposal_ratio))
log_target_ratio : float   log pi(proposal) - log pi(current), exact
log_proposal_ratio : float log q(current | proposal) - log q(proposal | current)
"""


@njit(cache=True)
def _side_log_weight(model, stats, cache, size, shift, x):
    return math.log(size + shift) + families.log_predictive(model.family, cache, x, model.params)


@njit(cache=True)
def restricted_scan(model, members, side, stats, caches, sizes, forced, use_forced, rng):
    """One restricted Gibbs scan of ``members`` between components 0 and 1.

    ``side[h]`` is the component of ``members[h]``; ``stats``, ``caches`` and
    ``sizes`` hold the two components.  With ``use_forced`` each item is put
    on ``forced[h]`` instead of a sampled side.  Returns the log probability
    of the scan's choices.
    """
    shift = priors.size_shift(model.prior, model.prior_params)
    s = stats.shape[1]
    item = np.empty(s)
    log_q = 0.0
    for h in range(members.shape[0]):
        x = model.data[members[h]]
        families.item_stats(model.family, x, item)
        old = side[h]
        stats[old] -= item
        sizes[old] -= 1
        families.fill_cache(model.family, stats[old], model.params, caches[old])
        w0 = _side_log_weight(model, stats[0], caches[0], sizes[0], shift, x)
        w1 = _side_log_weight(model, stats[1], caches[1], sizes[1], shift, x)
        top = max(w0, w1)
        log_norm = top + math.log(math.exp(w0 - top) + math.exp(w1 - top))
        if use_forced:
            new = forced[h]
        else:
            new = 1 if rng.random() < math.exp(w1 - log_norm) else 0
        log_q += (w1 if new == 1 else w0) - log_norm
        side[h] = new
        stats[new] += item
        sizes[new] += 1
        families.fill_cache(model.family, stats[new], model.params, caches[new])
    return log_q


@njit(cache=True)
def _cluster_log_weight(model, stats, size):
    """log W(size) + log marginal(stats): a cluster's factor of the collapsed posterior."""
    return priors.log_w(model.prior, model.prior_params, size) + families.log_marginal(model.family, stats, model.params)


@njit(cache=True)
def _other_members(state, ci, cj, i, j):
    """The items of clusters ``ci`` and ``cj`` other than ``i`` and ``j`` (O(their sizes))."""
    total = state.sizes[ci] + (state.sizes[cj] if cj != ci else 0)
    both = np.empty(total, dtype=np.int64)
    end = members_of(state, ci, both, 0)
    if cj != ci:
        end = members_of(state, cj, both, end)
    out = np.empty(total - 2, dtype=np.int64)
    count = 0
    for h in both[:end]:
        if h != i and h != j:
            out[count] = h
            count += 1
    return out


_NO_BACKGROUND = np.zeros(0, dtype=np.int32)


@njit(cache=True)
def propose(model, state, rng, n_intermediate):
    """One split-merge proposal with ``n_intermediate`` restricted scans to the launch state."""
    n = model.data.shape[0]
    i = rng.integers(0, n)
    j = rng.integers(0, n - 1)
    if j >= i:
        j += 1
    return propose_pair(model, state, i, j, _NO_BACKGROUND, _NO_BACKGROUND, rng, n_intermediate)


@njit(cache=True)
def propose_pair(model, state, i, j, za, zb, rng, n_intermediate):
    """Split-merge proposal for the items ``i != j``; with past states ``za, zb``, the paper's bSM launch.

    bSM (``papers/000_...``, Sec. 3.6.2): an item of ``S`` starts on ``i``'s
    side if it shares ``i``'s clusters in both ``za`` and ``zb``, on ``j``'s if
    it shares ``j``'s, and on a random side otherwise.  The paper also
    intersects with the current ``z_i``, which makes the launch of a merge
    depend on the current split, so that the merge and the split that reverses
    it would start from different launch distributions; the launch here uses
    only ``za``, ``zb`` and ``S``, which both directions share, so the
    Jain-Neal argument holds unchanged.
    """
    if model.family == INFINITE_RELATIONAL:
        return _set_move_propose_pair(model, state, i, j, za, zb, rng, n_intermediate)
    n = model.data.shape[0]
    ci = state.labels[i]
    cj = state.labels[j]
    members = _other_members(state, ci, cj, i, j)
    count = members.shape[0]
    side = _launch_sides(members, i, j, za, zb, rng)

    s = state.stats.shape[1]
    stats = np.zeros((2, s))
    caches = np.zeros((2, state.cache.shape[1]))
    sizes = np.ones(2, dtype=np.int64)
    item = np.empty(s)
    families.item_stats(model.family, model.data[i], item)
    stats[0] += item
    families.item_stats(model.family, model.data[j], item)
    stats[1] += item
    for h in range(count):
        families.item_stats(model.family, model.data[members[h]], item)
        stats[side[h]] += item
        sizes[side[h]] += 1
    for c in range(2):
        families.fill_cache(model.family, stats[c], model.params, caches[c])
    for _ in range(n_intermediate):
        restricted_scan(model, members, side, stats, caches, sizes, side, False, rng)

    k = state.n_clusters[0]
    table = model.log_v_table
    if ci == cj:
        move = MOVE_SPLIT
        log_q = restricted_scan(model, members, side, stats, caches, sizes, side, False, rng)
        log_target = (
            priors.log_v(model.prior, model.prior_params, table, n, k + 1)
            - priors.log_v(model.prior, model.prior_params, table, n, k)
            + _cluster_log_weight(model, stats[0], sizes[0])
            + _cluster_log_weight(model, stats[1], sizes[1])
            - _cluster_log_weight(model, state.stats[ci], state.sizes[ci])
        )
        log_proposal = -log_q
    else:
        move = MOVE_MERGE
        forced = _current_sides(state, members, ci)
        log_q = restricted_scan(model, members, side, stats, caches, sizes, forced, True, rng)
        merged = state.stats[ci] + state.stats[cj]
        log_target = (
            priors.log_v(model.prior, model.prior_params, table, n, k - 1)
            - priors.log_v(model.prior, model.prior_params, table, n, k)
            + _cluster_log_weight(model, merged, state.sizes[ci] + state.sizes[cj])
            - _cluster_log_weight(model, state.stats[ci], state.sizes[ci])
            - _cluster_log_weight(model, state.stats[cj], state.sizes[cj])
        )
        log_proposal = log_q
    accepted, accept_prob = metropolis_accept(log_target + log_proposal, rng)
    if accepted:
        if move == MOVE_SPLIT:
            state = _apply_split(model, state, ci, j, members, side, stats, sizes)
        else:
            _apply_merge(model, state, ci, cj)
    return state, SplitMergeInfo(move, accepted, accept_prob, log_target, log_proposal)


@njit(cache=True)
def _apply_split(model, state, slot, j, members, side, stats, sizes):
    """Move ``j`` and the members on side 1 to a new cluster."""
    state = ensure_capacity(state, 1)
    new_slot = open_slot(state)
    relink(state, slot, new_slot, j)
    for h in range(members.shape[0]):
        if side[h] == 1:
            relink(state, slot, new_slot, members[h])
    for c, target in ((0, slot), (1, new_slot)):
        state.stats[target] = stats[c]
        state.sizes[target] = sizes[c]
        refresh(model, state, target)
    return state


@njit(cache=True)
def _apply_merge(model, state, keep, drop):
    """Move every item of cluster ``drop`` into ``keep``."""
    h = state.head[drop]
    while h >= 0:
        after = state.next_item[h]
        state.labels[h] = keep
        link(state, keep, h)
        h = after
    state.stats[keep] += state.stats[drop]
    state.sizes[keep] += state.sizes[drop]
    close_slot(state, drop)
    refresh(model, state, keep)


@njit(cache=True)
def _current_sides(state, members, ci):
    """Side of each item of ``S`` in the current split (0: in ``i``'s cluster ``ci``): the forced reverse scan of a merge."""
    sides = np.empty(members.shape[0], dtype=np.int64)
    for h in range(members.shape[0]):
        sides[h] = 0 if state.labels[members[h]] == ci else 1
    return sides


@njit(cache=True)
def _launch_sides(members, i, j, za, zb, rng):
    """Initial side (0: with ``i``, 1: with ``j``) of each item of ``S``: random, or the bSM rule."""
    background = za.shape[0] > 0
    side = np.empty(members.shape[0], dtype=np.int64)
    for h in range(members.shape[0]):
        item = members[h]
        if background and za[item] == za[i] and zb[item] == zb[i]:
            side[h] = 0
        elif background and za[item] == za[j] and zb[item] == zb[j]:
            side[h] = 1
        else:
            side[h] = 1 if rng.random() < 0.5 else 0
    return side


@njit(cache=True)
def _set_move_scan(model, state, members, slots, forced_side, rng):
    """Restricted scan on a full state: each item of ``members`` moves between ``slots[0]`` and ``slots[1]``.

    With ``forced_side`` non-empty the sides are forced; returns ``(state, log q)``.
    """
    one = np.empty(1, dtype=np.int64)
    log_weights = np.empty(2)
    scratch = np.empty(2)
    work = weight_work(state)  # both slots exist: the capacity stays the same
    log_q = 0.0
    for h in range(members.shape[0]):
        one[0] = members[h]
        remove_item(model, state, members[h])
        set_log_weights(model, state, one, one.shape[0], slots, slots.shape[0], log_weights, work)  # no literals: one compiled copy
        pick, lp = choose_into(log_weights, 2, forced_side[h] if forced_side.shape[0] > 0 else -1, scratch, rng)
        log_q += lp
        state, _ = add_items(model, state, slots[pick], one, 1)
    return state, log_q


@njit(cache=True)
def _set_move_propose_pair(model, state, i, j, za, zb, rng, n_intermediate):
    """The same proposal as :func:`propose_pair` built from set moves on state copies (any likelihood; used for the IRM).

    The launch state is the current state with the items of ``S ∪ {i, j}``
    re-placed in two fresh clusters, so the restricted scans' weights include
    the couplings to every other cluster that the IRM likelihood has.
    """
    ci, cj = state.labels[i], state.labels[j]
    members = _other_members(state, ci, cj, i, j)
    count = members.shape[0]
    side = _launch_sides(members, i, j, za, zb, rng)
    launch = copy_state(state)
    one = np.empty(1, dtype=np.int64)
    for h in members:
        remove_item(model, launch, h)
    remove_item(model, launch, i)
    remove_item(model, launch, j)
    slots = np.empty(2, dtype=np.int64)
    for c, item in ((0, i), (1, j)):
        one[0] = item
        launch, slots[c] = add_items(model, launch, -1, one, 1)
    for h in range(count):
        one[0] = members[h]
        launch, _ = add_items(model, launch, slots[side[h]], one, 1)
    no_force = np.zeros(0, dtype=np.int64)
    for _ in range(n_intermediate):
        launch, _ = _set_move_scan(model, launch, members, slots, no_force, rng)
    if ci == cj:
        move = MOVE_SPLIT
        proposal, log_q = _set_move_scan(model, launch, members, slots, no_force, rng)
        log_proposal = -log_q
    else:
        move = MOVE_MERGE
        _, log_q = _set_move_scan(model, launch, members, slots, _current_sides(state, members, ci), rng)
        log_proposal = log_q
        proposal = copy_state(state)
        for c in range(count + 1):
            item = members[c] if c < count else j
            if proposal.labels[item] == cj:
                remove_item(model, proposal, item)
                one[0] = item
                proposal, _ = add_items(model, proposal, ci, one, 1)
    log_target = log_joint(model, proposal) - log_joint(model, state)
    accepted, accept_prob = metropolis_accept(log_target + log_proposal, rng)
    return (proposal if accepted else state), SplitMergeInfo(move, accepted, accept_prob, log_target, log_proposal)
