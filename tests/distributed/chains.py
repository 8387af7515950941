"""The Dask tests' models and ``pm.sample`` runs (n = 5, ``test_exactness``'s data)."""

import numpy as np
import pymc as pm
from test_exactness import N_ITEMS, add_family, add_prior

import pymc_partitions as pmp


def model_of(family, prior, alpha=False):
    """``family``'s data under ``prior``; with ``alpha``, a DP whose ``alpha ~ Gamma(2, 2)`` is left to PyMC (NUTS)."""
    with pm.Model() as model:
        if alpha:
            z = pmp.DirichletProcessPartition("z", alpha=pm.Gamma("alpha", 2.0, 2.0), n=N_ITEMS)
        else:
            z = add_prior(prior)
        add_family(family, z)
    return model


def sample_chains(model, step, *, gibbs=False, draws, tune, callback=None, seed=11):
    """Two chains, one after the other, of ``step`` (followed by ``GibbsStep`` on ``z`` if ``gibbs``), tuning
    draws kept: the ``InferenceData``."""
    with model:
        steps = [step, pmp.GibbsStep(model["z"])] if gibbs else [step]
        return pm.sample(
            step=steps, draws=draws, tune=tune, chains=2, cores=1, progressbar=False, random_seed=seed,
            compute_convergence_checks=False, discard_tuned_samples=False, callback=callback,
        )


def assert_same_chains(local, dask, stats):
    """The two runs drew the same values of every variable, tuning draws included, and the same sample ``stats``."""
    for group in ("posterior", "warmup_posterior"):
        for name in local[group].data_vars:
            np.testing.assert_array_equal(local[group][name].values, dask[group][name].values)
    for name in stats:
        np.testing.assert_array_equal(local["sample_stats"][name].values, dask["sample_stats"][name].values)


def local_and_dask(sample, case, client):
    """``sample(model, backend, **options)`` on the local backend and on ``client``, for the model and options of
    ``case`` (``family``, ``prior``, ``alpha`` and the sampling options): both ``(idata, step)`` pairs."""
    options = dict(case)
    model = model_of(options.pop("family"), options.pop("prior"), options.pop("alpha", False))
    return sample(model, "local", **options), sample(model, client, **options)
