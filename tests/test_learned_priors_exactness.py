"""Enumeration tests with learned family hyperparameters (issue 32 item 2; docs/design.md §4.1).

The models are the learned defaults, ``with_default_priors``, on the first
four items of ``test_exactness``'s data (15 partitions): ``NormalGammaMixture``
with ``kappa0`` and the scale of ``b0`` learned (``a0`` fixed at its median
1.5, which keeps the quadrature two-dimensional) and ``BetaBernoulliMixture``
with its concentration learned, under a DP prior (``alpha = 1.3``; every
partition step supports it).  Each partition step runs alone inside
``pm.sample``, PyMC moving the hyperparameters (NUTS; ARM's own slice
sampler), so every draw of the step sees new values.  The exact posterior of
``z`` integrates the hyperparameters out by the trapezoid rule in their log
space (``exact.exact_posterior``, from the PyMC model's logp, which includes
the log-normal hyperpriors and the Jacobian), on 21 nodes per axis over +-6
prior standard deviations around the initial value: 41 nodes, or +-8
deviations, change no partition's mass by more than 2e-8, far below the
tolerances.

The pooled draws must lie within the total-variation bound that their
effective sample size justifies, and that bound must be at most 0.05
(``test_exactness.check_against_exact``), about a quarter of the 0.19 by which the
paper's distributed hybrid (Algorithm 4, 2 shards) misses a 4-item posterior
(``docs/exactness.md``).  On 15 partitions that takes an effective sample
size of about 5,300 (Normal-Gamma) and 5,800 (Beta-Bernoulli), 2.5 times
fewer than on the 52 partitions of 5 items; each step's number of draws
(``STEPS``) gives about 1.25 times that with the effective draws per draw
measured for this seed, about 0.19 for ``HybridDPStep`` on the Normal-Gamma
data and 0.5-0.9 for the other steps (split-merge and MinHash make ten
proposals per draw).
"""

import functools

import numpy as np
import pymc as pm
import pytest
from exact import exact_posterior
from test_exactness import DATA, check_against_exact, sample_with_pymc

import pymc_partitions as pmp

N_ITEMS = 4
MAX_TOLERANCE = 0.05
FAMILIES = {
    "normal_gamma": (pmp.NormalGammaMixture, {"a0": 1.5}),
    "beta_bernoulli": (pmp.BetaBernoulliMixture, {}),
}
HALF_WIDTH, NODES = 6.0, 21

STEPS = {
    "gibbs": (lambda z: pmp.GibbsStep(z), 5200),
    "split_merge": (lambda z: pmp.SplitMergeStep(z, n_moves=10, gibbs_sweep=False), 5200),
    "minsm": (lambda z: pmp.MinHashSplitMergeStep(z, n_moves=10, n_tables=4), 6200),
    "tgmcmc": (lambda z: pmp.TreeGuidedStep(z, n_global=3), 5800),
    "hybrid": (lambda z: pmp.HybridDPStep(z, n_shards=2, sync_every=6), 17_500),
    "subcluster": (lambda z: pmp.SubClusterSplitMergeStep(z), 4900),
}
"""Each step and its draws per chain (two chains): about 1.25 times the effective sample size a 0.05 bound needs."""


def learned_model(family):
    """DP(1.3) partition and ``family``'s learned default on the first ``N_ITEMS`` rows of its ``DATA``."""
    cls, fixed = FAMILIES[family]
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.3, n=N_ITEMS)
        cls.with_default_priors("x", partition=z, observed=DATA[family][:N_ITEMS], **fixed)
    return model


@functools.cache
def exact_answer(family):
    """``(partitions, exact pmf)`` of ``learned_model(family)`` with its learned hyperparameters integrated out."""
    model = learned_model(family)
    start = model.initial_point()
    learned = [v.name for v in model.value_vars if v.name != "z"]
    grids = {name: np.linspace(start[name] - HALF_WIDTH, start[name] + HALF_WIDTH, NODES) for name in learned}
    partitions, exact = exact_posterior(model, grids=grids)
    assert exact.max() < 0.6, "posterior too concentrated for a meaningful test"
    return partitions, exact


def learned_names(model):
    return [rv.name for rv in model.free_RVs if rv.name != "z"]


@pytest.mark.slow
@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("step_name", list(STEPS))
def test_step_with_learned_hyperparameters(step_name, family):
    """The step alone in ``pm.sample``, its family's hyperparameters moved by NUTS; they are integrated out exactly."""
    model = learned_model(family)
    partitions, exact = exact_answer(family)
    make_step, draws = STEPS[step_name]
    traces = sample_with_pymc(model, make_step, draws=draws, seed=21)
    check_against_exact(traces, exact, partitions, max_tolerance=MAX_TOLERANCE)


@pytest.mark.slow
@pytest.mark.parametrize("family", list(FAMILIES))
def test_arm_with_learned_hyperparameters(family):
    """``ARMStep`` in ``pm.sample`` (3 chains of 3,500 draws, about 0.64 effective draws per draw on the Normal-Gamma
    data), the learned hyperparameters moved by the step's own slice sampler."""
    model = learned_model(family)
    partitions, exact = exact_answer(family)
    with model:
        step = pmp.ARMStep(model["z"])
        assert {model.rvs_to_values[model[name]] for name in learned_names(model)} <= set(step.vars)
        idata = pm.sample(
            step=step, draws=3500, tune=200, chains=3, cores=1, progressbar=False, random_seed=22,
            compute_convergence_checks=False,
        )
    for name in learned_names(model):
        assert idata["posterior"][name].std() > 0, f"{name} was not moved"
    check_against_exact(np.asarray(idata["posterior"]["z"].values), exact, partitions, max_tolerance=MAX_TOLERANCE)
