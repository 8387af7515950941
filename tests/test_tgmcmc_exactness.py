"""Enumeration tests for ``TreeGuidedStep`` (docs/design.md §4.1): n = 5 items, every family, DP, PY, MFM and NGG.

The exact posterior comes from ``model.compile_logp()`` (``exact.exact_posterior``).
Chains run the step's own transition (``kernels.tgmcmc.transition``) inside
numba with a fixed guide tree, as ``pm.sample`` does after tuning:

* global moves alone (``n_local=0``): the split and merge moves of
  ``kernels/tgmcmc.py`` with nothing else to hide an error;
* global and local moves followed by a full Gibbs sweep (the step
  interleaved with ``GibbsStep``);
* under the NGG prior, ``u`` is updated between transitions from its exact
  conditional on a grid in ``log u``, the grid ``exact_posterior`` integrates
  ``u`` out on, so the chain's target is the enumerated one exactly; every
  transition then sees a new ``u`` (and refreshes the guide's potentials).

``test_step_in_pm_sample_with_u_by_pymc`` runs the step in ``pm.sample`` with
``u`` moved by PyMC, the guide built while tuning.

The delta test (docs/design.md §4.2) is here too, not in ``tests/kernels/test_deltas.py``,
so that one test worker compiles the transition of each family once (numba
specialises it per family; two workers compiling it at the same time doubled
the CPU time of these tests).
"""

import zlib

import numpy as np
import pymc as pm
import pytest
from exact import exact_posterior, set_partitions
from numba import njit
from test_exactness import DATA, build_model, check_against_exact

import pymc_partitions as pmp
from pymc_partitions import priors
from pymc_partitions.kernels import gibbs, ibhc, tgmcmc
from pymc_partitions.kernels.info import MOVE_GIBBS, MOVE_MERGE, MOVE_SPLIT
from pymc_partitions.state import build_state, canonical_labels

N_ITEMS = 5
U_GRID = np.linspace(-6.0, 6.0, 61)
"""``log u`` grid of the NGG tests (trapezoid rule, as ``exact.exact_posterior``)."""
NO_GRID = np.zeros(0)


def exact_for(model, prior):
    return exact_posterior(model, grids={"u_log__": U_GRID} if prior == "ngg" else None)


@njit(cache=True)
def run_chains(model, starts, sampler, n_iterations, gibbs_sweep, log_u_grid, rng):
    """Chains of ``tgmcmc.transition`` (then a Gibbs sweep if ``gibbs_sweep``, then ``u`` from its grid conditional).

    Returns canonical labels (iterations x chains x n).
    """
    n_chains, n = starts.shape
    out = np.empty((n_iterations, n_chains, n), dtype=np.int32)
    n_grid = log_u_grid.shape[0]
    log_mass = np.empty(n_grid)
    scratch = np.empty(n_grid)
    for s in range(n_chains):
        state = build_state(model, starts[s])
        for t in range(n_iterations):
            state, _, _ = tgmcmc.transition(model, state, sampler, rng)
            if gibbs_sweep:
                state, _ = gibbs.sweep(model, state, rng)
            if n_grid > 0:  # log p(Pi, u) + log u (the Jacobian of log u) + the trapezoid weight
                for g in range(n_grid):
                    model.prior_params[3] = np.exp(log_u_grid[g])
                    edge = 0.5 if g == 0 or g == n_grid - 1 else 1.0
                    log_mass[g] = np.log(edge) + log_u_grid[g] + priors.log_v(
                        model.prior, model.prior_params, model.log_v_table, n, state.n_clusters[0]
                    )
                pick = choose_index(log_mass, scratch, rng)
                model.prior_params[3] = np.exp(log_u_grid[pick])
            out[t, s] = canonical_labels(state)
    return out


@njit(cache=True)
def choose_index(log_mass, scratch, rng):
    """An index drawn with probability ``∝ exp(log_mass)``."""
    top = log_mass.max()
    total = 0.0
    for g in range(log_mass.shape[0]):
        scratch[g] = np.exp(log_mass[g] - top)
        total += scratch[g]
    target = rng.random() * total
    for g in range(log_mass.shape[0]):
        target -= scratch[g]
        if target < 0:
            return g
    return log_mass.shape[0] - 1


def run_tgmcmc(model, prior, n_global, n_local, gibbs_sweep, seed, n_chains=4, n_draws=12_500, burn=300):
    """Chains from random partitions with a guide built from a random partition; returns (chains, draws, n)."""
    partitions = set_partitions(N_ITEMS)
    rng = np.random.default_rng(seed)
    with model:
        step = pmp.TreeGuidedStep(model["z"], n_global=n_global, n_local=n_local, D=1)
    kernel_model = step.kernel_model(model.initial_point())
    guide = ibhc.build_guide(kernel_model, partitions[rng.integers(len(partitions))].astype(np.int64), rng)
    sampler = tgmcmc.Sampler(*step.options, guide)
    starts = partitions[rng.integers(len(partitions), size=n_chains)].astype(np.int64)
    grid = U_GRID if prior == "ngg" else NO_GRID
    labels = run_chains(kernel_model, starts, sampler, n_draws + burn, gibbs_sweep, grid, rng)
    return np.swapaxes(labels[burn:], 0, 1)


