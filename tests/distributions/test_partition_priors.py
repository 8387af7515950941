"""Partition priors: the PyTensor logp is a normalised EPPF, matches the numba
``log V``/``log W``, and random draws (``pymc_partitions.prior_draws``) follow it."""

import math
import subprocess
import sys

import numpy as np
import pymc as pm
import pytest
from exact import partition_ids, set_partitions
from pymc.distributions.distribution import support_point
from scipy import stats
from scipy.special import gammaln, logsumexp

import pymc_partitions as pmp
from pymc_partitions import prior_draws, priors
from pymc_partitions.distributions import partitions

pytestmark = pytest.mark.pytensor_python  # PyTensor without C: conftest.py

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


def ngg_given_u(u):
    return lambda n: pmp.NGGPartition("z", alpha=1.3, sigma=0.4, tau=0.9, u=u, n=n)


PRIORS = {"dp": dp, "py": py, "mfm": mfm}
ALL_PRIORS = {**PRIORS, "ngg": ngg}


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


def assert_canonical(z, n):
    """int32 labels in order of first appearance: ``z[..., 0] = 0``, ``z[..., i] <= max(z[..., :i]) + 1``."""
    z = np.asarray(z)
    assert z.dtype == np.int32 and z.shape[-1] == n
    assert np.all(z[..., 0] == 0)
    assert np.all(z[..., 1:] <= np.maximum.accumulate(z, axis=-1)[..., :-1] + 1)


@pytest.mark.parametrize(
    "name, n",
    [("dp", 5), ("py", 5), ("mfm", 5), ("ngg", 4), ("ngg_given_u=2.3", 6), ("ngg_given_u=500", 5)],
)
def test_prior_draws_follow_eppf(name, n):
    """Chi-square goodness of fit of 10,000 ``pm.draw`` prior draws against the enumerated pmf.

    ``ngg`` draws ``(u, Pi)`` and is compared with the joint integrated over
    ``u``; ``ngg_given_u`` fixes ``u`` and is compared with the ``NGGPartition``
    logp normalised over partitions (``p(Pi | u)``, not projective in ``n``).
    """
    builder = ngg_given_u(float(name.split("=")[1])) if name.startswith("ngg_given_u") else ALL_PRIORS[name]
    with pm.Model() as model:
        builder(n)
    draws = pm.draw(model["z"], draws=10_000, random_seed=11)
    assert_canonical(draws, n)
    parts = set_partitions(n)
    counts = np.bincount(partition_ids(draws, parts), minlength=len(parts))
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


def naive_seating_log_pmf(z, theta, sigma):
    """log-probability of ``z`` under seating with join weight ``m_c - sigma`` and new weight ``theta``."""
    sizes = [1]
    log_p = 0.0
    for i, c in enumerate(z[1:], start=1):
        total = i - len(sizes) * sigma + theta
        if c == len(sizes):
            log_p += np.log(theta / total)
            sizes.append(1)
        else:
            log_p += np.log((sizes[c] - sigma) / total)
            sizes[c] += 1
    return log_p


def test_ngg_given_u_draws_are_not_the_naive_seating():
    """The chi-square test has power against CRP-style seating with ``theta``, the projective
    rule that ``p(Pi | u)`` does not follow (TV 0.13 from the exact law at n = 6, u = 2.3)."""
    n, alpha, sigma, tau, u = 6, 1.3, 0.4, 0.9, 2.3
    theta = alpha * sigma * (u + tau) ** sigma
    rng = np.random.default_rng(3)
    parts = set_partitions(n)
    draws = [prior_draws.ngg_partition(n, alpha, sigma, tau, u, rng) for _ in range(10_000)]
    counts = np.bincount(partition_ids(draws, parts), minlength=len(parts))
    naive = np.exp([naive_seating_log_pmf(z, theta, sigma) for z in parts])
    assert naive.sum() == pytest.approx(1.0)
    _, log_pmf = log_pmf_table(ngg_given_u(u), n)
    exact = np.exp(log_pmf - logsumexp(log_pmf))
    assert stats.chisquare(counts, exact * counts.sum()).pvalue > 1e-4
    assert stats.chisquare(counts, naive * counts.sum()).pvalue < 1e-12


