"""Exactness of tempering across coarsening levels (``kernels/tempering.py``, ``TemperedGibbsStep``).

* Level 1 against the enumerated posterior (n = 5, ``model.compile_logp()``): the step's own transition, two
  levels on every conjugate family under DP (Normal-Gamma with the default moves, one split-merge proposal and
  one Gibbs sweep per level; the others with Gibbs sweeps alone, ``n_split_merge=0``, which halves their run
  time) and, with the default moves, on Normal-Gamma under PY, MFM and NGG (``u`` fixed at its initial value),
  three levels on Beta-Bernoulli under DP and the 4-vertex network (IRM) under DP; three proposals per level on
  three levels of Gamma-Poisson under MFM.
* The joint of the two levels' partitions ``(z_1, z_2)`` (default moves) at n = 4 against ``π_1 × π_2``, ``π_2``
  the c-posterior at ``ζ_2`` enumerated from the PyMC model with ``coarsening`` (the 225 pairs of the 15
  partitions).
* The textbook swap ratio ``exp((ζ_1 − ζ_2)(log L(z_2) − log L(z_1)))``, ``L = m_1``, fails that joint
  enumeration: the test detects the wrong construction (``m_ζ ≠ m_1^ζ``).
* Delta tests (two split-merge proposals and a sweep per level): the change of level 1's log joint a transition
  claims, and every swap's log ratio, equal the PyMC models' ``logp`` (each level a model with its own
  ``coarsening``), for every family and prior of ``tests/kernels/test_deltas.py``.
* Geweke (2004): the successive-conditional chain of ``(x, z_1, ..., z_L)`` (the auxiliary levels redrawn
  exactly given the new data, by enumeration) against forward draws of ``(z, x)``, ``GEWEKE_N`` items; the
  textbook swap fails the same test.
* ``alpha`` moved from level 1 alone (redrawn from its exact conditional given ``z_1`` before every transition,
  as PyMC would move it), the auxiliary levels at ``h_ref``: level 1 is the posterior with ``alpha`` integrated
  out (n = 4).  ``tests/steps/test_tempering_step.py`` runs the step in ``pm.sample`` with NUTS on ``alpha``.

Every chain runs ``kernels.chain``'s loop inside numba (:func:`run_levels`), which also records level 2.

Tolerances: ``test_exactness.check_against_exact`` (docs/exactness.md, "The tolerance").
"""

import functools
import inspect
import math
import sys
import zlib
from pathlib import Path

import numpy as np
import pymc as pm
import pytest
from coarsened import dp_log_prior
from exact import exact_posterior, initial_values, partition_ids, set_partitions, total_variation, tv_tolerance
from geweke import GEWEKE_N, NG_HYPER, batch_mean_and_error, draw_data, statistics
from numba import njit
from scipy import stats
from scipy.special import logsumexp
from test_exactness import DATA, K_PRIOR, add_prior, check_against_exact, effective_size
from test_irm import NETWORK

import pymc_partitions as pmp
from pymc_partitions import families, prior_draws, priors
from pymc_partitions.kernels import tempering
from pymc_partitions.kernels.chain import advance
from pymc_partitions.kernels.moves import choose, metropolis_accept
from pymc_partitions.kernels.twofold import compiled
from pymc_partitions.state import (
    Model, build_state, canonical_labels, log_joint, log_likelihood, log_prior, make_model, refresh_all,
)

sys.path.insert(0, str(Path(__file__).resolve().parent / "kernels"))
import test_deltas  # noqa: E402  (tests/kernels: the delta tests' models)

pytestmark = pytest.mark.pytensor_python  # compile_logp on small graphs, no NUTS: PyTensor without C (conftest.py)

_advance = compiled(advance)
_transition = compiled(tempering.transition)


def coarsening_for(zeta, n_observations):
    """The ``coarsening`` ``c`` with ``zeta = c / (c + n_observations)``; ``None`` for ``zeta = 1``."""
    return None if zeta == 1.0 else zeta * n_observations / (1.0 - zeta)


