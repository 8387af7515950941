"""Hashing for the MinHash and LSH split-merge samplers (``papers/004_...``, Secs. 2.1-2.2, 3.1-3.2).

* **Hash tables fixed for the run**, built once in O(n·D·L) from the data and
  ``hash_seed``: :func:`minhash_tables` (Ioffe's 2010 ICWS, one hash per table)
  and :func:`sign_projection_tables` (Charikar 2002).  They are part of the
  kernel; the smart merges draw from their buckets, and their proposal
  probabilities are exact sums over the buckets (:func:`table_merge_log_prob`,
  :func:`anti_pair_log_prob`).
* **A fresh weighted MinHash per smart split** (:func:`draw_cut`): a point
  ``(k, y)`` uniform under the max envelope ``e_k = max_{x in C} φ_k(x)`` of the
  cluster ``C`` cuts it into the items whose region ``{(k, y): y < φ_k(x)}``
  contains the point, ``A``, and the rest, ``B``, with

      P(A, B) = sum_k (min_A φ_k - max_B φ_k)_+ / sum_k e_k          (eq. (4));

  :func:`cut_log_prob` adds the other labeling, ``P(B, A)``.

Features (:func:`feature`).  Weighted MinHash needs non-negative weights:
binary and count data are used as they are; real-valued data (the Normal
families) through the positive and negative parts of the standardised values
(Sec. 2.2, "simple feature transforms"), ``φ(x) = ((u)_+, (-u)_+)`` with
``u = (x - centre) / scale``, ``2d`` features.  Sign random projections use
``u`` itself (cosine similarity).

Why the point is the cluster's MinHash, and why the split needs a fresh one:
``docs/exactness.md``, "MinHash split-merge" (Hashing).

References
----------
Luo, C. & Shrivastava, A. (2018). Scaling-up split-merge MCMC with locality
sensitive sampling (LSS).  ``papers/004_...``.
Ioffe, S. (2010). Improved consistent sampling, weighted minhash and L1
sketching.  ICDM.
Charikar, M. (2002). Similarity estimation techniques from rounding
algorithms.  STOC (sign random projections).
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from pymc_partitions._jit import jit
from pymc_partitions.state import members_of

Hashing = namedtuple("Hashing", ["centre", "scale", "signed", "bucket", "start", "items", "anti"])
Hashing.__doc__ = """The hashing of one step: the feature transform and ``L`` fixed hash tables.

centre, scale : float64[d]   standardisation of the data's columns
signed : bool                features are ``((u)_+, (-u)_+)`` (real data) rather than ``x``
bucket : int64[L, n]         bucket of each item in each table
start : int64[L, B + 1]      table ``l``'s bucket ``b`` holds ``items[l, start[l, b]:start[l, b + 1]]``
items : int64[L, n]          items grouped by bucket
anti : int64[L, B]           the bucket of the opposite code (sign projections; -1 for MinHash)
"""


# --------------------------------------------------------------------------- features


def feature_transform(data, signed):
    """``(centre, scale)`` of the data's columns for the features (zero centre and unit scale if not ``signed``)."""
    data = np.asarray(data, dtype=np.float64)
    d = data.shape[1]
    if not signed:
        return np.zeros(d), np.ones(d)
    scale = data.std(axis=0)
    return data.mean(axis=0), np.where(scale > 0, scale, 1.0)


@jit(inline="always")
def n_features(hashing, d):
    """Number of MinHash features of a ``d``-column item."""
    return 2 * d if hashing.signed else d


@jit(inline="always")
def feature(hashing, x, k):
    """MinHash feature ``φ_k(x) >= 0`` of the item ``x`` (module docstring)."""
    if not hashing.signed:
        return max(x[k], 0.0)
    d = x.shape[0]
    if k < d:
        return max((x[k] - hashing.centre[k]) / hashing.scale[k], 0.0)
    return max((hashing.centre[k - d] - x[k - d]) / hashing.scale[k - d], 0.0)


# --------------------------------------------------------------------------- fresh MinHash cut (smart split)


