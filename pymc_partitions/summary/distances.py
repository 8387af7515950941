"""Distances between partitions: Variation of Information and adjusted Rand index.

Both are functions of the contingency table between two partitions ``a``
(clusters ``k``, sizes ``n_k``) and ``b`` (clusters ``l``, sizes ``m_l``) of
the same ``N`` items, ``n_kl = #{i : a_i = k, b_i = l}``.

Variation of Information, in bits (Meilă 2007), ``VI = H(a | b) + H(b | a) =
2 H(a, b) - H(a) - H(b)`` with the empirical entropies of the labels::

    VI = (1/N) [ Σ_k n_k log2 n_k + Σ_l m_l log2 m_l - 2 Σ_kl n_kl log2 n_kl ]

a metric on partitions, 0 iff ``a`` and ``b`` are the same partition, at most
``log2 N`` (one cluster vs. all singletons).

Adjusted Rand index (Hubert & Arabie 1985), with ``C(x) = x (x - 1) / 2``
pairs, ``S_ab = Σ_kl C(n_kl)``, ``S_a = Σ_k C(n_k)``, ``S_b = Σ_l C(m_l)`` and
``E = S_a S_b / C(N)``::

    ARI = (S_ab - E) / ((S_a + S_b) / 2 - E)

1 for identical partitions, about 0 for independent random ones (it can be
negative); 1 when the denominator vanishes (both partitions all singletons, or
both one cluster, so identical).

:func:`distances_to_reference` computes both for every posterior draw against
one reference partition (``summarize(reference=...)``) in ``O(N)`` per draw
plus the size of its contingency table; :func:`vi_distance` and
:func:`adjusted_rand_index` are its one-draw case.

References
----------
Meilă, M. (2007). Comparing clusterings -- an information based distance.
*J. Multivariate Anal.* 98(5):873-895.

Hubert, L. & Arabie, P. (1985). Comparing partitions. *J. Classification* 2:193-218.
"""

from __future__ import annotations

import numpy as np

from pymc_partitions._jit import jit
from pymc_partitions._validation import check_label_pair
from pymc_partitions.labels import cluster_sizes, relabel

__all__ = ["adjusted_rand_index", "distances_to_reference", "vi_distance"]


@jit
def _count_terms(counts):
    """``(Σ c log2 c, Σ C(c))`` over ``counts``: the entropy and pair-count terms of VI and ARI."""
    h = 0.0
    pairs = 0.0
    for t in range(counts.shape[0]):
        c = counts[t]
        if c > 0:
            h += c * np.log2(c)
            pairs += c * (c - 1.0) / 2.0
    return h, pairs


@jit
def distances_to_reference(draws, reference):
    """VI (bits) and ARI of every row of ``draws`` to ``reference`` (see the module docstring).

    ``draws`` is (rows, N) and ``reference`` (N,), both in canonical labels
    (values below ``N``); returns two float64 arrays of length ``rows``.
    """
    n_draws, n = draws.shape
    k_ref = reference.max() + 1
    h_ref, s_ref = _count_terms(cluster_sizes(reference, k_ref))
    total_pairs = n * (n - 1.0) / 2.0
    table = np.zeros((draws.max() + 1) * k_ref, dtype=np.int64)
    vi = np.empty(n_draws)
    ari = np.empty(n_draws)
    for s in range(n_draws):
        k_draw = draws[s].max() + 1
        h_draw, s_draw = _count_terms(cluster_sizes(draws[s], k_draw))
        for i in range(n):
            table[draws[s, i] * k_ref + reference[i]] += 1
        h_joint, s_joint = _count_terms(table[: k_draw * k_ref])
        table[: k_draw * k_ref] = 0
        vi[s] = max((h_draw + h_ref - 2.0 * h_joint) / n, 0.0)
        if total_pairs == 0:
            ari[s] = 1.0
        else:
            expected = s_draw * s_ref / total_pairs
            denom = 0.5 * (s_draw + s_ref) - expected
            ari[s] = 1.0 if denom == 0 else (s_joint - expected) / denom
    return vi, ari


def _pair_distances(a, b):
    """``(VI, ARI)`` of two label vectors, validated."""
    a, b = check_label_pair(a, b)
    vi, ari = distances_to_reference(relabel(a)[None, :], relabel(b))
    return float(vi[0]), float(ari[0])


def vi_distance(a, b):
    """Variation of Information between two partitions, in bits (Meilă 2007).

    ``VI(a, b) = H(a | b) + H(b | a) = 2 H(a, b) - H(a) - H(b)``, with the
    empirical entropies of the labels over the ``N`` items.  In terms of the
    contingency counts ``n_kl`` and cluster sizes ``n_k``, ``m_l``::

        VI = (1/N) [ Σ_k n_k log2 n_k + Σ_l m_l log2 m_l - 2 Σ_kl n_kl log2 n_kl ]

    A metric on partitions, 0 iff ``a`` and ``b`` are the same partition, at
    most ``log2 N`` (one cluster vs. all singletons).

    Examples
    --------
    >>> vi_distance([0, 0, 1, 1], [5, 5, 2, 2])
    0.0
    >>> vi_distance([0, 0, 0, 0], [0, 1, 2, 3])
    2.0
    """
    return _pair_distances(a, b)[0]


def adjusted_rand_index(a, b):
    """Adjusted Rand index of two partitions (Hubert & Arabie 1985).

    With ``C(x) = x (x - 1) / 2`` pairs, ``S_ab = Σ_kl C(n_kl)``,
    ``S_a = Σ_k C(n_k)``, ``S_b = Σ_l C(m_l)`` and ``E = S_a S_b / C(N)``::

        ARI = (S_ab - E) / ((S_a + S_b) / 2 - E)

    1 for identical partitions, about 0 for independent random ones (it can be
    negative).  When the denominator vanishes (both partitions all singletons,
    or both a single cluster, so they are identical) the value is 1.

    Examples
    --------
    >>> adjusted_rand_index([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    >>> round(adjusted_rand_index([0, 0, 1, 1], [0, 1, 0, 1]), 3)
    -0.5
    """
    return _pair_distances(a, b)[1]
