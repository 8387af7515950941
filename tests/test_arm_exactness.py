"""Enumeration tests (docs/design.md §4.1) for the population samplers: ARM, sARM, sRM and past-state split-merge.

As in ``test_exactness.py``, the exact posterior over the 52 partitions of
n = 5 items comes from ``model.compile_logp()`` and the pooled frequencies of
the chains must lie within the ESS-justified total-variation tolerance.  The
chains run as a population (``runners.run_population``: S chains updated
synchronously, each move drawing its past states from the last half of every
chain's history, exactly as the PyMC steps do), started from random
partitions so that distinct past states exist from the start.  Each sampler
runs alone and followed by a Gibbs sweep; ARM also runs on every family and
prior, ``arm-past`` also under the Pitman-Yor prior, and ``ARMStep``
(default variant) inside ``pm.sample`` with ``alpha ~ Gamma`` moved by its own slice
sampler, and with both Pitman-Yor hyperparameters (``alpha ~ Gamma``,
``sigma ~ Uniform``) moved by it.  The Infinite Relational Model cases are in ``test_irm.py``.
"""

import zlib

import numpy as np
import pymc as pm
import pytest
from exact import exact_posterior, initial_values, set_partitions
from runners import run_kernel
from test_exactness import DATA, add_family, add_prior, check_against_exact, random_alpha_model

import pymc_partitions as pmp


def population_step(model, variant, gibbs_sweep):
    """The PyMC population step for ``variant`` ("arm", "sarm", "srm", "arm-past", or "bsm": past-state split-merge)."""
    with model:
        if variant == "bsm":
            return pmp.PastStatesSplitMergeStep(model["z"], gibbs_sweep=gibbs_sweep, hyperparameters=None)
        return pmp.ARMStep(model["z"], variant=variant, gibbs_sweep=gibbs_sweep, hyperparameters=None)


def run_population_chains(model, variant, gibbs_sweep, n_chains=4, n_draws=15_000, seed=0):
    """Population chains of the step's own transition at the model's fixed hyperparameters; (chains, draws, n) labels."""
    step = population_step(model, variant, gibbs_sweep)
    kernel_model = step.kernel_model(model.initial_point())
    partitions = set_partitions(model["z"].type.shape[0])
    rng = np.random.default_rng(seed)
    start = partitions[rng.integers(len(partitions), size=n_chains)].astype(np.int64)
    labels, accepted, moved = run_kernel(step.kernel, step.options, kernel_model, start, n_draws + 500, rng)
    assert moved.min() > 0.9 * n_draws, "most iterations should find a background and make a move"
    assert accepted.sum() > 0.05 * moved.sum(), "a sampler that never accepts proves nothing"
    return np.swapaxes(labels[500:], 0, 1)


def check_population(model, variant, gibbs_sweep, seed_text):
    partitions, exact = exact_posterior(model, fixed=initial_values(model))
    assert exact.max() < 0.6, "posterior too concentrated for a meaningful test"
    traces = run_population_chains(model, variant, gibbs_sweep, seed=zlib.crc32(seed_text.encode()))
    check_against_exact(traces, exact, partitions)


def build(family, prior):
    with pm.Model() as model:
        z = add_prior(prior)
        add_family(family, z)
    return model


CASES = [
    pytest.param(variant, gibbs_sweep, id=f"{variant}-{'with_gibbs' if gibbs_sweep else 'alone'}")
    for variant in ("arm", "sarm", "srm", "arm-past")
    for gibbs_sweep in (False, True)
] + [pytest.param("bsm", True, id="bsm-with_gibbs")]
"""Past-state split-merge runs only with Gibbs (as in the paper): alone it is not irreducible -- it
proposes only pairs on which past states disagree, and 4 chains were seen to settle in 4 partitions
whose disagreements their own split-merge moves just toggle (docs/exactness.md)."""


