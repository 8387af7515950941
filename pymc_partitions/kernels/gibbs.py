"""Collapsed Gibbs sampling of cluster labels (Neal 2000, Algorithm 3).

Each item ``i`` in turn is removed from its cluster and reassigned with

    p(z_i = c | z_-i, x) ∝ (m_c + s) p(x_i | x_c)                    (existing c)
    p(z_i = new | z_-i, x) ∝ V(n, K+1)/V(n, K) W(1) p(x_i)           (new cluster)

where ``m_c`` counts the other items of ``c``, ``W(m+1)/W(m) = m + s`` and ``K``
is the number of clusters without ``i`` (``priors.log_new_cluster``); the
predictive ``p(x_i | x_c)`` comes from the family's cache.  For a Gibbs-type
prior this is the exact full conditional, so every update leaves the posterior
invariant.  The sweep visits items in index order and also reports the exact
change in log posterior it made (the sum over updates of the chosen minus the
previous option's log weight), which the delta tests check against the model.

References
----------
Neal, R. M. (2000). Markov chain sampling methods for Dirichlet process mixture
models. JCGS 9(2), 249-265.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from pymc_partitions import families, priors
from pymc_partitions.families import INFINITE_RELATIONAL
from pymc_partitions.kernels.moves import all_candidates, choose, draw_index, exp_normalise, set_log_weights
from pymc_partitions.state import add_items, close_slot, ensure_capacity, link, move_stats, open_slot, relink, remove_item

GibbsInfo = namedtuple("GibbsInfo", ["log_joint_change", "n_moved"])
GibbsInfo.__doc__ = """What a sweep did.

log_joint_change : float  log posterior after minus before the sweep
n_moved : int             number of items whose cluster changed
"""


@njit(cache=True, inline="always")
def sample_log_weights(log_weights, count, scratch, rng):
    """Index drawn with probability ∝ exp(log_weights[:count]); ``scratch`` holds >= count floats."""
    _, total = exp_normalise(log_weights, count, scratch)
    return draw_index(scratch, count, total, rng)


@njit(cache=True)
def sweep(model, state, rng):
    """One systematic-scan Gibbs sweep over all items; returns ``(state, GibbsInfo)``.

    :func:`additive_sweep` for the additive families, :func:`set_move_sweep`
    for the Infinite Relational Model, whose likelihood couples clusters.
    """
    if model.family == INFINITE_RELATIONAL:
        return set_move_sweep(model, state, rng)
    return additive_sweep(model, state, rng)


@njit(cache=True)
def additive_sweep(model, state, rng):
    """The Gibbs sweep specialised for the additive families (cached predictives).

    The state's arrays are unpacked into locals (and again after the capacity
    grows): attribute access on the state tuple inside the item loop costs more
    than the arithmetic (measured by ``benchmarks/gibbs_throughput.py``).  When
    an item returns to its own cluster, the saved cache row is restored instead
    of recomputed.
    """
    n = model.data.shape[0]
    family, data, params, empty_cache = model.family, model.data, model.params, model.empty_cache
    prior, prior_params, log_v_table = model.prior, model.prior_params, model.log_v_table
    shift = priors.size_shift(prior, prior_params)
    item = np.empty(state.stats.shape[1])
    saved_cache = np.empty(state.cache.shape[1])
    log_weights = np.empty(state.sizes.shape[0] + 1)
    scratch = np.empty_like(log_weights)
    labels, sizes, stats, cache, log_weight, slots, _, n_clusters, _, _, _ = state
    log_new_prior = priors.log_new_cluster(prior, prior_params, log_v_table, n, n_clusters[0])
    new_prior_k = n_clusters[0]
    change = 0.0
    moved = 0
    for i in range(n):
        x = data[i]
        families.item_stats(family, x, item)
        old_slot = labels[i]
        for q in range(saved_cache.shape[0]):
            saved_cache[q] = cache[old_slot, q]
        saved_weight = log_weight[old_slot]
        emptied = sizes[old_slot] == 1
        if emptied:
            close_slot(state, old_slot)
        else:
            move_stats(stats, sizes, old_slot, item, -1)
            families.fill_cache(family, stats[old_slot], params, cache[old_slot])
            log_weight[old_slot] = math.log(sizes[old_slot] + shift)

        # unnormalised log full conditional: existing clusters, then a new one
        k = n_clusters[0]
        if log_weights.shape[0] < k + 1:
            log_weights = np.empty(2 * (k + 1))
            scratch = np.empty_like(log_weights)
        old_choice = k
        for j in range(k):
            if slots[j] == old_slot:
                old_choice = j
            log_weights[j] = log_weight[slots[j]]
        families.add_log_predictives(family, cache, slots, k, x, params, log_weights)
        if k != new_prior_k:
            log_new_prior = priors.log_new_cluster(prior, prior_params, log_v_table, n, k)
            new_prior_k = k
        log_weights[k] = log_new_prior + families.log_predictive(family, empty_cache, x, params)
        choice = sample_log_weights(log_weights, k + 1, scratch, rng)
        change += log_weights[choice] - log_weights[old_choice]

        if choice == old_choice and not emptied:
            move_stats(stats, sizes, old_slot, item, 1)
            for q in range(saved_cache.shape[0]):
                cache[old_slot, q] = saved_cache[q]
            log_weight[old_slot] = saved_weight
            continue
        if choice == k:
            state = ensure_capacity(state, 1)
            labels, sizes, stats, cache, log_weight, slots, _, n_clusters, _, _, _ = state
            new_slot = open_slot(state)
        else:
            new_slot = slots[choice]
        if emptied:
            link(state, new_slot, i)  # close_slot emptied the old member list
            labels[i] = new_slot
        elif new_slot != old_slot:
            relink(state, old_slot, new_slot, i)
        if new_slot != old_slot:
            moved += 1
        move_stats(stats, sizes, new_slot, item, 1)
        families.fill_cache(family, stats[new_slot], params, cache[new_slot])
        log_weight[new_slot] = math.log(sizes[new_slot] + shift)
    return state, GibbsInfo(change, moved)


@njit(cache=True)
def set_move_sweep(model, state, rng):
    """One systematic-scan collapsed Gibbs sweep built from single-item set moves; returns ``(state, GibbsInfo)``.

    The same update as :func:`sweep`, which is specialised for the additive
    families; this one serves any likelihood (``kernels.moves``).
    """
    n = model.data.shape[0]
    one = np.empty(1, dtype=np.int64)
    change = 0.0
    moved = 0
    for i in range(n):
        old_slot = state.labels[i]
        remove_item(model, state, i)
        candidates = all_candidates(state)
        n_candidates = candidates.shape[0]
        old_choice = n_candidates - 1
        for c in range(n_candidates - 1):
            if candidates[c] == old_slot:
                old_choice = c
        log_weights = np.empty(n_candidates)
        one[0] = i
        set_log_weights(model, state, one, 1, candidates, n_candidates, log_weights)
        pick, _ = choose(log_weights, n_candidates, -1, rng)
        change += log_weights[pick] - log_weights[old_choice]
        state, new_slot = add_items(model, state, candidates[pick], one, 1)
        if pick != old_choice:
            moved += 1
    return state, GibbsInfo(change, moved)
