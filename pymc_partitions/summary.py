"""Summaries of partition posteriors: canonical labels, co-clustering, point estimates, diagnostics.

Raw labels are not identifiable (any permutation of them is the same
partition), so nothing here looks at a label's value: every summary is a
function of the partition only.

- :func:`relabel` -- canonical labels (order of first appearance).
- :func:`posterior_similarity` -- the co-clustering matrix ``Pr(z_i = z_j | data)``.
- :func:`point_partition` -- the partition minimising the posterior expected
  Variation of Information (Meilă 2007; Wade & Ghahramani 2018) or Binder loss,
  found by a SALSO-style greedy search (Dahl, Johnson & Müller 2022).
- :func:`expected_loss` -- the posterior expected VI or Binder loss of a given partition.
- :func:`summarize` -- a table of the label-invariant scalars (number of
  clusters, log joint, largest-cluster fraction) with ESS and R-hat, the
  acceptance rates of split and merge proposals, and distances to a reference.
- :func:`vi_distance`, :func:`adjusted_rand_index` -- distances between two partitions.

Both losses are functions of the contingency table ``n_kl`` between a draw
``c`` (clusters ``k``, sizes ``n_k``) and a candidate ``ĉ`` (clusters ``l``,
sizes ``m_l``) of ``N`` items::

    VI(c, ĉ)     = (1/N) [ Σ_k f(n_k) + Σ_l f(m_l) - 2 Σ_kl f(n_kl) ],  f(x) = x log2 x
    Binder(c, ĉ) = (1/2) [ Σ_k n_k² + Σ_l m_l² - 2 Σ_kl n_kl² ]

(Binder with equal unit costs = the number of item pairs on which ``c`` and
``ĉ`` disagree about co-clustering).  Averaging over the posterior draws, the
first sum is a constant, and moving one item ``i`` of ``ĉ`` into cluster ``l``
changes the expected loss by ``f(m_l + 1) - f(m_l) - 2 mean_s [f(n^s_{k_s(i) l} + 1)
- f(n^s_{k_s(i) l})]`` -- one entry of each draw's contingency table, so a
reassignment costs ``O(draws × K)`` with the tables maintained incrementally
(Dahl, Johnson & Müller 2022).  The expected VI is computed exactly over the
draws, not through Wade & Ghahramani's (2018) Jensen lower bound.  For Binder
(``f(x) = x²``) the draw term is ``4 Σ_{j in l} P_ij + 2`` with ``P`` the
similarity matrix, so the Binder estimate depends on the draws only through
:func:`posterior_similarity`.

Sample stats read by :func:`summarize` (written by the step methods, see
``DESIGN.md`` §7): ``partition_n_clusters``, ``partition_log_joint``,
``partition_largest_fraction``, ``partition_accepted``, ``partition_accept``
and ``partition_move`` (:data:`MOVE_TYPES`: 0 = Gibbs sweep, or no move for a
population step that has no two distinct past states yet; 1 = split proposal,
2 = merge proposal; for ARM "split" means ``z_i = z_j``, although its moves can
also keep or lower the number of clusters).

References
----------
Binder, D. A. (1978). Bayesian cluster analysis. *Biometrika* 65(1):31-38.

Meilă, M. (2007). Comparing clusterings -- an information based distance.
*J. Multivariate Anal.* 98(5):873-895.

Wade, S. & Ghahramani, Z. (2018). Bayesian cluster analysis: point estimation
and credible balls. *Bayesian Analysis* 13(2):559-626.

Dahl, D. B., Johnson, D. J. & Müller, P. (2022). Search algorithms and loss
functions for Bayesian clustering. *J. Comput. Graph. Stat.* 31(4):1189-1201.

Hubert, L. & Arabie, P. (1985). Comparing partitions. *J. Classification* 2:193-218.
"""

from __future__ import annotations

import warnings

import numpy as np
from numba import njit

__all__ = [
    "MOVE_TYPES",
    "adjusted_rand_index",
    "expected_loss",
    "point_partition",
    "posterior_similarity",
    "relabel",
    "summarize",
    "vi_distance",
]

#: Integer codes of ``partition_move`` in the sample stats (0 is also "no move" for population steps).
MOVE_TYPES = {0: "gibbs", 1: "split", 2: "merge"}

_LOSSES = ("VI", "Binder")

# --------------------------------------------------------------------------- #
# Canonical labels
# --------------------------------------------------------------------------- #


