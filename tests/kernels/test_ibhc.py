"""IBHC guide trees (``kernels/ibhc.py``) against plain-Python readings of their definitions.

* SeqInsert (Lee & Choi 2015, Sec. 2.3): a recursive reading of the three
  cases, run on the same insertion orders, builds the same trees;
* the cluster trees of a guide are disjoint subtrees holding exactly their
  clusters' items (the local moves draw from them);
* potentials and ``d`` follow eq. (8)-(9) recursively;
* the induced subtree of any set is the guide with the other leaves removed
  and unary nodes contracted;
* SampleSub draws nodes at the frequencies ``∝ d + eps``.
"""

import numpy as np
import pytest
from test_deltas import DATA, N, setup

from pymc_partitions import families, priors
from pymc_partitions.kernels import ibhc
from pymc_partitions.kernels.moves import shuffle

ADDITIVE = [f for f in DATA if f != "infinite_relational"]
LABELS = np.array([0, 1, 0, 2, 1, 0, 3, 3, 1])


def python_guide(kernel_model, labels, seed):
    """A recursive SeqInsert of the items of each cluster, then of the cluster trees, in build_guide's orders."""
    rng = np.random.default_rng(seed)
    order = shuffle(np.arange(len(labels)), rng)
    k = labels.max() + 1
    top_order = shuffle(np.arange(k), rng)
    nu = ibhc.log_nu(kernel_model.prior, kernel_model.prior_params, kernel_model.log_v_table, len(labels), k)
    family, params = kernel_model.family, kernel_model.params

    def stats(tree):
        items = leaves(tree)
        row = np.zeros(families.stat_size(family, kernel_model.data.shape[1]))
        for i in items:
            one = np.zeros_like(row)
            families.item_stats(family, kernel_model.data[i], one)
            row += one
        return row, len(items)

    def log_h(tree):
        row, size = stats(tree)
        return nu + priors.log_w(kernel_model.prior, kernel_model.prior_params, size) + families.log_marginal(family, row, params)

    def log_t(tree):
        if isinstance(tree, int):
            return log_h(tree)
        return np.logaddexp(log_h(tree), log_t(tree[0]) + log_t(tree[1]))

    def log_d(a, b):
        return log_t(a) + log_t(b) - log_h((a, b))

    def insert(tree, x, whole):
        if isinstance(tree, int) or tree in whole:
            return (tree, x)
        left, right = tree
        d_lr, d_lx, d_rx = log_d(left, right), log_d(left, x), log_d(right, x)
        if d_lr <= min(d_lx, d_rx):
            return (tree, x)
        return (insert(left, x, whole), right) if d_lx <= d_rx else (left, insert(right, x, whole))

    clusters = [None] * k
    for i in order:
        c = labels[i]
        clusters[c] = int(i) if clusters[c] is None else insert(clusters[c], int(i), set())
    root = clusters[top_order[0]]
    for c in top_order[1:]:
        root = insert(root, clusters[c], set(clusters))
    return root, clusters, log_t


def leaves(tree):
    return [tree] if isinstance(tree, int) else leaves(tree[0]) + leaves(tree[1])


def shape(guide, v):
    return int(v) if guide.left[v] < 0 else (shape(guide, guide.left[v]), shape(guide, guide.right[v]))


@pytest.mark.parametrize("family", ADDITIVE)
def test_guide_is_seq_insert_and_eq_8(family):
    _, kernel_model, _ = setup(family, "py")
    for seed in range(3):
        guide = ibhc.build_guide(kernel_model, LABELS, np.random.default_rng(seed))
        root, clusters, log_t = python_guide(kernel_model, LABELS, seed)
        assert shape(guide, guide.root[0]) == root
        for c, top in enumerate(guide.forest):
            assert shape(guide, top) == clusters[c]
            assert sorted(leaves(clusters[c])) == np.flatnonzero(LABELS == c).tolist()
        for v in range(2 * N - 1):
            assert guide.log_t[v] == pytest.approx(log_t(shape(guide, v)), abs=1e-9)
            if guide.left[v] >= 0:
                expected = guide.log_t[guide.left[v]] + guide.log_t[guide.right[v]] - guide.log_h[v]
                assert guide.log_d[v] == pytest.approx(expected, abs=1e-12)


