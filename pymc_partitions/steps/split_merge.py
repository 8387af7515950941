"""``SplitMergeStep``: Jain & Neal (2004) restricted-Gibbs split-merge as a PyMC step."""

from __future__ import annotations

from pymc_partitions._validation import check_count, check_flag
from pymc_partitions.kernels import split_merge
from pymc_partitions.steps.base import PartitionStep, problem_of


class SplitMergeStep(PartitionStep):
    """Conjugate split-merge moves (``papers/000_...``, Algorithm 1), optionally followed by a Gibbs sweep.

    Each step makes ``n_moves`` split-merge proposals, each with
    ``n_intermediate`` restricted Gibbs scans to the launch state, then (if
    ``gibbs_sweep``) one full collapsed Gibbs sweep -- the setting of the
    papers' experiments.  Sample stats describe the last proposal:
    ``partition_move`` 1 = split, 2 = merge; ``partition_accepted``,
    ``partition_accept`` (its acceptance probability).  A proposal costs
    O(size of the two clusters), not O(n).

    Parameters
    ----------
    vars : the partition variable
    n_intermediate : int, default 5
        Restricted Gibbs scans to the launch state (``L`` in the paper).
    n_moves : int, default 1
        Split-merge proposals per step.
    gibbs_sweep : bool, default True
        Follow the proposals with a full Gibbs sweep.
    keep_items : list of int, optional
        Record these items' labels as sample stats ``partition_label_{i}``.
    **kwargs
        ``model``, ``rng``, ``initial_point``, ``compile_kwargs``, as for PyMC's step methods.

    Examples
    --------
    >>> import numpy as np, pymc as pm, pymc_partitions as pmp
    >>> X = (np.random.default_rng(0).random((30, 4)) < 0.5).astype(float)
    >>> with pm.Model():
    ...     z = pmp.DirichletProcessPartition("z", alpha=1.0, n=30)
    ...     x = pmp.BetaBernoulliMixture("x", partition=z, a=1.0, b=1.0, observed=X)
    ...     idata = pm.sample(step=pmp.SplitMergeStep(z), draws=50, tune=10, chains=2, progressbar=False, random_seed=1)
    >>> sorted(set(idata.sample_stats["partition_move"].values.ravel().tolist()))
    [1, 2]
    """

    name = "partition_split_merge"
    kernel = split_merge.KERNEL

    def __init__(self, vars=None, *, n_intermediate=5, n_moves=1, gibbs_sweep=True, keep_items=None, rng=None, **kwargs):
        if "init" in kwargs:
            raise TypeError(
                "SplitMergeStep has no init option: for the launch from past states (the ARM paper's bSM) "
                "use pmp.PastStatesSplitMergeStep(z)"
            )
        options = split_merge_options(n_moves, n_intermediate, gibbs_sweep)
        problem, others = problem_of(vars, **kwargs)
        super().__init__(problem, split_merge.KERNEL, options, others=others, keep_items=keep_items, rng=rng)


def split_merge_options(n_moves, n_intermediate, gibbs_sweep):
    """The validated ``kernels.split_merge.Options`` of a split-merge step."""
    return split_merge.Options(
        check_count("n_moves", n_moves, 1), check_count("n_intermediate", n_intermediate, 0), check_flag("gibbs_sweep", gibbs_sweep)
    )
