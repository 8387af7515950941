"""Posterior similarity (co-clustering) matrix.

For ``S`` posterior draws ``z^(1..S)`` (chains pooled)::

    P[i, j] = Pr(z_i = z_j | data) ≈ (1/S) Σ_s 1(z^(s)_i = z^(s)_j)

symmetric with unit diagonal, a function of the partition only (invariant to
relabelling).  It is built one draw at a time from the co-clustering counts:
per draw, the items are bucketed by cluster with a counting sort and only the
pairs inside a cluster are visited, ``O(Σ_k n_k²)`` time per draw and
``O(m²)`` memory for ``m`` items -- no ``m × m × S`` tensor.  For large ``n``
pass a subset of the items; when ``z`` was left out of the trace, the labels a
step recorded with ``keep_items`` are used (see :mod:`._idata`).

Binder's loss depends on the draws only through ``P`` (see :mod:`.point`).
"""

from __future__ import annotations

import numpy as np

from pymc_partitions._jit import announced, jit
from pymc_partitions._validation import check_idata, check_item_indices
from pymc_partitions.labels import cluster_sizes, relabel
from pymc_partitions.summary._idata import draws_of_items, partition_draws, recorded_labels

__all__ = ["coclustering_counts", "posterior_similarity"]


@jit
def coclustering_counts(draws):
    """``counts[i, j]`` = number of rows of canonical ``draws`` (rows, m) with ``z_i == z_j``; float64 (m, m)."""
    n_draws, m = draws.shape
    counts = np.zeros((m, m))
    start = np.zeros(m + 1, dtype=np.int64)
    order = np.empty(m, dtype=np.int64)
    for s in range(n_draws):
        sizes = cluster_sizes(draws[s], m)
        for k in range(m):
            start[k + 1] = start[k] + sizes[k]
        fill = start[:m].copy()
        for j in range(m):
            k = draws[s, j]
            order[fill[k]] = j
            fill[k] += 1
        for k in range(m):
            for a in range(start[k], start[k + 1]):
                ia = order[a]
                for b in range(a + 1, start[k + 1]):
                    counts[ia, order[b]] += 1.0
    for i in range(m):
        counts[i, i] = n_draws
        for j in range(i + 1, m):
            counts[j, i] = counts[i, j]
    return counts


@announced("posterior_similarity")
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
    recorded = recorded_labels(check_idata(idata), var_name)
    if recorded is None:
        draws = draws_of_items(partition_draws(idata, var_name, "posterior_similarity"), items)
    else:
        draws = _recorded_draws(*recorded, items, var_name)
    return coclustering_counts(np.ascontiguousarray(draws)) / draws.shape[0]


def _recorded_draws(kept, labels, items, var_name):
    """Canonical draws of the recorded items ``items`` (all recorded items for ``None``), in that order."""
    position = {item: col for col, item in enumerate(kept)}
    wanted = kept if items is None else check_item_indices("items", items, None, allow_empty=False).tolist()
    missing = [i for i in wanted if i not in position]
    if missing:
        raise ValueError(
            f"'{var_name}' is not in the trace and items {missing} were not recorded; "
            f"the step kept items {list(kept)} (keep_items=)"
        )
    return relabel(labels[:, [position[i] for i in wanted]])
