"""Partition priors: the PyTensor logp is a normalised EPPF, matches the numba
``log V``/``log W``, and random draws follow it."""

import numpy as np
import pymc as pm
import pytest
from exact import partition_index, set_partitions
from scipy import stats
from scipy.special import logsumexp

import pymc_partitions as pmp
from pymc_partitions import priors

K_PRIOR = stats.poisson.pmf(np.arange(40), 1.5)
K_PRIOR = K_PRIOR / K_PRIOR.sum()


def dp(n):
    return pmp.DirichletProcessPartition("z", alpha=1.7, n=n)


def py(n):
    return pmp.PitmanYorPartition("z", alpha=0.8, sigma=0.35, n=n)


def mfm(n):
    return pmp.MixtureOfFiniteMixturesPartition("z", gamma=0.7, k_prior=K_PRIOR, n=n)


def ngg(n):
    u = pmp.NGGAuxiliary("u", alpha=1.3, sigma=0.4, tau=0.9, n=n)
    return pmp.NGGPartition("z", alpha=1.3, sigma=0.4, tau=0.9, u=u, n=n)


PRIORS = {"dp": dp, "py": py, "mfm": mfm}


def log_pmf_table(build, n, extra=None):
    with pm.Model() as model:
        build(n)
    logp = model.compile_logp()
    parts = set_partitions(n)
    return parts, np.array([logp({"z": z, **(extra or {})}) for z in parts])


@pytest.mark.parametrize("name", list(PRIORS))
@pytest.mark.parametrize("n", [1, 3, 7])
def test_eppf_sums_to_one(name, n):
    _, log_pmf = log_pmf_table(PRIORS[name], n)
    assert logsumexp(log_pmf) == pytest.approx(0.0, abs=1e-9)


def test_ngg_joint_integrates_to_one():
    """sum_Pi int p(Pi, u) du = 1; u integrated on a log grid (Jacobian included by compile_logp)."""
    n = 5
    with pm.Model() as model:
        ngg(n)
    logp = model.compile_logp()
    grid = np.linspace(-12, 12, 1601)
    total = []
    for z in set_partitions(n):
        vals = np.array([logp({"z": z, "u_log__": g}) for g in grid])
        total.append(logsumexp(vals) + np.log(grid[1] - grid[0]))
    assert logsumexp(total) == pytest.approx(0.0, abs=1e-6)


def numba_log_prior(code, params, table, z):
    return priors.log_prior(code, params, table, np.bincount(z))


@pytest.mark.parametrize("name", ["dp", "py", "mfm", "ngg"])
def test_numba_prior_matches_pytensor(name):
    n = 6
    u_val = 2.3
    extra = {"u_log__": np.log(u_val)} if name == "ngg" else None
    parts, log_pmf = log_pmf_table({"ngg": ngg, **PRIORS}[name], n, extra)
    code, params, table = {
        "dp": (priors.DP, np.array([1.7]), priors.empty_table()),
        "py": (priors.PY, np.array([0.8, 0.35]), priors.empty_table()),
        "mfm": (priors.MFM, np.array([0.7]), priors.mfm_log_v_table(0.7, np.log(K_PRIOR), n)),
        "ngg": (priors.NGGP, np.array([1.3, 0.4, 0.9, u_val]), priors.empty_table()),
    }[name]
    numba_values = np.array([numba_log_prior(code, params, table, z) for z in parts])
    if name == "ngg":
        # the PyTensor joint includes the log-Jacobian of u's log transform
        numba_values += np.log(u_val)
    np.testing.assert_allclose(numba_values, log_pmf, rtol=0, atol=1e-9)


@pytest.mark.parametrize("name", ["dp", "py", "mfm", "ngg"])
def test_gibbs_weights_are_prior_ratios(name):
    """exp(log_new_cluster) and m + size_shift are the ratios p(Pi + i)/p(Pi) up to one constant."""
    code, params, table = {
        "dp": (priors.DP, np.array([1.7]), priors.empty_table()),
        "py": (priors.PY, np.array([0.8, 0.35]), priors.empty_table()),
        "mfm": (priors.MFM, np.array([0.7]), priors.mfm_log_v_table(0.7, np.log(K_PRIOR), 6)),
        "ngg": (priors.NGGP, np.array([1.3, 0.4, 0.9, 2.3]), priors.empty_table()),
    }[name]
    sizes = np.array([2, 3])  # five items placed; the sixth is inserted
    base = priors.log_prior(code, params, table, np.array([2, 3, 0])) - priors.log_v(code, params, table, 5, 2) + priors.log_v(code, params, table, 6, 2)
    join0 = priors.log_prior(code, params, table, np.array([3, 3])) - base
    new = priors.log_prior(code, params, table, np.array([2, 3, 1])) - base
    shift = priors.size_shift(code, params)
    assert join0 == pytest.approx(np.log(sizes[0] + shift), abs=1e-10)
    assert new == pytest.approx(priors.log_new_cluster(code, params, table, 6, 2), abs=1e-10)


