"""Nonconjugate split-merge, SM(a, b, c, d) (Jain & Neal 2007; ``papers/001_...``, Sec. 4).

The state is the partition and the parameters ``theta_c`` of the occupied
clusters; the target ``pi(Pi, theta) = p(Pi) prod_c g(theta_c) p(x_c | theta_c)``
(``kernels.parameters``).  One transition makes ``b`` proposals, then ``c``
full Algorithm 8 scans (``kernels.auxiliary_gibbs``).  One proposal, for a
uniformly random pair of items ``i != j``:

1. ``S``: the other items of the cluster(s) of ``i`` and ``j``, in increasing order.
2. Split launch: ``i`` and ``j`` in two components, each item of ``S`` in one
   of them with probability 1/2, both components' parameters drawn from
   ``g``, then ``a`` restricted Gibbs scans: each component's parameters from
   their full conditional (``mu_j | tau_j``, then ``tau_j | mu_j``, per
   feature), then each item of ``S`` to component ``t`` with probability
   ``∝ (m_t + s) p(x_h | theta_t)`` (eq. (4.4)).
3. Merge launch: one component holding ``S ∪ {i, j}``, its parameters drawn
   from ``g``, then ``d`` restricted scans (parameters only).
4. ``z_i = z_j`` (parameters ``theta_m``): propose the split
   ``(c*, theta*_i, theta*_j)`` made by one more scan from the split launch,
   density ``q_split`` (eq. (4.5)), and accept with
   ``min(1, pi(split)/pi(current) * q_merge(theta_m) / q_split(c*, theta*_i, theta*_j))``.
5. Otherwise propose the merge with ``theta*`` drawn by one more scan from the
   merge launch, and accept with
   ``min(1, pi(merge)/pi(current) * q_split(current) / q_merge(theta*))``.

The reverse densities (``q_merge(theta_m)``, ``q_split(current)``: parameters,
then items) are those of the same final scan forced to the current state.
With ``k_max`` clusters a split is rejected without being built.  Proposals
are built in place, as the conjugate ones.  Why this is exact (launches
independent of the current split and parameters, Jacobian 1, no term for the
unused parameter rows) and how it is tested: ``docs/exactness.md``,
"Nonconjugate Normal mixture".

References
----------
Jain, S. & Neal, R. M. (2007). Splitting and merging components of a
nonconjugate Dirichlet process mixture model. Bayesian Analysis 2(3), 445-472.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from pymc_partitions import families, priors
from pymc_partitions._dispatch import PARAMETRIC
from pymc_partitions._jit import jit
from pymc_partitions.kernels import auxiliary_gibbs
from pymc_partitions.kernels.background import random_pair
from pymc_partitions.kernels.clusters import (
    merge_clusters, pair_members, place_sides, random_sides, relocate, restricted_scan, side_of,
)
from pymc_partitions.kernels.info import MOVE_MERGE, MOVE_SPLIT, Move, no_move, report
from pymc_partitions.kernels.moves import metropolis_accept
from pymc_partitions.kernels.parameters import cluster_log_factor, draw_from_prior, update_cluster
from pymc_partitions.kernels.protocol import Kernel, Support
from pymc_partitions.state import ensure_capacity, open_slot

Options = namedtuple("Options", ["n_split_scans", "n_moves", "n_gibbs_scans", "n_merge_scans", "n_auxiliary"])
Options.__doc__ = """Options of one SM(a, b, c, d) transition (``NonconjugateSplitMergeStep``); also its sampler state.

