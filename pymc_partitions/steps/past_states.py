"""Past-state split-merge (the ARM paper's bSM), the population form of ``SplitMergeStep``."""

from __future__ import annotations

from pymc_partitions.kernels.chain import PAST_STATES_SPLIT_MERGE, population_move
from pymc_partitions.steps.arm import POPULATION_STATS
from pymc_partitions.steps.population import PopulationPartitionStep
from pymc_partitions.steps.split_merge import SplitMergeStep


class PastStatesSplitMergeStep(PopulationPartitionStep, SplitMergeStep):
    """``SplitMergeStep(z, init="past_states")``: split-merge launched from two past states (bSM).

    Created through ``SplitMergeStep(..., init="past_states")``; see its docstring.
    Sample stats as ``ARMStep``'s.
    """

    stats_dtypes_shapes = POPULATION_STATS

    def _transition(self, model, state, rng):
        state, stats = super()._transition(model, state, rng)
        stats["partition_cluster_change"] = int(self._last_change)
        return state, stats

    def _propose(self, model, state, rng):
        history = self._history_window()
        state, info = population_move(model, state, history, self.this_chain, PAST_STATES_SPLIT_MERGE, self.n_intermediate, rng)
        self._last_change = info.cluster_change
        return state, info
