"""Incremental Metropolis-Hastings for parametric models (Neal 2000, Algorithm 7).

The target is ``pi(Pi, theta)`` of ``kernels.parameters``; ``s`` is the
prior's size shift (``W(m+1)/W(m) = m + s``), ``K`` the number of clusters
without item ``i`` and ``Z = (n - 1) + K s = sum_c (m_c + s)`` over them.
One sweep has three stages.

1. For each item ``i``, a Metropolis-Hastings move between "``i`` alone" and
   "``i`` in another cluster":

   * ``i`` shares its cluster ``c``: propose a new cluster for ``i`` alone with
     ``phi ~ g`` (only if ``K < k_max``) and accept with probability

         min(1, V(n, K+1)/V(n, K) W(1) / Z * p(x_i | phi) / p(x_i | theta_c));

   * ``i`` is alone: propose to join cluster ``c`` with probability
     ``(m_c + s)/Z`` and accept with probability

         min(1, Z / [V(n, K+1)/V(n, K) W(1)] * p(x_i | theta_c) / p(x_i | theta_i)).

   The two proposals are each other's reverse: the target ratio of the first
   is ``V(n,K+1)/V(n,K) W(1) g(phi) p(x_i|phi) / [(m_c + s) p(x_i|theta_c)]``,
   and ``q(back)/q(forth) = [(m_c + s)/Z] / g(phi)``; for the Dirichlet
   process (``s = 0``, ``V`` ratio ``alpha``) these are Neal's
   ``alpha/(n-1)`` and ``(n-1)/alpha``.  For the generic component model
   (``families.component``) ``phi`` is one of the ``K_max - K`` empty rows,
   chosen uniformly: in the joint of row labels and rows the target gains
   ``1/(K_max - K)`` where ``g(phi)`` was, and the proposal the same factor, so
   the acceptance probabilities are the same (``docs/exactness.md``, "Your own
   component model").
2. For each item ``i`` that shares its cluster, a Gibbs update among the
   occupied clusters, ``p(c_i = c) ∝ (m_c + s) p(x_i | theta_c)`` (``i``'s
   cluster keeps its other items, so ``K`` and ``V`` do not change).
3. Each cluster's parameters from their full conditional (``families.update_parameters``).

References
----------
Neal, R. M. (2000). Markov chain sampling methods for Dirichlet process mixture
models. JCGS 9(2), 249-265, Algorithm 7.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from pymc_partitions import families, priors
from pymc_partitions._dispatch import PARAMETRIC
from pymc_partitions._jit import jit
from pymc_partitions.kernels.info import MOVE_INCREMENTAL, Move, report
from pymc_partitions.kernels.moves import choose_into, uniform_index
from pymc_partitions.kernels.parameters import update_all
from pymc_partitions.kernels.protocol import COMPONENT, Kernel, Support
from pymc_partitions.state import attach_items, detach_item, ensure_capacity, log_joint, open_slot, refresh

Options = namedtuple("Options", ["n_sweeps"])
Options.__doc__ = """Options of one Algorithm 7 transition (``IncrementalMetropolisStep``); also its sampler state.

