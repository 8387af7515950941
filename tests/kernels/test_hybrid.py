"""The hybrid sampler's pieces (``kernels.hybrid``), each against an independent computation.

* the driver's plan: hot shard, cold ranking, anchors, tail, and the
  Dirichlet weights' means (Pitman's posterior, eq. (8));
* one item's update on a hot shard (eq. (9)) and on a cold shard, by
  frequency, against probabilities written out with scipy (Normal-Gamma);
* the constraints that make the cold shards' moves exact: the set of
  instantiated clusters and every anchor are kept, no cold shard joins a
  cluster anchored after it, only hot shards open clusters;
* ``log_joint_of`` (the claimed log posterior of every iteration) against the
  PyTensor model, for DP and PY;
* the chain does not depend on where the shards run: numba threads or not,
  shards grouped as Dask workers hold them; the state ``transition`` returns and what it reports;
* cold shards' block log densities (``families.log_densities``) with the
  entries near the top recomputed draw what a per-item loop draws, bit for bit.
"""

import functools

import numba
import numpy as np
import pytest
from scipy import stats
from scipy.special import logsumexp
from test_deltas import assert_member_lists_match_labels

from pymc_partitions import families, priors
from pymc_partitions.kernels import hybrid
from pymc_partitions.kernels.moves import exp_normalise, index_at
from pymc_partitions.kernels.streams import stream, uniform
from pymc_partitions.labels import relabel
from pymc_partitions.state import ModelArrays, build_state, canonical_labels, log_joint, make_model

RNG = np.random.default_rng(19)
X_NG = RNG.normal(0.0, 2.0, (30, 2))
MU0, KAPPA0, A0, B0 = 0.0, 0.5, 2.0, 2.0


def ng_model(prior=priors.DP, prior_params=(1.1,), x=X_NG):
    """Normal-Gamma mixtures are the only family these tests compile (the enumeration tests add Beta-Bernoulli)."""
    params = families.pack_params(families.NORMAL_GAMMA, x.shape[1], MU0, KAPPA0, A0, B0)
    return make_model(families.NORMAL_GAMMA, x, params, prior, np.array(prior_params), np.zeros(0))


def plan_with(role, anchor, log_weight, theta, log_tail, tail_params, seed):
    return hybrid.Plan(
        np.asarray(role, dtype=np.int64), np.asarray(anchor, dtype=np.int64), np.asarray(log_weight, dtype=float),
        np.asarray(theta, dtype=float), float(log_tail), np.asarray(tail_params, dtype=float), int(seed),
    )


# --------------------------------------------------------------------------- the driver's plan


def summaries_of_counts(counts):
    """Statistics rows with the given counts and every item at 0 (the plan's weights depend on the counts only)."""
    stats = np.zeros(counts.shape + (5,))
    stats[..., 0] = counts
    return stats


def test_plan_chooses_one_hot_shard_ranks_the_others_and_anchors_clusters():
    model = ng_model(priors.PY, (0.8, 0.3))
    counts = np.array([[2, 0, 1, 0], [0, 3, 0, 0], [1, 1, 0, 2]])  # shards x clusters
    stats = summaries_of_counts(counts)
    rng = np.random.default_rng(0)
    hot_seen = np.zeros(3)
    for _ in range(600):
        plan = hybrid.plan_iteration(model, counts, stats, 1, rng)
        hot = np.flatnonzero(plan.role < 0)
        assert hot.size == 1
        hot_seen[hot[0]] += 1
        assert sorted(plan.role[plan.role >= 0]) == [0, 1]
        for c in range(4):
            cold = [plan.role[s] for s in range(3) if counts[s, c] > 0 and plan.role[s] >= 0]
            assert plan.anchor[c] == (min(cold) if cold else -1)
        n_inst = int((plan.anchor >= 0).sum())
        assert plan.tail_params[0] == pytest.approx(0.8 + 0.3 * n_inst) and plan.tail_params[1] == 0.3
        assert np.exp(logsumexp(plan.log_weight[plan.anchor >= 0]) if n_inst else -np.inf) + np.exp(plan.log_tail) == pytest.approx(1.0)
    assert stats_chisquare(hot_seen, np.full(3, 200.0)) > 1e-4


