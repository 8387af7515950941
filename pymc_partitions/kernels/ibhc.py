"""Incremental Bayesian hierarchical clustering (IBHC) trees for tree-guided MCMC (``papers/003_...``, Sec. 2.3, 3.1).

A binary tree over a set of items carries, at every node ``v`` with items ``A``
and children ``l, r``, the potentials of eq. (8) and the dissimilarity of eq. (9)
(Lee & Choi 2015):

    phi(X_A | h_A) = kappa(|A|) p(X_A),    phi(X_A | t_A) = phi(X_A | h_A) + phi(X_l | t_l) phi(X_r | t_r),
    d(l, r) = phi(X_l | t_l) phi(X_r | t_r) / phi(X_A | h_A),

``p(X_A)`` the family's marginal of the summed statistics, so that
``P(h_A | X_A, t_A) = 1 / (1 + d(l, r))``; leaves have ``phi(t) = phi(h)`` and
``d = 0``.  The same ``d`` compares any two disjoint trees as if joined under a
new root.  For a Gibbs-type prior ``kappa(m) = nu W(m)`` with
``nu = V(n, k+1)/V(n, k)`` (:func:`log_nu`) at the guide's reference cluster
count ``k_ref`` (the paper's ``kappa_rho(m, u)`` up to a constant for DP and NGG;
``docs/exactness.md``, "tgMCMC: trees from a fixed guide").

* :func:`seq_insert` -- SeqInsert (Sec. 2.3, Fig. 1): descend from the root into
  the child closer to the new subtree while ``d(l, x)`` or ``d(r, x)`` is below
  ``d(l, r)``, then put ``x`` on top of that node (no splitting);
* :func:`build_guide` -- the *guide tree* over all items: one tree per cluster
  of a partition by SeqInsert of its items in random order, the cluster trees
  joined by SeqInsert in random order;
* :func:`induced_tree` -- the subtree of the guide induced by a set of items
  (unary nodes contracted) with its potentials, in O(m log m) from the leaves'
  ranks and a range-minimum table of the guide's internal nodes;
* :func:`sample_sub` -- SampleSub (Sec. 3.1) on the guide: a node of a subtree
  ``∝ d + eps``, ``eps`` the largest ``d`` in the subtree, in O(depth) from
  per-node subtree sums;
* :func:`sequential_partition` -- the paper's initial partition for its toy
  experiment (IBHC's step 1 with the items put on top of the trees).

References
----------
Lee, J. & Choi, S. (2015). Tree-guided MCMC inference for normalized random
measure mixture models. NIPS 28 (``papers/003_...``).
Lee, J. & Choi, S. (2014). Incremental tree-based inference with dependent
normalized random measures. AISTATS.
Heller, K. A. & Ghahramani, Z. (2005). Bayesian hierarchical clustering. ICML.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from pymc_partitions import families, priors
from pymc_partitions._jit import jit
from pymc_partitions.kernels.clusters import heap_sort
from pymc_partitions.kernels.moves import shuffle
from pymc_partitions.labels import canonical

Guide = namedtuple(
    "Guide",
    [
        "left", "right", "parent", "stats", "size", "log_ml", "log_h", "log_t", "log_d", "log_sum_d", "log_max_d",
        "n_nodes", "root", "forest", "leaf_rank", "leaf_at_rank", "lo", "hi", "post_order", "depth", "gap_node", "rmq",
        "k_ref", "seen",
    ],
)
Guide.__doc__ = """A binary tree over all ``n`` items (``2n - 1`` nodes; leaves ``0..n-1`` are the items).

left, right, parent : int64[2n-1]   children (-1 for leaves) and parent (-1 for the root)
stats : float64[2n-1, s]            summed item statistics of each node
size : int64[2n-1]                  items below each node
log_ml : float64[2n-1]              log p(X_A), the family's log marginal of each node's statistics
log_h, log_t, log_d : float64[2n-1] log phi(h), log phi(t), log d(l, r) (-inf at leaves) at the hyperparameters in ``seen``
log_sum_d, log_max_d : float64[2n-1] log of the sum and the largest ``d`` over each node's subtree
n_nodes : int64[2n-1]               nodes in each node's subtree
root : int64[1]                     the root
forest : int64[k]                   roots of the cluster trees the guide was built from (local moves)
leaf_rank, leaf_at_rank : int64[n]  position of each item in the left-to-right leaf order, and its inverse
lo, hi : int64[2n-1]                first and last leaf rank below each node
post_order : int64[2n-1]            children before parents
depth : int64[2n-1]                 distance from the root
gap_node : int64[n-1]               the internal node separating leaf ranks ``g`` and ``g + 1``
rmq : int64[levels, n-1]            sparse table: the gap of least depth in ``[g, g + 2^j)``
k_ref : int64[1]                    clusters of the partition the guide was built from (``log_nu``)
seen : float64[:]                   ``log_nu``, family and prior parameters of the current potentials
"""

Induced = namedtuple(
    "Induced",
    ["items", "left", "right", "parent", "lo", "hi", "guide_node", "stats", "size", "log_h", "log_t", "log_d", "root"],
)
Induced.__doc__ = """The subtree of the guide induced by ``m`` items (``2m - 1`` nodes).

