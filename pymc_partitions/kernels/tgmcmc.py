"""Tree-guided MCMC (tgMCMC; Lee & Choi 2015, ``papers/003_...``, Sec. 3), exact with a guide tree.

Every cluster ``c`` has a binary tree ``t_c`` with the IBHC potentials and
dissimilarities ``d`` of :mod:`~pymc_partitions.kernels.ibhc`: the subtree that
a fixed *guide tree* over all items induces on ``c`` (``ibhc.induced_tree``), a
function of ``c``'s items.  The step builds the guide from the current
partition while PyMC tunes and keeps it fixed afterwards.  One transition is
``n_global`` global moves (the paper's ``G``), then ``n_local`` local sweeps.

Global move (Sec. 3.2) from ``K`` clusters: pick a cluster ``c`` uniformly and
put every other cluster ``c'`` in ``M`` with probability ``1 / (1 + d(c, c'))``.

* ``M`` empty: split ``c``.  SampleSub draws an internal node ``c*`` of ``t_c``
  ``∝ d(l(c*), r(c*)) + eps`` (``eps`` 10^-3 times the largest ``d`` of ``t_c``,
  :data:`SPLIT_LOG_EPS`; the paper's is the largest ``d``); ``l(c*)`` and ``r(c*)``
  start two clusters, and the subtrees off the path from ``c*`` to the root,
  nearest first, are StocInserted: into a cluster ``s`` ``∝ d(s, q)^(-1)``, or
  as a new cluster ``∝ 1``, on top of the tree of the cluster they join.  One
  path per split: ``q`` is the product of these choices.
* ``M`` not empty: merge ``B = {c} ∪ M``, with ``q`` summed over which cluster
  was picked first (eq. (11) for the reverse of a split; the paper's forward
  merge counts one).  Its reverse is the split of the union forced towards
  ``B``; 0 (reject) if no split of the union's tree produces ``B``.

Each move is accepted with ``min(1, pi(new) q(old | new) / (pi(old) q(new | old)))``,
``pi`` the collapsed posterior.  Local move (Sec. 3.3): for each root of the
guide's forest, ``D`` rounds of SampleSub from that root; the items below the
final node are updated from their exact Gibbs conditionals.

Why the trees come from a fixed guide, the one-path and merge-sum arguments,
the reverse of a merge, local moves and irreducibility: ``docs/exactness.md``,
Construction notes, "tgMCMC: ..."; the two ``eps`` compared:
``docs/tgmcmc_results.md``, "SampleSub's ε for global splits".

References
----------
Lee, J. & Choi, S. (2015). Tree-guided MCMC inference for normalized random
measure mixture models. NIPS 28.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from pymc_partitions._dispatch import ADDITIVE
from pymc_partitions._jit import jit
from pymc_partitions.kernels import gibbs, ibhc
from pymc_partitions.kernels.clusters import log_merge_many_ratio, merge_clusters, split_cluster
from pymc_partitions.kernels.info import MOVE_GIBBS, MOVE_MERGE, MOVE_SPLIT, Move, no_move, report
from pymc_partitions.kernels.moves import choose, metropolis_accept
from pymc_partitions.kernels.protocol import Kernel, Schedule, Support, at_doubling_steps
from pymc_partitions.state import members_of

SPLIT_LOG_EPS = math.log(1e-3)
"""log of SampleSub's ``eps`` for a global split relative to the tree's largest ``d`` (the paper: 0)."""

Options = namedtuple("Options", ["n_global", "n_local", "depth"])
Options.__doc__ = """Options of a ``TreeGuidedStep``.

n_global : int    global moves per transition (``G`` in the paper)
n_local : int     local sweeps per transition
depth : int       SampleSub rounds of a local sweep (``D`` in the paper)
"""

Sampler = namedtuple("Sampler", ["n_global", "n_local", "depth", "guide"])
Sampler.__doc__ = """The sampler state (:func:`init`): the options and the guide tree.

