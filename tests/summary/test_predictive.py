"""Tests for pymc_partitions.summary.predictive: replicated data sets from the posterior predictive.

The posteriors here are written by hand (``az.from_dict``): every draw of the
partition is the true one, so the exact posterior predictive of each cluster
is the conjugate one and the replicates can be checked against closed forms.
Monte-Carlo tolerances are Z_MAX standard errors of the statistic, computed
exactly from the model.
"""

import arviz as az
import numpy as np
import pymc as pm
import pytest

import pymc_partitions as pmp
from pymc_partitions.summary import posterior_predictive

pytestmark = pytest.mark.pytensor_python  # PyTensor without C: conftest.py

TRUTH = np.repeat([0, 1, 2], [6, 10, 4])
N = TRUTH.size
Z_MAX = 4.0  # two-sided normal tail 6e-5 per statistic; a test checks at most 12 of them


def posterior_at(labels, draws, chains=1, **values):
    """A posterior whose every draw of ``z`` is ``labels``, with other variables' draws from ``values``."""
    z = np.tile(np.asarray(labels), (chains, draws, 1))
    return az.from_dict(posterior={"z": z, **values})


def mixture_model(cls, X, **hyper):
    """A DP partition of the rows of ``X`` and the observation model ``cls`` named ``x``."""
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(X))
        cls("x", partition=z, observed=X, **hyper)
    return model


def example_data(cls, rng):
    """Small data for each observation model: three groups of TRUTH, two or three features."""
    centre = np.array([0.0, 4.0, 9.0])[TRUTH]
    if cls is pmp.BetaBernoulliMixture:
        return (rng.random((N, 3)) < np.array([0.1, 0.5, 0.9])[TRUTH][:, None]).astype(int)
    if cls in (pmp.NormalGammaMixture, pmp.NormalInverseWishartMixture):
        return rng.normal(centre[:, None], 1.0, size=(N, 2))
    return rng.poisson(1.0 + centre[:, None], size=(N, 3))


CONJUGATE = [
    pmp.BetaBernoulliMixture,
    pmp.NormalGammaMixture,
    pmp.NormalInverseWishartMixture,
    pmp.DirichletMultinomialMixture,
    pmp.GammaPoissonMixture,
]


@pytest.mark.parametrize("cls", CONJUGATE, ids=lambda c: c.__name__)
def test_replicates_have_the_data_shape_and_the_draws_asked(cls):
    X = example_data(cls, np.random.default_rng(1))
    model = mixture_model(cls, X, **cls.default_hyperparameters(X))
    idata = posterior_at(TRUTH, draws=4, chains=2)
    reps = posterior_predictive(idata, model, n_draws=3, random_seed=5)
    assert reps.shape == (3, N, X.shape[1]) and reps.dtype == np.float64
    assert np.all(np.isfinite(reps))
    np.testing.assert_array_equal(reps, posterior_predictive(idata, model, n_draws=3, random_seed=5))
    assert posterior_predictive(idata, model, random_seed=0).shape == (8, N, X.shape[1])  # all 8 < DEFAULT_DRAWS
    items = [17, 2]
    subset = posterior_predictive(idata, model, n_draws=2, items=items, random_seed=5)
    assert subset.shape == (2, 2, X.shape[1])
    if cls is not pmp.NormalGammaMixture and cls is not pmp.NormalInverseWishartMixture:
        assert np.all(reps == np.round(reps)) and np.all(reps >= 0)
    if cls is pmp.BetaBernoulliMixture:
        assert set(np.unique(reps)) <= {0.0, 1.0}
    if cls is pmp.DirichletMultinomialMixture:  # the model conditions on each document's length
        np.testing.assert_array_equal(reps.sum(axis=2), np.tile(X.sum(axis=1), (3, 1)))
        np.testing.assert_array_equal(subset.sum(axis=2), np.tile(X[items].sum(axis=1), (2, 1)))


