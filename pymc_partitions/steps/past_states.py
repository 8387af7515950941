"""Past-state split-merge (the ARM paper's bSM), the population form of ``SplitMergeStep``."""

from __future__ import annotations

from pymc_partitions.kernels import split_merge
from pymc_partitions.steps.population import PopulationPartitionStep
from pymc_partitions.steps.split_merge import SplitMergeStep


class PastStatesSplitMergeStep(PopulationPartitionStep, SplitMergeStep):
    """``SplitMergeStep(z, init="past_states")``: split-merge launched from two past states (bSM).

    Created through ``SplitMergeStep(..., init="past_states")``; see its docstring.
    A population step, like ``ARMStep`` (``chains >= 3``).
    """

    transition = staticmethod(split_merge.past_states_transition)
