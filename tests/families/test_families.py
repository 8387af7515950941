"""Conjugate families (layer 1) against independent scipy computations.

Every family is tested through the numba dispatch functions (one compilation),
with small random data from fixed seeds and non-default hyperparameters.
"""

import math

import numpy as np
import pytest
from scipy import integrate, special, stats

import pymc_partitions.families as F
from pymc_partitions.families._common import HALF_RATIO_SERIES_MIN as SERIES_MIN
from pymc_partitions.families._common import log_gamma_half_ratio_excess as half_ratio_excess
from pymc_partitions.families._common import multiply_into

D = 3
N_DRAWS = 2000
Z_MAX = 4.0  # Monte-Carlo tolerance in standard errors: P(any |z| > 4 among ~25 means) ~ 2e-3


# --- independent references: closed forms and chain rules of scipy predictives ------------


def bb_log_marginal(rows, a, b):
    """Product over features of Beta functions: Σ_j log B(a + s, b + n − s) − log B(a, b)."""
    n, s = len(rows), rows.sum(axis=0)
    return float(np.sum(special.betaln(a + s, b + n - s) - special.betaln(a, b)))


def bb_posterior_mean(rows, a, b):
    return (a + rows.sum(axis=0)) / (a + b + len(rows))


def ng_chain(rows, mu0, kappa0, a0, b0):
    """Chain rule of Student-t predictives with one-item updates; returns (log p, posterior)."""
    mu, kappa, a, b = (np.broadcast_to(np.asarray(v, dtype=float), (D,)).copy() for v in (mu0, kappa0, a0, b0))
    total = 0.0
    for x in rows:
        scale = np.sqrt(b * (kappa + 1) / (a * kappa))
        total += stats.t.logpdf(x, df=2 * a, loc=mu, scale=scale).sum()
        b = b + kappa * (x - mu) ** 2 / (2 * (kappa + 1))
        mu = (kappa * mu + x) / (kappa + 1)
        kappa, a = kappa + 1, a + 0.5
    return total, (mu, kappa, a, b)


def niw_chain(rows, mu0, kappa0, nu0, psi0):
    """Chain rule of multivariate-t predictives with one-item updates; returns (log p, posterior)."""
    mu, kappa, nu, psi = np.full(D, mu0, dtype=float), kappa0, nu0, np.array(psi0, dtype=float)
    total = 0.0
    for x in rows:
        df = nu - D + 1
        total += stats.multivariate_t.logpdf(x, loc=mu, shape=psi * (kappa + 1) / (kappa * df), df=df)
        psi = psi + kappa / (kappa + 1) * np.outer(x - mu, x - mu)
        mu = (kappa * mu + x) / (kappa + 1)
        kappa, nu = kappa + 1, nu + 1
    return total, (mu, kappa, nu, psi)


def dm_chain(rows, beta):
    """Chain rule of scipy Dirichlet-multinomial predictives."""
    alpha = np.broadcast_to(beta, (D,)).astype(float)
    total = 0.0
    for x in rows:
        total += stats.dirichlet_multinomial.logpmf(x, alpha, int(x.sum()))
        alpha = alpha + x
    return total


def cat_log_marginal(rows, beta, categories):
    """Σ_j log of the Dirichlet-multinomial (Pólya) probability of feature j's sequence of codes, by its chain rule."""
    total = 0.0
    offsets = np.concatenate([[0], np.cumsum(categories)[:-1]])
    for j, (c, o) in enumerate(zip(categories, offsets)):
        counts = np.zeros(c)
        for x in rows:
            code = int(np.flatnonzero(x[o : o + c])[0])
            total += math.log((beta[j] + counts[code]) / (c * beta[j] + counts.sum()))
            counts[code] += 1
    return total


def gp_chain(rows, a, b):
    """Chain rule of negative-binomial predictives NB(α, β/(β + 1)) per feature."""
    alpha, rate = np.broadcast_to(a, (D,)).astype(float), np.broadcast_to(b, (D,)).astype(float)
    total = 0.0
    for x in rows:
        total += stats.nbinom.logpmf(x, alpha, rate / (rate + 1)).sum()
        alpha, rate = alpha + x, rate + 1
    return total


# --- the five families: hyperparameters, data, references ---------------------------------