def add_family(name, z, x, coarsening=None):
    """``test_exactness.add_family``'s observation models on the data ``x``, with ``coarsening``."""
    c = dict(coarsening=coarsening)
    if name == "beta_bernoulli":
        return pmp.BetaBernoulliMixture("x", partition=z, a=0.7, b=1.3, observed=x, **c)
    if name == "normal_gamma":
        return pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=0.5, a0=2.0, b0=2.0, observed=x, **c)
    if name == "normal_inverse_wishart":
        return pmp.NormalInverseWishartMixture(
            "x", partition=z, mu0=0.0, kappa0=0.5, nu0=4.0, Psi0=2.0 * np.eye(2), observed=x, **c
        )
    if name == "dirichlet_multinomial":
        return pmp.DirichletMultinomialMixture("x", partition=z, beta=0.8, observed=x, **c)
    if name == "categorical":
        return pmp.CategoricalMixture("x", partition=z, beta=[0.6, 1.5], n_categories=[3, 2], observed=x, **c)
    if name == "infinite_relational":
        return pmp.InfiniteRelationalModel("x", partition=z, a=1.0, b=1.0, observed=x, **c)
    return pmp.GammaPoissonMixture("x", partition=z, a=2.0, b=0.7, observed=x, **c)


def build(family, prior="dp", zeta=1.0, n=5):
    """The model of ``test_exactness`` on its first ``n`` items (the IRM: the 4-vertex network of ``test_irm``),
    its likelihood to the power ``zeta``."""
    if family == "infinite_relational":
        x, n = NETWORK, NETWORK.shape[0]
        observations = n * (n - 1) // 2
    else:
        x, observations = DATA[family][:n], n
    with pm.Model() as model:
        if prior == "dp":
            z = pmp.DirichletProcessPartition("z", alpha=1.3, n=n)
        elif n == 5:
            z = add_prior(prior)
        elif prior == "py":
            z = pmp.PitmanYorPartition("z", alpha=0.9, sigma=0.3, n=n)
        else:
            z = pmp.MixtureOfFiniteMixturesPartition("z", gamma=0.8, k_prior=K_PRIOR, n=n)
        add_family(family, z, x, coarsening_for(zeta, observations))
    return model


SM = inspect.signature(pmp.TemperedGibbsStep).parameters["n_split_merge"].default
"""The step's default ``n_split_merge`` (split-merge proposals per level per transition), the cells' unless given."""

LEVEL_ONE_CASES = [  # the default moves on Normal-Gamma, Gibbs sweeps alone (cheaper) on the other families
    (family, "dp", (1.0, 0.5), SM if family == "normal_gamma" else 0) for family in DATA
] + [("normal_gamma", prior, (1.0, 0.5), SM) for prior in ("py", "mfm", "ngg")] + [
    ("beta_bernoulli", "dp", (1.0, 0.6, 0.3), SM), ("infinite_relational", "dp", (1.0, 0.4), SM),
    ("gamma_poisson", "mfm", (1.0, 0.6, 0.3), 3),  # several proposals per level
]


@pytest.mark.parametrize("family, prior, ladder, n_split_merge", LEVEL_ONE_CASES)
def test_level_one_matches_enumeration(family, prior, ladder, n_split_merge):
    model = build(family, prior)
    partitions, exact = exact_posterior(model, fixed=initial_values(model))
    assert exact.max() < 0.6, "posterior too concentrated for a meaningful test"
    seed = zlib.crc32(f"tempering-{family}-{prior}-{len(ladder)}-{n_split_merge}".encode())
    traces, _ = level_chains(model, ladder, seed=seed, n_split_merge=n_split_merge)
    check_against_exact(traces, exact, partitions)


# --------------------------------------------------------------------------- the joint of two levels


JOINT_FAMILY, JOINT_ZETA, JOINT_ITEMS = "normal_gamma", 0.3, 4


