"""The hybrid sampler's shards in this process (``HybridDPStep(backend="local")``)."""

from __future__ import annotations

import numpy as np

from pymc_partitions.kernels import hybrid


class LocalShards:
    """The executor of ``kernels.hybrid.transition`` that runs every shard in this process.

    From ``kernels.hybrid.PARALLEL_MIN_ITEMS`` items on the shards run on
    numba threads, below one after the other; the result is the same.  The
    labels live in the sampler state, so there is nothing to keep here.
    """

    def __init__(self, n_shards):
        self.n_shards = n_shards

    def reset(self, model, z):
        """Per-shard summaries ``(counts, stats)`` of canonical labels ``z``."""
        bounds = hybrid.shard_bounds(z.shape[0], self.n_shards)
        return hybrid.summarize(model, z.astype(np.int64), bounds, int(z.max()) + 1)

    def run(self, model, z, bounds, plan, n_sweeps, n_clusters):
        """Steps 3-5 on every shard: ``(labels, new, offsets, counts, stats)`` (``kernels.hybrid.run_shards``)."""
        labels = z.astype(np.int64)
        return (labels, *hybrid.run_shards(model, labels, bounds, np.arange(bounds.shape[0] - 1), plan, n_sweeps, n_clusters))

    def merged(self, z, relabel, new, offsets, n_clusters):
        """Nothing to do: the next iteration starts from the merged labels ``z``."""
