"""Enumeration tests (docs/design.md §4.1): every step leaves the exact posterior invariant.

For n = 5 items (Bell(5) = 52 partitions) the exact posterior over partitions
is computed from ``model.compile_logp()`` -- the PyTensor model, independent of
the numba kernels -- and compared with the pooled frequencies of several
chains of the step, in total variation, with a tolerance derived from the
run's effective sample size (``exact.tv_tolerance``).  Every step runs alone
and interleaved with Gibbs, on every family and under every prior; under the
NGG prior ``u`` is sampled by PyMC (NUTS) in ``pm.sample`` and integrated out
numerically for the exact answer, and one test samples ``alpha ~ Gamma`` the
same way.
"""

import zlib

import arviz as az
import numpy as np
import pymc as pm
import pytest
from exact import exact_posterior, partition_ids, set_partitions, total_variation, tv_tolerance
from runners import run_kernel
from scipy import stats

import pymc_partitions as pmp

N_ITEMS = 5
DATA_RNG = np.random.default_rng(2024)

DATA = {
    "beta_bernoulli": (DATA_RNG.random((N_ITEMS, 3)) < 0.5).astype(float),
    "normal_gamma": DATA_RNG.normal(0.0, 1.5, (N_ITEMS, 2)),
    "normal_inverse_wishart": DATA_RNG.normal(0.0, 1.5, (N_ITEMS, 2)),
    "dirichlet_multinomial": DATA_RNG.poisson(2.0, (N_ITEMS, 3)).astype(float),
    "gamma_poisson": DATA_RNG.poisson(3.0, (N_ITEMS, 2)).astype(float),
    "categorical": np.stack([DATA_RNG.integers(0, 3, N_ITEMS), DATA_RNG.integers(0, 2, N_ITEMS)], axis=1).astype(float),
}


def add_family(name, z):
    x = DATA[name]
    if name == "beta_bernoulli":
        return pmp.BetaBernoulliMixture("x", partition=z, a=0.7, b=1.3, observed=x)
    if name == "normal_gamma":
        return pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=0.5, a0=2.0, b0=2.0, observed=x)
    if name == "normal_inverse_wishart":
        return pmp.NormalInverseWishartMixture("x", partition=z, mu0=0.0, kappa0=0.5, nu0=4.0, Psi0=2.0 * np.eye(2), observed=x)
    if name == "dirichlet_multinomial":
        return pmp.DirichletMultinomialMixture("x", partition=z, beta=0.8, observed=x)
    if name == "categorical":
        return pmp.CategoricalMixture("x", partition=z, beta=[0.6, 1.5], n_categories=[3, 2], observed=x)
    return pmp.GammaPoissonMixture("x", partition=z, a=2.0, b=0.7, observed=x)


K_PRIOR = stats.poisson.pmf(np.arange(30), 3.0)
K_PRIOR /= K_PRIOR.sum()


def add_prior(name):
    if name == "dp":
        return pmp.DirichletProcessPartition("z", alpha=1.3, n=N_ITEMS)
    if name == "py":
        return pmp.PitmanYorPartition("z", alpha=0.9, sigma=0.3, n=N_ITEMS)
    if name == "mfm":
        return pmp.MixtureOfFiniteMixturesPartition("z", gamma=0.8, k_prior=K_PRIOR, n=N_ITEMS)
    u = pmp.NGGAuxiliary("u", alpha=1.2, sigma=0.4, tau=1.0, n=N_ITEMS)
    return pmp.NGGPartition("z", alpha=1.2, sigma=0.4, tau=1.0, u=u, n=N_ITEMS)


STEPS = {
    "gibbs": lambda z: pmp.GibbsStep(z),
    "split_merge": lambda z: pmp.SplitMergeStep(z, gibbs_sweep=False),
    "split_merge+gibbs": lambda z: pmp.SplitMergeStep(z, gibbs_sweep=True),
}


def build_model(family, prior):
    with pm.Model() as model:
        z = add_prior(prior)
        add_family(family, z)
    return model


def effective_size(ids, exact):
    """Smallest ESS (arviz, over chains) of the indicators of partitions with exact mass > 1%."""
    return float(min(az.ess((ids == k).astype(float), method="mean") for k in np.flatnonzero(exact > 0.01)))


def check_against_exact(traces, exact, partitions, min_ess=1000, max_tolerance=None):
    """Pooled frequencies within the ESS-justified total-variation tolerance of ``exact``.

    Every draw must be an enumerated canonical partition (``exact.partition_ids`` fails otherwise).
    With ``max_tolerance`` the run must also be long enough for the tolerance to be at most that.
    """
    ids = partition_ids(traces, partitions)
    freq = np.bincount(ids.ravel(), minlength=len(partitions)) / ids.size
    n_eff = effective_size(ids, exact)
    tv, tol = total_variation(freq, exact), tv_tolerance(exact, n_eff)
    assert n_eff > min_ess, f"too few effective draws ({n_eff:.0f}) for a meaningful test"
    if max_tolerance is not None:
        assert tol <= max_tolerance, f"tolerance {tol:.4f} > {max_tolerance} (n_eff {n_eff:.0f}): the run is too short"
    assert tv < tol, f"TV {tv:.4f} >= tolerance {tol:.4f} (n_eff {n_eff:.0f})"
    return tv, tol


