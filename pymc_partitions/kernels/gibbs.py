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
from pymc_partitions.state import close_slot, ensure_capacity, open_slot, refresh

GibbsInfo = namedtuple("GibbsInfo", ["log_joint_change", "n_moved"])
GibbsInfo.__doc__ = """What a sweep did.

log_joint_change : float  log posterior after minus before the sweep
n_moved : int             number of items whose cluster changed
"""


@njit(cache=True)
def sample_log_weights(log_weights, count, scratch, rng):
    """Index drawn with probability ∝ exp(log_weights[:count]); ``scratch`` holds >= count floats."""
    top = log_weights[0]
    for k in range(1, count):
        top = max(top, log_weights[k])
    total = 0.0
    for k in range(count):
        scratch[k] = math.exp(log_weights[k] - top)
        total += scratch[k]
    target = rng.random() * total
    for k in range(count - 1):
        target -= scratch[k]
        if target < 0.0:
            return k
    return count - 1


@njit(cache=True)
def remove_item(model, state, i, item):
    """Take item ``i`` (statistics ``item``) out of its cluster; True if the cluster emptied."""
    slot = state.labels[i]
    state.sizes[slot] -= 1
    if state.sizes[slot] == 0:
        close_slot(state, slot)
        return True
    state.stats[slot] -= item
    refresh(model, state, slot)
    return False


@njit(cache=True)
def add_item(model, state, i, item, slot):
    """Put item ``i`` into ``slot`` (already open) and refresh its cache."""
    state.labels[i] = slot
    state.sizes[slot] += 1
    state.stats[slot] += item
    refresh(model, state, slot)


@njit(cache=True)
def sweep(model, state, rng):
    """One systematic-scan Gibbs sweep over all items; returns ``(state, GibbsInfo)``."""
    n, d = model.data.shape
    s = state.stats.shape[1]
    item = np.empty(s)
    saved_cache = np.empty(state.cache.shape[1])
    log_weights = np.empty(state.sizes.shape[0] + 1)
    scratch = np.empty_like(log_weights)
    change = 0.0
    moved = 0
    for i in range(n):
        x = model.data[i]
        families.item_stats(model.family, x, item)
        old_slot = state.labels[i]
        saved_cache[:] = state.cache[old_slot]
        saved_weight = state.log_weight[old_slot]
        emptied = remove_item(model, state, i, item)
        k = state.n_clusters[0]
        if log_weights.shape[0] < k + 1:
            log_weights = np.empty(2 * (k + 1))
            scratch = np.empty_like(log_weights)
        old_choice = k
        for j in range(k):
            slot = state.slots[j]
            if slot == old_slot:
                old_choice = j
            log_weights[j] = state.log_weight[slot] + families.log_predictive(model.family, state.cache[slot], x, model.params)
        log_weights[k] = priors.log_new_cluster(model.prior, model.prior_params, model.log_v_table, n, k) + families.log_predictive(
            model.family, model.empty_cache, x, model.params
        )
        choice = sample_log_weights(log_weights, k + 1, scratch, rng)
        change += log_weights[choice] - log_weights[old_choice]
        if choice == old_choice and not emptied:
            # back where it was: restore instead of recomputing the cache
            state.labels[i] = old_slot
            state.sizes[old_slot] += 1
            state.stats[old_slot] += item
            state.cache[old_slot] = saved_cache
            state.log_weight[old_slot] = saved_weight
            continue
        if choice == k:
            state = ensure_capacity(state, 1)
            new_slot = open_slot(state)
        else:
            new_slot = state.slots[choice]
        if new_slot != old_slot:
            moved += 1
        add_item(model, state, i, item, new_slot)
    return state, GibbsInfo(change, moved)
