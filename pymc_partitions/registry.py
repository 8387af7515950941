"""The observation families, in the order of their integer codes, one line per family; the step methods' names.

Each line names the family's module in ``pymc_partitions.families`` (its
numba functions, its spec and its PyTensor log marginal) and its PyMC
distribution class in ``pymc_partitions.distributions`` (``None`` for the
generic component model, whose observation model is the user's own PyMC
likelihood, ``distributions.components``).  Everything else --
codes, numba tags, ``pack_params``, the kind dispatch, the distribution
classes of the additive families and the public names -- is built from this
list and the modules' specs.  A new family is a module, its tests, one line
here and its documentation (``docs/toolkit.md``).

Plain data: importing it imports nothing else (``import pymc_partitions`` reads the public names here).
"""

STEPS = (
    "ARMStep", "GibbsStep", "HybridDPStep", "IncrementalMetropolisStep", "MinHashSplitMergeStep", "NonconjugateSplitMergeStep",
    "PastStatesSplitMergeStep", "SplitMergeStep", "SubClusterSplitMergeStep", "TemperedGibbsStep", "TreeGuidedStep",
)
"""The public step methods (``pymc_partitions.steps``), by name."""

FAMILIES = (
    ("beta_bernoulli", "BetaBernoulliMixture"),
    ("normal_gamma", "NormalGammaMixture"),
    ("normal_inverse_wishart", "NormalInverseWishartMixture"),
    ("dirichlet_multinomial", "DirichletMultinomialMixture"),
    ("gamma_poisson", "GammaPoissonMixture"),
    ("infinite_relational", "InfiniteRelationalModel"),
    ("normal", "NormalMixture"),
    ("categorical", "CategoricalMixture"),
    ("normal_linear_regression", "NormalLinearRegressionMixture"),
    ("component", None),
)
