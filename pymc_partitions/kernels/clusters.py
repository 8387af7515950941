"""Cluster operations every sampler is built from (docs/design.md §3.1, layer 4).

Each operation works for every kind of model (``_dispatch``: additive
conjugate families, the relational IRM, and -- where it is defined without a
marginal likelihood -- the parametric conditionally conjugate Normal), keeps
the state consistent (sizes, statistics, caches, member lists) and costs what
it touches: O(size of the clusters involved · s) for the additive kinds, plus
O(n) per moved item and O(K) per ratio for the relational one, whose
likelihood couples clusters.

Reading
    :func:`cluster_members`, :func:`pair_members` (the items ``S`` of
    split-merge, sorted), :func:`cluster_log_weight` (additive),
    :func:`log_merge_ratio`, :func:`set_log_weights` (the weights of moving a
    set of items into each of several clusters), :func:`log_merge_many_ratio`
    (additive).

Changing
    :func:`move_block`, :func:`split_cluster`,
    :func:`merge_clusters`, :func:`update_items` (Gibbs updates and restricted
    scans of the additive families), :func:`restricted_scan`,
    :func:`random_sides`, :func:`place_sides`, :func:`sequential_allocation`.

With ``pi(Pi) = V(n, K) prod_c W(|c|) p(x_c)`` (a Gibbs-type prior and the
collapsed likelihood), :func:`log_merge_ratio` is the change of ``log pi`` when
two clusters merge (a split's is minus the merge ratio of its parts) and
:func:`set_log_weights` the weights of ARM's set moves (``papers/000_...``,
eq. (5)), the exact Gibbs conditionals once every other item is placed
(``docs/exactness.md``, "Set moves and partial states"); their docstrings give
the formulas, and the parametric models' weights (Jain & Neal 2007, eq. (5.5)).
"""

from __future__ import annotations

import math

import numpy as np

from pymc_partitions import families, priors
from pymc_partitions._dispatch import kind_function
from pymc_partitions._jit import jit
from pymc_partitions.families import infinite_relational as relational
from pymc_partitions.kernels.moves import choose_into, draw_index, exp_normalise
from pymc_partitions.state import (
    add_items, attach_items, close_slot, detach_item, ensure_capacity, link, members_of, move_stats, open_slot, refresh,
    relink, remove_item,
)

# --------------------------------------------------------------------------- reading


@jit
def cluster_members(state, slot_a, slot_b, out):
    """Write the items of ``slot_a`` and, if different, ``slot_b`` into ``out``; returns their number."""
    end = members_of(state, slot_a, out, 0)
    if slot_b != slot_a:
        end = members_of(state, slot_b, out, end)
    return end


@jit
def pair_members(state, i, j):
    """The items of the clusters of ``i`` and ``j`` other than ``i`` and ``j``, in increasing order.

    The order is a function of the set alone, not of the member lists'
    history: a restricted scan visits the items in this order, and the
    split-merge proposal is exact only if a split and the merge that
    reverses it scan in the same order (``docs/exactness.md``).
    O(m log m) for the m items of the two clusters.
    """
    slot_i, slot_j = state.labels[i], state.labels[j]
    total = state.sizes[slot_i] + (state.sizes[slot_j] if slot_j != slot_i else 0)
    both = np.empty(total, dtype=np.int64)
    cluster_members(state, slot_i, slot_j, both)
    heap_sort(both)
    out = np.empty(total - 2, dtype=np.int64)
    count = 0
    for h in both:
        if h != i and h != j:
            out[count] = h
            count += 1
    return out