@njit(cache=True)
def _relabel_rows(codes, n_codes):
    """Canonical labels row by row: the k-th distinct code met in a row becomes ``k``.

    ``codes`` is (rows, n) with values in ``0 .. n_codes - 1``; returns int32 (rows, n).
    """
    rows, n = codes.shape
    out = np.empty((rows, n), dtype=np.int32)
    mapping = np.full(n_codes, -1, dtype=np.int64)
    for r in range(rows):
        nxt = 0
        for j in range(n):
            c = codes[r, j]
            if mapping[c] < 0:
                mapping[c] = nxt
                nxt += 1
            out[r, j] = mapping[c]
        for j in range(n):
            mapping[codes[r, j]] = -1
    return out


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
    arr = _as_label_array("z", z)
    if arr.ndim == 0:
        raise ValueError("z must have at least one dimension (items on the last axis), got a scalar")
    if arr.size == 0:
        return np.zeros(arr.shape, dtype=np.int32)
    flat = arr.reshape(-1, arr.shape[-1])
    lo, hi = int(flat.min()), int(flat.max())
    if lo >= 0 and hi < max(4 * flat.shape[1], 1024):
        codes, n_codes = flat.astype(np.int64), hi + 1
    else:
        uniq, inverse = np.unique(flat, return_inverse=True)
        codes, n_codes = inverse.reshape(flat.shape).astype(np.int64), uniq.shape[0]
    return _relabel_rows(np.ascontiguousarray(codes), n_codes).reshape(arr.shape)


def _as_label_array(name, z):
    """``z`` as an integer numpy array; integer-valued floats are accepted."""
    arr = np.asarray(z)
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"{name} must hold integer cluster labels, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.floating):
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise ValueError(f"{name} must hold integer cluster labels, got non-integer values")
        arr = arr.astype(np.int64)
    return arr


# --------------------------------------------------------------------------- #
# Distances between two partitions
# --------------------------------------------------------------------------- #


def _pair_contingency(a, b):
    """Contingency counts (flattened, zeros dropped) and marginal sizes of two label vectors."""
    a = relabel(_as_label_array("a", a))
    b = relabel(_as_label_array("b", b))
    if a.ndim != 1 or b.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"a and b must be 1-D label vectors of the same length, got shapes {a.shape} and {b.shape}")
    if a.size == 0:
        raise ValueError("a and b must contain at least one item")
    kb = int(b.max()) + 1
    joint = np.bincount(a.astype(np.int64) * kb + b, minlength=1)
    return joint[joint > 0], np.bincount(a), np.bincount(b), a.shape[0]


def _xlog2x(x):
    x = np.asarray(x, dtype=np.float64)
    return np.where(x > 0, x * np.log2(np.where(x > 0, x, 1.0)), 0.0)


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
    joint, na, nb, n = _pair_contingency(a, b)
    value = (_xlog2x(na).sum() + _xlog2x(nb).sum() - 2.0 * _xlog2x(joint).sum()) / n
    return float(max(value, 0.0))


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
    joint, na, nb, n = _pair_contingency(a, b)
    return float(_ari_from_counts(_pairs(joint).sum(), _pairs(na).sum(), _pairs(nb).sum(), _pairs(n)))


def _pairs(x):
    x = np.asarray(x, dtype=np.float64)
    return x * (x - 1.0) / 2.0


def _ari_from_counts(s_ab, s_a, s_b, total_pairs):
    if total_pairs == 0:
        return 1.0
    expected = s_a * s_b / total_pairs
    denom = 0.5 * (s_a + s_b) - expected
    if denom == 0:
        return 1.0
    return (s_ab - expected) / denom


@njit(cache=True)
def _count_terms(counts, length):
    """``(Σ c log2 c, Σ c(c-1)/2)`` over ``counts[:length]``: the entropy and pair-count terms of VI and ARI."""
    h = 0.0
    pairs = 0.0
    for t in range(length):
        c = counts[t]
        if c > 0:
            h += c * np.log2(c)
            pairs += c * (c - 1.0) / 2.0
    return h, pairs


@njit(cache=True)
def _distances_to_reference(draws, reference, k_ref):
    """VI (bits) and ARI of every canonical draw (rows of ``draws``) to a canonical ``reference``."""
    n_draws, n = draws.shape
    vi = np.empty(n_draws)
    ari = np.empty(n_draws)
    ref_sizes = np.zeros(k_ref, dtype=np.int64)
    for i in range(n):
        ref_sizes[reference[i]] += 1
    h_ref, s_ref = _count_terms(ref_sizes, k_ref)
    total_pairs = n * (n - 1.0) / 2.0
    sizes = np.zeros(n, dtype=np.int64)
    table = np.zeros(n * k_ref, dtype=np.int64)
    for s in range(n_draws):
        k_draw = 0
        for i in range(n):
            k = draws[s, i]
            sizes[k] += 1
            table[k * k_ref + reference[i]] += 1
            if k + 1 > k_draw:
                k_draw = k + 1
        h_draw, s_draw = _count_terms(sizes, k_draw)
        h_joint, s_joint = _count_terms(table, k_draw * k_ref)
        sizes[:k_draw] = 0
        table[: k_draw * k_ref] = 0
        vi[s] = max((h_draw + h_ref - 2.0 * h_joint) / n, 0.0)
        if total_pairs == 0:
            ari[s] = 1.0
        else:
            expected = s_draw * s_ref / total_pairs
            denom = 0.5 * (s_draw + s_ref) - expected
            ari[s] = 1.0 if denom == 0 else (s_joint - expected) / denom
    return vi, ari


