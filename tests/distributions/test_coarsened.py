"""``distributions.coarsened``: ``pmp.Coarsened``'s log density is ``zeta = c / (c + n)`` times its distribution's
(scipy densities written here), its forward draws are the distribution's, and bad input is refused at construction."""

import arviz as az
import numpy as np
import pymc as pm
import pytest
from scipy import stats

import pymc_partitions as pmp

pytestmark = pytest.mark.pytensor_python  # a few small graphs, no NUTS: PyTensor without C (conftest.py)

N, K = 6, 3
RNG = np.random.default_rng(11)
X = RNG.normal(size=N)
Y = RNG.normal(size=N)
COUNTS = RNG.poisson(3.0, size=N)
PAIRS = RNG.normal(size=(N, 2))
COVARIANCE = np.array([[1.0, 0.3], [0.3, 0.5]])


def regression(z, coarsening):
    a = pm.Normal("a", 0.0, 2.0, shape=K)
    b = pm.Normal("b", 0.0, 2.0, shape=K)
    sigma = pm.HalfNormal("sigma", 1.0)
    return pmp.Coarsened("y", pm.Normal.dist(a[z] + b[z] * X, sigma), coarsening=coarsening, observed=Y)


def regression_reference(point, z):
    return stats.norm.logpdf(Y, point["a"][z] + point["b"][z] * X, np.exp(point["sigma_log__"]))


def poisson(z, coarsening):
    lam = pm.LogNormal("lam", 1.0, 1.0, shape=K)
    return pmp.Coarsened("y", pm.Poisson.dist(lam[z]), coarsening=coarsening, observed=COUNTS)


def poisson_reference(point, z):
    return stats.poisson.logpmf(COUNTS, np.exp(point["lam_log__"])[z])


def mvnormal_per_item(z, coarsening):
    mu = pm.Normal("mu", 0.0, 1.0, shape=(K, 2))
    return pmp.Coarsened("y", pm.MvNormal.dist(mu[z], COVARIANCE), coarsening=coarsening, observed=PAIRS)


def mvnormal_reference(point, z):
    return np.array([stats.multivariate_normal.logpdf(PAIRS[i], point["mu"][z[i]], COVARIANCE) for i in range(N)])


def two_features(z, coarsening):
    mu = pm.Normal("mu", 0.0, 1.0, shape=(K, 2))
    return pmp.Coarsened("y", pm.Normal.dist(mu[z], 0.8), coarsening=coarsening, observed=PAIRS)


def two_features_reference(point, z):
    return stats.norm.logpdf(PAIRS, point["mu"][z], 0.8)  # (N, 2): one term per item and feature


CASES = {
    "regression": (regression, regression_reference),
    "poisson": (poisson, poisson_reference),
    "mvnormal_per_item": (mvnormal_per_item, mvnormal_reference),
    "two_features": (two_features, two_features_reference),
}


@pytest.mark.parametrize("coarsening", [None, 2.0, 40.0])
@pytest.mark.parametrize("name", list(CASES))
def test_log_density_is_zeta_times_the_distributions(name, coarsening):
    """Element by element, ``log p_c = zeta log f`` with ``zeta = c / (c + n)``, ``n = 6`` items (``None``: ``f``'s)."""
    build, reference = CASES[name]
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=N)
        observed = build(z, coarsening)
    point = model.initial_point()
    for rv in model.free_RVs[1:]:
        value = model.rvs_to_values[rv]
        point[value.name] = RNG.normal(size=point[value.name].shape)
    labels = np.array([0, 1, 0, 2, 1, 1])
    point["z"] = labels.astype(point["z"].dtype)
    zeta = 1.0 if coarsening is None else coarsening / (coarsening + N)
    (terms,) = model.compile_logp(vars=[observed], sum=False)(point)
    np.testing.assert_allclose(terms, zeta * reference(point, labels), rtol=1e-8)


def test_posterior_predictive_draws_come_from_the_distribution():
    """``pm.sample_posterior_predictive`` draws ``y_i ~ N(mu[z_i], 0.5)``, the likelihood itself, not its tempered
    form ``N(mu[z_i], 0.5 / sqrt(zeta))`` (``zeta = 1/7`` here): standardised, the draws are ``N(0, 1)``."""
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=N)
        mu = pm.Normal("mu", 0.0, 3.0, shape=K)
        pmp.Coarsened("y", pm.Normal.dist(mu[z], 0.5), coarsening=1.0, observed=Y)
    draws = 500
    labels = RNG.integers(K, size=(1, draws, N))
    rows = RNG.normal(0.0, 3.0, size=(1, draws, K))
    idata = az.from_dict(posterior={"z": labels, "mu": rows})
    with model:
        predictive = pm.sample_posterior_predictive(idata, random_seed=3, progressbar=False)
    y = predictive.posterior_predictive["y"].values
    assert y.shape == (1, draws, N)
    standardised = (y - np.take_along_axis(rows, labels, axis=-1)) / 0.5
    assert stats.kstest(standardised.ravel(), "norm").pvalue > 1e-3


@pytest.mark.parametrize("coarsening, error", [(0, ValueError), (-1.0, ValueError), (np.inf, ValueError),
                                               (np.nan, ValueError), ("2", TypeError), (True, TypeError)])
def test_bad_coarsening_is_refused(coarsening, error):
    with pm.Model():
        with pytest.raises(error, match="coarsening must be None"):
            pmp.Coarsened("y", pm.Normal.dist(np.zeros(N)), coarsening=coarsening, observed=Y)


def test_what_is_not_a_coarsened_likelihood_is_refused():
    with pm.Model():
        with pytest.raises(TypeError, match=r"dist must be a distribution created with the \.dist\(\) API"):
            pmp.Coarsened("y", np.zeros(N), coarsening=2.0, observed=Y)
        registered = pm.Normal("registered", 0.0, 1.0, shape=N)
        with pytest.raises(ValueError, match="already registered"):
            pmp.Coarsened("y", registered, coarsening=2.0, observed=Y)
        with pytest.raises(ValueError, match="needs observed="):
            pmp.Coarsened("w", pm.Normal.dist(np.zeros(N)), coarsening=2.0)
        with pytest.raises(ValueError, match="must be a batch axis"):
            pmp.Coarsened("v", pm.MvNormal.dist(np.zeros(N), np.eye(N)), coarsening=2.0, observed=Y)
