"""Enumeration tests (docs/design.md §4.1) for the samplers of ``NormalMixture``, whose clusters keep explicit parameters.

The target of the steps is the joint posterior of ``(z, mu, tau)``; its
marginal over ``z`` is enumerated for n = 5 items (52 partitions): each
cluster's means integrated out analytically and its precisions by quadrature,
the partition prior from the PyMC model and restricted to ``K <= K_max``
(``exact.normal_mixture_posterior``, independent of the kernels).  Every step
runs alone and interleaved with Algorithm 8 scans -- Algorithm 8 (m = 2), Algorithm 7,
SM(2, 1, 0, 2) alone and the paper's SM(5, 1, 1, 5) -- for d = 1 and d = 2,
under DP, PY and MFM priors, with ``K_max = n`` and ``K_max = 3 < n``; one
test samples ``alpha ~ Gamma(2, 2)`` with NUTS inside ``pm.sample`` (the exact
answer integrates it out on a grid).
"""

import zlib

import numpy as np
import pymc as pm
import pytest
from exact import normal_mixture_posterior
from runners import run_kernel
from scipy import stats
from test_exactness import check_against_exact

import pymc_partitions as pmp

N_ITEMS = 5
DATA = {
    1: np.array([[-1.2], [-0.7], [0.4], [1.5], [2.1]]),
    2: np.array([[-1.0, 0.3], [-0.6, -0.4], [0.5, 0.9], [1.4, 1.2], [1.9, -0.2]]),
}
# hyperparameters exact in float32 (PyMC stores some as float32 constants)
M, SIGMA, A, B = 0.25, 2.0, 2.0, 2.0
K_PRIOR = stats.poisson.pmf(np.arange(30), 2.0)
K_PRIOR /= K_PRIOR.sum()

STEPS = {
    "gibbs": lambda z: pmp.GibbsStep(z, n_auxiliary=2),  # m = 1 runs inside SM(5, 1, 1, 5)
    "incremental_metropolis": lambda z: pmp.IncrementalMetropolisStep(z),
    "split_merge": lambda z: pmp.NonconjugateSplitMergeStep(z, n_split_scans=2, n_gibbs_scans=0, n_merge_scans=2),
    "split_merge+gibbs": lambda z: pmp.NonconjugateSplitMergeStep(z),  # SM(5, 1, 1, 5)
}
CASES = [(1, "dp", N_ITEMS), (2, "py", 3), (2, "mfm", N_ITEMS), (1, "py", 3)]


def add_prior(name, alpha=1.2):
    if name == "dp":
        return pmp.DirichletProcessPartition("z", alpha=alpha, n=N_ITEMS)
    if name == "py":
        return pmp.PitmanYorPartition("z", alpha=0.8, sigma=0.3, n=N_ITEMS)
    return pmp.MixtureOfFiniteMixturesPartition("z", gamma=1.0, k_prior=K_PRIOR, n=N_ITEMS)


def build_model(d, prior, k_max, alpha=1.2):
    with pm.Model() as model:
        z = add_prior(prior, alpha)
        mu = pm.Normal("mu", M, SIGMA, shape=(k_max, d))
        tau = pm.Gamma("tau", A, B, shape=(k_max, d))
        pmp.NormalMixture("x", partition=z, mu=mu, tau=tau, observed=DATA[d])
    return model


def exact_answer(model, d, k_max, **kwargs):
    hyper = [np.full(d, value) for value in (M, 1 / SIGMA**2, A, B)]
    return normal_mixture_posterior(model, DATA[d], *hyper, k_max, **kwargs)


def run_step_chains(model, step, partitions, exact, n_chains=4, n_draws=25_000, seed=0, burn=500):
    """Chains of the step's own transition (``runners.run``), from random partitions with positive mass."""
    rng = np.random.default_rng(seed)
    kernel_model = step.kernel_model(model.initial_point())
    allowed = partitions[exact > 0]
    start = allowed[rng.integers(len(allowed), size=n_chains)].astype(np.int64)
    labels, _, _ = run_kernel(step.kernel, step.options, kernel_model, start, n_draws + burn, rng)
    return np.swapaxes(labels[burn:], 0, 1)


@pytest.mark.slow
@pytest.mark.parametrize("d, prior, k_max", CASES)
@pytest.mark.parametrize("step_name", list(STEPS))
def test_step_matches_enumeration(step_name, d, prior, k_max):
    model = build_model(d, prior, k_max)
    partitions, exact = exact_answer(model, d, k_max)
    assert exact.max() < 0.6, "posterior too concentrated for a meaningful test"
    if k_max < N_ITEMS:
        assert np.all(exact[partitions.max(axis=1) >= k_max] == 0) and np.sum(partitions.max(axis=1) >= k_max) > 0
    with model:
        step = STEPS[step_name](model["z"])
    seed = zlib.crc32(f"{step_name}-{d}-{prior}-{k_max}".encode())
    traces = run_step_chains(model, step, partitions, exact, seed=seed)
    check_against_exact(traces, exact, partitions)


@pytest.mark.slow
def test_alpha_sampled_by_pymc():
    """DP with ``alpha ~ Gamma(2, 2)`` moved by NUTS next to SM(5, 1, 1, 5) in ``pm.sample``; ``K_max = 4 < n``."""
    with pm.Model() as model:
        alpha = pm.Gamma("alpha", 2.0, 2.0)
        z = pmp.DirichletProcessPartition("z", alpha=alpha, n=N_ITEMS)
        mu = pm.Normal("mu", M, SIGMA, shape=(4, 2))
        tau = pm.Gamma("tau", A, B, shape=(4, 2))
        pmp.NormalMixture("x", partition=z, mu=mu, tau=tau, observed=DATA[2])
    partitions, exact = exact_answer(model, 2, 4, grids={"alpha_log__": np.linspace(-9.0, 5.0, 281)})
    with model:
        idata = pm.sample(
            step=[pmp.NonconjugateSplitMergeStep([z, mu, tau])], draws=4000, tune=300, chains=2, cores=1,
            progressbar=False, random_seed=4, compute_convergence_checks=False,
        )
    check_against_exact(np.asarray(idata["posterior"]["z"].values), exact, partitions)


def test_harness_detects_a_wrong_restriction():
    """The check has power: Algorithm 8 draws for K_max = 5 fail against the exact posterior for K_max = 3."""
    model = build_model(1, "dp", N_ITEMS)
    partitions, exact = exact_answer(model, 1, N_ITEMS)
    with model:
        step = STEPS["gibbs"](model["z"])
    traces = run_step_chains(model, step, partitions, exact, n_chains=2, n_draws=5000, seed=1)
    _, wrong = exact_answer(build_model(1, "dp", 3), 1, 3)
    with pytest.raises(AssertionError, match="TV"):
        check_against_exact(traces, wrong, partitions)