# --------------------------------------------------------------------------- #
# Reading InferenceData / DataTree
# --------------------------------------------------------------------------- #


def _group(idata, name):
    """``idata[name]`` for an InferenceData or a DataTree, ``None`` if the group is absent."""
    try:
        return idata[name]
    except (KeyError, AttributeError, TypeError):
        return None


def _variable(group, name):
    if group is None:
        return None
    try:
        if name not in group:
            return None
        return group[name]
    except (KeyError, TypeError):
        return None


def _check_var_name(var_name):
    if not isinstance(var_name, str):
        raise TypeError(f"var_name must be a string (the partition variable's name), got {type(var_name).__name__}")


def _partition_draws(idata, var_name, purpose):
    """Posterior draws of the partition as a canonical int32 array (chains * draws, n)."""
    _check_var_name(var_name)
    posterior = _group(idata, "posterior")
    if posterior is None:
        raise ValueError(f"{purpose} needs a 'posterior' group holding '{var_name}'; idata has none")
    z = _variable(posterior, var_name)
    if z is None:
        raise ValueError(
            f"{purpose} needs the draws of the partition variable '{var_name}', but the posterior does not hold it; "
            f"keep '{var_name}' in the trace (do not exclude it with pm.sample(var_names=...)), "
            f"or pass var_name= if the partition variable has another name"
        )
    values = np.asarray(z.values if hasattr(z, "values") else z)
    dims = tuple(getattr(z, "dims", ()))
    if values.ndim != 3 or (dims and dims[:2] != ("chain", "draw")):
        raise ValueError(
            f"posterior['{var_name}'] must have dims (chain, draw, n), got dims {dims or None} and shape {values.shape}"
        )
    values = _as_label_array(f"posterior['{var_name}']", values)
    return relabel(values.reshape(-1, values.shape[-1]))


def _stat(idata, name):
    """A scalar sample stat as a float (chain, draw) array, or ``None``."""
    value = _variable(_group(idata, "sample_stats"), name)
    if value is None:
        return None
    arr = np.asarray(value.values if hasattr(value, "values") else value)
    if arr.ndim != 2:
        raise ValueError(f"sample_stats['{name}'] must be a scalar stat with dims (chain, draw), got shape {arr.shape}")
    return arr


def _check_items(items, n):
    """Validated item indices as an int64 array (``None`` means all ``n`` items)."""
    if items is None:
        return np.arange(n, dtype=np.int64)
    arr = np.asarray(items)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"items must be a non-empty 1-D list of item indices, got shape {arr.shape}")
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"items must hold integer item indices, got dtype {arr.dtype}")
    if arr.min() < 0 or arr.max() >= n:
        raise ValueError(f"items must be indices in 0 .. {n - 1} (n = {n} items), got values from {arr.min()} to {arr.max()}")
    if np.unique(arr).shape[0] != arr.shape[0]:
        raise ValueError("items must not contain repeated indices")
    return arr.astype(np.int64)


# --------------------------------------------------------------------------- #
# Posterior similarity
# --------------------------------------------------------------------------- #


@njit(cache=True)
def _coclustering_counts(draws):
    """``counts[i, j]`` = number of rows of canonical ``draws`` with ``z_i == z_j``.

    Per draw, items are bucketed by cluster with a counting sort and only
    pairs inside a cluster are visited: ``O(Σ_k n_k²)`` per draw, O(m²) memory.
    """
    n_draws, m = draws.shape
    counts = np.zeros((m, m))
    sizes = np.zeros(m + 1, dtype=np.int64)
    start = np.zeros(m + 1, dtype=np.int64)
    order = np.empty(m, dtype=np.int64)
    for s in range(n_draws):
        sizes[:] = 0
        k_draw = 0
        for j in range(m):
            k = draws[s, j]
            sizes[k] += 1
            if k + 1 > k_draw:
                k_draw = k + 1
        start[0] = 0
        for k in range(k_draw):
            start[k + 1] = start[k] + sizes[k]
        sizes[:k_draw] = start[:k_draw]  # reuse as fill pointers
        for j in range(m):
            k = draws[s, j]
            order[sizes[k]] = j
            sizes[k] += 1
        for k in range(k_draw):
            for a in range(start[k], start[k + 1]):
                ia = order[a]
                for b in range(a + 1, start[k + 1]):
                    counts[ia, order[b]] += 1.0
    for i in range(m):
        counts[i, i] = n_draws
        for j in range(i + 1, m):
            counts[j, i] = counts[i, j]
    return counts


