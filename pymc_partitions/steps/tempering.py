"""``TemperedGibbsStep``: collapsed Gibbs at a ladder of coarsening levels with exact swaps, as a PyMC step."""

from __future__ import annotations

import numpy as np

from pymc_partitions._validation import check_count, check_flag, check_ladder
from pymc_partitions.kernels import tempering
from pymc_partitions.kernels.info import SAMPLE_STATS
from pymc_partitions.steps.base import PartitionStep, problem_of


class TemperedGibbsStep(PartitionStep):
    """Tempering across coarsening levels: ``L`` partitions, each at a power of the likelihood, with exact swaps.

    The step keeps, inside each chain, one partition per level of
    ``ladder = (1, ζ_2, ..., ζ_L)``; level ``l`` targets the collapsed
    c-posterior with every item's likelihood raised to ``ζ_l`` (times the
    model's own ``coarsening`` power, if any): flatter levels cross between
    modes more easily.  Each step moves every level at its own power with
    ``n_split_merge`` Jain-Neal restricted-Gibbs split-merge proposals
    (a uniformly random pair of items, ``kernels.tempering.SPLIT_MERGE_SCANS``
    restricted scans to the launch state, accepted with the level's exact
    Metropolis-Hastings ratio) and
    then ``n_sweeps`` collapsed Gibbs sweeps; each move leaves its level's
    target invariant, so the product of the levels' targets is kept.  Then
    it proposes to exchange the partitions of adjacent levels (every pair
    of one parity, drawn at random), accepted with the
    exact ratio of the levels' collapsed marginal likelihoods
    ``m_l(z_{l+1}) m_{l+1}(z_l) / (m_l(z_l) m_{l+1}(z_{l+1}))`` (not the
    textbook ``exp(Δζ Δlog L)``, which is wrong here: ``m_ζ ≠ m^ζ``; see
    :mod:`pymc_partitions.kernels.tempering` and ``docs/exactness.md``,
    "Tempering across coarsening levels").  ``z`` is level 1's partition,
    a draw of the posterior; the other levels are auxiliary and not
    recorded.  PyMC's chains stay independent replicas, so R-hat keeps its
    meaning.

    Hyperparameters: level 1 reads the current values (PyMC may move them
    with NUTS or slice as usual); levels 2 .. L use ``h_ref``, the values at
    the last of the tuning steps 1, 2, 4, 8, ... (every level restarts there
    from level 1's partition), fixed once PyMC stops tuning.
    That keeps the step exact when PyMC moves hyperparameters from level 1
    alone; auxiliary levels at a stale ``h_ref`` only cost swap acceptance.

    The ladder adapts at the same tuning steps (``adapt_ladder``): its ends
    and its number of levels stay, and the interior levels move to where the
    swaps of every adjacent pair would be rejected equally often, estimated
    from the swaps since the last restart (Syed et al. 2022, Sec. 5;
    :func:`pymc_partitions.kernels.tempering.equal_rejection_ladder`).  The
    kept draws use the last tuning restart's ladder, recorded in the sample
    stats ``partition_ladder_{l}``.  The adaptation places the levels; it
    cannot make too few levels enough: if ``partition_swap_accept`` stays
    near 0 after tuning, give the ladder more levels (e.g.
    ``np.geomspace(1.0, 0.5, 12)``), each costing one more level's moves per
    step.

    Supports the conjugate mixtures and the Infinite Relational Model, under
    every partition prior.

    Parameters
    ----------
    vars : the partition variable
    ladder : sequence of float, default ``kernels.tempering.DEFAULT_LADDER``
        The powers ``ζ_1 = 1 > ζ_2 > ... > ζ_L > 0``, at least two; by default eight, from 1 to 0.5 equally
        spaced in ``log ζ`` (on wine three levels (1, 0.7, 0.5) had no swap accepted, eight 39 %).
    n_sweeps : int, default 1
        Gibbs sweeps of every level per step.
    n_split_merge : int, default 1
        Split-merge proposals of every level per step, before its sweeps; 0 for Gibbs sweeps alone.  A split or
        merge moves a whole cluster at once, which single-item sweeps do only through unlikely intermediate states
        (on wine, collapsed Gibbs alone stays near K = 3.5 while split-merge reaches K = 4.6 at a higher log joint,
        ``docs/mixing_results.md``).  A proposal makes 6 restricted scans of the two clusters' items: on 400 items
        in 6 clusters one proposal per level took about 2.3 Gibbs sweeps' time (a step 3.3 times as long).
    adapt_ladder : bool, default True
        Move the interior levels during tuning to equalise the swaps' rejection rates; ``False`` keeps ``ladder``.
    keep_items : list of int, optional
        Record these items' labels as sample stats ``partition_label_{i}``.
    **kwargs
        ``model``, ``rng``, ``initial_point``, ``compile_kwargs``, as for PyMC's step methods.

    Sample stats: those of every partition step, with ``partition_move = 7``
    (``partition_accept`` the mean swap probability of the draw's proposals,
    ``partition_accepted`` whether any swap was accepted), plus
    ``partition_swap_accept`` (that mean swap probability ``min(1, r)``),
    ``partition_swaps_accepted`` (the swaps this draw accepted) and
    ``partition_ladder_{l}`` for ``l = 1, ..., L - 1``, the power ``ζ_{l+1}``
    of the draw's ladder (``ζ_1 = 1`` is not recorded).

    Examples
    --------
    >>> import numpy as np, pymc as pm, pymc_partitions as pmp
    >>> X = np.r_[np.random.default_rng(0).normal(-3, 1, (20, 1)), np.random.default_rng(1).normal(3, 1, (20, 1))]
    >>> with pm.Model():
    ...     z = pmp.DirichletProcessPartition("z", alpha=1.0, n=40)
    ...     x = pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=0.1, a0=2.0, b0=2.0, observed=X)
    ...     step = pmp.TemperedGibbsStep(z, ladder=(1.0, 0.7, 0.5), n_split_merge=2)
    ...     idata = pm.sample(step=step, draws=50, tune=10, chains=2, progressbar=False, random_seed=1)
    >>> z = idata.posterior["z"].values
    >>> float((z[..., 0] == z[..., 39]).mean())  # items of the two groups never share a cluster
    0.0
    >>> int(idata.sample_stats["partition_move"].values.max())  # every draw a tempering iteration
    7
    >>> float(idata.sample_stats["partition_ladder_2"].values.max())  # the lowest level stays where it was put
    0.5
    """

    name = "partition_tempered_gibbs"
    kernel = tempering.KERNEL
    stats_dtypes_shapes = {
        **SAMPLE_STATS, "partition_swap_accept": (np.float64, []), "partition_swaps_accepted": (np.int64, []),
    }

    def __init__(
        self, vars=None, *, ladder=tempering.DEFAULT_LADDER, n_sweeps=1, n_split_merge=1, adapt_ladder=True,
        keep_items=None, rng=None, **kwargs
    ):
        options = tempering.Options(
            check_ladder("ladder", ladder), check_count("n_sweeps", n_sweeps, 1),
            check_count("n_split_merge", n_split_merge, 0), check_flag("adapt_ladder", adapt_ladder),
        )
        problem, others = problem_of(vars, **kwargs)
        super().__init__(problem, tempering.KERNEL, options, others=others, keep_items=keep_items, rng=rng)
        self.stats_dtypes_shapes.update({_ladder_stat(l): (np.float64, []) for l in range(1, len(options.ladder))})
        self.stats_dtypes = [{name: dtype for name, (dtype, _) in self.stats_dtypes_shapes.items()}]

    def _sampler_stats(self, sampler):
        return {
            "partition_swap_accept": float(sampler.swap_accept),
            "partition_swaps_accepted": int(sampler.swaps_accepted),
            **{_ladder_stat(l): float(sampler.ladder[l]) for l in range(1, sampler.ladder.shape[0])},
        }


def _ladder_stat(level):
    """The sample stat of the ladder's entry ``level`` (0-based: ``ζ_{level+1}``)."""
    return f"partition_ladder_{level}"
