"""Partially collapsed, sharded sampler for DP and Pitman-Yor mixtures (``papers/002_...``), made exact.

The items are split into ``P`` contiguous *shards*.  One iteration, given the
partition ``Π`` (the paper's Algorithms 4 and 6, with the two changes below):

1. Draw a shard ``P*`` uniformly (the *hot* shard) and a uniformly random
   ranking of the other (*cold*) shards.  A cluster is *instantiated* if it
   has an item on a cold shard; ``A`` is the set of them, ``J = |A|``; the
   other clusters (items on ``P*`` only) form the *tail*, ``n_T`` items.
2. Draw the instantiated weights, the tail mass and parameters from their
   conditional given ``Π`` (Pitman 1996, Corollary 20, aggregated: the
   paper's Lemma 4, eq. (8))::

       (w_a)_{a∈A}, w_T ~ Dirichlet(m_a − σ, α + Jσ + n_T),   θ_a ~ p(θ | x_a)   (draw_params)

   (``σ = 0`` for the DP: Lemma 3).  The tail ``D_T`` is a PY(α + Jσ, σ)
   process given the tail items, kept collapsed.
3. Every cold shard (in parallel) resamples its items among the instantiated
   clusters, uncollapsed: ``p(z_i = a) ∝ w_a f(x_i | θ_a)`` -- restricted,
   see below.
4. The hot shard resamples its items with the collapsed predictive
   (eq. (9) for PY, eq. (7) for the DP with ``σ = 0``)::

       a ∈ A:        w_a f(x_i | θ_a)
       tail c:       w_T (m_c − σ) / (α + Jσ + n_T) · p(x_i | x_c)
       new cluster:  w_T (α + (J + K_T)σ) / (α + Jσ + n_T) · p(x_i)

   with the counts of the other items (``n_T``, ``K_T``: tail items and clusters).
5. Gather per-shard cluster counts and statistics (``P`` rows of ``K``).

**Why it is exact** (derivation in ``docs/exactness.md``).  Each step is a
Gibbs draw, from its exact conditional, in the joint of the partition and the
random measure ``D`` (all items i.i.d. from ``D``), with ``D_T`` and the tail
clusters' parameters integrated out (a partially collapsed Gibbs sampler, van
Dyk & Park 2008): step 2 is ``D | Π``; step 4, for each hot item, draws the
item together with ``D_T`` given the other items and the instantiated part of
``D`` -- valid because ``A`` is a function of the cold items only, which do not
move in step 4.  Step 3 conditions on the set of instantiated clusters and on
each cluster's *anchor*, the first shard in the cold ranking holding one of
its items; the conditional of a cold shard's items given everything else
forbids exactly the moves that would change them: an item may join a cluster
whose anchor ranks no later than its shard, and the last item of a cluster on
its anchor shard stays.  Those constraints are per shard, so the shards are
conditionally independent and update in parallel; step 4 does not read the
cold items' labels, so it runs in parallel with them as well.  The paper's
Algorithm 4 lets cold items empty a cluster and instantiates clusters held by
``P*`` alone; both change the set a conditional is defined on, and on a
4-item problem the paper's version misses the posterior by a total variation
of 0.19 (2 shards) and 0.37 (4 shards).  With one shard every cluster is in
the tail and an iteration is a collapsed Gibbs sweep (Neal 2000, Algorithm 3).

Warm start (§4.1): ``n_hot > 1`` hot shards each open clusters in their own
tail.  That is not a valid MCMC kernel; the steps use it only while PyMC tunes.
``n_sweeps`` repeats steps 3-4 before gathering (fewer synchronisations); each
repetition is the same conditional draw, so it stays exact.

Each shard draws from its own random stream, a function of a seed drawn from
the step's generator and of the shard's index (``kernels.streams``), and every
reduction runs in shard order: the chain depends on ``P`` but not on where or
in which order the shards run (numba threads here, Dask workers in
``pymc_partitions.distributed``).  Per-shard statistics are recomputed from
the labels after every iteration, so an iteration is a function of the labels
it starts from, the plan and the seed.

Functions: :func:`plan_iteration` (steps 1-2), :func:`run_shards` (steps 3-5
for a set of shards, what a Dask worker runs; on numba threads from
``twofold.PARALLEL_MIN_ITEMS`` items), :func:`merge` (new clusters' ids,
canonical labels, per-shard summaries), :func:`shard_summaries`,
:func:`log_joint_of`.  The kernel (``kernels.protocol``): :func:`init` and
:func:`transition`, a *driver* (``kernels.twofold``) that composes them --
compiled, or interpreted with the shards run by the executor in
``sampler.executor`` (``None``: this process; or
``distributed.cluster.DaskShards``), so one iteration is written once
whatever runs the shards.  :func:`iterate` is the iteration's work, which
the sub-cluster split-merge (``kernels.subcluster``) runs as its global move.

References
----------
Dubey, A., Zhang, M. M., Xing, E. P. & Williamson, S. A. (2020). Distributed,
partially collapsed MCMC for Bayesian nonparametrics. AISTATS.
Pitman, J. (1996). Some developments of the Blackwell-MacQueen urn scheme.
van Dyk, D. A. & Park, T. (2008). Partially collapsed Gibbs samplers. JASA 103, 790-796.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import prange

from pymc_partitions import families, priors
from pymc_partitions._dispatch import ADDITIVE
from pymc_partitions._jit import jit
from pymc_partitions.families._common import log_gamma_variate
from pymc_partitions.kernels.clusters import set_log_weights, weight_work, write_all_candidates
from pymc_partitions.kernels.info import MOVE_HYBRID, Move, report
from pymc_partitions.kernels.moves import NEGLIGIBLE_LOG_WEIGHT, exp_normalise, index_at
from pymc_partitions.kernels.protocol import Kernel, Schedule, Support
from pymc_partitions.kernels.streams import stream, uniform
from pymc_partitions.kernels.twofold import driver, entry, executed, threaded
from pymc_partitions.state import (
    Model, ModelArrays, add_items, build_partial_state, empty_state, link_all, log_joint, open_slot, refresh_all,
    remove_item,
)

Options = namedtuple("Options", ["n_shards", "n_sweeps", "warm_start", "executor"], defaults=(0, None))
Options.__doc__ = """Options of one hybrid iteration (``HybridDPStep``).