def posterior_similarity(idata, items=None, var_name="z"):
    """Posterior co-clustering matrix ``P[i, j] = Pr(z_i = z_j | data)``.

    The fraction of posterior draws (all chains pooled) in which items ``i`` and
    ``j`` share a cluster; ``P`` is symmetric with unit diagonal.  Computed one
    draw at a time (memory ``O(m²)`` for ``m`` items, no ``m × m × draws``
    tensor); pass ``items`` to restrict it to a subset when ``n`` is large.

    Parameters
    ----------
    idata : arviz.InferenceData or xarray.DataTree
        Result of ``pm.sample``; ``idata["posterior"][var_name]`` must hold the
        partition draws with dims (chain, draw, n).
    items : sequence of int, optional
        Indices of the items to include (distinct, in ``0 .. n - 1``); the
        result is indexed in this order.  Default: all items.  If ``var_name``
        was left out of the trace, the labels recorded by a step's
        ``keep_items`` (sample stats ``partition_label_{i}``) are used; default
        then: the recorded items.
    var_name : str
        Name of the partition variable.

    Returns
    -------
    ndarray of float64, shape (m, m)

    Examples
    --------
    >>> import arviz as az, numpy as np
    >>> z = np.array([[[0, 0, 1], [0, 1, 1]]])           # 1 chain, 2 draws, 3 items
    >>> idata = az.from_dict(posterior={"z": z})
    >>> posterior_similarity(idata).tolist()
    [[1.0, 0.5, 0.0], [0.5, 1.0, 0.5], [0.0, 0.5, 1.0]]
    """
    recorded = _recorded_labels(idata, var_name)
    if recorded is not None:
        kept, labels = recorded
        position = {item: col for col, item in enumerate(kept)}
        wanted = kept if items is None else [int(i) for i in _check_items(items, np.iinfo(np.int64).max)]
        missing = [i for i in wanted if i not in position]
        if missing:
            raise ValueError(
                f"'{var_name}' is not in the trace and items {missing} were not recorded; "
                f"the step kept items {list(kept)} (keep_items=)"
            )
        sub = relabel(labels[:, [position[i] for i in wanted]])
        return _coclustering_counts(np.ascontiguousarray(sub)) / sub.shape[0]
    draws = _partition_draws(idata, var_name, "posterior_similarity")
    idx = _check_items(items, draws.shape[1])
    sub = relabel(draws[:, idx]) if items is not None else draws
    return _coclustering_counts(np.ascontiguousarray(sub)) / sub.shape[0]


def _recorded_labels(idata, var_name):
    """``(items, labels)`` from the ``partition_label_{i}`` stats when ``var_name`` is not in the posterior, else ``None``."""
    if _variable(_group(idata, "posterior"), var_name) is not None:
        return None
    stats = _group(idata, "sample_stats")
    names = [] if stats is None else [str(k) for k in stats.data_vars if str(k).startswith("partition_label_")]
    if not names:
        return None
    items = sorted(int(name.rsplit("_", 1)[1]) for name in names)
    labels = np.stack([_stat(idata, f"partition_label_{i}").reshape(-1) for i in items], axis=1)
    return items, _as_label_array("partition_label stats", labels)


# --------------------------------------------------------------------------- #
# Expected loss and the greedy (SALSO-style) search
# --------------------------------------------------------------------------- #


def _loss_table(loss, n):
    """``f(x)`` for ``x = 0 .. n + 1`` and the scale of the loss (see the module docstring)."""
    x = np.arange(n + 2, dtype=np.float64)
    if loss == "VI":
        return _xlog2x(x), 1.0 / n
    return x * x, 0.5


def _check_loss(loss):
    if not isinstance(loss, str) or loss.lower() not in {name.lower() for name in _LOSSES}:
        raise ValueError(f"loss must be 'VI' or 'Binder', got {loss!r}")
    return "VI" if loss.lower() == "vi" else "Binder"


class _Draws:
    """Distinct canonical draws with their posterior weights, in the layout the numba kernels use.

    ``offsets[s] .. offsets[s] + n_clusters[s] - 1`` index the rows of draw
    ``s``'s clusters in a contingency table stacked over draws.
    """

    def __init__(self, draws):
        unique, counts = np.unique(draws, axis=0, return_counts=True)
        self.draws = np.ascontiguousarray(unique.astype(np.int32))
        self.weights = counts.astype(np.float64) / counts.sum()
        self.n_clusters = self.draws.max(axis=1).astype(np.int64) + 1
        self.offsets = np.concatenate([[0], np.cumsum(self.n_clusters)[:-1]]).astype(np.int64)
        self.total_clusters = int(self.n_clusters.sum())
        self.n = self.draws.shape[1]


@njit(cache=True)
def _draw_term(draws, weights, n_clusters, ftab):
    """``Σ_s w_s Σ_k f(n^s_k)``: the constant part of the expected loss."""
    n_draws, n = draws.shape
    sizes = np.zeros(n + 1, dtype=np.int64)
    total = 0.0
    for s in range(n_draws):
        for i in range(n):
            sizes[draws[s, i]] += 1
        acc = 0.0
        for k in range(n_clusters[s]):
            acc += ftab[sizes[k]]
            sizes[k] = 0
        total += weights[s] * acc
    return total


