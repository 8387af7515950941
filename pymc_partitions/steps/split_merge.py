"""``SplitMergeStep``: Jain & Neal (2004) restricted-Gibbs split-merge as a PyMC step."""

from __future__ import annotations

from pymc_partitions._validation import check_count, check_flag, check_option
from pymc_partitions.kernels import split_merge
from pymc_partitions.steps.base import PartitionStep


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
    init : {"random", "past_states"}, default "random"
        Launch state: items of the two clusters placed at random (Jain & Neal),
        or the paper's bSM (``papers/000_...``, Sec. 3.6.2): ``i, j, za, zb``
        chosen from past states as in ``ARMStep`` and items that share ``i``'s
        (``j``'s) clusters in both ``za`` and ``zb`` start with ``i`` (``j``).
        ``"past_states"`` makes this a population step (``chains >= 3``, other
        continuous variables moved by ``pm.Slice`` unless ``hyperparameters=None``,
        see ``ARMStep``).
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
    transition = staticmethod(split_merge.transition)

    def __new__(cls, *args, init="random", **kwargs):
        if check_option("init", init, ("random", "past_states")) == "past_states" and cls is SplitMergeStep:
            from pymc_partitions.steps.past_states import PastStatesSplitMergeStep

            cls = PastStatesSplitMergeStep
        return super().__new__(cls, *args, **kwargs)

    def __init__(self, vars=None, *, n_intermediate=5, n_moves=1, gibbs_sweep=True, init="random", **kwargs):
        config = split_merge.Config(
            check_count("n_moves", n_moves, 1),
            check_count("n_intermediate", n_intermediate, 0),
            check_flag("gibbs_sweep", gibbs_sweep),
        )
        super().__init__(vars, **kwargs)
        self._require_items(2)
        self.config = config