def log_block_sums(n, log_w):
    """``log sum_{Pi: K blocks} prod_c W(|c|)`` for ``K = 0..n``, by the block of item 1.

    ``Z(m, k) = sum_s C(m-1, s-1) W(s) Z(m-s, k-1)``, ``Z(0, 0) = 1``: a
    recursion over block sizes, O(n^2) per ``k``, independent of the seating
    construction of ``prior_draws``.
    """
    m = np.arange(n + 1)[:, None]
    s = np.arange(1, n + 1)[None, :]
    with np.errstate(invalid="ignore"):
        log_choose = gammaln(m) - gammaln(s) - gammaln(m - s + 1)
    first_block = np.where(s <= m, log_choose + log_w(s), -np.inf)
    rest = np.clip(m - s, 0, None)
    log_z = np.full((n + 1, n + 1), -np.inf)
    log_z[0, 0] = 0.0
    for k in range(1, n + 1):
        log_z[:, k] = logsumexp(first_block + log_z[rest, k - 1], axis=1)
    return log_z[n]


def ngg_path_weights(n, theta, sigma, k_max):
    """``log F(n, k)``, ``k = 0..k_max``, in plain numpy log space.

    ``F(1, 1) = theta``, ``F(i+1, k) = (i - k sigma) F(i, k) + theta F(i, k-1)``.
    """
    k = np.arange(k_max + 1)
    log_f = np.full(k_max + 1, -np.inf)
    log_f[1] = np.log(theta)
    for i in range(1, n):
        with np.errstate(divide="ignore"):
            join = log_f + np.log(np.maximum(i - k * sigma, 0.0))
        log_f = np.concatenate([[-np.inf], np.logaddexp(join[1:], log_f[:-1] + np.log(theta))])
    return log_f


def ngg_completion_weights(n, rows, theta, sigma, k_max):
    """``{i: log h(i, .)}`` for ``i`` in ``rows``, ``k = 0..k_max``: total weight of the seatings of items
    ``i+1..n`` from ``k`` clusters, ``h(n, k) = 1``, ``h(j, k) = (j - k sigma) h(j+1, k) + theta h(j+1, k+1)``
    (paths above ``k_max`` dropped)."""
    k = np.arange(k_max + 1)
    log_h = np.zeros(k_max + 1)
    saved = {}
    for j in range(n - 1, min(rows) - 1, -1):
        with np.errstate(divide="ignore"):
            join = log_h + np.log(np.maximum(j - k * sigma, 0.0))
        log_h = np.logaddexp(join, np.append(log_h[1:], -np.inf) + np.log(theta))
        if j in rows:
            saved[j] = log_h
    return saved


def binned_chisquare_pvalue(values, pmf, min_expected=10.0):
    """Chi-square p-value of integer draws against ``pmf`` (over ``0..len(pmf)-1``), adjacent values
    pooled left to right until each bin expects at least ``min_expected`` draws."""
    expected = pmf * len(values)
    observed = np.bincount(values, minlength=len(pmf))[: len(pmf)]
    assert observed.sum() == len(values)
    bins_expected, bins_observed, e, o = [], [], 0.0, 0
    for e_k, o_k in zip(expected, observed):
        e, o = e + e_k, o + o_k
        if e >= min_expected:
            bins_expected.append(e)
            bins_observed.append(o)
            e, o = 0.0, 0
    bins_expected[-1] += e
    bins_observed[-1] += o
    return stats.chisquare(bins_observed, bins_expected).pvalue


NGG_U = {"ngg_u=50": (1.3, 0.4, 0.9, 50.0), "ngg_u=400": (1.3, 0.8, 0.9, 400.0)}


def draw_cluster_counts(name, n, draws, rng):
    if name in NGG_U:
        return np.array([prior_draws.ngg_partition(n, *NGG_U[name], rng).max() + 1 for _ in range(draws)])
    one = {
        "dp": lambda: prior_draws.dirichlet_process_partition(n, 1.7, rng),
        "py": lambda: prior_draws.pitman_yor_partition(n, 0.8, 0.35, rng),
        "mfm": lambda: prior_draws.mixture_of_finite_mixtures_partition(n, 0.7, np.log(K_PRIOR), rng),
    }[name]
    return np.array([one().max() + 1 for _ in range(draws)])


