# partition priors are imported from .partitions (lead engineer)
from pymc_partitions.distributions.mixtures import (
    BETA_BERNOULLI,
    DIRICHLET_MULTINOMIAL,
    GAMMA_POISSON,
    NORMAL_GAMMA,
    NORMAL_INVERSE_WISHART,
    BetaBernoulliMixture,
    DirichletMultinomialMixture,
    GammaPoissonMixture,
    MixtureSpec,
    NormalGammaMixture,
    NormalInverseWishartMixture,
    PartitionMixture,
    PartitionMixtureRV,
    mixture_spec,
    observed_data,
)
from pymc_partitions.distributions.nonconjugate import NORMAL, NormalMixture, NormalMixtureRV
from pymc_partitions.distributions.relational import (
    INFINITE_RELATIONAL,
    InfiniteRelationalModel,
    InfiniteRelationalModelRV,
)
