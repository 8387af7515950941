"""The sub-cluster split-merge kernel's pieces (``kernels.subcluster``), each against an independent computation.

* delta tests: every accepted split and merge claims the change of the
  PyTensor model's ``logp`` (every additive family under DP, PY, MFM and
  NGG), and so does every whole iteration (DP and PY, with the hybrid);
* construction: the proposal probability the kernel reports for a split,
  and for the merge that reverses it, equals ``Π_h p_h(side)`` written out
  with scipy densities from the launch's parameters, every family; the
  launch from the merged and from the split state is the same draw (a
  function of the set, the anchors and the random numbers only); the
  kernel's decisions follow from the reported pieces, a merge rejected
  before its launch included; the final pass draws each side with its
  probability;
* the state after iterations equals the state rebuilt from its labels;

These tests call the driver from Python (interpreted, ``kernels.twofold``),
which compiles only its pieces; the enumeration tests run it compiled, and
the last test shows the two are the same chain.
* the driver interpreted by Python (passes on numba threads) and compiled
  (serial passes) give the same chain, and the labels scan lists the same
  items as the sorted member lists.
"""

import functools

import numpy as np
import pytest
from scipy import stats
from scipy.special import expit, logsumexp
from runners import run_with_gibbs
from test_deltas import CASES, DATA, N, assert_member_lists_match_labels, setup

from pymc_partitions import families, priors
from pymc_partitions.kernels import shards, subcluster, twofold
from pymc_partitions.kernels.clusters import pair_members
from pymc_partitions.kernels.info import MOVE_MERGE, MOVE_SPLIT, MOVE_SUBCLUSTER
from pymc_partitions.kernels.streams import keyed_uniform
from pymc_partitions.labels import canonical
from pymc_partitions.state import build_state, canonical_labels, log_joint, make_model

ADDITIVE = [family for family in DATA if family != "infinite_relational"]
PROPOSALS_ONLY = subcluster.Options(n_proposals=1, n_launch_sweeps=2, n_refine_sweeps=0, n_shards=3, n_global_sweeps=0)


def sampler(kernel_model, state, options=PROPOSALS_ONLY):
    return subcluster.init(kernel_model, state.labels, options, np.random.default_rng(0))


# --------------------------------------------------------------------------- delta tests


@pytest.mark.parametrize("family, prior", [case for case in CASES if case[0] != "infinite_relational"])
def test_accepted_proposals_claim_the_models_change(family, prior):
    point, kernel_model, logp = setup(family, prior)
    rng = np.random.default_rng(23)
    z = np.array([0, 0, 0, 1, 1, 0, 1, 2, 2], dtype=np.int64)
    seen = set()
    for _ in range(600):
        state = build_state(kernel_model, z)
        before = logp({**point, "z": canonical_labels(state)})
        i, j = rng.choice(N, 2, replace=False)
        state, info = subcluster.propose(kernel_model, state, sampler(kernel_model, state), i, j, rng)
        assert info.move == (MOVE_SPLIT if z[i] == z[j] else MOVE_MERGE)
        if not info.accepted:
            continue
        new_z = canonical_labels(state)
        assert info.log_target_ratio == pytest.approx(logp({**point, "z": new_z}) - before, abs=1e-8)
        assert info.cluster_change == len(np.unique(new_z)) - len(np.unique(z))
        assert_member_lists_match_labels(state)
        seen.add(int(info.move))
        z = new_z.astype(np.int64)
        if len(seen) == 2 and len(np.unique(z)) > 1:
            break
    assert seen == {MOVE_SPLIT, MOVE_MERGE}


