"""Learned defaults (``with_default_priors``): hyperprior variables centred on the data-based hyperparameters.

Checked here: the variables each observation model creates and their log
densities (log-normal, shifted for ``nu0``); that at the hyperpriors' medians
the hyperparameters are the fixed defaults of ``default_hyperparameters``
(the Normal-inverse-Wishart's ``Psi0`` without its off-diagonal terms); that
the Gaussian models stay invariant to shifting and rescaling features; fixing
a learned hyperparameter or giving it one's own prior; and the errors.
Sampling with them is in the enumeration tests (``tests/test_learned_priors_exactness.py``).
"""

import numpy as np
import pymc as pm
import pytensor.tensor as pt
import pytest
from scipy import stats

import pymc_partitions as pmp
from pymc_partitions import families

pytestmark = pytest.mark.pytensor_python  # PyTensor without C: conftest.py

rng = np.random.default_rng(5)
GAUSS = rng.normal(size=(12, 3)) @ np.array([[2.0, 0.5, 0.0], [0.0, 1.0, 0.3], [0.0, 0.0, 0.2]]) + [5.0, -1.0, 0.0]
BINARY = (rng.random((12, 4)) < [0.1, 0.5, 0.9, 0.3]).astype(int)
COUNTS = rng.poisson([0.5, 3.0, 1.0], size=(12, 3))
CODES = np.stack([rng.integers(0, 3, 12), rng.integers(0, 2, 12)], axis=1)
ADJACENCY = np.triu(rng.random((12, 12)) < 0.3, 1).astype(int)
ADJACENCY = ADJACENCY + ADJACENCY.T
Z_A = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3])
Z_B = np.array([0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1])

CASES = {
    "NormalInverseWishartMixture": (GAUSS, ["kappa0", "nu0", "scale"]),
    "NormalGammaMixture": (GAUSS, ["kappa0", "a0", "scale"]),
    "BetaBernoulliMixture": (BINARY, ["concentration"]),
    "GammaPoissonMixture": (COUNTS, ["concentration"]),
    "DirichletMultinomialMixture": (COUNTS, ["concentration"]),
    "CategoricalMixture": (CODES, ["concentration"]),
    "InfiniteRelationalModel": (ADJACENCY, ["concentration"]),
    "NormalMixture": (GAUSS, ["kappa0", "a", "scale"]),
}


def build(name, data=None, z=None, **kwargs):
    data, _ = CASES[name] if data is None else (data, None)
    cls = getattr(pmp, name)
    if name == "NormalMixture":
        kwargs.setdefault("k_max", 4)
    with pm.Model() as model:
        partition = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(data)) if z is None else pt.as_tensor(z)
        x = cls.with_default_priors("x", partition=partition, observed=data, **kwargs)
    return model, x


@pytest.mark.parametrize("name", list(CASES))
def test_creates_one_log_normal_variable_per_learned_hyperparameter(name):
    model, x = build(name)
    _, learned = CASES[name]
    assert x.name == "x" and x in model.observed_RVs
    created = {rv.name for rv in model.free_RVs} - {"z", "x_mu", "x_tau"}
    assert created == {f"x_{p}" for p in learned}
    spec = families.SPECS[getattr(pmp, name).rv_op.family]
    d = CASES[name][0].shape[1]
    for p in spec.hyperpriors(CASES[name][0].astype(float)).learned:
        rv = model[f"x_{p.name}"]
        value = p.lower + 0.8 * (p.median - p.lower)  # a point below the median
        point = {**model.initial_point(), model.rvs_to_values[rv].name: np.log(value - p.lower)}
        logp = model.compile_logp(vars=[rv], jacobian=False)(point)
        expected = stats.lognorm(p.sigma, scale=p.median - p.lower).logpdf(value - p.lower)
        np.testing.assert_allclose(logp, expected, rtol=1e-12)
        if p.name == "nu0":
            assert p.lower == d - 1 and p.median == d + 2  # nu0 - (d - 1) ~ LogNormal(log 3, 1)
    assert np.isfinite(model.compile_logp()(model.initial_point()))


@pytest.mark.parametrize("name", [n for n in CASES if n != "NormalMixture"])
def test_at_the_medians_the_hyperparameters_are_the_fixed_defaults(name):
    cls = getattr(pmp, name)
    data = CASES[name][0]
    priors = families.SPECS[cls.rv_op.family].hyperpriors(data.astype(float))
    assembled = priors.assemble(**{p.name: p.median for p in priors.learned})
    fixed = cls.default_hyperparameters(data)
    assert set(assembled) == set(fixed)
    for key, value in fixed.items():
        expected = np.diag(np.diag(value)) if key == "Psi0" else value  # the NIW scale matrix: its diagonal
        np.testing.assert_allclose(np.broadcast_to(assembled[key], np.shape(expected)), expected, rtol=1e-12)


def test_normal_mixture_priors_match_the_normal_gamma_at_the_medians():
    """Precision Gamma(a, b) as the Normal-Gamma's (a0, b0); the mean's prior variance S_jj / kappa0, the
    Normal-Gamma's E[1 / (kappa0 tau)] = S_jj / kappa0 (its E[1/tau] = b0 / (a0 - 1) = S_jj)."""
    priors = families.normal.default_hyperpriors(GAUSS)
    hyper = priors.assemble(**{p.name: p.median for p in priors.learned})
    fixed = pmp.NormalGammaMixture.default_hyperparameters(GAUSS)
    np.testing.assert_allclose(hyper["m"], fixed["mu0"])
    np.testing.assert_allclose(np.broadcast_to(hyper["a"], 3), fixed["a0"])
    np.testing.assert_allclose(hyper["b"], fixed["b0"])
    np.testing.assert_allclose(1.0 / hyper["t"], fixed["b0"] / (fixed["a0"] - 1.0) / fixed["kappa0"])