@pytest.mark.parametrize("name", ["dp", "py", "mfm", "ngg"])
def test_prior_draws_follow_eppf(name):
    """Chi-square goodness of fit of 4000 prior draws (n = 4, 15 partitions)."""
    n = 4
    builder = {"ngg": ngg, **PRIORS}[name]
    with pm.Model() as model:
        builder(n)
    draws = pm.draw(model["z"], draws=4000, random_seed=11)
    parts = set_partitions(n)
    index = partition_index(parts)
    counts = np.bincount([index[tuple(z)] for z in draws], minlength=len(parts))
    if name == "ngg":
        # marginal over u: integrate the joint numerically
        logp = model.compile_logp()
        grid = np.linspace(-12, 12, 1201)
        log_pmf = np.array([logsumexp([logp({"z": z, "u_log__": g}) for g in grid]) for z in parts])
    else:
        _, log_pmf = log_pmf_table(builder, n)
    expected = np.exp(log_pmf - logsumexp(log_pmf)) * counts.sum()
    _, p_value = stats.chisquare(counts, expected)
    assert p_value > 1e-4


def test_ngg_auxiliary_draws_match_density():
    """Kolmogorov-Smirnov test of u draws against the marginal density of u (sum over partitions)."""
    n = 3
    with pm.Model() as model:
        ngg(n)
    u_draws = pm.draw(model["u"], draws=3000, random_seed=5)
    logp = model.compile_logp()
    grid = np.linspace(-10, 10, 2001)
    log_dens = np.array([logsumexp([logp({"z": z, "u_log__": g}) for z in set_partitions(n)]) for g in grid])
    cdf = np.cumsum(np.exp(log_dens - logsumexp(log_dens)))
    statistic, p_value = stats.kstest(np.log(u_draws), lambda x: np.interp(x, grid, cdf))
    assert p_value > 1e-4


def test_non_canonical_labels_have_zero_probability():
    with pm.Model() as model:
        dp(4)
    logp = model.compile_logp()
    assert np.isfinite(logp({"z": np.array([0, 1, 0, 2], dtype="int32")}))
    for bad in ([1, 0, 0, 0], [0, 2, 1, 1], [0, 0, -1, 0]):
        assert logp({"z": np.array(bad, dtype="int32")}) == -np.inf


def test_alpha_as_random_variable_has_gradient():
    with pm.Model() as model:
        alpha = pm.Gamma("alpha", 2.0, 1.0)
        pmp.DirichletProcessPartition("z", alpha=alpha, n=5)
    dlogp = model.compile_dlogp(vars=[alpha])
    point = {"alpha_log__": np.array(0.3), "z": np.array([0, 0, 1, 2, 1], dtype="int32")}
    # d/d log(alpha) of K log alpha + lgamma(alpha) - lgamma(alpha+n) + Gamma(2,1) terms
    from scipy.special import digamma

    a = np.exp(0.3)
    expected = a * (3 / a + digamma(a) - digamma(a + 5)) + (2 - 1) - a + 1  # +1: log-Jacobian
    assert dlogp(point)[0] == pytest.approx(expected, rel=1e-8)


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda: pmp.DirichletProcessPartition("z", alpha=-1.0, n=4), "alpha"),
        (lambda: pmp.DirichletProcessPartition("z", alpha=1.0, n=0), "n"),
        (lambda: pmp.DirichletProcessPartition("z", alpha=1.0, n=3.5), "n"),
        (lambda: pmp.DirichletProcessPartition("z", alpha=np.nan, n=3), "alpha"),
        (lambda: pmp.PitmanYorPartition("z", alpha=1.0, sigma=1.2, n=4), "sigma"),
        (lambda: pmp.PitmanYorPartition("z", alpha=-0.5, sigma=0.2, n=4), "alpha"),
        (lambda: pmp.NGGPartition("z", alpha=1.0, sigma=0.0, tau=1.0, u=1.0, n=4), "sigma"),
        (lambda: pmp.NGGPartition("z", alpha=1.0, sigma=0.5, tau=-1.0, u=1.0, n=4), "tau"),
        (lambda: pmp.NGGPartition("z", alpha=1.0, sigma=0.5, tau=1.0, u=-1.0, n=4), "u"),
        (lambda: pmp.MixtureOfFiniteMixturesPartition("z", gamma=1.0, k_prior=[0.5, 0.2], n=4), "k_prior"),
        (lambda: pmp.MixtureOfFiniteMixturesPartition("z", gamma=0.0, k_prior=[1.0], n=4), "gamma"),
        (lambda: pmp.DirichletProcessPartition("z", alpha=np.ones(2), n=4), "alpha"),
    ],
)
def test_bad_prior_input(build, match):
    with pm.Model():
        with pytest.raises((ValueError, TypeError), match=match):
            build()