@jit
def heap_sort(values):
    """Sort the integers ``values`` in place, O(m log m).

    A few lines of heapsort instead of ``values.sort()``: numba's quicksort
    compiles into several functions, and replacing it cut the CPU time of a
    split-merge step's first compilation by about 5 %
    (``benchmarks/first_draw.py``).
    """
    m = values.shape[0]
    for root in range(m // 2 - 1, -1, -1):  # a max-heap
        _sift_down(values, root, m)
    for end in range(m - 1, 0, -1):  # move the largest behind the heap, restore the heap
        values[0], values[end] = values[end], values[0]
        _sift_down(values, 0, end)


@jit(inline="always")
def _sift_down(values, root, end):
    """Move ``values[root]`` down the max-heap ``values[:end]`` to its place."""
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and values[child + 1] > values[child]:
            child += 1
        if values[root] >= values[child]:
            return
        values[root], values[child] = values[child], values[root]
        root = child


@jit
def cluster_log_weight(model, stats, size):
    """``log W(size) + log p(x_c)``: an additive cluster's factor of the collapsed posterior."""
    return priors.log_w(model.prior, model.prior_params, size) + families.log_marginal(model.family, stats, model.params)


@jit
def _additive_merge_log_likelihood(model, state, a, b):
    merged = np.empty(state.stats.shape[1])
    for r in range(merged.shape[0]):  # a loop: array addition would compile numpy's broadcasting
        merged[r] = state.stats[a, r] + state.stats[b, r]
    return (
        families.log_marginal(model.family, merged, model.params)
        - families.log_marginal(model.family, state.stats[a], model.params)
        - families.log_marginal(model.family, state.stats[b], model.params)
    )


@jit
def _relational_merge_log_likelihood(model, state, a, b):
    return relational.merge_log_likelihood(state.stats, state.sizes, state.slots, state.n_clusters[0], a, b, model.params)


@kind_function(additive=_additive_merge_log_likelihood, relational=_relational_merge_log_likelihood)
def merge_log_likelihood(model, state, a, b):
    """``log p(x | merged) - log p(x | current)`` for merging slots ``a`` and ``b``."""


@jit
def log_merge_ratio(model, state, a, b):
    """``log pi(a and b merged) - log pi(current)`` for two occupied slots ``a != b``.

    With ``pi(Pi) = V(n, K) prod_c W(|c|) p(x_c)``, merging ``a`` and ``b`` changes the log posterior by

        log V(n, K-1) - log V(n, K) + log W(m_a + m_b) - log W(m_a) - log W(m_b)
            + log p(x_a ∪ x_b) - log p(x_a) - log p(x_b)

    (additive: log marginals of summed statistics; relational:
    ``families.infinite_relational.merge_log_likelihood``).  A split's ratio
    is minus the merge ratio of its two parts, so one function serves both.
    """
    n = state.labels.shape[0]
    k = state.n_clusters[0]
    prior, params, table = model.prior, model.prior_params, model.log_v_table
    m_a, m_b = state.sizes[a], state.sizes[b]
    log_prior = (
        priors.log_v(prior, params, table, n, k - 1) - priors.log_v(prior, params, table, n, k)
        + priors.log_w(prior, params, m_a + m_b) - priors.log_w(prior, params, m_a) - priors.log_w(prior, params, m_b)
    )
    return log_prior + merge_log_likelihood(model, state, a, b)


@jit
def log_merge_many_ratio(model, n_clusters, stats, sizes, count):
    """``log pi(merged) - log pi(apart)`` for ``count >= 2`` additive clusters with statistics ``stats[:count]``.

    The partition has ``n_clusters`` clusters with them apart; merging them
    into one changes the log posterior by ``log V(n, K - count + 1) - log V(n, K)
    + log W(sum m) - sum log W(m) + log p(x_union) - sum log p(x_c)``.  A
    split's ratio is minus the merge ratio of its parts.  The clusters need not
    be slots of a state (tree-guided moves decide before they change it).
    O(count s).
    """
    n = model.data.shape[0]
    prior, params, table = model.prior, model.prior_params, model.log_v_table
    merged = np.zeros(stats.shape[1])
    total_size = 0
    ratio = priors.log_v(prior, params, table, n, n_clusters - count + 1) - priors.log_v(prior, params, table, n, n_clusters)
    for q in range(count):
        total_size += sizes[q]
        for r in range(merged.shape[0]):
            merged[r] += stats[q, r]
        ratio -= cluster_log_weight(model, stats[q], sizes[q])
    return ratio + cluster_log_weight(model, merged, total_size)


# --------------------------------------------------------------------------- set moves


@jit
def weight_work(state):
    """The work rows :func:`set_log_weights` needs for ``state``'s current capacity."""
    return np.empty((3, state.stats.shape[1]))


@jit(inline="always")
def _log_join(model, state, slot, count):
    """``log W(m + count) - log W(m)`` for the ``m`` items of ``slot``."""
    if count == 1:
        return state.log_weight[slot]
    m = state.sizes[slot]
    return priors.log_w(model.prior, model.prior_params, m + count) - priors.log_w(model.prior, model.prior_params, m)


@jit(inline="always")
def _log_new(model, state, count):
    """``log[V(n, K+1)/V(n, K)] + log W(count) - log W(1)``: the prior weight of ``count`` items opening a cluster."""
    n = state.labels.shape[0]
    log_new = priors.log_new_cluster(model.prior, model.prior_params, model.log_v_table, n, state.n_clusters[0])
    if count > 1:  # the W ratio is 1 for one item
        log_new += priors.log_w(model.prior, model.prior_params, count) - priors.log_w(model.prior, model.prior_params, 1)
    return log_new


@jit
def _additive_set_log_weights(model, state, members, count, candidates, n_candidates, out, work):
    log_new = _log_new(model, state, count)
    if count == 1:
        x = model.data[members[0]]
        for c in range(n_candidates):
            slot = candidates[c]
            if slot < 0:
                out[c] = log_new + families.log_predictive(model.family, model.empty_cache, x, model.params)
            else:
                out[c] = state.log_weight[slot] + families.log_predictive(model.family, state.cache[slot], x, model.params)
        return
    set_stats, item, joined = work[0], work[1], work[2]
    set_stats[:] = 0.0
    for q in range(count):
        families.item_stats(model.family, model.data[members[q]], item)
        for r in range(set_stats.shape[0]):
            set_stats[r] += item[r]
    for c in range(n_candidates):
        slot = candidates[c]
        if slot < 0:
            out[c] = log_new + families.log_marginal(model.family, set_stats, model.params)
        else:
            for r in range(set_stats.shape[0]):
                joined[r] = state.stats[slot, r] + set_stats[r]
            out[c] = (
                _log_join(model, state, slot, count)
                + families.log_marginal(model.family, joined, model.params)
                - families.log_marginal(model.family, state.stats[slot], model.params)
            )


@jit
def _relational_set_log_weights(model, state, members, count, candidates, n_candidates, out, work):
    log_new = _log_new(model, state, count)
    set_edges = work[0]
    set_edges[:] = 0.0
    inner = relational.edges_to_slots(model.data, state.labels, members, count, set_edges)
    for c in range(n_candidates):
        slot = candidates[c]
        prior_term = log_new if slot < 0 else _log_join(model, state, slot, count)
        out[c] = prior_term + relational.join_log_likelihood(
            state.stats, state.sizes, state.slots, state.n_clusters[0], set_edges, inner, count, slot, model.params
        )


@jit
def _parametric_set_log_weights(model, state, members, count, candidates, n_candidates, out, work):
    for c in range(n_candidates):
        slot = candidates[c]
        if slot < 0:  # a new cluster has no parameters here (set_log_weights)
            out[c] = -np.inf
            continue
        out[c] = _log_join(model, state, slot, count)
        for q in range(count):
            out[c] += families.log_density(model.family, state.theta[slot], model.data[members[q]], model.params)


@kind_function(
    additive=_additive_set_log_weights,
    relational=_relational_set_log_weights,
    parametric=_parametric_set_log_weights,
    jit_options={"_nrt": False},
)
def set_log_weights(model, state, members, count, candidates, n_candidates, out, work):
    """``out[c]``: unnormalised log probability that the unplaced ``members[:count]`` join ``candidates[c]``.

    Candidates are occupied slots with fresh caches, or ``-1`` for a new
    cluster.  A set move (``papers/000_...``, eq. (5)) puts the set ``C`` in
    candidate ``k`` with probability ``∝ q(z^(k))``, ``q`` the collapsed
    posterior of the placed items with ``C`` added to ``k``:

        join slot k:  log W(m_k + |C|) - log W(m_k) + log p(x_C | x_k)
        new cluster:  log[V(n, K+1)/V(n, K)] + log W(|C|) + log p(x_C)

    with the full ``n`` even while items are unplaced.  With every other item
    placed and ``|C| = 1`` these are the exact Gibbs conditionals (Neal 2000,
    Algorithm 3); before, any positive weights are a valid proposal
    (``docs/exactness.md``, "Set moves and partial states").  Parametric
    models (explicit ``theta_k``, no marginal likelihood): the set joins an
    occupied ``k`` with weight ``W(m_k + |C|)/W(m_k) prod_{h in C} p(x_h | theta_k)``,
    the restricted Gibbs weights of Jain & Neal (2007, eq. (5.5)); a new
    cluster would need parameters, which the parametric kernels propose
    themselves (``kernels.auxiliary_gibbs``), so it gets ``-inf``; their merge
    and split ratios depend on the parameters a move proposes and are computed
    by ``kernels.nonconjugate_split_merge``.

    ``work`` is ``weight_work(state)``
    (overwritten); nothing is allocated, and it is compiled without
    reference counting (as :func:`update_items`): a counted call taking the
    model and the state pays an atomic increment and decrement per array,
    which was half of an ARM move's time.  Additive families use the cached
    predictive for one item and summed statistics for a set; the relational
    model counts the set's edges to every slot (O(count · n)); parametric
    models multiply the items' densities given each candidate's parameters
    (occupied candidates only).
    """


@jit
def all_candidates(state):
    """Every occupied slot followed by ``-1`` (a new cluster): the unrestricted candidate list."""
    out = np.empty(state.n_clusters[0] + 1, dtype=np.int64)
    write_all_candidates(state, out)
    return out


@jit(inline="always")
def write_all_candidates(state, out):
    """:func:`all_candidates` into ``out`` (room for ``n_clusters + 1``); returns their number."""
    k = state.n_clusters[0]
    for c in range(k):
        out[c] = state.slots[c]
    out[k] = -1
    return k + 1


# --------------------------------------------------------------------------- changing


@jit
def move_block(model, state, items, count, slot):
    """Move the items ``items[:count]`` together to ``slot`` (``-1``: a new cluster); returns ``(state, slot)``.

    Items already in ``slot`` stay; clusters that empty are closed.
    """
    for q in range(count):
        if state.labels[items[q]] != slot:
            remove_item(model, state, items[q])
    unplaced = _unplaced(state, items, count)
    return add_items(model, state, slot, unplaced, unplaced.shape[0])


@jit
def _unplaced(state, items, count):
    """The items of ``items[:count]`` that are unplaced (label -1)."""
    out = np.empty(count, dtype=np.int64)
    found = 0
    for q in range(count):
        if state.labels[items[q]] < 0:
            out[found] = items[q]
            found += 1
    return out[:found]


@jit
def split_cluster(model, state, slot, movers, count):
    """Move ``movers[:count]``, a proper subset of ``slot``'s items, to a new cluster; returns ``(state, new slot)``.

    Kernels must continue with the returned state (capacity may grow).
    """
    state = ensure_capacity(state, 1)
    new_slot = open_slot(state)
    one = np.empty(1, dtype=np.int64)
    row = np.empty(state.stats.shape[1])
    for q in range(count):
        relocate(model, state, movers[q], new_slot, one, row)
    return state, new_slot


@jit
def _additive_merge_summaries(state, keep, drop):
    for r in range(state.stats.shape[1]):
        state.stats[keep, r] += state.stats[drop, r]


@jit
def _relational_merge_summaries(state, keep, drop):
    relational.merge_edges(state.stats, keep, drop)


@kind_function(additive=_additive_merge_summaries, relational=_relational_merge_summaries, parametric=_additive_merge_summaries)
def merge_summaries(state, keep, drop):
    """Add slot ``drop``'s statistics to slot ``keep``'s (sizes excluded). O(s), relational O(cap).

    Parametric: ``keep`` keeps its parameter row (the caller sets the merged cluster's).
    """


@jit
def merge_clusters(model, state, keep, drop):
    """Move every item of cluster ``drop`` into ``keep`` and close ``drop``.  O(|drop| + s)."""
    merge_members(state, keep, drop)
    merge_slots(model, state, keep, drop)


@jit
def merge_members(state, keep, drop):
    """The items' part of :func:`merge_clusters`: ``drop``'s items get label ``keep`` and join its member list."""
    h = state.head[drop]
    while h >= 0:
        after = state.next_item[h]
        state.labels[h] = keep
        link(state, keep, h)
        h = after
    state.head[drop] = -1


@jit
def merge_slots(model, state, keep, drop):
    """The clusters' part of :func:`merge_clusters`: ``keep`` takes ``drop``'s size and statistics, ``drop`` closes."""
    merge_summaries(state, keep, drop)
    state.sizes[keep] += state.sizes[drop]
    close_slot(state, drop)
    refresh(model, state, keep)


@jit
def relocate(model, state, i, slot, one, row):
    """Move item ``i`` to the open ``slot``, refreshing both clusters; ``i``'s cluster must keep other items.

    Allocation-free with the caller's buffers ``one`` (one int) and ``row``
    (a statistics row): the step of restricted scans and launch states.
    """
    source = detach_item(model, state, i, row)
    refresh(model, state, source)
    one[0] = i
    attach_items(model, state, slot, one, 1, row)
    refresh(model, state, slot)


@jit(_nrt=False)
def update_items(model, state, members, start, candidates, forced, shift, log_weights, scratch, item, saved_cache, rng):
    """Single-item updates of an additive model, each from its exact conditional; returns ``(next, change, log q)``.

    One loop serves two moves:

    * the Gibbs sweep (``members`` and ``candidates`` empty; Neal 2000,
      Algorithm 3): items ``start, start + 1, ...``, each removed and put in an
      occupied cluster ``c`` or a new one with

          p(z_i = c | z_-i, x) ∝ (m_c + s) p(x_i | x_c),
          p(z_i = new | z_-i, x) ∝ V(n, K+1)/V(n, K) W(1) p(x_i),

      stopping after the last item or after an update that used the state's
      last free slot (the caller grows the capacity and continues);
    * a restricted scan (``candidates`` two occupied slots, each keeping an
      item outside ``members``; Jain & Neal 2004, eq. (3.6)): items
      ``members[start:]``, each moved to ``candidates[t]`` with probability
      ``∝ (m_t + s) p(x_h | x_t)``, or to ``candidates[forced[q]]`` when
      ``forced`` is non-empty.

    ``m`` counts the other items of a cluster and ``s`` is ``shift``
    (``priors.size_shift``); the predictives come from the family's cache.
    ``change`` is the change in log posterior (the chosen minus the previous
    option's log weight, summed), ``log q`` the log probability of the
    restricted scan's choices (0 for the sweep).  ``log_weights`` and
    ``scratch`` hold ``capacity + 1`` floats (2 for a scan), ``item`` a
    statistics row and ``saved_cache`` a cache row.  An item that returns to
    its cluster gets its saved cache row back instead of a recomputed one.

    Compiled without numba's reference counting (``_nrt=False``): it
    allocates nothing, and every array it reads is owned by the caller for
    the whole call, so the counts would only go up and down again.  With
    them, each inlined helper increments and decrements the count of every
    array it is passed, about 15 atomic pairs per item that numba's pruning
    leaves in place (9 % of the sweep; ``docs/benchmarks.md``).  Allocating
    here would fail to compile, so the rule is enforced.
    """
    n = model.data.shape[0]
    family, data, params, empty_cache = model.family, model.data, model.params, model.empty_cache
    prior, prior_params, log_v_table = model.prior, model.prior_params, model.log_v_table
    labels, sizes, stats, cache, log_weight = state.labels, state.sizes, state.stats, state.cache, state.log_weight
    n_clusters = state.n_clusters
    capacity = sizes.shape[0]
    restricted = candidates.shape[0] > 0
    choices = candidates if restricted else state.slots
    use_forced = forced.shape[0] > 0
    end = members.shape[0] if restricted else n
    log_new_prior = priors.log_new_cluster(prior, prior_params, log_v_table, n, n_clusters[0])
    new_prior_k = n_clusters[0]
    change = 0.0
    log_q = 0.0
    for q in range(start, end):
        i = members[q] if restricted else q
        x = data[i]
        families.item_stats(family, x, item)
        old_slot = labels[i]
        for r in range(saved_cache.shape[0]):
            saved_cache[r] = cache[old_slot, r]
        saved_weight = log_weight[old_slot]
        emptied = sizes[old_slot] == 1
        if emptied:
            close_slot(state, old_slot)
        else:
            move_stats(stats, sizes, old_slot, item, -1)
            families.fill_cache(family, stats[old_slot], params, cache[old_slot])
            log_weight[old_slot] = math.log(sizes[old_slot] + shift)

        # unnormalised log conditional: the candidate clusters, then (sweep) a new one
        k = candidates.shape[0] if restricted else n_clusters[0]
        old_choice = k
        for j in range(k):
            if choices[j] == old_slot:
                old_choice = j
            log_weights[j] = log_weight[choices[j]] + families.log_predictive(family, cache[choices[j]], x, params)
        n_options = k
        if not restricted:
            if k != new_prior_k:
                log_new_prior = priors.log_new_cluster(prior, prior_params, log_v_table, n, k)
                new_prior_k = k
            log_weights[k] = log_new_prior + families.log_predictive(family, empty_cache, x, params)
            n_options = k + 1
        top, total = exp_normalise(log_weights, n_options, scratch)
        choice = forced[q] if use_forced else draw_index(scratch, n_options, total, rng)
        if restricted:
            log_q += log_weights[choice] - top - math.log(total)
        change += log_weights[choice] - log_weights[old_choice]

        if choice == old_choice and not emptied:
            move_stats(stats, sizes, old_slot, item, 1)
            for r in range(saved_cache.shape[0]):
                cache[old_slot, r] = saved_cache[r]
            log_weight[old_slot] = saved_weight
            continue
        new_slot = open_slot(state) if choice == k else choices[choice]
        if emptied:
            link(state, new_slot, i)  # close_slot emptied the old member list
            labels[i] = new_slot
        elif new_slot != old_slot:
            relink(state, old_slot, new_slot, i)
        move_stats(stats, sizes, new_slot, item, 1)
        families.fill_cache(family, stats[new_slot], params, cache[new_slot])
        log_weight[new_slot] = math.log(sizes[new_slot] + shift)
        if not restricted and n_clusters[0] == capacity:
            return q + 1, change, log_q
    return end, change, log_q


@jit
def _additive_restricted_scan(model, state, members, slots, forced, rng):
    shift = priors.size_shift(model.prior, model.prior_params)
    _, _, log_q = update_items(
        model, state, members, np.int64(0), slots, forced, shift, np.empty(2), np.empty(2),
        np.empty(state.stats.shape[1]), np.empty(state.cache.shape[1]), rng,
    )
    return log_q


@jit
def _set_move_restricted_scan(model, state, members, slots, forced, rng):
    """:func:`_scan_items` with its buffers: the relational and parametric restricted scans, and
    :func:`sequential_allocation` once it has unplaced its items."""
    one = np.empty(1, dtype=np.int64)
    row = np.empty(state.stats.shape[1])
    return _scan_items(model, state, members, slots, forced, one, row, weight_work(state), np.empty(2), np.empty(2), rng)


@kind_function(additive=_additive_restricted_scan, relational=_set_move_restricted_scan, parametric=_set_move_restricted_scan)
def restricted_scan(model, state, members, slots, forced, rng):
    """One restricted Gibbs scan: each item of ``members`` in turn moves to ``slots[0]`` or ``slots[1]``.

    Both slots are occupied and keep at least one item that is not in
    ``members`` (split-merge's ``i`` and ``j``).  Item ``h`` is removed and
    put back on side ``t`` with probability ``∝ exp(w_t)``, the set-move
    weights of one item (``(m_t + s) p(x_h | x_t)`` for the additive kinds,
    Jain & Neal 2004, eq. (3.6)), or forced to ``slots[forced[q]]`` when
    ``forced`` is non-empty.  Returns the log probability of the choices
    made (``q`` of the split-merge acceptance ratio).  The additive families
    run the Gibbs sweep's item loop (:func:`update_items`), so a sampler that
    makes both compiles one; the relational and parametric kinds use set
    moves (:func:`set_log_weights`).
    """


@jit(_nrt=False)
def _scan_items(model, state, members, slots, forced, one, row, work, log_weights, scratch, rng):
    """The item loop of the relational and parametric restricted scans and of :func:`sequential_allocation`
    with the caller's buffers: each item, taken out first if it is placed, is put on side 0 or 1.

    Allocation-free and compiled without reference counting, as
    :func:`update_items`: with it, every inlined helper taking the state
    counted its arrays up and down for every item, and a scan ran 3x slower.
    """
    use_forced = forced.shape[0] > 0
    log_q = 0.0
    for q in range(members.shape[0]):
        i = members[q]
        if state.labels[i] >= 0:
            refresh(model, state, detach_item(model, state, i, row))
        one[0] = i
        set_log_weights(model, state, one, 1, slots, 2, log_weights, work)
        pick, log_p = choose_into(log_weights, 2, forced[q] if use_forced else -1, scratch, rng)
        log_q += log_p
        attach_items(model, state, slots[pick], one, 1, row)
        refresh(model, state, slots[pick])
    return log_q


@jit(inline="always")
def side_of(state, members, slot_a):
    """``0`` for each item of ``members`` in ``slot_a``, else ``1``: the sides of a current split."""
    sides = np.empty(members.shape[0], dtype=np.int64)
    for q in range(members.shape[0]):
        sides[q] = 0 if state.labels[members[q]] == slot_a else 1
    return sides


@jit
def random_sides(count, rng):
    """``count`` sides, each 0 or 1 with probability 1/2: a random launch split of split-merge's ``S``."""
    sides = np.empty(count, dtype=np.int64)
    for q in range(count):
        sides[q] = 1 if rng.random() < 0.5 else 0
    return sides


@jit
def place_sides(model, state, members, sides, slots):
    """Move each item of ``members`` to ``slots[sides[q]]`` (a launch state); both slots keep an item outside ``members``."""
    one = np.empty(1, dtype=np.int64)
    row = np.empty(state.stats.shape[1])
    for q in range(members.shape[0]):
        target = slots[sides[q]]
        if state.labels[members[q]] != target:
            relocate(model, state, members[q], target, one, row)


@jit
def sequential_allocation(model, state, members, slots, forced, rng):
    """Sequential allocation of ``members`` between ``slots[0]`` and ``slots[1]`` (Dahl 2003); returns its log probability.

    Every item of ``members`` is unplaced first; then, in the order of
    ``members``, each is placed on side ``t`` with probability ``∝ exp(w_t)``,
    the set-move weights of one item given the items placed so far (for the
    additive kinds ``(m_t + s) p(x_h | x_t)``), or forced to
    ``slots[forced[q]]`` when ``forced`` is non-empty.  Both slots keep at
    least one item outside ``members``, as for :func:`restricted_scan`.
    Unlike a restricted scan the result does not depend on where the items
    were, only on the order, so a split's probability is a product of these
    choices alone.  O(|members|) item moves.
    """
    row = np.empty(state.stats.shape[1])
    for q in range(members.shape[0]):
        detach_item(model, state, members[q], row)
    refresh(model, state, slots[0])
    refresh(model, state, slots[1])
    return _set_move_restricted_scan(model, state, members, slots, forced, rng)