def stats_chisquare(observed, expected):
    return stats.chisquare(observed, expected).pvalue


def test_plan_weights_have_the_pitman_yor_posterior_means():
    """E[w_a] = (m_a − σ)/(α + n) and E[w_T] = (α + Jσ + n_T)/(α + n) (Pitman 1996, Cor. 20, aggregated)."""
    alpha, sigma = 0.8, 0.3
    model = ng_model(priors.PY, (alpha, sigma))
    counts = np.array([[2, 0, 1], [0, 3, 4]])
    stats_ = summaries_of_counts(counts)
    n = counts.sum()
    rng = np.random.default_rng(1)
    draws = {0: [], 1: []}
    for _ in range(4000):
        plan = hybrid.plan_iteration(model, counts, stats_, 1, rng)
        hot = int(np.flatnonzero(plan.role < 0)[0])
        draws[hot].append(np.r_[np.exp(plan.log_weight), np.exp(plan.log_tail)])
    for hot, rows in draws.items():
        rows = np.array(rows)
        inst = [c for c in range(3) if counts[1 - hot, c] > 0]
        n_tail = sum(counts[:, c].sum() for c in range(3) if c not in inst)
        expected = np.zeros(4)
        expected[inst] = (counts[:, inst].sum(axis=0) - sigma) / (alpha + n)
        expected[3] = (alpha + len(inst) * sigma + n_tail) / (alpha + n)
        se = rows.std(axis=0) / np.sqrt(len(rows)) + 1e-12
        assert np.all(np.abs(rows.mean(axis=0) - expected) < 5 * se), (hot, rows.mean(axis=0), expected)


def test_warm_start_plan_lets_several_shards_open_clusters():
    model = ng_model()
    counts = np.array([[1, 1, 0], [1, 0, 0], [0, 1, 2], [1, 0, 0]])
    stats_ = summaries_of_counts(counts)
    rng = np.random.default_rng(2)
    for _ in range(100):
        plan = hybrid.plan_iteration(model, counts, stats_, 3, rng)
        hot = plan.role < 0
        assert hot.sum() == 3 and plan.role[~hot][0] == 0
        for c in range(3):
            holders = counts[:, c] > 0
            if np.any(holders & ~hot):
                assert plan.anchor[c] == 0
            elif (holders & hot).sum() > 1:
                assert plan.anchor[c] == 1  # instantiated, out of every cold shard's reach
            else:
                assert plan.anchor[c] == -1


# --------------------------------------------------------------------------- one item's update, by frequency


def ng_theta(mean, precision):
    """θ in the Normal-Gamma layout ``[μ, λ, Σ ½ log(λ / 2π)]``."""
    return np.r_[mean, precision, 0.5 * np.sum(np.log(np.asarray(precision) / (2 * np.pi)))]


def ng_log_density(x, mean, precision):
    return float(np.sum(stats.norm.logpdf(x, mean, 1.0 / np.sqrt(precision))))


def ng_log_predictive(x, rows):
    """log p(x | rows): per feature a Student-t with 2a_n degrees of freedom (Murphy 2007, eq. (100))."""
    rows = np.asarray(rows).reshape(-1, x.shape[0])
    m = rows.shape[0]
    mean = rows.mean(axis=0) if m else np.zeros(x.shape[0])
    kappa = KAPPA0 + m
    loc = (KAPPA0 * MU0 + rows.sum(axis=0)) / kappa
    a = A0 + m / 2
    b = B0 + 0.5 * ((rows - mean) ** 2).sum(axis=0) + KAPPA0 * m * (mean - MU0) ** 2 / (2 * kappa)
    return float(np.sum(stats.t.logpdf(x, 2 * a, loc, np.sqrt(b * (kappa + 1) / (a * kappa)))))


