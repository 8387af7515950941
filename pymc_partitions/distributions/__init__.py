"""PyMC distributions: the partition priors and the observation models given a partition (layer 6, docs/design.md §3.1)."""

from pymc_partitions import families
from pymc_partitions.distributions import mixtures
from pymc_partitions.distributions.mixtures import MixtureSpec, PartitionMixture, PartitionMixtureRV, mixture_spec, observed_data
from pymc_partitions.distributions.nonconjugate import NormalMixture, NormalMixtureRV
from pymc_partitions.distributions.relational import InfiniteRelationalModel, InfiniteRelationalModelRV

_CLASS_NAMES = [name for name in families.CLASS_NAMES if name is not None]  # the component model has no class
for _name in _CLASS_NAMES:  # every family's class; the additive families' are built in ``mixtures``
    globals()[_name] = globals().get(_name) or getattr(mixtures, _name)

__all__ = [
    *_CLASS_NAMES, "InfiniteRelationalModelRV", "NormalMixtureRV", "MixtureSpec", "PartitionMixture",
    "PartitionMixtureRV", "mixture_spec", "observed_data",
]