n_global, n_local, depth   as in :class:`Options`
guide : ibhc.Guide         the guide tree over all items, built from a partition (``ibhc.build_guide``)
"""


def init(model, labels, options, rng):
    """The :class:`Sampler` with a guide tree built from the partition of ``state``.

    ``TreeGuidedStep`` calls it again at tuning steps 1, 2, 4, ... and keeps the
    guide fixed once tuning ends: every move is exact for a fixed guide.
    """
    guide = ibhc.build_guide(model, labels, rng)
    return Sampler(options.n_global, options.n_local, options.depth, guide)


@jit
def transition(model, state, sampler, rng):
    """One ``TreeGuidedStep``: ``n_global`` global moves, then ``n_local`` local sweeps; returns
    ``(state, sampler, Info)``.  ``Info`` describes the last global move (with no global moves, the local
    sweeps as a Gibbs move)."""
    guide = sampler.guide
    nu = ibhc.log_nu(model.prior, model.prior_params, model.log_v_table, model.data.shape[0], guide.k_ref[0])
    ibhc.refresh_guide(model, guide, nu)
    last = no_move()
    if sampler.n_global > 0:
        log_t = cluster_log_t(model, state, guide, nu)
        for _ in range(sampler.n_global):
            state, log_t, last = global_move(model, state, guide, log_t, nu, rng)
    before = state.n_clusters[0]
    change = 0.0
    for _ in range(sampler.n_local):
        state, sweep_change = local_move(model, state, guide, sampler.depth, rng)
        change += sweep_change
    if sampler.n_global == 0:
        last = Move(MOVE_GIBBS, True, 1.0, change, -change, state.n_clusters[0] - before)
    return state, sampler, report(model, state, last)


@jit
def cluster_log_t(model, state, guide, nu):
    """``log phi(X_c | t_c)`` of every occupied slot's induced tree (indexed by slot). O(n log n)."""
    out = np.zeros(state.sizes.shape[0])
    members = np.empty(state.labels.shape[0], dtype=np.int64)
    for p in range(state.n_clusters[0]):
        slot = state.slots[p]
        count = members_of(state, slot, members, 0)
        tree = ibhc.induced_tree(model, guide, members, count, nu)
        out[slot] = tree.log_t[tree.root[0]]
    return out


# --------------------------------------------------------------------------- global moves


@jit
def global_move(model, state, guide, log_t, nu, rng):
    """One global move; returns ``(state, log_t, Move)`` (``log_t``: the slots' tree potentials, kept current)."""
    k = state.n_clusters[0]
    work = np.empty(state.stats.shape[1])
    c = state.slots[rng.integers(0, k)]
    chosen = np.empty(k, dtype=np.int64)
    chosen[0] = c
    count = 1
    log_apart = -math.log(k)  # log q of picking c and leaving every other cluster out of M
    for p in range(k):
        other = state.slots[p]
        if other == c:
            continue
        ld = ibhc.log_d_pair(
            model, state.stats[c], state.sizes[c], log_t[c], state.stats[other], state.sizes[other], log_t[other], nu, work
        )
        if rng.random() < math.exp(-ibhc.log_one_plus_exp(ld)):
            chosen[count] = other
            count += 1
        else:
            log_apart += ld - ibhc.log_one_plus_exp(ld)
    if count > 1:
        return merge_move(model, state, guide, log_t, nu, chosen[:count], rng)
    if state.sizes[c] < 2:  # a single item cannot be split: no move
        return state, log_t, no_move()
    return split_move(model, state, guide, log_t, nu, c, log_apart, rng)


@jit
def split_move(model, state, guide, log_t, nu, c, log_pick, rng):
    """Propose splitting cluster ``c`` along its tree (``log_pick``: log q of choosing to split ``c``)."""
    k = state.n_clusters[0]
    members = np.empty(state.sizes[c], dtype=np.int64)
    members_of(state, c, members, 0)
    tree = ibhc.induced_tree(model, guide, members, members.shape[0], nu)
    no_labels = np.empty(0, dtype=np.int64)
    split_node, log_sub = sample_split_node(tree, -1, rng)
    log_insert, atoms, atom_block, block_stats, block_size, block_log_t, n_blocks = construct(
        model, tree, split_node, no_labels, nu, rng
    )
    k_after = k + n_blocks - 1
    log_target = -log_merge_many_ratio(model, k_after, block_stats, block_size, n_blocks)
    table_stats = np.empty((k_after, state.stats.shape[1]))  # the clusters after the split: others, then S
    table_size = np.empty(k_after, dtype=np.int64)
    table_log_t = np.empty(k_after)
    in_s = np.zeros(k_after, dtype=np.bool_)
    row = 0
    for p in range(k + n_blocks):
        slot = state.slots[p] if p < k else -1
        if slot == c:
            continue
        source = state.stats[slot] if p < k else block_stats[p - k]
        for r in range(source.shape[0]):
            table_stats[row, r] = source[r]
        table_size[row] = state.sizes[slot] if p < k else block_size[p - k]
        table_log_t[row] = log_t[slot] if p < k else block_log_t[p - k]
        in_s[row] = p >= k
        row += 1
    log_reverse = log_merge_probability(model, table_stats, table_size, table_log_t, np.arange(k_after), in_s, nu)
    log_proposal = log_reverse - (log_pick + log_sub + log_insert)
    accepted, accept_prob = metropolis_accept(log_target + log_proposal, rng)
    if accepted:
        state, log_t = _apply_split(model, state, log_t, c, tree, atoms, atom_block, block_log_t, n_blocks)
    return state, log_t, Move(MOVE_SPLIT, accepted, accept_prob, log_target, log_proposal, n_blocks - 1 if accepted else 0)


