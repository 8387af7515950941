"""``NormalMixture``: its log density against scipy, the K_max restriction, draws, what steps read, bad input."""

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import pytest
from exact import normal_cluster_log_marginal
from scipy import integrate, stats

import pymc_partitions as pmp
from pymc_partitions.distributions.mixtures import mixture_spec
from pymc_partitions.families import NORMAL

RNG = np.random.default_rng(8)
X = RNG.normal(0.0, 2.0, (6, 2)) + 50.0  # far from 0: the centring keeps the sums of squares accurate
K_MAX = 4


def build(z=None, k_max=K_MAX, x=X):
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(x)) if z is None else z
        mu = pm.Normal("mu", mu=[50.0, 49.0], sigma=3.0, shape=(k_max, x.shape[1]))
        tau = pm.Gamma("tau", alpha=2.0, beta=[1.0, 0.5], shape=(k_max, x.shape[1]))
        pmp.NormalMixture("x", partition=z, mu=mu, tau=tau, observed=x)
    return model


def test_logp_is_the_sum_of_normal_log_densities():
    model = build()
    mu = RNG.normal(50.0, 1.0, (K_MAX, 2))
    tau = RNG.gamma(2.0, 1.0, (K_MAX, 2))
    z = np.array([0, 1, 0, 2, 1, 0], dtype=np.int32)
    logp = model.compile_logp(vars=[model["x"]])
    expected = stats.norm.logpdf(X, mu[z], 1 / np.sqrt(tau[z])).sum()
    assert logp({"z": z, "mu": mu, "tau_log__": np.log(tau)}) == pytest.approx(expected, rel=1e-12, abs=1e-9)


def test_more_clusters_than_k_max_have_log_density_minus_inf():
    model = build()
    logp = model.compile_logp()
    point = model.initial_point()
    assert np.isfinite(logp({**point, "z": np.array([0, 1, 2, 3, 0, 1], dtype=np.int32)}))
    assert logp({**point, "z": np.array([0, 1, 2, 3, 4, 1], dtype=np.int32)}) == -np.inf


def test_gradient_in_mu_and_tau():
    """Differentiable in the parameter rows (NUTS could move them): matches finite differences."""
    model = build()
    point = {**model.initial_point(), "z": np.array([0, 1, 0, 2, 1, 0], dtype=np.int32)}
    point["mu"] = RNG.normal(50.0, 1.0, (K_MAX, 2))
    logp = model.compile_logp()
    dlogp = model.compile_dlogp(vars=[model["mu"]])
    grad = dlogp(point).reshape(K_MAX, 2)
    eps = 1e-6
    for k, j in [(0, 0), (2, 1), (3, 0)]:  # row 3 is unused: only its prior moves
        shifted = {**point, "mu": point["mu"].copy()}
        shifted["mu"][k, j] += eps
        assert grad[k, j] == pytest.approx((logp(shifted) - logp(point)) / eps, rel=1e-3, abs=1e-4)


def test_quadrature_marginal_matches_integrating_the_model_density():
    """The exact-answer machinery (mu analytic, tau by quadrature) against a 2-D integral of the PyMC density."""
    x = X[:3, :1]
    with pm.Model() as model:
        mu = pm.Normal("mu", 49.0, 2.0, shape=(1, 1))
        tau = pm.Gamma("tau", 2.0, 1.5, shape=(1, 1))
        pmp.NormalMixture("x", partition=np.zeros(3, dtype=np.int64), mu=mu, tau=tau, observed=x)
    logp = model.compile_logp(jacobian=False)

    def density(log_tau, m):
        return np.exp(logp({"mu": np.array([[m]]), "tau_log__": np.array([[log_tau]])}) + log_tau)

    value, error = integrate.dblquad(density, 40.0, 60.0, -8.0, 4.0, epsabs=1e-13, epsrel=1e-9)
    expected = normal_cluster_log_marginal(x, np.array([49.0]), np.array([0.25]), np.array([2.0]), np.array([1.5]))
    assert np.log(value) == pytest.approx(expected, abs=1e-6)


