"""Tempering across coarsening levels: ``L`` partitions at a ladder of likelihood powers, with exact swaps.

A chain keeps ``L`` partitions ``z_1, ..., z_L`` (level 1 is the partition
``pm.sample`` records; levels 2 .. L live in the sampler state) and a ladder
``1 = ζ_1 > ζ_2 > ... > ζ_L > 0``.  Level ``l`` targets

    π_l(z) ∝ p(z | h_l) m_{ζ_l}(x | z, h_l),   m_ζ(x | z, h) = Π_c ∫ Π_{i ∈ c} p(x_i | θ)^ζ p(θ | h) dθ,

the collapsed c-posterior of ``coarsening`` (``families``, "Coarsening") with
every item's likelihood raised to ``ζ_l`` times the model's own power.  Level
1 reads the hyperparameters ``h`` of the model it is given at each transition
(PyMC may move them with level 1's partition); levels 2 .. L keep ``h_ref``,
the hyperparameters of the model :func:`init` was given, fixed, so that the
joint target is

    p(h) π(z_1 | h, x) Π_{l ≥ 2} π_l(z_l | h_ref),

whose marginal in ``(h, z_1)`` is the posterior, and PyMC's moves of ``h``
given ``z_1`` leave it invariant (``docs/exactness.md``, "Tempering across
coarsening levels").  ``init`` runs at the chain's first transition and again
at tuning steps 1, 2, 4, 8, ... (the schedule ``protocol.at_doubling_steps``):
every level restarts from level 1's partition and ``h_ref`` becomes the
current ``h``, so after tuning ``h_ref`` is a value from the second half of
tuning, not the initial point, and it stays fixed while the draws are kept.

The ladder adapts at the same restarts (``Options.adapt_ladder``,
:func:`adapt`): from the swaps since the last restart, each adjacent pair's
rejection rate ``ρ_l = 1 − mean min(1, r)`` estimates the increment of the
communication barrier ``Λ`` between its levels, ``Λ`` is interpolated
linearly in ``ζ`` through the ladder, and the new interior levels are placed
at equal steps of ``Λ``, the ends and the number of levels kept
(:func:`equal_rejection_ladder`; Syed, Bouchard-Côté, Deligiannidis &
Doucet 2022, Sec. 5: the schedule update from estimated rejection rates, in
rounds of doubling length).  Equal rejection rates are what a fixed
number of levels can do best for the round trips between level 1 and
level L.  The restarts end with tuning, so the draws that are kept use one
fixed ladder: the kernel they run is exact for it (below) and level 1's
target does not depend on the ladder.

One transition:

1. every level makes ``n_split_merge`` restricted-Gibbs split-merge
   proposals at its own ``ζ`` (``split_merge.propose_pair``: Jain & Neal
   2004, a uniformly random pair, :data:`SPLIT_MERGE_SCANS` intermediate
   scans to the launch state), then ``n_sweeps`` collapsed Gibbs sweeps
   (``gibbs.sweep``: Neal 2000, Algorithm 3).  Each is exact for any
   collapsed target ``p(z | h) m(x | z, h)``, so for each level's (its
   model is the level's parameters, ``ζ`` included), and a move of one
   level leaves the product target invariant;
2. a parity ``q`` is drawn uniformly from the parities that have a pair
   (``q = 0`` when ``L = 2``), and every adjacent pair ``(l, l + 1)`` with
   ``l ≡ q (mod 2)`` (counting levels from 0) proposes to exchange its
   partitions, accepted with probability

       min(1, π_l(z_{l+1}) π_{l+1}(z_l) / (π_l(z_l) π_{l+1}(z_{l+1}))),

   each ``π`` the level's unnormalised log joint (``state.log_joint``:
   log prior plus log collapsed marginal at the level's ``ζ``).  When both
   levels have the same ``h`` the priors cancel and this is
   ``m_l(z_{l+1}) m_{l+1}(z_l) / (m_l(z_l) m_{l+1}(z_{l+1}))``.  It is not
   the textbook ``exp((ζ_l - ζ_{l+1}) (log L(z_{l+1}) - log L(z_l)))`` of
   parallel tempering on a fixed likelihood: ``m_ζ ≠ m_1^ζ`` (the power is
   inside the integral over θ), and the textbook ratio fails the enumeration
   test (``tests/test_tempering_exactness.py``).

The pairs of one parity are disjoint, so their swaps are independent
Metropolis moves of the product target; the parity does not depend on the
state.  A swap builds the two partitions' states at the other level
(``state.build_state``, O(n s)), so a transition costs the ``L`` levels'
moves plus O(L n s).  The auxiliary levels' states are rebuilt from their
labels at every transition (no drift to bound).

Its ``Info`` has move code ``MOVE_TEMPERING``: ``accepted`` whether any swap
was, ``accept_prob`` the mean swap probability ``min(1, r)`` of the
transition's proposals, ``log_target_ratio`` the change of level 1's log
joint (split-merge moves, sweeps and swap), ``log_proposal_ratio`` its
negative.

References
----------
Geyer, C. J. (1991). Markov chain Monte Carlo maximum likelihood.  Computing
Science and Statistics: Proc. 23rd Symposium on the Interface, 156-163.
Jain, S. & Neal, R. M. (2004). A split-merge Markov chain Monte Carlo
procedure for the Dirichlet process mixture model. JCGS 13(1), 158-182.
Miller, J. W. & Dunson, D. B. (2019). Robust Bayesian inference via
coarsening. JASA 114(527), 1113-1125.
Neal, R. M. (2000). Markov chain sampling methods for Dirichlet process mixture
models. JCGS 9(2), 249-265.
Syed, S., Bouchard-Côté, A., Deligiannidis, G. & Doucet, A. (2022).
Non-reversible parallel tempering: a scalable highly parallel MCMC scheme.
JRSS B 84(2), 321-350.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from pymc_partitions import families
from pymc_partitions._dispatch import ADDITIVE, RELATIONAL
from pymc_partitions._jit import jit
from pymc_partitions.kernels import gibbs, split_merge
from pymc_partitions.kernels.background import random_pair
from pymc_partitions.kernels.info import MOVE_TEMPERING, Move, report
from pymc_partitions.kernels.moves import metropolis_accept, uniform_index
from pymc_partitions.kernels.protocol import Kernel, Schedule, Support, at_doubling_steps
from pymc_partitions.state import Model, build_state, canonical_labels, log_joint

Options = namedtuple("Options", ["ladder", "n_sweeps", "n_split_merge", "adapt_ladder"], defaults=(1, 1, True))
Options.__doc__ = """Options of a ``TemperedGibbsStep``.