@jit
def merge_move(model, state, guide, log_t, nu, chosen, rng):
    """Propose merging the clusters ``chosen`` (slots, the first picked, the others ``M``)."""
    k = state.n_clusters[0]
    n_merged = chosen.shape[0]
    in_b = np.zeros(k, dtype=np.bool_)
    total = 0
    for p in range(k):
        for b in range(n_merged):
            if state.slots[p] == chosen[b]:
                in_b[p] = True
    merged_stats = np.empty((n_merged, state.stats.shape[1]))
    merged_size = np.empty(n_merged, dtype=np.int64)
    for b in range(n_merged):
        for r in range(merged_stats.shape[1]):
            merged_stats[b, r] = state.stats[chosen[b], r]
        merged_size[b] = state.sizes[chosen[b]]
        total += state.sizes[chosen[b]]
    log_target = log_merge_many_ratio(model, k, merged_stats, merged_size, n_merged)
    log_forward = log_merge_probability(model, state.stats, state.sizes, log_t, state.slots[:k], in_b, nu)
    items = np.empty(total, dtype=np.int64)
    end = 0
    for b in range(n_merged):
        end = members_of(state, chosen[b], items, end)
    tree = ibhc.induced_tree(model, guide, items, total, nu)
    log_reverse = _log_split_probability(model, state, tree, chosen, log_t, nu, rng)
    log_proposal = log_reverse - log_forward
    accepted, accept_prob = metropolis_accept(log_target + log_proposal, rng)
    if accepted:
        for b in range(1, n_merged):
            merge_clusters(model, state, chosen[0], chosen[b])
        log_t[chosen[0]] = tree.log_t[tree.root[0]]
    return state, log_t, Move(MOVE_MERGE, accepted, accept_prob, log_target, log_proposal, 1 - n_merged if accepted else 0)


@jit
def _log_split_probability(model, state, tree, chosen, log_t, nu, rng):
    """log q of the split of the union of ``chosen`` (with tree ``tree``) back into ``chosen``, after their merge.

    ``-inf`` if no split of ``tree`` produces these clusters.  Every choice is
    forced, ``rng`` is not drawn from.
    """
    m = tree.items.shape[0]
    n_merged = chosen.shape[0]
    leaf_label = np.empty(m, dtype=np.int64)
    for q in range(m):
        slot = state.labels[tree.items[q]]
        for b in range(n_merged):
            if chosen[b] == slot:
                leaf_label[q] = b
    node_label = node_labels(tree, leaf_label)
    split_node = lowest_mixed_node(tree, node_label)
    if split_node < 0:
        return -np.inf
    _, log_sub = sample_split_node(tree, split_node, rng)
    log_insert = construct(model, tree, split_node, node_label, nu, rng)[0]
    root = tree.root[0]
    work = np.empty(tree.stats.shape[1])
    k_after = state.n_clusters[0] - n_merged + 1
    log_apart = -math.log(k_after)
    for p in range(state.n_clusters[0]):
        other = state.slots[p]
        inside = False
        for b in range(n_merged):
            inside = inside or chosen[b] == other
        if not inside:
            ld = ibhc.log_d_pair(
                model, tree.stats[root], tree.size[root], tree.log_t[root], state.stats[other], state.sizes[other],
                log_t[other], nu, work,
            )
            log_apart += ld - ibhc.log_one_plus_exp(ld)
    return log_apart + log_sub + log_insert


