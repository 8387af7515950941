"""The conditionally conjugate Normal family (``families.normal``) against scipy, item by item."""

import numpy as np
import pytest
from scipy import stats

from pymc_partitions import families
from pymc_partitions.families import normal

D = 3
RNG = np.random.default_rng(17)
X = RNG.normal([1.0, -2.0, 0.5], [1.0, 0.5, 2.0], (6, D))
M, T, A, B = np.array([0.5, -1.0, 0.0]), np.array([0.3, 2.0, 0.1]), np.array([2.0, 0.7, 3.5]), np.array([1.5, 0.4, 2.0])
PARAMS = families.pack_params(families.NORMAL, D, M, T, A, B, 4)
Z_MAX = 4.0  # Monte-Carlo tolerance in standard errors


def stats_of(x):
    row = np.zeros(normal.stat_size(D))
    item = np.empty_like(row)
    for v in x:
        normal.item_stats(v, item)
        row += item
    return row


def theta_of(mu, tau):
    return np.r_[mu, tau, 0.5 * np.sum(np.log(tau / (2 * np.pi)))]


def test_layouts_and_k_max():
    assert normal.stat_size(D) == 1 + 2 * D and normal.param_size(D) == 2 * D + 1
    assert normal.k_max(PARAMS) == 4 and PARAMS.shape == (3 + 4 * D,) and PARAMS[-1] == 1.0  # [..., k_max, zeta]
    assert normal.k_max(families.pack_params(families.NORMAL, D, M, T, A, B, np.array(7.0))) == 7  # read back from a graph as a float


def test_densities_match_scipy():
    mu, tau = np.array([0.2, -1.5, 1.0]), np.array([0.8, 3.0, 0.3])
    theta = theta_of(mu, tau)
    expected_prior = stats.norm.logpdf(mu, M, 1 / np.sqrt(T)).sum() + stats.gamma.logpdf(tau, A, scale=1 / B).sum()
    assert normal.log_prior_density(theta, PARAMS) == pytest.approx(expected_prior, abs=1e-10)
    expected = stats.norm.logpdf(X, mu, 1 / np.sqrt(tau)).sum()
    assert normal.cluster_log_likelihood(stats_of(X), theta, PARAMS) == pytest.approx(expected, abs=1e-9)
    assert normal.log_density(theta, X[0], PARAMS) == pytest.approx(stats.norm.logpdf(X[0], mu, 1 / np.sqrt(tau)).sum())


@pytest.mark.parametrize("n_items", [0, 1, 6])
def test_update_density_is_that_of_the_full_conditionals(n_items):
    """The returned log density is mu_j | tau_j (old) times tau_j | mu_j (new), each from its textbook formula."""
    x = X[:n_items]
    theta = theta_of(np.zeros(D), np.array([0.5, 2.0, 1.0]))
    old_tau = theta[D : 2 * D].copy()
    log_q = normal.update_parameters(stats_of(x), PARAMS, theta, np.empty(0), np.random.default_rng(1))
    mu, tau = theta[:D], theta[D : 2 * D]
    precision = T + n_items * old_tau
    mean = (T * M + old_tau * x.sum(axis=0)) / precision
    shape, rate = A + n_items / 2, B + 0.5 * ((x - mu) ** 2).sum(axis=0)
    expected = stats.norm.logpdf(mu, mean, 1 / np.sqrt(precision)).sum() + stats.gamma.logpdf(tau, shape, scale=1 / rate).sum()
    assert log_q == pytest.approx(expected, abs=1e-9)
    assert theta[2 * D] == pytest.approx(0.5 * np.sum(np.log(tau / (2 * np.pi))))
    forced = theta_of(np.zeros(D), old_tau)
    target = theta.copy()
    assert normal.update_parameters(stats_of(x), PARAMS, forced, target, np.random.default_rng(2)) == pytest.approx(log_q, abs=1e-12)
    np.testing.assert_allclose(forced, target)


def test_update_draws_follow_the_conditionals():
    """Monte-Carlo means of mu and tau after one update from fixed tau agree with the conditionals' means."""
    rng = np.random.default_rng(3)
    s = stats_of(X)
    start_tau = np.array([0.5, 2.0, 1.0])
    draws = np.empty((4000, 2 * D))
    theta = np.empty(normal.param_size(D))
    for r in range(len(draws)):
        theta[:] = theta_of(np.zeros(D), start_tau)
        normal.update_parameters(s, PARAMS, theta, np.empty(0), rng)
        draws[r] = theta[: 2 * D]
    precision = T + len(X) * start_tau
    mean_mu = (T * M + start_tau * X.sum(axis=0)) / precision
    z_mu = (draws[:, :D].mean(axis=0) - mean_mu) / np.sqrt(1 / precision / len(draws))
    assert np.all(np.abs(z_mu) < Z_MAX), z_mu
    # E[tau] = E[(A + n/2) / (B + Q(mu)/2)] over mu: compare with the same average of the drawn mu's conditional mean
    rates = B + 0.5 * ((X[None, :, :] - draws[:, None, :D]) ** 2).sum(axis=1)
    conditional_mean = (A + len(X) / 2) / rates
    residual = draws[:, D:] - conditional_mean
    z_tau = residual.mean(axis=0) / (residual.std(axis=0) / np.sqrt(len(draws)))
    assert np.all(np.abs(z_tau) < Z_MAX), z_tau


def test_prior_draws_follow_the_prior():
    rng = np.random.default_rng(4)
    draws = np.empty((4000, normal.param_size(D)))
    for row in draws:
        normal.draw_prior(PARAMS, rng, row)
    for j in range(D):
        assert stats.kstest(draws[:, j], stats.norm(M[j], 1 / np.sqrt(T[j])).cdf).pvalue > 1e-3
        assert stats.kstest(draws[:, D + j], stats.gamma(A[j], scale=1 / B[j]).cdf).pvalue > 1e-3
    np.testing.assert_allclose(draws[:, 2 * D], 0.5 * np.log(draws[:, D : 2 * D] / (2 * np.pi)).sum(axis=1))


@pytest.mark.parametrize(
    "args, error, match",
    [
        ((D, M, -T, A, B, 3), ValueError, "t must be"),
        ((D, M, T, A, 0.0, 3), ValueError, "b must be"),
        ((D, M, T, A, B, 0), ValueError, "k_max"),
        ((D, M, T, A, B, 2.5), ValueError, "k_max"),
        ((D, M[:2], T, A, B, 3), ValueError, "m"),
    ],
)
def test_pack_params_rejects_bad_values(args, error, match):
    with pytest.raises(error, match=match):
        families.pack_params(families.NORMAL, *args)
