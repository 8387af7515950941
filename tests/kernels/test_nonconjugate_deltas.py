"""Delta tests for the parametric kernels (docs/design.md §4.2): every claimed log density change equals the PyMC model's.

The kernels' target is ``pi(Pi, theta)``, the joint of the partition and the
parameters of the *occupied* clusters (``kernels.parameters``).  The PyMC
model also holds the unused rows ``K..k_max-1`` of ``mu`` and ``tau``, whose
log density is their prior's; so ``log pi`` must equal the model's
``logp(z, mu, tau)`` (PyTensor, without Jacobians) minus the unused rows'
prior log density, computed here with scipy.  A split uses up a row and a
merge frees one: a ratio that forgot the new cluster's prior density ``g``
would be off by exactly that term.
"""

import functools
from fractions import Fraction

import numpy as np
import pymc as pm
import pytest
from exact import exact_dp_log_prior, exact_normal_mixture
from scipy import stats

import pymc_partitions as pmp
from pymc_partitions.kernels import auxiliary_gibbs, incremental_metropolis, nonconjugate_split_merge, parameters
from pymc_partitions.kernels.info import MOVE_MERGE, MOVE_SPLIT
from pymc_partitions.state import build_state, canonical_labels, log_joint, members_of, rebuild
from pymc_partitions.distributions.cluster_rows import load_rows, parameter_rows

pytestmark = pytest.mark.pytensor_python  # PyTensor without C: conftest.py

N = 8
RNG = np.random.default_rng(21)
X = np.r_[RNG.normal(-2.0, 1.0, (4, 2)), RNG.normal(2.5, 1.0, (4, 2))]
M, SIGMA, A, B = np.array([0.0, 0.5]), 2.0, np.array([2.0, 3.0]), np.array([0.5, 2.0])  # 1/B exact in float32 (PyMC stores the scale)
K_MAX = 5
K_PRIOR = stats.poisson.pmf(np.arange(20), 2.0)
K_PRIOR /= K_PRIOR.sum()
PRIORS = ["dp", "py", "mfm"]


@functools.lru_cache(maxsize=None)
def setup(prior):
    with pm.Model() as model:
        if prior == "dp":
            z = pmp.DirichletProcessPartition("z", alpha=0.9, n=N)
        elif prior == "py":
            z = pmp.PitmanYorPartition("z", alpha=0.5, sigma=0.4, n=N)
        else:
            z = pmp.MixtureOfFiniteMixturesPartition("z", gamma=1.3, k_prior=K_PRIOR, n=N)
        mu = pm.Normal("mu", mu=M, sigma=np.full(2, SIGMA), shape=(K_MAX, 2))  # float64: PyTensor folds a float32 log(sigma)
        tau = pm.Gamma("tau", alpha=A, beta=B, shape=(K_MAX, 2))
        pmp.NormalMixture("x", partition=z, mu=mu, tau=tau, observed=X)
    step = pmp.GibbsStep(model["z"], model=model)
    return step.kernel_model(model.initial_point()), model.compile_logp(jacobian=False)


def unused_rows_log_prior(mu, tau, k):
    """The prior log density of rows ``k..`` of ``mu`` and ``tau`` (scipy)."""
    return float(stats.norm.logpdf(mu[k:], M, SIGMA).sum() + stats.gamma.logpdf(tau[k:], A, scale=1 / B).sum())


def model_log_pi(logp, kernel_model, state, rng):
    """``logp(z, mu, tau)`` of the PyMC model at the state's rows, minus the unused rows' prior."""
    z = canonical_labels(state)
    mu, tau = parameter_rows(kernel_model, state, z, rng)
    return float(logp({"z": z, "mu": mu, "tau_log__": np.log(tau)})) - unused_rows_log_prior(mu, tau, z.max() + 1)


def start_state(kernel_model, z, rng):
    state = build_state(kernel_model, np.asarray(z, dtype=np.int64))
    parameters.initialise(kernel_model, state, rng)
    return state


@pytest.mark.parametrize("prior", PRIORS)
def test_log_joint_equals_model_logp(prior):
    kernel_model, logp = setup(prior)
    rng = np.random.default_rng(1)
    for z in ([0] * N, [0, 1, 0, 2, 1, 0, 3, 3], [0, 1, 2, 3, 4, 0, 1, 2]):
        state = start_state(kernel_model, z, rng)
        assert log_joint(kernel_model, state) == pytest.approx(model_log_pi(logp, kernel_model, state, rng), abs=1e-8)


