"""Sub-cluster split-merge for DP and Pitman-Yor mixtures (Chang & Fisher 2013), made exact.

Chang & Fisher keep two *sub-clusters* per cluster (sub-labels, sub-cluster
parameters and weights), refine them with every sweep, and split a cluster
along them.  Those sub-cluster variables are part of their augmented target,
with a conditional whose normaliser is the evidence of a two-component
mixture on the cluster's items; their Hastings ratio for a split (the
collapsed target ratio alone) leaves out that normaliser and how a split
creates, and a merge discards, the sub-cluster variables, so it is not exact
(``docs/exactness.md``, "Sub-cluster split-merge").  Here nothing is
persisted: every proposal builds its two sub-clusters afresh, Jain & Neal
style, from the union of the clusters involved, uncollapsed and parallel over
items.

One proposal, for an ordered pair ``i != j`` drawn uniformly (``S`` the items
of the clusters of ``i`` and ``j``, ``R = S \\ {i, j}`` in increasing order):

1. *Launch* (:func:`launch`), a function of ``(S, i, j)`` and fresh
   randomness only, so it has the same law for a split and for the merge
   that reverses it.  Sub-cluster 0 is anchored by ``i``, sub-cluster 1 by
   ``j``; the anchors never move.

   * seeding pass: every ``h ∈ R`` independently to side ``t`` with
     probability ``∝ p(x_h | x_{anchor t})`` (the family's predictive given
     the anchor alone);
   * ``n_launch_sweeps`` uncollapsed two-component sweeps: draw
     ``θ_t ~ p(θ | x_{S_t})`` (``families.draw_params``) and set
     ``w_t = |S_t| / |S|`` for the current sub-clusters ``S_0, S_1``, then
     reassign every ``h ∈ R`` independently with
     ``P(side t) ∝ w_t f(x_h | θ_t)``;
   * the launch is ``L = (θ_0, θ_1)`` drawn once more from the last
     sub-clusters, with their sizes ``m_0 + m_1 = |S|``.

2. *Final weight* ``w``, an auxiliary variable of the move: a split draws it
   from ``g(w | L) = ε U(0, 1) + (1 - ε) Beta(m_0, m_1)``
   (:func:`draw_split_weight`, ``ε`` = :data:`UNIFORM_WEIGHT`), a merge from
   ``r(w | S_0, S_1) = Beta(|S_0|, |S_1|)`` of the current split
   (:func:`draw_beta_weight`).

3. *Final pass* (:func:`final_pass`): ``p_h(t) = w_t f(x_h | θ_t) / Σ_u w_u f(x_h | θ_u)``
   with ``(w_0, w_1) = (w, 1 - w)`` for every ``h ∈ R``, independently, and
   ``q(S_0, S_1 | L, w) = Π_{h ∈ R} p_h(side of h)``.

4. If ``z_i = z_j``: draw the sides from step 3, propose the split
   ``{S_0, S_1}`` and accept with
   ``min(1, [π(split)/π(z)] r(w | split) / [g(w | L) q(split | L, w)])``.
   Otherwise propose the merge and accept with
   ``min(1, [π(merge)/π(z)] g(w | L) q(current split | L, w) / r(w | current split))``,
   the final pass forced to the current split.  ``π`` is the collapsed
   posterior ``V(n, K) Π_c W(|c|) p(x_c)``; for every launch ``L`` the pair
   of moves is a reversible pair on the space extended by ``w`` (Jain &
   Neal 2004, Sec. 3; Green 1995), and ``L`` has the same law from both
   ends, so the mixture over ``L`` and over pairs is reversible.  ``r``
   gives a merge of two clusters that one cluster fits as well (sides of any
   sizes, every ``p_h(t) ≈ w_t``) a ratio free of ``|S|``: with the launch's
   ``w`` alone it fell as ``exp(-|S| KL(|S_0|/|S| ‖ w))`` and such clusters
   were never merged.  A merge draws ``u`` and ``w`` first and is rejected
   before any launch when ``log u >= log[π(merge)/π(z)] - log r(w) + log max_L g(w | L)``:
   ``log q <= 0``, so the decision is the one the full ratio would give.

An iteration (:func:`transition`) makes ``n_proposals`` proposals one after
the other (under Pitman-Yor ``V(n, K)`` couples the decisions; each
proposal's per-item work is parallel).  After each proposal that leaves
``i`` and ``j`` apart, :func:`refine` redraws the labels of their two
clusters within them, uncollapsed and in parallel (an exact Gibbs draw; it
clears the items a split's final pass put in the tail of the wrong side).
Then come ``n_global_sweeps`` sweeps of one iteration of the exact partially
collapsed hybrid sampler
(``kernels.hybrid``: instantiated weights and parameters, cold shards
restricted, one hot shard with the collapsed tail), which moves every item
in parallel.  Split-merge proposals alone are exact for every Gibbs-type
prior; the hybrid iteration needs a DP or Pitman-Yor prior.

Parallel work.  The per-item work is done in *passes* (``kernels.passes``)
over the items of ``R`` split by the ``n_shards`` global shards of the hybrid
sampler; each item's uniform is keyed by the pass's seed and the item's
index, and the per-shard sums are reduced in shard order, while this
module's *driver* draws the seeds, parameters and decisions from the step's
generator.  The driver is run two ways (``kernels.twofold``): compiled,
every pass serial, or interpreted, the passes on numba threads or on an
executor's workers (``sampler.executor``; the operations in this process
are in ``kernels.shards``).  The chain is a function of the seed and
``n_shards`` only (tested bit for bit).

Interface (``kernels.protocol``): :class:`Options`, :func:`init`, :func:`transition`
with ``Info.move = MOVE_SUBCLUSTER``, :data:`KERNEL`.

References
----------
Chang, J. & Fisher III, J. W. (2013). Parallel sampling of DP mixture models
using sub-cluster splits. NIPS 26.
Green, P. J. (1995). Reversible jump Markov chain Monte Carlo computation and
Bayesian model determination. Biometrika 82(4), 711-732.
Jain, S. & Neal, R. M. (2004). A split-merge Markov chain Monte Carlo procedure
for the Dirichlet process mixture model. JCGS 13(1), 158-182.
Dubey, A., Zhang, M. M., Xing, E. P. & Williamson, S. A. (2020). Distributed,
partially collapsed MCMC for Bayesian nonparametrics. AISTATS.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from pymc_partitions import families, priors
from pymc_partitions._dispatch import ADDITIVE
from pymc_partitions._jit import jit
from pymc_partitions.families._common import log_gamma_variate
from pymc_partitions.kernels.background import random_pair
from pymc_partitions.kernels.clusters import cluster_log_weight, log_merge_many_ratio, log_merge_ratio, merge_slots
from pymc_partitions.kernels.hybrid import begin, checked_bounds, finish, iterate, warm_start_shards
from pymc_partitions.kernels.info import MOVE_MERGE, MOVE_SPLIT, MOVE_SUBCLUSTER, Move, report
from pymc_partitions.kernels.protocol import Kernel, Schedule, Support
from pymc_partitions.kernels.shards import assign, item_slots, merge_items, pair_pass, select
from pymc_partitions.kernels.twofold import driver, entry
from pymc_partitions.state import ensure_capacity, log_joint, open_slot, refresh


# --------------------------------------------------------------------------- options and state

Options = namedtuple(
    "Options",
    ["n_proposals", "n_launch_sweeps", "n_refine_sweeps", "n_shards", "n_global_sweeps", "warm_start", "executor"],
    defaults=(10, 2, 1, 8, 1, 0, None),
)
Options.__doc__ = """Options of one sub-cluster split-merge iteration (``SubClusterSplitMergeStep``).

