"""``PastStatesSplitMergeStep``: split-merge launched from two past states (the ARM paper's bSM), a population step."""

from __future__ import annotations

from pymc_partitions.kernels import split_merge
from pymc_partitions.steps.base import problem_of
from pymc_partitions.steps.population import PopulationPartitionStep
from pymc_partitions.steps.split_merge import split_merge_options


class PastStatesSplitMergeStep(PopulationPartitionStep):
    """Jain & Neal's split-merge with the launch state of the ARM paper's bSM (``papers/000_...``, Sec. 3.6.2).

    Each proposal chooses ``i, j, za, zb`` from the chains' past states as
    ``ARMStep`` does, and items of the two clusters that share ``i``'s
    (``j``'s) clusters in both ``za`` and ``zb`` start the launch with ``i``
    (``j``), the others at random; then the restricted scans and the
    acceptance of ``SplitMergeStep``
    (:func:`pymc_partitions.kernels.split_merge.past_states_transition`).  A
    population step, like ``ARMStep``: ``pm.sample`` needs ``chains >= 3``,
    and the model's other continuous variables are moved by the step's own
    ``pm.Slice`` unless ``hyperparameters=None``.  Without two distinct past
    states there is no move (``partition_move`` = 3); run it with
    ``gibbs_sweep=True`` (the paper's setting): alone it proposes only pairs
    on which past states disagree and is not irreducible.

    Parameters
    ----------
    vars : the partition variable
    n_intermediate : int, default 5
        Restricted Gibbs scans to the launch state.
    n_moves : int, default 1
        Proposals per step.
    gibbs_sweep : bool, default True
        Follow the proposals with a full Gibbs sweep.
    hyperparameters : "slice" or None, default "slice"
        As for ``ARMStep``.
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
    ...     step = pmp.PastStatesSplitMergeStep(z)
    ...     idata = pm.sample(step=step, draws=30, tune=10, chains=3, progressbar=False, random_seed=1)
    >>> bool(np.isin(idata.sample_stats["partition_move"], [1, 2]).any())
    True
    """

    name = "partition_past_states_split_merge"
    kernel = split_merge.PAST_STATES_KERNEL

    def __init__(
        self, vars=None, *, n_intermediate=5, n_moves=1, gibbs_sweep=True, hyperparameters="slice", keep_items=None,
        rng=None, **kwargs,
    ):
        options = split_merge_options(n_moves, n_intermediate, gibbs_sweep)
        problem, others = problem_of(vars, **kwargs)
        super().__init__(
            problem, split_merge.PAST_STATES_KERNEL, options, hyperparameters=hyperparameters, others=others,
            keep_items=keep_items, rng=rng,
        )