n_shards : int     shards ``P`` (contiguous blocks of items); the chain depends on it
n_sweeps : int     sweeps of every shard between two synchronisations (``sync_every``)
warm_start : int   tuning transitions over which the hot shards go from all to one (:func:`warm_start_shards`;
                   default 0: one hot shard throughout)
executor : None or object
                   where the shards run (``kernels.protocol.Executor``; default ``None``: this process), put in
                   the sampler state by :func:`init`
"""

Plan = namedtuple("Plan", ["role", "anchor", "log_weight", "theta", "log_tail", "tail_params", "seed"])
Plan.__doc__ = """What the driver sends every shard for one iteration (steps 1-2), O(K p).

role : int64[P]           rank of each cold shard in the iteration's ranking, -1 for a hot shard
anchor : int64[K]         rank of the anchor shard of each instantiated cluster, -1 for a tail cluster
log_weight : float64[K]   log w_a of each instantiated cluster
theta : float64[K, p]     θ_a of each instantiated cluster (``families.draw_params`` layout; locations
                          relative to ``model.origin``, like the model's data)
log_tail : float          log w_T, the tail mass
tail_params : float64[:]  the prior's parameters for the tail process: α + Jσ in place of α
seed : int                the iteration's seed of the shards' random streams
"""


@jit
def shard_bounds(n, n_shards):
    """``bounds[s]:bounds[s + 1]`` are the items of shard ``s``: contiguous, sizes differing by at most one."""
    bounds = np.empty(n_shards + 1, dtype=np.int64)
    for s in range(n_shards + 1):
        bounds[s] = (s * n) // n_shards
    return bounds


# --------------------------------------------------------------------------- steps 1-2: the driver


@jit
def plan_iteration(model, counts, stats, n_hot, rng):
    """Steps 1-2: choose the hot shards, the cold ranking and the anchors; draw weights and parameters.

    ``counts[s, k]`` and ``stats[s, k]`` are shard ``s``'s count and
    statistics of cluster ``k``.  With ``n_hot = 1`` this is the exact
    kernel's draw (module docstring); with more hot shards (warm start) a
    cluster held by two or more hot shards and no cold one is instantiated
    with an anchor no cold shard reaches.  Draws from ``rng`` in a fixed
    order: the shard permutation, the Dirichlet weights (cluster order, tail
    last), the parameters, the seed.
    """
    n_shards, k = counts.shape
    order = np.arange(n_shards)
    for q in range(n_shards - 1, 0, -1):  # Fisher-Yates: the first n_hot are hot, the rest ranked
        j = min(int(rng.random() * (q + 1)), q)
        order[q], order[j] = order[j], order[q]
    role = np.empty(n_shards, dtype=np.int64)
    for q in range(n_shards):
        role[order[q]] = -1 if q < n_hot else q - n_hot
    n_cold = n_shards - n_hot
    anchor = np.full(k, -1, dtype=np.int64)
    sizes = np.zeros(k, dtype=np.int64)
    n_tail = 0
    for c in range(k):
        best, hot_holders = n_cold, 0
        for s in range(n_shards):
            sizes[c] += counts[s, c]
            if counts[s, c] > 0:
                if role[s] >= 0:
                    best = min(best, role[s])
                else:
                    hot_holders += 1
        if best < n_cold or hot_holders > 1:
            anchor[c] = best
        else:
            n_tail += sizes[c]
    sigma = -priors.size_shift(model.prior, model.prior_params)
    tail_params = model.prior_params.copy()
    n_instantiated = 0
    for c in range(k):
        n_instantiated += anchor[c] >= 0
    tail_params[0] += n_instantiated * sigma
    log_weight = np.full(k, -np.inf)
    log_tail = log_gamma_variate(rng, tail_params[0] + n_tail)
    top = log_tail
    for c in range(k):
        if anchor[c] >= 0:
            log_weight[c] = log_gamma_variate(rng, sizes[c] - sigma)
            top = max(top, log_weight[c])
    total = math.exp(log_tail - top)
    for c in range(k):
        if anchor[c] >= 0:
            total += math.exp(log_weight[c] - top)
    log_norm = top + math.log(total)
    log_tail -= log_norm
    theta = np.zeros((k, families.param_size(model.family, model.data.shape[1])))
    cluster_stats = np.empty(stats.shape[2])
    for c in range(k):
        if anchor[c] >= 0:
            log_weight[c] -= log_norm
            cluster_stats[:] = 0.0
            for s in range(n_shards):  # shard order: the same sum on every backend
                for r in range(cluster_stats.shape[0]):
                    cluster_stats[r] += stats[s, c, r]
            families.draw_params(model.family, cluster_stats, model.params, rng, theta[c])
    seed = np.int64(rng.random() * 2.0**53)
    return Plan(role, anchor, log_weight, theta, log_tail, tail_params, seed)


# --------------------------------------------------------------------------- steps 3-5: the shards


@driver
def run_shards(model, labels, bounds, shards, plan, n_sweeps, n_clusters):
    """Steps 3-5 for the shards ``shards`` (global indices) whose items are ``bounds[q]:bounds[q+1]``.

    ``model.data`` and ``labels`` hold those shards' items (labels in
    ``0..n_clusters-1``, updated in place; a hot shard's new clusters get
    ``n_clusters, n_clusters + 1, ...`` in order of first appearance on the
    shard).  Returns ``(new, offsets, counts, stats)``: ``new[q]`` new
    clusters of shard ``q``, and its summaries over its labels in rows
    ``offsets[q] + c`` of ``counts`` and ``stats`` (``c < n_clusters + new[q]``).
    From ``twofold.PARALLEL_MIN_ITEMS`` items on the shards run on numba
    threads (:func:`sweep_shards`), below one after the other; the result is the same.
    """
    arrays = ModelArrays(
        model.data, model.params, model.prior, model.prior_params, model.log_v_table, model.empty_cache, model.origin
    )
    return sweep_shards(model.family, arrays, labels, bounds, shards, plan, n_sweeps, n_clusters)


@threaded("labels")
def sweep_shards(family, arrays, labels, bounds, shards, plan, n_sweeps, n_clusters):
    """:func:`run_shards` on every shard of ``shards``, in parallel (``prange``) from Python on many items.

    The model comes as its family tag and its ``state.ModelArrays``: numba's
    parallel loops take a family tag only as an argument of their own, not
    inside a named tuple.  The arrays the shards write (``labels`` and the
    outputs) are arguments of their own too, not fields of a named tuple, in
    which a parallel loop's writes can be lost.
    """
    new, offsets, counts, stats = _shard_outputs(family, arrays.data, bounds, shards, plan.role, n_clusters)
    for q in prange(shards.shape[0]):
        items, rows = slice(bounds[q], bounds[q + 1]), slice(offsets[q], offsets[q + 1])
        new[q] = _shard_task(
            family, arrays, plan, shards[q], items, labels[items], counts[rows], stats[rows], n_sweeps, n_clusters
        )
    return new, offsets, counts, stats


@jit
def _shard_outputs(family, data, bounds, shards, role, n_clusters):
    """The outputs of :func:`run_shards`, zeroed: a hot shard gets rows for ``n_clusters`` plus one per item
    (the most it can open), a cold shard ``n_clusters``."""
    n_local = shards.shape[0]
    offsets = np.zeros(n_local + 1, dtype=np.int64)
    for q in range(n_local):
        hot = role[shards[q]] < 0
        offsets[q + 1] = offsets[q] + n_clusters + (bounds[q + 1] - bounds[q] if hot else 0)
    counts = np.zeros(offsets[n_local], dtype=np.int64)
    stats = np.zeros((offsets[n_local], families.stat_size(family, data.shape[1])))
    return np.zeros(n_local, dtype=np.int64), offsets, counts, stats


@jit(inline="always")  # one call site each (with sweep_shard): no compiled level of their own (kernels.twofold)
def _shard_task(family, arrays, plan, shard, items, labels, counts, stats, n_sweeps, n_clusters):
    """Shard ``shard``, the model's rows ``items`` (a slice) with labels ``labels``: its sweeps, then its summaries
    into its rows ``counts`` and ``stats``; returns its number of new clusters."""
    data = arrays.data[items]
    shard_model = Model(
        family, data, arrays.params, arrays.prior, arrays.prior_params, arrays.log_v_table, arrays.empty_cache,
        arrays.origin,
    )
    new = sweep_shard(shard_model, labels, plan, shard, n_sweeps, n_clusters)
    add_summaries(family, data, labels, counts, stats)
    return new


@jit(inline="always")
def sweep_shard(model, labels, plan, shard, n_sweeps, n_clusters):
    """``n_sweeps`` sweeps of one shard (step 3 if it is cold, step 4 if hot); returns its number of new clusters.

    ``model`` holds the shard's items (its ``prior_params`` are not read: the
    tail's are the plan's), ``labels`` their labels, updated in place.
    """
    rank = plan.role[shard]
    state = stream(plan.seed, shard)
    if rank >= 0:
        _restricted_sweeps(model, labels, plan, rank, n_sweeps, n_clusters, state)
        return 0
    return _collapsed_sweeps(model, labels, plan, n_sweeps, n_clusters, state)


@jit(inline="always")
def _draw(log_weights, count, scratch, state):
    """Index drawn ∝ ``exp(log_weights[:count])`` with a uniform from the stream ``state``."""
    _, total = exp_normalise(log_weights, count, scratch)
    return index_at(scratch, count, uniform(state) * total)


DENSITY_BLOCK = 256
"""Items per block of a cold shard's log densities (``families.log_densities``, :func:`_restricted_sweeps`)."""

