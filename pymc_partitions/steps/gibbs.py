"""``GibbsStep``: collapsed Gibbs sweeps (Neal 2000, Algorithm 3), or Algorithm 8 with explicit cluster parameters."""

from __future__ import annotations

from pymc.step_methods.compound import Competence

from pymc_partitions._validation import check_count
from pymc_partitions.distributions.discovery import is_cluster_parameter
from pymc_partitions.kernels import gibbs
from pymc_partitions.steps.base import PartitionStep, problem_of


class GibbsStep(PartitionStep):
    """Gibbs sampling of a partition variable.

    Each step is ``n_sweeps`` systematic sweeps; every item is reassigned from its
    exact full conditional given the other labels and the current
    hyperparameters (see :mod:`pymc_partitions.kernels.gibbs`).  Works with every
    partition prior and observation model of the package; PyMC moves the
    hyperparameters in the same ``pm.sample`` call.

    With :class:`~pymc_partitions.NormalMixture`, whose clusters keep explicit
    parameters ``mu`` and ``tau``, a sweep is Neal's (2000) Algorithm 8 with
    ``n_auxiliary`` auxiliary parameter values, followed by a draw of every
    occupied cluster's parameters from their full conditional
    (:mod:`pymc_partitions.kernels.auxiliary_gibbs`); the step then also owns
    ``mu`` and ``tau`` and writes their unused rows from the prior.

    Parameters
    ----------
    vars : the partition variable (with ``NormalMixture``: optionally also ``mu`` and ``tau``)
    n_sweeps : int, default 1
    n_auxiliary : int, optional
        Auxiliary components of Algorithm 8 (models with explicit cluster
        parameters only; default 1).
    keep_items : list of int, optional
        Record these items' labels as sample stats ``partition_label_{i}``.
    **kwargs
        ``model``, ``rng``, ``initial_point``, ``compile_kwargs``, as for PyMC's step methods.

    Examples
    --------
    >>> import numpy as np, pymc as pm, pymc_partitions as pmp
    >>> X = np.r_[np.random.default_rng(0).normal(-3, 1, (20, 1)), np.random.default_rng(1).normal(3, 1, (20, 1))]
    >>> with pm.Model():
    ...     z = pmp.DirichletProcessPartition("z", alpha=1.0, n=40)
    ...     x = pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=0.1, a0=2.0, b0=2.0, observed=X)
    ...     idata = pm.sample(step=pmp.GibbsStep(z), draws=50, tune=10, chains=2, progressbar=False, random_seed=1)
    >>> z = idata.posterior["z"].values
    >>> float((z[..., 0] == z[..., 39]).mean())  # items of the two groups never share a cluster
    0.0
    """

    name = "partition_gibbs"
    kernel = gibbs.KERNEL

    @classmethod
    def competence(cls, var, has_grad=None):
        """IDEAL for ``NormalMixture``'s ``mu`` and ``tau`` in the model in context and for the partition variables
        whose default step this is (``steps.default``: those with explicit cluster parameters), so ``pm.sample``
        without ``step=`` gives this step the partition and its cluster parameters together."""
        if is_cluster_parameter(var):
            return Competence.IDEAL
        return super().competence(var, has_grad)

    def __init__(self, vars=None, *, n_sweeps=1, n_auxiliary=None, keep_items=None, rng=None, **kwargs):
        n_sweeps = check_count("n_sweeps", n_sweeps, 1)
        if n_auxiliary is not None:
            n_auxiliary = check_count("n_auxiliary", n_auxiliary, 1)
        problem, others = problem_of(vars, **kwargs)
        if n_auxiliary is not None and problem.rows is None:
            raise ValueError(
                "n_auxiliary applies to models whose clusters keep explicit parameters (NormalMixture); "
                "this model integrates them out"
            )
        if n_auxiliary is not None and problem.component is not None:
            raise ValueError(
                "n_auxiliary does not apply to a component model written in PyMC: its auxiliary components are "
                "the K_max - K rows no cluster occupies"
            )
        options = gibbs.Options(n_sweeps, 1 if n_auxiliary is None else n_auxiliary)
        super().__init__(problem, gibbs.KERNEL, options, others=others, keep_items=keep_items, rng=rng)
