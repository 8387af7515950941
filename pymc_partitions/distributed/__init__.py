"""Where the sharded samplers' work on items runs (DESIGN.md §3, layer 7).

``kernels.hybrid.transition`` plans an iteration on the driver, has the shards
swept by an *executor*, and merges their per-cluster summaries.  An executor
keeps the shards' data (and, on Dask, their labels) and runs them --
``reset(model, z)`` (new labels: their per-shard summaries),
``run(model, z, bounds, plan, n_sweeps, n_clusters)`` (steps 3-5 of every
shard) and ``merged(z, relabel, new, offsets, n_clusters)`` (the merge's
result):

* :class:`~pymc_partitions.distributed.local.LocalShards` -- in this process,
  numba threads (``HybridDPStep(backend="local")``);
* :class:`~pymc_partitions.distributed.cluster.DaskShards` -- on the workers of
  a ``dask.distributed.Client``, each holding some shards in a
  :class:`~pymc_partitions.distributed.host.ShardHost` actor, with worker loss
  survived.

The sub-cluster split-merge driver (``kernels.subcluster``,
``SubClusterSplitMergeStep`` and ``HybridDPStep(n_proposals=...)``) has its
own executor protocol (``kernels.subcluster``, "Executors"): in this process
it is ``None`` (the module's own code), on Dask
:class:`~pymc_partitions.distributed.cluster.DaskSubclusterShards`, a
``DaskShards`` with the same hosts, scattered data, actors and loss recovery,
whose hosts also run the passes and apply the driver's label operations.

Every executor calls the same numba functions with the same inputs, so a chain
does not depend on the executor.  ``host`` is all a worker imports: numpy,
numba and the package's kernels, not PyMC.
"""