SCREEN_SLACK = 1.0
"""Nats added to :func:`loop_weights_near_top`'s screen besides the block's rounding bound: they absorb the
rounding of adding the log weights (below 1 nat for log weights under 2^50 in magnitude)."""

DENSE_MAX_SHARE = 0.5
"""A cold shard skips the matrix products for its next blocks when more than this share of a block's entries had
to be recomputed item by item (every cluster plausible for most items: the products would be wasted work)."""

PROBE_PERIOD = 8
"""After a block with too many recomputed entries (:data:`DENSE_MAX_SHARE`), one block in this many tries the
matrix products again."""


@jit
def _restricted_sweeps(model, labels, plan, rank, n_sweeps, n_clusters, state):
    """Step 3 on a cold shard of rank ``rank``: ``p(z_i = a) ∝ w_a f(x_i | θ_a)`` over the clusters it may join.

    Allowed: instantiated clusters whose anchor rank is at most ``rank``;
    the last item on this shard of a cluster anchored here stays.  The
    log densities of :data:`DENSITY_BLOCK` items at a time under the allowed
    clusters are one block of matrix products (``families.log_densities``),
    the few that matter recomputed item by item (:func:`loop_weights_near_top`),
    so the draws are those of a loop of ``families.log_density``, bit for bit.
    While most entries need recomputing (clusters that all fit most items,
    as from a random start) the blocks skip the products
    (:data:`DENSE_MAX_SHARE`, :data:`PROBE_PERIOD`); the draws are the same.
    """
    allowed = np.empty(n_clusters, dtype=np.int64)
    m = 0
    for c in range(n_clusters):
        if 0 <= plan.anchor[c] <= rank:
            allowed[m] = c
            m += 1
    counts = np.zeros(n_clusters, dtype=np.int64)
    n = labels.shape[0]
    for i in range(n):
        counts[labels[i]] += 1
    theta = np.empty((m, plan.theta.shape[1]))
    log_weight = np.empty(m)
    for c in range(m):
        log_weight[c] = plan.log_weight[allowed[c]]
        for r in range(theta.shape[1]):
            theta[c, r] = plan.theta[allowed[c], r]
    densities = np.empty((min(n, DENSITY_BLOCK), m))
    log_weights = np.empty(m)
    scratch = np.empty(m)
    since_dense = 0  # blocks since the last one computed by matrix products
    dense = True
    for _ in range(n_sweeps):
        for lo in range(0, n, DENSITY_BLOCK):
            hi = min(n, lo + DENSITY_BLOCK)
            if dense or since_dense + 1 >= PROBE_PERIOD:
                bound = families.log_densities(model.family, theta, model.data[lo:hi], model.params, densities[: hi - lo])
                since_dense = 0
            else:
                bound = np.inf  # no block values: every entry from the loop
                since_dense += 1
            recomputed = 0
            for i in range(lo, hi):
                old = labels[i]
                if plan.anchor[old] == rank and counts[old] == 1:
                    continue
                recomputed += loop_weights_near_top(
                    model, theta, log_weight, densities[i - lo], bound, model.data[i], log_weights
                )
                new = allowed[_draw(log_weights, m, scratch, state)]
                counts[old] -= 1
                counts[new] += 1
                labels[i] = new
            if since_dense == 0:
                dense = recomputed <= DENSE_MAX_SHARE * (hi - lo) * m


