"""What ``pm.sample()`` assigns to a partition variable when no ``step=`` names one: one table, one rule.

``DEFAULT_STEPS`` maps the kind of the partition's observation model
(``_dispatch``) to a step class.  Every partition step registered in
``pm.STEP_METHODS`` (``steps.register``) answers PyMC's ``competence`` with
:func:`competence_for`: ``IDEAL`` if it is the default for the variable's
model kind, ``COMPATIBLE`` if it is another partition step, so ``pm.sample``
picks the default and never Metropolis on labels.  The default logs which
step it is and why (the ``pymc`` logger, where PyMC lists its steps).

The choice, measured by ESS per second of K and of the log joint
(``benchmarks/default_step.py``, ``docs/benchmarks.md``, "The default step"):

* conjugate mixtures (``ADDITIVE``) and the relational model
  (``RELATIONAL``): ``SplitMergeStep`` -- one restricted-Gibbs split-merge
  proposal, then a Gibbs sweep;
* models whose clusters keep explicit parameters (``PARAMETRIC``,
  ``NormalMixture``): ``GibbsStep`` (Neal's Algorithm 8), the registered step
  that samples them (``SplitMergeStep`` does not support them);
* a component model written in PyMC (``kernels.protocol.COMPONENT``): ``GibbsStep``
  (Algorithm 8 in the ``K_max``-row form), NUTS on the parameters: on the
  crabs (n = 200, three seeds) 2.6x the ESS per CPU second of K of
  ``NonconjugateSplitMergeStep`` (whose proposals are seldom accepted once the
  clusters are found), and as fast to the planted lines of the race
  (``docs/benchmarks.md``, "Your own component model").

A new model kind (e.g. user-written component models) chooses its default by
adding its kind to ``DEFAULT_STEPS``, with a step class that supports that
kind (its ``kinds``) and is registered in ``steps.register``.  A partition
whose observation model cannot be found gets ``GibbsStep``, whose
constructor then says what is missing; so does one sampled outside its
model's context (``pm.sample(model=m)`` outside ``with m:``), since PyMC asks
``competence`` about a variable without naming its model.
"""

from __future__ import annotations

import logging

import pymc as pm
from pymc.step_methods.compound import Competence

from pymc_partitions._dispatch import ADDITIVE, PARAMETRIC, RELATIONAL
from pymc_partitions.distributions.discovery import read_problem
from pymc_partitions.kernels.protocol import COMPONENT
from pymc_partitions.steps.support import model_kind

_log = logging.getLogger("pymc")

DEFAULT_STEPS = {ADDITIVE: "SplitMergeStep", RELATIONAL: "SplitMergeStep", PARAMETRIC: "GibbsStep", COMPONENT: "GibbsStep"}
"""The default step's class name by model kind (names: the step modules import this one)."""

_REASONS = {
    "SplitMergeStep": "the highest ESS per second of K and of the log joint among the candidates measured on real data "
    "(docs/benchmarks.md, 'The default step')",
    "GibbsStep": "the registered step that samples clusters with explicit parameters (Algorithm 8), the highest "
    "ESS per second of K measured on them (docs/benchmarks.md)",
}


def _model_kind(rv):
    """The model kind of partition ``rv`` in the model in context (``kernels.protocol.COMPONENT`` for a component
    model written in PyMC), ``None`` if it has no observation model the package can read."""
    try:
        return model_kind(read_problem(pm.modelcontext(None), rv))
    except (TypeError, ValueError):
        return None


def default_step_name(rv):
    """The class name of the step ``pm.sample()`` assigns to partition variable ``rv`` (module docstring)."""
    return DEFAULT_STEPS.get(_model_kind(rv), "GibbsStep")


def competence_for(step_class, rv, is_partition):
    """PyMC's competence of ``step_class`` for ``rv``: ``IDEAL`` for the default step of a partition variable
    (logged, with the reason), ``COMPATIBLE`` for the other partition steps, else ``INCOMPATIBLE``."""
    if not is_partition:
        return Competence.INCOMPATIBLE
    name = default_step_name(rv)
    if step_class.__name__ != name:
        return Competence.COMPATIBLE
    _log.info(
        f"pm.sample assigns {name} to the partition variable {rv.name!r}: {_REASONS[name]}; pass step= to choose another"
    )
    return Competence.IDEAL