n_proposals : int       split/merge proposals per iteration (default 10; a merge is mostly rejected at O(s))
n_launch_sweeps : int   uncollapsed two-component sweeps of a launch after its seeding pass (``T``, default 2)
n_refine_sweeps : int   restricted sweeps (:func:`refine`) of the pair's two clusters after each proposal that
                        leaves ``i`` and ``j`` apart (default 1; 0: none)
n_shards : int          global shards ``P`` of the items (``hybrid.shard_bounds``): the hybrid iteration's
                        shards and the units of the passes' parallel work; the chain depends on it (default 8)
n_global_sweeps : int   sweeps of the hybrid iteration after the proposals (its ``sync_every``; 0: none,
                        proposals only -- exact for every Gibbs-type prior; default 1)
warm_start : int        tuning transitions of the hybrid iteration's warm start (``hybrid.warm_start_shards``;
                        default 0: none)
executor : None or object
                        where the items' work runs (``kernels.protocol.Executor``; default ``None``: this
                        process), put in the sampler state by :func:`init`
"""

Sampler = namedtuple("Sampler", ["options", "bounds", "counts", "n_hot", "executor"])
Sampler.__doc__ = """What the sampler keeps between iterations besides the partition state.

options : Options
bounds : int64[P + 1]   ``bounds[s]:bounds[s + 1]`` are the items of global shard ``s``
counts : int64[5]       cumulative: splits proposed, splits accepted, merges proposed, merges accepted,
                        merges rejected before their launch (diagnostics; updated in place)