@njit(cache=True)
def textbook_transition(model, state, sampler, rng):
    """The WRONG swap, for the negative test: :func:`tempering.transition` with two levels, but the swap accepted
    with the parallel-tempering ratio of a fixed likelihood ``L = m_1``,
    ``exp((ζ_1 − ζ_2)(log L(z_2) − log L(z_1)))``, which assumes ``π_2 ∝ p(z) m_1(x | z)^ζ_2``."""
    labels = sampler.labels.copy()
    log_joints = np.empty(2)
    state, _ = tempering.move_levels(model, state, sampler, labels, log_joints, rng)
    log_l1 = log_likelihood(model, build_state(model, labels[0]))
    log_l2 = log_likelihood(model, build_state(model, labels[1]))
    log_ratio = (sampler.ladder[0] - sampler.ladder[1]) * (log_l2 - log_l1)
    accepted, _ = metropolis_accept(log_ratio, rng)
    if accepted:
        for i in range(labels.shape[1]):
            labels[0, i], labels[1, i] = labels[1, i], labels[0, i]
        state = build_state(model, labels[0])
    sampler = tempering.Sampler(
        sampler.n_sweeps, sampler.n_split_merge, sampler.ladder, sampler.reference, sampler.params,
        sampler.empty_caches, labels, sampler.log_swap_ratios, 0.0, np.int64(accepted), np.int64(1),
        sampler.swap_prob_sums, sampler.swap_counts,
    )
    return state, sampler, tempering.report(model, state, tempering.Move(7, accepted, 0.0, 0.0, 0.0, 0))


@njit(cache=True)
def run_levels(model, z0, sampler, n_iterations, alpha_grid, log_alpha_weights, textbook, rng):
    """Chains of ``tempering.transition`` (:func:`textbook_transition` if ``textbook``) from the labels ``z0``
    (chains x items), each starting from ``sampler``,
    through ``kernels.chain``'s loop (``advance``, as ``pm.sample`` runs it): ``(level 1's labels, level 2's
    labels)``, each ``(iterations, chains, items)``.

    With a non-empty ``alpha_grid`` (a DP model) every transition first redraws level 1's ``alpha`` from its exact
    conditional given level 1's partition, ``∝ w_j alpha_j^K Γ(alpha_j) / Γ(alpha_j + n)`` under the discrete
    prior ``w`` on the grid (``log_alpha_weights``), as PyMC would move it from level 1 alone; the sampler state
    keeps the auxiliary levels at ``h_ref``.
    """
    n_chains, n = z0.shape
    first = np.empty((n_iterations, n_chains, n), dtype=np.int64)
    second = np.empty((n_iterations, n_chains, n), dtype=np.int64)
    log_alpha = np.empty(alpha_grid.shape[0])
    for s in range(n_chains):
        state = build_state(model, z0[s])
        at = model
        chain_sampler = sampler
        for t in range(n_iterations):
            if alpha_grid.shape[0] > 0:
                k = state.n_clusters[0]
                for j in range(alpha_grid.shape[0]):
                    a = alpha_grid[j]
                    log_alpha[j] = log_alpha_weights[j] + k * math.log(a) + math.lgamma(a) - math.lgamma(a + n)
                pick, _ = choose(log_alpha, alpha_grid.shape[0], -1, rng)
                at = Model(
                    model.family, model.data, model.params, model.prior, np.array([alpha_grid[pick]]),
                    model.log_v_table, model.empty_cache, model.origin,
                )
                refresh_all(at, state)
            if textbook:
                state, chain_sampler, info = _advance(textbook_transition, at, state, chain_sampler, t, 1000, rng)
            else:
                state, chain_sampler, info = _advance(_transition, at, state, chain_sampler, t, 1000, rng)
            first[t, s] = info.labels
            second[t, s] = chain_sampler.labels[1]
    return first, second


NO_GRID = np.zeros(0)


def level_chains(
    model, ladder, seed, n_split_merge=SM, n_draws=8000, n_chains=4, burn=300, alpha_grid=NO_GRID, log_weights=NO_GRID
):
    """``TemperedGibbsStep(ladder, n_split_merge=n_split_merge)``'s own transition (``step.kernel``,
    ``step.options``) in chains from random partitions at the model's initial hyperparameters (:func:`run_levels`):
    ``(level 1, level 2)`` labels, each ``(chains, draws, items)``."""
    with model:
        step = pmp.TemperedGibbsStep(model["z"], ladder=ladder, n_split_merge=n_split_merge)
    kernel_model = step.kernel_model(model.initial_point())
    partitions = set_partitions(model["z"].type.shape[0])
    rng = np.random.default_rng(seed)
    start = partitions[rng.integers(len(partitions), size=n_chains)].astype(np.int64)
    assert step.kernel.transition is tempering.transition  # what run_levels runs
    sampler = step.kernel.init(kernel_model, start[0], step.options, rng)
    one, two = run_levels(kernel_model, start, sampler, n_draws + burn, alpha_grid, log_weights, False, rng)
    return np.swapaxes(one[burn:], 0, 1), np.swapaxes(two[burn:], 0, 1)


