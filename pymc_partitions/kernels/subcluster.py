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
   * the launch is ``L = (θ_0, θ_1, w_0, w_1)`` drawn once more from the
     last sub-clusters.

2. *Final pass* (:func:`final_pass`): ``p_h(t) = w_t f(x_h | θ_t) / Σ_u w_u f(x_h | θ_u)``
   for every ``h ∈ R``, independently, and ``q(S_0, S_1 | L) = Π_{h ∈ R} p_h(side of h)``.

3. If ``z_i = z_j``: draw the sides from step 2, propose the split
   ``{S_0, S_1}`` and accept with ``min(1, [π(split)/π(z)] / q(split | L))``.
   Otherwise propose the merge and accept with
   ``min(1, [π(merge)/π(z)] q(current split | L))``, the final pass forced to
   the current split.  ``π`` is the collapsed posterior
   ``V(n, K) Π_c W(|c|) p(x_c)``; for every launch ``L`` the pair of moves is
   a reversible pair (Jain & Neal 2004, Sec. 3), and ``L`` has the same law
   from both ends, so the mixture over ``L`` and over pairs is reversible.
   A merge draws its uniform ``u`` first and is rejected before any launch
   when ``log u >= log[π(merge)/π(z)]``: ``log q <= 0``, so the decision is
   the one the full ratio would give.

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

Parallel work and the chain.  The per-item work is done in *passes* over
the items of ``R`` split by the ``n_shards`` contiguous *global* shards of
the hybrid sampler (``hybrid.shard_bounds``); each item's uniform is keyed
by the pass's seed and the item's index (``streams.keyed_uniform``) and the
per-shard sums are reduced in shard order, while the *driver* (the
functions decorated with :func:`driver`) draws the seeds, parameters and
decisions from the step's generator.  The driver is one source run two ways:
compiled (:func:`compiled`: ``compiled("transition")``, what
:func:`run_chain` and ``kernels.chain`` run), with every pass run serially; or
interpreted, when Python calls it, with the passes over
:data:`PARALLEL_MIN_ITEMS` items or more on numba threads (the functions
decorated with :func:`twofold`).  numba's threaded loops are only ever
called from Python: a cached compiled function calling a ``parallel=True``
one can crash when it is loaded from the cache (numba issue #8578; seen
here).  Both ways draw the same random numbers in the same order, so the
chain is a function of the seed and ``n_shards`` only (tested bit for
bit).