n_hot : int64           hot shards of the hybrid iteration: 1 (exact); more only for a warm start while
                        PyMC tunes (``HybridDPStep`` sets it before each iteration; ``kernels.hybrid``)
executor : None or object
                        where the items' work runs (``kernels.protocol.Executor``): ``None`` in this
                        process (what :func:`init` gives and compiled drivers need), or e.g.
                        ``distributed.cluster.DaskShards``
"""

SPLITS_PROPOSED, SPLITS_ACCEPTED, MERGES_PROPOSED, MERGES_ACCEPTED, MERGES_REJECTED_EARLY = 0, 1, 2, 3, 4
"""Indices of :attr:`Sampler.counts`."""

UNIFORM_WEIGHT = 0.5
"""``ε``: the probability that a split draws its final weight ``w`` uniform on (0, 1) rather than from the launch's
``Beta(m_0, m_1)`` (module docstring, step 2).  The uniform part keeps ``g(w | L)`` at least ``ε`` where ``r`` puts a
merge's ``w``, whatever the launch; for two well-separated clusters a uniform ``w`` rarely matches their sizes, so
about a fraction ``ε`` of their split proposals is rejected (``docs/benchmarks.md``: the race's time is unchanged)."""


def init(model, labels, options, rng):
    """The sampler's state for the labels ``labels`` (their number fixes the shards): options, global shards,
    counters, one hot shard, the options' executor.

    ``options.n_shards`` must be in ``1..n``; a hybrid iteration
    (``n_global_sweeps > 0``) needs a DP or Pitman-Yor prior.  ``rng`` is
    not used (the interface every kernel shares).
    """
    bounds = checked_bounds(model, labels.shape[0], options.n_shards, options.n_global_sweeps > 0)
    return Sampler(options, bounds, np.zeros(5, dtype=np.int64), np.int64(1), options.executor)


# --------------------------------------------------------------------------- one iteration


@driver
def transition(model, state, sampler, rng):
    """One iteration: ``n_proposals`` split/merge proposals, each followed by ``n_refine_sweeps`` restricted sweeps of
    the pair's clusters if they are apart, then the hybrid iteration; returns ``(state, sampler, Info)``.

    ``Info``: ``MOVE_SUBCLUSTER``; ``accepted`` whether any proposal was,
    ``accept_prob`` the fraction of proposals accepted; ``log_target_ratio``
    the change in log posterior over the iteration (``log_joint`` after
    minus before) and ``log_proposal_ratio`` its negative, as for the other
    composite moves; ``cluster_change`` the change in the number of clusters.
    """
    options = sampler.options
    n = state.labels.shape[0]
    state = begin(sampler, model, state)
    before = log_joint(model, state)
    k_before = state.n_clusters[0]
    n_accepted = 0
    for _ in range(options.n_proposals):
        i, j = random_pair(n, rng)
        state, info = propose(model, state, sampler, i, j, rng)
        n_accepted += info.accepted
        slot_i, slot_j = item_slots(sampler, model, state, i, j)
        if slot_i != slot_j:  # a function of the new state and the pair only (docs/exactness.md)
            for _ in range(options.n_refine_sweeps):
                state, _ = refine(model, state, sampler, i, j, rng)
    if options.n_global_sweeps > 0:  # one iteration of the exact hybrid sampler (``hybrid.iterate``)
        state = iterate(model, state, sampler, options.n_global_sweeps, rng)
    state = finish(sampler, model, state)
    change = log_joint(model, state) - before
    fraction = n_accepted / options.n_proposals if options.n_proposals > 0 else 0.0
    k_change = state.n_clusters[0] - k_before
    return state, sampler, report(model, state, Move(MOVE_SUBCLUSTER, n_accepted > 0, fraction, change, -change, k_change))


KERNEL = Kernel(
    init, entry(transition), Options, Support((ADDITIVE,), min_items=2), schedule=Schedule(prepare=warm_start_shards)
)
"""The sub-cluster split-merge (``SubClusterSplitMergeStep``), its driver run as ``twofold.entry`` says."""


@driver
def propose(model, state, sampler, i, j, rng):
    """The split (``z_i = z_j``) or merge proposal for the ordered pair ``i != j``; returns ``(state, Move)``.

    The ``Move`` of an accepted move carries the exact change in log
    posterior and ``log q(reverse) - log q(forward)``; a merge rejected
    before its launch reports ``log_proposal_ratio`` and ``accept_prob`` as
    NaN (not computed; its acceptance probability is below ``u``).
    """
    slot_i, slot_j = item_slots(sampler, model, state, i, j)
    if slot_i == slot_j:
        return propose_split(model, state, sampler, i, j, slot_i, rng)
    return propose_merge(model, state, sampler, i, j, slot_i, slot_j, rng)


@driver
def propose_split(model, state, sampler, i, j, slot, rng):
    """Split ``slot``, the cluster of ``i`` and ``j``, along a fresh launch (module docstring, step 3): ``(state, Move)``.
    """
    counts = sampler.counts
    selection = select(sampler, model, state, i, j)
    theta, launch_sizes = launch(model, state, sampler, selection, i, j, rng)
    log_w, log_g = draw_split_weight(launch_sizes, rng)
    sub_stats, sizes, log_q, seed = final_pass(model, state, sampler, selection, i, j, theta, log_w, -1, rng)
    log_target = -log_merge_many_ratio(model, state.n_clusters[0] + 1, sub_stats, sizes, 2)
    log_proposal = log_beta_density(log_w, sizes[0], sizes[1]) - log_g - log_q
    log_ratio = log_target + log_proposal
    accept_prob = 1.0 if log_ratio >= 0.0 else math.exp(log_ratio)
    accepted = rng.random() < accept_prob
    counts[SPLITS_PROPOSED] += 1
    if accepted:
        counts[SPLITS_ACCEPTED] += 1
        state = ensure_capacity(state, 1)
        new = open_slot(state)
        assign(sampler, model, state, selection, slot, new, i, j, theta, log_w, seed)
        set_summaries(model, state, slot, new, sub_stats, sizes)
    return state, Move(MOVE_SPLIT, accepted, accept_prob, log_target, log_proposal, 1 if accepted else 0)


@driver
def propose_merge(model, state, sampler, i, j, slot_i, slot_j, rng):
    """Merge ``slot_j`` (the cluster of ``j``) into ``slot_i`` (of ``i``) if a fresh launch reproduces their split
    often enough; returns ``(state, Move)``.

    ``u`` and then ``w ~ Beta(|c_i|, |c_j|)`` are drawn first;
    ``log u >= log[π(merge)/π(z)] - log r(w) + log max_L g(w | L)``
    (:func:`log_split_weight_bound`) rejects without a launch, an upper bound
    of the full log ratio (module docstring, step 4).
    """
    counts = sampler.counts
    log_target = log_merge_ratio(model, state, slot_i, slot_j)
    u = rng.random()
    size_i, size_j = state.sizes[slot_i], state.sizes[slot_j]
    log_w = draw_beta_weight(size_i, size_j, rng)
    log_r = log_beta_density(log_w, size_i, size_j)
    counts[MERGES_PROPOSED] += 1
    log_bound = log_target - log_r + log_split_weight_bound(log_w, size_i + size_j)
    if log_bound < 0.0 and u >= math.exp(log_bound):
        counts[MERGES_REJECTED_EARLY] += 1
        return state, Move(MOVE_MERGE, False, math.nan, log_target, math.nan, 0)
    selection = select(sampler, model, state, i, j)
    theta, launch_sizes = launch(model, state, sampler, selection, i, j, rng)
    _, _, log_q, _ = final_pass(model, state, sampler, selection, i, j, theta, log_w, slot_j, rng)
    log_proposal = log_q + log_split_weight_density(log_w, launch_sizes) - log_r
    log_ratio = log_target + log_proposal
    accept_prob = 1.0 if log_ratio >= 0.0 else math.exp(log_ratio)
    accepted = u < accept_prob
    if accepted:
        counts[MERGES_ACCEPTED] += 1
        merge_items(sampler, model, state, slot_i, slot_j)
        merge_slots(model, state, slot_i, slot_j)
    return state, Move(MOVE_MERGE, accepted, accept_prob, log_target, log_proposal, -1 if accepted else 0)


@driver
def refine(model, state, sampler, i, j, rng):
    """A restricted sweep of the clusters of ``i`` and ``j`` (apart), uncollapsed and parallel: ``(state, change)``.

    With ``a``, ``b`` the two clusters (sizes ``m_a``, ``m_b``) and ``s`` the
    prior's ``size_shift``: draw ``ρ ~ Beta(m_a + s, m_b + s)``,
    ``θ_a ~ p(θ | x_a)``, ``θ_b ~ p(θ | x_b)``, then put every other item of
    ``a ∪ b`` independently in ``a`` or ``b`` with probability
    ``∝ ρ f(x_h | θ_a)``, ``(1 − ρ) f(x_h | θ_b)``; ``i`` and ``j`` stay.  A
    Gibbs draw, exact for every Gibbs-type prior with ``W(m) ∝ Γ(m + s)``
    (DP, PY, NGG given ``u``, MFM): given ``(ρ, θ)`` the conditional of the
    labels of ``a ∪ b`` within ``{a, b}`` factorises over items
    (``docs/exactness.md``).  ``change`` is the change in log posterior.
    """
    slot_a, slot_b = item_slots(sampler, model, state, i, j)
    selection = select(sampler, model, state, i, j)
    shift = priors.size_shift(model.prior, model.prior_params)
    log_w = draw_beta_weight(state.sizes[slot_a] + shift, state.sizes[slot_b] + shift, rng)
    theta = np.empty((2, families.param_size(model.family, model.data.shape[1])))
    families.draw_params(model.family, state.stats[slot_a], model.params, rng, theta[0])
    families.draw_params(model.family, state.stats[slot_b], model.params, rng, theta[1])
    seed = _seed(rng)
    stats, sizes, _ = pair_pass(sampler, model, state, selection, False, theta, log_w, seed, -1, False)
    _add_anchors(model, i, j, stats, sizes)
    change = (
        cluster_log_weight(model, stats[0], sizes[0]) + cluster_log_weight(model, stats[1], sizes[1])
        - cluster_log_weight(model, state.stats[slot_a], state.sizes[slot_a])
        - cluster_log_weight(model, state.stats[slot_b], state.sizes[slot_b])
    )
    assign(sampler, model, state, selection, slot_a, slot_b, i, j, theta, log_w, seed)
    set_summaries(model, state, slot_a, slot_b, stats, sizes)
    return state, change


# --------------------------------------------------------------------------- the launch and the final pass


@driver
def launch(model, state, sampler, selection, i, j, rng):
    """The launch ``L`` of the sub-clusters anchored by ``i`` (0) and ``j`` (1) over the items of ``selection``
    (``R``, :func:`select`): ``(theta, sizes)``.

    A function of the set ``R`` (in increasing order), the anchors and
    ``rng`` only, never of the current labels (module docstring, step 1).
    Returns ``theta[2, p]`` (``families.draw_params`` layout) and the last
    sub-clusters' sizes ``m[2]`` (anchors included; the Beta part of a
    split's ``g(w | L)``).  Draws from ``rng``: one seed per pass, and after
    each pass ``θ_0`` then ``θ_1``.
    """
    family, params = model.family, model.params
    d = model.data.shape[1]
    anchors = _anchor_stats(model, i, j)
    caches = np.empty((2, families.cache_size(family, d)))
    families.fill_cache(family, anchors[0], params, caches[0])
    families.fill_cache(family, anchors[1], params, caches[1])
    no_weights = np.zeros(2)  # the seeding pass weighs the sides equally (one item each)
    stats, sizes, _ = pair_pass(sampler, model, state, selection, True, caches, no_weights, _seed(rng), -1, False)
    theta = np.empty((2, families.param_size(family, d)))
    log_w = np.empty(2)
    for _ in range(sampler.options.n_launch_sweeps):
        _draw_sub_params(model, anchors, stats, sizes, theta, log_w, rng)
        stats, sizes, _ = pair_pass(sampler, model, state, selection, False, theta, log_w, _seed(rng), -1, False)
    _draw_sub_params(model, anchors, stats, sizes, theta, log_w, rng)
    return theta, sizes


@driver
def final_pass(model, state, sampler, selection, i, j, theta, log_w, forced_slot, rng):
    """The final assignment of the selection's items given the launch's ``theta`` and the final weights ``log_w[2]``;
    returns ``(stats[2, s], sizes[2], log q, seed)``.

    Each item goes to side ``t`` with ``p_h(t) ∝ w_t f(x_h | θ_t)``, drawn,
    or (``forced_slot >= 0``) forced to side 1 if it is in that slot and to
    side 0 otherwise (the current split, for a merge).  ``log q = Σ_h log
    p_h(side of h)``; the statistics and sizes of the two sides include the
    anchors ``i`` and ``j``; ``seed`` is the pass's (:func:`assign` applies
    its sides).  One seed is drawn from ``rng`` (also when forced).
    """
    seed = _seed(rng)
    stats, sizes, log_q = pair_pass(sampler, model, state, selection, False, theta, log_w, seed, forced_slot, True)
    _add_anchors(model, i, j, stats, sizes)
    return stats, sizes, log_q, seed


@jit
def draw_split_weight(launch_sizes, rng):
    """A split's final weight ``w ~ g(w | L) = ε U(0, 1) + (1 - ε) Beta(m_0, m_1)``: ``(log_w[2], log g(w | L))``
    with ``log_w = (log w, log(1 - w))`` and ``m = launch_sizes`` (module docstring, step 2)."""
    if rng.random() < UNIFORM_WEIGHT:
        w = 0.0
        while w <= 0.0:  # (0, 1): both logs finite
            w = rng.random()
        log_w = np.array([math.log(w), math.log1p(-w)])
    else:
        log_w = draw_beta_weight(launch_sizes[0], launch_sizes[1], rng)
    return log_w, log_split_weight_density(log_w, launch_sizes)


@jit
def log_split_weight_density(log_w, launch_sizes):
    """``log g(w | L) = log[ε + (1 - ε) Beta(w; m_0, m_1)]`` for ``log_w = (log w, log(1 - w))``."""
    return _log_with_uniform(log_beta_density(log_w, launch_sizes[0], launch_sizes[1]))


@jit
def log_split_weight_bound(log_w, total):
    """``log max_L g(w | L)`` over the launches of a set of ``total`` items, plus ``1e-9`` for rounding.

    ``Beta(w; m_0, m_1)`` with integers ``m_t >= 1``, ``m_0 + m_1 = total``
    is ``(total - 1)`` times the ``Binomial(total - 2, w)`` probability of
    ``m_0 - 1``, largest at the binomial's mode ``floor((total - 1) w)``.
    """
    k = min(max(math.floor((total - 1) * math.exp(log_w[0])), 0), total - 2)
    return _log_with_uniform(log_beta_density(log_w, k + 1, total - k - 1)) + 1e-9


@jit
def _log_with_uniform(log_beta):
    """``log[ε + (1 - ε) exp(log_beta)]``: a Beta density mixed with the uniform part of ``g``."""
    log_uniform = math.log(UNIFORM_WEIGHT)
    log_mixed = math.log1p(-UNIFORM_WEIGHT) + log_beta
    top = max(log_uniform, log_mixed)
    return top + math.log(math.exp(log_uniform - top) + math.exp(log_mixed - top))


@jit
def draw_beta_weight(a, b, rng):
    """``(log w, log(1 - w))`` for ``w ~ Beta(a, b)``, from two Gamma variates in log space (finite for large a, b)."""
    log_a = log_gamma_variate(rng, float(a))
    log_b = log_gamma_variate(rng, float(b))
    top = max(log_a, log_b)
    log_total = top + math.log(math.exp(log_a - top) + math.exp(log_b - top))
    return np.array([log_a - log_total, log_b - log_total])


@jit
def log_beta_density(log_w, a, b):
    """``log Beta(w; a, b)`` for ``log_w = (log w, log(1 - w))``."""
    a, b = float(a), float(b)
    return (a - 1.0) * log_w[0] + (b - 1.0) * log_w[1] - (math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b))