@pytest.mark.parametrize("name", ["dp", "py", "mfm", "ngg_u=50", "ngg_u=400"])
def test_cluster_count_of_draws_matches_block_recursion(name):
    """n = 300: the law of K from 2,000 draws against ``P(K = k) ∝ V(n, k) sum_{K = k} prod_c W(|c|)``.

    The sum over partitions comes from :func:`log_block_sums`, ``V`` from
    ``priors.log_v`` (itself checked against the PyTensor logp above).  With
    ``u = 400`` (sigma = 0.8, E K = 155) the NGG draw doubles its truncation
    level from 64 to 256 and folds its forward filter many times.
    """
    n = 300
    code, params, table = {
        "dp": (priors.DP, np.array([1.7]), priors.empty_table()),
        "py": (priors.PY, np.array([0.8, 0.35]), priors.empty_table()),
        "mfm": (priors.MFM, np.array([0.7]), priors.mfm_log_v_table(0.7, np.log(K_PRIOR), n)),
        **{key: (priors.NGGP, np.array(value), priors.empty_table()) for key, value in NGG_U.items()},
    }[name]
    log_w = np.vectorize(lambda m: priors.log_w(code, params, int(m)))
    k = np.arange(1, n + 1)
    log_v = np.array([priors.log_v(code, params, table, n, int(j)) for j in k])
    log_pk = np.concatenate([[-np.inf], log_block_sums(n, log_w)[1:] + log_v])
    pmf = np.exp(log_pk - logsumexp(log_pk))
    counts = draw_cluster_counts(name, n, 2000, np.random.default_rng(21))
    assert binned_chisquare_pvalue(counts, pmf) > 1e-4
    if name in NGG_U:
        theta = params[0] * params[1] * (params[3] + params[2]) ** params[1]
        log_f = ngg_path_weights(n, theta, params[1], n)
        np.testing.assert_allclose(np.exp(log_f - logsumexp(log_f)), pmf, rtol=0, atol=1e-12)