@jit
def loop_weights_near_top(model, theta, log_weight, densities, bound, x, out):
    """``out[c] = log_weight[c] + log f(x | θ_c)`` from an item's block densities (``families.log_densities``, within
    ``bound`` of the loop's), with every entry that could come within ``exp(NEGLIGIBLE_LOG_WEIGHT)`` of the largest
    recomputed by ``families.log_density``; returns the number recomputed.

    Entries below ``top + NEGLIGIBLE_LOG_WEIGHT − SCREEN_SLACK − 2 bound``
    (``top`` the largest block value) keep their block value.  Those are
    below the largest weight by more than ``−NEGLIGIBLE_LOG_WEIGHT`` both in
    the block values and in the loop's, since the loop's largest entry is
    recomputed: ``moves.exp_normalise`` sets them to 0 either way, and every
    other entry is the loop's value.  A draw from ``out`` is therefore the
    draw of the per-item loop, bit for bit, at the cost of the block products
    and a few ``log_density`` calls per item (one for well-separated
    clusters, all of them when every cluster is plausible).  With ``bound``
    infinite every entry comes from the loop (``densities`` is not read).
    """
    count = out.shape[0]
    cutoff = -np.inf
    if bound < np.inf:
        top = -np.inf
        for c in range(count):
            out[c] = log_weight[c] + densities[c]
            top = max(top, out[c])
        cutoff = top + NEGLIGIBLE_LOG_WEIGHT - SCREEN_SLACK - 2.0 * bound
    recomputed = 0
    for c in range(count):
        if bound == np.inf or not out[c] < cutoff:  # NaN and everything near the top: the loop's value
            out[c] = log_weight[c] + families.log_density(model.family, theta[c], x, model.params)
            recomputed += 1
    return recomputed