@njit(cache=True)
def _candidate_term(draws, weights, n_clusters, labels, n_labels, ftab):
    """``Σ_l f(m_l) - 2 Σ_s w_s Σ_kl f(n^s_kl)``: the part of the expected loss that depends on ``labels``."""
    n_draws, n = draws.shape
    sizes = np.zeros(n_labels, dtype=np.int64)
    for i in range(n):
        sizes[labels[i]] += 1
    total = 0.0
    for l in range(n_labels):
        total += ftab[sizes[l]]
    k_max = 0
    for s in range(n_draws):
        if n_clusters[s] > k_max:
            k_max = n_clusters[s]
    table = np.zeros(k_max * n_labels, dtype=np.int64)
    for s in range(n_draws):
        for i in range(n):
            table[draws[s, i] * n_labels + labels[i]] += 1
        acc = 0.0
        for t in range(n_clusters[s] * n_labels):
            acc += ftab[table[t]]
            table[t] = 0
        total -= 2.0 * weights[s] * acc
    return total


@njit(cache=True)
def _grow(table, sizes, capacity):
    """Copies of the contingency table and size vector with ``capacity`` candidate-cluster slots."""
    new_table = np.zeros((table.shape[0], capacity), dtype=table.dtype)
    new_table[:, : table.shape[1]] = table
    new_sizes = np.zeros(capacity, dtype=sizes.dtype)
    new_sizes[: sizes.shape[0]] = sizes
    return new_table, new_sizes


@njit(cache=True)
def _move_costs(i, draws, weights, offsets, table, sizes, n_used, ftab, cost):
    """Change of the expected-loss numerator when item ``i`` (currently unassigned) joins slot ``l``.

    ``cost[l] = f(m_l + 1) - f(m_l) - 2 Σ_s w_s [f(n^s_{k_s(i) l} + 1) - f(n^s_{k_s(i) l})]``
    for ``l < n_used + 1`` (slot ``n_used`` is empty: a new cluster).  ``O(draws × K)``.
    """
    n_slots = n_used + 1
    for l in range(n_slots):
        cost[l] = ftab[sizes[l] + 1] - ftab[sizes[l]]
    for s in range(draws.shape[0]):
        row = offsets[s] + draws[s, i]
        w2 = 2.0 * weights[s]
        for l in range(n_slots):
            c = table[row, l]
            cost[l] -= w2 * (ftab[c + 1] - ftab[c])


@njit(cache=True)
def _assign(i, l, delta, draws, offsets, table, sizes):
    """Add (``delta = 1``) or remove (``delta = -1``) item ``i`` to/from slot ``l``."""
    sizes[l] += delta
    for s in range(draws.shape[0]):
        table[offsets[s] + draws[s, i], l] += delta


@njit(cache=True)
def _salso_search(draws, weights, offsets, total_clusters, labels, order, ftab, sequential, max_sweeps):
    """Greedy minimisation of the expected loss from one start (SALSO, Dahl et al. 2022).

    ``sequential``: build the start by adding the items one at a time in
    ``order``, each to the cluster (existing or new) that minimises the loss of
    the items placed so far; otherwise start from ``labels`` (canonical).  Then
    sweep the items in ``order``, moving each to its best cluster (existing or
    new), until a sweep changes nothing or ``max_sweeps`` sweeps are done.
    A move is made only if it lowers the loss, so the search terminates.
    Returns the labels (slot numbers, not canonical) and the number of sweeps.
    """
    n = draws.shape[1]
    out = labels.astype(np.int64)
    if sequential:
        n_used = 0
    else:
        n_used = 0
        for i in range(n):
            if out[i] + 1 > n_used:
                n_used = out[i] + 1
    capacity = max(n_used + 8, 16)
    if capacity > n + 1:
        capacity = n + 1
    table = np.zeros((total_clusters, capacity), dtype=np.int32)
    sizes = np.zeros(capacity, dtype=np.int64)
    cost = np.empty(n + 1)
    if sequential:
        for t in range(n):
            i = order[t]
            _move_costs(i, draws, weights, offsets, table, sizes, n_used, ftab, cost)
            best = 0
            for l in range(1, n_used + 1):
                if cost[l] < cost[best]:
                    best = l
            out[i] = best
            _assign(i, best, 1, draws, offsets, table, sizes)
            if best == n_used:
                n_used += 1
                if n_used == capacity:
                    capacity = min(2 * capacity, n + 1)
                    table, sizes = _grow(table, sizes, capacity)
    else:
        for i in range(n):
            _assign(i, out[i], 1, draws, offsets, table, sizes)
    sweeps = 0
    tol = 1e-9
    while sweeps < max_sweeps:
        sweeps += 1
        changed = False
        for t in range(n):
            i = order[t]
            current = out[i]
            _assign(i, current, -1, draws, offsets, table, sizes)
            _move_costs(i, draws, weights, offsets, table, sizes, n_used, ftab, cost)
            best = current
            for l in range(n_used + 1):
                if cost[l] < cost[best] - tol:
                    best = l
            if sizes[best] == 0 and best != current:
                # every empty slot is the same "new cluster"; reuse the emptied one
                if sizes[current] == 0:
                    best = current
                else:
                    for l in range(n_used + 1):
                        if sizes[l] == 0:
                            best = l
                            break
            out[i] = best
            _assign(i, best, 1, draws, offsets, table, sizes)
            if best != current:
                changed = True
            if best == n_used:
                n_used += 1
                if n_used == capacity:
                    capacity = min(2 * capacity, n + 1)
                    table, sizes = _grow(table, sizes, capacity)
        if not changed:
            break
    return out, sweeps


