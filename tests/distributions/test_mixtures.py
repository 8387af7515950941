"""Observation models given a partition: exact log marginal likelihood, draws, validation.

The reference log marginals are computed independently, by the chain rule of
posterior predictives from ``scipy.stats`` (beta-binomial, Student t,
multivariate t, Dirichlet-multinomial, negative binomial), and for one tiny
case by numerical integration.
"""

import functools

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import pytest
from scipy import integrate, stats
from scipy.special import gammaln

from pymc_partitions.families import (
    BETA_BERNOULLI,
    CATEGORICAL,
    DIRICHLET_MULTINOMIAL,
    GAMMA_POISSON,
    NORMAL_GAMMA,
    NORMAL_INVERSE_WISHART,
)
from pymc_partitions.distributions.mixtures import (
    BetaBernoulliMixture,
    CategoricalMixture,
    DirichletMultinomialMixture,
    GammaPoissonMixture,
    NormalGammaMixture,
    NormalInverseWishartMixture,
    PartitionMixtureRV,
    mixture_spec,
    observed_data,
)

pytestmark = pytest.mark.pytensor_python  # PyTensor without C: conftest.py

N, D = 7, 3
LABELS = np.array([0, 0, 4, 4, 4, 6, 0])  # labels 1, 2, 3, 5 unused


# --------------------------------------------------------------------------- references


def _chain_rule(X, z, log_predictive):
    """sum_i log p(x_i | items of its cluster seen before), cluster by cluster."""
    total = 0.0
    for k in np.unique(z):
        seen = np.empty((0, X.shape[1]))
        for x in X[z == k]:
            total += log_predictive(x, seen)
            seen = np.vstack([seen, x])
    return total


def ref_beta_bernoulli(X, z, a, b):
    def pred(x, seen):
        s, m = seen.sum(axis=0), seen.shape[0]
        return stats.betabinom(1, a + s, b + m - s).logpmf(x).sum()

    return _chain_rule(X, z, pred)


def ref_normal_gamma(X, z, mu0, kappa0, a0, b0):
    def pred(x, seen):
        m = seen.shape[0]
        xbar = seen.mean(axis=0) if m else np.zeros(X.shape[1])
        kn, an = kappa0 + m, a0 + m / 2
        mun = (kappa0 * mu0 + seen.sum(axis=0)) / kn
        bn = b0 + 0.5 * ((seen - xbar) ** 2).sum(axis=0) + kappa0 * m * (xbar - mu0) ** 2 / (2 * kn)
        return stats.t(df=2 * an, loc=mun, scale=np.sqrt(bn * (kn + 1) / (an * kn))).logpdf(x).sum()

    return _chain_rule(X, z, pred)


def ref_niw(X, z, mu0, kappa0, nu0, psi0):
    d = X.shape[1]

    def pred(x, seen):
        m = seen.shape[0]
        kn, nun = kappa0 + m, nu0 + m
        mun = (kappa0 * mu0 + seen.sum(axis=0)) / kn
        psin = psi0 + seen.T @ seen + kappa0 * np.outer(mu0, mu0) - kn * np.outer(mun, mun)
        df = nun - d + 1
        return stats.multivariate_t(loc=mun, shape=psin * (kn + 1) / (kn * df), df=df).logpdf(x)

    return _chain_rule(X, z, pred)


def ref_dirichlet_multinomial(X, z, beta):
    def pred(x, seen):
        alpha = beta + seen.sum(axis=0)
        return stats.dirichlet_multinomial(alpha, int(x.sum())).logpmf(x)

    return _chain_rule(X, z, pred)


def ref_categorical(X, z, beta, n_categories):
    def pred(x, seen):
        total = 0.0
        for j, c in enumerate(n_categories):
            count = np.sum(seen[:, j] == x[j])
            total += np.log((beta[j] + count) / (c * beta[j] + seen.shape[0]))
        return total

    return _chain_rule(X, z, pred)


def ref_gamma_poisson(X, z, a, b):
    def pred(x, seen):
        s, m = seen.sum(axis=0), seen.shape[0]
        return stats.nbinom(a + s, (b + m) / (b + m + 1)).logpmf(x).sum()

    return _chain_rule(X, z, pred)


# --------------------------------------------------------------------------- cases


def _categories(d):
    return np.arange(d) % 3 + 2  # 2, 3, 4, 2, ... values per feature


