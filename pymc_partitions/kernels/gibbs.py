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

Models whose clusters keep explicit parameters (the parametric kind) have no
predictive to collapse onto: for them a transition runs Neal's Algorithm 8
with ``n_auxiliary`` auxiliary parameter values instead
(``kernels.auxiliary_gibbs``), chosen when numba compiles the transition.

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
from pymc_partitions._dispatch import kind_function
from pymc_partitions.kernels import auxiliary_gibbs
from pymc_partitions.kernels.clusters import all_candidates, set_log_weights, weight_work
from pymc_partitions.kernels.info import MOVE_GIBBS, Info
from pymc_partitions.kernels.moves import choose, draw_index, exp_normalise
from pymc_partitions.state import add_items, close_slot, ensure_capacity, link, move_stats, open_slot, relink, remove_item

Config = namedtuple("Config", ["n_sweeps", "n_auxiliary"], defaults=(1,))
Config.__doc__ = """Options of one Gibbs transition (``GibbsStep``).

n_sweeps : int      systematic sweeps per transition
n_auxiliary : int   auxiliary parameter values of Algorithm 8 (parametric models only; default 1)
"""


@njit(cache=True)
def transition(model, state, config, history, own, rng):
    """One ``GibbsStep``: ``config.n_sweeps`` sweeps; returns ``(state, Info)``.

    ``history`` and ``own`` are unused (the signature every step's transition shares).
    """
    before = state.n_clusters[0]
    change = 0.0
    for _ in range(config.n_sweeps):
        state, sweep_change = configured_sweep(model, state, config.n_auxiliary, rng)
        change += sweep_change
    return state, Info(MOVE_GIBBS, True, 1.0, change, -change, state.n_clusters[0] - before)


@njit(cache=True, inline="always")
def sample_log_weights(log_weights, count, scratch, rng):
    """Index drawn with probability ∝ exp(log_weights[:count]); ``scratch`` holds >= count floats."""
    _, total = exp_normalise(log_weights, count, scratch)
    return draw_index(scratch, count, total, rng)


@njit(cache=True)
def additive_sweep(model, state, rng):
    """The Gibbs sweep of the additive families (cached predictives); returns ``(state, log joint change)``.

    Allocates the scratch arrays and grows the state's capacity; the updates
    themselves are runs of :func:`update_items`, each of which stops when it
    has used the last free slot.
    """
    n = model.data.shape[0]
    shift = priors.size_shift(model.prior, model.prior_params)
    item = np.empty(state.stats.shape[1])
    saved_cache = np.empty(state.cache.shape[1])
    log_weights = np.empty(0)
    scratch = np.empty(0)
    start = np.int64(0)  # a literal 0 would have numba compile update_items once more, for Literal[int](0)
    change = 0.0
    while start < n:
        state = ensure_capacity(state, 1)
        if log_weights.shape[0] < state.sizes.shape[0] + 1:  # k + 1 options, k <= capacity
            log_weights = np.empty(state.sizes.shape[0] + 1)
            scratch = np.empty_like(log_weights)
        start, run_change = update_items(model, state, start, shift, log_weights, scratch, item, saved_cache, rng)
        change += run_change
    return state, change


@njit(cache=True, _nrt=False)
def update_items(model, state, start, shift, log_weights, scratch, item, saved_cache, rng):
    """Gibbs updates of items ``start, start + 1, ...``; returns ``(next item, log joint change)``.

    Stops after the last item, or after an update that used the state's last
    free slot (the caller grows the capacity and continues).  ``log_weights``
    and ``scratch`` hold ``capacity + 1`` floats, ``item`` a statistics row and
    ``saved_cache`` a cache row.  When an item returns to its own cluster, the
    saved cache row is restored instead of recomputed.

    Compiled without numba's reference counting (``_nrt=False``): this
    function allocates nothing, and every array it reads is owned by the
    caller for the whole call, so the counts would only go up and down again.
    With them, each inlined helper increments and decrements the count of
    every array it is passed, about 15 atomic pairs per item that numba's
    pruning leaves in place (9 % of the sweep; ``docs/benchmarks.md``).
    Allocating here would fail to compile, so the rule is enforced.
    """
    n = model.data.shape[0]
    family, data, params, empty_cache = model.family, model.data, model.params, model.empty_cache
    prior, prior_params, log_v_table = model.prior, model.prior_params, model.log_v_table
    labels, sizes, stats, cache, log_weight, slots = state.labels, state.sizes, state.stats, state.cache, state.log_weight, state.slots
    n_clusters = state.n_clusters
    capacity = sizes.shape[0]
    log_new_prior = priors.log_new_cluster(prior, prior_params, log_v_table, n, n_clusters[0])
    new_prior_k = n_clusters[0]
    change = 0.0
    for i in range(start, n):
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
        old_choice = k
        for j in range(k):
            if slots[j] == old_slot:
                old_choice = j
            log_weights[j] = log_weight[slots[j]] + families.log_predictive(family, cache[slots[j]], x, params)
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
        new_slot = open_slot(state) if choice == k else slots[choice]
        if emptied:
            link(state, new_slot, i)  # close_slot emptied the old member list
            labels[i] = new_slot
        elif new_slot != old_slot:
            relink(state, old_slot, new_slot, i)
        move_stats(stats, sizes, new_slot, item, 1)
        families.fill_cache(family, stats[new_slot], params, cache[new_slot])
        log_weight[new_slot] = math.log(sizes[new_slot] + shift)
        if n_clusters[0] == capacity:
            return i + 1, change
    return n, change


@njit(cache=True)
def set_move_sweep(model, state, rng):
    """One systematic-scan collapsed Gibbs sweep built from single-item set moves; returns ``(state, log joint change)``.

    The same update as :func:`additive_sweep` for any likelihood
    (``clusters.set_log_weights``); used for the relational model, whose
    likelihood couples clusters.
    """
    n = model.data.shape[0]
    one = np.empty(1, dtype=np.int64)
    change = 0.0
    for i in range(n):
        old_slot = remove_item(model, state, i)
        candidates = all_candidates(state)
        n_candidates = candidates.shape[0]
        old_choice = n_candidates - 1
        for c in range(n_candidates - 1):
            if candidates[c] == old_slot:
                old_choice = c
        log_weights = np.empty(n_candidates)
        one[0] = i
        set_log_weights(model, state, one, 1, candidates, n_candidates, log_weights, weight_work(state))
        pick, _ = choose(log_weights, n_candidates, -1, rng)
        change += log_weights[pick] - log_weights[old_choice]
        state, _ = add_items(model, state, candidates[pick], one, 1)
    return state, change


@kind_function(additive=additive_sweep, relational=set_move_sweep)
def sweep(model, state, rng):
    """One systematic-scan Gibbs sweep over all items; returns ``(state, log joint change)``.

    :func:`additive_sweep` for the additive families, :func:`set_move_sweep`
    for the Infinite Relational Model.
    """


@njit(cache=True)
def _collapsed_sweep(model, state, n_auxiliary, rng):
    return sweep(model, state, rng)


@kind_function(additive=_collapsed_sweep, relational=_collapsed_sweep, parametric=auxiliary_gibbs.sweep)
def configured_sweep(model, state, n_auxiliary, rng):
    """One sweep of a ``GibbsStep``: :func:`sweep` (``n_auxiliary`` unused), or Algorithm 8 for parametric models."""