ladder : tuple of float   ``ζ_1 = 1 > ζ_2 > ... > ζ_L > 0``, at least two levels (checked by the step)
n_sweeps : int            collapsed Gibbs sweeps per level per transition
n_split_merge : int       split-merge proposals per level per transition, before the sweeps (none on one item)
adapt_ladder : bool       move the interior levels at the tuning restarts to equalise the swaps' rejection rates
"""

DEFAULT_LADDER = tuple(float(v) for v in np.geomspace(1.0, 0.5, 8))
"""``TemperedGibbsStep``'s default ladder: eight levels from 1 to 0.5, equally spaced in ``log ζ`` before the
adaptation moves them.  On wine (``benchmarks/wine_modes.py``) three levels (1, 0.7, 0.5) had their swaps
accepted in none of 2 x 1,100 transitions, eight in 39 % of them, at 82 s against 71 s for the whole run."""

ADAPT_MIN_PROPOSALS = 8
"""Swap proposals every adjacent pair needs since the last restart before :func:`adapt` moves the ladder (the
first restarts, after 1 and 2 transitions, keep it)."""

MIN_REJECTION = 1e-3
"""The least rejection rate :func:`equal_rejection_ladder` counts for a pair, so that the estimated barrier
strictly increases and the new levels stay distinct."""

SPLIT_MERGE_SCANS = 5
"""Restricted Gibbs scans to the launch state of each level's split-merge proposals (``L`` in Jain & Neal 2004;
``SplitMergeStep``'s default ``n_intermediate``)."""

Sampler = namedtuple(
    "Sampler",
    ["n_sweeps", "n_split_merge", "ladder", "reference", "params", "empty_caches", "labels", "log_swap_ratios",
     "swap_accept", "swaps_accepted", "swaps_proposed", "swap_prob_sums", "swap_counts"],
)
Sampler.__doc__ = """The sampler state (:func:`init`): the levels' models and partitions, and the last swaps.

n_sweeps : int                  as in :class:`Options`
n_split_merge : int             as in :class:`Options`
ladder : float64[L]             the ladder
reference : state.Model         the model at ``h_ref`` (the one ``init`` was given), level 1's power
params : float64[L, p]          each level's family parameters at ``h_ref``: the last entry (``ζ``) times ``ladder[l]``
empty_caches : float64[L, c]    each level's prior predictive cache at those parameters
labels : int64[L, n]            every level's canonical labels after the last transition (row 0: level 1's)
log_swap_ratios : float64[L-1]  log r of the last transition's swap of levels (l, l + 1); NaN if not proposed
swap_accept : float             the mean of min(1, r) over the last transition's swaps
swaps_accepted : int            swaps the last transition accepted
swaps_proposed : int            swaps it proposed
swap_prob_sums : float64[L-1]   the sums of min(1, r) of every pair's swaps since ``init`` (:func:`adapt`)
swap_counts : int64[L-1]        the numbers of those swaps
"""


