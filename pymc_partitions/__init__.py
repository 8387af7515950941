"""pymc_partitions: exact, fast partition samplers for Bayesian nonparametric clustering in PyMC.

Partition priors and observation models are PyMC distributions; the samplers
are PyMC step methods that run next to NUTS/slice on the hyperparameters.
See ``DirichletProcessPartition``, ``NormalGammaMixture``, ``GibbsStep``,
``SplitMergeStep`` and ``summarize``.
"""

from pymc_partitions.distributions.mixtures import (
    BetaBernoulliMixture,
    DirichletMultinomialMixture,
    GammaPoissonMixture,
    NormalGammaMixture,
    NormalInverseWishartMixture,
)
from pymc_partitions.distributions.partitions import (
    DirichletProcessPartition,
    MixtureOfFiniteMixturesPartition,
    NGGAuxiliary,
    NGGPartition,
    PitmanYorPartition,
)
from pymc_partitions.steps import GibbsStep, SplitMergeStep

__version__ = "0.1.0"

__all__ = [
    "BetaBernoulliMixture",
    "DirichletMultinomialMixture",
    "DirichletProcessPartition",
    "GammaPoissonMixture",
    "GibbsStep",
    "MixtureOfFiniteMixturesPartition",
    "NGGAuxiliary",
    "NGGPartition",
    "NormalGammaMixture",
    "NormalInverseWishartMixture",
    "PitmanYorPartition",
    "SplitMergeStep",
]