def test_draws_given_the_partition_and_rows():
    z = np.array([0, 1, 0, 1, 1, 0])
    mu = np.array([[-3.0, 0.0], [4.0, 1.0]])
    tau = np.array([[1.0, 4.0], [0.25, 1.0]])
    x = pm.draw(pmp.NormalMixture.dist(partition=z, mu=mu, tau=tau, d=2), draws=4000, random_seed=1)
    np.testing.assert_allclose(x.mean(axis=0), mu[z], atol=4 * 2.0 / np.sqrt(4000))
    np.testing.assert_allclose(x.std(axis=0), 1 / np.sqrt(tau[z]), rtol=0.06)
    with pytest.raises(ValueError, match="at most K_max clusters"):
        pm.draw(pmp.NormalMixture.dist(partition=np.array([0, 1, 2, 0, 1, 2]), mu=mu, tau=tau, d=2), random_seed=1)


def test_spec_reads_the_priors_of_mu_and_tau():
    model = build()
    spec = mixture_spec(model["x"])
    assert spec.family == NORMAL and spec.d == 2
    assert [p.name for p in spec.parameters] == ["mu", "tau"]
    m, t, a, b, k_max = (np.asarray(h.eval()) for h in spec.hypers)
    np.testing.assert_allclose(m, [50.0, 49.0])
    np.testing.assert_allclose(t, [1 / 9, 1 / 9])
    np.testing.assert_allclose(a, [2.0, 2.0])
    np.testing.assert_allclose(b, [1.0, 0.5])
    assert int(k_max) == K_MAX


def test_hyperparameters_may_be_random_variables():
    """The prior of mu depends on a PyMC variable: the spec's hypers are graphs of it."""
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(X))
        center = pm.Normal("center", 50.0, 5.0)
        mu = pm.Normal("mu", mu=center, sigma=3.0, shape=(K_MAX, 2))
        tau = pm.Gamma("tau", alpha=2.0, beta=1.0, shape=(K_MAX, 2))
        pmp.NormalMixture("x", partition=z, mu=mu, tau=tau, observed=X)
    fn = model.compile_fn(model.replace_rvs_by_values([mixture_spec(model["x"]).hypers[0]]), inputs=model.value_vars, on_unused_input="ignore")
    np.testing.assert_allclose(fn({**model.initial_point(), "center": np.array(47.0)})[0], [47.0, 47.0])


@pytest.mark.parametrize(
    "mu_shape, tau_shape, match",
    [
        ((4, 3), (4, 3), r"mu must have shape \(K_max, 2\)"),
        ((4, 2), (3, 2), "same number of rows"),
        ((2,), (4, 2), r"mu must have shape \(K_max, 2\)"),
        ((0, 2), (0, 2), "at least one row"),
    ],
)
def test_bad_parameter_shapes(mu_shape, tau_shape, match):
    with pm.Model():
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(X))
        mu = pm.Normal("mu", 0.0, 1.0, shape=mu_shape)
        tau = pm.Gamma("tau", 1.0, 1.0, shape=tau_shape)
        with pytest.raises(ValueError, match=match):
            pmp.NormalMixture("x", partition=z, mu=mu, tau=tau, observed=X)


def test_bad_data_and_partition():
    with pm.Model():
        mu = pm.Normal("mu", 0.0, 1.0, shape=(3, 2))
        tau = pm.Gamma("tau", 1.0, 1.0, shape=(3, 2))
        bad = X.copy()
        bad[1, 1] = np.nan
        with pytest.raises(ValueError, match="NaN"):
            pmp.NormalMixture("x", partition=np.zeros(6, dtype=np.int64), mu=mu, tau=tau, observed=bad)
        with pytest.raises(ValueError, match="rows"):
            pmp.NormalMixture("y", partition=np.zeros(5, dtype=np.int64), mu=mu, tau=tau, observed=X)
        with pytest.raises(ValueError, match="observed is required"):
            pmp.NormalMixture("w", partition=np.zeros(6, dtype=np.int64), mu=mu, tau=tau)


def test_constant_rows_give_a_log_density():
    """mu and tau may be fixed arrays (a model of the data given known clusters); steps need random variables."""
    with pm.Model() as model:
        pmp.NormalMixture(
            "x", partition=pt.as_tensor(np.array([0, 0, 1, 1, 1, 0])), mu=np.full((2, 2), 50.0), tau=np.ones((2, 2)), observed=X
        )
    expected = stats.norm.logpdf(X, 50.0, 1.0).sum()
    assert model.compile_logp()({}) == pytest.approx(expected)
