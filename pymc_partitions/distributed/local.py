"""The hybrid sampler's shards in this process (``HybridDPStep(backend="local")``)."""

from __future__ import annotations

from pymc_partitions.kernels import hybrid


class LocalShards:
    """Runs every shard in this process on numba threads (``kernels.hybrid.iterate``'s default).

    The labels live in the step (the point's ``z``), so there is nothing to
    keep here: :meth:`reset` only computes the per-shard summaries.
    """

    def __init__(self, n_shards):
        self.n_shards = n_shards

    def reset(self, model, z):
        """Per-shard summaries ``(counts, stats)`` of canonical labels ``z``."""
        bounds = hybrid.shard_bounds(z.shape[0], self.n_shards)
        return hybrid.summarize(model, z.astype("int64"), bounds, int(z.max()) + 1)

    def iterate(self, model, z, counts, stats, n_hot, n_sweeps, rng):
        """One iteration (``kernels.hybrid.iterate``): ``(z, counts, stats)`` after it."""
        z, counts, stats, _ = hybrid.iterate(model, z, counts, stats, n_hot, n_sweeps, rng)
        return z, counts, stats
