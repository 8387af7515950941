"""``ARMStep``: adaptive reconfiguration moves over a population of chains (``papers/000_...``)."""

from __future__ import annotations

from pymc_partitions._validation import check_count, check_flag, check_option
from pymc_partitions.kernels import arm
from pymc_partitions.steps.base import problem_of
from pymc_partitions.steps.population import PopulationPartitionStep


class ARMStep(PopulationPartitionStep):
    """Adaptive reconfiguration moves (Herlau et al., Algorithm 3), optionally followed by a Gibbs sweep.

    A population step: ``pm.sample`` runs it over all chains, which must be
    at least 3 (``chains >= 3``, else a ``ValueError`` before sampling; the
    paper uses 8).  Each move draws two past partitions ``za != zb`` -- one
    from this chain's history, one from any chain's, both from the last half
    of the run -- and a pair ``i, j`` on which they disagree, then splits
    (``z_i = z_j``) or merges the clusters of ``i`` and ``j`` while blocks of
    items that ``z``, ``za`` and ``zb`` agree on move jointly and items of
    other clusters may join or leave them (see :mod:`pymc_partitions.kernels.arm`
    for the construction and why its acceptance probability is exact).

    Parameters
    ----------
    vars : the partition variable
    variant : {"arm", "sarm", "srm", "arm-past"}, default "arm"
        The paper's ablations (Sec. 3.6): ``"sarm"`` places the items one at a
        time instead of in blocks, ``"srm"`` (Algorithm 2) also ignores the past
        states (``i, j`` uniformly random).  ``"arm-past"`` (ours) takes the
        items it moves from the past states alone: the cluster ``za_i`` that
        holds ``i`` and ``j`` in one of them, moved as the blocks of
        ``za ∨ zb`` and then item by item, while every other item stays put.
        Algorithm 3 moves ``z_i ∪ z_j`` and lets outside items join, and its
        exact proposal ratio must pay for those items' moves in both
        directions (its acceptance on the NIPS network is about 1 %,
        ``docs/arm_networks_results.md``); ``"arm-past"`` needs no such factors
        because its inside set is the same for the move and its reverse
        (``docs/exactness.md``).  On the paper's benchmarks ``"arm-past"`` has
        the lowest normalized autocorrelation times on the Bernoulli examples
        and 17 times ARM's acceptance on the NIPS network, but a lower ESS of
        the number of clusters there, so the default stays ``"arm"``
        (``docs/arm_bernoulli_results.md``, ``docs/arm_networks_results.md``).
    n_moves : int, default 1
        Moves per step.
    gibbs_sweep : bool, default True
        Follow the moves with a full Gibbs sweep (the paper's experiments).
    hyperparameters : "slice" or None, default "slice"
        Move the model's other continuous variables, however many, with one
        ``pm.Slice`` inside this step (coordinate-wise, a width tuned per
        coordinate; NUTS adapts poorly in population mode), and say so in the
        log; ``None`` leaves them to ``pm.sample``'s assignment.
    keep_items : list of int, optional
        Record these items' labels as sample stats ``partition_label_{i}``.
    **kwargs
        ``model``, ``rng``, ``initial_point``, ``compile_kwargs``, as for PyMC's step methods.

    Notes
    -----
    The first moves of a run have no distinct past states to use (all chains
    may start equal) and are skipped (``partition_move = 3``, "none"); with
    ``gibbs_sweep=True`` the Gibbs sweeps create them.  Sample stats describe
    the step's last move; ``partition_cluster_change`` is the change in the
    number of clusters it made (0 if rejected).  Memory holds
    ``chains x draws/2 x n`` int32 labels of history.

    The default initial point puts every chain in one cluster.  Where
    single-item Gibbs moves break that up slowly (the IRM on the NIPS network
    was still 130 nats below the posterior's plateau after 1500 iterations),
    start each chain from its own prior draw,
    ``initvals=[{"z": s} for s in pm.draw(z, draws=chains)]``, as the paper
    does (random starts, then Gibbs sweeps); see ``examples/irm_nips.py``.

    Examples
    --------
    >>> import numpy as np, pymc as pm, pymc_partitions as pmp
    >>> X = pmp.datasets.bernoulli_mixture(example=1, random_seed=0).data[:40]
    >>> with pm.Model():
    ...     z = pmp.DirichletProcessPartition("z", alpha=1.0, n=40)
    ...     x = pmp.BetaBernoulliMixture("x", partition=z, a=1.0, b=1.0, observed=X)
    ...     idata = pm.sample(step=pmp.ARMStep(z), draws=50, tune=20, chains=4, progressbar=False, random_seed=1)
    >>> bool(np.isin(idata.sample_stats["partition_move"], [1, 2]).any())  # splits and merges were proposed
    True

    The past-state variant, without Gibbs sweeps (chains start from their own
    prior draws, so that distinct past states exist from the first move):

    >>> with pm.Model():
    ...     z = pmp.DirichletProcessPartition("z", alpha=1.0, n=40)
    ...     x = pmp.BetaBernoulliMixture("x", partition=z, a=1.0, b=1.0, observed=X)
    ...     starts = [{"z": s} for s in pm.draw(z, draws=4, random_seed=2)]
    ...     step = pmp.ARMStep(z, variant="arm-past", n_moves=5, gibbs_sweep=False)
    ...     idata = pm.sample(step=step, draws=50, tune=20, chains=4, initvals=starts, progressbar=False, random_seed=1)
    >>> bool(idata.sample_stats["partition_accepted"].any())
    True
    """

    name = "partition_arm"
    kernel = arm.KERNEL

    def __init__(
        self, vars=None, *, variant="arm", n_moves=1, gibbs_sweep=True, hyperparameters="slice", keep_items=None,
        rng=None, **kwargs,
    ):
        options = arm.Options(
            arm.VARIANTS[check_option("variant", variant, list(arm.VARIANTS))],
            check_count("n_moves", n_moves, 1),
            check_flag("gibbs_sweep", gibbs_sweep),
        )
        problem, others = problem_of(vars, **kwargs)
        super().__init__(
            problem, arm.KERNEL, options, hyperparameters=hyperparameters, others=others, keep_items=keep_items, rng=rng
        )
        self.variant = variant
