"""Where the sharded samplers' work on items runs (docs/design.md §3.1, layer 5; §3.3).

The sharded samplers' drivers (``kernels.hybrid``: ``HybridDPStep``;
``kernels.subcluster``: ``SubClusterSplitMergeStep`` and
``HybridDPStep(n_proposals=...)``) do everything to items through the
operations of one executor protocol (``kernels.protocol.Executor``), done by
``sampler.executor``:

* ``None`` -- in this process: the operations' own numba code, on numba
  threads for large problems (``kernels.twofold``; ``backend="local"``);
* :class:`~pymc_partitions.distributed.cluster.DaskShards` -- on the workers
  of a ``dask.distributed.Client``, each holding some shards' rows and labels
  in a :class:`~pymc_partitions.distributed.host.ShardHost` actor, with
  worker loss survived.

Every executor calls the same numba functions with the same inputs, so a chain
does not depend on the executor.  ``host`` is all a worker imports: numpy,
numba and the package's kernels, not PyMC.
"""
