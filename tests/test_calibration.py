"""``calibrate_coarsening``: the elbow rule, the fit measure against closed forms, and a short end-to-end run."""

import arviz as az
import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pymc as pm
import pytest
from scipy import stats
from scipy.special import digamma

import pymc_partitions as pmp
from pymc_partitions.calibration import elbow, expected_log_likelihood

matplotlib.use("Agg")


def test_elbow_rule():
    values = np.array([1.0, 10.0, 100.0, 1000.0, 10000.0])
    assert elbow(values, [0.0, 80.0, 95.0, 98.0, 100.0]) == 1  # steep, then level: the bend
    assert elbow(values[::-1], [100.0, 98.0, 95.0, 80.0, 0.0]) == 3  # the same curve given in decreasing order
    assert elbow(values, [0.0, 1.0, 2.0, 3.0, 4.0]) == 4  # straight in log c: no elbow, the largest c
    assert elbow(values, [0.0, 1.0, 3.0, 10.0, 40.0]) == 4  # convex: still rising fastest at the end
    assert elbow(values, [5.0, 4.0, 3.0, 2.0, 1.0]) == 4  # a fit that does not rise
    assert elbow(values[:2], [0.0, 1.0]) == 1


X = np.array([[-2.1], [-1.7], [-2.4], [1.9], [2.3], [2.0], [1.6]])
MU0, KAPPA0, A0, B0 = 0.0, 0.5, 2.0, 1.5


def normal_gamma_model(coarsening):
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(X))
        pmp.NormalGammaMixture("x", partition=z, mu0=MU0, kappa0=KAPPA0, a0=A0, b0=B0, observed=X, coarsening=coarsening)
    return model


@pytest.mark.parametrize("coarsening", [None, 3.0])
def test_expected_log_likelihood_is_the_posterior_mean(coarsening):
    """E[Σ_i log N(x_i | μ_k, 1/λ_k)] under the (coarsened) Normal-Gamma posterior of each cluster, in closed form:
    ½ (ψ(a_n) − log b_n − log 2π) − ½ [a_n/b_n (x − μ_n)² + 1/κ_n] per item."""
    zeta = 1.0 if coarsening is None else coarsening / (coarsening + len(X))
    z = np.array([0, 0, 0, 1, 1, 1, 1])
    expected = 0.0
    for label in (0, 1):
        x = X[z == label, 0]
        n = zeta * len(x)
        kappa_n, a_n = KAPPA0 + n, A0 + n / 2
        mu_n = (KAPPA0 * MU0 + zeta * x.sum()) / kappa_n
        b_n = B0 + 0.5 * zeta * ((x - x.mean()) ** 2).sum() + KAPPA0 * n * (x.mean() - MU0) ** 2 / (2 * kappa_n)
        expected += np.sum(0.5 * (digamma(a_n) - np.log(b_n) - np.log(2 * np.pi)) - 0.5 * (a_n / b_n * (x - mu_n) ** 2 + 1 / kappa_n))
    idata = az.from_dict(posterior={"z": np.tile(z, (1, 4000, 1))})
    values = expected_log_likelihood(idata, normal_gamma_model(coarsening), n_draws=4000, random_seed=0)
    assert abs(values.mean() - expected) < 4.5 * values.std() / np.sqrt(len(values))


def test_calibration_runs_and_reports_every_value():
    rng = np.random.default_rng(0)
    data = np.concatenate([rng.normal(-3.0, 1.0, (25, 1)), rng.standard_t(3, (25, 1)) + 3.0])

    def build(c):
        with pm.Model() as model:
            z = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(data))
            pmp.NormalGammaMixture("x", partition=z, observed=data, coarsening=c, **pmp.NormalGammaMixture.default_hyperparameters(data))
        return model

    result = pmp.calibrate_coarsening(build, values=[100.0, 1.0, 10.0], draws=150, tune=100, random_seed=1)
    assert list(result.table["c"]) == [1.0, 10.0, 100.0]
    np.testing.assert_allclose(result.table["zeta"], [1 / 51, 10 / 60, 100 / 150])
    assert result.value in (1.0, 10.0, 100.0) and set(result.idata) == {1.0, 10.0, 100.0}
    assert result.table["fit"].iloc[-1] > result.table["fit"].iloc[0]  # the ordinary posterior fits better
    ax = result.plot(ax=plt.subplots()[1])
    assert ax.get_xscale() == "log" and hasattr(ax, "twin")


NETWORK = np.zeros((8, 8))
for i, j in [(0, 1), (0, 2), (1, 2), (2, 3), (0, 3), (4, 5), (5, 6), (6, 7), (4, 7), (3, 4)]:
    NETWORK[i, j] = NETWORK[j, i] = 1.0


def network_model(coarsening):
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(NETWORK))
        pmp.InfiniteRelationalModel("A", partition=z, a=1.5, b=2.0, coarsening=coarsening, observed=NETWORK)
    return model