def _data(family, rng, n=N, d=D):
    if family == CATEGORICAL:
        return np.stack([rng.integers(0, c, size=n) for c in _categories(d)], axis=1).astype(float)
    if family == BETA_BERNOULLI:
        return (rng.random((n, d)) < 0.4).astype(float)
    if family in (DIRICHLET_MULTINOMIAL, GAMMA_POISSON):
        return rng.poisson(2.0, size=(n, d)).astype(float)
    return rng.normal(1.0, 2.0, size=(n, d))


def _case(family, d=D):
    """(distribution class, hyperparameters, reference function) with non-trivial hyperparameters."""
    if family == BETA_BERNOULLI:
        h = dict(a=np.linspace(0.5, 2.0, d), b=1.3)
        return BetaBernoulliMixture, h, lambda X, z: ref_beta_bernoulli(X, z, h["a"], h["b"])
    if family == NORMAL_GAMMA:
        h = dict(mu0=np.linspace(-1.0, 1.0, d), kappa0=0.7, a0=np.linspace(1.5, 3.0, d), b0=2.0)
        return NormalGammaMixture, h, lambda X, z: ref_normal_gamma(X, z, h["mu0"], h["kappa0"], h["a0"], h["b0"])
    if family == NORMAL_INVERSE_WISHART:
        A = np.eye(d) + 0.3 * np.ones((d, d))
        h = dict(mu0=np.linspace(-1.0, 1.0, d), kappa0=0.5, nu0=d + 0.5, Psi0=A)
        return NormalInverseWishartMixture, h, lambda X, z: ref_niw(X, z, h["mu0"], h["kappa0"], h["nu0"], h["Psi0"])
    if family == DIRICHLET_MULTINOMIAL:
        h = dict(beta=np.linspace(0.3, 2.0, d))
        return DirichletMultinomialMixture, h, lambda X, z: ref_dirichlet_multinomial(X, z, h["beta"])
    if family == CATEGORICAL:
        h = dict(beta=np.linspace(0.4, 2.5, d), n_categories=_categories(d))
        return CategoricalMixture, h, lambda X, z: ref_categorical(X, z, h["beta"], h["n_categories"])
    h = dict(a=np.linspace(0.5, 3.0, d), b=0.8)
    return GammaPoissonMixture, h, lambda X, z: ref_gamma_poisson(X, z, h["a"], h["b"])


FAMILIES = [BETA_BERNOULLI, NORMAL_GAMMA, NORMAL_INVERSE_WISHART, DIRICHLET_MULTINOMIAL, GAMMA_POISSON, CATEGORICAL]


_SIGNATURES = {  # hyperparameter name -> number of dimensions in canonical form
    BetaBernoulliMixture: dict(a=1, b=1),
    NormalGammaMixture: dict(mu0=1, kappa0=1, a0=1, b0=1),
    NormalInverseWishartMixture: dict(mu0=1, kappa0=0, nu0=0, Psi0=2),
    DirichletMultinomialMixture: dict(beta=1),
    GammaPoissonMixture: dict(a=1, b=1),
    CategoricalMixture: dict(beta=1),
}
_CONSTANTS = {"totals", "n_categories"}
"""Hyperparameters that are constants of the model (not inputs of the compiled logp)."""


@functools.lru_cache(maxsize=None)
def _compiled_logp(cls, d):
    """One compiled logp per family and d, with labels, data and hyperparameters as inputs.

    Compiling a fresh graph for every case would dominate the test time.
    """
    z = pt.vector("z", dtype="int64")
    X = pt.matrix("X")
    hypers = {name: pt.tensor(name, shape=(None,) * ndim) for name, ndim in _SIGNATURES[cls].items()}
    extra = dict(totals=np.zeros(1, dtype=int)) if cls is DirichletMultinomialMixture else {}
    if cls is CategoricalMixture:
        extra = dict(n_categories=_categories(d))
    rv = cls.dist(z, d=d, **hypers, **extra)
    return pytensor.function([z, X, *hypers.values()], pm.logp(rv, X))


def _logp(cls, z, X, **hypers):
    """Log marginal likelihood of data X under labels z (hyperparameters broadcast to canonical shapes)."""
    X = np.asarray(X, dtype=float).reshape(len(z), -1)
    d = X.shape[1]
    values = []
    for name, ndim in _SIGNATURES[cls].items():
        value = np.asarray(hypers[name], dtype=float)
        values.append(np.broadcast_to(value, (d,) * ndim) if ndim < 2 else np.atleast_2d(value))
    return float(_compiled_logp(cls, d)(np.asarray(z, dtype="int64"), X, *values))