items : int64[m]                    the items in leaf order; leaf ``k`` is ``items[k]``, internal nodes are ``m..2m-2``
left, right, parent : int64[2m-1]   as in :class:`Guide`
guide_node : int64[2m-1]            the guide node each node stands for (its items are the set's items below it)
lo, hi : int64[2m-1]                the leaves below a node are ``items[lo:hi + 1]``
stats, size, log_h, log_t, log_d    as in :class:`Guide`, for the induced subsets
root : int64[1]                     the root node
"""


# --------------------------------------------------------------------------- potentials


@jit
def log_nu(prior, prior_params, log_v_table, n, k_ref):
    """``log nu = log[V(n, k+1)/V(n, k)]`` at ``k = k_ref`` for ``n`` items (the per-cluster factor of ``kappa``).

    For the mixture of finite mixtures, ``k`` is lowered until ``V(n, k+1) > 0``
    (0 if it never is): ``nu`` only shapes the proposals.  Takes the prior's
    fields, not the model, so that it is compiled once for every family.
    """
    log_w1 = priors.log_w(prior, prior_params, 1)
    k = max(k_ref, 1)
    while True:
        value = priors.log_new_cluster(prior, prior_params, log_v_table, n, k) - log_w1
        if math.isfinite(value):
            return value
        if k == 1:
            return 0.0
        k -= 1


@jit
def log_add(a, b):
    """``log(exp(a) + exp(b))``, exact at ``-inf``."""
    if a < b:
        a, b = b, a
    if b == -np.inf:
        return a
    return a + math.log1p(math.exp(b - a))


@jit
def log_h_of(model, stats, size, nu):
    """``log phi(X | h) = log nu + log W(size) + log p(X)`` for a set with statistics ``stats``."""
    return log_h_given(model, size, families.log_marginal(model.family, stats, model.params), nu)


@jit(inline="always")
def log_h_given(model, size, log_marginal, nu):
    """``log phi(X | h)`` of a set of ``size`` items whose log marginal ``log p(X)`` is known."""
    return nu + priors.log_w(model.prior, model.prior_params, size) + log_marginal


@jit
def log_d_pair(model, stats_a, size_a, log_t_a, stats_b, size_b, log_t_b, nu, work):
    """``log d(a, b)``: trees ``a`` and ``b`` joined under a new root (``work`` a statistics row, overwritten)."""
    for r in range(work.shape[0]):
        work[r] = stats_a[r] + stats_b[r]
    return log_t_a + log_t_b - log_h_of(model, work, size_a + size_b, nu)


@jit
def log_one_plus_exp(x):
    """``log(1 + exp(x))`` without overflow."""
    if x > 0:
        return x + math.log1p(math.exp(-x))
    return math.log1p(math.exp(x))


@jit(inline="always")
def _set_node(model, stats, size, log_h, log_t, log_d, v, left, right, nu):
    """Potentials of node ``v`` from its statistics and its children's (``left < 0``: a leaf)."""
    log_h[v] = log_h_of(model, stats[v], size[v], nu)
    _set_tree_potentials(log_h, log_t, log_d, v, left, right)


@jit(inline="always")
def _set_tree_potentials(log_h, log_t, log_d, v, left, right):
    """``log phi(t)`` and ``log d`` of node ``v`` from its ``log phi(h)`` and its children's ``log phi(t)``."""
    if left < 0:
        log_t[v] = log_h[v]
        log_d[v] = -np.inf
    else:
        joint = log_t[left] + log_t[right]
        log_t[v] = log_add(log_h[v], joint)
        log_d[v] = joint - log_h[v]


# --------------------------------------------------------------------------- the guide tree


@jit
def _empty_guide(n, k, s, n_seen):
    """A guide of ``n`` items, ``k`` forest roots and statistics rows of length ``s``, to be filled."""
    nodes = 2 * n - 1
    levels = 1
    while (1 << levels) < max(n - 1, 1):
        levels += 1
    return Guide(
        np.full(nodes, -1, dtype=np.int64), np.full(nodes, -1, dtype=np.int64), np.full(nodes, -1, dtype=np.int64),
        np.zeros((nodes, s)), np.zeros(nodes, dtype=np.int64), np.zeros(nodes), np.zeros(nodes), np.zeros(nodes),
        np.zeros(nodes), np.zeros(nodes), np.zeros(nodes), np.zeros(nodes, dtype=np.int64), np.zeros(1, dtype=np.int64),
        np.full(k, -1, dtype=np.int64), np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64),
        np.zeros(nodes, dtype=np.int64), np.zeros(nodes, dtype=np.int64), np.zeros(nodes, dtype=np.int64),
        np.zeros(nodes, dtype=np.int64), np.zeros(max(n - 1, 0), dtype=np.int64),
        np.zeros((levels + 1, max(n - 1, 0)), dtype=np.int64), np.zeros(1, dtype=np.int64),
        np.full(n_seen, np.nan),
    )