@jit
def draw_cut(data, hashing, members, count, sides, rng):
    """Draw a fresh weighted MinHash of the items ``members[:count]`` and split them by it.

    The hash is a point ``(k, y)`` uniform under the items' max envelope
    ``e``; ``sides[q] = 0`` for the items whose region contains it (``A``),
    ``1`` for the others (``B``).  Returns the number of items in ``B``
    (``0``: no split), or ``-1`` if the envelope is empty (all features zero).
    O(count · D); ``data`` is the model's data (the features are computed from it).
    """
    dim = n_features(hashing, data.shape[1])
    envelope = np.zeros(dim)
    for q in range(count):
        x = data[members[q]]
        for k in range(dim):
            envelope[k] = max(envelope[k], feature(hashing, x, k))
    total = 0.0
    for k in range(dim):
        total += envelope[k]
    if total <= 0.0:
        return -1
    target = rng.random() * total
    k = 0
    while k < dim - 1 and target >= envelope[k]:
        target -= envelope[k]
        k += 1
    level = min(target, envelope[k])  # uniform on [0, e_k)
    outside = 0
    for q in range(count):
        if feature(hashing, data[members[q]], k) > level:
            sides[q] = 0
        else:
            sides[q] = 1
            outside += 1
    return outside


@jit
def cut_log_prob(data, hashing, state, slot_a, slot_b):
    """``log P({A, B})`` that a fresh MinHash cut of ``A ∪ B`` splits it into the clusters ``slot_a`` and ``slot_b``.

    Both labelings count (module docstring, eq. (4)):

        [sum_k (min_A φ_k - max_B φ_k)_+ + sum_k (min_B φ_k - max_A φ_k)_+] / sum_k max(max_A φ_k, max_B φ_k)

    ``-inf`` if no cut gives this split.  O((|A| + |B|) · D).
    """
    dim = n_features(hashing, data.shape[1])
    low_a, high_a = _feature_range(data, hashing, state, slot_a, dim)
    low_b, high_b = _feature_range(data, hashing, state, slot_b, dim)
    inside, total = 0.0, 0.0
    for k in range(dim):
        inside += max(low_a[k] - high_b[k], 0.0) + max(low_b[k] - high_a[k], 0.0)
        total += max(high_a[k], high_b[k])
    if inside <= 0.0:
        return -np.inf
    return math.log(inside) - math.log(total)


@jit
def _feature_range(data, hashing, state, slot, dim):
    """Per-feature minimum and maximum over the items of ``slot``."""
    low = np.full(dim, np.inf)
    high = np.zeros(dim)
    i = state.head[slot]
    while i >= 0:
        x = data[i]
        for k in range(dim):
            value = feature(hashing, x, k)
            low[k] = min(low[k], value)
            high[k] = max(high[k], value)
        i = state.next_item[i]
    return low, high


# --------------------------------------------------------------------------- fixed tables


@jit
def _icws_keys(data, centre, scale, signed, n_tables, rng):
    """ICWS hash ``(k*, t)`` of every item in each of ``n_tables`` tables, packed in an int64 (-1: all-zero features)."""
    n, d = data.shape
    dim = 2 * d if signed else d
    keys = np.empty((n_tables, n), dtype=np.int64)
    for table in range(n_tables):
        r = rng.gamma(2.0, 1.0, dim)
        c = rng.gamma(2.0, 1.0, dim)
        beta = rng.random(dim)
        for i in range(n):
            best, best_k, best_t = np.inf, -1, 0
            for k in range(dim):
                if signed:
                    u = (data[i, k % d] - centre[k % d]) / scale[k % d]
                    weight = u if k < d else -u
                else:
                    weight = data[i, k]
                if weight <= 0.0:
                    continue
                t = math.floor(math.log(weight) / r[k] + beta[k])
                a = c[k] / (math.exp(r[k] * (t - beta[k])) * math.exp(r[k]))
                if a < best:
                    best, best_k, best_t = a, k, t
            keys[table, i] = -1 if best_k < 0 else best_k * (1 << 40) + (best_t + (1 << 39))
    return keys