def test_beta_bernoulli_replicates_have_the_posterior_predictive_means():
    """E[x_rep_ij] = (a + s_kj) / (a + b + m_k) for i in cluster k: the Beta posterior's mean.

    The statistic is the mean over S draws and the m_k items of cluster k; its
    variance is (Var θ + E[θ(1 − θ)] / m_k) / S with θ ~ Beta(α, β) (the items
    of one draw share θ), Var θ = αβ/((α+β)²(α+β+1)), E θ(1−θ) = αβ/((α+β)(α+β+1)).
    """
    X = example_data(pmp.BetaBernoulliMixture, np.random.default_rng(2))
    a, b, draws = 0.5, 1.5, 400
    model = mixture_model(pmp.BetaBernoulliMixture, X, a=a, b=b)
    reps = posterior_predictive(posterior_at(TRUTH, draws), model, n_draws=draws, random_seed=3)
    for k in range(3):
        members = TRUTH == k
        m = members.sum()
        alpha, beta = a + X[members].sum(axis=0), b + m - X[members].sum(axis=0)
        total = alpha + beta
        variance = (alpha * beta / (total**2 * (total + 1)) + alpha * beta / (total * (total + 1)) / m) / draws
        z = (reps[:, members].mean(axis=(0, 1)) - alpha / total) / np.sqrt(variance)
        assert np.all(np.abs(z) < Z_MAX), z


def normal_gamma_posterior(x, mu0, kappa0, a0, b0):
    """Murphy (2007) posterior (κ_n, μ_n, a_n, b_n) of one cluster's items ``x`` (m, d), per feature."""
    m, mean = len(x), x.mean(axis=0)
    kappa_n = kappa0 + m
    b_n = b0 + 0.5 * ((x - mean) ** 2).sum(axis=0) + kappa0 * m * (mean - mu0) ** 2 / (2 * kappa_n)
    return kappa_n, (kappa0 * mu0 + m * mean) / kappa_n, a0 + 0.5 * m, b_n


def test_normal_gamma_replicated_marginals_match_the_observed_ones():
    """All the posterior mass on the true partition, weak priors: the data fix each cluster's replicates.

    Per feature, M = the replicate's mean over items has, with (κ_n, μ_n, a_n, b_n)
    each cluster's posterior, E[M] = Σ_k (m_k/n) μ_nk and
    Var[M] = Σ_k (m_k/n)² E[1/λ_k] (1/κ_nk + 1/m_k), E[1/λ] = b_n/(a_n − 1)
    (μ_k and the items' mean noise are independent given λ_k).  With
    κ0 = 0.01, E[M] is the observed mean up to a shrinkage below 1e-3
    (checked), so the replicated means match the data's within Z_MAX sd.
    Per cluster, V = the replicate's within-cluster sample variance has
    E[V] = E[1/λ] and Var[V] = E[1/λ²](2/(m−1) + 1) − E[1/λ]²,
    E[1/λ²] = b_n²/((a_n − 1)(a_n − 2)).
    """
    X = example_data(pmp.NormalGammaMixture, np.random.default_rng(4))
    hyper = {"mu0": X.mean(axis=0), "kappa0": 0.01, "a0": 1.0, "b0": 0.05}
    draws = 300
    model = mixture_model(pmp.NormalGammaMixture, X, **hyper)
    reps = posterior_predictive(posterior_at(TRUTH, draws), model, n_draws=draws, random_seed=6)
    expected_mean, mean_variance = 0.0, 0.0
    for k in range(3):
        members = TRUTH == k
        m = members.sum()
        kappa_n, mu_n, a_n, b_n = normal_gamma_posterior(X[members], **hyper)
        inverse_precision = b_n / (a_n - 1)
        expected_mean = expected_mean + m / N * mu_n
        mean_variance = mean_variance + (m / N) ** 2 * inverse_precision * (1 / kappa_n + 1 / m)
        within = reps[:, members].var(axis=1, ddof=1)  # (draws, d)
        second = b_n**2 / ((a_n - 1) * (a_n - 2))
        variance_variance = (second * (2 / (m - 1) + 1) - inverse_precision**2) / draws
        z = (within.mean(axis=0) - inverse_precision) / np.sqrt(variance_variance)
        assert np.all(np.abs(z) < Z_MAX), (k, z)
    shrinkage = np.abs(expected_mean - X.mean(axis=0))
    assert np.all(shrinkage < 1e-3)
    tolerance = Z_MAX * np.sqrt(mean_variance / draws) + shrinkage
    assert np.all(np.abs(reps.mean(axis=(0, 1)) - X.mean(axis=0)) < tolerance)


