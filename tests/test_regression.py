"""``NormalLinearRegressionMixture``: the family's numerics, the PyMC model, and exactness by enumeration.

References are written from the model (``tests/coarsened.py``: the responses' marginal
given σ² in closed form, σ² by quadrature), independent of the family module and of the
PyTensor graph.  Enumeration (n = 5, 52 partitions, ``test_exactness.check_against_exact``):
every step that accepts the family (:data:`STEPS`) on the ordinary posterior and on a coarsened one (ζ = 0.4).  The delta
tests are in ``tests/kernels/test_deltas.py``; the sub-cluster step at 10^6 rows in
``benchmarks/regression_million.py``.
"""

import zlib

import numpy as np
import pymc as pm
import pytest
from coarsened import cluster_likelihood, exact_posterior, normal_linear_regression
from scipy import stats
from test_exactness import check_against_exact, run_step_chains

import pymc_partitions as pmp
import pymc_partitions.families as F

pytestmark = pytest.mark.pytensor_python  # compile_logp on a few graphs, no NUTS: PyTensor without C (conftest.py)

FAMILY = F.NORMAL_LINEAR_REGRESSION
N_ITEMS = 5
SLOPE = np.array([0.0, 0.5, 1.0, 1.5, 2.0])
COVARIATES = np.column_stack([np.ones(N_ITEMS), SLOPE])
Y = np.array([0.2, 0.6, 1.3, -0.4, -1.1])
M0, LAMBDA0, A0, B0 = np.array([0.0, 0.5]), np.array([[0.5, 0.1], [0.1, 1.0]]), 2.0, 0.5
ALPHA = 1.3
ROWS = np.column_stack([Y, COVARIATES])


def _params(zeta=1.0):
    return F.pack_params(FAMILY, 3, M0, LAMBDA0, A0, B0, zeta=zeta)


def _stats(rows):
    out, item = np.zeros(F.stat_size(FAMILY, 3)), np.zeros(F.stat_size(FAMILY, 3))
    for row in rows:
        F.item_stats(FAMILY, row, item)
        out += item
    return out


def _reference(members, zeta=1.0):
    members = np.asarray(members)
    return normal_linear_regression(Y[members], COVARIATES[members], M0, LAMBDA0, A0, B0, zeta)


@pytest.mark.parametrize("zeta", [1.0, 0.4])
def test_log_marginal_and_predictive_against_quadrature(zeta):
    params = _params(zeta)
    for members in ([0], [1, 3], [0, 2, 4], [0, 1, 2, 3, 4]):
        assert F.log_marginal(FAMILY, _stats(ROWS[members]), params) == pytest.approx(_reference(members, zeta), rel=1e-7)
    cache = np.zeros(F.cache_size(FAMILY, 3))
    for split in (0, 2, 4):
        before = _stats(ROWS[:split])
        F.fill_cache(FAMILY, before, params, cache)
        expected = F.log_marginal(FAMILY, _stats(ROWS[: split + 1]), params) - F.log_marginal(FAMILY, before, params)
        assert F.log_predictive(FAMILY, cache, ROWS[split], params) == pytest.approx(expected, abs=1e-10)


def test_draws_follow_the_conjugate_posterior_and_densities_are_normal():
    zeta = 0.6
    params, total = _params(zeta), _stats(ROWS)
    precision = LAMBDA0 + zeta * COVARIATES.T @ COVARIATES
    mean = np.linalg.solve(precision, LAMBDA0 @ M0 + zeta * COVARIATES.T @ Y)
    a_n = A0 + zeta * N_ITEMS / 2
    b_n = B0 + 0.5 * (zeta * Y @ Y + M0 @ LAMBDA0 @ M0 - mean @ precision @ mean)
    rng = np.random.default_rng(2)
    theta = np.zeros((4000, F.param_size(FAMILY, 3)))
    for row in theta:
        F.draw_params(FAMILY, total, params, rng, row)
    for values, expected in ((theta[:, 0], mean[0]), (theta[:, 1], mean[1]), (theta[:, 2], a_n / b_n)):
        assert abs(values.mean() - expected) < 4.5 * values.std() / np.sqrt(len(values))
    out = np.empty((N_ITEMS, 3))
    bound = F.log_densities(FAMILY, theta[:3], ROWS, params, out)
    for i in range(N_ITEMS):
        for k in range(3):
            loop = F.log_density(FAMILY, theta[k], ROWS[i], params)
            density = stats.norm.logpdf(Y[i], COVARIATES[i] @ theta[k, :2], 1 / np.sqrt(theta[k, 2]))
            assert loop == pytest.approx(zeta * density, rel=1e-12)
            assert abs(out[i, k] - loop) <= bound


def build(coarsening=None, prior_alpha=ALPHA):
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=prior_alpha, n=N_ITEMS)
        pmp.NormalLinearRegressionMixture(
            "y", partition=z, m0=M0, Lambda0=LAMBDA0, a0=A0, b0=B0, covariates=COVARIATES, observed=Y, coarsening=coarsening
        )
    return model


