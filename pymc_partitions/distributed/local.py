"""The hybrid sampler's shards in this process (``HybridDPStep(backend="local")``)."""

from __future__ import annotations

import numpy as np

from pymc_partitions.kernels import hybrid


class LocalShards:
    """Runs every shard in this process.

    From ``kernels.hybrid.PARALLEL_MIN_ITEMS`` items on, an iteration is
    ``kernels.hybrid.iterate`` with the shards on numba threads; below, it is
    one compiled call (``kernels.hybrid.run_chain``).  Both give the same
    chain.  The labels live in the step (the point's ``z``), so :meth:`reset`
    only computes the per-shard summaries.
    """

    def __init__(self, n_shards):
        self.n_shards = n_shards

    def reset(self, model, z):
        """Per-shard summaries ``(counts, stats)`` of canonical labels ``z``."""
        bounds = hybrid.shard_bounds(z.shape[0], self.n_shards)
        return hybrid.summarize(model, z.astype(np.int64), bounds, int(z.max()) + 1)

    def iterate(self, model, z, counts, stats, n_hot, n_sweeps, rng):
        """One iteration: ``(z, counts, stats)`` after it."""
        if z.shape[0] < hybrid.PARALLEL_MIN_ITEMS:
            history, counts, stats = hybrid.run_chain(model, z, self.n_shards, n_hot, n_sweeps, 1, rng)
            return history[0], counts, stats
        z, counts, stats, _ = hybrid.iterate(model, z, counts, stats, n_hot, n_sweeps, rng)
        return z, counts, stats
