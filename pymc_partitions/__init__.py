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
from pymc_partitions.distributions.relational import InfiniteRelationalModel
from pymc_partitions import datasets
from pymc_partitions.steps import ARMStep, GibbsStep, SplitMergeStep
from pymc_partitions.summary import (
    adjusted_rand_index,
    expected_loss,
    point_partition,
    posterior_similarity,
    relabel,
    summarize,
    vi_distance,
)

__version__ = "0.1.0"

__all__ = [
    "ARMStep",
    "BetaBernoulliMixture",
    "DirichletMultinomialMixture",
    "DirichletProcessPartition",
    "GammaPoissonMixture",
    "GibbsStep",
    "InfiniteRelationalModel",
    "MixtureOfFiniteMixturesPartition",
    "NGGAuxiliary",
    "NGGPartition",
    "NormalGammaMixture",
    "NormalInverseWishartMixture",
    "PitmanYorPartition",
    "SplitMergeStep",
    "adjusted_rand_index",
    "datasets",
    "expected_loss",
    "point_partition",
    "posterior_similarity",
    "relabel",
    "summarize",
    "vi_distance",
]