@pytest.mark.parametrize("coarsening", [None, 5.0])
def test_expected_log_likelihood_of_a_network(coarsening):
    """IRM: E[Σ_{k≤l} N+ log θ + N- log(1 − θ)] under each block's (coarsened) Beta conditional, in closed form
    (E log θ = ψ(α) − ψ(α + β)), with ``zeta`` from the vertex pairs: c / (c + 28)."""
    zeta = 1.0 if coarsening is None else coarsening / (coarsening + 28)
    z = np.array([0, 0, 0, 0, 1, 1, 1, 2])
    expected = 0.0
    for k in range(3):
        for m in range(k, 3):
            block = NETWORK[np.ix_(z == k, z == m)]
            present = block.sum() / (2 if k == m else 1)
            pairs = (z == k).sum() * ((z == m).sum() - (k == m)) / (2 if k == m else 1)
            alpha, beta = 1.5 + zeta * present, 2.0 + zeta * (pairs - present)
            expected += present * (digamma(alpha) - digamma(alpha + beta)) + (pairs - present) * (digamma(beta) - digamma(alpha + beta))
    idata = az.from_dict(posterior={"z": np.tile(z, (1, 4000, 1))})
    values = expected_log_likelihood(idata, network_model(coarsening), n_draws=4000, coarsened_parameters=True, random_seed=0)
    assert abs(values.mean() - expected) < 4.5 * values.std() / np.sqrt(len(values))


def test_calibration_of_a_network():
    """``calibrate_coarsening`` on the IRM: ``zeta`` counts the vertex pairs, and the ordinary posterior fits best."""
    result = pmp.calibrate_coarsening(network_model, values=[0.5, 100.0], draws=100, tune=50, random_seed=3)
    np.testing.assert_allclose(result.table["zeta"], [0.5 / 28.5, 100 / 128])
    assert result.table["fit"].iloc[1] > result.table["fit"].iloc[0]


Y = np.array([-2.1, -1.7, -2.6, 3.2, 2.8, 3.9, 3.1, 2.2])
K_MAX = 4


def component_model(coarsening, second=False):
    """Normal components written in plain PyMC (README, "Your own cluster model"), coarsened by ``pmp.Coarsened``;
    ``second``: the coarsening of a second observed variable (the same items' ``Y / 2``; ``False``: none)."""
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(Y))
        mu = pm.Normal("mu", 0.0, 5.0, shape=K_MAX)
        sigma = pm.HalfNormal("sigma", 2.0, shape=K_MAX)
        pmp.Coarsened("y", pm.Normal.dist(mu[z], sigma[z]), coarsening=coarsening, observed=Y)
        if second is not False:
            pmp.Coarsened("half", pm.Normal.dist(mu[z] / 2, sigma[z]), coarsening=second, observed=Y / 2)
    return model


@pytest.mark.parametrize("coarsening", [None, 3.0])
def test_expected_log_likelihood_of_a_component_model_is_the_ordinary_likelihood(coarsening):
    """A component model's fit at each draw is Σ_i log N(y_i | μ_{z_i}, σ_{z_i}) from the trace (scipy), whatever
    the coarsening; with a second observed variable, the sum over both (or ``var_name``'s alone)."""
    rng = np.random.default_rng(4)
    draws = {"z": rng.integers(0, K_MAX, (2, 30, len(Y))), "mu": rng.normal(0.0, 3.0, (2, 30, K_MAX)),
             "sigma": rng.uniform(0.5, 2.0, (2, 30, K_MAX))}
    idata = az.from_dict(posterior=draws)
    pooled = {name: value.reshape(60, *value.shape[2:]) for name, value in draws.items()}
    rows = np.arange(60)[:, None]

    def ordinary(y, scale):
        return stats.norm.logpdf(y, pooled["mu"][rows, pooled["z"]] * scale, pooled["sigma"][rows, pooled["z"]]).sum(axis=1)

    values = expected_log_likelihood(idata, component_model(coarsening), n_draws=60, random_seed=0)
    np.testing.assert_allclose(values, ordinary(Y, 1.0), rtol=1e-10)  # every pooled draw, in order
    both = component_model(coarsening, second=coarsening)
    np.testing.assert_allclose(expected_log_likelihood(idata, both, n_draws=60), ordinary(Y, 1.0) + ordinary(Y / 2, 0.5), rtol=1e-10)
    np.testing.assert_allclose(expected_log_likelihood(idata, both, var_name="half", n_draws=60), ordinary(Y / 2, 0.5), rtol=1e-10)
    with pytest.raises(ValueError, match="var_name 'x' is not an observed variable"):
        expected_log_likelihood(idata, both, var_name="x")


def test_calibration_of_a_component_model():
    """``calibrate_coarsening`` on a likelihood written in PyMC: ``pm.sample``'s own assignment (``GibbsStep`` on
    ``z``, NUTS on the rows), ``zeta`` from ``pmp.Coarsened``'s ``c``; the ordinary posterior fits best."""
    result = pmp.calibrate_coarsening(component_model, values=[0.5, 50.0], draws=100, tune=100, random_seed=2)
    np.testing.assert_allclose(result.table["zeta"], [0.5 / 8.5, 50 / 58])
    assert result.value in (0.5, 50.0)
    assert result.table["fit"].iloc[1] > result.table["fit"].iloc[0]
    assert np.all(result.table["n_clusters"] >= 1.0)
    with pytest.raises(ValueError, match="different powers"):
        pmp.calibrate_coarsening(lambda c: component_model(c, second=2 * c), values=[1.0])


def test_bad_input():
    with pytest.raises(TypeError, match="build_model"):
        pmp.calibrate_coarsening("not a function")
    with pytest.raises(ValueError, match="values"):
        pmp.calibrate_coarsening(normal_gamma_model, values=[1.0, -2.0])
    with pytest.raises(TypeError, match="must return a pm.Model"):
        pmp.calibrate_coarsening(lambda c: None, values=[1.0])