HOT_BLOCK_MIN_PARAMS = 1_000
"""From this many entries of a parameter row θ (the Normal-inverse-Wishart from d = 31 on) the hot shard takes its
items' log densities under the instantiated clusters from blocks of matrix products, as the cold shards do
(:func:`_collapsed_sweeps`); below, item by item."""


@jit
def _collapsed_sweeps(model, labels, plan, n_sweeps, n_clusters, state):
    """Step 4 on a hot shard: instantiated clusters uncollapsed, the tail collapsed (module docstring).

    With θ of :data:`HOT_BLOCK_MIN_PARAMS` entries or more, the instantiated
    clusters' ``w_a f(x_i | θ_a)`` come from :data:`DENSITY_BLOCK` items at a
    time by ``families.log_densities``, the entries within reach of the
    largest recomputed item by item (:func:`loop_weights_near_top`): an entry
    it keeps is below the largest instantiated weight, hence below the
    largest of all, by more than ``−NEGLIGIBLE_LOG_WEIGHT``, and
    ``moves.exp_normalise`` sets it to 0 either way, so the draws are the
    loop's, bit for bit.

    The tail clusters live in a partition state of the shard's items under
    the tail process's prior (``plan.tail_params``), in which items of
    instantiated clusters are unplaced; ``clusters.set_log_weights`` gives
    the tail options' ``log[(m_c − σ) p(x_i | x_c)]`` and
    ``log[(α + (J + K_T)σ) p(x_i)]``.  Returns the number of new clusters.
    """
    model = Model(
        model.family, model.data, model.params, model.prior, plan.tail_params, model.log_v_table, model.empty_cache,
        model.origin,
    )
    n = labels.shape[0]
    instantiated = np.flatnonzero(plan.anchor >= 0)
    n_inst = instantiated.shape[0]
    tail_labels = np.empty(n, dtype=np.int64)
    n_tail = 0
    for i in range(n):
        tail_labels[i] = labels[i] if plan.anchor[labels[i]] < 0 else -1
        n_tail += tail_labels[i] >= 0
    tail = build_partial_state(model, tail_labels)
    cluster_of_slot = np.full(tail.sizes.shape[0], -1, dtype=np.int64)
    for i in range(n):
        if tail_labels[i] >= 0:
            cluster_of_slot[tail.labels[i]] = tail_labels[i]
    one = np.empty(1, dtype=np.int64)
    work = weight_work(tail)
    candidates = np.empty(0, dtype=np.int64)
    log_weights = np.empty(0)
    scratch = np.empty(0)
    blocked = n_inst > 0 and plan.theta.shape[1] >= HOT_BLOCK_MIN_PARAMS
    inst_theta = np.empty((n_inst if blocked else 0, plan.theta.shape[1]))
    inst_log_weight = np.empty(inst_theta.shape[0])
    for j in range(inst_theta.shape[0]):
        inst_log_weight[j] = plan.log_weight[instantiated[j]]
        for r in range(plan.theta.shape[1]):
            inst_theta[j, r] = plan.theta[instantiated[j], r]
    densities = np.empty((min(n, DENSITY_BLOCK) if blocked else 0, n_inst))
    bound = np.inf
    for _ in range(n_sweeps):
        for i in range(n):
            if blocked and i % DENSITY_BLOCK == 0:  # the instantiated clusters' θ stay fixed during the sweeps
                hi = min(n, i + DENSITY_BLOCK)
                bound = families.log_densities(model.family, inst_theta, model.data[i:hi], model.params, densities[: hi - i])
            if tail.labels[i] >= 0:
                remove_item(model, tail, i)
                n_tail -= 1
            if candidates.shape[0] < tail.sizes.shape[0] + 1:  # the tail's capacity grew
                candidates = np.empty(tail.sizes.shape[0] + 1, dtype=np.int64)
                log_weights = np.empty(n_inst + candidates.shape[0])
                scratch = np.empty_like(log_weights)
                cluster_of_slot = _grown(cluster_of_slot, tail.sizes.shape[0])
            x = model.data[i]
            if blocked:  # the loop's values, bit for bit, wherever they matter (loop_weights_near_top)
                loop_weights_near_top(
                    model, inst_theta, inst_log_weight, densities[i % DENSITY_BLOCK], bound, x, log_weights[:n_inst]
                )
            else:
                for j in range(n_inst):
                    a = instantiated[j]
                    log_weights[j] = plan.log_weight[a] + families.log_density(model.family, plan.theta[a], x, model.params)
            n_candidates = write_all_candidates(tail, candidates)
            one[0] = i
            set_log_weights(model, tail, one, 1, candidates, n_candidates, log_weights[n_inst:], work)
            shift = plan.log_tail - math.log(plan.tail_params[0] + n_tail)
            for c in range(n_candidates):
                log_weights[n_inst + c] += shift
            pick = _draw(log_weights, n_inst + n_candidates, scratch, state)
            if pick < n_inst:
                labels[i] = instantiated[pick]
                continue
            target = candidates[pick - n_inst]
            tail, slot = add_items(model, tail, target, one, 1)
            n_tail += 1
            if target < 0:
                cluster_of_slot = _grown(cluster_of_slot, tail.sizes.shape[0])
                cluster_of_slot[slot] = -1  # a new cluster (the slot may have held an emptied one)
    new = 0
    for i in range(n):
        slot = tail.labels[i]
        if slot >= 0:
            if cluster_of_slot[slot] < 0:
                cluster_of_slot[slot] = n_clusters + new
                new += 1
            labels[i] = cluster_of_slot[slot]
    return new