@pytest.mark.parametrize("family, prior", [(f, p) for f in ADDITIVE for p in ("dp", "py")])
def test_iterations_claim_the_models_change(family, prior):
    """A whole iteration (two proposals, restricted sweeps, the hybrid on 3 shards) claims the model's change."""
    point, kernel_model, logp = setup(family, prior)
    rng = np.random.default_rng(29)
    state = build_state(kernel_model, np.zeros(N, dtype=np.int64))
    algo = sampler(kernel_model, state, subcluster.Options(n_proposals=2, n_shards=3))
    for _ in range(30):
        z = canonical_labels(state)
        state, algo, info = subcluster.transition(kernel_model, state, algo, rng)
        new_z = canonical_labels(state)
        assert info.move == MOVE_SUBCLUSTER
        assert info.log_target_ratio == pytest.approx(logp({**point, "z": new_z}) - logp({**point, "z": z}), abs=1e-8)
        assert info.log_proposal_ratio == -info.log_target_ratio
        assert info.cluster_change == len(np.unique(new_z)) - len(np.unique(z))


REFINE_CASES = [(f, "py") for f in ADDITIVE] + [("normal_gamma", p) for p in ("dp", "mfm", "ngg")]


@pytest.mark.parametrize("family, prior", REFINE_CASES)
def test_restricted_sweeps_claim_the_models_change(family, prior):
    """``refine``: the claimed change equals the model's; only the two clusters' items move, ``i`` and ``j`` stay."""
    point, kernel_model, logp = setup(family, prior)
    rng = np.random.default_rng(43)
    z = np.array([0, 0, 1, 1, 1, 0, 1, 2, 0], dtype=np.int64)
    state = build_state(kernel_model, z)
    moved = 0
    for t in range(40):
        i, j = (0, 3) if t % 2 else (3, 0)
        before = canonical_labels(state)
        state, change = subcluster.refine(kernel_model, state, sampler(kernel_model, state), i, j, rng)
        after = canonical_labels(state)
        assert change == pytest.approx(logp({**point, "z": after}) - logp({**point, "z": before}), abs=1e-8)
        assert after[7] == before[7] and after[i] == before[i] and after[j] == before[j]
        assert_member_lists_match_labels(state)
        moved += np.any(after != before)
    assert moved > 0


# --------------------------------------------------------------------------- construction


def reference_log_density(family, theta, x):
    """``log f(x_h | θ)`` for the rows of ``x``, with scipy, from the ``draw_params`` layout of each family
    (``x`` in the kernels' coordinates: ``kernel_model.data``, the categorical family's one-hot rows)."""
    d = x.shape[1]
    family = family.partition("-")[0]  # the far-from-zero variants of test_deltas.DATA
    if family == "categorical":  # θ = [0, log θ_col]: the log probabilities of the chosen columns
        return (x * theta[1:]).sum(axis=1)
    if family == "normal_gamma":
        return stats.norm.logpdf(x, theta[:d], 1.0 / np.sqrt(theta[d : 2 * d])).sum(axis=1)
    if family == "beta_bernoulli":
        return stats.bernoulli.logpmf(x, expit(theta[1:])).sum(axis=1)
    if family == "gamma_poisson":
        return stats.poisson.logpmf(x, theta[:d]).sum(axis=1)
    if family == "dirichlet_multinomial":
        return np.array([stats.multinomial.logpmf(row, row.sum(), np.exp(theta[:d])) for row in x])
    if family == "normal_linear_regression":  # x = [y, covariates], θ = [β, τ, ½ log(τ/2π)]
        p = d - 1
        return stats.norm.logpdf(x[:, 0], x[:, 1:] @ theta[:p], 1.0 / np.sqrt(theta[p]))
    assert family == "normal_inverse_wishart", family
    factor = theta[d : d + d * d].reshape(d, d)  # precision = factorᵀ factor
    return stats.multivariate_normal.logpdf(x, theta[:d], np.linalg.inv(factor.T @ factor))


def reference_log_q(family, theta, log_w, x, sides):
    """``Σ_h log p_h(sides[h])`` with ``p_h(t) ∝ w_t f(x_h | θ_t)``."""
    weights = np.stack([log_w[t] + reference_log_density(family, theta[t], x) for t in range(2)], axis=1)
    log_p = weights - logsumexp(weights, axis=1, keepdims=True)
    return log_p[np.arange(len(x)), sides].sum()