@jit
def log_merge_probability(model, stats, sizes, log_t, rows, in_b, nu):
    """log q of merging the clusters ``rows[j]`` with ``in_b[j]`` in a partition of the clusters ``rows``.

    The sum over which of them was picked first: ``sum_{b in B} 1/K prod_{c' != b} [c' in B] / (1 + d(b, c'))
    + [c' not in B] d(b, c') / (1 + d(b, c'))`` (``docs/exactness.md``, "tgMCMC: one path per split, a sum per merge").
    O(|B| K) log marginals.
    """
    k = rows.shape[0]
    work = np.empty(stats.shape[1])
    total = -np.inf
    for a in range(k):
        if not in_b[a]:
            continue
        b = rows[a]
        term = -math.log(k)
        for j in range(k):
            if j == a:
                continue
            o = rows[j]
            ld = ibhc.log_d_pair(model, stats[b], sizes[b], log_t[b], stats[o], sizes[o], log_t[o], nu, work)
            term += -ibhc.log_one_plus_exp(ld) if in_b[j] else ld - ibhc.log_one_plus_exp(ld)
        total = ibhc.log_add(total, term)
    return total


# --------------------------------------------------------------------------- splitting a tree


@jit
def sample_split_node(tree, forced, rng):
    """SampleSub over the internal nodes of ``tree`` (``∝ d + eps``, ``eps`` 10^-3 the largest ``d``); returns ``(node, log prob)``.

    ``forced >= 0`` returns that node's probability instead of drawing.
    """
    m = tree.items.shape[0]
    log_eps = -np.inf
    for v in range(m, 2 * m - 1):
        log_eps = max(log_eps, tree.log_d[v])
    log_eps += SPLIT_LOG_EPS
    log_w = np.empty(m - 1)
    for v in range(m, 2 * m - 1):
        log_w[v - m] = ibhc.log_add(tree.log_d[v], log_eps)
    pick, log_p = choose(log_w, m - 1, forced - m if forced >= 0 else -1, rng)
    return m + pick, log_p


@jit
def construct(model, tree, split_node, node_label, nu, rng):
    """Split ``tree`` at ``split_node`` and StocInsert the subtrees off its path to the root.

    Returns ``(log q, atoms, atom_block, block_stats, block_size, block_log_t, n_blocks)``:
    the log probability of the insertion choices, the atoms (``l(c*)``,
    ``r(c*)``, then the siblings of the path's nodes from the bottom up), the
    cluster each atom ended in, and the clusters' statistics, sizes and tree
    potentials.  With ``node_label`` (length > 0: the cluster of each pure
    node, :func:`node_labels`) every choice is forced towards those clusters.
    """
    forced_mode = node_label.shape[0] > 0
    atoms = np.empty(tree.items.shape[0] + 1, dtype=np.int64)
    atoms[0], atoms[1] = tree.left[split_node], tree.right[split_node]
    n_atoms = 2
    v = split_node
    while tree.parent[v] >= 0:
        up = tree.parent[v]
        atoms[n_atoms] = tree.right[up] if tree.left[up] == v else tree.left[up]
        n_atoms += 1
        v = up
    s = tree.stats.shape[1]
    block_stats = np.zeros((n_atoms, s))
    block_size = np.zeros(n_atoms, dtype=np.int64)
    block_log_t = np.empty(n_atoms)
    atom_block = np.empty(n_atoms, dtype=np.int64)
    label_block = np.full(tree.items.shape[0], -1, dtype=np.int64)  # labels are < number of items
    for b in range(2):
        a = atoms[b]
        for r in range(s):
            block_stats[b, r] = tree.stats[a, r]
        block_size[b] = tree.size[a]
        block_log_t[b] = tree.log_t[a]
        atom_block[b] = b
        if forced_mode:
            label_block[node_label[a]] = b
    n_blocks = 2
    log_q = 0.0
    log_w = np.empty(n_atoms + 1)
    log_h_join = np.empty(n_atoms)
    work = np.empty(s)
    for j in range(2, n_atoms):
        a = atoms[j]
        for b in range(n_blocks):  # StocInsert: join b with weight 1/d(b, a), a new cluster with weight 1
            ld = ibhc.log_d_pair(model, block_stats[b], block_size[b], block_log_t[b], tree.stats[a], tree.size[a], tree.log_t[a], nu, work)
            log_h_join[b] = block_log_t[b] + tree.log_t[a] - ld
            log_w[b] = -ld
        log_w[n_blocks] = 0.0
        forced = -1
        if forced_mode:
            forced = label_block[node_label[a]]
            if forced < 0:
                forced = n_blocks
                label_block[node_label[a]] = n_blocks
        pick, log_p = choose(log_w, n_blocks + 1, forced, rng)
        log_q += log_p
        atom_block[j] = pick
        if pick == n_blocks:
            for r in range(s):
                block_stats[pick, r] = tree.stats[a, r]
            block_size[pick] = tree.size[a]
            block_log_t[pick] = tree.log_t[a]
            n_blocks += 1
        else:  # a goes on top of the cluster's tree: the tree the guide induces on the union
            block_log_t[pick] = ibhc.log_add(log_h_join[pick], block_log_t[pick] + tree.log_t[a])
            block_size[pick] += tree.size[a]
            for r in range(s):
                block_stats[pick, r] += tree.stats[a, r]
    return log_q, atoms[:n_atoms], atom_block, block_stats, block_size, block_log_t, n_blocks