@jit
def _grown(values, length):
    """``values`` extended with -1 to at least ``length`` entries (the same array if long enough)."""
    if values.shape[0] >= length:
        return values
    out = np.full(length, -1, dtype=values.dtype)
    for q in range(values.shape[0]):
        out[q] = values[q]
    return out


@jit(inline="always")
def add_summaries(family, data, labels, counts, stats):
    """Add each item's count and statistics to row ``labels[i]`` of ``counts`` and ``stats``, in item order."""
    item = np.empty(stats.shape[1])
    for i in range(labels.shape[0]):
        counts[labels[i]] += 1
        families.item_stats(family, data[i], item)
        for r in range(item.shape[0]):
            stats[labels[i], r] += item[r]


@jit
def shard_summaries(model, labels, bounds, n_clusters):
    """Per-shard summaries of labels in ``0..n_clusters-1``: ``counts[s, k]`` and ``stats[s, k]``.

    The same sums, in the same order, as the shards compute after a sweep.
    """
    n_shards = bounds.shape[0] - 1
    width = families.stat_size(model.family, model.data.shape[1])
    counts = np.zeros((n_shards, n_clusters), dtype=np.int64)
    stats = np.zeros((n_shards, n_clusters, width))
    for s in range(n_shards):
        b0, b1 = bounds[s], bounds[s + 1]
        add_summaries(model.family, model.data[b0:b1], labels[b0:b1], counts[s], stats[s])
    return counts, stats


# --------------------------------------------------------------------------- after the shards: the driver


@jit
def merge(labels, bounds, new, offsets, counts, stats, n_clusters):
    """Canonical labels and per-shard summaries after :func:`run_shards` (over all shards, in order).

    New clusters of shard ``s`` get global ids after those of shards
    ``< s``; clusters are then renumbered in order of first appearance and
    empty ones dropped.  Returns ``(z, shard_counts, shard_stats, relabel)``:
    ``z`` canonical (int32), ``shard_counts[s, k]`` and ``shard_stats[s, k]``,
    and ``relabel[offsets[s] + c]`` the canonical label of shard ``s``'s label
    ``c`` (-1 if empty), which a shard holding its own labels applies before
    the next iteration.
    """
    n_shards = bounds.shape[0] - 1
    base = np.empty(n_shards, dtype=np.int64)
    total = n_clusters
    for s in range(n_shards):
        base[s] = total - n_clusters
        total += new[s]
    canonical = np.full(total, -1, dtype=np.int64)
    z = np.empty(labels.shape[0], dtype=np.int32)
    k = 0
    for s in range(n_shards):
        for i in range(bounds[s], bounds[s + 1]):
            g = labels[i] if labels[i] < n_clusters else labels[i] + base[s]
            if canonical[g] < 0:
                canonical[g] = k
                k += 1
            z[i] = canonical[g]
    shard_counts = np.zeros((n_shards, k), dtype=np.int64)
    shard_stats = np.zeros((n_shards, k, stats.shape[1]))
    relabel = np.full(offsets[n_shards], -1, dtype=np.int64)
    for s in range(n_shards):
        for c in range(n_clusters + new[s]):
            row = offsets[s] + c
            label = canonical[c if c < n_clusters else c + base[s]]
            relabel[row] = label
            if label >= 0:
                shard_counts[s, label] = counts[row]
                for r in range(stats.shape[1]):
                    shard_stats[s, label, r] = stats[row, r]
    return z, shard_counts, shard_stats, relabel


@jit
def log_joint_of(model, shard_counts, shard_stats):
    """``log p(Π) + log p(x | Π)`` from per-shard summaries (clusters summed in shard order)."""
    n_shards, k = shard_counts.shape
    cluster_stats = np.empty(shard_stats.shape[2])
    n = 0
    total = 0.0
    for c in range(k):
        size = 0
        cluster_stats[:] = 0.0
        for s in range(n_shards):
            size += shard_counts[s, c]
            for r in range(cluster_stats.shape[0]):
                cluster_stats[r] += shard_stats[s, c, r]
        n += size
        total += priors.log_w(model.prior, model.prior_params, size)
        total += families.log_marginal(model.family, cluster_stats, model.params)
    return total + priors.log_v(model.prior, model.prior_params, model.log_v_table, n, k)


