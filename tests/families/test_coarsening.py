"""Coarsened families (layer 1): every function targets ``p(θ) Π_i p(x_i | θ)^ζ`` for ζ = ``params[-1]``.

The closed forms of ``tests/coarsened.py`` are checked by quadrature (Beta-Bernoulli,
Gamma-Poisson, Normal-Gamma: the integral of the powered likelihood written out),
the families' log marginals against those closed forms, the predictives against
ratios of marginals, the posterior draws' means against the coarsened conjugate
update, and ``log_density``/``log_densities`` against ζ times scipy's densities.
"""

import numpy as np
import pytest
from coarsened import (
    beta_bernoulli, categorical, dirichlet_multinomial, gamma_poisson, normal_gamma, normal_inverse_wishart,
)
from scipy import integrate, stats
from test_families import CAT_HYPER, D, DM_HYPER, GP_HYPER, HYPER, NG_HYPER, NIW_HYPER, _data, _scipy_log_density

import pymc_partitions.families as F

ZETA = 0.37
FAMILIES = pytest.mark.parametrize("family", list(HYPER), ids=[F.MODULES[code].__name__.rsplit(".")[-1] for code in HYPER])


def _params(family, zeta=ZETA):
    return F.pack_params(family, D, *HYPER[family], zeta=zeta)


def _stats(family, rows):
    out, item = np.zeros(F.stat_size(family, rows.shape[1])), np.zeros(F.stat_size(family, rows.shape[1]))
    for x in rows:
        F.item_stats(family, x, item)
        out += item
    return out


def _reference(family, rows):
    """The closed form of ``tests/coarsened.py`` for ``rows`` (the kernels' rows; codes for the categorical)."""
    hyper = HYPER[family]
    if family == F.BETA_BERNOULLI:
        return beta_bernoulli(rows, *hyper, ZETA)
    if family == F.NORMAL_GAMMA:
        return normal_gamma(rows, *hyper, ZETA)
    if family == F.NORMAL_INVERSE_WISHART:
        mu0, kappa0, nu0, psi0 = hyper
        return normal_inverse_wishart(rows, mu0, kappa0, nu0, psi0, ZETA)
    if family == F.DIRICHLET_MULTINOMIAL:
        return dirichlet_multinomial(rows, *DM_HYPER, ZETA)
    if family == F.GAMMA_POISSON:
        return gamma_poisson(rows, *GP_HYPER, ZETA)
    offsets = np.concatenate([[0], np.cumsum(CAT_HYPER[1])[:-1]])
    codes = np.stack([rows[:, o : o + c].argmax(axis=1) for o, c in zip(offsets, CAT_HYPER[1])], axis=1)
    return categorical(codes, *CAT_HYPER, ZETA)


def test_closed_forms_by_quadrature():
    """The references' conjugate algebra: ∫ Π_i p(x_i | θ)^ζ p(θ) dθ by quadrature for three families."""
    rng = np.random.default_rng(1)
    rows = (rng.random((6, 1)) < 0.5).astype(float)
    s, n = rows.sum(), len(rows)
    value, _ = integrate.quad(lambda t: t ** (ZETA * s) * (1 - t) ** (ZETA * (n - s)) * stats.beta.pdf(t, 0.6, 1.7), 0, 1)
    assert beta_bernoulli(rows, 0.6, 1.7, ZETA) == pytest.approx(np.log(value), rel=1e-9)

    counts = rng.poisson(3.0, size=(5, 1)).astype(float)
    value, _ = integrate.quad(
        lambda lam: np.exp(ZETA * stats.poisson.logpmf(counts[:, 0], lam).sum()) * stats.gamma.pdf(lam, 1.5, scale=1 / 0.8),
        0, 60, limit=200,
    )
    assert gamma_poisson(counts, 1.5, 0.8, ZETA) == pytest.approx(np.log(value), rel=1e-8)

    x = rng.normal(1.0, 2.0, size=(4, 1))

    def joint(mu, lam):
        likelihood = ZETA * stats.norm.logpdf(x[:, 0], mu, 1 / np.sqrt(lam)).sum()
        prior = stats.gamma.logpdf(lam, 2.0, scale=1 / 1.5) + stats.norm.logpdf(mu, 0.3, 1 / np.sqrt(0.7 * lam))
        return np.exp(likelihood + prior)

    value, _ = integrate.dblquad(joint, 1e-8, 30, -25, 25, epsabs=1e-13, epsrel=1e-10)
    assert normal_gamma(x, 0.3, 0.7, 2.0, 1.5, ZETA) == pytest.approx(np.log(value), rel=1e-6)