@jit
def _seed(rng):
    """A pass's seed for ``streams.keyed_uniform`` (53 random bits, as the hybrid's iteration seed)."""
    return np.int64(rng.random() * 2.0**53)


@jit
def _anchor_stats(model, i, j):
    """The statistics rows of the anchors ``i`` and ``j``."""
    out = np.zeros((2, families.stat_size(model.family, model.data.shape[1])))
    families.item_stats(model.family, model.data[i], out[0])
    families.item_stats(model.family, model.data[j], out[1])
    return out


@jit
def _add_anchors(model, i, j, stats, sizes):
    """Add the anchors to the sums of a pass (anchor ``i`` to side 0, ``j`` to side 1)."""
    anchors = _anchor_stats(model, i, j)
    for t in range(2):
        sizes[t] += 1
        for r in range(stats.shape[1]):
            stats[t, r] += anchors[t, r]


@jit
def _draw_sub_params(model, anchors, stats, sizes, theta, log_w, rng):
    """``θ_t ~ p(θ | x_{S_t})`` for t = 0, 1 (in that order) and ``log w_t = log(|S_t| / |S|)``, anchors included.

    ``stats`` and ``sizes`` are a pass's sums without the anchors (overwritten with them).
    """
    for t in range(2):
        sizes[t] += 1
        for r in range(stats.shape[1]):
            stats[t, r] += anchors[t, r]
    total = sizes[0] + sizes[1]
    for t in range(2):
        families.draw_params(model.family, stats[t], model.params, rng, theta[t])
        log_w[t] = math.log(sizes[t] / total)


@jit
def set_summaries(model, state, slot_a, slot_b, stats, sizes):
    """Set slots ``slot_a`` and ``slot_b`` to the two sides' sizes and statistics (a pass's sums, anchors included)."""
    for t in range(2):
        target = slot_a if t == 0 else slot_b
        state.sizes[target] = sizes[t]
        for c in range(stats.shape[1]):
            state.stats[target, c] = stats[t, c]
        refresh(model, state, target)
