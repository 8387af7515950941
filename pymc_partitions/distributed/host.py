"""The worker side of the hybrid sampler: a set of shards, their data and their labels (no PyMC).

A :class:`ShardHost` lives in one process -- a Dask worker, as an actor
(``distributed.cluster``) -- and keeps its shards' rows of the data and
their current labels between iterations.  Each iteration it receives the
driver's plan (O(K p)) and the relabelling of the previous merge (O(K) per
shard), sweeps its shards (``kernels.hybrid.run_shards``, numba threads) and
returns their labels and per-cluster summaries (O(K s) per shard, plus the
labels ``pm.sample`` records).  Importing this module loads numpy, numba and
the package's numba layers only.
"""

from __future__ import annotations

import numpy as np

from pymc_partitions.kernels.hybrid import run_shards
from pymc_partitions.state import make_model


class ShardHost:
    """Shards ``shards`` (global indices, consecutive) whose rows are ``data``, split at ``bounds`` (local offsets).

    ``data`` are the driver's kernel model's rows (``model.data``: relative to
    its origin), and the driver sends its ``model.params``, in the same
    coordinates: the host's models use them as they are (origin zero), so
    its statistics add up with the driver's.  ``labels`` are the shards'
    current canonical labels (int, one per row).
    """

    def __init__(self, data, labels, bounds, shards, family):
        self.data = np.ascontiguousarray(data, dtype=np.float64)
        self.bounds = np.asarray(bounds, dtype=np.int64)
        self.shards = np.asarray(shards, dtype=np.int64)
        self.family = int(family)
        self.labels = np.asarray(labels, dtype=np.int64).copy()

    def set_labels(self, labels):
        """Replace the shards' labels (a partition set by another step, or the initial point)."""
        self.labels = np.asarray(labels, dtype=np.int64).copy()

    def run(self, params, prior, prior_params, plan, relabel, n_sweeps, n_clusters):
        """One iteration of these shards; returns ``(labels, new, offsets, counts, stats)`` (``run_shards``).

        ``relabel[q]`` (or ``None`` if the labels are already canonical) maps
        shard ``q``'s labels of the last iteration to the merged canonical
        ones.  Only the rows of labels in use are returned: shard ``q``'s
        summaries are ``counts[offsets[q] : offsets[q + 1]]``, one row per label
        ``0 .. n_clusters + new[q] - 1``.
        """
        if relabel is not None:
            for q in range(self.shards.shape[0]):
                rows = slice(self.bounds[q], self.bounds[q + 1])
                self.labels[rows] = relabel[q][self.labels[rows]]
        origin = np.zeros(self.data.shape[1])  # rows and params are already relative to the driver's origin
        model = make_model(self.family, self.data, params, prior, prior_params, np.zeros(0), origin=origin)
        new, offsets, counts, stats = run_shards(model, self.labels, self.bounds, self.shards, plan, n_sweeps, n_clusters)
        used = np.concatenate([np.arange(offsets[q], offsets[q] + n_clusters + new[q]) for q in range(new.shape[0])])
        trimmed = np.zeros_like(offsets)
        trimmed[1:] = np.cumsum(n_clusters + new)
        return self.labels.astype(np.int32), new, trimmed, counts[used], stats[used]
