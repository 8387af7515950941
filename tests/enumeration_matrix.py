"""The enumeration matrix: for every (step, model kind, prior) cell the steps declare, the tests that enumerate it.

The step classes declare what they sample (``supports``, ``kernels.protocol.Support``; the classes are
``steps.support.STEP_CLASSES``).  Each declared cell is either enumerated -- some test runs the step on that kind of
model under that prior and compares its draws with the exact posterior over every set partition (docs/design.md
§4.1) -- or listed here as not enumerated, with the reason.  :data:`TABLES` is that list, :data:`TESTS` the tests it
names; ``tests/test_enumeration_matrix.py`` checks that every declared cell is in :data:`TABLES`, that no cell
outside the declarations is, that every named test exists and (where it is parametrized over ``prior`` or
``family``) has a case for the cell's prior and families and reaches the cell's step (its class or its kernel's
module, or ``pm.sample``'s default assignment for the kind), and that docs/exactness.md's coverage tables are
:func:`markdown` (regenerate them with ``python tests/enumeration_matrix.py --write``).

A step may have several rows (the variants of ``ARMStep``): each row gives every cell its step declares for that
kind.  A cell lists the families it enumerates and the tests (keys of :data:`TESTS`); families (docs/exactness.md,
"What the enumeration tests cover"): the six conjugate families of ``test_exactness.DATA`` -- BB, NG, NIW, DM, GP,
Cat, "six" for all of them -- and Reg, additive; the IRM, relational; NM (``NormalMixture``), parametric; CM, a
component model written in PyMC (Poisson, regression, Student-t and logistic cases).
"""

from __future__ import annotations

import pathlib
import re
import sys
from typing import NamedTuple

from pymc_partitions import priors
from pymc_partitions._dispatch import ADDITIVE, PARAMETRIC, RELATIONAL
from pymc_partitions.kernels.protocol import COMPONENT

DP, PY, MFM, NGG = priors.DP, priors.PY, priors.MFM, priors.NGGP
PRIORS = (DP, PY, MFM, NGG)
"""The priors in the order of the tables' columns."""
PRIOR_COLUMNS = {DP: "DP", PY: "PY", MFM: "MFM", NGG: "NGG"}


class Cited(NamedTuple):
    """Tests named by one key: their node ids (``file::function``, relative to ``tests/``), what they run, and
    whether they sample with ``pm.sample``'s default step assignment (``steps.default.DEFAULT_STEPS``) rather than
    naming the step."""

    nodes: tuple
    runs: str
    default_assignment: bool = False


class Enumerated(NamedTuple):
    """Part of a cell: the tests ``keys`` enumerate the step on ``families`` ("" when the kind has one model)."""

    families: str
    keys: tuple
    note: str = ""


class NotEnumerated(NamedTuple):
    """A declared cell that no test enumerates, and why."""

    reason: str


class Row(NamedTuple):
    """A row of a kind's table: the step class (its name), how the row names it, and its cells by prior: a tuple
    of :class:`Enumerated` or a :class:`NotEnumerated`."""

    step: str
    label: str
    cells: dict


def on(families, *keys, note=""):
    """``Enumerated(families, keys, note)``, shorter in the tables."""
    return Enumerated(families, keys, note)


