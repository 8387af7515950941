"""Every step method's chain on fixed seeds: the cases of ``test_reference_chains.py`` and their recorded draws.

Each case is a small model and a step, sampled with ``pm.sample`` (one core,
fixed ``random_seed``, PyMC's NUTS or slice on the hyperparameters where the
model has them).  :func:`draws` returns what a chain recorded: ``z`` at every
draw, every continuous posterior variable and the partition's log joint.
``python tests/steps/reference_chains.py`` writes them to
``reference_chains.npz`` beside this file; the test compares a fresh run with
that file, so a refactor that must not change any chain (issue 52: the step
adapter rebuilt) is checked label for label against the code before it.
Rewrite the file only for a change that is meant to change the chains, and
say so in its commit.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pymc as pm

import pymc_partitions as pmp

REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "reference_chains.npz")

RNG = np.random.default_rng(11)
GAUSS = np.r_[RNG.normal(-1.5, 1.0, (8, 2)), RNG.normal(0.0, 1.0, (8, 2)), RNG.normal(1.5, 1.0, (8, 2))]  # overlapping: chains move
BINARY = (RNG.random((24, 6)) < np.r_[np.full((12, 6), 0.85), np.full((12, 6), 0.15)]).astype(np.int64)
BLOCKS = np.repeat(np.arange(3), 6)
ADJACENCY = (RNG.random((18, 18)) < np.where(BLOCKS[:, None] == BLOCKS[None, :], 0.8, 0.1)).astype(np.int64)
ADJACENCY = np.triu(ADJACENCY, 1)
ADJACENCY = ADJACENCY + ADJACENCY.T
X_COVARIATE = np.linspace(-1.0, 1.0, 24)
COUNTS = RNG.poisson(np.exp(np.where(np.arange(24) % 2 == 0, 0.5 + X_COVARIATE, 2.0 - 0.5 * X_COVARIATE)))
K_PRIOR = np.full(12, 1.0 / 12)


def gauss(prior="dp", coarsening=None):
    with pm.Model() as model:
        if prior == "dp":
            z = pmp.DirichletProcessPartition("z", alpha=pm.Gamma("alpha", 2.0, 1.0), n=len(GAUSS))
        elif prior == "py":
            z = pmp.PitmanYorPartition("z", alpha=1.0, sigma=0.25, n=len(GAUSS))
        elif prior == "mfm":
            z = pmp.MixtureOfFiniteMixturesPartition("z", gamma=1.0, k_prior=K_PRIOR, n=len(GAUSS))
        else:
            u = pmp.NGGAuxiliary("u", alpha=1.0, sigma=0.3, tau=1.0, n=len(GAUSS))
            z = pmp.NGGPartition("z", alpha=1.0, sigma=0.3, tau=1.0, u=u, n=len(GAUSS))
        pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=0.1, a0=2.0, b0=2.0, observed=GAUSS,
                               coarsening=coarsening)
    return model


def learned_niw():
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(GAUSS))
        pmp.NormalInverseWishartMixture.with_default_priors("x", partition=z, observed=GAUSS)
    return model


def binary():
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=pm.Gamma("alpha", 2.0, 1.0), n=len(BINARY))
        pmp.BetaBernoulliMixture("x", partition=z, a=1.0, b=1.0, observed=BINARY)
    return model


def network():
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(ADJACENCY))
        pmp.InfiniteRelationalModel("g", partition=z, a=1.0, b=1.0, observed=ADJACENCY)
    return model


def normal_mixture():
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(GAUSS))
        mu = pm.Normal("mu", 0.0, 5.0, shape=(6, 2))
        tau = pm.Gamma("tau", 2.0, 2.0, shape=(6, 2))
        pmp.NormalMixture("x", partition=z, mu=mu, tau=tau, observed=GAUSS)
    return model


def poisson_regression():
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(COUNTS))
        a = pm.Normal("a", 1.0, 1.0, shape=5)
        b = pm.Normal("b", 0.0, 1.0, shape=5)
        pm.Poisson("y", pm.math.exp(a[z] + b[z] * X_COVARIATE), observed=COUNTS)
    return model


def _steps():
    """(case name, model builder, step builder or None for pm.sample's default, chains)."""
    return [
        ("default_conjugate", gauss, None, 1),
        ("gibbs_dp", gauss, lambda z: pmp.GibbsStep(z), 1),
        ("gibbs_coarsened", lambda: gauss(coarsening=20.0), lambda z: pmp.GibbsStep(z, n_sweeps=2), 1),
        ("gibbs_irm", network, lambda z: pmp.GibbsStep(z), 1),
        ("gibbs_normal_mixture", normal_mixture, lambda z: pmp.GibbsStep(z), 1),
        ("gibbs_component", poisson_regression, lambda z: pmp.GibbsStep(z), 1),
        ("split_merge_py", lambda: gauss("py"), lambda z: pmp.SplitMergeStep(z), 1),
        ("split_merge_binary", binary, lambda z: pmp.SplitMergeStep(z), 1),
        ("split_merge_irm", network, lambda z: pmp.SplitMergeStep(z), 1),
        ("split_merge_learned", learned_niw, lambda z: pmp.SplitMergeStep(z), 1),
        ("past_states", binary, lambda z: pmp.PastStatesSplitMergeStep(z), 3),
        ("arm", binary, lambda z: pmp.ARMStep(z), 3),
        ("arm_past", lambda: gauss("mfm"), lambda z: pmp.ARMStep(z, variant="arm-past"), 3),
        ("minhash", binary, lambda z: pmp.MinHashSplitMergeStep(z), 1),
        ("minhash_lsh", lambda: gauss("ngg"), lambda z: pmp.MinHashSplitMergeStep(z, variant="lsh", gibbs_sweep=True), 1),
        ("tree_guided", lambda: gauss("ngg"), lambda z: pmp.TreeGuidedStep(z, n_global=5), 1),
        ("hybrid", gauss, lambda z: pmp.HybridDPStep(z, n_shards=3, warm_start=3), 1),
        ("hybrid_proposals", lambda: gauss("py"), lambda z: pmp.HybridDPStep(z, n_shards=3, n_proposals=2), 1),
        ("subcluster", gauss, lambda z: pmp.SubClusterSplitMergeStep(z, n_shards=3, n_proposals=3), 1),
        ("incremental", normal_mixture, lambda z: pmp.IncrementalMetropolisStep(z), 1),
        ("nonconjugate", normal_mixture, lambda z: pmp.NonconjugateSplitMergeStep(z), 1),
        ("nonconjugate_component", poisson_regression, lambda z: pmp.NonconjugateSplitMergeStep(z), 1),
    ]


CASES = {name: (build, make_step, chains) for name, build, make_step, chains in _steps()}


def draws(case):
    """The recorded draws of ``case``: ``{name: array}`` for ``z``, the continuous posterior variables and the
    partition's log joint (``chains x draws [x ...]``)."""
    build, make_step, chains = CASES[case]
    model = build()
    with model:
        step = None if make_step is None else make_step(model["z"])
        idata = pm.sample(
            step=step, draws=12, tune=4, chains=chains, cores=1, random_seed=5, progressbar=False,
            compute_convergence_checks=False,
        )
    posterior = idata["posterior"]
    found = {name: np.asarray(posterior[name].values) for name in posterior.data_vars}
    found["partition_log_joint"] = np.asarray(idata["sample_stats"]["partition_log_joint"].values)
    return found


def main(cases):
    stored = dict(np.load(REFERENCE)) if os.path.exists(REFERENCE) else {}
    for case in cases:
        for name, values in draws(case).items():
            stored[f"{case}/{name}"] = values
        print(f"{case}: recorded", flush=True)
    np.savez_compressed(REFERENCE, **stored)


if __name__ == "__main__":
    main(sys.argv[1:] or list(CASES))