def reference_log_g(log_w, launch_sizes):
    """``log g(w | L) = log[ε + (1 - ε) Beta(w; m_0, m_1)]`` from scipy."""
    eps = subcluster.UNIFORM_WEIGHT
    return np.log(eps + (1 - eps) * stats.beta.pdf(np.exp(log_w[0]), *launch_sizes))


def launch_and_final(kernel_model, state, i, j, seed, forced_slot=-1, options=PROPOSALS_ONLY, log_w=None):
    """The launch, the final weight (a split's, unless ``log_w`` is given) and the final pass, as a split runs
    them, from ``default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    algo = sampler(kernel_model, state, options)
    selection = shards.select(algo, kernel_model, state, i, j)
    theta, launch_sizes = subcluster.launch(kernel_model, state, algo, selection, i, j, rng)
    if log_w is None:
        log_w, _ = subcluster.draw_split_weight(launch_sizes, rng)
    sub_stats, sizes, log_q, _ = subcluster.final_pass(
        kernel_model, state, algo, selection, i, j, theta, log_w, forced_slot, rng
    )
    items, sides = selection
    return items, theta, log_w, sides, sub_stats, sizes, log_q, rng, launch_sizes


def split_labels(i, j, items, sides, z):
    """``z`` with ``j`` and the side-1 items in a new cluster (canonical)."""
    new = z.copy()
    new[j] = z.max() + 1
    new[items[sides == 1]] = z.max() + 1
    return canonical(new, new.max() + 1)


@pytest.mark.parametrize("family", ADDITIVE)
def test_split_and_reverse_merge_probabilities_match_a_reference(family):
    """Twelve splits of the cluster {0, 1, 2, 3, 5, 7, 8} anchored by 0 and 7, and their reverse merges: the kernel's
    log q and its final weight's densities ``g`` and ``r`` equal scipy's, and the launch from the split state is the
    same draw."""
    point, kernel_model, logp = setup(family, "dp")
    z = np.array([0, 0, 0, 0, 1, 0, 1, 0, 0], dtype=np.int64)  # one cluster of 7 items, i = 0, j = 7 in it
    i, j = 0, 7
    merged = build_state(kernel_model, z)
    checked_merges = {"early": 0, "full": 0}
    for seed in range(12):
        items, theta, log_w, sides, sub_stats, sizes, log_q, _, launch_sizes = launch_and_final(
            kernel_model, merged, i, j, seed
        )
        np.testing.assert_array_equal(items, [1, 2, 3, 5, 8])
        assert launch_sizes.sum() == 7 and launch_sizes.min() >= 1
        assert np.exp(log_w).sum() == pytest.approx(1.0, abs=1e-12)
        assert log_q == pytest.approx(reference_log_q(family, theta, log_w, kernel_model.data[items], sides), abs=1e-9)
        np.testing.assert_array_equal(sizes, [1 + np.sum(sides == 0), 1 + np.sum(sides == 1)])

        # the kernel's proposal from the same random numbers reports this q and the model's target ratio
        start = build_state(kernel_model, z)
        algo = sampler(kernel_model, start)
        state, info = subcluster.propose(kernel_model, start, algo, i, j, np.random.default_rng(seed))
        z_split = split_labels(i, j, items, sides, z)
        assert info.move == MOVE_SPLIT
        log_r = stats.beta.logpdf(np.exp(log_w[0]), *sizes)  # the reverse merge's density of this w
        expected = log_r - reference_log_g(log_w, launch_sizes) - log_q
        assert info.log_proposal_ratio == pytest.approx(expected, abs=1e-8)
        split_gain = logp({**point, "z": z_split}) - logp({**point, "z": canonical_labels(merged)})
        assert info.log_target_ratio == pytest.approx(split_gain, abs=1e-8)
        if info.accepted:
            np.testing.assert_array_equal(canonical_labels(state), z_split)

        # the reverse merge: the same launch and w from the split state, forced to this split, has the same probability
        split = build_state(kernel_model, z_split.astype(np.int64))
        back = launch_and_final(kernel_model, split, i, j, seed, forced_slot=split.labels[j], log_w=log_w)
        np.testing.assert_array_equal(back[0], items)
        np.testing.assert_array_equal(back[1], theta)  # the launch depends on the set, the anchors and the seed only
        np.testing.assert_array_equal(back[8], launch_sizes)
        np.testing.assert_array_equal(back[3], sides)
        assert back[6] == pytest.approx(log_q, abs=1e-12)

        # the kernel's merge from the split state, against its pieces from the same random numbers
        merge_seed = 100 + seed
        start = build_state(kernel_model, z_split.astype(np.int64))
        algo = sampler(kernel_model, start)
        _, info = subcluster.propose(kernel_model, start, algo, i, j, np.random.default_rng(merge_seed))
        assert info.move == MOVE_MERGE
        assert info.log_target_ratio == pytest.approx(-split_gain, abs=1e-8)
        rng = np.random.default_rng(merge_seed)
        u = rng.random()
        current_sizes = split.sizes[[split.labels[i], split.labels[j]]]
        log_w_m = subcluster.draw_beta_weight(*current_sizes, rng)
        log_r = stats.beta.logpdf(np.exp(log_w_m[0]), *current_sizes)
        if np.isnan(info.log_proposal_ratio):  # rejected before the launch: only if the full ratio would reject too
            total = current_sizes.sum()  # the largest g(w | L) over every launch's sizes (a, total - a)
            g_max = max(np.exp(reference_log_g(log_w_m, (a, total - a))) for a in range(1, total))
            log_bound = info.log_target_ratio - log_r + np.log(g_max)
            assert not info.accepted and log_bound < 0 and u >= np.exp(log_bound)
            checked_merges["early"] += 1
            continue
        algo = sampler(kernel_model, split)
        selection = shards.select(algo, kernel_model, split, i, j)
        theta_m, launch_sizes_m = subcluster.launch(kernel_model, split, algo, selection, i, j, rng)
        merge_sides = (split.labels[items] == split.labels[j]).astype(int)
        expected = (
            reference_log_q(family, theta_m, log_w_m, kernel_model.data[items], merge_sides)
            + reference_log_g(log_w_m, launch_sizes_m) - log_r
        )
        assert info.log_proposal_ratio == pytest.approx(expected, abs=1e-9)
        assert info.accepted == (u < min(1.0, np.exp(info.log_target_ratio + info.log_proposal_ratio)))
        checked_merges["full"] += 1
    assert checked_merges["full"] >= 1


def test_launch_depends_on_the_set_and_anchors_only():
    """The same seed gives the same launch from every partition of ``S`` that keeps the other clusters."""
    _, kernel_model, _ = setup("normal_gamma", "py")
    i, j = 4, 1
    others = np.array([0, 0, 2, 2, 0, 2, 3, 0, 3])  # S = items with label 0 = {0, 1, 4, 7}
    launches = []
    for sides in ([0, 0, 0, 0], [0, 1, 0, 0], [1, 1, 0, 0], [0, 1, 0, 1], [1, 1, 0, 1]):
        z = others.copy()
        z[[0, 1, 4, 7]] = np.where(np.array(sides) == 1, 5, 0)
        state = build_state(kernel_model, z.astype(np.int64))
        items, theta, log_w, *_, launch_sizes = launch_and_final(kernel_model, state, i, j, seed=3)
        np.testing.assert_array_equal(items, [0, 7])
        launches.append(np.concatenate([theta.ravel(), launch_sizes, log_w]))
    for other in launches[1:]:
        np.testing.assert_array_equal(other, launches[0])


def test_final_pass_draws_each_side_with_its_probability():
    """Frequencies of each item's side over 4000 final passes (fixed launch) against ``p_h(1)`` from scipy."""
    family = "normal_gamma"
    _, kernel_model, _ = setup(family, "dp")
    state = build_state(kernel_model, np.zeros(N, dtype=np.int64))
    items, theta, log_w, *_ = launch_and_final(kernel_model, state, 2, 6, seed=0)
    x = kernel_model.data[items]  # relative to the model's origin, as θ
    weights = np.stack([log_w[t] + reference_log_density(family, theta[t], x) for t in range(2)], axis=1)
    p1 = np.exp(weights[:, 1] - logsumexp(weights, axis=1))
    algo = sampler(kernel_model, state)
    rng = np.random.default_rng(1)
    draws = 4000
    ones = np.zeros(len(items))
    selection = shards.select(algo, kernel_model, state, 2, 6)
    for _ in range(draws):
        subcluster.final_pass(kernel_model, state, algo, selection, 2, 6, theta, log_w, -1, rng)
        ones += selection[1]
    bound = 4.5 * np.sqrt(p1 * (1 - p1) / draws) + 1.0 / draws
    assert np.all(np.abs(ones / draws - p1) <= bound), (ones / draws, p1)
    assert np.any((p1 > 0.05) & (p1 < 0.95)), "no item with a real choice: the test has no power"