def update_frequencies(model, labels, plan, shard, n_draws):
    """How often item 0 (updated first) of one shard's sweep ends in each label, over ``n_draws`` seeds."""
    found = {}
    for seed in range(n_draws):
        plan = plan._replace(seed=seed)
        out = labels.copy()
        hybrid.sweep_shard(model, out, plan, shard, 1, plan.anchor.shape[0])
        key = int(out[0]) if out[0] < plan.anchor.shape[0] else "new"  # the other items move too
        found[key] = found.get(key, 0) + 1
    return found


def test_hot_item_follows_the_collapsed_conditional():
    """Item 0 of a hot shard: instantiated clusters 0, 1; tail cluster 2 holds items 1, 2 (eq. (9), PY)."""
    alpha, sigma = 0.8, 0.3
    x = X_NG[:3]
    model = ng_model(priors.PY, (alpha, sigma), x)
    means, precisions = [x[0] + 0.5, x[0] - 1.0], [np.array([0.5, 2.0]), np.array([1.5, 0.3])]
    log_w = np.log([0.3, 0.45])
    log_tail = np.log(0.25)
    n_inst, n_tail, k_tail = 2, 2, 1  # without item 0
    tail_params = [alpha + n_inst * sigma, sigma]
    theta = [ng_theta(m - model.origin, p) for m, p in zip(means, precisions)] + [np.zeros(5)]  # θ relative to the origin
    plan = plan_with([-1], [0, 0, -1], np.r_[log_w, -np.inf], theta, log_tail, tail_params, 0)
    labels = np.array([0, 2, 2])
    denominator = alpha + n_inst * sigma + n_tail
    log_p = np.array([
        log_w[0] + ng_log_density(x[0], means[0], precisions[0]),
        log_w[1] + ng_log_density(x[0], means[1], precisions[1]),
        log_tail + np.log((2 - sigma) / denominator) + ng_log_predictive(x[0], x[1:]),
        log_tail + np.log((alpha + (n_inst + k_tail) * sigma) / denominator) + ng_log_predictive(x[0], np.zeros((0, 2))),
    ])
    expected = np.exp(log_p - logsumexp(log_p))
    found = update_frequencies(model, labels, plan, 0, 6000)
    observed = np.array([found.get(0, 0), found.get(1, 0), found.get(2, 0), found.get("new", 0)])
    assert observed.sum() == 6000
    assert stats.chisquare(observed, 6000 * expected).pvalue > 1e-4, (observed / 6000, expected)


def test_cold_item_moves_only_where_it_may():
    """Item 0 of the cold shard of rank 1: clusters anchored at ranks 0 and 1 are open to it, rank 2 is not."""
    x = X_NG[:2]
    model = ng_model(x=x)
    means = [x[0] + 0.3, x[0] - 0.8, x[0]]
    precisions = [np.array([1.0, 0.4]), np.array([0.7, 2.0]), np.array([1.0, 1.0])]
    log_w = np.log([0.2, 0.3, 0.4])
    theta = [ng_theta(m - model.origin, p) for m, p in zip(means, precisions)]  # θ relative to the model's origin
    plan = plan_with([-1, 1], [0, 1, 2], log_w, theta, np.log(0.1), [1.3], 0)
    log_p = np.array([log_w[c] + ng_log_density(x[0], means[c], precisions[c]) for c in (0, 1)])
    expected = np.exp(log_p - logsumexp(log_p))
    for labels in (np.array([0, 1]), np.array([1, 1])):  # item 0 in cluster 0 (anchored elsewhere) or beside item 1
        found = update_frequencies(model, labels, plan, 1, 4000)
        assert set(found) <= {0, 1}
        assert stats.chisquare([found.get(0, 0), found.get(1, 0)], 4000 * expected).pvalue > 1e-4
    # the last item on its anchor shard stays
    assert update_frequencies(model, np.array([1, 0]), plan, 1, 50) == {1: 50}


# --------------------------------------------------------------------------- the constraints, over many iterations