@pytest.mark.parametrize(
    "n, alpha, sigma, tau, u, draws",
    [(20_000, 1.3, 0.4, 0.9, 3.0e4, 300), (5_000, 5000.0, 0.1, 1.0, 1023.0, 150)],
)
def test_ngg_draws_far_above_the_old_limit(n, alpha, sigma, tau, u, draws):
    """NGG given u at n = 20,000 (the old O(n^2) draw refused n > 5000) and at n = 5000 with theta = 1000.

    Every draw is canonical.  ``K`` follows ``P(K = k) ∝ F(n, k)``, computed in
    plain numpy log space (:func:`ngg_path_weights`, equal to the independent
    block recursion in the previous test); this checks the forward filter and
    its truncation.  The number ``K_i`` of clusters among the first ``i`` items
    follows ``P(K_i = k) ∝ F(i, k) h(i, k)`` with the completion weights ``h``
    (:func:`ngg_completion_weights`); this checks the backward pass, inside
    and at the end of the first block of ``ceil(sqrt(n))`` rows and later on.
    The first case (E K = 80) doubles the truncation level; in the second
    (E K = 1778) almost every item of the first block opens a cluster, more
    than ``BAND``, so the backward pass recomputes that block for a second band.
    """
    theta = alpha * sigma * (u + tau) ** sigma
    rng = np.random.default_rng(5)
    z = np.array([prior_draws.ngg_partition(n, alpha, sigma, tau, u, rng) for _ in range(draws)])
    assert_canonical(z, n)
    counts = z.max(axis=1) + 1
    assert np.mean(counts > prior_draws.FIRST_K_CAP) > 0.5
    k_max = min(n, 3 * counts.max())
    log_f = ngg_path_weights(n, theta, sigma, k_max)
    pmf = np.exp(log_f - logsumexp(log_f))
    assert pmf[-1] < 1e-30
    assert binned_chisquare_pvalue(counts, pmf) > 1e-4
    block = math.ceil(math.sqrt(n))
    rows = (block // 2, block + 1, n // 3)
    log_h = ngg_completion_weights(n, rows, theta, sigma, k_max)
    for i in rows:
        log_pi = ngg_path_weights(i, theta, sigma, k_max) + log_h[i]
        assert binned_chisquare_pvalue(z[:, :i].max(axis=1) + 1, np.exp(log_pi - logsumexp(log_pi))) > 1e-4
    if theta > 100:
        assert np.mean(z[:, : block + 1].max(axis=1) >= prior_draws.BAND + 1) > 0.5


@pytest.mark.parametrize("sigma, u", [(0.8, 1.0e4), (0.2, 1.0e12)])
@pytest.mark.parametrize("block", [45, 2000])
def test_ngg_forward_filter_keeps_relative_precision(sigma, u, block):
    """Folding keeps every entry of ``F(n, .)`` to float64 relative precision, however far below the maximum.

    ``log F(n, k) - max_k log F(n, k)`` reaches below ``-1900`` here (far outside
    the float64 range) and matches plain numpy log space.  With ``block = n``
    there is no checkpoint after row 1, so only the folds forced by the
    ``MIN_RATIO`` bound keep the entries in range.
    """
    n, alpha, tau = 2000, 1.3, 0.9
    theta = alpha * sigma * (u + tau) ** sigma
    checkpoints = np.empty(((n - 1 + block - 1) // block, n + 1))
    r, tail = prior_draws._forward_filter(n, n, theta, sigma, block, checkpoints)
    assert tail == 0.0
    log_f = ngg_path_weights(n, theta, sigma, n)
    reference = log_f[1:] - log_f.max()
    assert reference.min() < -1900
    np.testing.assert_allclose(r[1:], reference, rtol=0, atol=1e-8)


def test_ngg_truncation_is_exact_below_k_cap_and_bounded_above():
    """Truncating the forward filter at ``k_cap`` leaves ``F(n, k)``, ``k <= k_cap``, exact (paths never
    lose clusters), and ``_truncation_bound`` is at least the true ``P(K > k_cap) / P(K <= k_cap)``."""
    n, theta, sigma = 2000, 20.0, 0.4
    block = math.ceil(math.sqrt(n))
    log_f = ngg_path_weights(n, theta, sigma, n)
    for k_cap in (80, 100, 130):
        r, tail = prior_draws._forward_filter(n, k_cap, theta, sigma, block, np.empty((block, k_cap + 1)))
        below = log_f[1 : k_cap + 1] - logsumexp(log_f[1 : k_cap + 1])
        np.testing.assert_allclose(r[1:] - logsumexp(r[1:]), below, rtol=0, atol=1e-8)
        odds_above = np.exp(logsumexp(log_f[k_cap + 1 :]) - logsumexp(log_f[1 : k_cap + 1]))
        assert 1e-30 < odds_above <= prior_draws._truncation_bound(r, tail) * (1 + 1e-9)


def test_ngg_backward_band_does_not_change_the_draw():
    """Keeping one ``k`` per row (a recomputation of the block after every opening) or ``BAND`` of them
    gives the same path bit for bit under the same seed: the band only selects which join probabilities
    are kept.  ``theta`` is large enough that most blocks hold several openings."""
    n, theta, sigma = 3000, 40.0, 0.3
    block = math.ceil(math.sqrt(n))
    checkpoints, r = prior_draws._filter_to_tolerance(n, theta, sigma, block)
    paths = [
        prior_draws._sample_openings_backward(checkpoints, r, n, theta, sigma, block, band, np.random.default_rng(9))
        for band in (1, 2, prior_draws.BAND)
    ]
    assert paths[0].sum() > 100
    np.testing.assert_array_equal(paths[0], paths[1])
    np.testing.assert_array_equal(paths[0], paths[2])


def test_prior_draws_reproducible():
    """Same seed, same draws (through ``pm.draw`` and the numba functions); another seed, other draws."""
    for builder in ALL_PRIORS.values():
        with pm.Model() as model:
            builder(200)
        first = pm.draw(model["z"], draws=3, random_seed=7)
        assert_canonical(first, 200)
        np.testing.assert_array_equal(first, pm.draw(model["z"], draws=3, random_seed=7))
        assert not np.array_equal(first, pm.draw(model["z"], draws=3, random_seed=8))
    calls = [
        lambda rng: prior_draws.dirichlet_process_partition(1000, 1.7, rng),
        lambda rng: prior_draws.pitman_yor_partition(1000, 0.8, 0.35, rng),
        lambda rng: prior_draws.mixture_of_finite_mixtures_partition(1000, 0.7, np.log(K_PRIOR), rng),
        lambda rng: prior_draws.ngg_partition(1000, 1.3, 0.4, 0.9, 700.0, rng),
    ]
    for call in calls:
        np.testing.assert_array_equal(call(np.random.default_rng(4)), call(np.random.default_rng(4)))


@pytest.mark.parametrize("name", list(ALL_PRIORS))
def test_batched_size_draws(name):
    build = {
        "dp": lambda size: pmp.DirichletProcessPartition.dist(alpha=1.7, n=6, size=size),
        "py": lambda size: pmp.PitmanYorPartition.dist(alpha=0.8, sigma=0.35, n=6, size=size),
        "mfm": lambda size: pmp.MixtureOfFiniteMixturesPartition.dist(gamma=0.7, k_prior=K_PRIOR, n=6, size=size),
        "ngg": lambda size: pmp.NGGPartition.dist(alpha=1.3, sigma=0.4, tau=0.9, u=2.3, n=6, size=size),
    }[name]
    draws = pm.draw(build((2, 3)), random_seed=1)
    assert draws.shape == (2, 3, 6)
    assert_canonical(draws, 6)
    assert len({tuple(z) for z in draws.reshape(-1, 6)}) > 1


RV_TYPES = {
    "dp": partitions.DirichletProcessPartitionRV,
    "py": partitions.PitmanYorPartitionRV,
    "mfm": partitions.MixtureOfFiniteMixturesPartitionRV,
    "ngg": partitions.NGGPartitionRV,
}


@pytest.mark.parametrize("name", list(ALL_PRIORS))
def test_initial_point_does_not_draw(name, monkeypatch):
    """The initial point (one cluster) is built from ``n``: it must not evaluate the random draw."""

    def no_draws(cls, *args):
        raise AssertionError("the initial point evaluated a prior draw")

    monkeypatch.setattr(RV_TYPES[name], "rng_fn", classmethod(no_draws))
    with pm.Model() as model:
        ALL_PRIORS[name](50)
    np.testing.assert_array_equal(model.initial_point()["z"], np.zeros(50, dtype=np.int32))
    batched = pmp.DirichletProcessPartition.dist(alpha=1.0, n=5, size=(2, 3)) if name == "dp" else None
    if batched is not None:
        np.testing.assert_array_equal(support_point(batched).eval(), np.zeros((2, 3, 5), dtype=np.int32))


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda rng: prior_draws.dirichlet_process_partition(0, 1.0, rng), "n"),
        (lambda rng: prior_draws.dirichlet_process_partition(5, 0.0, rng), "alpha"),
        (lambda rng: prior_draws.pitman_yor_partition(5, 1.0, 1.0, rng), "sigma"),
        (lambda rng: prior_draws.pitman_yor_partition(5, -0.5, 0.2, rng), "alpha"),
        (lambda rng: prior_draws.mixture_of_finite_mixtures_partition(5, np.nan, np.zeros(1), rng), "gamma"),
        (lambda rng: prior_draws.mixture_of_finite_mixtures_partition(5, 1.0, np.full(3, -np.inf), rng), "log_k_prior"),
        (lambda rng: prior_draws.ngg_partition(5, 1.0, 0.0, 1.0, 1.0, rng), "sigma"),
        (lambda rng: prior_draws.ngg_partition(5, 1.0, 0.5, -1.0, 1.0, rng), "tau"),
        (lambda rng: prior_draws.ngg_partition(5, 1.0, 0.5, 1.0, np.inf, rng), "u"),
    ],
)
def test_bad_prior_draw_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call(np.random.default_rng(0))