def _model_logp(cls, z, X, mode=None, **hypers):
    """The same through pm.Model / compile_logp (the path samplers use)."""
    with pm.Model() as model:
        cls("x", partition=pt.as_tensor(np.asarray(z, dtype="int64")), observed=X, **hypers)
    return float(model.compile_logp(mode=mode)({}))


@pytest.mark.parametrize("family", FAMILIES)
def test_logp_matches_chain_rule_of_predictives(family):
    rng = np.random.default_rng(family)
    X = _data(family, rng)
    cls, hypers, ref = _case(family)
    expected = ref(X, LABELS)
    np.testing.assert_allclose(_logp(cls, LABELS, X, **hypers), expected, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(_model_logp(cls, LABELS, X, **hypers), expected, rtol=1e-9, atol=1e-9)
    # all in one cluster, all singletons
    for z in (np.zeros(N, dtype=int), np.arange(N)):
        np.testing.assert_allclose(_logp(cls, z, X, **hypers), ref(X, z), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("family", FAMILIES)
def test_label_permutation_and_empty_clusters(family):
    rng = np.random.default_rng(10 + family)
    X = _data(family, rng)
    cls, hypers, _ = _case(family)
    base = _logp(cls, LABELS, X, **hypers)
    relabel = rng.permutation(N)  # a bijection of 0..n-1: different labels and empty slots
    np.testing.assert_allclose(_logp(cls, relabel[LABELS], X, **hypers), base, rtol=1e-12)
    # the same partition with labels in order of first appearance (no gaps)
    canonical = np.unique(LABELS, return_inverse=True)[1]
    np.testing.assert_allclose(_logp(cls, canonical, X, **hypers), base, rtol=1e-12)
    # empty clusters contribute nothing: the sum over occupied clusters of single-cluster logps
    parts = sum(_logp(cls, np.zeros((LABELS == k).sum(), int), X[LABELS == k], **hypers) for k in np.unique(LABELS))
    np.testing.assert_allclose(base, parts, rtol=1e-10)


@pytest.mark.parametrize("family", FAMILIES)
def test_one_dimensional_observed(family):
    rng = np.random.default_rng(20 + family)
    X = _data(family, rng, d=1)
    cls, hypers, ref = _case(family, d=1)
    if family == NORMAL_INVERSE_WISHART:
        hypers["Psi0"] = np.array([[1.7]])
    value = _model_logp(cls, LABELS, X[:, 0], mode="FAST_COMPILE", **hypers)
    np.testing.assert_allclose(value, _logp(cls, LABELS, X, **hypers), rtol=1e-12)
    if family == DIRICHLET_MULTINOMIAL:  # one category: x_i = N_i with probability 1
        np.testing.assert_allclose(value, 0.0, atol=1e-12)
    else:
        np.testing.assert_allclose(value, ref(X, LABELS), rtol=1e-9)


def test_niw_in_one_dimension_is_normal_gamma():
    """IW(nu0, psi0) on sigma^2 is Gamma(nu0/2, rate psi0/2) on the precision."""
    X = np.random.default_rng(3).normal(size=(N, 1))
    niw = _logp(NormalInverseWishartMixture, LABELS, X, mu0=0.4, kappa0=0.3, nu0=2.5, Psi0=[[1.6]])
    ng = _logp(NormalGammaMixture, LABELS, X, mu0=0.4, kappa0=0.3, a0=1.25, b0=0.8)
    np.testing.assert_allclose(niw, ng, rtol=1e-12)


def test_normal_gamma_by_numerical_integration():
    x = np.array([0.3, 1.1])
    mu0, kappa0, a0, b0 = 0.5, 0.8, 2.0, 1.5

    def integrand(mu, lam):  # Gamma(lam) * N(mu | mu0, 1/(kappa0 lam)) * prod_i N(x_i | mu, 1/lam)
        log_prior = a0 * np.log(b0) - gammaln(a0) + (a0 - 1) * np.log(lam) - b0 * lam
        log_prior += 0.5 * np.log(kappa0 * lam / (2 * np.pi)) - 0.5 * kappa0 * lam * (mu - mu0) ** 2
        log_lik = np.sum(0.5 * np.log(lam / (2 * np.pi)) - 0.5 * lam * (x - mu) ** 2)
        return np.exp(log_prior + log_lik)

    value, _ = integrate.dblquad(integrand, 0, 40, -15, 15, epsabs=1e-13, epsrel=1e-10)
    got = _logp(NormalGammaMixture, [0, 0], x, mu0=mu0, kappa0=kappa0, a0=a0, b0=b0)
    np.testing.assert_allclose(got, np.log(value), rtol=1e-7)


def test_normal_models_are_stable_far_from_the_origin():
    rng = np.random.default_rng(4)
    X = 1e4 + rng.normal(size=(N, 2))
    cls, hypers, ref = _case(NORMAL_INVERSE_WISHART, d=2)
    expected = ref_niw(X - 1e4, LABELS, hypers["mu0"], hypers["kappa0"], hypers["nu0"], hypers["Psi0"])
    np.testing.assert_allclose(_logp(cls, LABELS, X, **{**hypers, "mu0": hypers["mu0"] + 1e4}), expected, rtol=1e-9)
    expected = ref_normal_gamma(X - 1e4, LABELS, 0.5, 0.7, 2.0, 1.5)
    np.testing.assert_allclose(
        _logp(NormalGammaMixture, LABELS, X, mu0=1e4 + 0.5, kappa0=0.7, a0=2.0, b0=1.5), expected, rtol=1e-9
    )


# --------------------------------------------------------------------------- hyperparameters as RVs


def _model_with_rv_hypers(family, X, z):
    d = X.shape[1]
    with pm.Model() as model:
        if family == BETA_BERNOULLI:
            a = pm.Gamma("a", 2.0, 2.0)
            x = BetaBernoulliMixture("x", partition=z, a=a, b=pm.Gamma("b", 2.0, 2.0, shape=d), observed=X)
        elif family == NORMAL_GAMMA:
            x = NormalGammaMixture(
                "x", partition=z, mu0=pm.Normal("mu0", 0, 3), kappa0=pm.Gamma("kappa0", 2.0, 2.0),
                a0=pm.Gamma("a0", 2.0, 1.0), b0=pm.Gamma("b0", 2.0, 1.0), observed=X,
            )
        elif family == NORMAL_INVERSE_WISHART:
            x = NormalInverseWishartMixture(
                "x", partition=z, mu0=pm.Normal("mu0", 0, 3, shape=d), kappa0=pm.Gamma("kappa0", 2.0, 2.0),
                nu0=d - 1 + pm.Gamma("nu_excess", 2.0, 1.0), Psi0=np.eye(d), observed=X,
            )
        elif family == DIRICHLET_MULTINOMIAL:
            x = DirichletMultinomialMixture("x", partition=z, beta=pm.Gamma("beta", 2.0, 2.0), observed=X)
        elif family == CATEGORICAL:
            x = CategoricalMixture("x", partition=z, beta=pm.Gamma("beta", 2.0, 2.0, shape=d), observed=X)
        else:
            x = GammaPoissonMixture("x", partition=z, a=pm.Gamma("a", 2.0, 1.0), b=pm.Gamma("b", 2.0, 1.0), observed=X)
    return model, x


@pytest.mark.parametrize("family", FAMILIES)
def test_hyperparameters_as_random_variables(family):
    rng = np.random.default_rng(30 + family)
    X = _data(family, rng)
    z = pt.as_tensor(LABELS.astype("int64"))
    model, x = _model_with_rv_hypers(family, X, z)
    point = model.initial_point()
    logp, dlogp = model.compile_logp(), model.compile_dlogp()
    assert np.isfinite(logp(point))
    assert np.all(np.isfinite(dlogp(point)))
    # the gradient is the derivative of the logp (central differences on the unconstrained point)
    grad, eps, flat = dlogp(point), 1e-5, []
    for name, val in point.items():
        for idx in np.ndindex(np.shape(val)):
            up, down = ({k: np.array(v, dtype=float) for k, v in point.items()} for _ in range(2))
            up[name][idx] += eps
            down[name][idx] -= eps
            flat.append((logp(up) - logp(down)) / (2 * eps))
    np.testing.assert_allclose(grad, flat, rtol=1e-5, atol=1e-6)
    # what a step method reads
    spec = mixture_spec(x)
    assert spec.family == family and spec.d == D and spec.partition is z
    assert len(spec.hypers) == len(x.owner.op.spec.kernel_hypers)
    np.testing.assert_array_equal(observed_data(model, x), X)


@pytest.mark.parametrize("family", [BETA_BERNOULLI, NORMAL_INVERSE_WISHART])
def test_nuts_on_hyperparameters_with_fixed_partition(family):
    rng = np.random.default_rng(40 + family)
    X = _data(family, rng)
    model, _ = _model_with_rv_hypers(family, X, pt.as_tensor(LABELS.astype("int64")))
    with model:
        idata = pm.sample(
            draws=20, tune=20, chains=1, cores=1, random_seed=1, progressbar=False, compute_convergence_checks=False
        )
    assert idata.posterior.sizes["draw"] == 20


# --------------------------------------------------------------------------- draws


@pytest.mark.parametrize("family", FAMILIES)
def test_draws_given_partition(family):
    cls, hypers, _ = _case(family)
    kwargs = dict(totals=np.arange(N) + 3) if family == DIRICHLET_MULTINOMIAL else {}
    rv = cls.dist(pt.as_tensor(LABELS.astype("int64")), d=D, **hypers, **kwargs)
    if family == CATEGORICAL:
        draws = pm.draw(rv, draws=50, random_seed=1)
        assert np.all(draws == np.round(draws)) and np.all(draws >= 0) and np.all(draws < _categories(D))
    assert rv.type.shape == (N, D)
    draws = pm.draw(rv, draws=50, random_seed=1)
    assert draws.shape == (50, N, D) and draws.dtype == np.float64 and np.all(np.isfinite(draws))
    if family == BETA_BERNOULLI:
        assert set(np.unique(draws)) <= {0.0, 1.0}
    if family in (DIRICHLET_MULTINOMIAL, GAMMA_POISSON):
        assert np.all(draws >= 0) and np.all(draws == np.round(draws))
    if family == DIRICHLET_MULTINOMIAL:
        np.testing.assert_array_equal(draws.sum(axis=2), np.broadcast_to(np.arange(N) + 3, (50, N)))


def test_draws_share_cluster_parameters():
    """Items of one cluster share theta: with a = b = 0.01 their draws almost surely coincide."""
    z = np.array([0, 0, 0, 5, 5, 5, 5])
    rv = BetaBernoulliMixture.dist(pt.as_tensor(z), a=0.01, b=0.01, d=20)
    draw = pm.draw(rv, random_seed=2)
    assert np.all(draw[:3] == draw[0]) and np.all(draw[3:] == draw[3])


def test_draw_from_model_with_pm_data_partition():
    X = np.random.default_rng(5).poisson(3.0, size=(N, 2)).astype(float)
    with pm.Model():
        z = pm.Data("z", LABELS.astype("int64"))
        x = DirichletMultinomialMixture("x", partition=z, beta=1.0, observed=X)
        draw = pm.draw(x, random_seed=3)
    assert draw.shape == X.shape
    np.testing.assert_array_equal(draw.sum(axis=1), X.sum(axis=1))


def test_op_class_attributes():
    ops = [c.rv_op for c in (BetaBernoulliMixture, NormalGammaMixture, NormalInverseWishartMixture,
                             DirichletMultinomialMixture, GammaPoissonMixture, CategoricalMixture)]
    assert [op.family for op in ops] == FAMILIES
    assert [len(op.spec.hypers) for op in ops] == [2, 4, 4, 2, 2, 2]  # DM: beta and the draws' totals
    assert all(isinstance(op, PartitionMixtureRV) for op in ops)


# --------------------------------------------------------------------------- bad input


def _build(cls, X=None, z=LABELS, **hypers):
    with pm.Model():
        return cls("x", partition=z, observed=X, **hypers)


BINARY = (np.random.default_rng(6).random((N, D)) < 0.5).astype(float)
COUNTS = np.random.default_rng(7).poisson(2.0, size=(N, D)).astype(float)
REAL = np.random.default_rng(8).normal(size=(N, D))


@pytest.mark.parametrize(
    "cls, X, hypers, match",
    [
        (BetaBernoulliMixture, None, {}, "observed"),
        (BetaBernoulliMixture, BINARY + 0.5, {}, "observed"),
        (NormalGammaMixture, np.where(REAL > 1, np.nan, REAL), {}, "observed"),
        (NormalGammaMixture, REAL[None], {}, "observed"),
        (GammaPoissonMixture, COUNTS - 3, {}, "observed"),
        (DirichletMultinomialMixture, COUNTS + 0.5, {}, "observed"),
        (BetaBernoulliMixture, BINARY, dict(a=0.0), "a"),
        (BetaBernoulliMixture, BINARY, dict(b=[1.0, -1.0, 1.0]), "b"),
        (BetaBernoulliMixture, BINARY, dict(a=[1.0, 2.0]), "a"),
        (NormalGammaMixture, REAL, dict(kappa0=-1.0), "kappa0"),
        (NormalGammaMixture, REAL, dict(a0=0.0), "a0"),
        (NormalGammaMixture, REAL, dict(b0=np.inf), "b0"),
        (NormalGammaMixture, REAL, dict(mu0=np.zeros(4)), "mu0"),
        (NormalInverseWishartMixture, REAL, dict(kappa0=0.0), "kappa0"),
        (NormalInverseWishartMixture, REAL, dict(nu0=D - 1.0), "nu0"),
        (NormalInverseWishartMixture, REAL, dict(Psi0=np.eye(2)), "Psi0"),
        (NormalInverseWishartMixture, REAL, dict(Psi0=np.eye(3) + np.triu(np.ones((3, 3)), 1)), "Psi0"),
        (NormalInverseWishartMixture, REAL, dict(Psi0=-np.eye(3)), "Psi0"),
        (DirichletMultinomialMixture, COUNTS, dict(beta=-0.5), "beta"),
        (GammaPoissonMixture, COUNTS, dict(a=0.0), "a"),
        (GammaPoissonMixture, COUNTS, dict(b=-1.0), "b"),
        (CategoricalMixture, COUNTS - 1, {}, "observed"),
        (CategoricalMixture, COUNTS + 0.5, {}, "observed"),
        (CategoricalMixture, COUNTS, dict(beta=0.0), "beta"),
        (CategoricalMixture, COUNTS, dict(n_categories=[9, 9]), "n_categories"),
        (CategoricalMixture, COUNTS, dict(n_categories=[9, 0, 9]), "n_categories"),
        (CategoricalMixture, np.minimum(COUNTS, 3), dict(n_categories=[3, 4, 4]), "codes of feature 0"),
    ],
)
def test_bad_input_raises_value_error(cls, X, hypers, match):
    with pytest.raises(ValueError, match=match):
        _build(cls, X, **hypers)


def test_bad_partition():
    with pytest.raises(ValueError, match="partition.*observed"):
        _build(BetaBernoulliMixture, BINARY, z=np.zeros(N + 1, dtype=int))
    with pytest.raises(ValueError, match="partition.*observed"):
        _build(BetaBernoulliMixture, BINARY, z=pt.tensor("z", shape=(N - 1,), dtype="int64"))
    with pytest.raises(ValueError, match="partition"):
        _build(BetaBernoulliMixture, BINARY, z=np.zeros((N, 1), dtype=int))
    with pytest.raises(ValueError, match="partition"):
        _build(BetaBernoulliMixture, BINARY, z=np.full(N, N))
    with pytest.raises(TypeError, match="partition"):
        _build(BetaBernoulliMixture, BINARY, z=np.zeros(N))
    with pytest.raises(TypeError, match="partition"):
        _build(BetaBernoulliMixture, BINARY, z=pt.vector("z"))


def test_symbolic_hyperparameter_of_wrong_length():
    with pm.Model():
        a = pm.Gamma("a", 1.0, 1.0, shape=D + 1)
        with pytest.raises(ValueError, match="a must be a scalar or have length 3"):
            BetaBernoulliMixture("x", partition=LABELS, a=a, b=1.0, observed=BINARY)
        with pytest.raises(ValueError, match="kappa0"):
            NormalInverseWishartMixture("y", partition=LABELS, kappa0=a, observed=REAL)


def test_dist_without_observed_needs_d():
    with pytest.raises(ValueError, match="d"):
        GammaPoissonMixture.dist(LABELS, a=1.0, b=1.0)
    with pytest.raises(ValueError, match="totals"):
        DirichletMultinomialMixture.dist(LABELS, beta=1.0, d=2)


def test_partition_as_random_variable():
    """The partition is usually a discrete value variable of the model (here a stand-in Categorical, int32 labels)."""
    X = _data(GAMMA_POISSON, np.random.default_rng(9))
    cls, hypers, ref = _case(GAMMA_POISSON)
    with pm.Model() as model:
        z = pm.Categorical("z", p=np.full(N, 1.0 / N), shape=N, dtype="int32")
        cls("x", partition=z, observed=X, **hypers)
    logp = model.compile_logp(vars=model.observed_RVs)
    for labels in (LABELS, np.arange(N)[::-1], np.zeros(N, int)):
        np.testing.assert_allclose(logp({"z": labels.astype("int32")}), ref(X, labels), rtol=1e-10)
    with pytest.raises(ValueError, match="partition.*observed"):
        with pm.Model():
            z = pm.Categorical("z", p=np.full(N, 1.0 / N), shape=N)
            cls("x", partition=z, observed=X[:-1], **hypers)