Executors.  Everything the driver does to items goes through nine
*operations* (the functions decorated with :func:`executed`):
:func:`begin` and :func:`finish` (an iteration's ends), :func:`item_slots`
(the clusters of a pair), :func:`select` (a proposal's items),
:func:`pair_pass` (a pass: per-shard sums), :func:`assign` (apply a
pass's sides: an accepted split, a restricted sweep), :func:`merge_items`,
and the global move's :func:`summarize` and :func:`sweep`.  The driver keeps
the clusters' sizes and statistics (its ``state``'s slots) and decides;
``algo_state.executor`` does the operations: ``None`` here, on the state's
labels and member lists (the code of this module; the compiled twin always
does that), or an object with methods of the same names, e.g.
``distributed.cluster.DaskSubclusterShards``, whose workers hold their
shards' rows and labels.  A pass's sides are a function of its seed and
each item's index, so a worker applies an accepted split from the pass's
O(p) parameters and seed, without item lists: per iteration O(s) bytes per
shard and pass and O(K s) per shard for the global move cross the network,
plus the labels once.

Interface: :class:`Options`, :func:`init` ``(model, state, options, rng) ->
AlgoState``, :func:`transition` ``(model, state, algo_state, rng) -> (state,
algo_state, Info)`` with ``Info.move = MOVE_SUBCLUSTER``; :func:`run_chain`
runs a chain of it, interleaved with Gibbs sweeps if asked (enumeration tests,
benchmarks; ``compiled("run_chain")`` in one compiled call).

References
----------
Chang, J. & Fisher III, J. W. (2013). Parallel sampling of DP mixture models
using sub-cluster splits. NIPS 26.
Jain, S. & Neal, R. M. (2004). A split-merge Markov chain Monte Carlo procedure
for the Dirichlet process mixture model. JCGS 13(1), 158-182.
Dubey, A., Zhang, M. M., Xing, E. P. & Williamson, S. A. (2020). Distributed,
partially collapsed MCMC for Bayesian nonparametrics. AISTATS.
"""

from __future__ import annotations

import math
import types
from collections import namedtuple

import numpy as np
from numba import prange

from pymc_partitions import families, priors
from pymc_partitions._jit import jit
from pymc_partitions.families._common import log_gamma_variate
from pymc_partitions.kernels import gibbs, hybrid
from pymc_partitions.kernels.background import random_pair
from pymc_partitions.kernels.clusters import (
    cluster_log_weight, log_merge_many_ratio, log_merge_ratio, merge_members, merge_slots, pair_members,
)
from pymc_partitions.kernels.info import MOVE_MERGE, MOVE_SPLIT, MOVE_SUBCLUSTER, Move, report
from pymc_partitions.kernels.streams import keyed_uniform
from pymc_partitions.state import (
    REBUILD_PERIOD, build_state, canonical_labels, empty_state, ensure_capacity, link_all, log_joint, open_slot,
    rebuild, refresh, refresh_all, relink,
)

PARALLEL_MIN_ITEMS = hybrid.PARALLEL_MIN_ITEMS
"""An interpreted driver runs a pass over fewer items than this serially: starting numba's threads
costs more than it saves (``hybrid.PARALLEL_MIN_ITEMS``)."""


_DRIVERS = {}
"""The driver functions of this module by name (:func:`driver`)."""
_SERIAL = {}
"""The serial loop that a compiled driver calls instead of each threaded one, by name (:func:`twofold`)."""
_COMPILED = {}
"""The compiled twins of the drivers, by name, all built at once on first use (:func:`compiled`)."""


def driver(function):
    """Register ``function`` as a driver: Python calls it as written (its callees as Python sees them, so the
    passes it reaches may run on numba threads); :func:`compiled` gives its compiled twin."""
    _DRIVERS[function.__name__] = function
    return function


def executed(function):
    """Make the driver ``function`` an *operation* of the executor protocol (module docstring, "Executors").

    Python calls ``algo_state.executor``'s method of the same name, with the
    same arguments, or ``function`` itself (the work in this process) when
    the executor is ``None``; a compiled driver calls ``function``'s twin.
    """
    name = function.__name__

    def python(algo_state, *args):
        executor = algo_state.executor
        if executor is None:
            return function(algo_state, *args)
        return getattr(executor, name)(algo_state, *args)

    python.__name__ = python.__qualname__ = name
    python.__doc__ = function.__doc__
    OPERATIONS.append(name)
    return python


OPERATIONS = []
"""The names of the executor operations (:func:`executed`), in the order they are defined."""


def twofold(serial, size, name=None):
    """Decorate ``threads``, a ``parallel=True`` loop with ``serial``'s signature: Python runs ``threads`` when the
    argument named ``size`` has :data:`PARALLEL_MIN_ITEMS` rows or more, ``serial`` below (the same result);
    compiled drivers call ``serial``.  ``name``: the module attribute holding the result (default ``threads``'s)."""
    names = serial.py_func.__code__.co_varnames[: serial.py_func.__code__.co_argcount]
    position = names.index(size)

    def decorate(threads):
        def python(*args):
            return (threads if args[position].shape[0] >= PARALLEL_MIN_ITEMS else serial)(*args)

        python.__name__ = python.__qualname__ = name or threads.__name__
        python.__doc__ = threads.__doc__
        _SERIAL[python.__name__] = serial
        return python

    return decorate


def compiled(name):
    """The compiled twin of the driver ``name``: the same code, compiled (``_jit.jit``), calling the compiled twins
    of the other drivers and the serial loops.

    The twins are built together, on first use, as copies of the drivers'
    code whose globals map each driver (executor operations included: their
    work in this process) to its twin and each threaded loop to its serial
    version (numba resolves a function's globals when it compiles it), so one
    source serves both ways without numba internals.
    """
    if not _COMPILED:
        twin_globals = dict(globals())
        for driver_name, function in _DRIVERS.items():
            twin = types.FunctionType(function.__code__, twin_globals, driver_name, function.__defaults__, function.__closure__)
            twin.__qualname__ = f"{function.__qualname__}.compiled"  # numba caches each under its own name
            _COMPILED[driver_name] = jit(twin)
        twin_globals.update(_COMPILED)
        twin_globals.update(_SERIAL)
    return _COMPILED[name]


# --------------------------------------------------------------------------- options and state

Options = namedtuple(
    "Options", ["n_proposals", "n_launch_sweeps", "n_refine_sweeps", "n_shards", "n_global_sweeps"],
    defaults=(10, 2, 1, 8, 1),
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
"""

AlgoState = namedtuple("AlgoState", ["options", "bounds", "counts", "n_hot", "executor"])
AlgoState.__doc__ = """What the sampler keeps between iterations besides the partition state.

options : Options
bounds : int64[P + 1]   ``bounds[s]:bounds[s + 1]`` are the items of global shard ``s``
counts : int64[5]       cumulative: splits proposed, splits accepted, merges proposed, merges accepted,
                        merges rejected before their launch (diagnostics; updated in place)
n_hot : int64[1]        hot shards of the hybrid iteration: 1 (exact); more only for a warm start while
                        PyMC tunes (``HybridDPStep``; ``kernels.hybrid``); set in place
executor : None or object
                        where the items' work runs (module docstring, "Executors"): ``None`` in this
                        process (what :func:`init` gives and compiled drivers need), or e.g.
                        ``distributed.cluster.DaskSubclusterShards``
"""

SPLITS_PROPOSED, SPLITS_ACCEPTED, MERGES_PROPOSED, MERGES_ACCEPTED, MERGES_REJECTED_EARLY = 0, 1, 2, 3, 4
"""Indices of :attr:`AlgoState.counts`."""


@jit
def init(model, state, options, rng):
    """The sampler's state for ``model`` and the partition ``state``: options, global shards, counters,
    one hot shard, executor ``None`` (this process).

    ``options.n_shards`` must be in ``1..n``; a hybrid iteration
    (``n_global_sweeps > 0``) needs a DP or Pitman-Yor prior.  ``rng`` is
    not used (the interface every kernel shares).
    """
    n = state.labels.shape[0]
    if options.n_shards < 1 or options.n_shards > n:
        raise ValueError("subcluster: n_shards must be between 1 and the number of items")
    if options.n_global_sweeps > 0 and model.prior != priors.DP and model.prior != priors.PY:
        raise ValueError("subcluster: the hybrid iteration (n_global_sweeps > 0) needs a DP or Pitman-Yor prior")
    bounds = hybrid.shard_bounds(n, options.n_shards)
    return AlgoState(options, bounds, np.zeros(5, dtype=np.int64), np.ones(1, dtype=np.int64), None)


# --------------------------------------------------------------------------- one iteration


@driver
def transition(model, state, algo_state, rng):
    """One iteration: ``n_proposals`` split/merge proposals, each followed by ``n_refine_sweeps`` restricted sweeps of
    the pair's clusters if they are apart, then the hybrid iteration; returns ``(state, algo_state, Info)``.

    ``Info``: ``MOVE_SUBCLUSTER``; ``accepted`` whether any proposal was,
    ``accept_prob`` the fraction of proposals accepted; ``log_target_ratio``
    the change in log posterior over the iteration (``log_joint`` after
    minus before) and ``log_proposal_ratio`` its negative, as for the other
    composite moves; ``cluster_change`` the change in the number of clusters.
    """
    options = algo_state.options
    n = state.labels.shape[0]
    state = begin(algo_state, model, state)
    before = log_joint(model, state)
    k_before = state.n_clusters[0]
    n_accepted = 0
    for _ in range(options.n_proposals):
        i, j = random_pair(n, rng)
        state, info = propose(model, state, algo_state, i, j, rng)
        n_accepted += info.accepted
        slot_i, slot_j = item_slots(algo_state, model, state, i, j)
        if slot_i != slot_j:  # a function of the new state and the pair only (docs/exactness.md)
            for _ in range(options.n_refine_sweeps):
                state, _ = refine(model, state, algo_state, i, j, rng)
    if options.n_global_sweeps > 0:
        state = global_move(model, state, algo_state, rng)
    state = finish(algo_state, model, state)
    change = log_joint(model, state) - before
    fraction = n_accepted / options.n_proposals if options.n_proposals > 0 else 0.0
    k_change = state.n_clusters[0] - k_before
    return state, algo_state, report(model, state, Move(MOVE_SUBCLUSTER, n_accepted > 0, fraction, change, -change, k_change))


@driver
def propose(model, state, algo_state, i, j, rng):
    """The split (``z_i = z_j``) or merge proposal for the ordered pair ``i != j``; returns ``(state, Move)``.

    The ``Move`` of an accepted move carries the exact change in log
    posterior and ``log q(reverse) - log q(forward)``; a merge rejected
    before its launch reports ``log_proposal_ratio`` and ``accept_prob`` as
    NaN (not computed; its acceptance probability is below ``u``).
    """
    slot_i, slot_j = item_slots(algo_state, model, state, i, j)
    if slot_i == slot_j:
        return propose_split(model, state, algo_state, i, j, slot_i, rng)
    return propose_merge(model, state, algo_state, i, j, slot_i, slot_j, rng)


@driver
def propose_split(model, state, algo_state, i, j, slot, rng):
    """Split ``slot``, the cluster of ``i`` and ``j``, along a fresh launch (module docstring, step 3): ``(state, Move)``.
    """
    counts = algo_state.counts
    selection = select(algo_state, model, state, i, j)
    theta, log_w = launch(model, state, algo_state, selection, i, j, rng)
    sub_stats, sizes, log_q, seed = final_pass(model, state, algo_state, selection, i, j, theta, log_w, -1, rng)
    log_target = -log_merge_many_ratio(model, state.n_clusters[0] + 1, sub_stats, sizes, 2)
    log_ratio = log_target - log_q
    accept_prob = 1.0 if log_ratio >= 0.0 else math.exp(log_ratio)
    accepted = rng.random() < accept_prob
    counts[SPLITS_PROPOSED] += 1
    if accepted:
        counts[SPLITS_ACCEPTED] += 1
        state = ensure_capacity(state, 1)
        new = open_slot(state)
        assign(algo_state, model, state, selection, slot, new, i, j, theta, log_w, seed)
        set_summaries(model, state, slot, new, sub_stats, sizes)
    return state, Move(MOVE_SPLIT, accepted, accept_prob, log_target, -log_q, 1 if accepted else 0)


@driver
def propose_merge(model, state, algo_state, i, j, slot_i, slot_j, rng):
    """Merge ``slot_j`` (the cluster of ``j``) into ``slot_i`` (of ``i``) if a fresh launch reproduces their split
    often enough; returns ``(state, Move)``.

    ``u`` is drawn first; ``log u >= log[π(merge)/π(z)]`` rejects without a
    launch, since ``log q <= 0`` (module docstring, step 3).
    """
    counts = algo_state.counts
    log_target = log_merge_ratio(model, state, slot_i, slot_j)
    u = rng.random()
    counts[MERGES_PROPOSED] += 1
    if log_target < 0.0 and u >= math.exp(log_target):
        counts[MERGES_REJECTED_EARLY] += 1
        return state, Move(MOVE_MERGE, False, math.nan, log_target, math.nan, 0)
    selection = select(algo_state, model, state, i, j)
    theta, log_w = launch(model, state, algo_state, selection, i, j, rng)
    _, _, log_q, _ = final_pass(model, state, algo_state, selection, i, j, theta, log_w, slot_j, rng)
    log_ratio = log_target + log_q
    accept_prob = 1.0 if log_ratio >= 0.0 else math.exp(log_ratio)
    accepted = u < accept_prob
    if accepted:
        counts[MERGES_ACCEPTED] += 1
        merge_items(algo_state, model, state, slot_i, slot_j)
        merge_slots(model, state, slot_i, slot_j)
    return state, Move(MOVE_MERGE, accepted, accept_prob, log_target, log_q, -1 if accepted else 0)


@driver
def refine(model, state, algo_state, i, j, rng):
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
    slot_a, slot_b = item_slots(algo_state, model, state, i, j)
    selection = select(algo_state, model, state, i, j)
    shift = priors.size_shift(model.prior, model.prior_params)
    log_a = log_gamma_variate(rng, state.sizes[slot_a] + shift)
    log_b = log_gamma_variate(rng, state.sizes[slot_b] + shift)
    top = max(log_a, log_b)
    log_total = top + math.log(math.exp(log_a - top) + math.exp(log_b - top))
    log_w = np.array([log_a - log_total, log_b - log_total])
    theta = np.empty((2, families.param_size(model.family, model.data.shape[1])))
    families.draw_params(model.family, state.stats[slot_a], model.params, rng, theta[0])
    families.draw_params(model.family, state.stats[slot_b], model.params, rng, theta[1])
    seed = _seed(rng)
    stats, sizes, _ = pair_pass(algo_state, model, state, selection, False, theta, log_w, seed, -1, False)
    _add_anchors(model, i, j, stats, sizes)
    change = (
        cluster_log_weight(model, stats[0], sizes[0]) + cluster_log_weight(model, stats[1], sizes[1])
        - cluster_log_weight(model, state.stats[slot_a], state.sizes[slot_a])
        - cluster_log_weight(model, state.stats[slot_b], state.sizes[slot_b])
    )
    assign(algo_state, model, state, selection, slot_a, slot_b, i, j, theta, log_w, seed)
    set_summaries(model, state, slot_a, slot_b, stats, sizes)
    return state, change


# --------------------------------------------------------------------------- the launch and the final pass


@driver
def launch(model, state, algo_state, selection, i, j, rng):
    """The launch ``L = (θ, log w)`` of the sub-clusters anchored by ``i`` (0) and ``j`` (1) over the items of
    ``selection`` (``R``, :func:`select`).

    A function of the set ``R`` (in increasing order), the anchors and
    ``rng`` only, never of the current labels (module docstring, step 1).
    Returns ``theta[2, p]`` (``families.draw_params`` layout) and
    ``log_w[2] = log(|S_t| / |S|)``.  Draws from ``rng``: one seed per
    pass, and after each pass ``θ_0`` then ``θ_1``.
    """
    family, params = model.family, model.params
    d = model.data.shape[1]
    anchors = _anchor_stats(model, i, j)
    caches = np.empty((2, families.cache_size(family, d)))
    families.fill_cache(family, anchors[0], params, caches[0])
    families.fill_cache(family, anchors[1], params, caches[1])
    no_weights = np.zeros(2)  # the seeding pass weighs the sides equally (one item each)
    stats, sizes, _ = pair_pass(algo_state, model, state, selection, True, caches, no_weights, _seed(rng), -1, False)
    theta = np.empty((2, families.param_size(family, d)))
    log_w = np.empty(2)
    for _ in range(algo_state.options.n_launch_sweeps):
        _draw_sub_params(model, anchors, stats, sizes, theta, log_w, rng)
        stats, sizes, _ = pair_pass(algo_state, model, state, selection, False, theta, log_w, _seed(rng), -1, False)
    _draw_sub_params(model, anchors, stats, sizes, theta, log_w, rng)
    return theta, log_w


@driver
def final_pass(model, state, algo_state, selection, i, j, theta, log_w, forced_slot, rng):
    """The final assignment of the selection's items given the launch; returns ``(stats[2, s], sizes[2], log q, seed)``.

    Each item goes to side ``t`` with ``p_h(t) ∝ w_t f(x_h | θ_t)``, drawn,
    or (``forced_slot >= 0``) forced to side 1 if it is in that slot and to
    side 0 otherwise (the current split, for a merge).  ``log q = Σ_h log
    p_h(side of h)``; the statistics and sizes of the two sides include the
    anchors ``i`` and ``j``; ``seed`` is the pass's (:func:`assign` applies
    its sides).  One seed is drawn from ``rng`` (also when forced).
    """
    seed = _seed(rng)
    stats, sizes, log_q = pair_pass(algo_state, model, state, selection, False, theta, log_w, seed, forced_slot, True)
    _add_anchors(model, i, j, stats, sizes)
    return stats, sizes, log_q, seed


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


# --------------------------------------------------------------------------- executor operations (this process)


@executed
@driver
def begin(algo_state, model, state):
    """Start an iteration from ``state``; returns it.  (An executor holding labels elsewhere takes ``state.labels``
    if they are not the ones it holds.)"""
    return state


@executed
@driver
def item_slots(algo_state, model, state, i, j):
    """The current slots of items ``i`` and ``j``."""
    return state.labels[i], state.labels[j]


@executed
@driver
def select(algo_state, model, state, i, j):
    """The *selection* of the pair ``i``, ``j``, which the passes of a proposal run over: here ``(R, sides)``, the
    items of their clusters but ``i`` and ``j`` in increasing order (:func:`pair_items`) and a buffer for the
    sides of the last pass."""
    items = pair_items(state, algo_state, i, j)
    return items, np.empty(items.shape[0], dtype=np.int8)


@executed
@driver
def pair_pass(algo_state, model, state, selection, predictive, densities, log_w, seed, forced_slot, want_log_q):
    """One pass over the selection's items (:func:`pass_shard` per global shard); returns the sides'
    ``(stats[2, s], sizes[2], log q)`` without the anchors, reduced in shard order (:func:`reduce_shards`).

    ``predictive``: side ``t`` has log weight ``log p(x_h | cache densities[t])``
    (the seeding pass), else ``log_w[t] + log f(x_h | θ = densities[t])``.
    The sides are drawn with the keyed uniforms of ``seed``, or forced by
    the labels (``forced_slot >= 0``).
    """
    items, sides = selection
    bounds = _item_bounds(items, algo_state.bounds)
    shard_stats, shard_sizes, shard_log_q = shard_sums(
        model.family, model.data, model.params, items, bounds, 0, predictive, densities, log_w, seed, state.labels,
        forced_slot, want_log_q, sides,
    )
    return reduce_shards(shard_stats, shard_sizes, shard_log_q)


@executed
@driver
def assign(algo_state, model, state, selection, slot_a, slot_b, i, j, theta, log_w, seed):
    """Give the selection's items the sides of its pass with ``seed`` (drawn with ``theta``, ``log_w``): side 0
    to ``slot_a``, side 1 to ``slot_b``; ``i`` to ``slot_a`` and ``j`` to ``slot_b``.  Labels and member lists
    only: the caller sets the two slots' summaries (:func:`set_summaries`).  O(|R|) label checks, O(1) per
    item that moves."""
    items, sides = selection
    if state.labels[i] != slot_a:
        relink(state, state.labels[i], slot_a, i)
    if state.labels[j] != slot_b:
        relink(state, state.labels[j], slot_b, j)
    relink_sides(state, items, sides, slot_a, slot_b)


@executed
@driver
def merge_items(algo_state, model, state, keep, drop):
    """Give the items of ``drop`` the label ``keep`` (``clusters.merge_members``; the caller merges the slots)."""
    merge_members(state, keep, drop)


@executed
@driver
def summarize(algo_state, model, state):
    """Cluster numbers (the position of each item's slot) and the per-shard summaries of the hybrid iteration:
    ``(labels, counts[P, K], stats[P, K, s])``."""
    bounds = algo_state.bounds
    k = state.n_clusters[0]
    labels = np.empty(state.labels.shape[0], dtype=np.int64)
    counts = np.zeros((bounds.shape[0] - 1, k), dtype=np.int64)
    stats = np.zeros((bounds.shape[0] - 1, k, state.stats.shape[1]))
    summarize_shards_threads(model.family, model.data, state.labels, state.position, bounds, labels, counts, stats)
    return labels, counts, stats


@executed
@driver
def sweep(algo_state, model, labels, plan, n_sweeps, n_clusters):
    """Steps 3-5 of the hybrid iteration on every shard from cluster numbers ``labels`` (:func:`summarize`), then
    its merge: ``(z, shard_counts, shard_stats)``, canonical labels and their per-shard summaries."""
    bounds = algo_state.bounds
    shards = np.arange(bounds.shape[0] - 1)
    new, offsets, counts, stats = sweep_hybrid_shards(
        model.family, model.data, model.params, model.prior, model.log_v_table, model.empty_cache, model.origin,
        labels, bounds, shards, plan.role, plan.anchor, plan.log_weight, plan.theta, plan.log_tail, plan.tail_params,
        plan.seed, n_sweeps, n_clusters,
    )
    z, shard_counts, shard_stats, _ = hybrid.merge(labels, bounds, new, offsets, counts, stats, n_clusters)
    return z, shard_counts, shard_stats


@executed
@driver
def finish(algo_state, model, state):
    """End an iteration: ``state`` with the labels the iteration's moves gave (here already there)."""
    return state


@jit
def relink_sides(state, items, sides, slot_a, slot_b):
    """Move each of ``items`` to ``slot_a`` (side 0) or ``slot_b`` (side 1) if it is not there (``state.relink``)."""
    for r in range(items.shape[0]):
        target = slot_a if sides[r] == 0 else slot_b
        if state.labels[items[r]] != target:
            relink(state, state.labels[items[r]], target, items[r])


@jit
def assign_labels(labels, items, sides, slot_a, slot_b, i, j):
    """:func:`assign` on a plain label vector (a shard host's rows): ``items`` to ``slot_a`` (side 0) or ``slot_b``
    (side 1), and ``i`` to ``slot_a``, ``j`` to ``slot_b`` if they are rows of ``labels``."""
    for r in range(items.shape[0]):
        labels[items[r]] = slot_a if sides[r] == 0 else slot_b
    if 0 <= i < labels.shape[0]:
        labels[i] = slot_a
    if 0 <= j < labels.shape[0]:
        labels[j] = slot_b


# --------------------------------------------------------------------------- passes over items (per shard)


@driver
def shard_sums(
    family, data, params, items, bounds, offset, predictive, densities, log_w, seed, labels, forced_slot, want_log_q,
    sides,
):
    """A pass over ``items`` (indices into ``data``; ``items[bounds[s]:bounds[s + 1]]`` those of shard ``s``):
    per shard, the sides' ``stats[P, 2, s]``, ``sizes[P, 2]`` and ``Σ log p`` (:func:`pass_shard`, its keys the
    items plus ``offset``); ``sides`` receives the sides.  What a shard host returns (O(s) per shard)."""
    n_shards = bounds.shape[0] - 1
    width = families.stat_size(family, data.shape[1])
    shard_stats = np.zeros((n_shards, 2, width))
    shard_sizes = np.zeros((n_shards, 2), dtype=np.int64)
    shard_log_q = np.zeros(n_shards)
    run_pass_threads(
        family, data, params, items, bounds, offset, predictive, densities, log_w, seed, labels, forced_slot,
        want_log_q, sides, shard_stats, shard_sizes, shard_log_q,
    )
    return shard_stats, shard_sizes, shard_log_q


@jit
def reduce_shards(shard_stats, shard_sizes, shard_log_q):
    """The per-shard sums of a pass (:func:`shard_sums`) added in shard order: ``(stats[2, s], sizes[2], log q)``."""
    n_shards, _, width = shard_stats.shape
    stats = np.zeros((2, width))
    sizes = np.zeros(2, dtype=np.int64)
    log_q = 0.0
    for s in range(n_shards):
        log_q += shard_log_q[s]
        for t in range(2):
            sizes[t] += shard_sizes[s, t]
            for r in range(width):
                stats[t, r] += shard_stats[s, t, r]
    return stats, sizes, log_q


@jit
def _item_bounds(items, bounds):
    """Positions in the increasing ``items`` where each global shard's items start (and the end)."""
    out = np.empty(bounds.shape[0], dtype=np.int64)
    r = 0
    for s in range(bounds.shape[0]):
        while r < items.shape[0] and items[r] < bounds[s]:
            r += 1
        out[s] = r
    out[bounds.shape[0] - 1] = items.shape[0]
    return out


@jit(inline="always")
def _log_odds(family, x, params, predictive, densities, log_w):
    """The log odds of side 1 against side 0 for the item with data ``x`` (:func:`pair_pass`'s weights)."""
    if predictive:
        gap = families.log_predictive(family, densities[1], x, params)
        return gap - families.log_predictive(family, densities[0], x, params)
    return (log_w[1] + families.log_density(family, densities[1], x, params)) - (
        log_w[0] + families.log_density(family, densities[0], x, params)
    )


@jit
def drawn_side(family, x, params, theta, log_w, seed, key):
    """The side a pass with ``seed`` (weights ``log_w[t] + log f(x | θ_t)``) draws for the item with data ``x``
    and key ``key`` (its index among all items): what :func:`pass_shard` gives it."""
    return 1 if keyed_uniform(seed, key) < _logistic(_log_odds(family, x, params, False, theta, log_w)) else 0


@jit
def pass_shard(
    family, data, params, items, lo, hi, offset, predictive, densities, log_w, seed, labels, forced_slot, want_log_q,
    sides, stats, sizes,
):
    """Items ``items[lo:hi]`` of one shard: sides drawn or forced, sums into ``stats``/``sizes``; returns ``Σ log p``.

    Item ``h`` (data row ``data[h]``, index ``h + offset`` among all items)
    takes side 1 when ``keyed_uniform(seed, h + offset) < p_h(1)``, a
    function of the item and the seed alone.  ``log p`` is summed only if
    ``want_log_q`` (one ``log1p`` per item).  Its result is O(s).
    """
    item = np.empty(stats.shape[1])
    log_q = 0.0
    forced = forced_slot >= 0
    for r in range(lo, hi):
        h = items[r]
        x = data[h]
        gap = _log_odds(family, x, params, predictive, densities, log_w)
        if forced:
            side = 1 if labels[h] == forced_slot else 0
        else:
            side = 1 if keyed_uniform(seed, h + offset) < _logistic(gap) else 0
        if want_log_q:
            log_q -= _softplus(-gap if side == 1 else gap)
        sides[r] = side
        sizes[side] += 1
        families.item_stats(family, x, item)
        for c in range(item.shape[0]):
            stats[side, c] += item[c]
    return log_q


@jit(inline="always")
def _logistic(gap):
    """``1 / (1 + exp(-gap))``, the probability of side 1 when ``gap`` is its log odds."""
    if gap >= 0.0:
        return 1.0 / (1.0 + math.exp(-gap))
    e = math.exp(gap)
    return e / (1.0 + e)


@jit(inline="always")
def _softplus(v):
    """``log(1 + exp(v))`` without overflow: ``-log p`` of a side whose log odds against it are ``v``."""
    if v > 0.0:
        return v + math.log1p(math.exp(-v))
    return math.log1p(math.exp(v))


@jit
def run_pass(
    family, data, params, items, bounds, offset, predictive, densities, log_w, seed, labels, forced_slot, want_log_q,
    sides, shard_stats, shard_sizes, shard_log_q,
):
    """Every shard of a pass (:func:`pass_shard`), one after the other; shard ``s``'s sums in row ``s``."""
    for s in range(bounds.shape[0] - 1):
        shard_log_q[s] = pass_shard(
            family, data, params, items, bounds[s], bounds[s + 1], offset, predictive, densities, log_w, seed, labels,
            forced_slot, want_log_q, sides, shard_stats[s], shard_sizes[s],
        )


@twofold(run_pass, "items")
@jit(parallel=True)
def run_pass_threads(
    family, data, params, items, bounds, offset, predictive, densities, log_w, seed, labels, forced_slot, want_log_q,
    sides, shard_stats, shard_sizes, shard_log_q,
):
    """:func:`run_pass` with the shards on numba threads (``prange``)."""
    for s in prange(bounds.shape[0] - 1):
        shard_log_q[s] = pass_shard(
            family, data, params, items, bounds[s], bounds[s + 1], offset, predictive, densities, log_w, seed, labels,
            forced_slot, want_log_q, sides, shard_stats[s], shard_sizes[s],
        )


# --------------------------------------------------------------------------- the items of S


@driver
def pair_items(state, algo_state, i, j):
    """``R``: the items of the clusters of ``i`` and ``j`` other than ``i`` and ``j``, in increasing order.

    Small sets come from the member lists, sorted (``clusters.pair_members``,
    O(m log m)); a set with ``m log2 m > n`` from a scan of the labels by
    shard (:func:`scan_pair`, O(n), on threads when interpreted).  The result is the same.
    """
    n = state.labels.shape[0]
    slot_i, slot_j = state.labels[i], state.labels[j]
    m = state.sizes[slot_i] + (state.sizes[slot_j] if slot_j != slot_i else 0)
    if m * math.log2(max(m, 2)) <= n:
        return pair_members(state, i, j)
    items, _ = scan_pair(state.labels, slot_i, slot_j, i, j, algo_state.bounds)
    return items


@driver
def scan_pair(labels, slot_i, slot_j, i, j, bounds):
    """The items (indices into ``labels``) with label ``slot_i`` or ``slot_j`` but ``i`` and ``j``, in increasing
    order, and where each shard's start in them (``bounds`` are the shards' items): ``(items, item_bounds)``."""
    counts = np.zeros(bounds.shape[0] - 1, dtype=np.int64)
    scan_labels_threads(labels, slot_i, slot_j, i, j, bounds, counts, np.empty(0, dtype=np.int64))
    offsets = np.zeros(bounds.shape[0], dtype=np.int64)
    for s in range(counts.shape[0]):
        offsets[s + 1] = offsets[s] + counts[s]
    out = np.empty(offsets[-1], dtype=np.int64)
    scan_labels_threads(labels, slot_i, slot_j, i, j, bounds, offsets, out)
    return out, offsets


@jit
def _scan_shard(labels, slot_i, slot_j, i, j, lo, hi, start, out):
    """Shard ``lo:hi``: count the items of either slot but ``i``, ``j`` (``out`` empty) or write them from ``start``."""
    count = 0
    for h in range(lo, hi):
        if (labels[h] == slot_i or labels[h] == slot_j) and h != i and h != j:
            if out.shape[0] > 0:
                out[start + count] = h
            count += 1
    return count


@jit
def scan_labels(labels, slot_i, slot_j, i, j, bounds, counts, out):
    """Per shard: ``counts[s]`` = its items of either slot but ``i``, ``j`` (``out`` empty), or write them there."""
    for s in range(bounds.shape[0] - 1):
        c = _scan_shard(labels, slot_i, slot_j, i, j, bounds[s], bounds[s + 1], counts[s], out)
        if out.shape[0] == 0:
            counts[s] = c


@twofold(scan_labels, "labels")
@jit(parallel=True)
def scan_labels_threads(labels, slot_i, slot_j, i, j, bounds, counts, out):
    """:func:`scan_labels` with the shards on numba threads."""
    for s in prange(bounds.shape[0] - 1):
        c = _scan_shard(labels, slot_i, slot_j, i, j, bounds[s], bounds[s + 1], counts[s], out)
        if out.shape[0] == 0:
            counts[s] = c


# --------------------------------------------------------------------------- the global move: one hybrid iteration


@driver
def global_move(model, state, algo_state, rng):
    """One iteration of the exact hybrid sampler (``kernels.hybrid``; ``algo_state.n_hot`` hot shards, 1 but for a
    warm start) on the global shards.

    Per-shard summaries from the state (clusters numbered by their position
    in ``state.slots``, :func:`summarize`), the driver's plan,
    ``n_global_sweeps`` sweeps of every shard and the hybrid's merge
    (:func:`sweep`); the state is rebuilt from the canonical labels and the
    shards' summaries (member lists in increasing order).
    """
    k = state.n_clusters[0]
    labels, counts, stats = summarize(algo_state, model, state)
    plan = hybrid.plan_iteration(model, counts, stats, algo_state.n_hot[0], rng)
    z, shard_counts, shard_stats = sweep(algo_state, model, labels, plan, algo_state.options.n_global_sweeps, k)
    return state_from_summaries(model, z, shard_counts, shard_stats)


@jit
def _summarize_shard(family, data, slot_labels, position, lo, hi, labels, counts, stats):
    """Items ``lo:hi``: cluster numbers ``position[slot]`` into ``labels``, and their summaries (``add_summaries``)."""
    for h in range(lo, hi):
        labels[h] = position[slot_labels[h]]
    hybrid.add_summaries(family, data[lo:hi], labels[lo:hi], counts, stats)


@jit
def summarize_shards(family, data, slot_labels, position, bounds, labels, counts, stats):
    """Cluster numbers (the position of each item's slot) and per-shard counts and statistics (``hybrid.summarize``)."""
    for s in range(bounds.shape[0] - 1):
        _summarize_shard(family, data, slot_labels, position, bounds[s], bounds[s + 1], labels, counts[s], stats[s])


@twofold(summarize_shards, "labels")
@jit(parallel=True)
def summarize_shards_threads(family, data, slot_labels, position, bounds, labels, counts, stats):
    """:func:`summarize_shards` with the shards on numba threads."""
    for s in prange(bounds.shape[0] - 1):
        _summarize_shard(family, data, slot_labels, position, bounds[s], bounds[s + 1], labels, counts[s], stats[s])


sweep_hybrid_shards = twofold(hybrid.sweep_shards_serially, "labels", "sweep_hybrid_shards")(hybrid.sweep_shards)
"""Steps 3-5 of the hybrid iteration on every shard (``hybrid.run_shards``): threads from Python, serial in numba."""


@jit
def state_from_summaries(model, z, shard_counts, shard_stats):
    """The additive state of canonical labels ``z``: cluster ``k`` in slot ``k``, its statistics summed over shards.

    The same partition as ``build_state(model, z)``, with the statistics
    summed per shard (item order) and then in shard order, as ``hybrid``
    sums them; member lists in increasing item order.  O(n + K s).
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


# --------------------------------------------------------------------------- chains


@driver
def run_chain(model, z, options, n_iterations, n_gibbs, rng):
    """``n_iterations`` iterations from the labels ``z`` in one compiled call; returns ``(history, counts)``.

    ``history[t]`` are the canonical labels after iteration ``t``;
    ``n_gibbs`` collapsed Gibbs sweeps (``gibbs.sweep``) follow every
    iteration (0: the kernel alone); ``counts`` is ``AlgoState.counts``.
    The state is rebuilt from its labels every ``REBUILD_PERIOD``
    iterations, as the steps do.  Small problems (the enumeration tests)
    run its compiled twin, ``compiled("run_chain")``, in one call.
    """
    n = z.shape[0]
    state = build_state(model, z.astype(np.int64))
    algo_state = init(model, state, options, rng)
    history = np.empty((n_iterations, n), dtype=np.int32)
    for t in range(n_iterations):
        if t > 0 and t % REBUILD_PERIOD == 0:
            state = rebuild(model, state)
        state, algo_state, _ = transition(model, state, algo_state, rng)
        for _ in range(n_gibbs):
            state, _ = gibbs.sweep(model, state, rng)
        history[t] = canonical_labels(state)
    return history, algo_state.counts