def test_keyed_uniforms_are_uniform_and_keyed():
    """``streams.keyed_uniform``: a function of (seed, key) alone, uniform over keys (KS test)."""
    values = np.array([keyed_uniform(12345, h) for h in range(20_000)])
    assert stats.kstest(values, "uniform").pvalue > 1e-3
    assert keyed_uniform(12345, 17) == values[17] and keyed_uniform(12346, 17) != values[17]
    assert abs(np.corrcoef(values[:-1], values[1:])[0, 1]) < 0.03


# --------------------------------------------------------------------------- the state; the driver run both ways


def test_state_after_iterations_equals_the_rebuilt_state():
    _, kernel_model, _ = setup("normal_gamma", "py")
    rng = np.random.default_rng(31)
    state = build_state(kernel_model, np.zeros(N, dtype=np.int64))
    options = subcluster.Options(n_proposals=3, n_launch_sweeps=1, n_shards=2, n_global_sweeps=0)
    algo = sampler(kernel_model, state, options)
    for t in range(60):
        state, algo, _ = subcluster.transition(kernel_model, state, algo, rng)
        fresh = build_state(kernel_model, canonical_labels(state).astype(np.int64))
        assert_member_lists_match_labels(state)
        occupied = np.sort(state.slots[: state.n_clusters[0]])
        order = np.argsort([np.flatnonzero(state.labels == s)[0] for s in occupied])
        for slot, fresh_slot in zip(occupied[order], range(fresh.n_clusters[0])):
            assert state.sizes[slot] == fresh.sizes[fresh_slot]
            np.testing.assert_allclose(state.stats[slot], fresh.stats[fresh_slot], atol=1e-9)
            np.testing.assert_allclose(state.cache[slot], fresh.cache[fresh_slot], atol=1e-9)
        assert log_joint(kernel_model, state) == pytest.approx(log_joint(kernel_model, fresh), abs=1e-8)
    assert algo.counts[subcluster.SPLITS_ACCEPTED] > 0 and algo.counts[subcluster.MERGES_ACCEPTED] > 0


