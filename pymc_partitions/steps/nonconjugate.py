"""Step methods for models whose clusters keep explicit parameters (``NormalMixture``).

``IncrementalMetropolisStep`` is Neal's (2000) Algorithm 7 and
``NonconjugateSplitMergeStep`` Jain & Neal's (2007) SM(a, b, c, d); ``GibbsStep``
runs Neal's Algorithm 8 on these models.  Each owns the partition and the
parameter variables ``mu`` and ``tau`` (``steps.base``).
"""

from __future__ import annotations

from pymc_partitions._validation import check_count
from pymc_partitions.kernels import gibbs, incremental_metropolis, nonconjugate_split_merge
from pymc_partitions.steps import component_split_merge
from pymc_partitions.steps.base import PartitionStep, problem_of


class IncrementalMetropolisStep(PartitionStep):
    """Neal's (2000) Algorithm 7 on a :class:`~pymc_partitions.NormalMixture`: incremental Metropolis-Hastings.

    Each sweep proposes, for every item, to leave its cluster for a new one
    with parameters drawn from the prior, or (if alone) to join another
    cluster; then a Gibbs update among the occupied clusters for every item
    that is not alone, then every cluster's parameters from their full
    conditional (:mod:`pymc_partitions.kernels.incremental_metropolis`).  The
    step moves ``z``, ``mu`` and ``tau``.  Sample stats:
    ``partition_move`` 4 (incremental), ``partition_accept`` the fraction of the
    sweep's proposals accepted.

    Parameters
    ----------
    vars : the partition variable (optionally also ``mu`` and ``tau``)
    n_sweeps : int, default 1
    keep_items : list of int, optional
        Record these items' labels as sample stats ``partition_label_{i}``.
    **kwargs
        ``model``, ``rng``, ``initial_point``, ``compile_kwargs``, as for PyMC's step methods.

    Examples
    --------
    >>> import numpy as np, pymc as pm, pymc_partitions as pmp
    >>> X = np.r_[np.random.default_rng(0).normal(-3, 1, (15, 1)), np.random.default_rng(1).normal(3, 1, (15, 1))]
    >>> with pm.Model():
    ...     z = pmp.DirichletProcessPartition("z", alpha=1.0, n=30)
    ...     mu = pm.Normal("mu", 0.0, 5.0, shape=(10, 1))
    ...     tau = pm.Gamma("tau", 2.0, 2.0, shape=(10, 1))
    ...     x = pmp.NormalMixture("x", partition=z, mu=mu, tau=tau, observed=X)
    ...     idata = pm.sample(step=pmp.IncrementalMetropolisStep(z), draws=100, tune=100, chains=2,
    ...                       progressbar=False, random_seed=1)
    >>> int(idata.sample_stats["partition_move"].values.max())  # incremental sweeps
    4
    """

    name = "partition_incremental_metropolis"
    kernel = incremental_metropolis.KERNEL

    def __init__(self, vars=None, *, n_sweeps=1, keep_items=None, rng=None, **kwargs):
        options = incremental_metropolis.Options(check_count("n_sweeps", n_sweeps, 1))
        problem, others = problem_of(vars, **kwargs)
        super().__init__(problem, incremental_metropolis.KERNEL, options, others=others, keep_items=keep_items, rng=rng)


COMPONENT_LAUNCH_SCANS = 2
"""A component model's launch reallocations when ``n_split_scans`` is not given."""


