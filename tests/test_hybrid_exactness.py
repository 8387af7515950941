"""Exactness of ``HybridDPStep`` (docs/design.md §4.1, §4.3): enumeration, PyMC-sampled ``alpha``, and a Geweke test.

Enumeration (n = 5, exact posterior from ``model.compile_logp()``,
``test_exactness.check_against_exact``'s ESS-justified TV bound): the step's
own iteration (``hybrid.KERNEL`` with the shards in this process, compiled)
alone on 1, 2 and 3 shards, under DP and
PY, on Normal-Gamma and Beta-Bernoulli data, once with three sweeps per
synchronisation; interleaved with Gibbs sweeps; and inside ``pm.sample``
with ``alpha ~ Gamma(2, 2)`` moved by NUTS.  The Dask backend's chains are
the same chains (``tests/distributed``).

Geweke (2004) "getting it right": the step uses auxiliary weights and
parameters, so its joint of partition and data is checked too.  Draws of
``(Π, x)`` from the prior and the likelihood are compared with a chain that
alternates a fresh ``x | Π`` with a hybrid step on ``Π | x``; both must have
the same joint law, checked on four statistics with batch-means errors.
"""

import zlib

import numpy as np
import pymc as pm
import pytest
from exact import exact_posterior, set_partitions
from geweke import GEWEKE_N, NG_HYPER, batch_mean_and_error, draw_data, statistics
from runners import run_chain
from test_exactness import N_ITEMS, build_model, check_against_exact, random_alpha_model, sample_with_pymc

import pymc_partitions as pmp
from pymc_partitions import families, prior_draws, priors
from pymc_partitions.kernels import hybrid
from pymc_partitions.state import make_model


def kernel_model(model):
    with model:
        step = pmp.HybridDPStep(model["z"], n_shards=1)
    return step.kernel_model(model.initial_point())


def starts(rng, n_chains):
    partitions = set_partitions(N_ITEMS)
    return partitions[rng.integers(len(partitions), size=n_chains)]


def run_hybrid(model, z, n_shards, sync_every, n_iterations, rng, n_gibbs=0):
    """The step's iterations (``hybrid.KERNEL``, shards in this process, compiled: ``runners.run_chain``) from
    labels ``z``, each followed by ``n_gibbs`` collapsed Gibbs sweeps; the canonical labels after each,
    (iterations, n)."""
    return run_chain(hybrid.KERNEL, hybrid.Options(n_shards, sync_every), model, z, n_iterations, n_gibbs, rng)


ALONE = [
    ("normal_gamma", "dp", 1, 1),
    ("normal_gamma", "dp", 2, 1),
    ("normal_gamma", "py", 3, 1),
    ("beta_bernoulli", "dp", 3, 1),
    ("beta_bernoulli", "py", 2, 1),
    ("beta_bernoulli", "py", 3, 3),
    ("categorical", "dp", 2, 1),
    ("normal_inverse_wishart", "dp", 2, 1),
    ("dirichlet_multinomial", "dp", 2, 1),
    ("gamma_poisson", "py", 2, 1),
]


@pytest.mark.parametrize("family, prior, n_shards, sync_every", ALONE)
def test_hybrid_alone_matches_enumeration(family, prior, n_shards, sync_every):
    model = build_model(family, prior)
    partitions, exact = exact_posterior(model)
    km = kernel_model(model)
    rng = np.random.default_rng(zlib.crc32(f"{family}-{prior}-{n_shards}-{sync_every}".encode()))
    burn, draws = 300, 20_000
    traces = np.stack([run_hybrid(km, z, n_shards, sync_every, burn + draws, rng)[burn:] for z in starts(rng, 4)])
    check_against_exact(traces, exact, partitions, max_tolerance=0.05)  # the Dask chain's bound (test_dask_hybrid.py)


@pytest.mark.parametrize("family, prior, n_shards", [("normal_gamma", "py", 2), ("beta_bernoulli", "dp", 3)])
def test_hybrid_interleaved_with_gibbs_matches_enumeration(family, prior, n_shards):
    """Each iteration: a hybrid step, then a collapsed Gibbs sweep."""
    model = build_model(family, prior)
    partitions, exact = exact_posterior(model)
    km = kernel_model(model)
    rng = np.random.default_rng(zlib.crc32(f"gibbs-{family}-{prior}-{n_shards}".encode()))
    burn, draws = 100, 2000
    traces = np.stack([run_hybrid(km, z, n_shards, 1, burn + draws, rng, n_gibbs=1)[burn:] for z in starts(rng, 4)])
    check_against_exact(traces, exact, partitions)


@pytest.mark.slow
def test_alpha_sampled_by_pymc():
    """DP with ``alpha ~ Gamma(2, 2)`` moved by NUTS next to ``HybridDPStep`` (2 shards, 3 sweeps per step); alpha integrated out."""
    model, partitions, exact = random_alpha_model()
    traces = sample_with_pymc(model, lambda z: pmp.HybridDPStep(z, n_shards=2, sync_every=3), draws=6000, seed=5)
    check_against_exact(traces, exact, partitions)


# --------------------------------------------------------------------------- Geweke


def test_geweke_joint_of_partition_and_data():
    """Pitman-Yor (the Dirichlet process is its σ = 0 case) on 3 shards of 2 items."""
    prior, prior_params = priors.PY, (0.7, 0.4)
    rng = np.random.default_rng(20)
    params = families.pack_params(families.NORMAL_GAMMA, 1, *NG_HYPER.values())

    def prior_partition():
        return prior_draws.pitman_yor_partition(GEWEKE_N, *prior_params, rng)

    forward = np.array([statistics(z, draw_data(z, rng)) for z in (prior_partition() for _ in range(20_000))])
    z = prior_partition().astype(np.int32)
    chain = np.empty((40_000, 4))
    for t in range(chain.shape[0]):
        x = draw_data(z, rng)
        model = make_model(families.NORMAL_GAMMA, x, params, prior, np.array(prior_params), np.zeros(0))
        z = run_hybrid(model, z, 3, 1, 1, rng)[0]
        chain[t] = statistics(z, x)
    mean_f, error_f = forward.mean(axis=0), forward.std(axis=0, ddof=1) / np.sqrt(len(forward))
    mean_c, error_c = batch_mean_and_error(chain)
    z_scores = (mean_c - mean_f) / np.sqrt(error_f**2 + error_c**2)
    assert np.all(np.abs(z_scores) < 4.0), dict(forward=mean_f, chain=mean_c, z=z_scores)
