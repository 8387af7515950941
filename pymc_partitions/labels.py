"""Canonical cluster labels and cluster sizes of label vectors (numba; no PyMC).

A partition of ``n`` items is stored as a label vector ``z`` (``z_i`` = the
cluster of item ``i``).  Labels are not identifiable: ``π(z)`` is the same
partition for every injective relabelling ``π``.  The canonical representative
numbers the clusters ``0, 1, 2, ...`` in order of first appearance::

    c_i = c_j                              if z_i = z_j for some j < i,
    c_i = #{distinct labels in z_0 .. z_{i-1}}   otherwise,

i.e. the restricted growth string with ``c_0 = 0`` and
``c_i <= max(c_0, ..., c_{i-1}) + 1``.  Two label vectors describe the same
partition if and only if their canonical forms are equal, and the map is
idempotent.  It is the stored form of ``z`` (``docs/design.md`` §7.3), so a partition
prior is a proper pmf over stored values.

The numba functions take *codes* in ``0 .. n_codes - 1`` (the cluster slots of
the partition state, or labels already known to be small non-negative integers;
they are not range-checked) and use a lookup table of ``n_codes`` entries, so a
vector costs ``O(n)`` after an ``O(n_codes)`` allocation:

- :func:`canonical` -- canonical labels of one vector;
- :func:`canonical_rows` -- the same for every row of a 2-D array, rows independent;
- :func:`cluster_sizes` -- ``m_k = #{i : z_i = k}`` of one vector;
- :func:`largest_fraction_rows` -- ``max_k m_k / n`` of every row;
- :func:`label_sums` -- ``T_k = sum_{i: z_i = k} v_i``, rows of a matrix summed by label;
- :func:`is_canonical` -- whether a vector is its own canonical form.

A cluster is *large* if it holds at least :data:`LARGE_CLUSTER_FRACTION` of
the items and at least 2 (:func:`large_cluster_size`): the number of large
clusters (:func:`large_cluster_counts`, the steps' sample stat
``partition_n_large_clusters``) counts the groups a user reads, not the
singletons and pairs a DP posterior always holds a few of.

:func:`relabel` is the public entry point for arbitrary integer labels (any
shape, negative or sparse values): it validates them, turns them into codes and
calls :func:`canonical_rows`.
"""

from __future__ import annotations

import numpy as np

from pymc_partitions._jit import jit
from pymc_partitions._validation import as_label_array

__all__ = [
    "LARGE_CLUSTER_FRACTION", "canonical", "canonical_rows", "cluster_sizes", "is_canonical", "label_sums",
    "large_cluster_counts", "large_cluster_size", "largest_fraction_rows", "relabel",
]

LARGE_CLUSTER_FRACTION = 0.01
"""A cluster is *large* if it holds at least this share of the items (and at least 2 items)."""


def large_cluster_size(n):
    """The smallest size of a large cluster of ``n`` items: ``max(2, ceil(LARGE_CLUSTER_FRACTION n))``.

    >>> large_cluster_size(50), large_cluster_size(1000), large_cluster_size(1001)
    (2, 10, 11)
    """
    return max(2, int(np.ceil(LARGE_CLUSTER_FRACTION * n)))


def large_cluster_counts(labels):
    """The number of large clusters (:func:`large_cluster_size`) of each row of ``labels``.

    ``labels`` holds canonical (or other non-negative, dense) labels, shape
    ``(rows, n)`` or ``(n,)``; returns int64 of shape ``(rows,)`` or a Python
    int.

    >>> large_cluster_counts([0, 0, 0, 1, 1, 2])
    2
    """
    arr = np.asarray(labels, dtype=np.int64)
    flat = np.ascontiguousarray(arr.reshape(-1, arr.shape[-1]))
    counts = _large_counts(flat, large_cluster_size(flat.shape[1]))
    return int(counts[0]) if arr.ndim == 1 else counts


@jit
def _canonical_into(codes, mapping, out):
    """Canonical labels of the vector ``codes`` into ``out``.

    ``mapping`` (length ``n_codes``) must be all ``-1`` on entry; it is all
    ``-1`` again on exit, so one table serves many vectors.
    """
    next_label = 0
    for i in range(codes.shape[0]):
        code = codes[i]
        if mapping[code] < 0:
            mapping[code] = next_label
            next_label += 1
        out[i] = mapping[code]
    for i in range(codes.shape[0]):
        mapping[codes[i]] = -1