TESTS = {
    "X1": Cited(("test_exactness.py::test_step_matches_enumeration",),
               "Gibbs, split-merge alone and with its sweep; six × DP, PY, MFM"),
    "X2": Cited(("test_exactness.py::test_ngg_with_u_sampled_by_pymc",),
               "the same steps, six × NGG, `u` moved by PyMC"),
    "X3": Cited(("test_exactness.py::test_alpha_sampled_by_pymc",),
               "the same steps, NG, DP with `alpha ~ Gamma` moved by NUTS"),
    "L1": Cited(("test_learned_priors_exactness.py::test_step_with_learned_hyperparameters",),
               "each step alone in `pm.sample`, NG and BB (4 items) with learned hyperparameters, DP; "
               "tolerance at most 0.05"),
    "L2": Cited(("test_learned_priors_exactness.py::test_arm_with_learned_hyperparameters",),
               "`ARMStep` alone in `pm.sample`, NG and BB (4 items) with learned hyperparameters, DP; "
               "tolerance at most 0.05"),
    "Z": Cited(
        tuple(f"test_coarsening_exactness.py::{name}" for name in (
            "test_gibbs_and_split_merge", "test_normal_mixture_steps", "test_arm", "test_tgmcmc",
            "test_minhash_split_merge", "test_hybrid", "test_subcluster",
        )),
        "ζ = 0.4, DP: Gibbs and split-merge alone on six and the IRM; NM's Gibbs and SM(2,1,0,2); ARM on GP, "
        "tgMCMC on NG, MinSM on BB, the hybrid on BB, the sub-cluster kernel on DM",
    ),
    "R": Cited(("test_regression.py::test_step_matches_enumeration",),
              "every step that accepts Reg, DP, ζ = 1 and 0.4: Gibbs, split-merge, MinSM, tgMCMC, the sub-cluster "
              "step, the hybrid (one shard) and ARM alone, bSM + Gibbs"),
    "I1": Cited(("test_irm.py::test_single_chain_samplers_alone",),
               "Gibbs and split-merge alone, 4-vertex network, DP and PY"),
    "I2": Cited(("test_irm.py::test_population_samplers",),
               "ARM, sARM, sRM, arm-past alone and + Gibbs, bSM + Gibbs (DP); arm-past alone and + Gibbs (PY)"),
    "A1": Cited(("test_arm_exactness.py::test_population_sampler_matches_enumeration",),
               "ARM, sARM, sRM, arm-past alone and + Gibbs, bSM + Gibbs; BB, DP"),
    "A2": Cited(("test_arm_exactness.py::test_arm_alone_on_every_family_and_prior",),
               "ARM alone: NG NIW DM GP Cat under DP, NG under PY, GP under MFM, NG under NGG (`u` fixed, below)"),
    "A3": Cited(("test_arm_exactness.py::test_arm_past_alone_under_pitman_yor",), "arm-past alone, NG, PY"),
    "A4": Cited(("test_arm_exactness.py::test_arm_step_in_pm_sample_with_alpha_by_slice",),
               "`ARMStep` in `pm.sample`, NG, DP with `alpha` moved by the step's slice sampler"),
    "A5": Cited(("test_arm_exactness.py::test_arm_step_in_pm_sample_with_two_hyperparameters_by_slice",),
               "`ARMStep` in `pm.sample`, NG, PY with `alpha` and `sigma` moved by the step's slice sampler"),
    "A6": Cited(("test_arm_exactness.py::test_past_states_split_merge_beyond_dp",),
               "bSM + Gibbs, NG, PY MFM NGG (`u` fixed)"),
    "M1": Cited(("test_minsm_exactness.py::test_minsm_matches_enumeration",),
               "MinSM, LSH, SDDS alone and + Gibbs; BB GP NG × DP, PY; alone: NIW DP, DM DP, NG MFM, "
               "NG NGG (`u` fixed)"),
    "M2": Cited(("test_minsm_exactness.py::test_minsm_matches_enumeration_on_categorical_data",),
               "each variant alone on Cat, DP"),
    "M3": Cited(("test_minsm_exactness.py::test_minsm_with_alpha_sampled_by_pymc",),
               "MinSM in `pm.sample`, NG, DP with `alpha` by NUTS"),
    "T1": Cited(("test_tgmcmc_exactness.py::test_global_moves_alone",), "global moves alone; six × DP, PY, MFM, NGG"),
    "T2": Cited(("test_tgmcmc_exactness.py::test_interleaved_with_gibbs",),
               "global and local moves + Gibbs; six × DP, PY, MFM, NGG"),
    "T3": Cited(("test_tgmcmc_exactness.py::test_default_and_local_only",),
               "20 global moves and a local sweep, and local moves alone, NG, PY"),
    "T4": Cited(("test_tgmcmc_exactness.py::test_step_in_pm_sample_with_u_by_pymc",),
                "the step in `pm.sample`, BB, NGG"),
    "H1": Cited(("test_hybrid_exactness.py::test_hybrid_alone_matches_enumeration",),
               "the hybrid iteration alone on 1-3 shards: NG DP, NG PY, BB DP, BB PY, Cat DP, NIW DP, DM DP, GP PY"),
    "H2": Cited(("test_hybrid_exactness.py::test_hybrid_interleaved_with_gibbs_matches_enumeration",),
               "the hybrid iteration + Gibbs: NG PY, BB DP"),
    "H3": Cited(("test_hybrid_exactness.py::test_alpha_sampled_by_pymc",),
               "`HybridDPStep` in `pm.sample`, NG, DP with `alpha` by NUTS"),
    "H4": Cited(("distributed/test_dask_hybrid.py::test_dask_chain_matches_enumeration",),
               "on a Dask cluster, NG, DP, the local backend's run draw for draw"),
    "S1": Cited(("test_subcluster_exactness.py::test_split_merge_moves_alone_match_enumeration",),
               "the sub-cluster kernel's split/merge moves alone (NG DP, BB PY)"),
    "S2": Cited(("test_subcluster_exactness.py::test_proposals_alone_match_enumeration",),
               "proposals with restricted sweeps (six DP, NG BB PY, NG GP MFM, NG BB NGG with `u` fixed)"),
    "S3": Cited(("test_subcluster_exactness.py::test_iteration_matches_enumeration",),
               "whole iterations (NG DP, NG PY, BB DP, BB PY, GP PY)"),
    "S4": Cited(("test_subcluster_exactness.py::test_iteration_interleaved_with_gibbs_matches_enumeration",),
               "whole iterations + Gibbs (NIW DP, DM PY)"),
    "S5": Cited(("test_subcluster_exactness.py::test_hybrid_step_with_proposals_matches_enumeration",),
               "`HybridDPStep(n_proposals=2)`'s iteration, BB, PY"),
    "S6": Cited(("test_subcluster_exactness.py::test_alpha_sampled_by_pymc",),
               "`SubClusterSplitMergeStep` and `HybridDPStep(n_proposals=2)` in `pm.sample`, NG, DP with `alpha` "
               "by NUTS"),
    "S7": Cited(("test_subcluster_exactness.py::test_interleaved_with_gibbs_step_in_pm_sample",),
               "`SubClusterSplitMergeStep` + `GibbsStep` in `pm.sample`, GP PY and NG MFM"),
    "G1": Cited(("test_tempering_exactness.py::test_level_one_matches_enumeration",),
               "level 1 of `TemperedGibbsStep`'s transition, two levels: six × DP (NG with split-merge and Gibbs "
               "at every level, the others Gibbs alone), NG × PY MFM NGG (`u` fixed); three levels on BB, DP; the "
               "4-vertex network, DP; three split-merge proposals per level on GP MFM"),
    "G2": Cited(("test_tempering_exactness.py::test_joint_of_two_levels_matches_enumeration",),
               "the joint of both levels' partitions against π_1 × π_2 (ζ_2 = 0.3), NG, DP, 4 items"),
    "G3": Cited(("test_tempering_exactness.py::test_alpha_moved_from_level_one",),
               "level 1 with `alpha` redrawn from level 1 alone before every transition, the other level at "
               "`h_ref`; NG, DP (4 items)"),
    "N1": Cited(("test_nonconjugate_exactness.py::test_step_matches_enumeration",),
               "Algorithm 8, Algorithm 7, SM(2,1,0,2) and SM(5,1,1,5) on NM, DP PY MFM"),
    "N2": Cited(("test_nonconjugate_exactness.py::test_alpha_sampled_by_pymc",),
               "SM(5,1,1,5) in `pm.sample`, NM, DP with `alpha` by NUTS"),
    "P1": Cited(("test_component_exactness.py::test_kernels_with_the_rows_fixed",),
               "Algorithms 8 and 7 with the rows fixed, CM, DP PY MFM NGG"),
    "P2": Cited(("test_component_exactness.py::test_default_pm_sample",),
               "in `pm.sample`, rows by NUTS: the default `GibbsStep`, DP PY MFM", default_assignment=True),
    "P3": Cited(("test_component_exactness.py::test_shared_noise_moved_by_nuts",),
               "in `pm.sample`, rows and a shared noise scale by NUTS: `NonconjugateSplitMergeStep` (split-merge "
               "moves and an Algorithm 8 scan), DP"),
    "P4": Cited(("test_component_exactness.py::test_steps_interleaved_under_ngg_in_pm_sample",),
               "in `pm.sample`, rows by NUTS: Algorithm 7 then 8 under NGG"),
    "P5": Cited(("test_component_exactness.py::test_split_merge_in_pm_sample",),
               "in `pm.sample`, rows by NUTS: `NonconjugateSplitMergeStep` alone and + Algorithm 8, DP PY MFM"),
}
"""The enumeration tests, by the key the tables cite."""

