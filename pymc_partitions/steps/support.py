"""What a step method samples: its kernels' declarations (``kernels.protocol.Support``) checked against the model.

Every step class lists the supports of the kernels (or moves) it may run in
``supports``; a step built for a problem checks the one it runs
(:func:`check_support`) and refuses anything else with a ``TypeError`` (or a
``ValueError`` for too few items) that names what it samples and the
package's steps that can sample this model (:func:`steps_supporting`).  The
step classes register themselves here (``PartitionStep.__init_subclass__``),
so the list of steps is the classes that exist.
"""

from __future__ import annotations

from pymc_partitions import priors
from pymc_partitions._dispatch import ADDITIVE, PARAMETRIC, RELATIONAL
from pymc_partitions.kernels.protocol import COMPONENT

MODEL_NAMES = {
    ADDITIVE: "conjugate mixtures (cluster parameters integrated out)",
    RELATIONAL: "relational models (InfiniteRelationalModel)",
    PARAMETRIC: "models whose clusters keep explicit parameters (NormalMixture)",
    COMPONENT: "your own component model written in PyMC",
}
PRIOR_NAMES = {
    priors.DP: "DirichletProcessPartition", priors.PY: "PitmanYorPartition", priors.NGGP: "NGGPartition",
    priors.MFM: "MixtureOfFiniteMixturesPartition",
}

STEP_CLASSES = []
"""The package's public partition step classes, in the order they were defined (``PartitionStep.__init_subclass__``)."""


def register(step_class):
    """Add a step class with a sample-stats ``name`` of its own (a public step) to :data:`STEP_CLASSES`."""
    if "name" in vars(step_class) and step_class.__module__.startswith("pymc_partitions.steps"):
        STEP_CLASSES.append(step_class)


def model_kind(problem):
    """The model kind of ``problem`` as the supports declare it: ``COMPONENT`` for a component model, else its kind."""
    return COMPONENT if problem.component is not None else problem.kind


def check_support(step_name, support, problem, offered=None):
    """Refuse ``problem`` (``distributions.discovery.Problem``) unless ``support`` covers its model kind, its prior
    and its number of items; the errors name what the step samples (the model kinds of ``offered``, every support
    of its class; default ``support``'s) and the steps that can."""
    kind = model_kind(problem)
    if kind not in support.kinds:
        described = _described(problem, kind)
        kinds = dict.fromkeys(k for s in (offered or (support,)) for k in s.kinds)
        supported = " or ".join(MODEL_NAMES[k] for k in kinds)
        raise TypeError(
            f"{step_name} samples {supported}, not {described}; for this observation model use "
            f"{steps_supporting(lambda s: kind in s.kinds)}"
        )
    if problem.prior not in support.priors:
        names = " or ".join(PRIOR_NAMES[p] for p in support.priors)
        raise TypeError(
            f"{step_name} needs a {names} prior, got a {PRIOR_NAMES[problem.prior]}; for this prior use "
            f"{steps_supporting(lambda s: problem.prior in s.priors and kind in s.kinds)}"
        )
    if problem.n < support.min_items:
        raise ValueError(f"{step_name} needs a partition of at least {support.min_items} items, got {problem.n}")


def _described(problem, kind):
    """The model in a refusal: its kind and what defines it (the observation model's class, or the observed
    variables of a component model and where they take their rows)."""
    component = problem.component
    if component is not None:
        observed = ", ".join(repr(o.name) for o in component.observed)
        return f"{MODEL_NAMES[kind]} ({observed} taking cluster parameters from {problem.name!r} by row indexing)"
    return f"{MODEL_NAMES[kind]} ({type(problem.observation.owner.op).__name__})"


def steps_supporting(holds):
    """The public step classes with a support for which ``holds(support)`` is true, as text (``pmp.A, pmp.B``)."""
    names = sorted({cls.__name__ for cls in STEP_CLASSES if any(holds(s) for s in cls.supports)})
    return ", ".join(f"pmp.{name}" for name in names)
