"""Infinite Relational Model block likelihood in numba (Kemp et al. 2006; ``papers/000_...`` Sec. 3.2).

A symmetric 0/1 adjacency ``A`` without self loops; every unordered pair of
clusters ``k <= l`` has an edge probability ``theta_kl ~ Beta(a, b)``, so

    log p(A | z) = sum_{k <= l} log B(a + N+_kl, b + N-_kl) - log B(a, b),

where ``N+_kl`` counts the edges between clusters ``k`` and ``l`` (within a
cluster each pair once) and ``N-_kl = P_kl - N+_kl`` with ``P_kl = m_k m_l``
pairs (``m_k (m_k - 1) / 2`` within).  Unlike the additive families the terms
couple clusters, so the state keeps the whole edge-count matrix: ``edges[k, l]``
(symmetric; the diagonal holds the within-cluster counts) over cluster slots.
Items not currently placed in any slot (label ``-1``, as in the intermediate
states of the ARM construction) contribute nothing.

``params = [n, a, b, ζ]`` (``params[0]`` is the number of columns, as for the families; ζ the power of
every vertex pair's likelihood, ``families``, "Coarsening").  Coarsened (ζ < 1), each pair's Bernoulli
likelihood is raised to ζ, so a block's term is ``log B(a + ζ N+, b + ζ N-) - log B(a, b)``.
"""

import math

import numpy as np

from pymc_partitions._dispatch import RELATIONAL
from pymc_partitions._jit import jit

from .spec import ADJACENCY, SCALAR, FamilySpec, Hyper, Hyperpriors, Learned


def default_hyperparameters(adjacency):
    """``a = 2 ρ``, ``b = 2 (1 − ρ)``, ``ρ = (edges + 1) / (pairs + 2)``: the Beta prior of every block's edge
    density centred on the network's smoothed density, with the weight of two observations."""
    n = adjacency.shape[0]
    edges = float(np.triu(adjacency, 1).sum())
    density = (edges + 1.0) / (n * (n - 1) / 2.0 + 2.0)
    return {"a": 2.0 * density, "b": 2.0 * (1.0 - density)}


def default_hyperpriors(adjacency):
    """The learned default for a network: the block densities' Beta concentration ``c`` gets a log-normal prior.

    ``a = c ρ``, ``b = c (1 − ρ)`` with the smoothed density ``ρ`` of
    :func:`default_hyperparameters` and ``c ~ LogNormal(log 2, 1)``: every
    block's edge density has prior mean ``ρ`` and the weight of ``c`` vertex
    pairs; a small ``c`` lets blocks be nearly empty or nearly full.  At the
    median the fixed default.
    """
    density = default_hyperparameters(adjacency)["a"] / 2.0

    def assemble(concentration):
        return {"a": concentration * density, "b": concentration * (1.0 - density)}

    return Hyperpriors((Learned("concentration", 2.0),), assemble)


SPEC = FamilySpec(
    kind=RELATIONAL,
    data=ADJACENCY,
    hypers=(Hyper("a", SCALAR, lower=0.0, default=1.0), Hyper("b", SCALAR, lower=0.0, default=1.0)),
    defaults=default_hyperparameters,
    hyperpriors=default_hyperpriors,
)


@jit(inline="always")
def _betaln(x, y):
    return math.lgamma(x) + math.lgamma(y) - math.lgamma(x + y)


@jit(inline="always")
def pair_log_marginal(n_edges, n_pairs, params):
    """``log B(a + ζ N+, b + ζ N-) - log B(a, b)`` for ``N+ = n_edges`` of ``n_pairs`` pairs (0 for no pairs)."""
    if n_pairs == 0:
        return 0.0
    a, b, zeta = params[1], params[2], params[3]
    return _betaln(a + zeta * n_edges, b + zeta * (n_pairs - n_edges)) - _betaln(a, b)


@jit(inline="always")
def n_pairs(m_k, m_l, same):
    """Vertex pairs between clusters of sizes ``m_k`` and ``m_l`` (within one cluster if ``same``)."""
    return m_k * (m_k - 1) / 2 if same else float(m_k * m_l)


@jit(inline="always")
def item_edges_to_slots(adjacency, labels, item, out):
    """``out[slot]`` += edges from ``item`` to the placed items of each slot (unplaced vertices skipped). O(n)."""
    row = adjacency[item]
    for v in range(labels.shape[0]):
        if row[v] != 0.0 and labels[v] >= 0:
            out[labels[v]] += row[v]


