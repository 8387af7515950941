"""Enumeration tests (docs/design.md §4.1) of coarsened posteriors: every step leaves the c-posterior invariant.

With ``coarsening=c`` every item's likelihood is raised to ``zeta = c / (c + n)``
(Miller & Dunson 2019).  For n = 5 items (52 partitions) the exact c-posterior
is computed from marginals written in ``tests/coarsened.py`` from the math
(closed forms with the statistics weighted by ``zeta``, quadrature for
``NormalMixture``) and the Dirichlet-process prior written out, independent of
both the package's numba kernels and its PyTensor log densities; the PyTensor
log density is checked against the same references on every partition.
``zeta = 0.4`` throughout (``c = 10/3`` for 5 items; ``c = 20/3`` for the 10
vertex pairs of the network).

Gibbs and split-merge run on every family (the six conjugate ones, the IRM
and ``NormalMixture``'s own steps); every other step on one family:
ARM, tgMCMC, MinHash split-merge, the hybrid sampler and the sub-cluster
split-merge kernel (whose launch, restricted sweeps and hybrid iteration draw
cluster parameters from the coarsened conditionals: ``families.draw_params``
and ``log_density`` read ``zeta``).  Tolerances: ``test_exactness.check_against_exact``.
"""

import zlib

import numpy as np
import pymc as pm
import pytest
from coarsened import (
    beta_bernoulli, categorical, cluster_likelihood, dirichlet_multinomial, exact_posterior, gamma_poisson,
    normal_gamma, normal_inverse_wishart, normal_mixture, relational,
)
from test_arm_exactness import run_population_chains
from test_exactness import DATA, check_against_exact, run_step_chains
from test_hybrid_exactness import kernel_model as hybrid_model
from test_hybrid_exactness import run_hybrid, starts
from test_subcluster_exactness import run_chains as run_subcluster_chains
from test_tgmcmc_exactness import run_tgmcmc

import pymc_partitions as pmp
from pymc_partitions.kernels import subcluster

pytestmark = pytest.mark.pytensor_python  # compile_logp on a few graphs, no NUTS: PyTensor without C (conftest.py)

N_ITEMS = 5
ZETA = 0.4
C_ITEMS = ZETA * N_ITEMS / (1 - ZETA)  # zeta = c / (c + 5)
ALPHA = 1.3
NETWORK = np.array(
    [[0, 1, 1, 0, 0], [1, 0, 1, 0, 0], [1, 1, 0, 1, 0], [0, 0, 1, 0, 1], [0, 0, 0, 1, 0]], dtype=float
)
C_PAIRS = ZETA * 10 / (1 - ZETA)  # zeta = c / (c + 10 vertex pairs)
NORMAL_DATA = np.array([[-1.2], [-0.7], [0.4], [1.5], [2.1]])
M, SIGMA, A, B = 0.25, 2.0, 2.0, 2.0