@jit
def seq_insert(model, guide, root, x, next_node, nu, work, whole):
    """SeqInsert: put the subtree ``x`` into the tree rooted at ``root``; returns the new root.

    At node ``c`` with children ``l, r``: if ``d(l, r)`` is below ``d(l, x)`` and
    ``d(r, x)`` (case 1, or ``c`` is a leaf or a node marked ``whole``), ``x``
    becomes ``c``'s sibling under the new internal node ``next_node``;
    otherwise the insertion continues in the child of smaller ``d`` (cases 2,
    3).  The potentials of the new node and of its ancestors are updated;
    trees are never split (as in StocInsert).  O(depth) log marginals.
    """
    g = guide
    node = root
    while g.left[node] >= 0 and not whole[node]:
        left, right = g.left[node], g.right[node]
        d_lx = log_d_pair(model, g.stats[left], g.size[left], g.log_t[left], g.stats[x], g.size[x], g.log_t[x], nu, work)
        d_rx = log_d_pair(model, g.stats[right], g.size[right], g.log_t[right], g.stats[x], g.size[x], g.log_t[x], nu, work)
        if g.log_d[node] <= min(d_lx, d_rx):
            break
        node = left if d_lx <= d_rx else right
    w = next_node
    above = g.parent[node]
    g.left[w], g.right[w], g.parent[w] = node, x, above
    g.parent[node] = w
    g.parent[x] = w
    if above >= 0:
        if g.left[above] == node:
            g.left[above] = w
        else:
            g.right[above] = w
    v = w
    while v >= 0:
        left, right = g.left[v], g.right[v]
        g.size[v] = g.size[left] + g.size[right]
        for r in range(g.stats.shape[1]):
            g.stats[v, r] = g.stats[left, r] + g.stats[right, r]
        _set_node(model, g.stats, g.size, g.log_h, g.log_t, g.log_d, v, left, right, nu)
        v = g.parent[v]
    return root if above >= 0 else w


@jit
def build_guide(model, labels, rng):
    """The guide tree of the partition ``labels`` (canonical, ``0..k-1``).

    Each cluster's tree is built by SeqInsert of its items in a random order
    (IBHC within the cluster, never splitting it); the cluster trees, whose
    roots form ``forest``, are then joined by SeqInsert in a random order.
    ``kappa`` uses ``nu`` at ``k_ref = k`` (:func:`log_nu`).  O(n depth) log
    marginals.
    """
    n = labels.shape[0]
    k = 0
    for i in range(n):
        k = max(k, labels[i] + 1)
    s = families.stat_size(model.family, model.data.shape[1])
    g = _empty_guide(n, k, s, 1 + model.params.shape[0] + model.prior_params.shape[0])
    g.k_ref[0] = k
    nu = log_nu(model.prior, model.prior_params, model.log_v_table, n, k)
    for i in range(n):
        families.item_stats(model.family, model.data[i], g.stats[i])
        g.size[i] = 1
        _set_node(model, g.stats, g.size, g.log_h, g.log_t, g.log_d, i, -1, -1, nu)
    work = np.empty(g.stats.shape[1])
    whole = np.zeros(2 * n - 1, dtype=np.bool_)
    forest = g.forest
    next_node = n
    for i in shuffle(np.arange(n), rng):
        c = labels[i]
        if forest[c] < 0:
            forest[c] = i
        else:
            forest[c] = seq_insert(model, g, forest[c], i, next_node, nu, work, whole)
            next_node += 1
    for c in range(k):
        whole[forest[c]] = True
    order = shuffle(np.arange(k), rng)
    root = forest[order[0]]
    for q in range(1, k):
        root = seq_insert(model, g, root, forest[order[q]], next_node, nu, work, whole)
        next_node += 1
    g.root[0] = root
    _index(g)
    refresh_guide(model, g, nu)
    return g