@jit
def _projection_codes(data, centre, scale, n_tables, n_bits, rng):
    """``n_bits``-bit sign-random-projection code of every standardised item in each table."""
    n, d = data.shape
    codes = np.empty((n_tables, n), dtype=np.int64)
    for table in range(n_tables):
        w = rng.standard_normal((n_bits, d))
        for i in range(n):
            code = 0
            for bit in range(n_bits):
                dot = 0.0
                for k in range(d):
                    dot += w[bit, k] * (data[i, k] - centre[k]) / scale[k]
                if dot >= 0.0:
                    code |= 1 << bit
            codes[table, i] = code
    return codes


def _tables(bucket, n_buckets):
    """``(start, items)``: the items of each table grouped by bucket (a counting sort)."""
    n_tables, n = bucket.shape
    start = np.zeros((n_tables, n_buckets + 1), dtype=np.int64)
    items = np.empty((n_tables, n), dtype=np.int64)
    for table in range(n_tables):
        counts = np.bincount(bucket[table], minlength=n_buckets)
        start[table, 1:] = np.cumsum(counts)
        items[table] = np.argsort(bucket[table], kind="stable")
    return start, items


def minhash_tables(data, signed, n_tables, seed):
    """:class:`Hashing` with ``n_tables`` weighted-MinHash (ICWS, K = 1) tables of ``data``.  O(n·D·L)."""
    data = np.ascontiguousarray(data, dtype=np.float64)
    centre, scale = feature_transform(data, signed)
    keys = _icws_keys(data, centre, scale, bool(signed), int(n_tables), np.random.default_rng(seed))
    bucket = np.empty_like(keys)
    n_buckets = 1
    for table in range(keys.shape[0]):
        _, bucket[table] = np.unique(keys[table], return_inverse=True)
        n_buckets = max(n_buckets, int(bucket[table].max()) + 1)
    start, items = _tables(bucket, n_buckets)
    return Hashing(centre, scale, bool(signed), bucket, start, items, np.full((keys.shape[0], n_buckets), -1, dtype=np.int64))


def sign_projection_tables(data, signed, n_tables, n_bits, seed):
    """:class:`Hashing` with ``n_tables`` sign-random-projection tables of ``n_bits`` bits (the paper: K = L = 10).

    Bucket ``b`` is the code itself; ``anti[l, b]`` is its complement, the
    bucket a query with ``-u`` reads.  The MinHash features (used by no
    sign-projection move) follow ``signed``.
    """
    data = np.ascontiguousarray(data, dtype=np.float64)
    centre, scale = feature_transform(data, True)
    codes = _projection_codes(data, centre, scale, int(n_tables), int(n_bits), np.random.default_rng(seed))
    n_buckets = 1 << int(n_bits)
    start, items = _tables(codes, n_buckets)
    anti = np.tile(np.arange(n_buckets, dtype=np.int64) ^ (n_buckets - 1), (codes.shape[0], 1))
    feature_centre, feature_scale = feature_transform(data, signed)
    return Hashing(feature_centre, feature_scale, bool(signed), codes, start, items, anti)


def no_tables(data, signed):
    """:class:`Hashing` without tables (the SDDS variant hashes nothing)."""
    centre, scale = feature_transform(data, signed)
    empty = np.zeros((0, 1), dtype=np.int64)
    return Hashing(centre, scale, bool(signed), np.zeros((0, np.shape(data)[0]), dtype=np.int64), empty, empty, empty)


# --------------------------------------------------------------------------- sampling from the tables


@jit(inline="always")
def bucket_size(hashing, table, b):
    return hashing.start[table, b + 1] - hashing.start[table, b]


@jit
def draw_from_bucket(hashing, table, b, exclude, rng):
    """An item uniform over table ``table``'s bucket ``b`` without ``exclude`` (an item of it, or -1); -1 if none."""
    size = bucket_size(hashing, table, b)
    pool = size - 1 if exclude >= 0 else size
    if pool <= 0:
        return -1
    first = hashing.start[table, b]
    item = hashing.items[table, first + rng.integers(0, pool)]
    if item == exclude:  # the excluded item's place goes to the last one
        item = hashing.items[table, first + size - 1]
    return item