@pytest.mark.parametrize("prior", PRIORS)
@pytest.mark.parametrize("kernel", ["auxiliary_gibbs", "incremental_metropolis"])
def test_sweep_claimed_change(kernel, prior):
    """Algorithms 8 (m = 2) and 7: the reported change equals the model's, sweep after sweep."""
    kernel_model, logp = setup(prior)
    rng = np.random.default_rng(3)
    state = start_state(kernel_model, [0] * N, rng)
    for _ in range(6):
        before = model_log_pi(logp, kernel_model, state, rng)
        if kernel == "auxiliary_gibbs":
            state, change = auxiliary_gibbs.sweep(kernel_model, state, rng, 2)
        else:
            state, _, info = incremental_metropolis.transition(kernel_model, state, incremental_metropolis.Options(1), rng)
            change = info.log_target_ratio
        assert change == pytest.approx(model_log_pi(logp, kernel_model, state, rng) - before, abs=1e-8)
        assert state.n_clusters[0] <= K_MAX


@pytest.mark.parametrize("prior", PRIORS)
def test_split_merge_claimed_target_ratio(prior):
    """Accepted splits and merges (parameters included): the log target ratio equals the model's change."""
    kernel_model, logp = setup(prior)
    rng = np.random.default_rng(5)
    state = start_state(kernel_model, [0, 0, 0, 1, 1, 0, 1, 2], rng)
    seen = set()
    for _ in range(3000):
        before = model_log_pi(logp, kernel_model, state, rng)
        i, j = rng.choice(N, size=2, replace=False)
        state, info = nonconjugate_split_merge.propose_pair(kernel_model, state, i, j, 2, 2, rng)
        after = model_log_pi(logp, kernel_model, state, rng)
        if not info.accepted:
            assert after == pytest.approx(before, abs=1e-8)  # a rejection restores the partition and its parameters
            continue
        assert info.log_target_ratio == pytest.approx(after - before, abs=1e-8)
        seen.add(int(info.move))
        if len(seen) == 2:
            break
    assert seen == {MOVE_SPLIT, MOVE_MERGE}


def test_no_split_beyond_k_max():
    """With K_MAX clusters a split is rejected without being built; merges still happen."""
    kernel_model, _ = setup("dp")
    rng = np.random.default_rng(6)
    state = start_state(kernel_model, [0, 1, 2, 3, 4, 0, 1, 2], rng)
    state, info = nonconjugate_split_merge.propose_pair(kernel_model, state, 0, 5, 2, 2, rng)
    assert info.move == MOVE_SPLIT and not info.accepted and info.log_target_ratio == -np.inf
    assert state.n_clusters[0] == K_MAX


def test_forced_scans_reproduce_the_density_of_a_sampled_scan():
    """The reverse densities are those of the forward draws: a scan forced to a sampled outcome has its density."""
    kernel_model, _ = setup("py")
    rng = np.random.default_rng(9)
    state = start_state(kernel_model, [0, 0, 0, 0, 1, 1, 1, 1], rng)
    slots = np.array([state.labels[0], state.labels[4]])
    members = np.array([1, 2, 3, 5, 6, 7])
    launch = rebuild(kernel_model, state)
    sampled = rebuild(kernel_model, launch)
    log_q = nonconjugate_split_merge.restricted_parameter_scan(kernel_model, sampled, members, slots, np.empty(0, np.int64), np.empty(0), np.empty(0), rng)
    sides = (sampled.labels[members] == sampled.labels[4]).astype(np.int64)
    forced = rebuild(kernel_model, launch)
    targets = [sampled.theta[sampled.labels[0]].copy(), sampled.theta[sampled.labels[4]].copy()]
    log_forced = nonconjugate_split_merge.restricted_parameter_scan(kernel_model, forced, members, slots, sides, *targets, rng)
    assert log_forced == pytest.approx(log_q, abs=1e-10)
    np.testing.assert_array_equal(canonical_labels(forced), canonical_labels(sampled))
    stats_row = forced.stats[slots[0]] + forced.stats[slots[1]]
    out = np.empty(forced.theta.shape[1])
    log_merge = nonconjugate_split_merge.merge_launch(kernel_model, stats_row, 3, np.empty(0), out, np.random.default_rng(2))
    again = np.empty_like(out)
    assert nonconjugate_split_merge.merge_launch(kernel_model, stats_row, 3, out.copy(), again, np.random.default_rng(2)) == pytest.approx(log_merge)
    np.testing.assert_allclose(again, out)


def test_parameters_follow_their_clusters():
    """Through splits, merges, sweeps and rebuilds every occupied slot's statistics are its items' and the rows
    written out are the state's parameters in canonical order."""
    kernel_model, _ = setup("dp")
    rng = np.random.default_rng(12)
    state = start_state(kernel_model, [0] * N, rng)
    options = nonconjugate_split_merge.Options(2, 1, 0, 2, 1)
    moves = set()
    for t in range(300):
        state, _, info = nonconjugate_split_merge.transition(kernel_model, state, options, rng)
        moves.add((int(info.move), bool(info.accepted)))
        if t % 3 == 0:
            state, _ = auxiliary_gibbs.sweep(kernel_model, state, rng, 1)
        if t % 50 == 0:
            rebuilt = rebuild(kernel_model, state)
            assert log_joint(kernel_model, rebuilt) == pytest.approx(log_joint(kernel_model, state), abs=1e-9)
        z = canonical_labels(state)
        mu, tau = parameter_rows(kernel_model, state, z, rng)
        for k in range(z.max() + 1):
            slot = state.labels[np.flatnonzero(z == k)[0]]
            members = np.empty(N, dtype=np.int64)
            end = members_of(state, slot, members, 0)
            np.testing.assert_array_equal(np.sort(members[:end]), np.flatnonzero(z == k))
            items = kernel_model.data[z == k]  # the data relative to the model's origin, as the kernels sum them
            np.testing.assert_allclose(state.stats[slot], np.r_[len(items), items.sum(0), (items**2).sum(0)], atol=1e-9)
            np.testing.assert_array_equal(state.theta[slot, :2] + kernel_model.origin, mu[k])  # rows in data units
            np.testing.assert_array_equal(state.theta[slot, 2:4], tau[k])
    assert {(MOVE_SPLIT, True), (MOVE_MERGE, True)} <= moves