@jit
def _index(g):
    """Post-order, depths, leaf ranks and ranges, gap nodes and the range-minimum table of the guide ``g``."""
    nodes = g.left.shape[0]
    n = (nodes + 1) // 2
    stack = np.empty(nodes, dtype=np.int64)
    stack[0] = g.root[0]
    g.depth[g.root[0]] = 0
    top, count = 1, 0
    while top > 0:  # pre-order with the right child pushed first; reversed (right before left) it is a post-order
        top -= 1
        v = stack[top]
        g.post_order[nodes - 1 - count] = v
        count += 1
        if g.left[v] >= 0:
            for child in (g.left[v], g.right[v]):
                g.depth[child] = g.depth[v] + 1
                stack[top] = child
                top += 1
    # leaf ranks: a left-to-right in-order walk
    top = 0
    v = g.root[0]
    rank = 0
    while top > 0 or v >= 0:
        while v >= 0:
            stack[top] = v
            top += 1
            v = g.left[v]
        top -= 1
        v = stack[top]
        if g.left[v] < 0:
            g.leaf_rank[v] = rank
            g.leaf_at_rank[rank] = v
            g.lo[v] = rank
            g.hi[v] = rank
            rank += 1
        v = g.right[v]
    for q in range(nodes):
        v = g.post_order[q]
        if g.left[v] >= 0:
            g.lo[v] = g.lo[g.left[v]]
            g.hi[v] = g.hi[g.right[v]]
            g.gap_node[g.hi[g.left[v]]] = v
    gaps = n - 1
    for q in range(gaps):
        g.rmq[0, q] = q
    span = 1
    for j in range(1, g.rmq.shape[0]):
        for q in range(gaps - 2 * span + 1):
            a, b = g.rmq[j - 1, q], g.rmq[j - 1, q + span]
            g.rmq[j, q] = a if g.depth[g.gap_node[a]] <= g.depth[g.gap_node[b]] else b
        span *= 2


@jit
def _current(model, guide, nu):
    """``(same family parameters, same nu and prior parameters)``: whether the guide's values are those of ``model`` at ``nu``."""
    seen = guide.seen
    p, q = model.params.shape[0], model.prior_params.shape[0]
    same_family = seen[0] == seen[0]  # NaN: the log marginals were never computed
    for r in range(p):
        same_family = same_family and seen[1 + r] == model.params[r]
    same_prior = seen[0] == nu
    for r in range(q):
        same_prior = same_prior and seen[1 + p + r] == model.prior_params[r]
    return same_family, same_prior


@jit
def _remember(model, guide, nu):
    """Record in ``guide.seen`` the ``nu`` and parameters its values are now computed at (read by :func:`_current`)."""
    seen = guide.seen
    p, q = model.params.shape[0], model.prior_params.shape[0]
    seen[0] = nu
    for r in range(p):
        seen[1 + r] = model.params[r]
    for r in range(q):
        seen[1 + p + r] = model.prior_params[r]