# --------------------------------------------------------------------------- the kernel: one iteration, a driver

Sampler = namedtuple("Sampler", ["options", "bounds", "n_hot", "executor", "z", "counts", "stats"])
Sampler.__doc__ = """The hybrid sampler's state besides the partition (:func:`init`).

options : Options        ``n_shards``, ``n_sweeps``
bounds : int64[P + 1]    the shards' items, ``bounds[s]:bounds[s + 1]`` (:func:`shard_bounds`)
n_hot : int64            hot shards: 1 (exact); more only for a warm start while PyMC tunes (``HybridDPStep``
                         sets it before each iteration)
executor : None or object
                         where the shards run (``kernels.protocol.Executor``): ``None`` in this process (what
                         :func:`init` gives and the compiled driver needs), or ``distributed.cluster.DaskShards``
z : int32[n]             the canonical labels the last iteration gave (empty before the first) ...
counts : int64[P, K]     ... and their per-shard sizes ...
stats : float64[P, K, s] ... and statistics: the next iteration's summaries while the state is that iteration's
"""


def init(model, labels, options, rng):
    """The sampler state for ``labels`` (their number fixes the shards): one hot shard, the options' executor.

    ``options.n_shards`` must be in ``1..n``; ``model``'s prior must be a
    DP or Pitman-Yor prior.  ``rng`` is not used.
    """
    bounds = checked_bounds(model, labels.shape[0], options.n_shards, True)
    no_counts, no_stats = np.zeros((0, 0), dtype=np.int64), np.zeros((0, 0, 0))
    return Sampler(options, bounds, np.int64(1), options.executor, np.zeros(0, dtype=np.int32), no_counts, no_stats)


def checked_bounds(model, n, n_shards, hybrid_iteration):
    """:func:`shard_bounds` for ``n`` items in numpy (for Python callers: no compilation), after checking that
    ``n_shards`` is in ``1..n`` and, if the sampler runs the ``hybrid_iteration``, that the prior is a DP or PY."""
    if n_shards < 1 or n_shards > n:
        raise ValueError(f"n_shards must be between 1 and the number of items ({n}), got {n_shards}")
    if hybrid_iteration and model.prior != priors.DP and model.prior != priors.PY:
        raise ValueError("the hybrid iteration needs a DP or Pitman-Yor prior")
    return (np.arange(n_shards + 1, dtype=np.int64) * n) // n_shards


@driver
def transition(model, state, sampler, rng):
    """One iteration (module docstring, steps 1-5) from ``state``: ``(state, sampler, Info)``.

    ``Info``: ``MOVE_HYBRID``, always accepted; ``log_target_ratio`` the
    change in log posterior (``log_proposal_ratio`` its negative); the new
    state is built from the canonical labels and the shards' summaries
    (:func:`state_from_summaries`).
    """
    state = begin(sampler, model, state)
    before = log_joint(model, state)
    k_before = state.n_clusters[0]
    if is_result(state, sampler.z, sampler.counts):  # the last iteration's summaries are this state's
        labels, counts, stats = sampler.z.astype(np.int64), sampler.counts, sampler.stats
    else:
        labels, counts, stats = summarize(sampler, model, state)
    state, z, counts, stats = sweep_summaries(model, sampler, labels, counts, stats, sampler.options.n_sweeps, rng)
    state = finish(sampler, model, state)
    change = log_joint(model, state) - before
    info = report(model, state, Move(MOVE_HYBRID, True, 1.0, change, -change, state.n_clusters[0] - k_before))
    options, bounds, n_hot, executor = sampler.options, sampler.bounds, sampler.n_hot, sampler.executor
    return state, Sampler(options, bounds, n_hot, executor, z, counts, stats), info


def hot_shards(n_shards, warm_start, tuning_step):
    """Shards that may open clusters at a transition after ``tuning_step`` tuning transitions (``-1``: PyMC is not
    tuning): one, or over the first ``warm_start`` tuning transitions from all ``n_shards`` down to one (the
    paper's warm start, Sec. 4.1; not a valid MCMC kernel, so never after tuning)."""
    if tuning_step < 0 or tuning_step >= warm_start:
        return 1
    remaining = 1.0 - tuning_step / warm_start
    return max(1, int(np.ceil(n_shards * remaining)))


def warm_start_shards(sampler, tuning_step):
    """The tuning schedule's ``prepare`` (``kernels.protocol.Schedule``): ``sampler`` with the hot shards of
    :func:`hot_shards` for its options (the hybrid's and the sub-cluster sampler's)."""
    options = sampler.options
    return sampler._replace(n_hot=np.int64(hot_shards(options.n_shards, options.warm_start, tuning_step)))


KERNEL = Kernel(
    init, entry(transition), Options, Support((ADDITIVE,), priors=(priors.DP, priors.PY)),
    schedule=Schedule(prepare=warm_start_shards),
)
"""The hybrid sampler (``HybridDPStep``), its driver run as ``twofold.entry`` says: compiled for a small problem in
this process, else interpreted."""


