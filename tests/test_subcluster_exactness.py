"""Exactness of the sub-cluster split-merge kernel (docs/design.md §4.1, §4.3): enumeration and a Geweke test.

Enumeration (n = 5, exact posterior from ``model.compile_logp()``,
``test_exactness.check_against_exact``'s ESS-justified TV bound) of
``runners.run_chain`` of ``subcluster.KERNEL``, the kernel's own iterations compiled:

* split/merge proposals, each followed by a restricted sweep of its pair's
  clusters when they are apart, without the hybrid iteration
  (``n_global_sweeps = 0``), exact for every Gibbs-type prior: every
  additive family under DP, and Normal-Gamma, Beta-Bernoulli and
  Gamma-Poisson data under Pitman-Yor and the MFM; the split/merge moves
  with nothing else;
* whole iterations (proposals and restricted sweeps, then the hybrid
  iteration) on 1, 2 and 3 shards under DP and PY, with one and two launch
  sweeps;
* whole iterations followed by a collapsed Gibbs sweep;
* ``HybridDPStep(n_proposals=...)``'s iterations (its options: the
  sub-cluster proposals before the hybrid iteration, ``sync_every`` sweeps).

Inside ``pm.sample`` (the step methods, their compiled transition):
``SubClusterSplitMergeStep`` and ``HybridDPStep(n_proposals=2)`` with
``alpha ~ Gamma(2, 2)`` moved by NUTS (the exact answer integrates ``alpha``
out, ``test_exactness.random_alpha_model``), and ``SubClusterSplitMergeStep``
interleaved with ``GibbsStep`` (both steps on ``z``, one after the other in
every draw) under a Pitman-Yor and an MFM prior.  The Dask backend gives the
same chains (``tests/distributed/test_dask_subcluster.py``).

Geweke (2004) "getting it right": the launch draws cluster parameters, and
the hybrid iteration instantiates weights and parameters, so the joint of
partition and data is checked too.  Draws of ``(Π, x)`` from the prior and
the likelihood are compared with a chain that alternates a fresh ``x | Π``
with an iteration on ``Π | x``, on four statistics with batch-means errors.
"""

import os
import zlib

import numpy as np
import pytest
from exact import exact_posterior, initial_values, set_partitions
from geweke import GEWEKE_N, NG_HYPER, batch_mean_and_error, draw_data, statistics
from runners import run_chain
from test_exactness import DATA, N_ITEMS, build_model, check_against_exact, random_alpha_model, sample_with_pymc

import pymc_partitions as pmp
from pymc_partitions import families, prior_draws, priors
from pymc_partitions.kernels import subcluster
from pymc_partitions.state import make_model

BURN, DRAWS, CHAINS = 500, 25_000, 4


def report(tv, tol):
    """Print the test's TV and tolerance (``pytest -s``; the numbers ``docs/exactness.md`` quotes)."""
    print(f"\n{os.environ.get('PYTEST_CURRENT_TEST', '').split(' ')[0]}: TV {tv:.4f} < {tol:.4f}")


def kernel_model(model):
    """The kernel ``Model`` of a PyMC model at its initial hyperparameters (``GibbsStep`` reads the graph)."""
    with model:
        step = pmp.GibbsStep(model["z"])
    return step.kernel_model(model.initial_point())


def run_chains(model, options, n_gibbs=0, seed=0, draws=DRAWS):
    """``CHAINS`` chains of ``runners.run_chain`` from random partitions; (chains, draws, n) canonical labels."""
    km = kernel_model(model)
    rng = np.random.default_rng(seed)
    partitions = set_partitions(N_ITEMS)
    starts = partitions[rng.integers(len(partitions), size=CHAINS)]
    return np.stack(
        [run_chain(subcluster.KERNEL, options, km, z, BURN + draws, n_gibbs, rng)[BURN:] for z in starts]
    )


