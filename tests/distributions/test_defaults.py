"""Data-based default hyperparameters of the observation models (``default_hyperparameters``).

The values are checked against the formulas of ``distributions/defaults.py``
computed here directly, the Gaussian defaults against the properties they are
chosen for (prior mean of a cluster's covariance = the data's covariance;
results invariant to shifting and rescaling features), and every model is
built and evaluated with them.
"""

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import pytest

import pymc_partitions as pmp

pytestmark = pytest.mark.pytensor_python  # PyTensor without C: conftest.py

rng = np.random.default_rng(11)
GAUSS = rng.normal(size=(12, 3)) @ np.array([[2.0, 0.5, 0.0], [0.0, 1.0, 0.3], [0.0, 0.0, 0.2]]) + [5.0, -1.0, 0.0]
BINARY = (rng.random((12, 4)) < [0.1, 0.5, 0.9, 0.0]).astype(int)
COUNTS = rng.poisson([0.5, 3.0, 0.0], size=(12, 3))
ADJACENCY = np.triu(rng.random((8, 8)) < 0.3, 1).astype(int)
ADJACENCY = ADJACENCY + ADJACENCY.T
Z_A = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3])
Z_B = np.array([0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1])


def test_normal_inverse_wishart_defaults_centre_the_prior_on_the_data():
    hyper = pmp.NormalInverseWishartMixture.default_hyperparameters(GAUSS)
    d = GAUSS.shape[1]
    np.testing.assert_allclose(hyper["mu0"], GAUSS.mean(0))
    assert hyper["kappa0"] == 0.1 and hyper["nu0"] == d + 2
    # the prior mean of a cluster's covariance, Psi0 / (nu0 - d - 1), is the sample covariance
    np.testing.assert_allclose(hyper["Psi0"] / (hyper["nu0"] - d - 1), np.cov(GAUSS, rowvar=False), rtol=1e-5)


def test_normal_gamma_defaults_match_the_one_feature_inverse_wishart():
    hyper = pmp.NormalGammaMixture.default_hyperparameters(GAUSS)
    np.testing.assert_allclose(hyper["mu0"], GAUSS.mean(0))
    np.testing.assert_allclose(hyper["kappa0"], 0.1)
    np.testing.assert_allclose(hyper["a0"], 1.5)
    # E[1 / lambda] = b0 / (a0 - 1) is each feature's sample variance
    np.testing.assert_allclose(hyper["b0"] / (hyper["a0"] - 1.0), GAUSS.var(0, ddof=1), rtol=1e-5)


def test_discrete_defaults_follow_the_smoothed_frequencies():
    n = BINARY.shape[0]
    bb = pmp.BetaBernoulliMixture.default_hyperparameters(BINARY)
    p = (BINARY.sum(0) + 1.0) / (n + 2.0)
    np.testing.assert_allclose(bb["a"], 2 * p)
    np.testing.assert_allclose(bb["b"], 2 * (1 - p))
    assert np.all(bb["a"] > 0) and np.all(bb["b"] > 0)  # the all-zero feature stays inside the support
    half = pmp.BetaBernoulliMixture.default_hyperparameters(np.array([[0], [1]]))
    np.testing.assert_allclose([half["a"][0], half["b"][0]], [1.0, 1.0])  # p = 1/2: the uniform Beta(1, 1)

    gp = pmp.GammaPoissonMixture.default_hyperparameters(COUNTS)
    np.testing.assert_allclose(gp["a"], 1.0)
    np.testing.assert_allclose(gp["a"] / gp["b"], np.maximum(COUNTS.mean(0), 1.0 / n))  # prior mean rate

    dm = pmp.DirichletMultinomialMixture.default_hyperparameters(COUNTS)
    np.testing.assert_allclose(dm["beta"].sum(), COUNTS.shape[1])
    np.testing.assert_allclose(dm["beta"], 3 * (COUNTS.sum(0) + 1) / (COUNTS.sum() + 3))

    irm = pmp.InfiniteRelationalModel.default_hyperparameters(ADJACENCY)
    density = (ADJACENCY.sum() / 2 + 1) / (8 * 7 / 2 + 2)
    assert irm == pytest.approx({"a": 2 * density, "b": 2 * (1 - density)})


def _log_marginal(cls, X, z, **hyper):
    with pm.Model() as model:
        cls("x", partition=pt.as_tensor(z), observed=X, **hyper)
    return float(model.compile_logp()({}))


@pytest.mark.parametrize(
    "cls, data",
    [
        (pmp.NormalInverseWishartMixture, GAUSS),
        (pmp.NormalGammaMixture, GAUSS),
        (pmp.BetaBernoulliMixture, BINARY),
        (pmp.GammaPoissonMixture, COUNTS),
        (pmp.DirichletMultinomialMixture, COUNTS),
    ],
)
def test_every_model_builds_with_its_defaults(cls, data):
    hyper = cls.default_hyperparameters(data)
    assert np.isfinite(_log_marginal(cls, data, Z_A, **hyper))


def test_irm_builds_with_its_defaults():
    hyper = pmp.InfiniteRelationalModel.default_hyperparameters(ADJACENCY)
    assert np.isfinite(_log_marginal(pmp.InfiniteRelationalModel, ADJACENCY, np.array([0, 0, 1, 1, 2, 2, 0, 1]), **hyper))


@pytest.mark.parametrize("cls", [pmp.NormalInverseWishartMixture, pmp.NormalGammaMixture])
def test_gaussian_defaults_make_partitions_compare_alike_after_shifting_and_scaling(cls):
    """log p(X | z_a) - log p(X | z_b) does not change when features are shifted and rescaled."""
    transformed = GAUSS * [1000.0, 0.01, 3.0] + [-40.0, 7.0, 1e3]

    def contrast(X):
        hyper = cls.default_hyperparameters(X)
        return _log_marginal(cls, X, Z_A, **hyper) - _log_marginal(cls, X, Z_B, **hyper)

    assert contrast(transformed) == pytest.approx(contrast(GAUSS), abs=1e-6)


@pytest.mark.parametrize(
    "cls, data, match",
    [
        (pmp.NormalGammaMixture, [[0.0, np.nan]], "observed contains NaN"),
        (pmp.BetaBernoulliMixture, [[0, 2]], "only 0 and 1"),
        (pmp.GammaPoissonMixture, [[0.5]], "non-negative integer counts"),
        (pmp.InfiniteRelationalModel, [[0, 1], [0, 0]], "symmetric"),
    ],
)
def test_defaults_validate_the_data(cls, data, match):
    with pytest.raises(ValueError, match=match):
        cls.default_hyperparameters(np.array(data))