n_split_scans : int   ``a``, restricted scans to the split launch state
n_moves : int         ``b``, split-merge proposals per transition
n_gibbs_scans : int   ``c``, full Algorithm 8 scans after the proposals
n_merge_scans : int   ``d``, restricted scans to the merge launch state
n_auxiliary : int     auxiliary values of those Algorithm 8 scans (the paper uses 1)
"""


def init(model, labels, options, rng):
    """The sampler state: the options alone."""
    return options


@jit
def transition(model, state, options, rng):
    """One SM(a, b, c, d) step; returns ``(state, options, Info)`` with the ``Info`` of the last proposal."""
    n = state.labels.shape[0]
    move = no_move()
    for _ in range(options.n_moves):
        i, j = random_pair(n, rng)
        state, move = propose_pair(model, state, i, j, options.n_split_scans, options.n_merge_scans, rng)
    for _ in range(options.n_gibbs_scans):
        state, _ = auxiliary_gibbs.sweep(model, state, rng, options.n_auxiliary)
    return state, options, report(model, state, move)


@jit
def propose_pair(model, state, i, j, n_split_scans, n_merge_scans, rng):
    """One split or merge proposal for items ``i != j`` (module docstring, steps 1-5); returns ``(state, Move)``."""
    n = state.labels.shape[0]
    k = state.n_clusters[0]
    slot_i, slot_j = state.labels[i], state.labels[j]
    split = slot_i == slot_j
    if split and k >= families.k_max(model.family, model.params):
        return state, Move(MOVE_SPLIT, False, 0.0, -np.inf, 0.0, 0)
    members = pair_members(state, i, j)
    launch = random_sides(members.shape[0], rng)
    merged_stats = state.stats[slot_i].copy()
    merged_size = state.sizes[slot_i]
    no_target = np.empty(0)
    merged = np.empty(state.theta.shape[1])
    if split:
        current_i = state.theta[slot_i].copy()
        current_j = no_target
        log_q_merge = merge_launch(model, merged_stats, n_merge_scans, current_i, merged, rng)
        log_before = cluster_log_factor(model, merged_stats, merged_size, current_i)
        state = ensure_capacity(state, 1)
        slot_j = open_slot(state)
        relocate(model, state, j, slot_j, np.empty(1, dtype=np.int64), np.empty(state.stats.shape[1]))
        final_sides = np.zeros(0, dtype=np.int64)
        targets_i, targets_j = no_target, no_target
    else:
        for r in range(merged_stats.shape[0]):
            merged_stats[r] += state.stats[slot_j, r]
        merged_size += state.sizes[slot_j]
        current_i, current_j = state.theta[slot_i].copy(), state.theta[slot_j].copy()
        log_before = _pair_log_factor(model, state, slot_i, slot_j)
        log_q_merge = merge_launch(model, merged_stats, n_merge_scans, no_target, merged, rng)
        final_sides = side_of(state, members, slot_i)
        targets_i, targets_j = current_i, current_j
    slots = np.array([slot_i, slot_j])
    place_sides(model, state, members, launch, slots)
    draw_from_prior(model, state, slot_i, rng)
    draw_from_prior(model, state, slot_j, rng)
    for _ in range(n_split_scans):
        restricted_parameter_scan(model, state, members, slots, final_sides[:0], no_target, no_target, rng)
    log_q_split = restricted_parameter_scan(model, state, members, slots, final_sides, targets_i, targets_j, rng)
    v_ratio = priors.log_v(model.prior, model.prior_params, model.log_v_table, n, k + (1 if split else -1))
    v_ratio -= priors.log_v(model.prior, model.prior_params, model.log_v_table, n, k)
    if split:
        log_target = v_ratio + _pair_log_factor(model, state, slot_i, slot_j) - log_before
        log_proposal = log_q_merge - log_q_split
    else:
        log_target = v_ratio + cluster_log_factor(model, merged_stats, merged_size, merged) - log_before
        log_proposal = log_q_split - log_q_merge
    accepted, accept_prob = metropolis_accept(log_target + log_proposal, rng)
    if accepted != split:  # an accepted merge or a rejected split: one cluster, with the merged parameters
        merge_clusters(model, state, slot_i, slot_j)
        state.theta[slot_i, :] = merged if accepted else current_i
    move, change = (MOVE_SPLIT, 1) if split else (MOVE_MERGE, -1)
    return state, Move(move, accepted, accept_prob, log_target, log_proposal, change if accepted else 0)


@jit
def _pair_log_factor(model, state, slot_a, slot_b):
    """The factors of ``pi`` of two clusters (``parameters.cluster_log_factor``)."""
    return cluster_log_factor(model, state.stats[slot_a], state.sizes[slot_a], state.theta[slot_a]) + cluster_log_factor(
        model, state.stats[slot_b], state.sizes[slot_b], state.theta[slot_b]
    )


@jit
def restricted_parameter_scan(model, state, members, slots, forced, target_a, target_b, rng):
    """One restricted Gibbs scan: both components' parameters, then the items of ``members``; returns its log density.

    The parameters of ``slots[0]`` and ``slots[1]`` are drawn from their full
    conditionals (or set to ``target_a``/``target_b`` when those are
    non-empty), then ``clusters.restricted_scan`` moves each item (or forces it
    to ``forced``).  The log density is that of the outcome: the parameter
    densities plus the log probabilities of the items' moves.
    """
    log_q = update_cluster(model, state, slots[0], target_a, rng)
    log_q += update_cluster(model, state, slots[1], target_b, rng)
    return log_q + restricted_scan(model, state, members, slots, forced, rng)


@jit
def merge_launch(model, stats, n_merge_scans, target, out, rng):
    """The merged component's parameters: a prior draw, ``n_merge_scans`` updates, then the final one.

    Returns the log density of the final update's outcome, which is left in
    ``out``: drawn, or ``target`` when it is non-empty (the density of the
    current merged cluster's parameters, for the reverse of a split).
    """
    families.draw_prior(model.family, model.params, rng, out)
    no_target = target[:0]
    for _ in range(n_merge_scans):
        families.update_parameters(model.family, stats, model.params, out, no_target, rng)
    return families.update_parameters(model.family, stats, model.params, out, target, rng)


KERNEL = Kernel(init, transition, Options, Support((PARAMETRIC,), min_items=2))
"""The nonconjugate split-merge (``NonconjugateSplitMergeStep``) (``kernels.protocol``)."""
