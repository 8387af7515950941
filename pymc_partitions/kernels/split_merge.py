"""Conjugate restricted-Gibbs split-merge (Jain & Neal 2004; ``papers/000_...``, Algorithm 1).

One proposal, for items ``i != j`` (uniform, or from past states for bSM):

1. ``S`` are the other items of the cluster(s) of ``i`` and ``j``, in
   increasing order (:func:`clusters.pair_members`);
2. launch state: ``i`` and ``j`` in two separate components, every item of
   ``S`` placed in one of them uniformly at random (bSM: by the past
   states), then ``n_intermediate`` restricted Gibbs scans of ``S`` between
   the two components, ``p(h -> t) ∝ (m_t + s) p(x_h | x_t)``;
3. if ``z_i = z_j`` propose the split obtained by one more restricted scan,
   with proposal probability ``q(split | launch)`` the product of that scan's
   conditional probabilities; accept with
   ``min(1, [pi(split)/pi(z)] / q(split | launch))``;
4. otherwise propose the merge of the two clusters and accept with
   ``min(1, [pi(merge)/pi(z)] q(z | launch))``, where ``q(z | launch)`` is the
   probability that a restricted scan from the launch state would produce the
   current split (each item forced to its current side).

The launch state depends on the random choices of steps 1-2 and on ``S`` in
its fixed order, never on how ``S`` is split now, which makes the pair of
moves reversible (Jain & Neal 2004, Sec. 3).  The scan order matters: the
split of a cluster and the merge that reverses it must visit ``S`` in the same
order, so the order is taken from the set itself; an order read from the
clusters' member lists broke detailed balance by up to 33 %
(``docs/exactness.md``).

Everything happens in place, with the cluster operations of
:mod:`~pymc_partitions.kernels.clusters`, at a cost of O(|S|) item moves
(for the relational model each move also counts O(n) edges): the launch is
built in the state itself (a split opens the second component), a rejected
split merges it back and a rejected merge's forced scan has restored the
current split.  ``pi`` is the collapsed posterior ``p(Pi) prod_c p(x_c)``;
its ratio ``log_target_ratio`` is reported for the delta tests.

References
----------
Jain, S. & Neal, R. M. (2004). A split-merge Markov chain Monte Carlo procedure
for the Dirichlet process mixture model. JCGS 13(1), 158-182.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from pymc_partitions._dispatch import ADDITIVE, RELATIONAL
from pymc_partitions._jit import jit
from pymc_partitions.kernels import gibbs
from pymc_partitions.kernels.background import choose_background, population_init, random_pair
from pymc_partitions.kernels.clusters import (
    log_merge_ratio, merge_clusters, pair_members, place_sides, relocate, restricted_scan, side_of,
)
from pymc_partitions.kernels.info import MOVE_MERGE, MOVE_SPLIT, Move, no_move, report
from pymc_partitions.kernels.moves import metropolis_accept
from pymc_partitions.kernels.protocol import Kernel, Support
from pymc_partitions.state import ensure_capacity, open_slot

Options = namedtuple("Options", ["n_moves", "n_intermediate", "gibbs_sweep"])
Options.__doc__ = """Options of one split-merge transition (``SplitMergeStep``, ``PastStatesSplitMergeStep``);
the sampler state of :func:`transition` (it keeps nothing else).