@jit
def edges_to_slots(adjacency, labels, members, count, out):
    """``out[slot]`` += edges from the items ``members[:count]`` to the placed items of each slot.

    Returns the number of edges among the items themselves.  Unplaced vertices
    (label ``-1``) are skipped, so the set itself must be unplaced.
    O(count * n) for the slot counts plus O(count^2) for the inner edges.
    """
    inner = 0.0
    for p in range(count):
        item_edges_to_slots(adjacency, labels, members[p], out)
        for q in range(p):
            inner += adjacency[members[p], members[q]]
    return inner


@jit
def join_log_likelihood(edges, sizes, slots, n_clusters, set_edges, set_inner, set_size, target, params):
    """Change in ``log p(A | z)`` when the unplaced set joins slot ``target`` (``-1``: a new cluster).

    ``set_edges``/``set_inner`` come from :func:`edges_to_slots`.  O(K).
    """
    total = 0.0
    for q in range(n_clusters):
        slot = slots[q]
        m_l = sizes[slot]
        if slot == target:
            old = edges[slot, slot]
            total += pair_log_marginal(old + set_edges[slot] + set_inner, n_pairs(m_l + set_size, 0, True), params)
            total -= pair_log_marginal(old, n_pairs(m_l, 0, True), params)
        elif target >= 0:
            m_k = sizes[target]
            old = edges[target, slot]
            total += pair_log_marginal(old + set_edges[slot], n_pairs(m_k + set_size, m_l, False), params)
            total -= pair_log_marginal(old, n_pairs(m_k, m_l, False), params)
        else:
            total += pair_log_marginal(set_edges[slot], n_pairs(set_size, m_l, False), params)
    if target < 0:
        total += pair_log_marginal(set_inner, n_pairs(set_size, 0, True), params)
    return total


@jit
def move_edges(edges, item_edges, slot, sign):
    """Add (``sign=1``) or remove (``-1``) one item with ``item_edges[l]`` edges to each slot ``l`` at ``slot``.

    ``item_edges`` must not count the item's edges to itself (there are none)
    and, for removal, is measured with the item still counted in ``slot``'s
    membership only through other members.
    """
    for l in range(item_edges.shape[0]):
        e = item_edges[l]
        if e != 0.0:
            if l == slot:
                edges[slot, slot] += sign * e
            else:
                edges[slot, l] += sign * e
                edges[l, slot] += sign * e


@jit
def log_likelihood(edges, sizes, slots, n_clusters, params):
    """``log p(A | z)`` of the placed items: sum over slot pairs ``k <= l``."""
    total = 0.0
    for p in range(n_clusters):
        k = slots[p]
        total += pair_log_marginal(edges[k, k], n_pairs(sizes[k], 0, True), params)
        for q in range(p + 1, n_clusters):
            l = slots[q]
            total += pair_log_marginal(edges[k, l], n_pairs(sizes[k], sizes[l], False), params)
    return total


@jit
def merge_log_likelihood(edges, sizes, slots, n_clusters, a, b, params):
    """Change in ``log p(A | z)`` when slots ``a`` and ``b`` merge into one cluster.  O(K).

    Each other cluster ``x`` has its blocks ``(a, x)`` and ``(b, x)`` replaced by
    one block ``(a ∪ b, x)``; the blocks ``(a, a)``, ``(b, b)`` and ``(a, b)`` become
    the diagonal block of ``a ∪ b``.
    """
    m_a, m_b = sizes[a], sizes[b]
    total = 0.0
    for q in range(n_clusters):
        x = slots[q]
        if x == a or x == b:
            continue
        m_x = sizes[x]
        total += pair_log_marginal(edges[a, x] + edges[b, x], n_pairs(m_a + m_b, m_x, False), params)
        total -= pair_log_marginal(edges[a, x], n_pairs(m_a, m_x, False), params)
        total -= pair_log_marginal(edges[b, x], n_pairs(m_b, m_x, False), params)
    within = edges[a, a] + edges[b, b] + edges[a, b]
    total += pair_log_marginal(within, n_pairs(m_a + m_b, 0, True), params)
    total -= pair_log_marginal(edges[a, a], n_pairs(m_a, 0, True), params)
    total -= pair_log_marginal(edges[b, b], n_pairs(m_b, 0, True), params)
    total -= pair_log_marginal(edges[a, b], n_pairs(m_a, m_b, False), params)
    return total


@jit
def merge_edges(edges, keep, drop):
    """Fold slot ``drop``'s edge counts into slot ``keep``; ``drop``'s own row and column are left as they were."""
    within = edges[keep, keep] + edges[drop, drop] + edges[keep, drop]
    for slot in range(edges.shape[0]):
        if slot != keep and slot != drop:
            edges[keep, slot] += edges[drop, slot]
            edges[slot, keep] += edges[drop, slot]
    edges[keep, keep] = within