def _expected_loss_of(draw_set, labels, loss, ftab=None, scale=None, const=None):
    if ftab is None:
        ftab, scale = _loss_table(loss, draw_set.n)
    if const is None:
        const = _draw_term(draw_set.draws, draw_set.weights, draw_set.n_clusters, ftab)
    canon = relabel(labels)
    term = _candidate_term(draw_set.draws, draw_set.weights, draw_set.n_clusters, canon, int(canon.max()) + 1, ftab)
    return max(scale * (const + term), 0.0)


def expected_loss(idata, partition, loss="VI", var_name="z", items=None):
    """Posterior expected loss ``mean_s L(z^(s), partition)`` of a candidate partition.

    ``loss="VI"``: Variation of Information in bits (see :func:`vi_distance`);
    ``loss="Binder"``: number of item pairs on which the two partitions disagree
    (Binder's loss with equal unit costs, ``Σ_{i<j} |1(z_i = z_j) - 1(ĉ_i = ĉ_j)|``).
    The mean runs over all posterior draws (chains pooled).

    Parameters
    ----------
    idata : arviz.InferenceData or xarray.DataTree
    partition : array_like of int, shape (m,)
        Candidate labels for the ``m`` items (``m = n`` or ``len(items)``).
    loss : {"VI", "Binder"}
    var_name : str
    items : sequence of int, optional
        Evaluate on the partitions restricted to these items.

    Returns
    -------
    float
    """
    loss = _check_loss(loss)
    draws = _partition_draws(idata, var_name, "expected_loss")
    idx = _check_items(items, draws.shape[1])
    if items is not None:
        draws = relabel(draws[:, idx])
    candidate = _as_label_array("partition", partition)
    if candidate.ndim != 1 or candidate.shape[0] != draws.shape[1]:
        raise ValueError(f"partition must be a 1-D label vector of length {draws.shape[1]}, got shape {candidate.shape}")
    return float(_expected_loss_of(_Draws(draws), candidate, loss))


def point_partition(idata, loss="VI", var_name="z", n_starts=10, max_sweeps=50, random_seed=None, items=None):
    """Point estimate of the partition minimising the posterior expected loss.

    Minimises ``mean_s L(z^(s), ĉ)`` over partitions ``ĉ`` with ``L`` the
    Variation of Information (Meilă 2007; the exact expected VI over the draws,
    not Wade & Ghahramani's 2018 lower bound) or Binder's loss with equal costs
    (Binder 1978; it depends on the draws only through the similarity matrix).
    See :func:`expected_loss` and the module docstring for the formulas.

    The search follows SALSO (Dahl, Johnson & Müller 2022): each of
    ``n_starts`` runs starts either from a posterior draw (the most frequent
    distinct draw first, then draws chosen at random) or from a sequential
    allocation of the items in random order (each item joins the cluster,
    existing or new, that minimises the loss of the items placed so far); the
    runs alternate between the two.  Each run then sweeps the items in random
    order, moving each to the cluster (existing or new) that lowers the
    expected loss most, until a sweep changes nothing.  The best run wins.  One
    move costs ``O(distinct draws × clusters)``: each draw's contingency table
    with the candidate is kept up to date, and only one row of it changes.

    Parameters
    ----------
    idata : arviz.InferenceData or xarray.DataTree
        ``idata["posterior"][var_name]`` with dims (chain, draw, n).
    loss : {"VI", "Binder"}
    var_name : str
    n_starts : int
        Number of greedy runs (>= 1).
    max_sweeps : int
        Maximum number of sweeps per run (>= 1).
    random_seed : int, numpy Generator or None
        Makes the search reproducible.
    items : sequence of int, optional
        Estimate the partition of these items only (the draws restricted to them).

    Returns
    -------
    ndarray of int32, shape (m,)
        Canonical labels of the estimate.

    Examples
    --------
    >>> import arviz as az, numpy as np
    >>> rng = np.random.default_rng(0)
    >>> truth = np.repeat([0, 1, 2], 5)
    >>> draws = np.tile(truth, (1, 40, 1))
    >>> moved = rng.integers(0, 15, size=40)           # each draw misplaces one item
    >>> draws[0, np.arange(40), moved] = (truth[moved] + 1) % 3
    >>> idata = az.from_dict(posterior={"z": draws})
    >>> point_partition(idata, random_seed=1).tolist() == truth.tolist()
    True
    """
    loss = _check_loss(loss)
    n_starts = _check_positive_int("n_starts", n_starts)
    max_sweeps = _check_positive_int("max_sweeps", max_sweeps)
    draws = _partition_draws(idata, var_name, "point_partition")
    idx = _check_items(items, draws.shape[1])
    if items is not None:
        draws = relabel(draws[:, idx])
    rng = np.random.default_rng(random_seed)
    draw_set = _Draws(draws)
    n = draw_set.n
    ftab, scale = _loss_table(loss, n)
    const = _draw_term(draw_set.draws, draw_set.weights, draw_set.n_clusters, ftab)
    most_frequent = int(np.argmax(draw_set.weights))
    best_labels, best_value = None, np.inf
    for start in range(n_starts):
        order = rng.permutation(n).astype(np.int64)
        sequential = start % 2 == 1
        if sequential:
            init = np.zeros(n, dtype=np.int64)
        else:
            pick = most_frequent if start == 0 else int(rng.choice(draw_set.draws.shape[0], p=draw_set.weights))
            init = draw_set.draws[pick].astype(np.int64)
        labels, _ = _salso_search(
            draw_set.draws, draw_set.weights, draw_set.offsets, draw_set.total_clusters,
            init, order, ftab, sequential, max_sweeps,
        )
        value = _expected_loss_of(draw_set, labels, loss, ftab, scale, const)
        if value < best_value - 1e-12:
            best_labels, best_value = labels, value
    return relabel(best_labels)


