"""Moving a set of items into one of several clusters: the building block of ARM and of the IRM kernels.

A *set move* (``papers/000_...``, eq. (5)) takes a set ``C`` of unplaced items
and a list of candidate clusters (slots, or ``-1`` for a new cluster) and puts
``C`` in candidate ``k`` with probability ``pi_k ∝ q(z^(k))``, where ``q`` is
the collapsed posterior of the placed items with ``C`` added to ``k``.  The
unnormalised log weights are

    join slot k:  log W(m_k + |C|) - log W(m_k) + log p(x_C | x_k)
    new cluster:  log[V(n, K+1)/V(n, K)] + log W(|C|) + log p(x_C)

with ``K`` the number of occupied clusters and ``n`` the total number of items.
With every other item placed and ``|C| = 1`` these are the exact Gibbs
conditionals (Neal 2000, Algorithm 3).  While some items are unplaced they
define the proposal of a block move; any positive weights are valid there
because the proposal probability is computed from the same weights in both
directions, and ``V(n, .)`` (not ``V(n_placed, .)``) keeps them defined for the
mixture of finite mixtures, whose table is for ``n`` only.

The likelihood term is ``log_marginal(stats_k + stats_C) - log_marginal(stats_k)``
for the additive families (the cached predictive when ``|C| = 1``) and
``families.relational.join_log_likelihood`` for the Infinite Relational Model.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from pymc_partitions import families, priors
from pymc_partitions.families import INFINITE_RELATIONAL, relational


@njit(cache=True)
def weight_work(state):
    """The work rows :func:`set_log_weights` needs for ``state``'s current capacity."""
    return np.empty((3, state.stats.shape[1]))


@njit(cache=True, _nrt=False)
def set_log_weights(model, state, members, count, candidates, n_candidates, out, work):
    """``out[c]``: unnormalised log probability that the unplaced ``members[:count]`` join ``candidates[c]``.

    ``work`` is ``weight_work(state)`` (overwritten).  Compiled without
    reference counting, like ``gibbs.update_items``: it allocates nothing,
    and a counted call taking the model and the state pays an atomic
    increment and decrement per array, which was half of an ARM move's time.
    """
    n = model.data.shape[0]
    prior, prior_params = model.prior, model.prior_params
    log_new = priors.log_new_cluster(prior, prior_params, model.log_v_table, n, state.n_clusters[0])
    if count > 1:  # the W ratio is 1 for one item
        log_new += priors.log_w(prior, prior_params, count) - priors.log_w(prior, prior_params, 1)
    if model.family == INFINITE_RELATIONAL:
        set_edges = work[0]
        set_edges[:] = 0.0
        inner = relational.edges_to_slots(model.data, state.labels, members, count, set_edges)
        for c in range(n_candidates):
            slot = candidates[c]
            prior_term = log_new if slot < 0 else _log_join(model, state, slot, count)
            out[c] = prior_term + relational.join_log_likelihood(
                state.stats, state.sizes, state.slots, state.n_clusters[0], set_edges, inner, count, slot, model.params
            )
        return
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


@njit(cache=True, inline="always")
def _log_join(model, state, slot, count):
    """``log W(m + count) - log W(m)`` for the ``m`` items of ``slot``."""
    if count == 1:
        return state.log_weight[slot]
    m = state.sizes[slot]
    return priors.log_w(model.prior, model.prior_params, m + count) - priors.log_w(model.prior, model.prior_params, m)


NEGLIGIBLE_LOG_WEIGHT = -40.0
"""Weights below ``exp(-40) < 2**-57`` times the largest are set to 0 by :func:`exp_normalise`."""


@njit(cache=True, inline="always")
def exp_normalise(log_weights, count, scratch):
    """``scratch[k] = exp(log_weights[k] - top)`` for ``k < count``; returns ``(top, sum of scratch)``.

    A weight below ``exp(NEGLIGIBLE_LOG_WEIGHT)`` relative to the largest is
    stored as 0 without calling ``exp``.  The largest contributes 1 to the
    sum, so each such weight is below a tenth of the sum's rounding unit, and
    the distribution changes by less than ``count * 2**-57`` in total
    variation (the uniform draw that picks the index resolves ``2**-53``).
    In a Gibbs sweep over well-separated clusters most ``exp`` calls go
    (``benchmarks/gibbs_throughput.py``).
    """
    top = log_weights[0]
    for k in range(1, count):
        top = max(top, log_weights[k])
    cutoff = top + NEGLIGIBLE_LOG_WEIGHT
    total = 0.0
    for k in range(count):
        scratch[k] = math.exp(log_weights[k] - top) if log_weights[k] > cutoff else 0.0
        total += scratch[k]
    return top, total


@njit(cache=True, inline="always")
def draw_index(scratch, count, total, rng):
    """Index ``k < count`` drawn with probability ``scratch[k] / total``."""
    target = rng.random() * total
    for k in range(count - 1):
        target -= scratch[k]
        if target < 0.0:
            return k
    return count - 1


@njit(cache=True)
def choose(log_weights, count, forced, rng):
    """Index drawn ∝ ``exp(log_weights[:count])`` (or ``forced`` if >= 0) and its log probability."""
    return choose_into(log_weights, count, forced, np.empty(count), rng)


@njit(cache=True, inline="always")
def choose_into(log_weights, count, forced, scratch, rng):
    """:func:`choose` with a caller's ``scratch`` buffer of at least ``count`` floats (allocation-free)."""
    top, total = exp_normalise(log_weights, count, scratch)
    pick = forced if forced >= 0 else draw_index(scratch, count, total, rng)
    return pick, log_weights[pick] - top - math.log(total)


@njit(cache=True)
def metropolis_accept(log_ratio, rng):
    """``(accepted, min(1, exp(log_ratio)))`` for a Metropolis-Hastings log acceptance ratio."""
    accept_prob = 1.0 if log_ratio >= 0 else math.exp(log_ratio)
    return rng.random() < accept_prob, accept_prob


@njit(cache=True)
def all_candidates(state):
    """Every occupied slot followed by ``-1`` (a new cluster): the unrestricted candidate list."""
    out = np.empty(state.n_clusters[0] + 1, dtype=np.int64)
    write_all_candidates(state, out)
    return out


@njit(cache=True, inline="always")
def write_all_candidates(state, out):
    """:func:`all_candidates` into ``out`` (room for ``n_clusters + 1``); returns their number."""
    k = state.n_clusters[0]
    for c in range(k):
        out[c] = state.slots[c]
    out[k] = -1
    return k + 1
