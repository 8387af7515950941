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

from collections import namedtuple

import numpy as np

from pymc_partitions import priors
from pymc_partitions._dispatch import ADDITIVE, PARAMETRIC, RELATIONAL, kind_function
from pymc_partitions._jit import jit
from pymc_partitions.kernels import auxiliary_gibbs
from pymc_partitions.kernels.clusters import all_candidates, set_log_weights, update_items, weight_work
from pymc_partitions.kernels.info import MOVE_GIBBS, Move, report
from pymc_partitions.kernels.moves import choose
from pymc_partitions.kernels.protocol import COMPONENT, Kernel, Support
from pymc_partitions.state import add_items, ensure_capacity, remove_item

Options = namedtuple("Options", ["n_sweeps", "n_auxiliary"], defaults=(1,))
Options.__doc__ = """Options of one Gibbs transition (``GibbsStep``); also its sampler state (it keeps nothing else).

n_sweeps : int      systematic sweeps per transition
n_auxiliary : int   auxiliary parameter values of Algorithm 8 (parametric models only; default 1)
"""


def init(model, labels, options, rng):
    """The sampler state: the options alone."""
    return options


@jit
def transition(model, state, options, rng):
    """One ``GibbsStep``: ``options.n_sweeps`` sweeps; returns ``(state, options, Info)``."""
    before = state.n_clusters[0]
    change = 0.0
    for _ in range(options.n_sweeps):
        state, sweep_change = sweep(model, state, rng, options.n_auxiliary)
        change += sweep_change
    return state, options, report(model, state, Move(MOVE_GIBBS, True, 1.0, change, -change, state.n_clusters[0] - before))


@jit
def additive_sweep(model, state, rng, n_auxiliary=1):
    """The Gibbs sweep of the additive families (cached predictives); returns ``(state, log joint change)``.
    (``n_auxiliary`` is not used: :func:`sweep`'s signature.)

    Allocates the scratch arrays and grows the state's capacity; the updates
    themselves are runs of ``clusters.update_items`` (the item loop Gibbs and
    restricted scans share), each of which stops when it has used the last
    free slot.
    """
    n = model.data.shape[0]
    shift = priors.size_shift(model.prior, model.prior_params)
    item = np.empty(state.stats.shape[1])
    saved_cache = np.empty(state.cache.shape[1])
    log_weights = np.empty(0)
    scratch = np.empty(0)
    start = np.int64(0)  # a literal 0 would have numba compile update_items once more, for Literal[int](0)
    everything = np.empty(0, dtype=np.int64)  # no members, no candidates, nothing forced: a full sweep
    change = 0.0
    while start < n:
        state = ensure_capacity(state, 1)
        if log_weights.shape[0] < state.sizes.shape[0] + 1:  # k + 1 options, k <= capacity
            log_weights = np.empty(state.sizes.shape[0] + 1)
            scratch = np.empty_like(log_weights)
        start, run_change, _ = update_items(
            model, state, everything, start, everything, everything, shift, log_weights, scratch, item, saved_cache, rng
        )
        change += run_change
    return state, change


@jit
def set_move_sweep(model, state, rng, n_auxiliary=1):
    """One systematic-scan collapsed Gibbs sweep built from single-item set moves; returns ``(state, log joint change)``.
    (``n_auxiliary`` is not used: :func:`sweep`'s signature.)

    The same update as :func:`additive_sweep` for any likelihood
    (``clusters.set_log_weights``); used for the relational model, whose
    likelihood couples clusters.
    """
    n = model.data.shape[0]
    return update_subset(model, state, np.arange(n), n, rng)


@jit
def update_subset(model, state, items, count, rng):
    """Gibbs updates of ``items[:count]`` in turn, each from its exact full conditional; returns ``(state, log joint change)``.

    Any kind of model (single-item set moves, ``clusters.set_log_weights``).
    The updates leave the posterior invariant whatever the items are, as long
    as their choice does not depend on the current partition (tree-guided
    MCMC's local moves).
    """
    one = np.empty(1, dtype=np.int64)
    change = 0.0
    for q in range(count):
        i = items[q]
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


@kind_function(additive=additive_sweep, relational=set_move_sweep, parametric=auxiliary_gibbs.sweep)
def sweep(model, state, rng, n_auxiliary=1):
    """One systematic-scan Gibbs sweep over all items; returns ``(state, log joint change)``.

    :func:`additive_sweep` for the additive families, :func:`set_move_sweep`
    for the Infinite Relational Model, Algorithm 8 with ``n_auxiliary``
    auxiliary values for parametric models (``auxiliary_gibbs.sweep``).  One
    function for every kind, so a transition compiles no wrapper level
    between itself and the sweep (``docs/benchmarks.md``, "Fewer compiled levels").
    """


KERNEL = Kernel(init, transition, Options, Support((ADDITIVE, RELATIONAL, PARAMETRIC, COMPONENT)))
"""The collapsed Gibbs (``GibbsStep``) (``kernels.protocol``)."""