def _check_positive_int(name, value):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be a positive integer, got {type(value).__name__} {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value}")
    return int(value)


# --------------------------------------------------------------------------- #
# Diagnostics table
# --------------------------------------------------------------------------- #

@njit(cache=True)
def _largest_fraction(draws):
    """Fraction of the items in the largest cluster of each canonical draw (row)."""
    n_draws, n = draws.shape
    out = np.empty(n_draws)
    sizes = np.zeros(n, dtype=np.int64)
    for s in range(n_draws):
        biggest = 0
        for i in range(n):
            k = draws[s, i]
            sizes[k] += 1
            if sizes[k] > biggest:
                biggest = sizes[k]
        for i in range(n):
            sizes[draws[s, i]] = 0
        out[s] = biggest / n
    return out


_SUMMARY_COLUMNS = ["mean", "sd", "5%", "50%", "95%", "ess_bulk", "ess_tail", "r_hat"]


def _scalar_row(values):
    """Mean, sd, quantiles, ESS bulk/tail and R-hat of a (chain, draw) array."""
    import arviz as az

    x = np.asarray(values, dtype=np.float64)
    flat = x.ravel()
    row = {
        "mean": flat.mean(),
        "sd": flat.std(ddof=1) if flat.size > 1 else np.nan,
        "5%": np.quantile(flat, 0.05),
        "50%": np.quantile(flat, 0.5),
        "95%": np.quantile(flat, 0.95),
        "ess_bulk": np.nan,
        "ess_tail": np.nan,
        "r_hat": np.nan,
    }
    if x.shape[1] >= 4 and np.ptp(flat) > 0:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            row["ess_bulk"] = _as_float(az.ess(x, method="bulk"))
            row["ess_tail"] = _as_float(az.ess(x, method="tail"))
            if x.shape[0] >= 2:
                row["r_hat"] = _as_float(az.rhat(x))
    return row


def _as_float(result):
    """A scalar from whatever an ArviZ diagnostic returned (float, array or Dataset)."""
    if hasattr(result, "data_vars"):
        result = next(iter(result.data_vars.values()))
    return float(np.asarray(getattr(result, "values", result)).reshape(-1)[0])