MODELS = {
    "beta_bernoulli": (
        lambda z: pmp.BetaBernoulliMixture("x", partition=z, a=0.7, b=1.3, observed=DATA["beta_bernoulli"], coarsening=C_ITEMS),
        lambda rows: beta_bernoulli(DATA["beta_bernoulli"][rows], 0.7, 1.3, ZETA),
    ),
    "normal_gamma": (
        lambda z: pmp.NormalGammaMixture(
            "x", partition=z, mu0=0.0, kappa0=0.5, a0=2.0, b0=2.0, observed=DATA["normal_gamma"], coarsening=C_ITEMS
        ),
        lambda rows: normal_gamma(DATA["normal_gamma"][rows], 0.0, 0.5, 2.0, 2.0, ZETA),
    ),
    "normal_inverse_wishart": (
        lambda z: pmp.NormalInverseWishartMixture(
            "x", partition=z, mu0=0.0, kappa0=0.5, nu0=4.0, Psi0=2.0 * np.eye(2), observed=DATA["normal_inverse_wishart"],
            coarsening=C_ITEMS,
        ),
        lambda rows: normal_inverse_wishart(DATA["normal_inverse_wishart"][rows], 0.0, 0.5, 4.0, 2.0 * np.eye(2), ZETA),
    ),
    "dirichlet_multinomial": (
        lambda z: pmp.DirichletMultinomialMixture(
            "x", partition=z, beta=0.8, observed=DATA["dirichlet_multinomial"], coarsening=C_ITEMS
        ),
        lambda rows: dirichlet_multinomial(DATA["dirichlet_multinomial"][rows], 0.8, ZETA),
    ),
    "gamma_poisson": (
        lambda z: pmp.GammaPoissonMixture("x", partition=z, a=2.0, b=0.7, observed=DATA["gamma_poisson"], coarsening=C_ITEMS),
        lambda rows: gamma_poisson(DATA["gamma_poisson"][rows], 2.0, 0.7, ZETA),
    ),
    "categorical": (
        lambda z: pmp.CategoricalMixture(
            "x", partition=z, beta=[0.6, 1.5], n_categories=[3, 2], observed=DATA["categorical"], coarsening=C_ITEMS
        ),
        lambda rows: categorical(DATA["categorical"][rows], [0.6, 1.5], [3, 2], ZETA),
    ),
}


def build(family):
    """The DP(1.3) model of ``family`` with ``coarsening`` at zeta = 0.4, and its exact c-posterior (references)."""
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=ALPHA, n=N_ITEMS)
        if family == "infinite_relational":
            pmp.InfiniteRelationalModel("x", partition=z, a=0.7, b=1.6, observed=NETWORK, coarsening=C_PAIRS)
            log_likelihood = lambda labels: relational(NETWORK, labels, 0.7, 1.6, ZETA)  # noqa: E731
        elif family == "normal_mixture":
            mu = pm.Normal("mu", M, SIGMA, shape=(N_ITEMS, 1))
            tau = pm.Gamma("tau", A, B, shape=(N_ITEMS, 1))
            pmp.NormalMixture("x", partition=z, mu=mu, tau=tau, observed=NORMAL_DATA, coarsening=C_ITEMS)
            log_likelihood = cluster_likelihood(lambda rows: normal_mixture(NORMAL_DATA[rows], M, 1 / SIGMA**2, A, B, ZETA))
        else:
            make, reference = MODELS[family]
            make(z)
            log_likelihood = cluster_likelihood(reference)
    partitions, exact, log_mass = exact_posterior(N_ITEMS, log_likelihood, ALPHA)
    assert exact.max() < 0.6, "posterior too concentrated for a meaningful test"
    return model, partitions, exact, log_mass


CONJUGATE = [*MODELS, "infinite_relational"]


@pytest.mark.parametrize("family", CONJUGATE)
def test_model_logp_is_the_coarsened_posterior(family):
    """The PyTensor log density of the coarsened model equals the references on all 52 partitions (up to a
    constant: ``log p(z) + log p_zeta(x | z)``), and its zeta is c / (c + n)."""
    model, partitions, _, log_mass = build(family)
    logp = model.compile_logp()
    values = np.array([logp({"z": z}) for z in partitions])
    np.testing.assert_allclose(values - values[0], log_mass - log_mass[0], atol=1e-9)
    spec = pmp.distributions.mixtures.mixture_spec(model["x"])
    assert spec.zeta == pytest.approx(ZETA, rel=1e-15)


def test_normal_mixture_logp_is_zeta_times_the_log_likelihood():
    model, *_ = build("normal_mixture")
    rng = np.random.default_rng(0)
    mu, tau = rng.normal(size=(N_ITEMS, 1)), rng.gamma(2.0, 1.0, size=(N_ITEMS, 1))
    z = np.array([0, 0, 1, 2, 1])
    point = {"z": z, "mu": mu, "tau_log__": np.log(tau)}
    logp = model.compile_logp(vars=[model["x"]])
    expected = ZETA * np.sum(-0.5 * np.log(2 * np.pi / tau[z, 0]) - 0.5 * tau[z, 0] * (NORMAL_DATA[:, 0] - mu[z, 0]) ** 2)
    assert logp(point) == pytest.approx(expected, rel=1e-12)


