"""Enumeration tests (docs/design.md §4.1) for ``MinHashSplitMergeStep``: MinSM, LSH split-merge and SDDS.

Each variant runs alone and followed by a Gibbs sweep, on binary
(Beta-Bernoulli), count (Gamma-Poisson) and real (Normal-Gamma) data, under
the DP and Pitman-Yor priors; n = 5, exact posterior from
``model.compile_logp()``, pooled frequencies of 4 chains of the step's own
transition (``runners.run``, ``tests/runners.py``) within the ESS-justified TV bound
(``test_exactness.check_against_exact``).  The hash tables are made small
enough for 5 items to share buckets (LSH: 2-bit codes), so that every smart
move is exercised.  One test runs the step inside ``pm.sample`` with
``alpha ~ Gamma(2, 2)`` moved by NUTS, ``alpha`` integrated out for the exact
answer.
"""

import itertools
import zlib

import numpy as np
import pymc as pm
import pytest
from exact import exact_posterior, initial_values
from test_exactness import add_family, add_prior, check_against_exact, random_alpha_model, run_step_chains

import pymc_partitions as pmp

OPTIONS = {"minsm": {"n_tables": 4}, "lsh": {"n_tables": 3, "n_bits": 2}, "sdds": {}}


def build(family, prior, variant, gibbs_sweep):
    with pm.Model() as model:
        z = add_prior(prior)
        add_family(family, z)
        step = pmp.MinHashSplitMergeStep(z, variant=variant, n_moves=3, gibbs_sweep=gibbs_sweep, **OPTIONS[variant])
    return model, step


CELLS = [
    *itertools.product(OPTIONS, [False, True], ["beta_bernoulli", "gamma_poisson", "normal_gamma"], ["dp", "py"]),
    *(
        (variant, False, family, prior)
        for variant in OPTIONS
        for family, prior in [
            ("normal_inverse_wishart", "dp"), ("dirichlet_multinomial", "dp"), ("normal_gamma", "mfm"), ("normal_gamma", "ngg"),
        ]
    ),
]
"""``(variant, gibbs_sweep, family, prior)``: each variant alone and with its Gibbs sweep on three families under DP
and PY; alone on the Normal-inverse-Wishart and Dirichlet-multinomial data under DP, and on Normal-Gamma data under
the MFM and the NGG prior (``u`` at the model's initial value: the target ``p(Π | u, x)``, enumerated at that value)."""


@pytest.mark.slow
@pytest.mark.parametrize(
    "variant, gibbs_sweep, family, prior", CELLS,
    ids=[f"{v}-{'gibbs' if g else 'alone'}-{f}-{p}" for v, g, f, p in CELLS],
)
def test_minsm_matches_enumeration(variant, gibbs_sweep, family, prior):
    model, step = build(family, prior, variant, gibbs_sweep)
    partitions, exact = exact_posterior(model, fixed=initial_values(model))
    assert exact.max() < 0.6, "posterior too concentrated for a meaningful test"
    seed = zlib.crc32(f"{variant}-{gibbs_sweep}-{family}-{prior}".encode())
    traces = run_step_chains(model, step, n_draws=12_000 if gibbs_sweep else 25_000, seed=seed)
    check_against_exact(traces, exact, partitions)


@pytest.mark.slow
@pytest.mark.parametrize("variant", list(OPTIONS))
def test_minsm_matches_enumeration_on_categorical_data(variant):
    """``CategoricalMixture`` (one-hot kernel data, hashed as binary features), each variant alone under DP."""
    model, step = build("categorical", "dp", variant, False)
    partitions, exact = exact_posterior(model)
    traces = run_step_chains(model, step, n_draws=25_000, seed=zlib.crc32(f"{variant}-categorical".encode()))
    check_against_exact(traces, exact, partitions)


@pytest.mark.slow
def test_minsm_with_alpha_sampled_by_pymc():
    """MinSM alone inside ``pm.sample``, ``alpha ~ Gamma(2, 2)`` moved by NUTS; exact answer integrates ``alpha`` out."""
    model, partitions, exact = random_alpha_model()
    with model:
        step = pmp.MinHashSplitMergeStep(model["z"], n_moves=5, **OPTIONS["minsm"])
        idata = pm.sample(
            step=step, draws=4000, tune=300, chains=2, cores=1, progressbar=False, random_seed=5,
            compute_convergence_checks=False,
        )
    check_against_exact(np.asarray(idata["posterior"]["z"].values), exact, partitions)