class NonconjugateSplitMergeStep(PartitionStep):
    """Jain & Neal's (2007) nonconjugate split-merge SM(a, b, c, d) on a :class:`~pymc_partitions.NormalMixture`, or
    on a component model written in PyMC.

    Each step makes ``n_moves`` (``b``) split-merge proposals for a random
    pair of items: the split launch state is reached from a random split
    with parameters drawn from the prior by ``n_split_scans`` (``a``)
    restricted Gibbs scans over the items and both clusters' parameters, the
    merge launch state by ``n_merge_scans`` (``d``) scans over the merged
    cluster's parameters; the proposal densities include the parameter draws
    of the final scan.  Then ``n_gibbs_scans`` (``c``) full Algorithm 8 scans
    (with ``n_auxiliary`` auxiliary values, 1 in the paper).  The default is
    the paper's best sampler, SM(5, 1, 1, 5).  The step moves ``z``, ``mu``
    and ``tau`` (:mod:`pymc_partitions.kernels.nonconjugate_split_merge`).
    Sample stats describe the last proposal: ``partition_move`` 1 = split,
    2 = merge; ``partition_accepted``, ``partition_accept``.  A proposal
    costs O(size of the two clusters); a split is not proposed when the
    model's ``K_max`` clusters are all in use (its target is 0).

    On a component model written in PyMC (``beta[z]``-style; ``pm.sample``'s
    default there is ``GibbsStep``, ``steps.default``) each of the ``n_moves`` proposals is the
    generic construction of :mod:`pymc_partitions.steps.component_split_merge`:
    a launch split refined by ``n_split_scans`` reallocations (default 2), the
    clusters' parameters drawn from Laplace approximations of their
    conditional posteriors, computed from the model's own graph; then
    ``n_gibbs_scans`` Algorithm 8 scans.  PyMC's NUTS moves the parameters
    between steps; ``n_merge_scans`` and ``n_auxiliary`` do not apply.  A
    proposal costs a few Laplace fits, each a few evaluations of the
    likelihood of all n items.

    Parameters
    ----------
    vars : the partition variable, optionally with ``mu`` and ``tau`` (``[z, mu, tau]``)
    n_split_scans : int, default 5 (``NormalMixture``) or 2 (a component model)
    n_moves : int, default 1
    n_gibbs_scans : int, default 1
    n_merge_scans : int, default 5
    n_auxiliary : int, default 1
    keep_items : list of int, optional
        Record these items' labels as sample stats ``partition_label_{i}``.
    **kwargs
        ``model``, ``rng``, ``initial_point``, ``compile_kwargs``, as for PyMC's step methods.

    Examples
    --------
    >>> import numpy as np, pymc as pm, pymc_partitions as pmp
    >>> X = np.r_[np.random.default_rng(0).normal(-3, 1, (15, 2)), np.random.default_rng(1).normal(3, 1, (15, 2))]
    >>> with pm.Model():
    ...     z = pmp.DirichletProcessPartition("z", alpha=1.0, n=30)
    ...     mu = pm.Normal("mu", 0.0, 5.0, shape=(10, 2))
    ...     tau = pm.Gamma("tau", 2.0, 2.0, shape=(10, 2))
    ...     x = pmp.NormalMixture("x", partition=z, mu=mu, tau=tau, observed=X)
    ...     step = pmp.NonconjugateSplitMergeStep([z, mu, tau], n_gibbs_scans=0)
    ...     idata = pm.sample(step=step, draws=100, tune=100, chains=2, progressbar=False, random_seed=1)
    >>> sorted(set(idata.sample_stats["partition_move"].values.ravel().tolist()))
    [1, 2]
    """

    name = "partition_nonconjugate_split_merge"
    kernel = nonconjugate_split_merge.KERNEL
    supports = (nonconjugate_split_merge.KERNEL.support, component_split_merge.SUPPORT)

    def __init__(
        self, vars=None, *, n_split_scans=None, n_moves=1, n_gibbs_scans=1, n_merge_scans=5, n_auxiliary=1,
        keep_items=None, rng=None, **kwargs,
    ):
        options = nonconjugate_split_merge.Options(
            None if n_split_scans is None else check_count("n_split_scans", n_split_scans, 0),
            check_count("n_moves", n_moves, 1),
            check_count("n_gibbs_scans", n_gibbs_scans, 0),
            check_count("n_merge_scans", n_merge_scans, 0),
            check_count("n_auxiliary", n_auxiliary, 1),
        )
        problem, others = problem_of(vars, **kwargs)
        if problem.rows is not None and problem.rows.k_max < 2:
            raise ValueError(
                "NonconjugateSplitMergeStep needs a model that allows at least 2 clusters (cluster parameters "
                f"with K_max >= 2 rows), got K_max = {problem.rows.k_max}"
            )
        chosen = dict(others=others, keep_items=keep_items, rng=rng)
        if problem.component is not None:  # the moves of steps.component_split_merge, then Algorithm 8
            launch_scans = COMPONENT_LAUNCH_SCANS if options.n_split_scans is None else options.n_split_scans
            moves = component_split_merge.ComponentSplitMerge(
                problem, component_split_merge.Options(options.n_moves, launch_scans)
            )
            super().__init__(problem, gibbs.KERNEL, gibbs.Options(options.n_gibbs_scans), moves=moves, **chosen)
        else:
            options = options._replace(n_split_scans=5 if options.n_split_scans is None else options.n_split_scans)
            super().__init__(problem, nonconjugate_split_merge.KERNEL, options, **chosen)