def test_shards_keep_instantiated_clusters_and_anchors():
    model = ng_model(priors.PY, (0.9, 0.4))
    n_shards = 5
    bounds = hybrid.shard_bounds(X_NG.shape[0], n_shards)
    shard_of = np.repeat(np.arange(n_shards), np.diff(bounds))
    rng = np.random.default_rng(3)
    z = rng.integers(0, 6, X_NG.shape[0]).astype(np.int64)
    z = np.unique(z, return_inverse=True)[1].astype(np.int64)
    for t in range(300):
        n_hot = 1 + t % 3
        k = int(z.max()) + 1
        counts, stats_ = hybrid.shard_summaries(model, z, bounds, k)
        plan = hybrid.plan_iteration(model, counts, stats_, n_hot, rng)
        hot = plan.role[shard_of] < 0
        labels = z.copy()
        new, offsets, _, _ = hybrid.run_shards(model, labels, bounds, np.arange(n_shards), plan, 1 + t % 2, k)
        instantiated = np.flatnonzero(plan.anchor >= 0)
        assert set(labels[~hot]) == set(z[~hot]) <= set(instantiated)  # cold items: the same instantiated clusters
        for c in instantiated[plan.anchor[instantiated] < n_shards - n_hot]:
            anchor_shard = np.flatnonzero(plan.role == plan.anchor[c])[0]
            assert np.any(labels[shard_of == anchor_shard] == c), "an anchor shard lost its last item"
        for s in np.flatnonzero(plan.role >= 0):
            joined = set(labels[shard_of == s]) - set(z[shard_of == s])
            assert all(plan.anchor[c] <= plan.role[s] for c in joined)
        assert np.all(labels[~hot] < k) and new[plan.role < 0].sum() == new.sum()
        z = np.unique(labels, return_inverse=True)[1].astype(np.int64)  # any relabelling will do here


# --------------------------------------------------------------------------- the claimed log posterior


@pytest.mark.parametrize("prior", ["dp", "py"])
def test_log_joint_of_summaries_equals_model_logp(prior):
    from test_deltas import N, setup

    point, kernel_model, logp = setup("normal_gamma", prior)
    rng = np.random.default_rng(4)
    for n_shards in (1, 2, 4):
        z = relabel(rng.integers(0, 4, N))
        counts, stats_ = hybrid.shard_summaries(kernel_model, z.astype(np.int64), hybrid.shard_bounds(N, n_shards), z.max() + 1)
        assert hybrid.log_joint_of(kernel_model, counts, stats_) == pytest.approx(logp({**point, "z": z.astype(np.int32)}), abs=1e-8)


# --------------------------------------------------------------------------- the chain does not depend on where shards run


@functools.lru_cache(maxsize=None)
def first_iteration(n_shards, n_hot):
    model = ng_model(priors.PY, (0.9, 0.4))
    z = np.repeat(np.arange(3), 10).astype(np.int64)
    bounds = hybrid.shard_bounds(30, n_shards)
    counts, stats_ = hybrid.shard_summaries(model, z, bounds, 3)
    return model, z, bounds, hybrid.plan_iteration(model, counts, stats_, n_hot, np.random.default_rng(n_shards + n_hot))


def kernel_arguments(model, labels, bounds, shards, plan, n_clusters):
    return (model.family, ModelArrays(*model[1:]), labels, bounds, shards, plan, 2, n_clusters)