def restrict(guide, v, items):
    if guide.left[v] < 0:
        return int(v) if v in items else None
    a, b = restrict(guide, guide.left[v], items), restrict(guide, guide.right[v], items)
    return b if a is None else a if b is None else (a, b)


def induced_shape(tree, v):
    return int(tree.items[v]) if tree.left[v] < 0 else (induced_shape(tree, tree.left[v]), induced_shape(tree, tree.right[v]))


@pytest.mark.parametrize("family", ["normal_gamma", "dirichlet_multinomial"])
def test_induced_tree_is_the_restricted_guide(family):
    _, kernel_model, _ = setup(family, "dp")
    rng = np.random.default_rng(5)
    guide = ibhc.build_guide(kernel_model, np.zeros(N, dtype=np.int64), rng)
    nu = guide.seen[0]
    for _ in range(100):
        items = rng.choice(N, size=rng.integers(1, N + 1), replace=False).astype(np.int64)
        tree = ibhc.induced_tree(kernel_model, guide, items, len(items), nu)
        root = tree.root[0]
        assert induced_shape(tree, root) == restrict(guide, guide.root[0], set(items.tolist()))
        for v in range(2 * len(items) - 1):
            assert sorted(tree.items[tree.lo[v] : tree.hi[v] + 1].tolist()) == sorted(leaves(induced_shape(tree, v)))
            if tree.left[v] >= 0:
                joint = tree.log_t[tree.left[v]] + tree.log_t[tree.right[v]]
                assert tree.log_t[v] == pytest.approx(np.logaddexp(tree.log_h[v], joint), abs=1e-12)
        if len(items) == N:  # the whole guide
            assert tree.log_t[root] == pytest.approx(guide.log_t[guide.root[0]], abs=1e-9)


@pytest.mark.parametrize("family", ["normal_gamma", "normal_inverse_wishart"])
def test_induced_tree_copies_whole_guide_subtrees_bit_for_bit(family):
    """Nodes holding all the items of their guide node take the guide's values: the numbers a computation
    from the items gives (the guide forgotten), exactly; such copies occur (whole clusters of the guide's partition)."""
    _, kernel_model, _ = setup(family, "ngg")
    rng = np.random.default_rng(11)
    guide = ibhc.build_guide(kernel_model, LABELS, rng)
    nu = guide.seen[0]
    clusters = [np.flatnonzero(LABELS == c) for c in range(LABELS.max() + 1)]
    sets = [np.concatenate([clusters[0], clusters[2]]), clusters[1], np.arange(N)]
    sets += [rng.choice(N, size=rng.integers(2, N + 1), replace=False) for _ in range(30)]
    copied = 0
    for items in sets:
        items = items.astype(np.int64)
        tree = ibhc.induced_tree(kernel_model, guide, items, len(items), nu)
        copied += int(np.sum(tree.size == guide.size[tree.guide_node]))
        seen = guide.seen.copy()
        guide.seen[:] = np.nan  # not current: every node from its items
        fresh = ibhc.induced_tree(kernel_model, guide, items, len(items), nu)
        guide.seen[:] = seen
        for name in ("stats", "log_h", "log_t", "log_d"):
            np.testing.assert_array_equal(getattr(tree, name), getattr(fresh, name), err_msg=name)
        for v in range(2 * len(items) - 1):
            below = tree.items[tree.lo[v] : tree.hi[v] + 1]
            assert set(below.tolist()) <= set(leaves(shape(guide, tree.guide_node[v])))
            size = len(below)
            log_h = nu + priors.log_w(kernel_model.prior, kernel_model.prior_params, size) + families.log_marginal(
                kernel_model.family, tree.stats[v], kernel_model.params
            )
            assert tree.log_h[v] == pytest.approx(log_h, abs=1e-9)
    assert copied > 0