# --------------------------------------------------------------------------- data far from zero (issue 33)

FAR = {"offset1e8": (1e8, 1.0), "scale2^-27": (1.0, 2.0**-27)}
"""``offset + scale * X`` with the priors moved alike; the scale is a power of two so that the priors'
hyperparameters (``t = 1/(scale SIGMA)^2``, the Gamma rate ``B/scale^2``) are exact in float64."""


@functools.lru_cache(maxsize=None)
def far_setup(where):
    """The DP model on ``offset + scale * X``: its kernel model, compiled logp, data and prior ``(m, t, a, b)``."""
    offset, scale = FAR[where]
    x, m, sigma, rate = offset + scale * X, offset + scale * M, scale * SIGMA, B / scale**2
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=0.9, n=N)
        mu = pm.Normal("mu", mu=m, sigma=np.full(2, sigma), shape=(K_MAX, 2))
        tau = pm.Gamma("tau", alpha=A, beta=rate, shape=(K_MAX, 2))
        pmp.NormalMixture("x", partition=z, mu=mu, tau=tau, observed=x)
    step = pmp.GibbsStep(model["z"], model=model)
    return step.kernel_model(model.initial_point()), model.compile_logp(jacobian=False), x, (m, 1.0 / sigma**2, A, rate)


def exact_log_pi(where, state, mu):
    """``log pi`` of the state's partition at cluster means ``mu`` (data units, Fractions allowed) and its precisions,
    exactly summed (``exact.exact_normal_mixture`` and the DP prior)."""
    kernel_model, _, x, hyper = far_setup(where)
    z = canonical_labels(state)
    tau = parameter_rows(kernel_model, state, z, np.random.default_rng(0))[1]
    return exact_dp_log_prior(z, 0.9) + exact_normal_mixture(x, z, mu, tau, *hyper)


def exact_state_means(kernel_model, state):
    """The state's cluster means in data units, exactly: ``theta + origin`` in rationals, rows in canonical order."""
    z = canonical_labels(state)
    order = [state.labels[np.flatnonzero(z == k)[0]] for k in range(z.max() + 1)]
    return [[Fraction(float(state.theta[slot, j])) + Fraction(float(kernel_model.origin[j])) for j in range(2)] for slot in order]


@pytest.mark.parametrize("where", list(FAR))
def test_log_pi_matches_a_high_precision_reference_far_from_zero(where):
    """Issue 33, the parametric family: ``log pi`` of the kernels (at their own parameters, exactly ``theta + origin``
    in data units) and of the PyMC model (at the rows the step writes, rounded to float64 in data units, read back
    into the state as the step does) agree with exact rational sums to 1e-9 relative; so does the change a sweep
    claims, sweep after sweep."""
    kernel_model, logp, x, (m, t, a, b) = far_setup(where)
    rng = np.random.default_rng(31)
    state = start_state(kernel_model, [0, 1, 0, 2, 1, 0, 3, 3], rng)
    for _ in range(6):
        before = exact_log_pi(where, state, exact_state_means(kernel_model, state))
        assert log_joint(kernel_model, state) == pytest.approx(before, rel=1e-9)
        state, change = auxiliary_gibbs.sweep(kernel_model, state, rng, 2)
        after = exact_log_pi(where, state, exact_state_means(kernel_model, state))
        assert change == pytest.approx(after - before, abs=1e-9 * abs(after))
        z = canonical_labels(state)
        mu, tau = parameter_rows(kernel_model, state, z, rng)  # the rows the step writes (data units)
        load_rows(kernel_model, state, z, mu, tau)  # and reads back
        k = z.max() + 1
        expected = exact_log_pi(where, state, mu)
        assert log_joint(kernel_model, state) == pytest.approx(expected, rel=1e-9)
        unused = stats.norm.logpdf(mu[k:], m, 1 / np.sqrt(t)).sum() + stats.gamma.logpdf(tau[k:], a, scale=1 / b).sum()
        model_log_pi = float(logp({"z": z, "mu": mu, "tau_log__": np.log(tau)})) - unused
        assert model_log_pi == pytest.approx(expected, rel=1e-9)