n_sweeps : int   sweeps (all three stages) per transition
"""


def init(model, labels, options, rng):
    """The sampler state: the options alone."""
    return options


@jit
def transition(model, state, options, rng):
    """One ``IncrementalMetropolisStep``: ``options.n_sweeps`` sweeps; returns ``(state, options, Info)``.

    ``Info.accept_prob`` is the fraction of stage-1 proposals accepted.
    """
    before_clusters = state.n_clusters[0]
    before = log_joint(model, state)
    accepted = 0
    proposed = 0
    for _ in range(options.n_sweeps):
        state, sweep_accepted, sweep_proposed = sweep(model, state, rng)
        accepted += sweep_accepted
        proposed += sweep_proposed
    change = log_joint(model, state) - before
    rate = accepted / proposed if proposed > 0 else 0.0
    move = Move(MOVE_INCREMENTAL, accepted > 0, rate, change, -change, state.n_clusters[0] - before_clusters)
    return state, options, report(model, state, move)


@jit
def sweep(model, state, rng):
    """One sweep (stages 1-3 of the module docstring); returns ``(state, accepted, proposed)``."""
    n = state.labels.shape[0]
    k_max = families.k_max(model.family, model.params)
    state = ensure_capacity(state, min(n, k_max) - state.n_clusters[0])
    log_weights = np.empty(state.sizes.shape[0])
    scratch = np.empty_like(log_weights)
    candidates = np.empty((families.auxiliary_capacity(model.family, model.params, 1), state.theta.shape[1]))
    row = np.empty(state.stats.shape[1])
    one = np.empty(1, dtype=np.int64)
    accepted, proposed = metropolis_items(model, state, k_max, candidates, log_weights, scratch, row, one, rng)
    gibbs_items(model, state, log_weights, scratch, row, one, rng)
    update_all(model, state, rng)
    return state, accepted, proposed


@jit(_nrt=False)
def metropolis_items(model, state, k_max, candidates, log_weights, scratch, row, one, rng):
    """Stage 1 for every item; returns ``(accepted, proposed)``.

    A new cluster's parameters are one of the auxiliary values of
    ``families.auxiliary_values`` (a prior draw; for the component model an
    empty row), chosen uniformly.

    Allocation-free and compiled without reference counting (the buffers are
    the caller's), as ``clusters.update_items``.
    """
    n = state.labels.shape[0]
    params = model.params
    shift = priors.size_shift(model.prior, model.prior_params)
    accepted = 0
    proposed = 0
    for i in range(n):
        x = model.data[i]
        slot = state.labels[i]
        alone = state.sizes[slot] == 1
        if not alone and state.n_clusters[0] >= k_max:
            continue  # i cannot leave for a new cluster, and it is not alone
        proposed += 1
        k = state.n_clusters[0] - (1 if alone else 0)
        log_z = math.log(n - 1 + k * shift)
        log_new = priors.log_new_cluster(model.prior, model.prior_params, model.log_v_table, n, k)
        target = -1
        if alone:
            for c in range(state.n_clusters[0]):  # join c with probability (m_c + s)/Z
                other = state.slots[c]
                log_weights[c] = -np.inf if other == slot else state.log_weight[other]
            pick, _ = choose_into(log_weights, state.n_clusters[0], -1, scratch, rng)
            target = state.slots[pick]
            log_ratio = log_z - log_new + families.log_density(model.family, state.theta[target], x, params)
        else:
            m = families.auxiliary_values(model.family, params, state.theta, state.slots, state.n_clusters[0], candidates, 0, rng)
            choice = 0 if m == 1 else uniform_index(m, rng)
            log_ratio = log_new - log_z + families.log_density(model.family, candidates[choice], x, params)
        log_ratio -= families.log_density(model.family, state.theta[slot], x, params)
        if not (log_ratio >= 0.0 or rng.random() < math.exp(log_ratio)):
            continue
        accepted += 1
        source = detach_item(model, state, i, row)
        if source >= 0:
            refresh(model, state, source)
        if not alone:
            target = open_slot(state)
            for q in range(candidates.shape[1]):
                state.theta[target, q] = candidates[choice, q]
        one[0] = i
        attach_items(model, state, target, one, 1, row)
        refresh(model, state, target)
    return accepted, proposed


@jit(_nrt=False)
def gibbs_items(model, state, log_weights, scratch, row, one, rng):
    """Stage 2: each item that shares its cluster gets a Gibbs update among the occupied clusters."""
    for i in range(state.labels.shape[0]):
        if state.sizes[state.labels[i]] == 1:
            continue
        x = model.data[i]
        refresh(model, state, detach_item(model, state, i, row))
        k = state.n_clusters[0]
        for c in range(k):
            slot = state.slots[c]
            log_weights[c] = state.log_weight[slot] + families.log_density(model.family, state.theta[slot], x, model.params)
        pick, _ = choose_into(log_weights, k, -1, scratch, rng)
        one[0] = i
        attach_items(model, state, state.slots[pick], one, 1, row)
        refresh(model, state, state.slots[pick])


KERNEL = Kernel(init, transition, Options, Support((PARAMETRIC, COMPONENT), min_items=2))
"""The incremental Metropolis (``IncrementalMetropolisStep``) (``kernels.protocol``)."""
