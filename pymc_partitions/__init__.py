"""pymc_partitions: exact, fast partition samplers for Bayesian nonparametric clustering in PyMC."""

from pymc_partitions.distributions.partitions import (
    DirichletProcessPartition,
    MixtureOfFiniteMixturesPartition,
    NGGAuxiliary,
    NGGPartition,
    PitmanYorPartition,
)

__version__ = "0.1.0"