BB_HYPER = (np.array([0.5, 1.5, 2.0]), 0.7)
NG_HYPER = (np.array([0.5, -1.0, 2.0]), 0.8, np.array([1.5, 2.0, 3.0]), 2.5)
NIW_PSI = np.array([[2.0, 0.5, 0.2], [0.5, 1.5, -0.3], [0.2, -0.3, 1.0]])
NIW_HYPER = (np.array([0.5, -1.0, 2.0]), 0.6, 6.5, NIW_PSI)
DM_HYPER = (np.array([0.4, 1.2, 3.0]),)
GP_HYPER = (np.array([0.8, 2.0, 5.0]), np.array([0.5, 1.0, 2.0]))
CAT_HYPER = (np.array([0.6, 1.0, 2.5]), np.array([2, 3, 4]))
"""Concentrations and numbers of categories of the D = 3 categorical features: one-hot width 9."""
CAT_WIDTH = int(CAT_HYPER[1].sum())


def _data(family, rng, n):
    if family == F.CATEGORICAL:
        codes = np.stack([rng.integers(0, c, size=n) for c in CAT_HYPER[1]], axis=1)
        return F.categorical.one_hot(codes, CAT_HYPER[1])
    if family == F.BETA_BERNOULLI:
        return rng.integers(0, 2, size=(n, D)).astype(float)
    if family == F.NORMAL_GAMMA:
        return rng.normal([1.0, -2.0, 0.5], [1.0, 2.0, 0.5], size=(n, D))
    if family == F.NORMAL_INVERSE_WISHART:
        return rng.normal(size=(n, D)) @ np.array([[1.0, 0.6, 0.0], [0.0, 1.2, -0.4], [0.0, 0.0, 0.7]]) + 1.0
    counts = rng.poisson(2.0, size=(n, D)).astype(float)
    counts[0] = [20.0, 0.0, 25.0]  # exercises the lgamma branch of the predictive
    return counts


def _exact_log_marginal(family, rows):
    """Independent log marginal likelihood of ``rows`` under the test hyperparameters."""
    if family == F.BETA_BERNOULLI:
        return bb_log_marginal(rows, *BB_HYPER)
    if family == F.NORMAL_GAMMA:
        return ng_chain(rows, *NG_HYPER)[0]
    if family == F.NORMAL_INVERSE_WISHART:
        return niw_chain(rows, *NIW_HYPER)[0]
    if family == F.DIRICHLET_MULTINOMIAL:
        return dm_chain(rows, *DM_HYPER)
    if family == F.CATEGORICAL:
        return cat_log_marginal(rows, *CAT_HYPER)
    return gp_chain(rows, *GP_HYPER)


def _natural(family, theta):
    """θ in natural coordinates, for means and scipy densities."""
    if family == F.BETA_BERNOULLI:
        return {"p": special.expit(theta[1:])}
    if family == F.NORMAL_GAMMA:
        return {"mu": theta[:D], "precision": theta[D : 2 * D]}
    if family == F.NORMAL_INVERSE_WISHART:
        factor = theta[D : D + D * D].reshape(D, D)
        return {"mu": theta[:D], "cov": np.linalg.inv(factor.T @ factor)}
    if family in (F.DIRICHLET_MULTINOMIAL, F.CATEGORICAL):
        return {"p": np.exp(theta[1:] if family == F.CATEGORICAL else theta)}
    return {"rate": theta[:D]}


def _posterior_mean(family, rows):
    """Closed-form posterior mean of the natural θ, as a flat vector."""
    if family == F.BETA_BERNOULLI:
        return bb_posterior_mean(rows, *BB_HYPER)
    if family == F.NORMAL_GAMMA:
        mu, _, a, b = ng_chain(rows, *NG_HYPER)[1]
        return np.concatenate([mu, a / b])
    if family == F.NORMAL_INVERSE_WISHART:
        mu, _, nu, psi = niw_chain(rows, *NIW_HYPER)[1]
        return np.concatenate([mu, (psi / (nu - D - 1))[np.triu_indices(D)]])
    if family == F.DIRICHLET_MULTINOMIAL:
        alpha = DM_HYPER[0] + rows.sum(axis=0)
        return alpha / alpha.sum()
    if family == F.CATEGORICAL:
        beta, categories = CAT_HYPER
        alpha = np.repeat(beta, categories) + rows.sum(axis=0)
        return alpha / np.repeat([a.sum() for a in np.split(alpha, np.cumsum(categories)[:-1])], categories)
    a, b = GP_HYPER
    return (a + rows.sum(axis=0)) / (b + len(rows))