@jit
def refresh_guide(model, guide, nu):
    """Recompute the guide's potentials and subtree sums if ``nu`` or a parameter changed since the last call. O(n).

    ``log phi(h_A) = log nu + log W(|A|) + log p(X_A)``: the log marginals
    ``log p(X_A)`` depend on the family's parameters only and are kept in
    ``log_ml``, so a change of ``nu`` or of the prior's parameters (the NGGP's
    ``u``, redrawn every iteration) costs ``2n - 1`` evaluations of ``log W``;
    a change of the family's parameters recomputes the log marginals as well.
    """
    same_family, same_prior = _current(model, guide, nu)
    if same_family and same_prior:
        return
    g = guide
    for v in g.post_order:
        left, right = g.left[v], g.right[v]
        if not same_family:
            g.log_ml[v] = families.log_marginal(model.family, g.stats[v], model.params)
        g.log_h[v] = log_h_given(model, g.size[v], g.log_ml[v], nu)
        _set_tree_potentials(g.log_h, g.log_t, g.log_d, v, left, right)
        if left < 0:
            g.n_nodes[v] = 1
            g.log_sum_d[v] = -np.inf
            g.log_max_d[v] = -np.inf
        else:
            g.n_nodes[v] = 1 + g.n_nodes[left] + g.n_nodes[right]
            g.log_sum_d[v] = log_add(g.log_d[v], log_add(g.log_sum_d[left], g.log_sum_d[right]))
            g.log_max_d[v] = max(g.log_d[v], max(g.log_max_d[left], g.log_max_d[right]))
    _remember(model, guide, nu)


@jit
def sample_sub(guide, top, rng):
    """SampleSub on the guide: a node of ``top``'s subtree drawn with probability ``∝ d(v) + eps``.

    ``eps`` is the largest ``d`` in the subtree (the paper's choice, so that
    leaves, with ``d = 0``, can be drawn); ``top`` itself is a candidate.
    Walks down from ``top`` choosing "this node", the left or the right
    subtree in proportion to their summed weights: O(depth).
    """
    g = guide
    if g.left[top] < 0:
        return top
    log_eps = g.log_max_d[top]
    v = top
    while g.left[v] >= 0:
        total = log_add(g.log_sum_d[v], math.log(g.n_nodes[v]) + log_eps)
        here = math.exp(log_add(g.log_d[v], log_eps) - total)
        left = g.left[v]
        go_left = math.exp(log_add(g.log_sum_d[left], math.log(g.n_nodes[left]) + log_eps) - total)
        u = rng.random()
        if u < here:
            return v
        v = left if u < here + go_left else g.right[v]
    return v


# --------------------------------------------------------------------------- induced subtrees


@jit
def _least_deep_gap(g, first, last):
    """The gap of least depth among gaps ``first..last`` (inclusive): the LCA of leaf ranks ``first`` and ``last + 1``."""
    length = last - first + 1
    j = 0
    while (2 << j) <= length:
        j += 1
    a, b = g.rmq[j, first], g.rmq[j, last - (1 << j) + 1]
    return a if g.depth[g.gap_node[a]] <= g.depth[g.gap_node[b]] else b


@jit
def induced_tree(model, guide, items, count, nu):
    """The subtree of the guide induced by ``items[:count]`` (distinct), with its statistics and potentials.

    Its internal nodes are the lowest common ancestors (in the guide) of the
    items adjacent in leaf order, and it is the Cartesian tree of their
    depths (:func:`induced_structure`): O(m log m) plus a log marginal for
    every node that does not hold all the items of its guide node.  A node that
    does is the root of that guide node's whole subtree, with the same sums in
    the same order, so when the guide's values are current (``refresh_guide``
    at ``model`` and ``nu``) its statistics and potentials are copied from the
    guide: the same numbers, bit for bit, without the log marginal.  Clusters
    near the partition the guide was built from consist mostly of such nodes.
    """
    t = induced_structure(guide, items, count)
    same_family, same_prior = _current(model, guide, nu)
    reuse = same_family and same_prior
    for v in _post_order(t.left, t.right, t.root[0]):
        left, right = t.left[v], t.right[v]
        node = t.guide_node[v]
        if reuse and t.size[v] == guide.size[node]:
            for r in range(t.stats.shape[1]):
                t.stats[v, r] = guide.stats[node, r]
            t.log_h[v], t.log_t[v], t.log_d[v] = guide.log_h[node], guide.log_t[node], guide.log_d[node]
            continue
        if left < 0:
            families.item_stats(model.family, model.data[t.items[v]], t.stats[v])
        else:
            for r in range(t.stats.shape[1]):
                t.stats[v, r] = t.stats[left, r] + t.stats[right, r]
        _set_node(model, t.stats, t.size, t.log_h, t.log_t, t.log_d, v, left, right, nu)
    return t