n_moves : int         proposals per transition
n_intermediate : int  restricted scans to the launch state (``L`` in the paper)
gibbs_sweep : bool    follow the proposals with a full Gibbs sweep
"""


def init(model, labels, options, rng):
    """The sampler state of :func:`transition`: the options alone."""
    return options


past_states_init = population_init
"""The sampler state of :func:`past_states_transition`: a ``background.Population`` of the options."""


@jit
def transition(model, state, options, rng):
    """One ``SplitMergeStep``: ``options.n_moves`` proposals, then optionally a Gibbs sweep; returns
    ``(state, options, Info)``, the ``Info`` of the last proposal.  ``i, j`` are a uniformly random pair."""
    n = state.labels.shape[0]
    no_background = np.empty(0, dtype=np.int32)  # no past states: random launch sides
    move = no_move()
    for _ in range(options.n_moves):
        i, j = random_pair(n, rng)
        state, move = propose_pair(model, state, i, j, no_background, no_background, options.n_intermediate, rng)
    if options.gibbs_sweep:
        state, _ = gibbs.sweep(model, state, rng)
    return state, options, report(model, state, move)


@jit
def past_states_transition(model, state, population, rng):
    """One ``PastStatesSplitMergeStep`` (bSM) of chain ``population.own``; returns ``(state, population, Info)``.

    ``i, j`` and the launch come from two past states drawn from
    ``population.history`` (``background.choose_background``); without two
    distinct past states there is no move (``MOVE_NONE``).
    """
    options = population.options
    move = no_move()
    for _ in range(options.n_moves):
        ok, i, j, za, zb = choose_background(population.history, population.own, rng)
        if ok:
            state, move = propose_pair(model, state, i, j, za, zb, options.n_intermediate, rng)
        else:
            move = no_move()
    if options.gibbs_sweep:
        state, _ = gibbs.sweep(model, state, rng)
    return state, population, report(model, state, move)


@jit(inline="always")
def propose_pair(model, state, i, j, za, zb, n_intermediate, rng):
    """Split-merge proposal for the items ``i != j``; returns ``(state, Move)``.

    With past states ``za, zb`` (non-empty) the launch is the paper's bSM
    (Sec. 3.6.2): an item of ``S`` starts on ``i``'s side if it shares
    ``i``'s clusters in both ``za`` and ``zb``, on ``j``'s if it shares
    ``j``'s, and on a random side otherwise.  The paper also intersects with
    the current ``z_i``, which makes the launch of a merge depend on the
    current split, so that the merge and the split that reverses it would
    start from different launch distributions; the launch here uses only
    ``za``, ``zb`` and ``S``, which both directions share, so the Jain-Neal
    argument holds unchanged.
    """
    slot_i, slot_j = state.labels[i], state.labels[j]
    split = slot_i == slot_j
    members = pair_members(state, i, j)
    sides = _launch_sides(members, i, j, za, zb, rng)
    if split:  # the launch: j opens the second component; the final scan is sampled
        state = ensure_capacity(state, 1)
        slot_j = open_slot(state)
        relocate(model, state, j, slot_j, np.empty(1, dtype=np.int64), np.empty(state.stats.shape[1]))
        final_sides = np.zeros(0, dtype=np.int64)
        log_target = 0.0
    else:  # the final scan is forced back to the current split
        log_target = log_merge_ratio(model, state, slot_i, slot_j)
        final_sides = side_of(state, members, slot_i)
    slots = np.array([slot_i, slot_j])
    place_sides(model, state, members, sides, slots)  # the launch: every item of S on its launch side
    no_force = final_sides[:0]
    log_q = 0.0
    for scan in range(n_intermediate + 1):
        log_q = restricted_scan(model, state, members, slots, final_sides if scan == n_intermediate else no_force, rng)
    if split:
        log_target = -log_merge_ratio(model, state, slot_i, slot_j)
    log_proposal = -log_q if split else log_q
    accepted, accept_prob = metropolis_accept(log_target + log_proposal, rng)
    if accepted != split:  # an accepted merge or a rejected split: the two components become one cluster
        merge_clusters(model, state, slot_i, slot_j)
    code, change = (MOVE_SPLIT, 1) if split else (MOVE_MERGE, -1)
    return state, Move(code, accepted, accept_prob, log_target, log_proposal, change if accepted else 0)


@jit(inline="always")
def _launch_sides(members, i, j, za, zb, rng):
    """Initial side (0: with ``i``, 1: with ``j``) of each item of ``S``: random, or the bSM rule."""
    background = za.shape[0] > 0
    side = np.empty(members.shape[0], dtype=np.int64)
    for h in range(members.shape[0]):
        item = members[h]
        if background and za[item] == za[i] and zb[item] == zb[i]:
            side[h] = 0
        elif background and za[item] == za[j] and zb[item] == zb[j]:
            side[h] = 1
        else:
            side[h] = 1 if rng.random() < 0.5 else 0
    return side


KERNEL = Kernel(init, transition, Options, Support((ADDITIVE, RELATIONAL), min_items=2))
"""The Jain & Neal split-merge (``SplitMergeStep``) (``kernels.protocol``)."""


PAST_STATES_KERNEL = Kernel(
    past_states_init, past_states_transition, Options, Support((ADDITIVE, RELATIONAL), min_items=2), population=True
)
"""The past-state split-merge (``PastStatesSplitMergeStep``), a population kernel (``kernels.protocol``)."""