def run_step_chains(model, step, n_chains=4, n_draws=25_000, seed=0, burn=500):
    """Chains of ``step``'s own transition at the model's initial hyperparameters, from random partitions.

    ``runners.run_kernel`` calls the function the PyMC step calls, with the
    step's options (``step.options``), so one iteration is exactly one
    ``step``; run inside numba, 100,000 iterations take about a second.
    Returns (chains, draws, n) canonical labels.
    """
    partitions = set_partitions(model["z"].type.shape[0])
    rng = np.random.default_rng(seed)
    kernel_model = step.kernel_model(model.initial_point())
    start = partitions[rng.integers(len(partitions), size=n_chains)].astype(np.int64)
    labels, _, _ = run_kernel(step.kernel, step.options, kernel_model, start, n_draws + burn, rng)
    return np.swapaxes(labels[burn:], 0, 1)


def run_kernel_chains(model, step_name, n_chains=4, n_draws=25_000, seed=0):
    """:func:`run_step_chains` for the step named ``step_name`` in :data:`STEPS`."""
    with model:
        step = STEPS[step_name](model["z"])
    return run_step_chains(model, step, n_chains, n_draws, seed)


@pytest.mark.slow
@pytest.mark.parametrize("prior", ["dp", "py", "mfm"])
@pytest.mark.parametrize("family", list(DATA))
@pytest.mark.parametrize("step_name", list(STEPS))
def test_step_matches_enumeration(step_name, family, prior):
    model = build_model(family, prior)
    partitions, exact = exact_posterior(model)
    assert exact.max() < 0.6, "posterior too concentrated for a meaningful test"
    traces = run_kernel_chains(model, step_name, seed=zlib.crc32(f"{step_name}-{family}-{prior}".encode()))
    check_against_exact(traces, exact, partitions)


def sample_with_pymc(model, make_step, draws, seed, other_steps=()):
    with model:
        idata = pm.sample(
            step=[make_step(model["z"]), *(s() for s in other_steps)], draws=draws, tune=300, chains=2, cores=1,
            progressbar=False, random_seed=seed, compute_convergence_checks=False,
        )
    return np.asarray(idata["posterior"]["z"].values)


@pytest.mark.slow
@pytest.mark.parametrize("family", list(DATA))
@pytest.mark.parametrize("step_name", list(STEPS))
def test_ngg_with_u_sampled_by_pymc(step_name, family):
    """NGG prior: ``u`` moved by ``pm.Slice`` inside ``pm.sample``; exact answer integrates ``u`` out."""
    model = build_model(family, "ngg")
    grid = np.linspace(-8.0, 8.0, 241)
    partitions, exact = exact_posterior(model, grids={"u_log__": grid})
    with model:
        traces = sample_with_pymc(model, STEPS[step_name], draws=4500, seed=3, other_steps=[lambda: pm.Slice([model["u"]])])
    check_against_exact(traces, exact, partitions)


def random_alpha_model():
    """DP with ``alpha ~ Gamma(2, 2)`` on the Normal-Gamma data, and its exact posterior with ``alpha`` integrated out."""
    with pm.Model() as model:
        alpha = pm.Gamma("alpha", 2.0, 2.0)
        z = pmp.DirichletProcessPartition("z", alpha=alpha, n=N_ITEMS)
        add_family("normal_gamma", z)
    partitions, exact = exact_posterior(model, grids={"alpha_log__": np.linspace(-9.0, 5.0, 281)})
    return model, partitions, exact


@pytest.mark.slow
@pytest.mark.parametrize("step_name", list(STEPS))
def test_alpha_sampled_by_pymc(step_name):
    """DP with ``alpha ~ Gamma(2, 2)`` sampled by NUTS; exact answer integrates ``alpha`` out."""
    model, partitions, exact = random_alpha_model()
    traces = sample_with_pymc(model, STEPS[step_name], draws=4000, seed=4)
    check_against_exact(traces, exact, partitions)


def test_harness_detects_a_wrong_posterior():
    """The check has power: Gibbs draws for alpha = 1.3 fail against the exact posterior for alpha = 4."""
    model = build_model("normal_gamma", "dp")
    traces = run_kernel_chains(model, "gibbs", n_chains=2, n_draws=3000, seed=1)
    with pm.Model() as other:
        z = pmp.DirichletProcessPartition("z", alpha=4.0, n=N_ITEMS)
        add_family("normal_gamma", z)
    partitions, wrong = exact_posterior(other)
    with pytest.raises(AssertionError, match="TV"):
        check_against_exact(traces, wrong, partitions)


def test_harness_rejects_draws_that_are_not_enumerated_partitions():
    """A draw outside the enumeration (not canonical, or a label out of range) fails; it is never mapped to a neighbour."""
    partitions = set_partitions(N_ITEMS)
    good = partitions[[0, 7, 51]]
    assert partition_ids(good, partitions).tolist() == [0, 7, 51]
    for bad in ([1, 0, 0, 0, 0], [0, 2, 1, 1, 0], [0, 0, 0, 0, 5], [0, 0, 0, 0, -1]):
        with pytest.raises(AssertionError, match=rf"1 of 4 samples are not enumerated canonical partitions, e.g. \[{bad[0]}"):
            partition_ids(np.vstack([good, bad]), partitions)