@jit
def _bucket_keys(hashing, state, slot, anti):
    """Sorted ``table * B + bucket`` of the items of ``slot`` in every table (their opposite buckets if ``anti``)."""
    n_tables, n_buckets = hashing.start.shape[0], hashing.start.shape[1] - 1
    keys = np.empty(n_tables * state.sizes[slot], dtype=np.int64)
    members = np.empty(state.sizes[slot], dtype=np.int64)
    members_of(state, slot, members, 0)
    q = 0
    for table in range(n_tables):
        for i in members:
            b = hashing.bucket[table, i]
            keys[q] = table * n_buckets + (hashing.anti[table, b] if anti else b)
            q += 1
    keys.sort()
    return keys


@jit
def _pair_sum(hashing, keys_a, keys_b, self_pairs):
    """``sum over shared keys of count_a * count_b / (bucket size - self_pairs)`` by a merge of two sorted key lists."""
    n_buckets = hashing.start.shape[1] - 1
    total = 0.0
    p, q = 0, 0
    while p < keys_a.shape[0] and q < keys_b.shape[0]:
        if keys_a[p] < keys_b[q]:
            p += 1
        elif keys_b[q] < keys_a[p]:
            q += 1
        else:
            key = keys_a[p]
            count_a, count_b = 0, 0
            while p < keys_a.shape[0] and keys_a[p] == key:
                count_a += 1
                p += 1
            while q < keys_b.shape[0] and keys_b[q] == key:
                count_b += 1
                q += 1
            size = bucket_size(hashing, key // n_buckets, key % n_buckets)
            total += count_a * count_b / (size - self_pairs)
    return total


@jit
def table_merge_log_prob(hashing, state, slot_a, slot_b):
    """``log P`` that a smart merge draws the clusters ``slot_a`` and ``slot_b``.

    The merge draws an item ``u`` uniformly (``1/n``), a table uniformly
    (``1/L``) and ``v`` uniformly from ``u``'s bucket without ``u``; it
    proposes merging their clusters.  Summing over the ordered pairs with
    ``u`` in one cluster and ``v`` in the other,

        P = (2 / (n L)) sum_tables sum_buckets n_a(b) n_b(b) / (|b| - 1),

    with ``n_a(b)`` the items of ``slot_a`` in bucket ``b``.  O(L (|a| + |b|) log).
    """
    n = state.labels.shape[0]
    total = 2.0 * _pair_sum(hashing, _bucket_keys(hashing, state, slot_a, False), _bucket_keys(hashing, state, slot_b, False), 1)
    if total <= 0.0:
        return -np.inf
    return math.log(total) - math.log(n * hashing.bucket.shape[0])


@jit
def anti_pair_log_prob(hashing, state, slot_a, slot_b):
    """``log P`` that the sign-projection smart split draws its seeds ``u``, ``v`` on opposite sides of ``slot_a | slot_b``.

    ``u`` uniform (``1/n``), a table uniform (``1/L``), ``v`` uniform from
    the bucket of ``u``'s opposite code; over the ordered pairs with ``u`` in
    ``A`` and ``v`` in ``B`` or the reverse,

        P = (1 / (n L)) sum_tables [sum_{u in A} n_B(anti(u)) + sum_{u in B} n_A(anti(u))] / |anti(u)|.

    O(L (|A| + |B|) log) instead of the paper's quadratic sum.
    """
    n = state.labels.shape[0]
    total = _pair_sum(hashing, _bucket_keys(hashing, state, slot_a, True), _bucket_keys(hashing, state, slot_b, False), 0)
    total += _pair_sum(hashing, _bucket_keys(hashing, state, slot_b, True), _bucket_keys(hashing, state, slot_a, False), 0)
    if total <= 0.0:
        return -np.inf
    return math.log(total) - math.log(n * hashing.bucket.shape[0])