def exact(zeta):
    likelihood = cluster_likelihood(lambda members: _reference(members, zeta))
    partitions, posterior, log_mass = exact_posterior(N_ITEMS, likelihood, ALPHA)
    assert posterior.max() < 0.6, "posterior too concentrated for a meaningful test"
    return partitions, posterior, log_mass


@pytest.mark.parametrize("zeta", [1.0, 0.4])
def test_model_logp_is_the_reference_on_every_partition(zeta):
    model = build(None if zeta == 1.0 else zeta * N_ITEMS / (1 - zeta))
    partitions, _, log_mass = exact(zeta)
    logp = model.compile_logp()
    values = np.array([logp({"z": z}) for z in partitions])
    np.testing.assert_allclose(values - values[0], log_mass - log_mass[0], atol=1e-7)


STEPS = {
    "gibbs": lambda z: pmp.GibbsStep(z),
    "split_merge": lambda z: pmp.SplitMergeStep(z, gibbs_sweep=False),
    "past_states": lambda z: pmp.PastStatesSplitMergeStep(z, gibbs_sweep=True, hyperparameters=None),
    "arm": lambda z: pmp.ARMStep(z, gibbs_sweep=False, hyperparameters=None),
    "minsm": lambda z: pmp.MinHashSplitMergeStep(z, n_moves=3, n_tables=4, gibbs_sweep=False),
    "tgmcmc": lambda z: pmp.TreeGuidedStep(z),
    "subcluster": lambda z: pmp.SubClusterSplitMergeStep(z),
    "hybrid": lambda z: pmp.HybridDPStep(z, n_shards=1),
}
"""Every step that accepts the family, each alone (split-merge moves without their Gibbs sweep; the past-state
split-merge with it, its default: alone it is not irreducible, its docstring) with its defaults otherwise: the step's
own transition at fixed hyperparameters (``test_exactness.run_step_chains``)."""


DRAWS = {"tgmcmc": 10_000, "subcluster": 10_000}
"""Draws per chain of the steps that make many moves per iteration (tgMCMC's 20 global moves, the sub-cluster
step's 10 proposals and its hybrid iteration; 25,000 for the others); every run must reach a tolerance of 0.05."""


@pytest.mark.parametrize("zeta", [1.0, 0.4])
@pytest.mark.parametrize("step_name", list(STEPS))
def test_step_matches_enumeration(step_name, zeta):
    model = build(None if zeta == 1.0 else zeta * N_ITEMS / (1 - zeta))
    partitions, posterior, _ = exact(zeta)
    with model:
        step = STEPS[step_name](model["z"])
    seed = zlib.crc32(f"regression-{step_name}-{zeta}".encode())
    traces = run_step_chains(model, step, n_draws=DRAWS.get(step_name, 25_000), seed=seed)
    check_against_exact(traces, posterior, partitions, max_tolerance=0.05)


def test_defaults_and_learned_priors():
    rng = np.random.default_rng(0)
    x = rng.normal(size=200)
    covariates = np.column_stack([np.ones(200), x])
    y = 1.0 + 2.0 * x + rng.normal(0.0, 0.5, 200)
    hyper = pmp.NormalLinearRegressionMixture.default_hyperparameters(y, covariates=covariates)
    np.testing.assert_allclose(hyper["m0"], np.linalg.lstsq(covariates, y, rcond=None)[0], rtol=1e-4)
    assert hyper["b0"] == pytest.approx(0.125, rel=0.3) and hyper["a0"] == 1.5
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=200)
        pmp.NormalLinearRegressionMixture.with_default_priors("y", partition=z, covariates=covariates, observed=y, coarsening=20.0)
    assert sorted(rv.name for rv in model.free_RVs) == ["y_a0", "y_kappa0", "y_scale", "z"]
    assert pmp.distributions.mixtures.mixture_spec(model["y"]).zeta == pytest.approx(20.0 / 220.0)
    assert np.isfinite(model.compile_logp()(model.initial_point()))


def test_bad_input_names_the_argument():
    with pm.Model():
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=N_ITEMS)
        with pytest.raises(ValueError, match="covariates is required"):
            pmp.NormalLinearRegressionMixture("y", partition=z, observed=Y)
        with pytest.raises(ValueError, match="covariates must have one row per item"):
            pmp.NormalLinearRegressionMixture("y", partition=z, covariates=COVARIATES[:3], observed=Y)
        with pytest.raises(ValueError, match="observed must be the n responses"):
            pmp.NormalLinearRegressionMixture("y", partition=z, covariates=COVARIATES, observed=ROWS)
        with pytest.raises(ValueError, match="Lambda0"):
            pmp.NormalLinearRegressionMixture("y", partition=z, Lambda0=-np.eye(2), covariates=COVARIATES, observed=Y)
        with pytest.raises(ValueError, match="coarsening"):
            pmp.NormalLinearRegressionMixture("y", partition=z, covariates=COVARIATES, observed=Y, coarsening=-1.0)