@pytest.mark.slow
@pytest.mark.parametrize("variant, gibbs_sweep", CASES)
def test_population_sampler_matches_enumeration(variant, gibbs_sweep):
    check_population(build("beta_bernoulli", "dp"), variant, gibbs_sweep, f"{variant}-{gibbs_sweep}")


@pytest.mark.slow
@pytest.mark.parametrize(
    "family, prior",
    [(family, "dp") for family in DATA if family != "beta_bernoulli"]
    + [("normal_gamma", "py"), ("gamma_poisson", "mfm"), ("normal_gamma", "ngg")],
)
def test_arm_alone_on_every_family_and_prior(family, prior):
    """ARM alone; under the NGG prior with ``u`` at the model's initial value, the target ``p(Π | u, x)`` that
    ``exact_posterior`` enumerates with ``u`` at that value."""
    check_population(build(family, prior), "arm", False, f"arm-{family}-{prior}")


@pytest.mark.slow
@pytest.mark.parametrize("prior", ["py", "mfm", "ngg"])
def test_past_states_split_merge_beyond_dp(prior):
    """bSM with its Gibbs sweep (its default) on Normal-Gamma data under the other priors (``u`` fixed under NGG)."""
    check_population(build("normal_gamma", prior), "bsm", True, f"bsm-normal_gamma-{prior}")


@pytest.mark.slow
def test_arm_past_alone_under_pitman_yor():
    """``arm-past`` on a mixture under the Pitman-Yor prior (the relational cases are in ``test_irm.py``)."""
    check_population(build("normal_gamma", "py"), "arm-past", False, "arm-past-normal_gamma-py")


@pytest.mark.slow
def test_arm_step_in_pm_sample_with_alpha_by_slice():
    """ARMStep inside pm.sample, alpha ~ Gamma(2, 2) moved by the step's own pm.Slice; alpha integrated out exactly."""
    model, partitions, exact = random_alpha_model()
    with model:
        step = pmp.ARMStep(model["z"])
        assert model.rvs_to_values[model["alpha"]] in step.vars  # the step owns alpha (slice), NUTS is not assigned
        idata = pm.sample(
            step=step, draws=3000, tune=200, chains=4, cores=1, progressbar=False, random_seed=7,
            compute_convergence_checks=False,
        )
    assert set(idata["sample_stats"]["partition_move"].values.ravel()) <= {1, 2, 3}
    check_against_exact(np.asarray(idata["posterior"]["z"].values), exact, partitions)


@pytest.mark.slow
def test_arm_step_in_pm_sample_with_two_hyperparameters_by_slice():
    """Pitman-Yor with ``alpha ~ Gamma(2, 2)`` and ``sigma ~ Uniform(0, 0.9)``, both moved by the step's own
    ``pm.Slice`` (one blocked slice sampler, a width per coordinate); both integrated out exactly on a grid in
    their transformed space (61 x 41 nodes: the posterior moves by less than 1e-6 on a grid twice as fine)."""
    with pm.Model() as model:
        alpha = pm.Gamma("alpha", 2.0, 2.0)
        sigma = pm.Uniform("sigma", 0.0, 0.9)
        z = pmp.PitmanYorPartition("z", alpha=alpha, sigma=sigma, n=DATA["normal_gamma"].shape[0])
        add_family("normal_gamma", z)
    grids = {"alpha_log__": np.linspace(-7.0, 4.0, 61), "sigma_interval__": np.linspace(-9.0, 9.0, 41)}
    partitions, exact = exact_posterior(model, grids=grids)
    with model:
        step = pmp.ARMStep(model["z"])
        assert {model.rvs_to_values[alpha], model.rvs_to_values[sigma]} <= set(step.vars)
        idata = pm.sample(
            step=step, draws=3000, tune=200, chains=4, cores=1, progressbar=False, random_seed=11,
            compute_convergence_checks=False,
        )
    for name in ("alpha", "sigma"):
        assert idata["posterior"][name].std() > 0, f"{name} was not moved"
    check_against_exact(np.asarray(idata["posterior"]["z"].values), exact, partitions)