def test_replicates_of_data_far_from_zero_keep_their_spread():
    """Data at 1e8 with unit spread: each cluster's replicates have their exact mean μ_n and variance E[1/λ] = b_n/(a_n − 1).

    b_n computed from raw sums Σx² − (Σx)²/m would be lost to cancellation
    (Σx² ≈ m·1e16, rounding ≈ m·2); the replicates use the kernels' origin.
    The reference is computed on the centred data; Z_MAX standard errors as
    in the test above.
    """
    X = 1e8 + example_data(pmp.NormalGammaMixture, np.random.default_rng(14))
    centred = X - X.mean(axis=0)
    hyper = {"mu0": X.mean(axis=0), "kappa0": 0.01, "a0": 1.0, "b0": 0.05}
    draws = 200
    model = mixture_model(pmp.NormalGammaMixture, X, **hyper)
    reps = posterior_predictive(posterior_at(TRUTH, draws), model, n_draws=draws, random_seed=15)
    for k in range(3):
        members = TRUTH == k
        m = members.sum()
        _, mu_n, a_n, b_n = normal_gamma_posterior(centred[members], 0.0, hyper["kappa0"], hyper["a0"], hyper["b0"])
        inverse_precision = b_n / (a_n - 1)
        second = b_n**2 / ((a_n - 1) * (a_n - 2))
        se = np.sqrt((second * (2 / (m - 1) + 1) - inverse_precision**2) / draws)
        within = (reps[:, members] - X.mean(axis=0)).var(axis=1, ddof=1)
        assert np.all(np.abs(within.mean(axis=0) - inverse_precision) < Z_MAX * se), (k, within.mean(axis=0), inverse_precision)
        kappa_n = hyper["kappa0"] + m
        mean_se = np.sqrt(inverse_precision * (1 / kappa_n + 1 / m) / draws)  # as Var[M] above, one cluster
        assert np.all(np.abs(reps[:, members].mean(axis=(0, 1)) - X.mean(axis=0) - mu_n) < Z_MAX * mean_se)


def test_hyperparameters_are_read_from_each_posterior_draw():
    """b = 1/a with a random: a = 1e8 makes every θ ≈ 1 (all ones), a = 1e-8 every θ ≈ 0 (all zeros).

    P(a replicate entry differs) ≤ (b + m)/(a + b + m) ≈ 2e-7 for 60 entries per draw.
    """
    X = example_data(pmp.BetaBernoulliMixture, np.random.default_rng(7))
    with pm.Model() as model:
        a = pm.Gamma("a", 1.0, 1.0)
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=N)
        pmp.BetaBernoulliMixture("x", partition=z, a=a, b=1.0 / a, observed=X)
    idata = posterior_at(TRUTH, draws=2, a=np.array([[1e8, 1e-8]]))
    with model:  # the model in context
        reps = posterior_predictive(idata, n_draws=2, random_seed=8)
    assert np.all(reps[0] == 1.0) and np.all(reps[1] == 0.0)


def test_a_fixed_partition_and_fixed_hyperparameters_need_no_posterior_variable():
    """Labels given as a constant: every draw replicates the same clusters.

    θ ~ Beta(6 + 1e-9, 1e-9) in cluster 0 and Beta(1e-9, m + 1e-9) elsewhere: P(a replicate differs from X) < 1e-8.
    """
    X = np.zeros((N, 2), dtype=int)
    X[TRUTH == 0] = 1
    with pm.Model() as model:
        alpha = pm.Gamma("alpha", 1.0, 1.0)  # in the posterior, but not an input of the observation model
        pmp.BetaBernoulliMixture("x", partition=pm.math.constant(TRUTH), a=1e-9, b=1e-9, observed=X)
    idata = az.from_dict(posterior={"alpha": np.ones((2, 3))})
    reps = posterior_predictive(idata, model, random_seed=0)
    assert reps.shape == (6, N, 2)  # all 2 x 3 draws
    np.testing.assert_array_equal(reps, np.broadcast_to(X, reps.shape))


def test_normal_mixture_replicates_use_the_posterior_cluster_parameters():
    """x_rep_i ~ N(mu[z_i], 1/tau[z_i]) with the draw's mu and tau: tau = 1e6, so within 5e-3 of mu."""
    X = example_data(pmp.NormalGammaMixture, np.random.default_rng(9))
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=N)
        mu = pm.Normal("mu", 0.0, 10.0, shape=(4, 2))
        tau = pm.Gamma("tau", 2.0, 2.0, shape=(4, 2))
        pmp.NormalMixture("x", partition=z, mu=mu, tau=tau, observed=X)
    mu_draws = np.arange(3 * 8, dtype=float).reshape(1, 3, 4, 2)
    idata = posterior_at(TRUTH, draws=3, mu=mu_draws, tau=np.full((1, 3, 4, 2), 1e6))
    reps = posterior_predictive(idata, model, n_draws=3, random_seed=10)
    np.testing.assert_allclose(reps, mu_draws[0][:, TRUTH], atol=5e-3)


