"""pymc_partitions: exact, fast partition samplers for Bayesian nonparametric clustering in PyMC.

Partition priors and observation models are PyMC distributions; the samplers
are PyMC step methods that run next to NUTS/slice on the hyperparameters.
See ``DirichletProcessPartition``, ``NormalGammaMixture``, ``GibbsStep``,
``SplitMergeStep`` and ``summarize``.

The public names are imported on first use.  ``import pymc_partitions`` and
the numba layers (``families``, ``priors``, ``state``, ``kernels``) do not import
PyMC, so a Dask worker can load the kernels alone; the first public name a
user touches imports the PyMC layer (distributions, step methods -- which
registers them with ``pm.sample`` -- and summaries) at once.
"""

import importlib

from pymc_partitions.registry import FAMILIES, STEPS

__version__ = "0.1.0"

_PYMC_LAYER = {
    "pymc_partitions.distributions": [name for _, name in FAMILIES if name is not None],
    "pymc_partitions.distributions.partitions": [
        "DirichletProcessPartition",
        "MixtureOfFiniteMixturesPartition",
        "NGGAuxiliary",
        "NGGPartition",
        "PitmanYorPartition",
    ],
    "pymc_partitions.steps": list(STEPS),
    "pymc_partitions.distributions.coarsened": ["Coarsened"],
    "pymc_partitions.calibration": ["calibrate_coarsening"],
    "pymc_partitions.summary": [
        "adjusted_rand_index",
        "cluster_parameters",
        "expected_loss",
        "partition_uncertainty",
        "point_partition",
        "posterior_predictive",
        "posterior_similarity",
        "relabel",
        "summarize",
        "vi_distance",
    ],
}
_SUBMODULES = ["datasets", "plots"]

__all__ = sorted([name for names in _PYMC_LAYER.values() for name in names] + _SUBMODULES)


def __getattr__(name):
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    for module_name, names in _PYMC_LAYER.items():
        module = importlib.import_module(module_name)
        for public in names:
            globals()[public] = getattr(module, public)
    importlib.import_module("pymc_partitions.steps").register()  # pm.sample assigns a partition step (steps.default)
    return globals()[name]


def __dir__():
    return sorted(set(globals()) | set(__all__))