@driver
def iterate(model, state, sampler, n_sweeps, rng):
    """The iteration's work on ``state``, ``n_sweeps`` sweeps of every shard (``sampler``: ``bounds``,
    ``n_hot`` and ``executor``, the sub-cluster sampler's too): the new state.

    Per-shard summaries of the state (clusters numbered by their position in
    ``state.slots``, :func:`summaries`), then :func:`sweep_summaries`.
    """
    labels, counts, stats = summarize(sampler, model, state)
    return sweep_summaries(model, sampler, labels, counts, stats, n_sweeps, rng)[0]


@driver
def sweep_summaries(model, sampler, labels, counts, stats, n_sweeps, rng):
    """From cluster numbers ``labels`` and their per-shard summaries: the driver's plan (:func:`plan_iteration`),
    the sweeps and the merge (:func:`sweep`); returns the state built from the canonical labels and the shards'
    summaries, and those: ``(state, z, shard_counts, shard_stats)``."""
    plan = plan_iteration(model, counts, stats, sampler.n_hot, rng)
    z, shard_counts, shard_stats = sweep(sampler, model, labels, plan, n_sweeps, counts.shape[1])
    return state_from_summaries(model, z, shard_counts, shard_stats), z, shard_counts, shard_stats


@jit
def is_result(state, z, counts):
    """Whether ``state`` is the one :func:`state_from_summaries` built from canonical labels ``z`` with per-shard
    ``counts`` (its labels, cluster ``k`` in slot ``k`` at position ``k``): then its per-shard summaries are those
    the shards computed, the same sums in the same order as :func:`summaries` would give.  O(n)."""
    n, k = state.labels.shape[0], counts.shape[1]
    if z.shape[0] != n or state.n_clusters[0] != k:
        return False
    for c in range(k):
        if state.slots[c] != c:
            return False
    for h in range(n):
        if state.labels[h] != z[h]:
            return False
    return True


@jit
def state_from_summaries(model, z, shard_counts, shard_stats):
    """The additive state of canonical labels ``z``: cluster ``k`` in slot ``k``, its statistics summed over shards.

    The same partition as ``build_state(model, z)``, with the statistics
    summed per shard (item order) and then in shard order, as the shards sum
    them; member lists in increasing item order.  O(n + K s).
    """
    n = z.shape[0]
    n_shards, k = shard_counts.shape
    state = empty_state(model, n, max(4, 2 * k))
    for c in range(k):
        slot = open_slot(state)
        for s in range(n_shards):
            state.sizes[slot] += shard_counts[s, c]
            for r in range(shard_stats.shape[2]):
                state.stats[slot, r] += shard_stats[s, c, r]
    for h in range(n):
        state.labels[h] = z[h]
    link_all(state)
    refresh_all(model, state)
    return state


# --------------------------------------------------------------------------- executor operations (this process)


@executed
def begin(sampler, model, state):
    """Start an iteration from ``state``; returns it.  (An executor holding labels elsewhere takes ``state.labels``
    if they are not the ones it holds.)"""
    return state


@executed
def summarize(sampler, model, state):
    """Cluster numbers (the position of each item's slot) and the per-shard summaries of the hybrid iteration:
    ``(labels, counts[P, K], stats[P, K, s])``."""
    bounds = sampler.bounds
    k = state.n_clusters[0]
    labels = np.empty(state.labels.shape[0], dtype=np.int64)
    counts = np.zeros((bounds.shape[0] - 1, k), dtype=np.int64)
    stats = np.zeros((bounds.shape[0] - 1, k, state.stats.shape[1]))
    summarize_shards(model.family, model.data, state.labels, state.position, bounds, labels, counts, stats)
    return labels, counts, stats


@executed
def sweep(sampler, model, labels, plan, n_sweeps, n_clusters):
    """Steps 3-5 on every shard from cluster numbers ``labels`` (:func:`summarize`), then the merge:
    ``(z, shard_counts, shard_stats)``, canonical labels and their per-shard summaries."""
    bounds = sampler.bounds
    shards = np.arange(bounds.shape[0] - 1)
    new, offsets, counts, stats = run_shards(model, labels, bounds, shards, plan, n_sweeps, n_clusters)
    z, shard_counts, shard_stats, _ = merge(labels, bounds, new, offsets, counts, stats, n_clusters)
    return z, shard_counts, shard_stats


@executed
def finish(sampler, model, state):
    """End an iteration: ``state`` with the labels the iteration's moves gave (here already there)."""
    return state


@threaded("labels")
def summarize_shards(family, data, slot_labels, position, bounds, labels, counts, stats):
    """Per shard: cluster numbers ``labels[h] = position[slot_labels[h]]`` and their counts and statistics
    (:func:`shard_summaries`'s sums, in its order)."""
    for s in prange(bounds.shape[0] - 1):
        lo, hi = bounds[s], bounds[s + 1]
        for h in range(lo, hi):
            labels[h] = position[slot_labels[h]]
        add_summaries(family, data[lo:hi], labels[lo:hi], counts[s], stats[s])
