"""``SubClusterSplitMergeStep``: exact, parallel sub-cluster split-merge (Chang & Fisher 2013, made exact)."""

from __future__ import annotations

from pymc_partitions import priors
from pymc_partitions._validation import check_backend, check_count, check_shard_count
from pymc_partitions.kernels import subcluster
from pymc_partitions.steps.base import PartitionStep, problem_of

DEFAULT_SHARDS = 8
"""Shards when ``n_shards`` is not given (or ``n`` if smaller): enough for 8 cores, and fixed, so that a chain
does not depend on the machine."""


def shard_count(n_shards, problem):
    """The validated number of shards of a sharded step: ``n_shards``, or :data:`DEFAULT_SHARDS` (at most ``n``)."""
    return min(DEFAULT_SHARDS, problem.n) if n_shards is None else check_shard_count("n_shards", n_shards, problem.n)


def executor_for(backend, problem, n_shards, step_name):
    """Where a sharded step's items' work runs (its kernel options' ``executor``): ``None`` for ``"local"`` (this
    process: the kernel runs its compiled driver for a small problem, else the driver on numba threads,
    ``kernels.twofold``), a ``distributed.cluster.DaskShards`` for a ``Client`` (the problem's data, in the kernels'
    coordinates, scattered once; every chain's sampler state refers to it).  The chain is the same whichever runs."""
    if backend == "local":
        return None
    from pymc_partitions.distributed.cluster import DaskShards  # Dask is an optional dependency

    return DaskShards(backend, problem.family, problem.data, n_shards, step_name)


class SubClusterSplitMergeStep(PartitionStep):
    """Sub-cluster split-merge: the step for large n, parallel over items and exact.

    Each step makes ``n_proposals`` split or merge proposals for random pairs
    of items.  A proposal builds two sub-clusters of the pair's clusters
    afresh -- a seeding pass and ``n_launch_sweeps`` uncollapsed
    two-component sweeps, every item of the clusters updated independently
    given drawn sub-cluster parameters, in parallel -- and proposes to split
    along them, or to merge; its Hastings ratio is exact (Chang & Fisher's
    persisted sub-clusters are not: ``docs/exactness.md``, "Sub-cluster
    split-merge").  The final assignment's sub-cluster weight is an
    auxiliary variable drawn for each proposal, so two clusters that one
    cluster fits as well (a cluster cut in two, in any proportion) are
    merged again.  A merge of clearly different clusters is rejected at the
    cost of its target ratio, before any pass.  After each proposal that
    leaves the pair apart, ``n_refine_sweeps`` restricted sweeps redraw the
    items of the pair's two clusters between them.  Then ``n_global_sweeps``
    iterations of the exact partially collapsed hybrid sampler move every
    item among the clusters (``HybridDPStep``), in parallel over
    ``n_shards`` shards.  See :mod:`pymc_partitions.kernels.subcluster`.

    From ``pm.sample``'s default start (every item in one cluster) the splits
    find the clusters in a few proposals each, however large n is: a
    proposal costs O(size of the pair's clusters) on the numba threads, and
    the global iteration O(n K).  Works with every additive conjugate
    observation model; the global iteration needs a
    ``DirichletProcessPartition`` or ``PitmanYorPartition`` prior
    (``n_global_sweeps=0`` runs the exact proposals and restricted sweeps
    under any partition prior).  The chain depends on ``random_seed`` and
    ``n_shards`` only: not on the backend, the number of threads or Dask
    workers, or worker failures.

    Parameters
    ----------
    vars : the partition variable
    n_proposals : int, default 10
        Split or merge proposals per step.
    n_launch_sweeps : int, default 2
        Uncollapsed two-component sweeps of a proposal's launch.
    n_refine_sweeps : int, default 1
        Restricted sweeps of the pair's clusters after each proposal that leaves them apart.
    n_global_sweeps : int, default 1
        Sweeps of the hybrid iteration per step (0: none).
    n_shards : int, optional
        Shards of the items (1 .. n), the units of the parallel work; default ``min(8, n)``.
    backend : "local" or dask.distributed.Client, default "local"
        ``"local"``: the items' work runs in this process, on numba threads
        from ``kernels.twofold.PARALLEL_MIN_ITEMS`` items.  A ``Client``: the data
        are scattered once to its workers and stay there with their shards'
        labels; per step the driver sends each pass's parameters and gets the
        two sides' sums (O(s) per shard), an accepted split or restricted
        sweep is re-derived on the workers from its random seed, the global
        iteration moves per-cluster summaries, and the labels come back once
        (for ``z``); a worker that dies is replaced by rebuilding its shards.
        Run ``pm.sample(..., cores=1)`` with a client.  Workers need numpy,
        numba and this package, not PyMC.  The chain is the same on either
        backend (``distributed.cluster``).
    keep_items : list of int, optional
        Record these items' labels as sample stats ``partition_label_{i}``.
    **kwargs
        ``model``, ``rng``, ``initial_point``, ``compile_kwargs``, as for PyMC's step methods.

    Sample stats: those of every partition step, with ``partition_move = 6``
    (sub-cluster iteration) and ``partition_accept`` the fraction of the
    step's proposals accepted.

    Examples
    --------
    >>> import numpy as np, pymc as pm, pymc_partitions as pmp
    >>> X = np.r_[np.random.default_rng(0).normal(-3, 1, (30, 2)), np.random.default_rng(1).normal(3, 1, (30, 2))]
    >>> with pm.Model():
    ...     z = pmp.DirichletProcessPartition("z", alpha=1.0, n=60)
    ...     x = pmp.NormalGammaMixture("x", partition=z, observed=X, **pmp.NormalGammaMixture.default_hyperparameters(X))
    ...     step = pmp.SubClusterSplitMergeStep(z)
    ...     idata = pm.sample(step=step, draws=30, tune=20, chains=2, progressbar=False, random_seed=1)
    >>> z = idata.posterior["z"].values
    >>> float((z[..., 0] == z[..., 59]).mean())  # items of the two groups never share a cluster
    0.0
    """

    name = "partition_subcluster"
    kernel = subcluster.KERNEL

    def __init__(
        self, vars=None, *, n_proposals=10, n_launch_sweeps=2, n_refine_sweeps=1, n_global_sweeps=1, n_shards=None,
        backend="local", keep_items=None, rng=None, **kwargs,
    ):
        counts = (
            check_count("n_proposals", n_proposals, 0), check_count("n_launch_sweeps", n_launch_sweeps, 0),
            check_count("n_refine_sweeps", n_refine_sweeps, 0), check_count("n_global_sweeps", n_global_sweeps, 0),
        )
        backend = check_backend("backend", backend)
        problem, others = problem_of(vars, **kwargs)
        n_shards = shard_count(n_shards, problem)
        options = subcluster.Options(*counts[:3], n_shards, counts[3])
        super().__init__(problem, subcluster.KERNEL, options, others=others, keep_items=keep_items, rng=rng)
        if n_global_sweeps > 0 and problem.prior not in (priors.DP, priors.PY):
            raise ValueError(
                "SubClusterSplitMergeStep's global iteration (n_global_sweeps > 0) needs a DirichletProcessPartition or "
                "PitmanYorPartition prior; with this prior use n_global_sweeps=0 (proposals and restricted sweeps, exact "
                "for every partition prior), e.g. together with pmp.GibbsStep"
            )
        self.options = options._replace(executor=executor_for(backend, problem, n_shards, type(self).__name__))