@jit
def induced_structure(guide, items, count):
    """The shape, leaf ranges and sizes of the subtree of the guide induced by ``items[:count]`` (statistics zero).

    Compiled once for every family (no model argument).
    """
    g = guide
    m = count
    ranks = np.empty(m, dtype=np.int64)
    for q in range(m):
        ranks[q] = g.leaf_rank[items[q]]
    heap_sort(ranks)
    nodes = 2 * m - 1
    t = Induced(
        np.empty(m, dtype=np.int64), np.full(nodes, -1, dtype=np.int64), np.full(nodes, -1, dtype=np.int64),
        np.full(nodes, -1, dtype=np.int64), np.empty(nodes, dtype=np.int64), np.empty(nodes, dtype=np.int64),
        np.empty(nodes, dtype=np.int64), np.zeros((nodes, g.stats.shape[1])), np.ones(nodes, dtype=np.int64),
        np.empty(nodes), np.empty(nodes), np.empty(nodes), np.zeros(1, dtype=np.int64),
    )
    for k in range(m):
        t.items[k] = g.leaf_at_rank[ranks[k]]
        t.guide_node[k] = t.items[k]
        t.lo[k] = k
        t.hi[k] = k
    gap_depth = np.empty(max(m - 1, 0), dtype=np.int64)
    for k in range(m - 1):
        t.guide_node[m + k] = g.gap_node[_least_deep_gap(g, ranks[k], ranks[k + 1] - 1)]
        gap_depth[k] = g.depth[t.guide_node[m + k]]
    stack = np.empty(max(m - 1, 1), dtype=np.int64)
    top = 0
    for k in range(m - 1):  # the Cartesian tree of gap_depth (least depth at the root)
        last = -1
        while top > 0 and gap_depth[stack[top - 1]] > gap_depth[k]:
            top -= 1
            last = stack[top]
        t.left[m + k] = m + last if last >= 0 else k
        t.right[m + k] = k + 1
        if top > 0:
            t.right[m + stack[top - 1]] = m + k
        stack[top] = k
        top += 1
    t.root[0] = m + stack[0] if m > 1 else 0
    for v in range(m, nodes):
        t.parent[t.left[v]] = v
        t.parent[t.right[v]] = v
    for v in _post_order(t.left, t.right, t.root[0]):
        if t.left[v] >= 0:
            t.size[v] = t.size[t.left[v]] + t.size[t.right[v]]
            t.lo[v], t.hi[v] = t.lo[t.left[v]], t.hi[t.right[v]]
    return t


@jit
def _post_order(left, right, root):
    """The nodes below ``root`` with children before parents."""
    nodes = left.shape[0]
    out = np.empty(nodes, dtype=np.int64)
    stack = np.empty(nodes, dtype=np.int64)
    stack[0] = root
    top, count = 1, 0
    while top > 0:
        top -= 1
        v = stack[top]
        out[nodes - 1 - count] = v
        count += 1
        if left[v] >= 0:
            stack[top] = left[v]
            stack[top + 1] = right[v]
            top += 2
    return out[nodes - count :]


# --------------------------------------------------------------------------- initial partitions


@jit
def sequential_partition(model, rng):
    """The initial partition of Lee & Choi's toy experiment (Sec. 4.1); canonical int32 labels.

    Items in a random order join the tree of least ``d`` (IBHC's step 1; the
    first of equal ones), or start a new tree if that ``d`` exceeds 1, and are put on top of the tree
    they join (no SeqInsert, so nothing is ever split).  ``kappa`` uses ``nu``
    at one cluster.  O(n K) log marginals.
    """
    n = model.data.shape[0]
    nu = log_nu(model.prior, model.prior_params, model.log_v_table, n, 1)
    s = families.stat_size(model.family, model.data.shape[1])
    stats = np.zeros((n, s))
    size = np.zeros(n, dtype=np.int64)
    log_t = np.zeros(n)
    labels = np.empty(n, dtype=np.int64)
    item = np.empty(s)
    work = np.empty(s)
    k = 0
    for i in shuffle(np.arange(n), rng):
        families.item_stats(model.family, model.data[i], item)
        log_item = log_h_of(model, item, 1, nu)
        best, best_d = -1, 0.0  # d > 1 (log d > 0) for every tree: a new one
        for c in range(k):
            ld = log_d_pair(model, stats[c], size[c], log_t[c], item, 1, log_item, nu, work)
            if ld < best_d or (best < 0 and ld == best_d):  # ties: the first such tree
                best, best_d = c, ld
        if best < 0:
            best = k
            k += 1
            log_t[best] = log_item
        else:
            log_t[best] = log_add(log_t[best] + log_item - best_d, log_t[best] + log_item)
        size[best] += 1
        for r in range(s):
            stats[best, r] += item[r]
        labels[i] = best
    return canonical(labels, n)