STEPS = {
    "gibbs": lambda z: pmp.GibbsStep(z),
    "split_merge": lambda z: pmp.SplitMergeStep(z, gibbs_sweep=False),
}


@pytest.mark.parametrize("family", CONJUGATE)
@pytest.mark.parametrize("step_name", list(STEPS))
def test_gibbs_and_split_merge(step_name, family):
    model, partitions, exact, _ = build(family)
    with model:
        step = STEPS[step_name](model["z"])
    traces = run_step_chains(model, step, seed=zlib.crc32(f"coarse-{step_name}-{family}".encode()))
    check_against_exact(traces, exact, partitions)


NONCONJUGATE_STEPS = {
    "gibbs": lambda z: pmp.GibbsStep(z, n_auxiliary=2),
    "split_merge": lambda z: pmp.NonconjugateSplitMergeStep(z, n_split_scans=2, n_gibbs_scans=0, n_merge_scans=2),
}


@pytest.mark.parametrize("step_name", list(NONCONJUGATE_STEPS))
def test_normal_mixture_steps(step_name):
    """``NormalMixture``: Algorithm 8 and SM(2, 1, 0, 2) target the coarsened joint of (z, mu, tau); its marginal
    over z by quadrature."""
    model, partitions, exact, _ = build("normal_mixture")
    with model:
        step = NONCONJUGATE_STEPS[step_name](model["z"])
    traces = run_step_chains(model, step, seed=zlib.crc32(f"coarse-normal-{step_name}".encode()))
    check_against_exact(traces, exact, partitions)


def test_arm():
    model, partitions, exact, _ = build("gamma_poisson")
    traces = run_population_chains(model, "arm", False, seed=zlib.crc32(b"coarse-arm"))
    check_against_exact(traces, exact, partitions)


def test_tgmcmc():
    model, partitions, exact, _ = build("normal_gamma")
    traces = run_tgmcmc(model, "dp", 20, 1, False, seed=zlib.crc32(b"coarse-tgmcmc"))
    check_against_exact(traces, exact, partitions)


def test_minhash_split_merge():
    model, partitions, exact, _ = build("beta_bernoulli")
    with model:
        step = pmp.MinHashSplitMergeStep(model["z"], variant="minsm", n_moves=3, n_tables=4, gibbs_sweep=False)
    traces = run_step_chains(model, step, seed=zlib.crc32(b"coarse-minsm"))
    check_against_exact(traces, exact, partitions)


def test_hybrid():
    """The hybrid iteration on 2 shards: instantiated parameters drawn from the coarsened posterior, cold shards
    weighed by zeta log f(x | theta) (block log densities), the hot shard's collapsed tail by coarsened predictives."""
    model, partitions, exact, _ = build("beta_bernoulli")
    km = hybrid_model(model)
    rng = np.random.default_rng(zlib.crc32(b"coarse-hybrid"))
    traces = np.stack([run_hybrid(km, z, 2, 1, 300 + 20_000, rng)[300:] for z in starts(rng, 4)])
    check_against_exact(traces, exact, partitions)


def test_subcluster():
    """Sub-cluster split-merge: proposals, restricted sweeps and the hybrid iteration on 2 shards."""
    model, partitions, exact, _ = build("dirichlet_multinomial")
    options = subcluster.Options(n_proposals=2, n_launch_sweeps=1, n_shards=2, n_global_sweeps=1)
    traces = run_subcluster_chains(model, options, seed=zlib.crc32(b"coarse-subcluster"))
    check_against_exact(traces, exact, partitions)
