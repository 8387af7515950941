"""Gibbs sampling with auxiliary parameters (Neal 2000, Algorithm 8) for parametric models.

The state holds the labels and the parameters ``theta_c`` of the occupied
clusters; the target is ``pi(Pi, theta)`` of ``kernels.parameters``.  One
sweep updates each item ``i`` in turn, then every cluster's parameters:

1. Remove ``i`` from its cluster; ``K`` clusters remain.  Draw ``m``
   auxiliary parameter values ``phi_1..phi_m`` independently from the prior
   ``g``, except that if ``i`` was alone its cluster's parameters become
   ``phi_1`` (Neal's ``c_i`` singleton case).  For the generic component
   model the auxiliary values are the ``m = K_max - K`` rows no cluster
   occupies (``families.component``; ``docs/exactness.md``, "Your own
   component model"): ``families.auxiliary_values`` gives them.
2. Draw ``c_i`` with

       p(c_i = c)       ∝ (m_c + s) p(x_i | theta_c)                          (occupied c)
       p(c_i = new_a)   ∝ V(n, K+1)/V(n, K) W(1) / m * p(x_i | phi_a)         (a = 1..m, if K < k_max)

   (``m_c`` the other items of ``c``, ``W(m+1)/W(m) = m + s``,
   ``priors.log_new_cluster``).  A new cluster keeps its ``phi_a``; the
   other auxiliary values are discarded.
3. After the items, draw each cluster's parameters from their full
   conditional given its items (``families.update_parameters``; the
   component model leaves its rows to PyMC's samplers).

Neal's argument for step 2 holds for any Gibbs-type prior: it is the Gibbs
update of ``c_i`` in the joint of ``(c, theta)`` and the auxiliary values,
where given ``c_-i`` the ``m`` values are independent prior draws except
that a singleton ``c_i`` owns one of them (its label among the ``m`` uniform,
hence the ``1/m``).  The model's restriction to at most ``k_max`` clusters
removes the new options when ``K = k_max`` (their target probability is 0).
With ``m = 1`` and a singleton ``i``, the only new option is ``i``'s own
cluster with its parameters unchanged.

Each sweep reports the exact change of ``log pi`` it made (the delta tests
check it against the PyMC model).

References
----------
Neal, R. M. (2000). Markov chain sampling methods for Dirichlet process mixture
models. JCGS 9(2), 249-265, Algorithm 8.
"""

from __future__ import annotations

import math

import numpy as np

from pymc_partitions import priors
from pymc_partitions._jit import jit
from pymc_partitions import families
from pymc_partitions.kernels.moves import choose_into
from pymc_partitions.kernels.parameters import update_all
from pymc_partitions.state import attach_items, detach_item, ensure_capacity, log_joint, open_slot, refresh


@jit
def sweep(model, state, rng, n_auxiliary=1):
    """One Algorithm 8 sweep with ``n_auxiliary`` auxiliary values, then the parameter updates.

    Returns ``(state, change of log pi)``; kernels must continue with the returned state.
    """
    before = log_joint(model, state)
    n = state.labels.shape[0]
    k_max = families.k_max(model.family, model.params)
    state = ensure_capacity(state, min(n, k_max) - state.n_clusters[0])
    auxiliary = np.zeros((families.auxiliary_capacity(model.family, model.params, n_auxiliary), state.theta.shape[1]))
    log_weights = np.empty(state.sizes.shape[0] + auxiliary.shape[0])
    scratch = np.empty_like(log_weights)
    row = np.empty(state.stats.shape[1])
    one = np.empty(1, dtype=np.int64)
    update_items(model, state, auxiliary, k_max, log_weights, scratch, row, one, rng)
    update_all(model, state, rng)
    return state, log_joint(model, state) - before


@jit(_nrt=False)
def update_items(model, state, auxiliary, k_max, log_weights, scratch, row, one, rng):
    """Steps 1-2 of the module docstring for every item in turn; the state has room for ``min(n, k_max)`` clusters.

    Allocation-free and compiled without reference counting, as
    ``clusters.update_items``: the buffers are the caller's.
    """
    n = state.labels.shape[0]
    theta, params = state.theta, model.params
    p = theta.shape[1]
    for i in range(n):
        x = model.data[i]
        slot = state.labels[i]
        fresh = 0
        if state.sizes[slot] == 1:  # i's cluster closes: its parameters become the first auxiliary value
            for q in range(p):
                auxiliary[0, q] = theta[slot, q]
            fresh = 1
        source = detach_item(model, state, i, row)
        if source >= 0:
            refresh(model, state, source)
        k = state.n_clusters[0]
        for c in range(k):
            occupied = state.slots[c]
            log_weights[c] = state.log_weight[occupied] + families.log_density(model.family, theta[occupied], x, params)
        count = k
        if k < k_max:
            m = families.auxiliary_values(model.family, params, theta, state.slots, k, auxiliary, fresh, rng)
            log_new = priors.log_new_cluster(model.prior, model.prior_params, model.log_v_table, n, k) - math.log(m)
            for a in range(m):
                log_weights[k + a] = log_new + families.log_density(model.family, auxiliary[a], x, params)
            count = k + m
        pick, _ = choose_into(log_weights, count, -1, scratch, rng)
        if pick < k:
            target = state.slots[pick]
        else:
            target = open_slot(state)
            for q in range(p):
                theta[target, q] = auxiliary[pick - k, q]
        one[0] = i
        attach_items(model, state, target, one, 1, row)
        refresh(model, state, target)