def test_posterior_predictive_of_a_sampled_trace():
    """End to end: a short pm.sample run with random alpha and kappa0 gives replicates of the data's shape."""
    X = example_data(pmp.NormalGammaMixture, np.random.default_rng(11))
    with pm.Model() as model:
        alpha = pm.Gamma("alpha", 2.0, 2.0)
        kappa0 = pm.Gamma("kappa0", 2.0, 20.0)
        z = pmp.DirichletProcessPartition("z", alpha=alpha, n=N)
        pmp.NormalGammaMixture("x", partition=z, mu0=4.0, kappa0=kappa0, a0=2.0, b0=2.0, observed=X)
        idata = pm.sample(
            step=[pmp.GibbsStep(z), pm.Slice([alpha, kappa0])], draws=20, tune=10, chains=1, cores=1,
            random_seed=12, progressbar=False, compute_convergence_checks=False,
        )
    reps = posterior_predictive(idata, model, n_draws=10, random_seed=13)
    assert reps.shape == (10, N, 2) and np.all(np.isfinite(reps))


def bad_input_cases():
    X = example_data(pmp.NormalGammaMixture, np.random.default_rng(0))
    model = mixture_model(pmp.NormalGammaMixture, X)
    good = posterior_at(TRUTH, draws=3)
    with pm.Model() as network:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=4)
        A = np.array([[0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 1], [0, 0, 1, 0]])
        pmp.InfiniteRelationalModel("A", partition=z, a=1.0, b=1.0, observed=A)
    with pm.Model() as two:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=N)
        pmp.NormalGammaMixture("x", partition=z, observed=X)
        pmp.NormalGammaMixture("y", partition=z, observed=X)
    return [
        ("not idata", lambda: posterior_predictive(X, model), TypeError, "idata must be"),
        ("no posterior", lambda: posterior_predictive(az.from_dict(sample_stats={"s": np.ones((1, 3))}), model), ValueError, "'posterior' group"),
        ("no z", lambda: posterior_predictive(az.from_dict(posterior={"alpha": np.ones((1, 3))}), model), ValueError, "draws of 'z'"),
        ("z of another model", lambda: posterior_predictive(posterior_at(TRUTH[:7], 3), model), ValueError, "does not come from this model"),
        ("no model", lambda: posterior_predictive(good), TypeError, "needs the model: pass model="),
        ("model not a model", lambda: posterior_predictive(good, "m"), TypeError, "model must be a pm.Model"),
        ("unknown var_name", lambda: posterior_predictive(good, model, var_name="y"), ValueError, r"var_name 'y' is not .* \['x'\]"),
        ("partition as var_name", lambda: posterior_predictive(good, model, var_name="z"), ValueError, "names the observed variable"),
        ("var_name not a string", lambda: posterior_predictive(good, model, var_name=1), TypeError, "var_name must be"),
        ("two observation models", lambda: posterior_predictive(good, two), ValueError, "choose one with var_name="),
        ("network", lambda: posterior_predictive(posterior_at([0, 0, 1, 1], 2), network), TypeError, "InfiniteRelationalModel.*plot_adjacency"),
        ("n_draws zero", lambda: posterior_predictive(good, model, n_draws=0), ValueError, "n_draws must be a positive integer"),
        ("n_draws float", lambda: posterior_predictive(good, model, n_draws=2.0), TypeError, "n_draws must be a positive integer"),
        ("n_draws too many", lambda: posterior_predictive(good, model, n_draws=4), ValueError, "at most the 3 posterior draws"),
        ("items out of range", lambda: posterior_predictive(good, model, items=[N]), ValueError, "items must be indices"),
        ("bad seed", lambda: posterior_predictive(good, model, random_seed=-1), ValueError, "random_seed"),
    ]


@pytest.mark.parametrize("case", bad_input_cases(), ids=lambda case: case[0])
def test_bad_input_gets_a_clear_error(case):
    _, call, error, match = case
    with pytest.raises(error, match=match):
        call()