PROPOSALS_ALONE = [(family, "dp") for family in DATA] + [
    ("normal_gamma", "py"), ("beta_bernoulli", "py"), ("normal_gamma", "mfm"), ("gamma_poisson", "mfm"),
    ("normal_gamma", "ngg"), ("beta_bernoulli", "ngg"),
]
"""Under the NGG prior ``u`` stays at the model's initial value: the kernel's target is then ``p(Π | u, x)``, which
``exact_posterior`` enumerates with ``u`` at that value."""


@pytest.mark.parametrize("family, prior", [("normal_gamma", "dp"), ("beta_bernoulli", "py")])
def test_split_merge_moves_alone_match_enumeration(family, prior):
    """The split/merge Metropolis-Hastings moves by themselves (no restricted sweeps, no hybrid iteration)."""
    model = build_model(family, prior)
    partitions, exact = exact_posterior(model)
    options = subcluster.Options(n_proposals=2, n_launch_sweeps=1, n_refine_sweeps=0, n_shards=2, n_global_sweeps=0)
    traces = run_chains(model, options, seed=zlib.crc32(f"moves-{family}-{prior}".encode()))
    report(*check_against_exact(traces, exact, partitions))


@pytest.mark.parametrize("family, prior", PROPOSALS_ALONE)
def test_proposals_alone_match_enumeration(family, prior):
    """Split/merge proposals, each followed by a restricted sweep if its pair is apart, no hybrid iteration:
    exact for every Gibbs-type prior."""
    model = build_model(family, prior)
    partitions, exact = exact_posterior(model, fixed=initial_values(model))
    options = subcluster.Options(n_proposals=2, n_launch_sweeps=2, n_refine_sweeps=1, n_shards=2, n_global_sweeps=0)
    traces = run_chains(model, options, seed=zlib.crc32(f"alone-{family}-{prior}".encode()))
    report(*check_against_exact(traces, exact, partitions))


WHOLE = [
    ("normal_gamma", "dp", 1, 2),
    ("normal_gamma", "py", 3, 1),
    ("beta_bernoulli", "dp", 2, 1),
    ("beta_bernoulli", "py", 3, 2),
    ("gamma_poisson", "py", 2, 2),
]


@pytest.mark.parametrize("family, prior, n_shards, n_launch_sweeps", WHOLE)
def test_iteration_matches_enumeration(family, prior, n_shards, n_launch_sweeps):
    """One proposal, then the hybrid iteration on ``n_shards`` shards."""
    model = build_model(family, prior)
    partitions, exact = exact_posterior(model)
    options = subcluster.Options(n_proposals=1, n_launch_sweeps=n_launch_sweeps, n_shards=n_shards, n_global_sweeps=1)
    traces = run_chains(model, options, seed=zlib.crc32(f"whole-{family}-{prior}-{n_shards}".encode()))
    report(*check_against_exact(traces, exact, partitions))


@pytest.mark.parametrize("family, prior", [("normal_inverse_wishart", "dp"), ("dirichlet_multinomial", "py")])
def test_iteration_interleaved_with_gibbs_matches_enumeration(family, prior):
    """Each iteration (two proposals, the hybrid on 2 shards) followed by a collapsed Gibbs sweep."""
    model = build_model(family, prior)
    partitions, exact = exact_posterior(model)
    options = subcluster.Options(n_proposals=2, n_launch_sweeps=2, n_shards=2, n_global_sweeps=1)
    traces = run_chains(model, options, n_gibbs=1, seed=zlib.crc32(f"gibbs-{family}-{prior}".encode()))
    report(*check_against_exact(traces, exact, partitions))