@pytest.mark.parametrize("n_shards, n_hot", [(4, 1), (6, 3)])
def test_threads_and_grouping_do_not_change_an_iteration(n_shards, n_hot):
    """The parallel and serial loops, and the shards split in groups as Dask hosts hold them, agree bit for bit."""
    model, z, bounds, plan = first_iteration(n_shards, n_hot)
    shards = np.arange(n_shards)
    serial_labels, parallel_labels = z.copy(), z.copy()
    serial = hybrid.sweep_shards.serial(*kernel_arguments(model, serial_labels, bounds, shards, plan, 3))
    parallel = hybrid.sweep_shards.threads(*kernel_arguments(model, parallel_labels, bounds, shards, plan, 3))
    np.testing.assert_array_equal(serial_labels, parallel_labels)
    for a, b in zip(serial, parallel):
        np.testing.assert_array_equal(a, b)
    merged = hybrid.merge(serial_labels, bounds, *serial, 3)
    grouped_labels, new, counts, stats_ = [], [], [], []
    for group in (shards[:1], shards[1:3], shards[3:]):
        rows = slice(bounds[group[0]], bounds[group[-1] + 1])
        data = model.data[rows]
        local = make_model(model.family.code, data, model.params, model.prior, model.prior_params, np.zeros(0), origin=np.zeros(data.shape[1]))  # as ShardHost.run
        labels = z[rows].copy()
        g_new, g_offsets, g_counts, g_stats = hybrid.run_shards(local, labels, bounds[group[0] : group[-1] + 2] - bounds[group[0]], group, plan, 2, 3)
        used = np.concatenate([np.arange(g_offsets[q], g_offsets[q] + 3 + g_new[q]) for q in range(len(group))])
        grouped_labels.append(labels)
        new.append(g_new)
        counts.append(g_counts[used])
        stats_.append(g_stats[used])
    new = np.concatenate(new)
    offsets = np.r_[0, np.cumsum(3 + new)]
    grouped = hybrid.merge(np.concatenate(grouped_labels), bounds, new, offsets, np.concatenate(counts), np.concatenate(stats_), 3)
    for a, b in zip(merged[:3], grouped[:3]):
        np.testing.assert_array_equal(a, b)


def test_transition_returns_the_state_of_its_labels_and_reports_it():
    """After every iteration (the step's transition) the state is the one its canonical labels give (sizes and
    statistics of every cluster, the per-shard sums' log joint), the sampler state keeps the labels and their
    per-shard summaries (the next iteration's, bit for bit), and the ``Info`` reports the state's log joint,
    cluster count, largest fraction, labels and the changes."""
    model = ng_model()
    options = hybrid.Options(4, 2)
    state = build_state(model, np.zeros(30, dtype=np.int64))
    algo = hybrid.init(model, state.labels, options, None)
    rng = np.random.default_rng(5)
    for _ in range(30):
        before, log_before = state.n_clusters[0], log_joint(model, state)
        state, algo, info = hybrid.KERNEL.transition(model, state, algo, rng)  # compiled (30 items): the step's
        k = int(info.labels.max()) + 1
        fresh = build_state(model, info.labels.astype(np.int64))
        np.testing.assert_array_equal(canonical_labels(state), info.labels)
        assert_member_lists_match_labels(state)
        for c in range(k):
            slot, fresh_slot = state.labels[np.argmax(info.labels == c)], fresh.labels[np.argmax(info.labels == c)]
            assert state.sizes[slot] == fresh.sizes[fresh_slot]
            np.testing.assert_allclose(state.stats[slot], fresh.stats[fresh_slot], rtol=1e-12, atol=1e-12)
        counts, stats_ = hybrid.shard_summaries(model, info.labels.astype(np.int64), algo.bounds, k)
        np.testing.assert_array_equal(algo.z, info.labels)  # what the next iteration starts from, bit for bit
        np.testing.assert_array_equal(algo.counts, counts)
        np.testing.assert_array_equal(algo.stats, stats_)
        assert hybrid.is_result(state, algo.z, algo.counts)
        assert info.log_joint == log_joint(model, state)
        assert info.log_joint == pytest.approx(hybrid.log_joint_of(model, counts, stats_), abs=1e-9)
        assert k == info.n_clusters == state.n_clusters[0]
        assert info.largest_fraction == counts.sum(axis=0).max() / 30
        assert info.cluster_change == info.n_clusters - before
        assert info.log_target_ratio == pytest.approx(info.log_joint - log_before, abs=1e-9)
    assert len(np.unique(info.labels)) > 1


# --------------------------------------------------------------------------- cold shards: block densities, the loop's draws