PRIORS = ["dp", "py", "mfm", "ngg"]


@pytest.mark.parametrize("prior", PRIORS)
@pytest.mark.parametrize("family", list(DATA))
def test_claimed_changes(family, prior):
    """Delta test: every accepted global split and merge claims the model's logp change, and so does a local sweep."""
    model = build_model(family, prior)
    logp = model.compile_logp()
    point = model.initial_point()
    with model:
        step = pmp.TreeGuidedStep(model["z"])
    kernel_model = step.kernel_model(point)
    rng = np.random.default_rng(17)
    guide = ibhc.build_guide(kernel_model, np.array([0, 0, 1, 1, 2]), rng)
    nu = ibhc.log_nu(kernel_model.prior, kernel_model.prior_params, kernel_model.log_v_table, N_ITEMS, guide.k_ref[0])
    ibhc.refresh_guide(kernel_model, guide, nu)
    local = tgmcmc.Sampler(0, 1, 1, guide)
    z = np.array([0, 1, 0, 2, 1], dtype=np.int64)
    seen = set()
    for t in range(600):
        state = build_state(kernel_model, z)
        before = logp({**point, "z": canonical_labels(state)})
        if t % 5 == 4:
            state, _, info = tgmcmc.transition(kernel_model, state, local, rng)
        else:
            log_t = tgmcmc.cluster_log_t(kernel_model, state, guide, nu)
            state, log_t, info = tgmcmc.global_move(kernel_model, state, guide, log_t, nu, rng)
            slots = state.slots[: state.n_clusters[0]]
            np.testing.assert_allclose(log_t[slots], tgmcmc.cluster_log_t(kernel_model, state, guide, nu)[slots], atol=1e-9)
        new_z = canonical_labels(state)
        if info.accepted:
            assert info.log_target_ratio == pytest.approx(logp({**point, "z": new_z}) - before, abs=1e-8)
            assert info.cluster_change == len(np.unique(new_z)) - len(np.unique(z))
            seen.add(int(info.move))
        z = new_z.astype(np.int64)
    assert seen == {MOVE_GIBBS, MOVE_SPLIT, MOVE_MERGE}


@pytest.mark.slow
@pytest.mark.parametrize("prior", PRIORS)
@pytest.mark.parametrize("family", list(DATA))
def test_global_moves_alone(family, prior):
    model = build_model(family, prior)
    partitions, exact = exact_for(model, prior)
    traces = run_tgmcmc(model, prior, 2, 0, False, zlib.crc32(f"alone-{family}-{prior}".encode()))
    check_against_exact(traces, exact, partitions)


@pytest.mark.slow
@pytest.mark.parametrize("prior", PRIORS)
@pytest.mark.parametrize("family", list(DATA))
def test_interleaved_with_gibbs(family, prior):
    model = build_model(family, prior)
    partitions, exact = exact_for(model, prior)
    traces = run_tgmcmc(model, prior, 2, 1, True, zlib.crc32(f"gibbs-{family}-{prior}".encode()), n_draws=8000)
    check_against_exact(traces, exact, partitions)


@pytest.mark.slow
@pytest.mark.parametrize("n_global, n_local", [(20, 1), (0, 1)])
def test_default_and_local_only(n_global, n_local):
    """The paper's setting (20 global moves and a local sweep), and local moves alone."""
    model = build_model("normal_gamma", "py")
    partitions, exact = exact_for(model, "py")
    traces = run_tgmcmc(model, "py", n_global, n_local, False, 7, n_draws=3000 if n_global else 20_000)
    check_against_exact(traces, exact, partitions)


@pytest.mark.slow
def test_step_in_pm_sample_with_u_by_pymc():
    """NGG: ``u`` moved by ``pm.Slice`` in the same ``pm.sample``; the guide is built while tuning."""
    model = build_model("beta_bernoulli", "ngg")
    partitions, exact = exact_posterior(model, grids={"u_log__": np.linspace(-8.0, 8.0, 241)})
    with model:
        idata = pm.sample(
            step=[pmp.TreeGuidedStep(model["z"], n_global=3), pm.Slice([model["u"]])], draws=4000, tune=300, chains=2,
            cores=1, progressbar=False, random_seed=3, compute_convergence_checks=False,
        )
    check_against_exact(np.asarray(idata["posterior"]["z"].values), exact, partitions)