@jit
def canonical(codes, n_codes):
    """Canonical labels of one vector: the k-th distinct code met becomes ``k``.

    Parameters
    ----------
    codes : int array, shape (n,)
        Values in ``0 .. n_codes - 1`` (not checked).
    n_codes : int
        An upper bound on the codes (e.g. the number of cluster slots).

    Returns
    -------
    int32 array, shape (n,)
    """
    out = np.empty(codes.shape[0], dtype=np.int32)
    _canonical_into(codes, np.full(n_codes, -1, dtype=np.int64), out)
    return out


@jit
def canonical_rows(codes, n_codes):
    """:func:`canonical` of every row of ``codes`` (shape (rows, n), values in ``0 .. n_codes - 1``); int32 (rows, n)."""
    rows, n = codes.shape
    out = np.empty((rows, n), dtype=np.int32)
    mapping = np.full(n_codes, -1, dtype=np.int64)
    for r in range(rows):
        _canonical_into(codes[r], mapping, out[r])
    return out


@jit
def cluster_sizes(labels, n_labels):
    """Cluster sizes ``m_k = #{i : labels[i] = k}`` for ``k = 0 .. n_labels - 1``, as int64.

    ``labels`` holds values in ``0 .. n_labels - 1`` (not checked).
    """
    sizes = np.zeros(n_labels, dtype=np.int64)
    for i in range(labels.shape[0]):
        sizes[labels[i]] += 1
    return sizes


@jit
def largest_fraction_rows(labels, n_labels):
    """Fraction of the items in the largest cluster, ``max_k m_k / n``, of every row of ``labels``.

    ``labels`` is (rows, n) with values in ``0 .. n_labels - 1`` (not checked);
    returns float64 (rows,).
    """
    rows, n = labels.shape
    out = np.empty(rows)
    for r in range(rows):
        out[r] = cluster_sizes(labels[r], n_labels).max() / n
    return out


@jit
def label_sums(labels, values):
    """``out[k] = sum_{i: labels[i] = k} values[i]`` for ``k < max(labels) + 1``; float64 (K, s).

    ``values`` is (n, s).  Negative labels are skipped (they belong to no
    cluster).  One pass over the items, O(n s): the per-cluster statistics and
    sizes of the PyTensor log densities (``distributions.cluster_sums``).
    """
    k = 0
    for i in range(labels.shape[0]):
        k = max(k, labels[i] + 1)
    out = np.zeros((k, values.shape[1]))
    for i in range(labels.shape[0]):
        label = labels[i]
        if label >= 0:
            for c in range(values.shape[1]):
                out[label, c] += values[i, c]
    return out


@jit
def _large_counts(labels, min_size):
    out = np.empty(labels.shape[0], dtype=np.int64)
    for r in range(labels.shape[0]):
        sizes = cluster_sizes(labels[r], labels[r].max() + 1)
        out[r] = np.sum(sizes >= min_size)
    return out


@jit
def is_canonical(labels):
    """Whether ``labels`` equals its canonical form: ``labels[0] = 0`` and each label at most 1 above all before it."""
    top = -1
    for i in range(labels.shape[0]):
        if labels[i] < 0 or labels[i] > top + 1:
            return False
        top = max(top, labels[i])
    return labels.shape[0] > 0


def relabel(z):
    """Canonical labels: clusters numbered ``0, 1, 2, ...`` in order of first appearance.

    Two label vectors describe the same partition if and only if their
    canonical forms are equal; ``relabel`` is idempotent.

    Parameters
    ----------
    z : array_like of int, shape (..., n)
        One label vector, or any stack of them with items on the last axis
        (e.g. a posterior ``(chain, draw, n)``); each vector is relabelled on
        its own.  Labels may be any integers (negative, sparse).

    Returns
    -------
    ndarray of int32, same shape as ``z``

    Examples
    --------
    >>> relabel([7, 7, 3, 9, 3]).tolist()
    [0, 0, 1, 2, 1]
    >>> relabel([[2, 0, 2], [1, 1, 0]]).tolist()
    [[0, 1, 0], [0, 0, 1]]
    """
    arr = as_label_array("z", z)
    if arr.size == 0:
        return np.zeros(arr.shape, dtype=np.int32)
    flat = arr.reshape(-1, arr.shape[-1])
    lo, hi = int(flat.min()), int(flat.max())
    if lo >= 0 and hi < max(4 * flat.shape[1], 1024):
        codes, n_codes = flat.astype(np.int64), hi + 1
    else:
        uniq, inverse = np.unique(flat, return_inverse=True)
        codes, n_codes = inverse.reshape(flat.shape).astype(np.int64), uniq.shape[0]
    return canonical_rows(np.ascontiguousarray(codes), n_codes).reshape(arr.shape)
