"""PyMC step methods over partition variables (thin adapters around ``kernels``)."""

import pymc as pm

from pymc_partitions.registry import STEPS
from pymc_partitions.steps import convergence
from pymc_partitions.steps.arm import ARMStep
from pymc_partitions.steps.gibbs import GibbsStep
from pymc_partitions.steps.hybrid import HybridDPStep
from pymc_partitions.steps.minsm import MinHashSplitMergeStep
from pymc_partitions.steps.nonconjugate import IncrementalMetropolisStep, NonconjugateSplitMergeStep
from pymc_partitions.steps.past_states import PastStatesSplitMergeStep
from pymc_partitions.steps.split_merge import SplitMergeStep
from pymc_partitions.steps.subcluster import SubClusterSplitMergeStep
from pymc_partitions.steps.tempering import TemperedGibbsStep
from pymc_partitions.steps.tgmcmc import TreeGuidedStep


def register():
    """Register the steps ``pm.sample`` may assign by itself (``GibbsStep``, ``SplitMergeStep``) in
    ``pm.STEP_METHODS``, so a partition variable never gets Metropolis; idempotent.  ``import pymc_partitions``'s
    first public name calls it.  Which one a partition gets is ``steps.default``'s table (``DEFAULT_STEPS``):
    every class registered here must be able to be one of its entries.  It also makes ``pm.sample``'s convergence
    check read the partitions' label-invariant quantities, not their labels (``steps.convergence``)."""
    convergence.install()
    for step in (GibbsStep, SplitMergeStep):
        if step not in pm.STEP_METHODS:
            pm.STEP_METHODS.append(step)


__all__ = list(STEPS)
