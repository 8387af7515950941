"""PyMC step methods over partition variables (thin adapters around ``kernels``)."""

import pymc as pm

from pymc_partitions.steps.arm import ARMStep
from pymc_partitions.steps.gibbs import GibbsStep
from pymc_partitions.steps.hybrid import HybridDPStep
from pymc_partitions.steps.minsm import MinHashSplitMergeStep
from pymc_partitions.steps.nonconjugate import IncrementalMetropolisStep, NonconjugateSplitMergeStep
from pymc_partitions.steps.past_states import PastStatesSplitMergeStep
from pymc_partitions.steps.split_merge import SplitMergeStep
from pymc_partitions.steps.tgmcmc import TreeGuidedStep

for _step in (GibbsStep, SplitMergeStep):
    if _step not in pm.STEP_METHODS:
        pm.STEP_METHODS.append(_step)

__all__ = [
    "ARMStep", "GibbsStep", "HybridDPStep", "IncrementalMetropolisStep", "MinHashSplitMergeStep", "NonconjugateSplitMergeStep",
    "PastStatesSplitMergeStep", "SplitMergeStep", "TreeGuidedStep",
]