def test_prior_draws_import_without_pymc():
    """``prior_draws`` is pure numba + numpy: it loads with PyMC and PyTensor unavailable."""
    code = (
        "import importlib.util, sys\n"
        "sys.modules['pymc'] = sys.modules['pytensor'] = None\n"
        f"spec = importlib.util.spec_from_file_location('prior_draws', {prior_draws.__file__!r})\n"
        "spec.loader.exec_module(importlib.util.module_from_spec(spec))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]


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


def test_ngg_auxiliary_draws_with_small_sigma():
    """Small sigma puts u at astronomically large values: the draws (computed in logarithms) still follow the
    density, and a draw beyond the largest float is a named error, never ``inf``."""
    n = 3
    with pm.Model() as model:
        u = pmp.NGGAuxiliary("u", alpha=1.0, sigma=0.02, tau=1.0, n=n)
        pmp.NGGPartition("z", alpha=1.0, sigma=0.02, tau=1.0, u=u, n=n)
    log_u = np.log(pm.draw(model["u"], draws=2000, random_seed=6))
    assert np.all(np.isfinite(log_u)) and np.median(log_u) > 20
    logp = model.compile_logp()
    grid = np.linspace(log_u.min() - 20, log_u.max() + 20, 4001)
    log_dens = np.array([logsumexp([logp({"z": z, "u_log__": g}) for z in set_partitions(n)]) for g in grid])
    cdf = np.cumsum(np.exp(log_dens - logsumexp(log_dens)))
    assert stats.kstest(log_u, lambda x: np.interp(x, grid, cdf)).pvalue > 1e-4
    with pytest.raises(ValueError, match="beyond the largest float.*sigma=0.001"):
        pm.draw(pmp.NGGAuxiliary.dist(alpha=0.001, sigma=0.001, tau=1.0, n=74), random_seed=1)  # log u ~ 5000


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


# Hyperparameters given priors that reach outside their support; ``in_support`` checks the trace.
UNBOUNDED_HYPERPARAMETERS = {
    "dp": (
        lambda n: pmp.DirichletProcessPartition("z", alpha=pm.Normal("alpha", 0.3, 1.0), n=n),
        lambda post: post["alpha"] > 0,
    ),
    "py": (
        lambda n: pmp.PitmanYorPartition(
            "z", alpha=pm.Normal("alpha", 0.0, 1.0), sigma=pm.Normal("sigma", 0.3, 0.5), n=n
        ),
        lambda post: (post["sigma"] >= 0) & (post["sigma"] < 1) & (post["alpha"] > -post["sigma"]),
    ),
    "ngg": (
        lambda n: pmp.NGGPartition(
            "z",
            alpha=1.0,
            sigma=pm.Normal("sigma", 0.3, 0.5),
            tau=pm.Normal("tau", 0.2, 1.0),
            u=pmp.NGGAuxiliary("u", alpha=1.0, sigma=0.3, tau=1.0, n=n),
            n=n,
        ),
        lambda post: (post["sigma"] > 0) & (post["sigma"] < 1) & (post["tau"] >= 0),
    ),
    "mfm": (
        lambda n: pmp.MixtureOfFiniteMixturesPartition("z", gamma=pm.Normal("gamma", 0.3, 1.0), k_prior=K_PRIOR, n=n),
        lambda post: post["gamma"] > 0,
    ),
}


@pytest.mark.parametrize("sampler", ["slice", "nuts"])
@pytest.mark.parametrize("name", list(UNBOUNDED_HYPERPARAMETERS))
def test_samplers_never_record_hyperparameters_outside_the_support(name, sampler):
    """``pm.Slice`` and NUTS see ``-inf`` outside the support and never accept such a value.

    When the log density there was NaN, ``pm.Slice`` accepted ``alpha = -5.7``
    for a Dirichlet process, and the partition step then stopped the run.
    """
    build, in_support = UNBOUNDED_HYPERPARAMETERS[name]
    X = np.random.default_rng(4).normal(size=(8, 1))
    with pm.Model() as model:
        z = build(len(X))
        pmp.NormalGammaMixture("x", partition=z, observed=X)
        continuous = [v for v in model.free_RVs if v is not z]
        step = [pmp.GibbsStep(z), pm.Slice(continuous) if sampler == "slice" else pm.NUTS(continuous)]
        idata = pm.sample(
            step=step, draws=150, tune=50, chains=1, random_seed=3, progressbar=False, compute_convergence_checks=False
        )
    posterior = {k: v.values.ravel() for k, v in idata["posterior"].items() if k != "z"}
    assert np.all(in_support(posterior))