@numba.njit
def loop_restricted_sweeps(model, labels, plan, shard, n_sweeps, n_clusters):
    """A cold shard's sweeps as they were written before block densities: every allowed cluster's weight
    ``log w_a + families.log_density`` item by item (the reference the block version must reproduce)."""
    rank = plan.role[shard]
    state = stream(plan.seed, shard)
    allowed = np.empty(n_clusters, dtype=np.int64)
    m = 0
    for c in range(n_clusters):
        if 0 <= plan.anchor[c] <= rank:
            allowed[m] = c
            m += 1
    counts = np.zeros(n_clusters, dtype=np.int64)
    for i in range(labels.shape[0]):
        counts[labels[i]] += 1
    log_weights = np.empty(m)
    scratch = np.empty(m)
    for _ in range(n_sweeps):
        for i in range(labels.shape[0]):
            old = labels[i]
            if plan.anchor[old] == rank and counts[old] == 1:
                continue
            for c in range(m):
                a = allowed[c]
                log_weights[c] = plan.log_weight[a] + families.log_density(model.family, plan.theta[a], model.data[i], model.params)
            top, total = exp_normalise(log_weights, m, scratch)
            new = allowed[index_at(scratch, m, uniform(state) * total)]
            counts[old] -= 1
            counts[new] += 1
            labels[i] = new