def _flat_natural(family, theta):
    natural = _natural(family, theta)
    if family == F.NORMAL_GAMMA:
        return np.concatenate([natural["mu"], natural["precision"]])
    if family == F.NORMAL_INVERSE_WISHART:
        return np.concatenate([natural["mu"], natural["cov"][np.triu_indices(D)]])
    return next(iter(natural.values()))


def _scipy_log_density(family, theta, x):
    natural = _natural(family, theta)
    if family == F.BETA_BERNOULLI:
        return stats.bernoulli.logpmf(x, natural["p"]).sum()
    if family == F.NORMAL_GAMMA:
        return stats.norm.logpdf(x, natural["mu"], 1 / np.sqrt(natural["precision"])).sum()
    if family == F.NORMAL_INVERSE_WISHART:
        return stats.multivariate_normal.logpdf(x, natural["mu"], natural["cov"])
    if family == F.DIRICHLET_MULTINOMIAL:
        return stats.multinomial.logpmf(x, int(x.sum()), natural["p"])
    if family == F.CATEGORICAL:
        return float(np.log(natural["p"][x > 0]).sum())  # one chosen category per feature
    return stats.poisson.logpmf(x, natural["rate"]).sum()


HYPER = {
    F.BETA_BERNOULLI: BB_HYPER,
    F.NORMAL_GAMMA: NG_HYPER,
    F.NORMAL_INVERSE_WISHART: NIW_HYPER,
    F.DIRICHLET_MULTINOMIAL: DM_HYPER,
    F.GAMMA_POISSON: GP_HYPER,
    F.CATEGORICAL: CAT_HYPER,
}
FAMILIES = pytest.mark.parametrize("family", list(HYPER), ids=[F.MODULES[code].__name__.rsplit(".")[-1] for code in HYPER])


def _width(family):
    """Width of the family's data rows (the categorical family's are one-hot: Σ_j C_j columns)."""
    return CAT_WIDTH if family == F.CATEGORICAL else D


# --- helpers over the dispatch interface -------------------------------------------------


def _params(family):
    return F.pack_params(family, D, *HYPER[family])


def _item(family, x):
    out = np.zeros(F.stat_size(family, x.shape[0]))
    F.item_stats(family, x, out)
    return out


def _stats(family, rows):
    """Sum of the item statistics of the rows of the 2-D array ``rows`` (any number of features)."""
    rows = np.ascontiguousarray(rows)
    total = np.zeros(F.stat_size(family, rows.shape[1]))
    for x in rows:
        total += _item(family, x)
    return total


def _cache(family, stats_row, params):
    out = np.zeros(F.cache_size(family, _width(family)))
    F.fill_cache(family, stats_row, params, out)
    return out


def _close(actual, expected, tol=1e-10):
    assert abs(actual - expected) <= tol * max(1.0, abs(expected)), (actual, expected)


# --- tests -------------------------------------------------------------------------------


@FAMILIES
def test_sizes_are_exactly_the_written_lengths(family):
    """Each function writes every entry of its documented length and nothing beyond."""
    params = _params(family)
    x = _data(family, np.random.default_rng(0), 2)[1]
    sizes = [F.stat_size(family, _width(family)), F.cache_size(family, _width(family)), F.param_size(family, _width(family))]
    outs = [np.full(size + 1, np.nan) for size in sizes]
    F.item_stats(family, x, outs[0])
    F.fill_cache(family, _stats(family, [x]), params, outs[1])
    F.draw_params(family, _stats(family, [x]), params, np.random.default_rng(1), outs[2])
    for out in outs:
        assert np.all(np.isfinite(out[:-1])) and np.isnan(out[-1])