def init(model, labels, options, rng):
    """The :class:`Sampler` of a chain at ``labels``: every level starts there, the auxiliary levels at the
    hyperparameters of ``model`` (``h_ref``, kept fixed) with the likelihood's power times the ladder's."""
    ladder = np.ascontiguousarray(options.ladder, dtype=np.float64)
    n_levels = ladder.shape[0]
    params = np.empty((n_levels, model.params.shape[0]))
    caches = np.zeros((n_levels, model.empty_cache.shape[0]))
    d = model.data.shape[1]
    for level in range(n_levels):
        params[level] = model.params
        params[level, -1] = model.params[-1] * ladder[level]
        if model.family.kind == ADDITIVE:
            module = families.MODULES[model.family.code]
            module.fill_cache(np.zeros(module.stat_size(d)), params[level], caches[level])
    z = np.ascontiguousarray(labels, dtype=np.int64)
    return Sampler(
        int(options.n_sweeps), int(options.n_split_merge), ladder, model, params, caches, np.tile(z, (n_levels, 1)),
        np.full(n_levels - 1, np.nan), 0.0, 0, 0, np.zeros(n_levels - 1), np.zeros(n_levels - 1, dtype=np.int64),
    )


def adapt(options, sampler):
    """The options of a restart's :func:`init` (``protocol.Adapt``): the ladder of :func:`equal_rejection_ladder`
    from the swaps since the last restart if every pair has :data:`ADAPT_MIN_PROPOSALS` of them, else the last
    ladder; the options' own ladder if ``options.adapt_ladder`` is false."""
    if not options.adapt_ladder:
        return options
    ladder = sampler.ladder
    if np.all(sampler.swap_counts >= ADAPT_MIN_PROPOSALS):
        ladder = equal_rejection_ladder(ladder, 1.0 - sampler.swap_prob_sums / sampler.swap_counts)
    return options._replace(ladder=tuple(float(v) for v in ladder))


def equal_rejection_ladder(ladder, rejection):
    """The ladder of ``len(ladder)`` levels with the same ends whose adjacent pairs would have equal rejection rates.

    ``rejection[l]`` is the rejection rate of the swaps of levels ``l`` and
    ``l + 1``; as ``ζ`` falls from 1 the communication barrier grows by it,
    ``Λ(ζ_{l+1}) = Λ(ζ_l) + max(rejection[l], MIN_REJECTION)`` from
    ``Λ(1) = 0``.  With ``Λ`` linear in ``ζ`` between the levels, the new
    level ``k`` is where ``Λ = k Λ(ζ_L) / (L − 1)`` (Syed et al. 2022,
    Sec. 5).  Equal rejection rates in gives the ladder back.

    >>> equal_rejection_ladder(np.array([1.0, 0.75, 0.5]), np.array([0.9, 0.1])).round(3).tolist()
    [1.0, 0.861, 0.5]
    """
    barrier = np.concatenate(([0.0], np.cumsum(np.maximum(rejection, MIN_REJECTION))))
    levels = np.interp(np.linspace(0.0, barrier[-1], ladder.shape[0]), barrier, ladder)
    levels[0], levels[-1] = ladder[0], ladder[-1]
    return levels


@jit
def level_model(model, sampler, level):
    """The model of level ``level`` (0-based): ``model`` for level 0 (the hyperparameters of this transition),
    else the reference model with that level's parameters."""
    if level == 0:
        return model
    ref = sampler.reference
    return Model(
        ref.family, ref.data, sampler.params[level], ref.prior, ref.prior_params, ref.log_v_table,
        sampler.empty_caches[level], ref.origin,
    )


@jit
def move_level(at, state, sampler, rng):
    """One level's moves at its model ``at``: ``n_split_merge`` split-merge proposals (uniformly random pair,
    :data:`SPLIT_MERGE_SCANS` scans to the launch; none on a single item), then ``n_sweeps`` Gibbs sweeps.
    Returns ``(state, the change of the level's log joint)``."""
    n = state.labels.shape[0]
    no_background = np.empty(0, dtype=np.int32)  # random launch sides, as in SplitMergeStep
    change = 0.0
    for _ in range(sampler.n_split_merge if n >= 2 else 0):
        i, j = random_pair(n, rng)
        state, move = split_merge.propose_pair(at, state, i, j, no_background, no_background, SPLIT_MERGE_SCANS, rng)
        if move.accepted:
            change += move.log_target_ratio
    for _ in range(sampler.n_sweeps):
        state, sweep_change = gibbs.sweep(at, state, rng)
        change += sweep_change
    return state, change