@FAMILIES
@pytest.mark.parametrize("n", [1, 4])
def test_log_marginal_is_the_coarsened_closed_form(family, n):
    rows = _data(family, np.random.default_rng(10 + n), n)
    assert F.log_marginal(family, _stats(family, rows), _params(family)) == pytest.approx(_reference(family, rows), rel=1e-10)


@FAMILIES
def test_predictive_is_ratio_of_coarsened_marginals(family):
    rows = _data(family, np.random.default_rng(3), 7)
    params = _params(family)
    for split in (0, 3, 6):
        before, with_item = _stats(family, rows[:split]), _stats(family, rows[: split + 1])
        cache = np.zeros(F.cache_size(family, rows.shape[1]))
        F.fill_cache(family, before, params, cache)
        expected = F.log_marginal(family, with_item, params) - F.log_marginal(family, before, params)
        assert F.log_predictive(family, cache, rows[split], params) == pytest.approx(expected, abs=1e-10)


@FAMILIES
def test_zeta_one_is_the_ordinary_family(family):
    """``zeta = 1`` packs to the same numbers as before and leaves every function unchanged, bit for bit."""
    rows = _data(family, np.random.default_rng(4), 5)
    ordinary, explicit = F.pack_params(family, D, *HYPER[family]), _params(family, 1.0)
    np.testing.assert_array_equal(ordinary, explicit)
    assert ordinary[-1] == 1.0
    stats_row = _stats(family, rows)
    assert F.log_marginal(family, stats_row, explicit) != F.log_marginal(family, stats_row, _params(family))


def _coarsened_posterior_mean(family, rows):
    """The mean of the first block of θ under the coarsened conjugate update (statistics times ζ)."""
    n, total = ZETA * len(rows), ZETA * rows.sum(axis=0)
    if family == F.BETA_BERNOULLI:
        a, b = HYPER[family]
        return (a + total) / (a + b + n), lambda theta: 1 / (1 + np.exp(-theta[:, 1:]))
    if family == F.GAMMA_POISSON:
        a, b = GP_HYPER
        return (a + total) / (b + n), lambda theta: theta[:, :D]
    if family == F.DIRICHLET_MULTINOMIAL:
        alpha = DM_HYPER[0] + total
        return alpha / alpha.sum(), lambda theta: np.exp(theta)
    if family == F.NORMAL_GAMMA:
        mu0, kappa0, a0, b0 = NG_HYPER
        return (kappa0 * mu0 + total) / (kappa0 + n), lambda theta: theta[:, :D]
    if family == F.NORMAL_INVERSE_WISHART:
        mu0, kappa0, _, _ = NIW_HYPER
        return (kappa0 * mu0 + total) / (kappa0 + n), lambda theta: theta[:, :D]
    beta, categories = CAT_HYPER
    counts = beta[np.repeat(np.arange(D), categories)] + total
    offsets = np.concatenate([[0], np.cumsum(categories)])
    mean = np.concatenate([counts[o:e] / counts[o:e].sum() for o, e in zip(offsets[:-1], offsets[1:])])
    return mean, lambda theta: np.exp(theta[:, 1:])


@FAMILIES
def test_draw_params_follow_the_coarsened_posterior(family):
    rows = _data(family, np.random.default_rng(5), 6)
    params, stats_row = _params(family), _stats(family, rows)
    rng = np.random.default_rng(6)
    theta = np.zeros((4000, F.param_size(family, rows.shape[1])))
    for row in theta:
        F.draw_params(family, stats_row, params, rng, row)
    expected, extract = _coarsened_posterior_mean(family, rows)
    values = extract(theta)
    error = values.std(axis=0) / np.sqrt(len(values))
    assert np.all(np.abs(values.mean(axis=0) - expected) < 4.5 * error + 1e-12)


@FAMILIES
def test_log_density_is_zeta_times_the_density(family):
    rows = _data(family, np.random.default_rng(7), 6)
    params = _params(family)
    rng = np.random.default_rng(8)
    theta = np.zeros((3, F.param_size(family, rows.shape[1])))
    for row in theta:
        F.draw_params(family, _stats(family, rows), params, rng, row)
    out = np.empty((len(rows), len(theta)))
    bound = F.log_densities(family, theta, rows, params, out)
    for i, x in enumerate(rows):
        for k, row in enumerate(theta):
            loop = F.log_density(family, row, x, params)
            assert loop == pytest.approx(ZETA * _scipy_log_density(family, row, x), rel=1e-10, abs=1e-12)
            assert abs(out[i, k] - loop) <= bound


def test_pack_params_rejects_zeta_outside_the_unit_interval():
    for zeta in (0.0, 1.5, -0.2, np.nan):
        with pytest.raises(ValueError, match="zeta"):
            F.pack_params(F.BETA_BERNOULLI, 2, 1.0, 1.0, zeta=zeta)