def joint_run(textbook, seed, n_draws=20_000, burn=300):
    """The pairs ``(z_1, z_2)`` of the tempering transition (the textbook one if ``textbook``) with the ladder
    ``(1, JOINT_ZETA)`` on :data:`JOINT_FAMILY`'s first :data:`JOINT_ITEMS` items (DP), and the exact
    ``π_1 × π_2``: ``(pair ids (chains, draws), exact pmf, (π_1, π_2))``."""
    model = build(JOINT_FAMILY, n=JOINT_ITEMS)
    partitions, first = exact_posterior(model)
    _, second = exact_posterior(build(JOINT_FAMILY, zeta=JOINT_ZETA, n=JOINT_ITEMS))
    with model:
        step = pmp.TemperedGibbsStep(model["z"], ladder=(1.0, JOINT_ZETA))
    kernel_model = step.kernel_model(model.initial_point())
    rng = np.random.default_rng(seed)
    start = partitions[rng.integers(len(partitions), size=4)].astype(np.int64)
    sampler = tempering.init(kernel_model, start[0], step.options, rng)
    one, two = run_levels(kernel_model, start, sampler, n_draws + burn, NO_GRID, NO_GRID, textbook, rng)
    ids = partition_ids(np.swapaxes(one[burn:], 0, 1), partitions) * len(partitions)
    ids += partition_ids(np.swapaxes(two[burn:], 0, 1), partitions)
    return ids, np.outer(first, second).ravel(), (first, second)


def pmf_check(ids, exact):
    """``(TV, tolerance)`` of the pooled frequencies of ``ids`` (chains x draws) against ``exact``
    (``test_exactness.check_against_exact``'s bound), asserting enough effective draws."""
    freq = np.bincount(ids.ravel(), minlength=exact.size) / ids.size
    n_eff = effective_size(ids, exact)
    assert n_eff > 1000, f"too few effective draws ({n_eff:.0f}) for a meaningful test"
    return total_variation(freq, exact), tv_tolerance(exact, n_eff)