@functools.lru_cache(maxsize=None)
def planted_model(n=2 * twofold.PARALLEL_MIN_ITEMS):
    rng = np.random.default_rng(37)
    x = np.array([-6.0, 0.0, 6.0])[rng.integers(0, 3, n)][:, None] + rng.normal(0.0, 1.0, (n, 1))
    params = families.pack_params(families.NORMAL_GAMMA, 1, 0.0, 0.1, 1.5, 6.0)
    return make_model(families.NORMAL_GAMMA, x, params, priors.DP, np.array([1.0]), np.zeros(0))


def test_interpreted_driver_on_threads_is_the_compiled_chain():
    """40,000 items from one cluster (``S`` every item: the labels scan, passes on threads), 4 shards: the driver
    interpreted by Python (threads) and compiled (``runners.run_with_gibbs``, serial) give the same chain bit for bit."""
    model = planted_model()
    n = model.data.shape[0]
    z = np.zeros(n, dtype=np.int32)
    options = subcluster.Options(n_proposals=4, n_shards=4)
    state = build_state(model, z.astype(np.int64))
    algo = sampler(model, state, options)
    np.testing.assert_array_equal(shards.pair_items(state, algo, 5, 9), pair_members(state, 5, 9))
    compiled_algo = subcluster.init(model, state.labels, options, None)
    transition = twofold.compiled(subcluster.transition)
    compiled = run_with_gibbs(transition, model, z, compiled_algo, subcluster.KERNEL.rebuild_period, 3, 0, np.random.default_rng(41))
    counts = compiled_algo.counts
    rng = np.random.default_rng(41)
    algo = subcluster.init(model, state.labels, options, rng)
    for t in range(3):
        state, algo, _ = subcluster.transition(model, state, algo, rng)
        np.testing.assert_array_equal(canonical_labels(state), compiled[t])
    np.testing.assert_array_equal(algo.counts, counts)
    assert compiled[-1].max() >= 2, "the chain found no split: the passes were not exercised"