@jit
def node_labels(tree, leaf_label):
    """The cluster of every node of ``tree`` whose leaves share one (``leaf_label``), ``-1`` for mixed nodes."""
    m = tree.items.shape[0]
    label = np.empty(2 * m - 1, dtype=np.int64)
    for v in range(m):
        label[v] = leaf_label[v]
    for v in ibhc._post_order(tree.left, tree.right, tree.root[0]):
        if v >= m:
            a, b = label[tree.left[v]], label[tree.right[v]]
            label[v] = a if a == b and a >= 0 else -1
    return label


@jit
def lowest_mixed_node(tree, node_label):
    """The node a split must have drawn to produce the clusters ``node_label``, or ``-1`` if no split can.

    The mixed nodes (leaves from several clusters) of a split's outcome are
    the split node and its ancestors: a path from the root on which every node
    has one pure child, ending at a node with two pure children.
    """
    v = tree.root[0]
    while True:
        left_mixed = node_label[tree.left[v]] < 0
        right_mixed = node_label[tree.right[v]] < 0
        if left_mixed and right_mixed:
            return -1
        if not (left_mixed or right_mixed):
            return v
        v = tree.left[v] if left_mixed else tree.right[v]


@jit
def _apply_split(model, state, log_t, c, tree, atoms, atom_block, block_log_t, n_blocks):
    """Move the items of blocks ``1..n_blocks-1`` out of ``c`` into new clusters; returns ``(state, log_t)``."""
    movers = np.empty(tree.items.shape[0], dtype=np.int64)
    new_slots = np.empty(n_blocks, dtype=np.int64)
    new_slots[0] = c
    for b in range(1, n_blocks):
        count = 0
        for j in range(atoms.shape[0]):
            if atom_block[j] == b:
                a = atoms[j]
                for q in range(tree.lo[a], tree.hi[a] + 1):
                    movers[count] = tree.items[q]
                    count += 1
        state, new_slots[b] = split_cluster(model, state, c, movers, count)
    if log_t.shape[0] < state.sizes.shape[0]:
        grown = np.zeros(state.sizes.shape[0])
        for slot in range(log_t.shape[0]):
            grown[slot] = log_t[slot]
        log_t = grown
    for b in range(n_blocks):
        log_t[new_slots[b]] = block_log_t[b]
    return state, log_t


# --------------------------------------------------------------------------- local moves


@jit
def local_move(model, state, guide, depth, rng):
    """One local sweep: for each forest root, ``depth`` rounds of SampleSub; Gibbs updates of the items found.

    Returns ``(state, log joint change)``.
    """
    items = np.empty(state.labels.shape[0], dtype=np.int64)
    count = 0
    for top in guide.forest:
        v = top
        for _ in range(depth):
            v = ibhc.sample_sub(guide, v, rng)
        for r in range(guide.lo[v], guide.hi[v] + 1):
            items[count] = guide.leaf_at_rank[r]
            count += 1
    return gibbs.update_subset(model, state, items, count, rng)


KERNEL = Kernel(
    init, transition, Options, Support((ADDITIVE,), min_items=2), schedule=Schedule(restart=at_doubling_steps)
)
"""The tree-guided MCMC (``TreeGuidedStep``) (``kernels.protocol``)."""