_GAP = "no test enumerates it"
_POPULATION_DELTAS = ("`test_deltas.py::test_arm_claimed_target_ratio` checks the target ratios of every variant's "
                      "moves, on the additive families under DP and on the IRM under every prior")
_IRM_GIBBS = (f"{_GAP}; the IRM's enumerated posterior (`test_irm.py`) is computed under DP and PY only; "
              "`test_deltas.py` checks the claimed changes under every prior")
_NM_NGG = (f"{_GAP}: the `NormalMixture` tests (`exact.normal_mixture_posterior`, `test_nonconjugate_deltas.py`) "
           "cover DP, PY and MFM")

TABLES = {
    ADDITIVE: [
        Row("GibbsStep", "`GibbsStep`", {
            DP: (on("six", "X1", "Z"), on("NG", "X3"), on("NG BB", "L1"), on("Reg", "R")),
            PY: (on("six", "X1"),), MFM: (on("six", "X1"),), NGG: (on("six", "X2"),),
        }),
        Row("SplitMergeStep", "`SplitMergeStep` (alone, and with its Gibbs sweep)", {
            DP: (on("six", "X1", "Z", note="alone"), on("NG", "X3"), on("NG BB", "L1", note="alone"),
                 on("Reg", "R", note="alone")),
            PY: (on("six", "X1"),), MFM: (on("six", "X1"),), NGG: (on("six", "X2"),),
        }),
        Row("MinHashSplitMergeStep", "`MinHashSplitMergeStep` (MinSM, LSH, SDDS)", {
            DP: (on("BB GP NG", "M1"), on("NIW DM", "M1"), on("Cat", "M2"), on("NG", "M3"), on("NG BB", "L1"),
                 on("BB", "Z"), on("Reg", "R", note="MinSM")),
            PY: (on("BB GP NG", "M1"),), MFM: (on("NG", "M1"),), NGG: (on("NG", "M1"),),
        }),
        Row("TreeGuidedStep", "`TreeGuidedStep`", {
            DP: (on("six", "T1", "T2"), on("NG", "Z"), on("NG BB", "L1"), on("Reg", "R")),
            PY: (on("six", "T1", "T2"), on("NG", "T3")), MFM: (on("six", "T1", "T2"),),
            NGG: (on("six", "T1", "T2"), on("BB", "T4")),
        }),
        Row("SubClusterSplitMergeStep", "`SubClusterSplitMergeStep`", {
            DP: (on("six", "S2"), on("NG", "S1", "S3", "S6"), on("BB", "S3"), on("NIW", "S4"), on("DM", "Z"),
                 on("NG BB", "L1"), on("Reg", "R")),
            PY: (on("NG BB", "S2", "S3"), on("BB", "S1"), on("GP", "S3", "S7"), on("DM", "S4")),
            MFM: (on("NG GP", "S2"), on("NG", "S7")), NGG: (on("NG BB", "S2"),),
        }),
        Row("HybridDPStep", "`HybridDPStep`", {
            DP: (on("NG BB Cat NIW DM", "H1"), on("BB", "H2", "Z"), on("NG", "H3", "H4", "S6"), on("NG BB", "L1"),
                 on("Reg", "R")),
            PY: (on("NG BB GP", "H1"), on("NG", "H2"), on("BB", "S5")),
        }),
        Row("TemperedGibbsStep", "`TemperedGibbsStep`", {
            DP: (on("six", "G1"), on("NG", "G2", "G3")), PY: (on("NG", "G1"),), MFM: (on("NG GP", "G1"),),
            NGG: (on("NG", "G1"),),
        }),
        Row("ARMStep", "`ARMStep`, ARM", {
            DP: (on("BB", "A1"), on("NG NIW DM GP Cat", "A2"), on("NG", "A4"), on("GP", "Z"), on("NG BB", "L2"),
                 on("Reg", "R")),
            PY: (on("NG", "A2", "A5"),), MFM: (on("GP", "A2"),), NGG: (on("NG", "A2"),),
        }),
        Row("ARMStep", "`ARMStep`, sARM and sRM", {
            DP: (on("BB", "A1"),),
            PY: NotEnumerated(f"{_GAP} beyond DP; {_POPULATION_DELTAS}"),
            MFM: NotEnumerated(f"{_GAP} beyond DP; {_POPULATION_DELTAS}"),
            NGG: NotEnumerated(f"{_GAP} beyond DP; {_POPULATION_DELTAS}"),
        }),
        Row("ARMStep", "`ARMStep`, arm-past", {
            DP: (on("BB", "A1"),), PY: (on("NG", "A3"),),
            MFM: NotEnumerated(f"{_GAP} beyond DP and PY; {_POPULATION_DELTAS}"),
            NGG: NotEnumerated(f"{_GAP} beyond DP and PY; {_POPULATION_DELTAS}"),
        }),
        Row("PastStatesSplitMergeStep", "`PastStatesSplitMergeStep` (bSM, with Gibbs)", {
            DP: (on("BB", "A1"), on("Reg", "R")), PY: (on("NG", "A6"),), MFM: (on("NG", "A6"),),
            NGG: (on("NG", "A6"),),
        }),
    ],
    RELATIONAL: [
        Row("GibbsStep", "`GibbsStep`", {
            DP: (on("", "I1", "Z"),), PY: (on("", "I1"),), MFM: NotEnumerated(_IRM_GIBBS),
            NGG: NotEnumerated(_IRM_GIBBS),
        }),
        Row("SplitMergeStep", "`SplitMergeStep`", {
            DP: (on("", "I1", "Z", note="both alone"),), PY: (on("", "I1"),), MFM: NotEnumerated(_IRM_GIBBS),
            NGG: NotEnumerated(_IRM_GIBBS),
        }),
        Row("TemperedGibbsStep", "`TemperedGibbsStep`", {
            DP: (on("", "G1"),),
            **{prior: NotEnumerated(f"{_GAP}: its IRM enumeration runs under DP only; "
                                    "`test_tempering_exactness.py::test_claimed_changes_and_swap_ratios` checks its "
                                    "claimed changes and swap ratios on the coarsened IRM under DP")
               for prior in (PY, MFM, NGG)},
        }),
        Row("MinHashSplitMergeStep", "`MinHashSplitMergeStep`", {
            prior: NotEnumerated(f"{_GAP}: its tests enumerate mixtures only; `test_minsm_deltas.py` checks its "
                                 "claimed target ratios on the IRM under DP")
            for prior in PRIORS
        }),
        Row("ARMStep", "`ARMStep`, ARM, sARM and sRM", {
            DP: (on("", "I2"),),
            **{prior: NotEnumerated(f"{_GAP} beyond DP; {_POPULATION_DELTAS}") for prior in (PY, MFM, NGG)},
        }),
        Row("ARMStep", "`ARMStep`, arm-past", {
            DP: (on("", "I2"),), PY: (on("", "I2"),),
            **{prior: NotEnumerated(f"{_GAP} beyond DP and PY; {_POPULATION_DELTAS}") for prior in (MFM, NGG)},
        }),
        Row("PastStatesSplitMergeStep", "`PastStatesSplitMergeStep` (bSM, with Gibbs)", {
            DP: (on("", "I2"),),
            **{prior: NotEnumerated(f"{_GAP} beyond DP; on mixtures it is enumerated under every prior (A6)")
               for prior in (PY, MFM, NGG)},
        }),
    ],
    PARAMETRIC: [
        Row("GibbsStep", "`GibbsStep` (Algorithm 8)", {
            DP: (on("", "N1", "Z"),), PY: (on("", "N1"),), MFM: (on("", "N1"),), NGG: NotEnumerated(_NM_NGG),
        }),
        Row("IncrementalMetropolisStep", "`IncrementalMetropolisStep` (Algorithm 7)", {
            DP: (on("", "N1"),), PY: (on("", "N1"),), MFM: (on("", "N1"),), NGG: NotEnumerated(_NM_NGG),
        }),
        Row("NonconjugateSplitMergeStep", "`NonconjugateSplitMergeStep`", {
            DP: (on("", "N1", "N2", "Z"),), PY: (on("", "N1"),), MFM: (on("", "N1"),), NGG: NotEnumerated(_NM_NGG),
        }),
    ],
    COMPONENT: [
        Row("GibbsStep", "`GibbsStep` (Algorithm 8)", {
            DP: (on("", "P1", "P2"),), PY: (on("", "P1", "P2"),), MFM: (on("", "P1", "P2"),),
            NGG: (on("", "P1", "P4"),),
        }),
        Row("IncrementalMetropolisStep", "`IncrementalMetropolisStep` (Algorithm 7)", {
            DP: (on("", "P1"),), PY: (on("", "P1"),), MFM: (on("", "P1"),), NGG: (on("", "P1", "P4"),),
        }),
        Row("NonconjugateSplitMergeStep", "`NonconjugateSplitMergeStep` (split-merge moves with Algorithm 8)", {
            DP: (on("", "P5", "P3"),), PY: (on("", "P5"),), MFM: (on("", "P5"),),
            NGG: NotEnumerated(f"{_GAP}: `test_split_merge_in_pm_sample` runs DP, PY and MFM; "
                               "`tests/steps/test_component_steps.py` checks the moves' claimed changes under DP"),
        }),
    ],
}
"""Every declared (step, kind, prior) cell: ``TABLES[kind]`` the rows of that kind's table."""