def test_joint_of_two_levels_matches_enumeration():
    ids, exact, (first, second) = joint_run(False, seed=zlib.crc32(b"tempering-joint"))
    assert total_variation(first, second) > 0.25, "the levels' targets barely differ: no test of the swap"
    tv, tol = pmf_check(ids, exact)
    assert tv < tol, f"joint: TV {tv:.4f} >= tolerance {tol:.4f}"
    tv, tol = pmf_check(ids // len(first), first)
    assert tv < tol, f"level 1: TV {tv:.4f} >= tolerance {tol:.4f}"


def test_textbook_swap_ratio_fails_the_joint_enumeration():
    """The parallel-tempering ratio of a fixed likelihood is not this target's: the enumeration rejects it, on the
    joint and on level 1 alone (TV 0.042 there, against a tolerance of 0.013)."""
    ids, exact, (first, _) = joint_run(True, seed=zlib.crc32(b"tempering-textbook"))
    tv, tol = pmf_check(ids, exact)
    assert tv > tol, f"joint: the textbook ratio passed, TV {tv:.4f} < tolerance {tol:.4f}"
    tv, tol = pmf_check(ids // len(first), first)
    assert tv > 2 * tol, f"level 1: the textbook ratio passed, TV {tv:.4f}, tolerance {tol:.4f}"


# --------------------------------------------------------------------------- delta tests

DELTA_LADDER = (1.0, 0.6, 0.35)
_ONE_FAMILY_CASES = ("normal_linear_regression", "infinite_relational")  # below, each once
DELTA_CASES = [(f, "dp") for f in test_deltas.DATA if "-" not in f and f not in _ONE_FAMILY_CASES] + [
    ("normal_gamma", p) for p in ("py", "mfm", "ngg", test_deltas.COARSENED)
] + [("infinite_relational", test_deltas.COARSENED), ("normal_linear_regression", "dp")]


def level_logps(family, prior, base_zeta, n_observations):
    """Each level's PyMC ``logp`` (no Jacobian): ``test_deltas.build``'s model with the likelihood to the power
    ``base_zeta * ζ_l`` (``coarsening``)."""
    logps = []
    for zeta in DELTA_LADDER:
        c = coarsening_for(base_zeta * zeta, n_observations)
        model = test_deltas.build(family, "dp" if prior == test_deltas.COARSENED else prior, coarsening=c)
        logps.append(model.compile_logp(jacobian=False))
    return logps


@pytest.mark.parametrize("family, prior", DELTA_CASES)
def test_claimed_changes_and_swap_ratios(family, prior):
    point, kernel_model, logp = test_deltas.setup(family, prior)
    n = test_deltas.N
    n_observations = n * (n - 1) // 2 if family == "infinite_relational" else n
    base_zeta = 2.0 / (2.0 + n_observations) if prior == test_deltas.COARSENED else 1.0
    logps = level_logps(family, prior, base_zeta, n_observations)
    rng = np.random.default_rng(zlib.crc32(f"tempering-delta-{family}-{prior}".encode()))
    z = rng.integers(0, 3, n).astype(np.int64)
    z = canonical_labels(build_state(kernel_model, z)).astype(np.int64)
    options = tempering.Options(DELTA_LADDER, n_split_merge=2)  # the claimed change adds sweeps' and proposals'
    sampler = tempering.init(kernel_model, z, options, rng)
    state = build_state(kernel_model, z)

    def at(level, labels):
        return logps[level]({**point, "z": np.asarray(labels)})

    assert log_joint(kernel_model, state) == pytest.approx(at(0, z), abs=1e-8)
    swaps = 0
    for _ in range(30):
        before = canonical_labels(state)
        state, sampler, info = tempering.transition(kernel_model, state, sampler, rng)
        assert info.move == tempering.MOVE_TEMPERING
        np.testing.assert_array_equal(sampler.labels[0], info.labels)
        assert info.log_target_ratio == pytest.approx(at(0, info.labels) - at(0, before), abs=1e-8)
        for low in np.flatnonzero(~np.isnan(sampler.log_swap_ratios)):
            after_low, after_high = sampler.labels[low], sampler.labels[low + 1]
            # the partitions before the swap: exchanged back if it was accepted (log r is antisymmetric)
            ratio = at(low, after_high) + at(low + 1, after_low) - at(low, after_low) - at(low + 1, after_high)
            claimed = sampler.log_swap_ratios[low]
            assert abs(claimed) == pytest.approx(abs(ratio), abs=1e-8)
            swaps += 1
        assert sampler.swaps_proposed == np.count_nonzero(~np.isnan(sampler.log_swap_ratios))
    assert swaps >= 15
    fresh = build_state(kernel_model, info.labels.astype(np.int64))
    assert log_joint(kernel_model, state) == pytest.approx(log_joint(kernel_model, fresh), abs=1e-9)


# --------------------------------------------------------------------------- hyperparameters moved from level 1

ALPHA_GRID = np.exp(np.linspace(-3.0, 2.5, 45))
"""The support of ``alpha``'s discrete prior in :func:`test_alpha_moved_from_level_one`."""


def test_alpha_moved_from_level_one():
    """``alpha`` redrawn from its exact conditional given level 1's partition before every transition (a Gibbs
    move of ``h`` from level 1 alone, as PyMC's NUTS or slice makes it), the auxiliary levels at ``h_ref`` (the
    initial alpha): level 1 is the posterior with ``alpha`` integrated out under its prior, ``w_j ∝ Gamma(2, 2)``
    density times ``alpha_j`` (a uniform grid in ``log alpha``)."""
    model = build("normal_gamma", n=JOINT_ITEMS)  # DP(1.3): h_ref = 1.3
    partitions = set_partitions(JOINT_ITEMS)
    logp = model.compile_logp()
    log_likelihood_of = np.array([logp({"z": z}) - dp_log_prior(z, 1.3) for z in partitions])
    log_weights = stats.gamma.logpdf(ALPHA_GRID, 2.0, scale=0.5) + np.log(ALPHA_GRID)
    log_weights -= logsumexp(log_weights)
    log_mass = np.array([
        logsumexp([w + dp_log_prior(z, a) for a, w in zip(ALPHA_GRID, log_weights)]) for z in partitions
    ]) + log_likelihood_of
    exact = np.exp(log_mass - logsumexp(log_mass))
    _, fixed = exact_posterior(model)
    assert total_variation(exact, fixed) > 0.05, "alpha's prior barely matters: no test of h_ref"
    traces, _ = level_chains(
        model, (1.0, 0.4), seed=zlib.crc32(b"tempering-alpha"), alpha_grid=ALPHA_GRID, log_weights=log_weights
    )
    check_against_exact(traces, exact, partitions)


# --------------------------------------------------------------------------- Geweke

GEWEKE_LADDER, GEWEKE_ALPHA, GEWEKE_ITERATIONS = (1.0, 0.5), 2.5, 8000
"""The Geweke tests' ladder, DP concentration and chain length.  Of the settings tried for the textbook swap
(8,000 iterations; ``ζ_2`` 0.3 or 0.5, ``alpha`` 0.5, 1 or 2.5) this one separated it best (largest |z| 5.35,
against 3.9 to 4.4 for the others).  Cost: about 3 s per chain after compilation, and 2 s for the forward draws."""


@njit(cache=True)
def level_log_targets(model, sampler, level, log_priors, masks):
    """Level ``level``'s log joint at every partition: ``log_priors[p] + Σ_c log m(x_c)`` over the clusters of
    partition ``p`` (``masks[p]``: its clusters as bit masks of the items, 0 padded), each cluster's log marginal
    at the level's parameters (``families.log_marginal``) computed once per subset of the items."""
    at = tempering.level_model(model, sampler, level)
    n, family = at.data.shape[0], at.family
    item_stats = np.zeros((n, families.stat_size(family, at.data.shape[1])))
    for i in range(n):
        families.item_stats(family, at.data[i], item_stats[i])
    log_m = np.zeros(2**n)  # log_m[0] = 0: the padding
    for mask in range(1, 2**n):
        stats = np.zeros(item_stats.shape[1])
        for i in range(n):
            if mask >> i & 1:
                stats += item_stats[i]
        log_m[mask] = families.log_marginal(family, stats, at.params)
    out = log_priors.copy()
    for p in range(masks.shape[0]):
        for c in range(n):
            out[p] += log_m[masks[p, c]]
    return out


@njit(cache=True)
def geweke_transition(model, z, sampler, partitions, log_priors, masks, textbook, rng):
    """The chain's step given the data in ``model``: each auxiliary level's partition drawn from ``π_l(· | x)``
    by enumeration of ``partitions`` (:func:`level_log_targets`), then one tempering transition (the textbook
    one if ``textbook``) from ``z``; returns level 1's new labels."""
    labels = sampler.labels.copy()
    for level in range(1, labels.shape[0]):
        pick, _ = choose(level_log_targets(model, sampler, level, log_priors, masks), partitions.shape[0], -1, rng)
        labels[level] = partitions[pick]
    aux = tempering.Sampler(
        sampler.n_sweeps, sampler.n_split_merge, sampler.ladder, sampler.reference, sampler.params,
        sampler.empty_caches, labels, sampler.log_swap_ratios, sampler.swap_accept, sampler.swaps_accepted,
        sampler.swaps_proposed, sampler.swap_prob_sums, sampler.swap_counts,
    )
    if textbook:
        _, _, info = textbook_transition(model, build_state(model, z), aux, rng)
    else:
        _, _, info = _transition(model, build_state(model, z), aux, rng)
    return info.labels.astype(np.int64)


@functools.cache
def forward_statistics(seed, n_forward=20_000):
    """:func:`geweke.statistics` of independent draws ``Π ~ DP(GEWEKE_ALPHA)``, ``x ~ p(x | Π)``: (draws, 4)."""
    rng = np.random.default_rng(seed)
    return np.array([
        statistics(z, draw_data(z, rng))
        for z in (prior_draws.dirichlet_process_partition(GEWEKE_N, GEWEKE_ALPHA, rng) for _ in range(n_forward))
    ])


def geweke_scores(textbook, seed, n_iterations=GEWEKE_ITERATIONS):
    """Geweke's (2004) z-scores of :func:`geweke.statistics`: the forward draws (:func:`forward_statistics`)
    against the successive-conditional chain of the tempering transition (the textbook one if ``textbook``)
    with :data:`GEWEKE_LADDER` on ``GEWEKE_N`` items, Normal-Gamma (``geweke.NG_HYPER``), DP(``GEWEKE_ALPHA``).

    The chain's state is ``(x, z_1, z_2, ..., z_L)`` with the joint ``p(z_1) p(x | z_1) Π_{l ≥ 2} π_l(z_l | x)``,
    which the transition (a kernel of ``(z_1, ..., z_L)`` given ``x``) keeps.  Redrawing ``x ~ p(x | z_1)`` alone
    is not guaranteed to: the auxiliary levels' targets depend on ``x``, so auxiliary partitions left from the
    previous ``x`` are not draws of ``π_l(· | x)`` (that chain, run for 40,000 iterations, happened to stay within
    |z| 0.5 here: the effect is small, but it is not an argument).  The data step is therefore the exact draw of ``(x, z_2, ..., z_L)``
    given ``z_1``: ``x ~ p(x | z_1)``, then each ``z_l ~ π_l(· | x)`` by enumeration (:func:`geweke_transition`).
    The ``(z_1, x)`` marginal of the chain is then the model's joint, which the forward draws sample directly.
    One kernel model serves every iteration: its origin is fixed at 0, so its parameters and caches do not depend
    on the data, which each iteration writes into it.
    """
    forward = forward_statistics(seed)
    rng = np.random.default_rng(seed + 1)
    params = families.pack_params(families.NORMAL_GAMMA, 1, *NG_HYPER.values())
    model = make_model(
        families.NORMAL_GAMMA, np.zeros((GEWEKE_N, 1)), params, priors.DP, np.array([GEWEKE_ALPHA]), np.zeros(0),
        origin=np.zeros(1),
    )
    partitions = set_partitions(GEWEKE_N).astype(np.int64)
    masks = np.zeros_like(partitions)
    for p, labels in enumerate(partitions):
        np.add.at(masks[p], labels, 2 ** np.arange(GEWEKE_N))
    log_priors = np.array([log_prior(model, build_state(model, labels)) for labels in partitions])
    z = prior_draws.dirichlet_process_partition(GEWEKE_N, GEWEKE_ALPHA, rng).astype(np.int64)
    sampler = tempering.init(model, z, tempering.Options(GEWEKE_LADDER), rng)
    model.data[:] = draw_data(z, rng)
    for level in range(1, len(GEWEKE_LADDER)):  # the enumeration's log joints are the kernel's
        at = tempering.level_model(model, sampler, level)
        direct = [log_joint(at, build_state(at, labels)) for labels in partitions]
        np.testing.assert_allclose(level_log_targets(model, sampler, level, log_priors, masks), direct, atol=1e-9)
    chain = np.empty((n_iterations, forward.shape[1]))
    for t in range(n_iterations):
        x = draw_data(z, rng)
        model.data[:] = x
        z = geweke_transition(model, z, sampler, partitions, log_priors, masks, textbook, rng)
        chain[t] = statistics(z, x)
    mean_f, error_f = forward.mean(axis=0), forward.std(axis=0, ddof=1) / np.sqrt(len(forward))
    mean_c, error_c = batch_mean_and_error(chain)
    return (mean_c - mean_f) / np.hypot(error_f, error_c)


GEWEKE_SEED = zlib.crc32(b"tempering-geweke")


def test_geweke_joint_of_partition_and_data():
    """The chain's ``(z_1, x)`` has the model's joint law (:func:`geweke_scores`).  Tolerance: under that law each
    z-score is close to standard normal (100 batch means, t with 99 degrees of freedom), ``P(|t_99| > 4) < 1.3e-4``,
    so the four statistics all pass with probability above 0.9995 (Bonferroni)."""
    scores = geweke_scores(False, GEWEKE_SEED)
    assert np.all(np.abs(scores) < 4.0), f"Geweke z-scores {np.round(scores, 2)}"


def test_geweke_detects_the_textbook_swap():
    """The same test, same seeds, with the textbook swap ratio (:func:`textbook_transition`): it fails (|z| 4.85
    on the within-cluster spread, -4.07 on K; the exact swap's largest is 1.19), so the test above can."""
    scores = geweke_scores(True, GEWEKE_SEED)
    assert np.abs(scores).max() > 4.0, f"the textbook swap passed the Geweke test, z-scores {np.round(scores, 2)}"