@jit
def move_levels(model, state, sampler, labels, log_joints, rng):
    """Step 1 of a transition: every level's moves (:func:`move_level`); level 0 moves ``state``, level ``l``
    the partition ``labels[l]``.  Writes every level's canonical labels into ``labels`` and its log joint into
    ``log_joints``; returns ``(state, level 0's log joint change)``."""
    state, change = move_level(model, state, sampler, rng)
    labels[0] = canonical_labels(state)
    log_joints[0] = log_joint(model, state)
    for level in range(1, labels.shape[0]):
        at = level_model(model, sampler, level)
        other, _ = move_level(at, build_state(at, labels[level]), sampler, rng)
        labels[level] = canonical_labels(other)
        log_joints[level] = log_joint(at, other)
    return state, change


@jit
def swap_parity(n_levels, rng):
    """The parity of this transition's pairs: 0 or 1 uniformly, 0 when there is one pair (two levels)."""
    return 0 if n_levels == 2 else uniform_index(2, rng)


@jit
def swap(model, state, sampler, labels, log_joints, low, rng):
    """Propose to exchange the partitions of levels ``low`` and ``low + 1`` with the exact ratio (module
    docstring); updates ``labels`` and ``log_joints`` if accepted.  Returns ``(state, accepted, accept_prob,
    log r, level 0's log joint change)``."""
    high = low + 1
    at_low, at_high = level_model(model, sampler, low), level_model(model, sampler, high)
    high_at_low = build_state(at_low, labels[high])
    low_at_high = build_state(at_high, labels[low])
    new_low, new_high = log_joint(at_low, high_at_low), log_joint(at_high, low_at_high)
    log_ratio = new_low + new_high - log_joints[low] - log_joints[high]
    accepted, accept_prob = metropolis_accept(log_ratio, rng)
    change = 0.0
    if accepted:
        for i in range(labels.shape[1]):
            labels[low, i], labels[high, i] = labels[high, i], labels[low, i]
        if low == 0:
            change = new_low - log_joints[0]
            state = high_at_low
        log_joints[low], log_joints[high] = new_low, new_high
    return state, accepted, accept_prob, log_ratio, change


@jit
def transition(model, state, sampler, rng):
    """One ``TemperedGibbsStep``: every level's moves, then the swaps of one parity (module docstring); returns
    ``(state, sampler, Info)``."""
    n_levels = sampler.ladder.shape[0]
    before = state.n_clusters[0]
    labels = sampler.labels.copy()  # the sampler state is a value: a chain's next transition gets a new one
    log_joints = np.empty(n_levels)
    state, change = move_levels(model, state, sampler, labels, log_joints, rng)
    log_swap_ratios = np.full(n_levels - 1, np.nan)
    prob_sums, counts = sampler.swap_prob_sums.copy(), sampler.swap_counts.copy()
    parity = swap_parity(n_levels, rng)
    n_accepted, n_proposed, total_prob = 0, 0, 0.0
    for low in range(parity, n_levels - 1, 2):
        state, accepted, accept_prob, log_ratio, swap_change = swap(model, state, sampler, labels, log_joints, low, rng)
        change += swap_change
        log_swap_ratios[low] = log_ratio
        prob_sums[low] += accept_prob
        counts[low] += 1
        n_accepted += accepted
        n_proposed += 1
        total_prob += accept_prob
    mean_prob = total_prob / max(n_proposed, 1)
    sampler = Sampler(
        sampler.n_sweeps, sampler.n_split_merge, sampler.ladder, sampler.reference, sampler.params,
        sampler.empty_caches, labels, log_swap_ratios, mean_prob, n_accepted, n_proposed, prob_sums, counts,
    )
    move = Move(MOVE_TEMPERING, n_accepted > 0, mean_prob, change, -change, state.n_clusters[0] - before)
    return state, sampler, report(model, state, move)


KERNEL = Kernel(
    init, transition, Options, Support((ADDITIVE, RELATIONAL)),
    schedule=Schedule(restart=at_doubling_steps, adapt=adapt),
)
"""Tempered collapsed Gibbs across coarsening levels (``TemperedGibbsStep``) (``kernels.protocol``)."""