HEADINGS = {
    ADDITIVE: "Additive data",
    RELATIONAL: "Relational data (the IRM)",
    PARAMETRIC: "Parametric data (`NormalMixture`, explicit cluster parameters)",
    COMPONENT: "A component model written in PyMC (CM: rows of PyMC parameters)",
}
KIND_NAMES = {ADDITIVE: "additive", RELATIONAL: "IRM", PARAMETRIC: "NM", COMPONENT: "CM"}


def declared_cells(step_classes):
    """``{(step name, kind, prior)}`` that the classes' ``supports`` declare."""
    return {
        (cls.__name__, kind, prior)
        for cls in step_classes for support in cls.supports for kind in support.kinds for prior in support.priors
    }


def table_cells(tables=None):
    """``{(step name, kind, prior)}`` that ``tables`` (default :data:`TABLES`) give, whichever row."""
    tables = TABLES if tables is None else tables
    return {(row.step, kind, prior) for kind, rows in tables.items() for row in rows for prior in row.cells}


def _cell(cell):
    if isinstance(cell, NotEnumerated):
        return "—"
    parts = []
    for part in cell:
        text = ", ".join(part.keys) + (f" ({part.note})" if part.note else "")
        parts.append(f"{part.families}: {text}" if part.families else text)
    return "; ".join(parts)