@FAMILIES
def test_stats_are_additive_and_empty_marginal_is_zero(family):
    rows = _data(family, np.random.default_rng(1), 6)
    params = _params(family)
    whole = _stats(family, rows)
    assert whole[0] == len(rows)
    np.testing.assert_allclose(whole[1 : 1 + _width(family)], rows.sum(axis=0))
    np.testing.assert_allclose(_stats(family, rows[:2]) + _stats(family, rows[2:]), whole)
    assert F.log_marginal(family, np.zeros_like(whole), params) == 0.0


@FAMILIES
def test_predictive_is_ratio_of_marginals(family):
    """log_predictive(fill_cache(S), x) = log_marginal(S + item(x)) − log_marginal(S), S empty or not."""
    rows = _data(family, np.random.default_rng(2), 8)
    params = _params(family)
    for members in (rows[:0], rows[:1], rows[2:7]):
        base = _stats(family, members)
        cache = _cache(family, base, params)
        for x in rows:
            expected = F.log_marginal(family, base + _item(family, x), params) - F.log_marginal(family, base, params)
            _close(F.log_predictive(family, cache, x, params), expected)


@FAMILIES
def test_predictive_is_ratio_of_marginals_for_a_large_cluster(family):
    """The same identity with 60 items: the Normal-Gamma cache then has a_n >= 16 (series branch)."""
    rows = _data(family, np.random.default_rng(4), 61)
    params = _params(family)
    base = _stats(family, rows[:60])
    expected = F.log_marginal(family, base + _item(family, rows[60]), params) - F.log_marginal(family, base, params)
    _close(F.log_predictive(family, _cache(family, base, params), rows[60], params), expected)


def test_normal_gamma_predictive_with_shared_a0():
    """Features with equal a0 share one log-Gamma term in the cache: small and large clusters."""
    rows = _data(F.NORMAL_GAMMA, np.random.default_rng(5), 41)
    params = F.pack_params(F.NORMAL_GAMMA, D, 0.3, 0.8, 2.0, 2.5)
    for m in (3, 40):
        base = _stats(F.NORMAL_GAMMA, rows[:m])
        cache = _cache(F.NORMAL_GAMMA, base, params)
        joined = base + _item(F.NORMAL_GAMMA, rows[40])
        expected = F.log_marginal(F.NORMAL_GAMMA, joined, params) - F.log_marginal(F.NORMAL_GAMMA, base, params)
        _close(F.log_predictive(F.NORMAL_GAMMA, cache, rows[40], params), expected)


def test_log_gamma_half_ratio_excess_on_both_branches():
    """E(a) = log Γ(a + ½) − log Γ(a) − ½ log a against lgamma differences (accurate to ~1e-13 here), and the
    series against the exact recurrence E(a) + E(a + ½) = −½ log(1 + 1/(2a)), within twice its truncation bound."""
    for a in np.concatenate([np.linspace(0.05, SERIES_MIN - 0.1, 40), np.linspace(SERIES_MIN, 60.0, 89), np.geomspace(60.0, 1e9, 40)]):
        e = half_ratio_excess(a)
        if a <= 60.0:
            assert abs(e - (math.lgamma(a + 0.5) - math.lgamma(a) - 0.5 * math.log(a))) <= 2e-13, a
        if a >= SERIES_MIN:
            assert abs(e + half_ratio_excess(a + 0.5) + 0.5 * math.log1p(0.5 / a)) <= 5e-16, a


def test_multiply_into_is_the_log_of_the_product_without_overflow():
    """Σ log f_j for factors whose running product leaves the float range (and single factors beyond the bound)."""
    factors = np.concatenate([np.full(100, 1e10), [1e-300, 1e300, 3.5, 2.0**-1000], np.full(50, 1e-12), [7.0]])
    product, log_sum = 1.0, 0.0
    for f in factors:
        product, log_sum = multiply_into(product, log_sum, f)
    assert 2.0**-300 <= product <= 2.0**300
    expected = float(np.sum(np.log(factors)))
    assert abs(log_sum + math.log(product) - expected) <= 1e-13 * abs(expected)
    assert math.isnan(multiply_into(1.0, 0.0, math.nan)[1])


@FAMILIES
@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_log_marginal_matches_independent_reference(family, n):
    rows = _data(family, np.random.default_rng(10 + n), n)
    _close(F.log_marginal(family, _stats(family, rows), _params(family)), _exact_log_marginal(family, rows))