def cold_shard_case(family, separated, offset=0.0, n=2100, k=6, d=3, seed=0):
    """A model of ``n`` items in ``k`` planted clusters (at ``offset``, relative to their origin) and a plan with
    one cold shard (rank 1) of all of them: clusters anchored at ranks 0 and 1 (open to it) and 2 (not).
    ``separated``: each θ drawn from its planted cluster; else from random items (every cluster plausible)."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, k, n)
    x = offset + rng.normal(0.0, 15.0, (k, d))[truth] + rng.normal(size=(n, d))
    if family == families.NORMAL_GAMMA:
        params = families.pack_params(family, d, offset, 0.3, 2.0, 2.0)
    else:
        params = families.pack_params(family, d, offset, 0.3, d + 2.0, np.eye(d))
    model = make_model(family, x, params, priors.DP, np.array([1.0]), np.zeros(0))
    theta = np.empty((k, families.param_size(family, d)))
    for c in range(k):
        members = np.flatnonzero(truth == c) if separated else rng.choice(n, 300, replace=False)
        stats_ = np.zeros(families.stat_size(family, d))
        item = np.zeros_like(stats_)
        for i in members:
            families.item_stats(family, model.data[i], item)
            stats_ += item
        families.draw_params(family, stats_, model.params, rng, theta[c])
    anchor = np.arange(k) % 3
    log_weight = np.log(rng.dirichlet(np.ones(k)))
    plan = plan_with([0, 1], anchor, log_weight, theta, -np.inf, [1.0], 12345)
    labels = np.where(anchor[truth] <= 1, truth, 0).astype(np.int64)  # cold items sit in clusters open to them
    return model, plan, labels


@pytest.mark.parametrize("family", [families.NORMAL_GAMMA, families.NORMAL_INVERSE_WISHART], ids=["normal_gamma", "niw"])
@pytest.mark.parametrize("separated", [True, False], ids=["separated", "overlapping"])
@pytest.mark.parametrize("offset", [0.0, 1e8], ids=["near 0", "offset 1e8"])
def test_cold_shard_sweeps_draw_what_the_per_item_loop_draws(family, separated, offset):
    """Block densities with the near-top entries recomputed give the loop's labels bit for bit, over 2 sweeps
    of 2100 items (9 blocks): well-separated clusters (one entry per item recomputed) and clusters that all fit
    (most recomputed, so the blocks skip their products and probe every ``PROBE_PERIOD``), near 0 and at 1e8."""
    model, plan, labels = cold_shard_case(family, separated, offset)
    expected = labels.copy()
    loop_restricted_sweeps(model, expected, plan, 1, 2, plan.anchor.shape[0])
    assert hybrid.sweep_shard(model, labels, plan, 1, 2, plan.anchor.shape[0]) == 0
    np.testing.assert_array_equal(labels, expected)
    assert len(np.unique(labels)) > 1


@pytest.mark.parametrize("separated", [True, False], ids=["separated", "overlapping"])
def test_weights_near_top_are_the_loops_where_exp_normalise_reads_them(separated):
    """``loop_weights_near_top``: after ``moves.exp_normalise`` the weights equal the loop's bit for bit (those
    kept block values become exact zeros); with separated clusters about one entry per item is recomputed,
    with overlapping ones nearly all, and with no block values (``bound = inf``) all."""
    model, plan, _ = cold_shard_case(families.NORMAL_GAMMA, separated, n=600)
    k = plan.anchor.shape[0]
    theta = np.ascontiguousarray(plan.theta)
    densities = np.empty((600, k))
    bound = families.log_densities(model.family, theta, model.data, model.params, densities)
    out, loop = np.empty(k), np.empty(k)
    mine, theirs = np.empty(k), np.empty(k)
    recomputed = 0
    for i in range(600):
        recomputed += hybrid.loop_weights_near_top(model, theta, plan.log_weight, densities[i], bound, model.data[i], out)
        for c in range(k):
            loop[c] = plan.log_weight[c] + families.log_density(model.family, theta[c], model.data[i], model.params)
        assert exp_normalise(out, k, mine) == exp_normalise(loop, k, theirs)
        np.testing.assert_array_equal(mine, theirs)
    assert recomputed < 1.5 * 600 if separated else recomputed > 0.8 * 600 * k
    assert hybrid.loop_weights_near_top(model, theta, plan.log_weight, densities[0], np.inf, model.data[0], out) == k


# --------------------------------------------------------------------------- the hot shard's blocked log densities


def test_hot_shard_blocked_densities_draw_the_loops_labels(monkeypatch):
    """From ``HOT_BLOCK_MIN_PARAMS`` on (NIW, D = 32) the hot shard's instantiated log densities come from blocks
    of matrix products; its sweeps give the labels of the item-by-item loop (the same function run by Python with
    the threshold out of reach), bit for bit."""
    d, n = 32, 600
    niw = families.NORMAL_INVERSE_WISHART
    assert families.param_size(niw, d) >= hybrid.HOT_BLOCK_MIN_PARAMS
    rng = np.random.default_rng(4)
    truth = rng.integers(0, 4, n)
    x = rng.normal(size=(n, d)) + 0.6 * rng.normal(size=(4, d))[truth]  # clusters that overlap a little
    params = families.pack_params(niw, d, x.mean(axis=0), 0.1, d + 2.0, np.cov(x.T))
    model = make_model(niw, x, params, priors.DP, np.array([1.0]), np.zeros(0))
    z = np.where(rng.random(n) < 0.2, rng.integers(0, 4, n), truth).astype(np.int64)
    bounds = hybrid.shard_bounds(n, 2)
    counts, stats_ = hybrid.shard_summaries(model, z, bounds, 4)
    plan = hybrid.plan_iteration(model, counts, stats_, 1, np.random.default_rng(8))
    hot = int(np.flatnonzero(plan.role < 0)[0])
    lo, hi = bounds[hot], bounds[hot + 1]
    shard_model = make_model(niw, x[lo:hi], params, priors.DP, np.array([1.0]), np.zeros(0), origin=model.origin)
    blocked = z[lo:hi].copy()
    hybrid._collapsed_sweeps(shard_model, blocked, plan, 2, 4, stream(plan.seed, hot))
    monkeypatch.setattr(hybrid, "HOT_BLOCK_MIN_PARAMS", 10**9)
    loop = z[lo:hi].copy()
    hybrid._collapsed_sweeps.py_func(shard_model, loop, plan, 2, 4, stream(plan.seed, hot))
    np.testing.assert_array_equal(blocked, loop)
    assert np.sum(blocked != z[lo:hi]) > 5, "items moved: the test has power"
    assert np.sum(plan.anchor >= 0) >= 2, "instantiated clusters: the blocked path ran"