def markdown(step_classes):
    """The coverage tables of docs/exactness.md ("What the enumeration tests cover"): one per model kind, the
    legend of the tests, and the declared cells no test enumerates with their reasons."""
    header = "| step | " + " | ".join(PRIOR_COLUMNS[p] for p in PRIORS) + " |"
    rule = "|---|" + "---|" * len(PRIORS)
    lines = []
    for kind, rows in TABLES.items():
        lines += [f"**{HEADINGS[kind]}**", "", header, rule]
        for row in rows:
            lines.append(f"| {row.label} | " + " | ".join(
                _cell(row.cells[p]) if p in row.cells else "n/a" for p in PRIORS) + " |")
        others = sorted(cls.__name__ for cls in step_classes if not any(kind in s.kinds for s in cls.supports))
        if others:
            names = ", ".join(f"`{name}`" for name in others)
            lines.append(f"| {names} | " + " | ".join("n/a" for _ in PRIORS) + " |")
        lines.append("")
    lines += ['The tests (`tests/`; "alone" and "+ Gibbs": the step by itself and followed by a Gibbs sweep):', "",
              "| key | test | what it runs |", "|---|---|---|"]
    for key, test in TESTS.items():
        lines.append(f"| {key} | " + ", ".join(f"`{node}`" for node in test.nodes) + f" | {test.runs} |")
    lines += ["", "**Not enumerated** (declared cells, marked — above):", ""]
    for kind, rows in TABLES.items():
        for row in rows:
            reasons = {}
            for prior in PRIORS:
                if isinstance(row.cells.get(prior), NotEnumerated):
                    reasons.setdefault(row.cells[prior].reason, []).append(PRIOR_COLUMNS[prior])
            for reason, columns in reasons.items():
                lines.append(f"* {row.label}, {KIND_NAMES[kind]}, {' '.join(columns)}: {reason}.")
    return "\n".join(lines) + "\n"


DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs" / "exactness.md"
BEGIN = "<!-- begin: generated by tests/enumeration_matrix.py (python tests/enumeration_matrix.py --write) -->\n"
END = "<!-- end: generated by tests/enumeration_matrix.py -->\n"


def documented(text):
    """The generated part of docs/exactness.md's ``text``: what lies between :data:`BEGIN` and :data:`END`."""
    match = re.search(re.escape(BEGIN) + "(.*?)" + re.escape(END), text, re.S)
    if match is None:
        raise ValueError(f"{DOCS} has no generated coverage tables (markers {BEGIN.strip()} and {END.strip()})")
    return match.group(1)


def write(step_classes):
    """Replace docs/exactness.md's generated part with :func:`markdown`."""
    text = DOCS.read_text()
    old = documented(text)
    DOCS.write_text(text.replace(BEGIN + old + END, BEGIN + markdown(step_classes) + END))


if __name__ == "__main__":
    from pymc_partitions.steps.support import STEP_CLASSES

    if sys.argv[1:] == ["--write"]:
        write(STEP_CLASSES)
    elif sys.argv[1:] in ([], ["--markdown"]):
        sys.stdout.write(markdown(STEP_CLASSES))
    else:
        sys.exit("usage: python tests/enumeration_matrix.py [--markdown | --write]")