def test_a_cluster_cut_in_two_unequal_parts_is_merged_again():
    """4,000 items of one Gaussian cut at random into 30 % and 70 %: the merge, proposed from 40 pairs, is accepted in
    about half (20 with this seed; at least 8 is 3.8 binomial standard deviations below that).  With the launch's
    weight as the final weight (no auxiliary ``w``) the reverse split's ``log q`` fell short of the prior's gain by
    about ``|S| KL(0.3 ‖ w)``, over 200 nats, and none of the 40 was (``docs/exactness.md``)."""
    rng = np.random.default_rng(41)
    n = 4000
    params = families.pack_params(families.NORMAL_GAMMA, 1, 0.0, 0.1, 1.5, 6.0)
    model = make_model(families.NORMAL_GAMMA, rng.normal(0.0, 1.0, (n, 1)), params, priors.DP, np.array([1.0]), np.zeros(0))
    z = (rng.random(n) < 0.3).astype(np.int64)
    options = subcluster.Options(n_proposals=1, n_refine_sweeps=0, n_shards=2, n_global_sweeps=0)
    accepted = 0
    for t in range(40):
        state = build_state(model, z)
        i, j = rng.choice(np.flatnonzero(z == 0)), rng.choice(np.flatnonzero(z == 1))
        state, info = subcluster.propose(model, state, sampler(model, state, options), i, j, rng)
        assert info.move == MOVE_MERGE
        assert info.log_target_ratio > 0  # the model prefers one cluster
        accepted += info.accepted
    assert accepted >= 8, accepted


@pytest.mark.parametrize("total", [2, 3, 9, 50, 1000])
def test_early_merge_bound_is_the_largest_split_weight_density(total):
    """``log_split_weight_bound(w, |S|)`` is ``log max_L g(w | L)`` over every launch's sizes ``(a, |S| - a)``
    (scipy), up to its ``1e-9`` margin, so rejecting merges early against it changes no decision."""
    for w in (1e-6, 0.013, 0.3, 0.5, 0.77, 1 - 1e-6):
        log_w = np.array([np.log(w), np.log1p(-w)])
        largest = max(reference_log_g(log_w, (a, total - a)) for a in range(1, total))
        bound = subcluster.log_split_weight_bound(log_w, total)
        assert largest <= bound <= largest + 1e-8, (w, largest, bound)
