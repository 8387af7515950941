"""``HybridDPStep``: the partially collapsed, sharded DP / Pitman-Yor sampler as a PyMC step, in process or on Dask."""

from __future__ import annotations

import numpy as np
from pymc.step_methods.state import dataclass_state

from pymc_partitions import priors
from pymc_partitions._dispatch import ADDITIVE
from pymc_partitions._validation import check_backend, check_count, check_shard_count
from pymc_partitions.kernels import hybrid, subcluster
from pymc_partitions.kernels.info import SAMPLE_STATS
from pymc_partitions.steps.base import PartitionStep, PartitionStepState
from pymc_partitions.steps.subcluster import DEFAULT_SHARDS, ShardedStep


@dataclass_state
class HybridStepState(PartitionStepState):
    """Per chain: the base state and the tuning draws made (the warm start's schedule)."""

    tuning_draws: int = 0


class HybridDPStep(ShardedStep, PartitionStep):
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
    kinds = (ADDITIVE,)
    partition_priors = (priors.DP, priors.PY)  # its weights are the stick-breaking posterior's
    stats_dtypes_shapes = {**SAMPLE_STATS, "partition_hot_shards": (np.int64, [])}
    _state_class = HybridStepState

    def __init__(
        self, vars=None, *, n_shards=None, backend="local", sync_every=1, warm_start=0, n_proposals=0, **kwargs
    ):
        sync_every = check_count("sync_every", sync_every, 1)
        warm_start = check_count("warm_start", warm_start, 0)
        n_proposals = check_count("n_proposals", n_proposals, 0)
        backend = check_backend("backend", backend)
        super().__init__(vars, **kwargs)
        n_shards = min(DEFAULT_SHARDS, self._n) if n_shards is None else check_shard_count("n_shards", n_shards, self._n)
        self.warm_start = warm_start
        self.tuning_draws = 0
        if n_proposals > 0:
            if self._n < 2:
                raise ValueError(f"HybridDPStep with n_proposals > 0 needs a partition of at least 2 items, got {self._n}")
            defaults = subcluster.Options()
            self.kernel = subcluster.KERNEL
            self.options = subcluster.Options(
                n_proposals, defaults.n_launch_sweeps, defaults.n_refine_sweeps, n_shards, sync_every
            )
        else:
            self.options = hybrid.Options(n_shards, sync_every)
        self.use_backend(backend, n_shards)

    def hot_shards(self):
        """Shards that may open clusters at this draw: 1, or while tuning and warm-starting, from all down to 1."""
        if not self.tune or self.tuning_draws >= self.warm_start:
            return 1
        remaining = 1.0 - self.tuning_draws / self.warm_start
        return max(1, int(np.ceil(self.options.n_shards * remaining)))

    def _sampler_for(self, kernel_model, point):
        """The sampler state with this draw's hot shards (:meth:`hot_shards`)."""
        self.sampler = super()._sampler_for(kernel_model, point)._replace(n_hot=np.int64(self.hot_shards()))
        if self.tune:
            self.tuning_draws += 1
        return self.sampler

    def _sampler_stats(self, sampler):
        return {"partition_hot_shards": int(sampler.n_hot)}