def test_hybrid_step_with_proposals_matches_enumeration():
    """``HybridDPStep(n_proposals=2, sync_every=2)`` on 3 shards (PY, Beta-Bernoulli): its iteration is the
    sub-cluster kernel's with the step's options, run here by ``runners.run_chain``."""
    model = build_model("beta_bernoulli", "py")
    partitions, exact = exact_posterior(model)
    with model:
        step = pmp.HybridDPStep(model["z"], n_shards=3, sync_every=2, n_proposals=2)
    assert step.options == subcluster.Options(2, 2, 1, 3, 2)
    traces = run_chains(model, step.options, seed=zlib.crc32(b"hybrid-step-proposals"))
    report(*check_against_exact(traces, exact, partitions))


# --------------------------------------------------------------------------- inside pm.sample


@pytest.mark.slow
@pytest.mark.parametrize(
    "make_step",
    [
        pytest.param(lambda z: pmp.SubClusterSplitMergeStep(z, n_proposals=2, n_shards=2), id="subcluster"),
        pytest.param(lambda z: pmp.HybridDPStep(z, n_proposals=2, n_shards=3), id="hybrid-with-proposals"),
    ],
)
def test_alpha_sampled_by_pymc(make_step):
    """DP with ``alpha ~ Gamma(2, 2)`` moved by NUTS next to the step; ``alpha`` integrated out of the exact answer."""
    model, partitions, exact = random_alpha_model()
    traces = sample_with_pymc(model, make_step, draws=10_000, seed=6)
    report(*check_against_exact(traces, exact, partitions))


@pytest.mark.slow
@pytest.mark.parametrize("family, prior, n_global_sweeps", [("gamma_poisson", "py", 1), ("normal_gamma", "mfm", 0)])
def test_interleaved_with_gibbs_step_in_pm_sample(family, prior, n_global_sweeps):
    """``[SubClusterSplitMergeStep, GibbsStep]`` on ``z``: every draw runs one iteration, then a Gibbs sweep."""
    model = build_model(family, prior)
    partitions, exact = exact_posterior(model)
    traces = sample_with_pymc(
        model, lambda z: pmp.SubClusterSplitMergeStep(z, n_proposals=2, n_shards=2, n_global_sweeps=n_global_sweeps),
        draws=8000, seed=7, other_steps=[lambda: pmp.GibbsStep(model["z"])],
    )
    report(*check_against_exact(traces, exact, partitions))


# --------------------------------------------------------------------------- Geweke


@pytest.mark.parametrize("n_global_sweeps", [0, 1])
def test_geweke_joint_of_partition_and_data(n_global_sweeps):
    """Pitman-Yor, 6 items on 3 shards; proposals alone and with the hybrid iteration."""
    prior, prior_params = priors.PY, (0.7, 0.4)
    rng = np.random.default_rng(21 + n_global_sweeps)
    params = families.pack_params(families.NORMAL_GAMMA, 1, *NG_HYPER.values())
    options = subcluster.Options(n_proposals=2, n_launch_sweeps=2, n_shards=3, n_global_sweeps=n_global_sweeps)

    def prior_partition():
        return prior_draws.pitman_yor_partition(GEWEKE_N, *prior_params, rng)

    forward = np.array([statistics(z, draw_data(z, rng)) for z in (prior_partition() for _ in range(20_000))])
    z = prior_partition().astype(np.int32)
    chain = np.empty((40_000, 4))
    for t in range(chain.shape[0]):
        x = draw_data(z, rng)
        model = make_model(families.NORMAL_GAMMA, x, params, prior, np.array(prior_params), np.zeros(0))
        z = run_chain(subcluster.KERNEL, options, model, z, 1, 0, rng)[0]
        chain[t] = statistics(z, x)
    mean_f, error_f = forward.mean(axis=0), forward.std(axis=0, ddof=1) / np.sqrt(len(forward))
    mean_c, error_c = batch_mean_and_error(chain)
    z_scores = (mean_c - mean_f) / np.sqrt(error_f**2 + error_c**2)
    assert np.all(np.abs(z_scores) < 4.0), dict(forward=mean_f, chain=mean_c, z=z_scores)