@FAMILIES
def test_draw_params_posterior_mean(family):
    """Mean of N_DRAWS posterior draws of θ within Z_MAX Monte-Carlo standard errors of its closed form."""
    rows = _data(family, np.random.default_rng(3), 5)
    stats_row, params = _stats(family, rows), _params(family)
    rng = np.random.default_rng(4)
    theta = np.empty(F.param_size(family, _width(family)))
    draws = []
    for _ in range(N_DRAWS):
        F.draw_params(family, stats_row, params, rng, theta)
        draws.append(_flat_natural(family, theta).copy())
    draws = np.array(draws)
    z = (draws.mean(axis=0) - _posterior_mean(family, rows)) / (draws.std(axis=0) / math.sqrt(N_DRAWS))
    assert np.all(np.abs(z) < Z_MAX), z


@FAMILIES
def test_log_density_matches_scipy(family):
    rows = _data(family, np.random.default_rng(5), 6)
    params = _params(family)
    theta = np.empty(F.param_size(family, _width(family)))
    F.draw_params(family, _stats(family, rows[:3]), params, np.random.default_rng(6), theta)
    for x in rows:
        _close(F.log_density(family, theta, x, params), _scipy_log_density(family, theta, x))


def _item_mean_and_covariance(family, theta, total):
    """Mean and covariance of one item drawn from p(x | θ) (``total``: the Dirichlet-multinomial's N)."""
    natural = _natural(family, theta)
    if family == F.BETA_BERNOULLI:
        p = natural["p"]
        return p, np.diag(p * (1 - p))
    if family == F.NORMAL_GAMMA:
        return natural["mu"], np.diag(1 / natural["precision"])
    if family == F.NORMAL_INVERSE_WISHART:
        return natural["mu"], natural["cov"]
    if family == F.DIRICHLET_MULTINOMIAL:
        p = natural["p"] / natural["p"].sum()
        return total * p, total * (np.diag(p) - np.outer(p, p))
    if family == F.CATEGORICAL:  # one-hot columns: a multinomial of one draw within each feature, features independent
        p = natural["p"]
        same = np.equal.outer(np.repeat(np.arange(D), CAT_HYPER[1]), np.repeat(np.arange(D), CAT_HYPER[1]))
        return p, (np.diag(p) - np.outer(p, p)) * same
    return natural["rate"], np.diag(natural["rate"])


@FAMILIES
def test_draw_data_has_the_moments_of_p_x_given_theta(family):
    """Items drawn from two clusters' θ: each cluster's sample mean and covariance within Z_MAX standard errors.

    The covariance is estimated about the exact mean, as the average of the
    products (x_j − μ_j)(x_k − μ_k), whose standard error is their sample
    standard deviation over sqrt(N) (no assumption on fourth moments).
    """
    rows = _data(family, np.random.default_rng(11), 6)
    params = _params(family)
    rng = np.random.default_rng(12)
    theta = np.empty((2, F.param_size(family, _width(family))))
    F.draw_params(family, _stats(family, rows[:3]), params, rng, theta[0])
    F.draw_params(family, _stats(family, rows[3:]), params, rng, theta[1])
    labels = np.repeat([1, 0], N_DRAWS)
    template = np.repeat(rows[[3, 0]], N_DRAWS, axis=0)  # the multinomial's totals N come from these rows
    drawn = F.draw_data(family, theta, labels, template, params, rng)
    assert drawn.shape == (2 * N_DRAWS, D) and drawn.dtype == np.float64
    if family == F.CATEGORICAL:  # codes, as the PyMC model observes them: compared as the kernels' one-hot rows
        assert np.all(drawn == np.round(drawn)) and np.all((drawn >= 0) & (drawn < CAT_HYPER[1]))
        drawn = F.categorical.one_hot(drawn, CAT_HYPER[1])
    if family in (F.BETA_BERNOULLI, F.DIRICHLET_MULTINOMIAL, F.GAMMA_POISSON):
        assert np.all(drawn == np.round(drawn)) and np.all(drawn >= 0)
    if family == F.DIRICHLET_MULTINOMIAL:
        np.testing.assert_array_equal(drawn.sum(axis=1), template.sum(axis=1))
    for label in (0, 1):
        sample = drawn[labels == label]
        mean, cov = _item_mean_and_covariance(family, theta[label], template[labels == label][0].sum())
        variance = np.diag(cov)
        z_mean = (sample.mean(axis=0) - mean) / np.sqrt(variance / N_DRAWS)
        assert np.all(np.abs(z_mean) < Z_MAX), z_mean
        if family == F.DIRICHLET_MULTINOMIAL:
            continue  # the counts sum to N: the covariance is singular and the mean test covers p
        products = (sample - mean)[:, :, None] * (sample - mean)[:, None, :]
        error = products.mean(axis=0) - cov
        se = products.std(axis=0) / np.sqrt(N_DRAWS)
        assert np.all(np.abs(error) <= Z_MAX * se), error / se


