"""``HybridDPStep``: the partially collapsed, sharded DP / Pitman-Yor sampler as a PyMC step, in process or on Dask."""

from __future__ import annotations

import numpy as np

from pymc_partitions._validation import check_backend, check_count
from pymc_partitions.kernels import hybrid, subcluster
from pymc_partitions.kernels.info import SAMPLE_STATS
from pymc_partitions.steps.base import PartitionStep, problem_of
from pymc_partitions.steps.subcluster import executor_for, shard_count


class HybridDPStep(PartitionStep):
    """Partially collapsed Dirichlet process / Pitman-Yor sampler over shards (Dubey et al.), exact.

    The items are split into ``n_shards`` contiguous shards.  Each step
    instantiates the weights and parameters of the clusters that have items
    outside one randomly chosen shard; the items of every other shard move
    among those clusters with their parameters fixed (uncollapsed, the shards
    in parallel), while the chosen shard's items are resampled with the
    collapsed predictive and may open clusters.  Every move is a draw from an
    exact conditional, so the step leaves the posterior invariant (see
    :mod:`pymc_partitions.kernels.hybrid` and ``docs/exactness.md``, which also
    say why the paper's Algorithm 4 is changed).  With one shard a step is a
    collapsed Gibbs sweep.  Needs a ``DirichletProcessPartition`` or
    ``PitmanYorPartition`` prior and a conjugate mixture.

    The chain depends on ``random_seed`` and ``n_shards`` only: not on the
    backend, the number of numba threads or Dask workers, or worker failures.

    Parameters
    ----------
    vars : the partition variable
    n_shards : int, optional
        Shards (1 .. n); default ``min(8, n)``.  Use more shards than cores or
        workers; only one shard per step can open clusters.
    backend : "local" or dask.distributed.Client, default "local"
        ``"local"``: the shards run in this process on numba threads.  A
        ``Client``: the data are scattered once to its workers and stay there
        with their shards' labels; each step moves per-cluster counts and
        statistics and the labels ``pm.sample`` records; a worker that dies is
        replaced by rebuilding its shards from the last recorded state.  Run
        ``pm.sample(..., cores=1)`` with a client.  Workers need numpy, numba
        and this package, not PyMC.
    sync_every : int, default 1
        Sweeps of every shard between two synchronisations (the weights and
        parameters are drawn once per step); still exact.
    warm_start : int, default 0
        Over the first ``warm_start`` tuning draws, let all shards open clusters
        at first, then fewer, down to one (the paper's Sec. 4.1).  Not a valid
        MCMC kernel, so it runs only while PyMC tunes; the draws kept are exact.
    n_proposals : int, default 0
        Split/merge proposals before each iteration (0: none, the sampler
        above).  The hybrid iteration only moves items among clusters and
        opens clusters one item at a time from one shard, so from one cluster
        it may take very long to separate large groups; with
        ``n_proposals > 0`` each step first makes that many exact sub-cluster
        split or merge proposals, each followed by a restricted sweep of the
        pair's clusters (``SubClusterSplitMergeStep``'s moves, on the same
        shards and backend; ``docs/exactness.md``, "Sub-cluster
        split-merge"), which split a large cluster along fresh sub-clusters
        at the cost of a few passes over its items.  Composed with the
        hybrid iteration, every move still leaves the posterior invariant.
        The step then is ``SubClusterSplitMergeStep(n_global_sweeps=sync_every)``
        with the warm start.
    keep_items : list of int, optional
        Record these items' labels as sample stats ``partition_label_{i}``.
    **kwargs
        ``model``, ``rng``, ``initial_point``, ``compile_kwargs``, as for PyMC's step methods.

    Sample stats: those of every partition step, with ``partition_move = 5``
    (``6`` with ``n_proposals > 0``: a sub-cluster iteration, ``partition_accept``
    the fraction of its proposals accepted), plus ``partition_hot_shards``
    (shards that could open clusters).

    Examples
    --------
    >>> import numpy as np, pymc as pm, pymc_partitions as pmp
    >>> X = np.r_[np.random.default_rng(0).normal(-3, 1, (20, 1)), np.random.default_rng(1).normal(3, 1, (20, 1))]
    >>> with pm.Model():
    ...     z = pmp.DirichletProcessPartition("z", alpha=1.0, n=40)
    ...     x = pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=0.1, a0=2.0, b0=2.0, observed=X)
    ...     step = pmp.HybridDPStep(z, n_shards=4)
    ...     idata = pm.sample(step=step, draws=50, tune=100, chains=2, progressbar=False, random_seed=1)
    >>> z = idata.posterior["z"].values
    >>> float((z[..., 0] == z[..., 39]).mean())  # items of the two groups never share a cluster
    0.0
    """

    name = "partition_hybrid"
    kernel = hybrid.KERNEL
    supports = (hybrid.KERNEL.support,)  # with proposals too: its weights are the stick-breaking posterior's
    stats_dtypes_shapes = {**SAMPLE_STATS, "partition_hot_shards": (np.int64, [])}

    def __init__(
        self, vars=None, *, n_shards=None, backend="local", sync_every=1, warm_start=0, n_proposals=0, keep_items=None,
        rng=None, **kwargs,
    ):
        sync_every = check_count("sync_every", sync_every, 1)
        warm_start = check_count("warm_start", warm_start, 0)
        n_proposals = check_count("n_proposals", n_proposals, 0)
        backend = check_backend("backend", backend)
        problem, others = problem_of(vars, **kwargs)
        n_shards = shard_count(n_shards, problem)
        chosen = dict(others=others, keep_items=keep_items, rng=rng)
        if n_proposals > 0:  # the sub-cluster kernel: its proposals, then the hybrid iteration (its global sweeps)
            defaults = subcluster.Options()
            options = subcluster.Options(
                n_proposals, defaults.n_launch_sweeps, defaults.n_refine_sweeps, n_shards, sync_every, warm_start
            )
            support = hybrid.KERNEL.support._replace(min_items=subcluster.KERNEL.support.min_items)
            super().__init__(
                problem, subcluster.KERNEL, options, support=support, described_as="HybridDPStep with n_proposals > 0",
                **chosen,
            )
        else:
            super().__init__(problem, hybrid.KERNEL, hybrid.Options(n_shards, sync_every, warm_start), **chosen)
        self.options = self.options._replace(executor=executor_for(backend, problem, n_shards, type(self).__name__))

    def _sampler_stats(self, sampler):
        return {"partition_hot_shards": int(sampler.n_hot)}
