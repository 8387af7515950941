"""``TreeGuidedStep``: tree-guided MCMC (Lee & Choi 2015, ``papers/003_...``) as a PyMC step."""

from __future__ import annotations

from pymc_partitions._validation import check_count
from pymc_partitions.kernels import tgmcmc
from pymc_partitions.steps.base import PartitionStep, problem_of


class TreeGuidedStep(PartitionStep):
    """Tree-guided MCMC (tgMCMC): split and merge moves along IBHC trees, then Gibbs updates of tree-chosen items.

    Each step makes ``n_global`` global moves, each a split of a cluster along
    its tree or a merge of clusters chosen by their tree dissimilarity, then
    ``n_local`` local sweeps, each a Gibbs update of the items below the nodes
    that ``D`` rounds of SampleSub reach (Lee & Choi 2015, Sec. 3; see
    :mod:`pymc_partitions.kernels.tgmcmc`).  A cluster's tree is the subtree
    that a *guide tree* over all items induces on it.  The guide is built by
    incremental Bayesian hierarchical clustering from the current partition
    at tuning steps 1, 2, 4, 8, ... and fixed once PyMC stops tuning (with
    ``tune=0``, at the first step); with a fixed guide every move leaves the
    posterior invariant (``docs/exactness.md``).  Works with every additive
    conjugate observation model and every partition prior; hyperparameters
    (e.g. the NGGP's ``u``) are moved by PyMC.

    Sample stats describe the step's last global move: ``partition_move``
    1 = split (into two or more clusters), 2 = merge (of two or more), 3 = no
    move (a single-item cluster drawn for a split), 0 when ``n_global=0`` (the
    local Gibbs updates only).

    Parameters
    ----------
    vars : the partition variable
    n_global : int, default 20
        Global moves per step (``G`` in the paper).
    n_local : int, default 1
        Local sweeps per step (the paper: one).  A sweep updates a few per
        cent of the items, so when the number of clusters moves mostly by
        small clusters opening and closing (an NGGP with many small
        clusters), more sweeps can mix it faster per CPU second: four did on
        one of the two toy data sets of ``docs/tgmcmc_results.md`` and one
        did on the other.
    D : int, default 2
        SampleSub rounds that choose a local sweep's items (``D`` in the
        paper; a larger ``D`` updates fewer items).
    keep_items : list of int, optional
        Record these items' labels as sample stats ``partition_label_{i}``.
    **kwargs
        ``model``, ``rng``, ``initial_point``, ``compile_kwargs``, as for PyMC's step methods.

    Examples
    --------
    >>> import numpy as np, pymc as pm, pymc_partitions as pmp
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(-4, 1, (20, 2)), rng.normal(4, 1, (20, 2))]
    >>> with pm.Model():
    ...     z = pmp.DirichletProcessPartition("z", alpha=1.0, n=40)
    ...     x = pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=0.1, a0=2.0, b0=2.0, observed=X)
    ...     idata = pm.sample(step=pmp.TreeGuidedStep(z), draws=30, tune=10, chains=2, progressbar=False, random_seed=1)
    >>> z = idata.posterior["z"].values
    >>> bool((z[..., 0] != z[..., 39]).all())  # the two groups never share a cluster
    True
    """

    name = "partition_tree_guided"
    kernel = tgmcmc.KERNEL

    def __init__(self, vars=None, *, n_global=20, n_local=1, D=2, keep_items=None, rng=None, **kwargs):
        options = tgmcmc.Options(check_count("n_global", n_global, 0), check_count("n_local", n_local, 0), check_count("D", D, 1))
        problem, others = problem_of(vars, **kwargs)
        super().__init__(problem, tgmcmc.KERNEL, options, others=others, keep_items=keep_items, rng=rng)