def test_beta_bernoulli_marginal_by_quadrature():
    """One feature: ∫ θ^s (1 − θ)^{n−s} Beta(θ; a, b) dθ."""
    a, b = 0.5, 0.7
    rows = np.array([[1.0, 0, 0], [1.0, 1, 0], [0.0, 1, 0]])
    s, n = rows[:, 0].sum(), len(rows)
    value, _ = integrate.quad(lambda t: t**s * (1 - t) ** (n - s) * stats.beta.pdf(t, a, b), 0, 1)
    params = F.pack_params(F.BETA_BERNOULLI, 1, a, b)
    _close(F.log_marginal(F.BETA_BERNOULLI, _stats(F.BETA_BERNOULLI, rows[:, :1]), params), math.log(value), 1e-8)


def test_normal_gamma_marginal_by_quadrature():
    """One feature, two items: ∫∫ Π_i N(x_i; μ, 1/λ) N(μ; mu0, 1/(κ0 λ)) Gamma(λ; a0, rate b0) dμ dλ."""
    mu0, kappa0, a0, b0 = 0.5, 0.8, 1.5, 2.5
    xs = np.array([1.3, -0.4])

    def normal(x, mean, precision):
        return math.sqrt(precision / (2 * math.pi)) * math.exp(-0.5 * precision * (x - mean) ** 2)

    def over_mu(lam):
        def integrand(mu):
            return normal(xs[0], mu, lam) * normal(xs[1], mu, lam) * normal(mu, mu0, kappa0 * lam)

        return integrate.quad(integrand, -np.inf, np.inf, epsabs=0, epsrel=1e-12)[0] * stats.gamma.pdf(lam, a0, scale=1 / b0)

    value, _ = integrate.quad(over_mu, 0, np.inf, epsabs=0, epsrel=1e-11)
    params = F.pack_params(F.NORMAL_GAMMA, 1, mu0, kappa0, a0, b0)
    _close(F.log_marginal(F.NORMAL_GAMMA, _stats(F.NORMAL_GAMMA, xs[:, None]), params), math.log(value), 1e-8)


def test_gamma_poisson_marginal_by_quadrature():
    """One feature: ∫ Π_i Poisson(x_i; λ) Gamma(λ; a, rate b) dλ."""
    a, b = 0.8, 0.5
    xs = np.array([3.0, 0.0, 5.0])
    value, _ = integrate.quad(lambda lam: np.prod(stats.poisson.pmf(xs, lam)) * stats.gamma.pdf(lam, a, scale=1 / b), 0, np.inf)
    params = F.pack_params(F.GAMMA_POISSON, 1, a, b)
    _close(F.log_marginal(F.GAMMA_POISSON, _stats(F.GAMMA_POISSON, xs[:, None]), params), math.log(value), 1e-8)


def test_one_dimensional_niw_is_normal_gamma():
    """d = 1: InvWishart(ν0, ψ0) is InvGamma(ν0/2, ψ0/2), i.e. λ ~ Gamma(ν0/2, rate ψ0/2)."""
    rows = np.random.default_rng(7).normal(1.0, 2.0, size=(5, 1))
    niw = F.pack_params(F.NORMAL_INVERSE_WISHART, 1, 0.3, 1.7, 4.0, [[3.0]])
    ng = F.pack_params(F.NORMAL_GAMMA, 1, 0.3, 1.7, 2.0, 1.5)
    expected = F.log_marginal(F.NORMAL_GAMMA, _stats(F.NORMAL_GAMMA, rows), ng)
    _close(F.log_marginal(F.NORMAL_INVERSE_WISHART, _stats(F.NORMAL_INVERSE_WISHART, rows), niw), expected)