MOVED = GAUSS * np.array([1e3, 0.01, -7.0]) + np.array([1e5, -3.0, 2.0])
"""GAUSS with each feature rescaled (one flipped) and shifted."""


@pytest.mark.parametrize("name", ["NormalInverseWishartMixture", "NormalGammaMixture"])
def test_gaussian_models_are_invariant_to_shifting_and_scaling_features(name):
    """At the same learned values, log p(X | Z_A) - log p(X | Z_B) is unchanged when each feature is moved and
    rescaled: the hyperpriors' centres move with the data, and the Jacobian is the same for every partition."""

    def log_ratio(data):
        model, _ = build(name, data=data)
        point = {**model.initial_point(), "x_kappa0_log__": np.log(0.3), "x_scale_log__": np.log(2.0)}
        logp = model.compile_logp()
        return logp({**point, "z": Z_A}) - logp({**point, "z": Z_B})

    np.testing.assert_allclose(log_ratio(MOVED), log_ratio(GAUSS), rtol=1e-8)


def test_normal_mixture_priors_move_with_the_data():
    """``NormalMixture`` keeps its cluster parameters in data units: its priors follow each feature's shift and
    scale (mean at the data's mean, mean's and precision's spreads in units of the feature's variance)."""
    for data in (GAUSS, MOVED):
        hyper = families.normal.default_hyperpriors(data).assemble(kappa0=0.3, a=2.0, scale=2.0)
        variance = np.diag(np.cov(data, rowvar=False))
        np.testing.assert_allclose(hyper["m"], data.mean(0))
        np.testing.assert_allclose(hyper["t"] * variance, 0.3 / (1 + 1e-6), rtol=1e-9)
        np.testing.assert_allclose(hyper["b"] / variance, 2.0 * 2.0 / 3.0 * (1 + 1e-6), rtol=1e-9)


def test_a_learned_hyperparameter_can_be_fixed_or_given_its_own_prior():
    model, _ = build("NormalInverseWishartMixture", kappa0=0.5, nu0=6.0)
    assert {rv.name for rv in model.free_RVs} == {"z", "x_scale"}
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=12)
        kappa0 = pm.Gamma("kappa0", 2.0, 20.0)
        pmp.NormalGammaMixture.with_default_priors("x", partition=z, observed=GAUSS, kappa0=kappa0)
    assert {rv.name for rv in model.free_RVs} == {"z", "kappa0", "x_a0", "x_scale"}
    # the fixed value is what the model uses: its log density equals the one built by hand at those values
    model, _ = build("BetaBernoulliMixture", z=Z_A, concentration=3.0)
    p = (BINARY.sum(0) + 1.0) / (12 + 2.0)
    with pm.Model() as by_hand:
        pmp.BetaBernoulliMixture("x", partition=pt.as_tensor(Z_A), a=3.0 * p, b=3.0 * (1 - p), observed=BINARY)
    np.testing.assert_allclose(model.compile_logp()({}), by_hand.compile_logp()({}), rtol=1e-12)


def test_observed_may_be_pm_data():
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=12)
        data = pm.Data("X", GAUSS)
        pmp.NormalGammaMixture.with_default_priors("x", partition=z, observed=data)
    assert np.isfinite(model.compile_logp()(model.initial_point()))


def test_errors():
    with pytest.raises(TypeError, match="inside a model context"):
        pmp.NormalGammaMixture.with_default_priors("x", partition=pt.as_tensor(Z_A), observed=GAUSS)
    with pm.Model():
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=12)
        with pytest.raises(TypeError, match="name must be a non-empty string"):
            pmp.NormalGammaMixture.with_default_priors(3, partition=z, observed=GAUSS)
        with pytest.raises(ValueError, match="observed is required"):
            pmp.NormalGammaMixture.with_default_priors("x", partition=z, observed=None)
        with pytest.raises(ValueError, match="only 0 and 1"):
            pmp.BetaBernoulliMixture.with_default_priors("x", partition=z, observed=GAUSS)
        with pytest.raises(TypeError, match="sets Psi0 from its learned hyperparameters"):
            pmp.NormalInverseWishartMixture.with_default_priors("x", partition=z, observed=GAUSS, Psi0=np.eye(3))
        with pytest.raises(ValueError, match="nu0 must be > 2"):
            pmp.NormalInverseWishartMixture.with_default_priors("x", partition=z, observed=GAUSS, nu0=1.5)
        assert [rv.name for rv in pm.modelcontext(None).free_RVs] == ["z"]  # a failed call creates nothing
        with pytest.raises(ValueError, match="scale must be > 0"):
            pmp.NormalGammaMixture.with_default_priors("x", partition=z, observed=GAUSS, scale=-1.0)
        with pytest.raises(TypeError, match="k_max must be a positive integer"):
            pmp.NormalMixture.with_default_priors("x", partition=z, observed=GAUSS)
        with pytest.raises(TypeError, match="creates mu itself"):
            pmp.NormalMixture.with_default_priors("x", partition=z, observed=GAUSS, k_max=3, mu=np.zeros((3, 3)))
        with pytest.raises(ValueError, match="symmetric"):
            pmp.InfiniteRelationalModel.with_default_priors("x", partition=pt.as_tensor(Z_A), observed=np.triu(np.ones((12, 12)), 1))