def summarize(idata, var_name="z", reference=None):
    """Label-invariant summary of a partition posterior, with convergence diagnostics.

    Rows (each present when its input is):

    - ``n_clusters`` -- number of clusters (``partition_n_clusters``, or from ``z``);
    - ``log_joint`` -- log joint density of the partition and data (``partition_log_joint``);
    - ``largest_fraction`` -- fraction of items in the largest cluster
      (``partition_largest_fraction``, or from ``z``);
    - ``vi_reference``, ``ari_reference`` -- VI distance (bits) and adjusted
      Rand index of each draw to ``reference`` (needs ``z`` in the trace);
    - ``accept_rate_split``, ``accept_rate_merge`` -- fraction of split / merge
      proposals accepted (``partition_move``, ``partition_accepted``), in the
      ``mean`` column (other columns NaN).

    Columns: ``mean``, ``sd``, ``5%``, ``50%``, ``95%``, ``ess_bulk``,
    ``ess_tail``, ``r_hat`` (ArviZ rank-normalised ESS and split R-hat over
    chains; NaN when the quantity is constant, or R-hat with one chain).
    ``result.attrs["moves"]`` holds, per move type in :data:`MOVE_TYPES`,
    ``{"proposed", "accepted", "accept_rate", "mean_accept_prob"}``.

    Parameters
    ----------
    idata : arviz.InferenceData or xarray.DataTree
        Result of ``pm.sample`` with a partition step method.
    var_name : str
        Name of the partition variable (only needed for fallbacks and ``reference``).
    reference : array_like of int, shape (n,), optional
        A reference partition (e.g. the truth for simulated data).

    Returns
    -------
    pandas.DataFrame

    Examples
    --------
    >>> import arviz as az, numpy as np
    >>> from pymc_partitions.summary import summarize
    >>> rng = np.random.default_rng(0)
    >>> k = rng.integers(2, 5, size=(2, 100))
    >>> idata = az.from_dict(sample_stats={
    ...     "partition_n_clusters": k,
    ...     "partition_log_joint": -50.0 - k + rng.normal(size=(2, 100)),
    ...     "partition_move": rng.integers(0, 3, size=(2, 100)),
    ...     "partition_accepted": rng.random((2, 100)) < 0.3,
    ... })
    >>> table = summarize(idata)
    >>> list(table.index)
    ['n_clusters', 'log_joint', 'accept_rate_split', 'accept_rate_merge']
    >>> list(table.columns)
    ['mean', 'sd', '5%', '50%', '95%', 'ess_bulk', 'ess_tail', 'r_hat']
    """
    import pandas as pd

    _check_var_name(var_name)
    z = _variable(_group(idata, "posterior"), var_name)
    z_draws = None

    def get_draws():
        nonlocal z_draws
        if z_draws is None:
            arr = _partition_draws(idata, var_name, "summarize")
            shape = np.asarray(z.values).shape
            z_draws = arr.reshape(shape)
        return z_draws

    rows = {}
    n_clusters = _stat(idata, "partition_n_clusters")
    if n_clusters is None and z is not None:
        n_clusters = get_draws().max(axis=-1) + 1
    if n_clusters is not None:
        rows["n_clusters"] = _scalar_row(n_clusters)
    log_joint = _stat(idata, "partition_log_joint")
    if log_joint is not None:
        rows["log_joint"] = _scalar_row(log_joint)
    largest = _stat(idata, "partition_largest_fraction")
    if largest is None and z is not None:
        draws = get_draws()
        largest = _largest_fraction(np.ascontiguousarray(draws.reshape(-1, draws.shape[-1]))).reshape(draws.shape[:2])
    if largest is not None:
        rows["largest_fraction"] = _scalar_row(largest)

    if reference is not None:
        if z is None:
            _partition_draws(idata, var_name, "summarize(reference=...)")  # raises the missing-z error
        draws = get_draws()
        ref = _as_label_array("reference", reference)
        if ref.ndim != 1 or ref.shape[0] != draws.shape[-1]:
            raise ValueError(f"reference must be a 1-D label vector of length {draws.shape[-1]}, got shape {ref.shape}")
        ref = relabel(ref)
        vi, ari = _distances_to_reference(
            np.ascontiguousarray(draws.reshape(-1, draws.shape[-1])), ref, int(ref.max()) + 1
        )
        rows["vi_reference"] = _scalar_row(vi.reshape(draws.shape[:2]))
        rows["ari_reference"] = _scalar_row(ari.reshape(draws.shape[:2]))

    moves = {}
    move = _stat(idata, "partition_move")
    accepted = _stat(idata, "partition_accepted")
    accept = _stat(idata, "partition_accept")
    if move is not None:
        move = move.astype(np.int64)
        for code, name in MOVE_TYPES.items():
            mask = move == code
            proposed = int(mask.sum())
            if proposed == 0:
                continue
            moves[name] = {
                "proposed": proposed,
                "accepted": int(accepted[mask].astype(bool).sum()) if accepted is not None else None,
                "accept_rate": float(accepted[mask].astype(bool).mean()) if accepted is not None else np.nan,
                "mean_accept_prob": float(np.mean(accept[mask])) if accept is not None else np.nan,
            }
            if name != "gibbs":
                row = dict.fromkeys(_SUMMARY_COLUMNS, np.nan)
                row["mean"] = moves[name]["accept_rate"]
                rows[f"accept_rate_{name}"] = row

    if not rows:
        raise ValueError(
            "nothing to summarize: idata has neither the partition sample stats "
            "(partition_n_clusters, partition_log_joint, ...) nor the partition variable "
            f"'{var_name}' in the posterior"
        )
    table = pd.DataFrame.from_dict(rows, orient="index", columns=_SUMMARY_COLUMNS)
    table.attrs["moves"] = moves
    return table