def test_dirichlet_multinomial_empty_document_has_probability_one():
    params = _params(F.DIRICHLET_MULTINOMIAL)
    rows = _data(F.DIRICHLET_MULTINOMIAL, np.random.default_rng(8), 4)
    empty = np.zeros(D)
    base = _stats(F.DIRICHLET_MULTINOMIAL, rows)
    assert F.log_predictive(F.DIRICHLET_MULTINOMIAL, _cache(F.DIRICHLET_MULTINOMIAL, base, params), empty, params) == 0.0
    with_empty = base + _item(F.DIRICHLET_MULTINOMIAL, empty)
    assert F.log_marginal(F.DIRICHLET_MULTINOMIAL, with_empty, params) == F.log_marginal(F.DIRICHLET_MULTINOMIAL, base, params)


@pytest.mark.parametrize(
    ("family", "hyper", "name"),
    [
        (F.BETA_BERNOULLI, ([1.0, 2.0], 1.0), "a"),
        (F.BETA_BERNOULLI, (1.0, -1.0), "b"),
        (F.NORMAL_GAMMA, (0.0, 1.0, 1.0, np.ones(4)), "b0"),
        (F.NORMAL_GAMMA, (np.zeros((3, 1)), 1.0, 1.0, 1.0), "mu0"),
        (F.NORMAL_INVERSE_WISHART, (np.zeros(2), 1.0, 5.0, np.eye(3)), "mu0"),
        (F.NORMAL_INVERSE_WISHART, (0.0, 1.0, 5.0, np.eye(2)), "Psi0"),
        (F.NORMAL_INVERSE_WISHART, (0.0, 1.0, 1.5, np.eye(3)), "nu0"),
        (F.NORMAL_INVERSE_WISHART, (0.0, 1.0, 5.0, -np.eye(3)), "Psi0"),
        (F.DIRICHLET_MULTINOMIAL, (np.ones(5),), "beta"),
        (F.GAMMA_POISSON, (1.0, [1.0, 2.0, 3.0, 4.0]), "b"),
        (F.CATEGORICAL, (0.0, [2, 3, 4]), "beta"),
        (F.CATEGORICAL, (1.0, [2, 0, 4]), "n_categories"),
        (F.CATEGORICAL, (1.0, [2, 3]), "n_categories"),
        (F.CATEGORICAL, (1.0, [2, 2.5, 4]), "n_categories"),
    ],
)
def test_pack_params_rejects_bad_hyperparameters(family, hyper, name):
    with pytest.raises(ValueError, match=name):
        F.pack_params(family, D, *hyper)


def test_unknown_family_code_is_rejected():
    """Every dispatcher refuses a code that is no additive family (the relational and parametric ones included);
    numba code can only receive tags, whose family is fixed when a kernel compiles."""
    for code in (len(F.TAGS), -1, F.INFINITE_RELATIONAL, F.NORMAL, 1.0, True):
        with pytest.raises(ValueError, match="family"):
            F.log_marginal(code, np.zeros(4), np.zeros(4))
        with pytest.raises(ValueError, match="family"):
            F.log_predictive(code, np.zeros(4), np.zeros(3), np.zeros(4))
        with pytest.raises(ValueError, match="family"):
            F.item_stats(code, np.zeros(3), np.zeros(4))
        with pytest.raises(ValueError, match="family"):
            F.stat_size(code, D)
    with pytest.raises(ValueError, match="family"):
        F.pack_params(len(F.TAGS), D, 1.0)
    with pytest.raises(ValueError, match="family"):
        F.tag(len(F.TAGS))


def test_dispatchers_take_tags_and_codes_alike():
    """From Python a family's tag and its integer code run the same module function."""
    for code in HYPER:
        tag = F.TAGS[code]
        assert tag.code == code and F.tag(code) is tag
        assert F.stat_size(tag, D) == F.stat_size(code, D) == F.MODULES[code].stat_size(D)
        x = _data(code, np.random.default_rng(0), 1)[0]
        assert np.array_equal(_item(tag, x), _item(code, x))