def test_sample_sub_frequencies():
    _, kernel_model, _ = setup("normal_gamma", "dp")
    rng = np.random.default_rng(8)
    guide = ibhc.build_guide(kernel_model, LABELS, rng)
    draws = 40_000
    for top in (guide.root[0], guide.forest[1]):
        below = [v for v in range(2 * N - 1) if guide.lo[top] <= guide.lo[v] and guide.hi[v] <= guide.hi[top]]
        log_w = np.logaddexp(guide.log_d[below], max(guide.log_d[below]))
        p = np.exp(log_w - np.logaddexp.reduce(log_w))
        counts = np.zeros(2 * N - 1)
        for _ in range(draws):
            counts[ibhc.sample_sub(guide, top, rng)] += 1
        freq = counts[below] / draws
        assert counts.sum() == counts[below].sum()
        assert 0.5 * np.abs(freq - p).sum() < 0.5 * np.sqrt(p * (1 - p) / draws).sum() + 2 / np.sqrt(draws)


@pytest.mark.parametrize("family", ["normal_gamma", "beta_bernoulli"])
def test_sequential_partition_is_the_papers_initialisation(family):
    """Items in the same random order join the cascade tree of least ``d``, or open one if every ``d > 1``."""
    _, kernel_model, _ = setup(family, "dp")
    nu = ibhc.log_nu(kernel_model.prior, kernel_model.prior_params, kernel_model.log_v_table, N, 1)
    fam, params = kernel_model.family, kernel_model.params

    def log_h(items):
        row = np.zeros(families.stat_size(fam, kernel_model.data.shape[1]))
        for i in items:
            one = np.zeros_like(row)
            families.item_stats(fam, kernel_model.data[i], one)
            row += one
        return nu + priors.log_w(kernel_model.prior, kernel_model.prior_params, len(items)) + families.log_marginal(fam, row, params)

    for seed in range(4):
        order = shuffle(np.arange(N), np.random.default_rng(seed))
        trees = []  # (items, log phi(t)) of cascades
        labels = np.empty(N, dtype=np.int64)
        for i in order:
            d = [t + log_h([i]) - log_h(items + [i]) for items, t in trees]
            if d and min(d) <= 0:
                c = int(np.argmin(d))
                items, t = trees[c]
                trees[c] = (items + [i], np.logaddexp(log_h(items + [i]), t + log_h([i])))
            else:
                c = len(trees)
                trees.append(([i], log_h([i])))
            labels[i] = c
        _, first = np.unique(labels, return_index=True)
        expected = np.argsort(np.argsort(first))[labels]
        np.testing.assert_array_equal(ibhc.sequential_partition(kernel_model, np.random.default_rng(seed)), expected)


def test_refresh_after_a_prior_change_reuses_the_log_marginals():
    """A new ``u`` (NGGP) refreshes the potentials from the kept log marginals, bit for bit as a full recomputation;
    a new family parameter recomputes the log marginals."""
    _, kernel_model, _ = setup("normal_gamma", "ngg")
    guide = ibhc.build_guide(kernel_model, LABELS, np.random.default_rng(2))
    new_u = kernel_model.prior_params.copy()
    new_u[-1] *= 2.5  # the NGGP's parameters end with u
    new_b0 = kernel_model.params.copy()
    new_b0[-1] *= 1.5  # the Normal-Gamma parameters end with b0
    for prior_params, params in ((new_u, kernel_model.params), (kernel_model.prior_params, new_b0)):
        changed = kernel_model._replace(prior_params=prior_params, params=params)
        nu = ibhc.log_nu(changed.prior, changed.prior_params, changed.log_v_table, N, guide.k_ref[0])
        ibhc.refresh_guide(changed, guide, nu)
        kept = {name: getattr(guide, name).copy() for name in ("log_ml", "log_h", "log_t", "log_d", "log_sum_d")}
        guide.seen[:] = np.nan  # forget: recompute everything
        ibhc.refresh_guide(changed, guide, nu)
        for name, values in kept.items():
            np.testing.assert_array_equal(values, getattr(guide, name), err_msg=name)
        for v in range(2 * N - 1):
            assert guide.log_ml[v] == families.log_marginal(changed.family, guide.stats[v], changed.params)
