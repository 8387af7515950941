"""Tests for pymc_partitions.plots: each plot is rendered with Agg and what it drew is checked."""

import arviz as az
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pymc as pm
import pytest
from exact import make_idata
from matplotlib.patches import StepPatch

import pymc_partitions as pmp
from pymc_partitions import plots
from pymc_partitions.plots import (
    MIN_ALPHA,
    allocation_probability,
    cluster_colors,
    partition_order,
    plot_acceptance,
    plot_adjacency,
    plot_n_clusters,
    plot_partition,
    plot_ppc,
    plot_similarity,
)
from pymc_partitions.summary import posterior_predictive


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def brute_similarity(draws):
    draws = np.asarray(draws)
    return np.mean(draws[:, :, None] == draws[:, None, :], axis=0)


def boundaries(ax):
    """Positions of the horizontal and the vertical boundary lines drawn on ``ax``."""
    horizontal = sorted(line.get_ydata()[0] for line in ax.lines if line.get_ydata()[0] == line.get_ydata()[1])
    vertical = sorted(line.get_xdata()[0] for line in ax.lines if line.get_xdata()[0] == line.get_xdata()[1])
    return horizontal, vertical


# A posterior over 7 items: {0, 3, 5} always together, {1, 6} together in 3 of 4 draws
# (with 2 otherwise), 4 alone.
DRAWS = np.array(
    [
        [0, 1, 2, 0, 3, 0, 1],
        [0, 1, 2, 0, 3, 0, 1],
        [0, 1, 2, 0, 3, 0, 1],
        [0, 1, 1, 0, 3, 0, 2],
    ]
)
POINT = np.array([0, 1, 2, 0, 3, 0, 1])  # clusters {0,3,5}, {1,6}, {2}, {4}


def test_partition_order_groups_clusters_by_decreasing_size_then_score():
    rng = np.random.default_rng(3)
    for _ in range(20):
        labels = rng.integers(0, 5, size=30)
        score = rng.random(30)
        order, sizes = partition_order(labels, within=score)
        assert sorted(order.tolist()) == list(range(30))
        assert sizes.tolist() == sorted(np.bincount(labels)[np.bincount(labels) > 0].tolist(), reverse=True)
        start = 0
        for size in sizes:
            block = order[start : start + size]
            start += size
            assert len(set(labels[block].tolist())) == 1  # a block is one whole cluster
            assert np.sum(labels == labels[block[0]]) == size
            assert np.all(np.diff(score[block]) <= 0)  # highest score first


def test_partition_order_ties_by_first_appearance_and_index():
    order, sizes = partition_order([2, 2, 0, 0, 1])
    assert order.tolist() == [0, 1, 2, 3, 4]
    assert sizes.tolist() == [2, 2, 1]


def test_plot_similarity_orders_items_by_the_point_partition_and_marks_boundaries():
    idata = make_idata(DRAWS, chains=2)
    ax = plot_similarity(idata, random_seed=0)
    similarity = brute_similarity(DRAWS)
    # clusters by size: {0,3,5}, {1,6}, then {2} and {4} (first appearance); within a cluster
    # every member has the same mean similarity to it, so items keep index order
    order = [0, 3, 5, 1, 6, 2, 4]
    np.testing.assert_allclose(ax.images[0].get_array(), similarity[np.ix_(order, order)])
    assert boundaries(ax) == ([2.5, 4.5, 5.5], [2.5, 4.5, 5.5])
    assert [t.get_text() for t in ax.get_xticklabels()] == [str(i) for i in order]
    assert [t.get_text() for t in ax.get_yticklabels()] == [str(i) for i in order]
    assert "PEAR point partition" in ax.get_title() and "4 clusters" in ax.get_title()
    assert len(ax.figure.axes) == 2  # the image and its colorbar
    assert ax.images[0].get_clim() == (0.0, 1.0)


def test_plot_similarity_orders_a_cluster_by_its_core_first():
    draws = np.array([[0, 1, 1, 2], [0, 0, 0, 1], [1, 0, 0, 2], [0, 0, 0, 1]])  # item 0 with 1, 2 in half the draws
    ax = plot_similarity(make_idata(draws), partition=[5, 5, 5, 2], colorbar=False)
    # mean similarity to {0, 1, 2}: item 0 2/3, items 1 and 2 5/6 each (ties by index)
    order = [1, 2, 0, 3]
    np.testing.assert_allclose(ax.images[0].get_array(), brute_similarity(draws)[np.ix_(order, order)])
    assert boundaries(ax) == ([2.5], [2.5])
    assert "given partition" in ax.get_title()
    assert len(ax.figure.axes) == 1


def test_plot_similarity_of_a_matrix_keeps_its_order_without_a_partition():
    matrix = brute_similarity(DRAWS)
    fig, ax = plt.subplots()
    returned = plot_similarity(matrix, ax=ax, colorbar=False)
    assert returned is ax
    np.testing.assert_allclose(ax.images[0].get_array(), matrix)
    assert boundaries(ax) == ([], [])
    ax2 = plot_similarity(matrix, partition=POINT, colorbar=False)
    order = [0, 3, 5, 1, 6, 2, 4]
    np.testing.assert_allclose(ax2.images[0].get_array(), matrix[np.ix_(order, order)])


def test_plot_similarity_without_z_uses_the_labels_recorded_with_keep_items():
    kept = [1, 4, 6]
    stats = {f"partition_label_{i}": DRAWS[:, i].reshape(2, 2) for i in kept}
    idata = az.from_dict(posterior={"alpha": np.ones((2, 2))}, sample_stats=stats)
    ax = plot_similarity(idata, random_seed=0, colorbar=False)
    expected = brute_similarity(DRAWS[:, kept])  # items 1 and 6 together in 3 of 4 draws: one cluster
    order = [0, 2, 1]  # recorded positions: {1, 6} first, then 4
    np.testing.assert_allclose(ax.images[0].get_array(), expected[np.ix_(order, order)])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "2", "1"]


def test_plot_similarity_hides_item_labels_for_many_items():
    rng = np.random.default_rng(0)
    draws = rng.integers(0, 3, size=(5, 60))
    ax = plot_similarity(make_idata(draws), partition=draws[0], colorbar=False)
    assert ax.get_xticks().size == 0 and ax.get_yticks().size == 0


def test_plot_n_clusters_draws_bars_per_chain_and_the_trace():
    k = np.array([[2, 3, 3, 3, 4], [3, 3, 4, 4, 4], [2, 2, 2, 3, 3]])
    idata = az.from_dict(sample_stats={"partition_n_clusters": k})
    bars, trace = plot_n_clusters(idata)
    assert len(bars.patches) == 3 * 3  # K = 2, 3, 4 for each of 3 chains
    width = 0.8 / 3
    for c in range(3):
        chain_bars = bars.patches[3 * c : 3 * c + 3]
        heights = [p.get_height() for p in chain_bars]
        np.testing.assert_allclose(heights, [(k[c] == value).mean() for value in (2, 3, 4)])
        centres = [p.get_x() + p.get_width() / 2 for p in chain_bars]
        np.testing.assert_allclose(centres, np.array([2, 3, 4]) - 0.4 + width * (c + 0.5))
        colors = {matplotlib.colors.to_hex(p.get_facecolor()) for p in chain_bars}
        assert colors == {matplotlib.colors.to_hex(f"C{c}")}
        np.testing.assert_array_equal(trace.lines[c].get_ydata(), k[c])
        assert matplotlib.colors.to_hex(trace.lines[c].get_color()) == matplotlib.colors.to_hex(f"C{c}")
    assert [t.get_text() for t in bars.get_legend().get_texts()] == ["chain 0", "chain 1", "chain 2"]
    assert bars.get_xlabel() == "number of clusters"
    assert trace.get_xlabel() == "draw" and trace.get_ylabel() == "number of clusters"
    assert bars.get_xticks().tolist() == [2, 3, 4]


def test_plot_n_clusters_counts_clusters_of_z_when_the_stat_is_absent():
    idata = make_idata(DRAWS, chains=2)
    _, trace = plot_n_clusters(idata)
    np.testing.assert_array_equal(trace.lines[0].get_ydata(), [4, 4])
    np.testing.assert_array_equal(trace.lines[1].get_ydata(), [4, 4])


def test_plot_n_clusters_accepts_given_axes_and_one_chain():
    fig, axes = plt.subplots(2, 1)
    returned = plot_n_clusters(np.array([1, 2, 2, 2]), ax=axes)
    assert list(returned) == list(axes)
    assert [p.get_height() for p in axes[0].patches] == [0.25, 0.75]
    assert axes[0].get_legend() is None


def test_plot_partition_colours_each_cluster_and_labels_its_size():
    X = np.array([[0.0, 0.0], [5.0, 5.0], [0.1, 0.2], [5.1, 4.9], [9.0, 0.0], [0.2, 0.1]])
    labels = np.array([4, 7, 4, 7, 1, 4])
    ax = plot_partition(X, labels)
    colors = cluster_colors(3)
    expected = [([0, 2, 5], "cluster 1 (3 items)"), ([1, 3], "cluster 2 (2 items)"), ([4], "cluster 3 (1 item)")]
    assert len(ax.collections) == 3
    for rank, (members, label) in enumerate(expected):
        collection = ax.collections[rank]
        assert collection.get_label() == label
        np.testing.assert_allclose(collection.get_offsets(), X[members])
        np.testing.assert_allclose(collection.get_facecolors(), np.tile(colors[rank], (len(members), 1)))
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [label for _, label in expected]
    assert ax.get_xlabel() == "x[0]" and "3 clusters" in ax.get_title()


def test_plot_partition_projects_on_principal_components():
    rng = np.random.default_rng(1)
    plane = rng.normal(size=(40, 2)) * [3.0, 1.0]
    basis = np.linalg.qr(rng.normal(size=(4, 2)))[0]  # orthonormal columns: a plane in 4-D
    X = plane @ basis.T + 7.0
    labels = (plane[:, 0] > 0).astype(int)
    ax = plot_partition(X, labels, legend=False)
    coords = np.concatenate([c.get_offsets() for c in ax.collections])
    original = X[partition_order(labels)[0]]
    # a projection on the plane that holds the data keeps every distance
    np.testing.assert_allclose(
        np.linalg.norm(coords[:, None] - coords[None], axis=-1),
        np.linalg.norm(original[:, None] - original[None], axis=-1),
        atol=1e-9,
    )
    assert ax.get_xlabel().startswith("PC 1") and "100% of variance" not in ax.get_xlabel()
    assert ax.get_legend() is None


def test_plot_partition_of_one_feature_puts_clusters_on_rows():
    ax = plot_partition(np.array([0.0, 0.1, 4.0]), [0, 0, 1], legend=False)
    np.testing.assert_allclose(ax.collections[0].get_offsets(), [[0.0, 1.0], [0.1, 1.0]])
    np.testing.assert_allclose(ax.collections[1].get_offsets(), [[4.0, 2.0]])


def test_plot_partition_shades_items_by_their_allocation_probability():
    X = np.arange(14.0).reshape(7, 2)
    idata = make_idata(DRAWS)
    ax = plot_partition(X, idata=idata, uncertainty=True, random_seed=0)
    similarity = brute_similarity(DRAWS)
    # item 1 sits with 6 in 3 of 4 draws; item 2 (alone in the point partition) is with 1 in one draw
    expected_p = {0: 1.0, 3: 1.0, 5: 1.0, 1: 0.75, 6: 0.75, 2: 0.75, 4: 1.0}
    np.testing.assert_allclose(allocation_probability(similarity, POINT), [expected_p[i] for i in range(7)])
    offsets = np.concatenate([c.get_offsets() for c in ax.collections])
    alphas = np.concatenate([c.get_facecolors()[:, 3] for c in ax.collections])
    items = [int(row[0] // 2) for row in offsets]
    assert items == [0, 3, 5, 1, 6, 2, 4]
    np.testing.assert_allclose(alphas, [max(expected_p[i], MIN_ALPHA) for i in items])
    assert all(h.get_alpha() == 1.0 for h in ax.get_legend().legend_handles)


def test_allocation_probability_floors_at_min_alpha_in_the_plot():
    draws = np.array([[0, 1], [0, 0]])
    ax = plot_partition(np.array([[0.0, 0.0], [1.0, 1.0]]), [0, 1], idata=make_idata(draws), uncertainty=True)
    alphas = [c.get_facecolors()[0, 3] for c in ax.collections]
    np.testing.assert_allclose(alphas, [0.5, 0.5])
    ax = plot_partition(np.array([[0.0, 0.0], [1.0, 1.0]]), [0, 1], idata=make_idata([[0, 0], [0, 0]]), uncertainty=True)
    np.testing.assert_allclose([c.get_facecolors()[0, 3] for c in ax.collections], [MIN_ALPHA, MIN_ALPHA])


def test_plot_adjacency_reorders_blocks_by_size_and_vertices_by_degree():
    rng = np.random.default_rng(4)
    labels = np.array([0, 1, 0, 2, 1, 0, 1, 0, 2])
    upper = np.triu(rng.random((9, 9)) < np.where(labels[:, None] == labels[None], 0.9, 0.1), 1)
    A = (upper | upper.T).astype(int)
    degree = A.sum(1)
    ax = plot_adjacency(A, labels)
    blocks = [np.flatnonzero(labels == k) for k in (0, 1, 2)]  # sizes 4, 3, 2
    order = np.concatenate([b[np.lexsort((b, -degree[b]))] for b in blocks])
    np.testing.assert_array_equal(ax.images[0].get_array(), A[np.ix_(order, order)])
    assert boundaries(ax) == ([3.5, 6.5], [3.5, 6.5])
    assert "3 blocks" in ax.get_title()


def test_plot_adjacency_uses_the_point_partition_of_idata():
    A = np.zeros((7, 7), dtype=int)
    A[0, 3] = A[3, 0] = A[1, 6] = A[6, 1] = 1
    ax = plot_adjacency(A, idata=make_idata(DRAWS), random_seed=0)
    assert boundaries(ax) == ([2.5, 4.5, 5.5], [2.5, 4.5, 5.5])


def brute_window_rate(move, accepted, code, window):
    rates = []
    for t in range(move.shape[1]):
        lo = max(0, t - window + 1)
        sel = move[:, lo : t + 1] == code
        rates.append(accepted[:, lo : t + 1][sel].mean() if sel.any() else np.nan)
    return np.array(rates)


def test_plot_acceptance_draws_the_moving_acceptance_of_each_proposal_type():
    rng = np.random.default_rng(5)
    move = rng.choice([0, 1, 2], size=(3, 200), p=[0.2, 0.5, 0.3])
    accepted = (rng.random((3, 200)) < np.where(move == 1, 0.4, 0.1)) | (move == 0)
    idata = az.from_dict(sample_stats={"partition_move": move, "partition_accepted": accepted})
    ax = plot_acceptance(idata, window=15)
    assert len(ax.lines) == 2
    for line, code, name in zip(ax.lines, (1, 2), ("split", "merge")):
        np.testing.assert_allclose(line.get_ydata(), brute_window_rate(move, accepted, code, 15))
        made = int((move == code).sum())
        taken = int(accepted[move == code].sum())
        assert line.get_label() == f"{name}: {taken} of {made} accepted ({100 * taken / made:.1f}%)"
    assert ax.get_ylabel() == "accepted (last 15 draws)"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [line.get_label() for line in ax.lines]


def test_plot_acceptance_default_window_and_errors():
    move = np.ones((1, 400), dtype=int)
    idata = az.from_dict(sample_stats={"partition_move": move, "partition_accepted": np.zeros((1, 400), bool)})
    assert plot_acceptance(idata).get_ylabel() == "accepted (last 20 draws)"
    gibbs = az.from_dict(sample_stats={"partition_move": 0 * move, "partition_accepted": np.ones((1, 400), bool)})
    with pytest.raises(ValueError, match="no split or merge proposals"):
        plot_acceptance(gibbs)
    with pytest.raises(ValueError, match="partition_move and partition_accepted"):
        plot_acceptance(az.from_dict(posterior={"alpha": np.ones((1, 4))}))
    with pytest.raises(TypeError, match="window"):
        plot_acceptance(idata, window=2.5)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: plot_similarity(make_idata(DRAWS), ax="left"), TypeError, "ax must be a matplotlib Axes"),
        (lambda: plot_similarity(np.ones((3, 2))), ValueError, "square"),
        (lambda: plot_similarity(np.full((2, 2), 2.0)), ValueError, r"\[0, 1\]"),
        (lambda: plot_similarity(make_idata(DRAWS), partition=[0, 1]), ValueError, "partition must be a 1-D label vector"),
        (lambda: plot_similarity(np.eye(2), items=[0]), ValueError, "items applies to idata only"),
        (lambda: plot_n_clusters(np.ones((2, 2, 2))), ValueError, r"\(chain, draw\)"),
        (lambda: plot_n_clusters(np.ones(3), ax=plt.subplots()[1]), TypeError, "sequence of 2 matplotlib Axes"),
        (lambda: plot_partition(np.ones((3, 2))), ValueError, "needs a partition or idata"),
        (lambda: plot_partition(np.ones((3, 2)), [0, 0, 1], uncertainty=True), ValueError, "uncertainty=True needs idata"),
        (lambda: plot_partition(np.ones((7, 2)), [0] * 7, idata=make_idata(DRAWS[:, :6]), uncertainty=True), ValueError, "6 items"),
        (lambda: plot_partition([[np.nan, 1.0]], [0]), ValueError, "NaN"),
        (lambda: plot_adjacency(np.ones((3, 3)), [0, 0, 1]), ValueError, "zero diagonal"),
        (lambda: plot_adjacency(np.zeros((3, 3))), ValueError, "needs a partition or idata"),
        (lambda: plot_acceptance(np.ones(3)), TypeError, "idata must be"),
    ],
)
def test_bad_input_gets_a_clear_error(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_plots_are_reachable_from_the_package():
    import pymc_partitions as pmp

    assert pmp.plots is plots
    assert set(plots.__all__) >= {
        "plot_similarity", "plot_n_clusters", "plot_partition", "plot_adjacency", "plot_acceptance", "plot_ppc"
    }


# --------------------------------------------------------------------------- plot_ppc

PPC_TRUTH = np.repeat([0, 1], [12, 8])


def ppc_case(cls, X, draws=30, **hyper):
    """A model of ``X`` (DP partition ``z``, observation model ``x``) and a posterior with every draw at PPC_TRUTH."""
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(X))
        cls("x", partition=z, observed=X, **(hyper or cls.default_hyperparameters(X)))
    truth = np.resize(PPC_TRUTH, len(X))
    return model, az.from_dict(posterior={"z": np.tile(truth, (1, draws, 1))})


def normal_data(n=20, d=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)) + 5.0 * np.resize(PPC_TRUTH, n)[:, None]


def step_patches(ax):
    """The band, the replicates' median and the observed histogram of a marginal panel."""
    patches = [p for p in ax.patches if isinstance(p, StepPatch)]
    assert len(patches) == 3
    return patches


def histograms(values, edges, density):
    counts = np.array([np.histogram(row, edges)[0] for row in np.atleast_2d(values)])
    return counts / (values.shape[-1] * (np.diff(edges) if density else 1.0))


def test_plot_ppc_compares_each_feature_and_each_pair_with_the_replicates():
    X = normal_data()
    model, idata = ppc_case(pmp.NormalGammaMixture, X)
    axes = plot_ppc(idata, model, n_draws=12, random_seed=3)
    assert len(axes) == 3 + 1
    reps = posterior_predictive(idata, model, n_draws=12, random_seed=3)  # the same seed draws the same replicates
    for j in range(3):
        band, median, observed = step_patches(axes[j])
        edges = observed.get_data().edges
        assert edges[0] <= X[:, j].min() and edges[-1] >= X[:, j].max()
        np.testing.assert_allclose(observed.get_data().values, histograms(X[:, j], edges, True)[0])
        replicated = histograms(reps[:, :, j], edges, True)
        np.testing.assert_allclose(band.get_data().baseline, np.percentile(replicated, 5, axis=0))
        np.testing.assert_allclose(band.get_data().values, np.percentile(replicated, 95, axis=0))
        np.testing.assert_allclose(median.get_data().values, np.median(replicated, axis=0))
        assert axes[j].get_title() == f"feature {j}" and axes[j].get_ylabel() == "density"
    legend = ["replicated, 90% interval", "replicated, median", "observed"]
    assert [t.get_text() for t in axes[3].get_legend().get_texts()] == legend  # one legend, on the correlations
    assert all(a.get_legend() is None for a in axes[:3])
    pairs = np.triu_indices(3, 1)
    seen = np.corrcoef(X, rowvar=False)[pairs]
    replicated = np.array([np.corrcoef(r, rowvar=False)[pairs] for r in reps])
    low, high = np.percentile(replicated, [5, 95], axis=0)
    interval, medians, points = axes[3].collections
    np.testing.assert_allclose([seg[:, 1] for seg in interval.get_segments()], np.column_stack([low, high]))
    np.testing.assert_allclose(medians.get_offsets()[:, 1], np.median(replicated, axis=0))
    np.testing.assert_allclose(points.get_offsets(), np.column_stack([np.arange(3), seen]))
    assert [t.get_text() for t in axes[3].get_xticklabels()] == ["0\n1", "0\n2", "1\n2"]
    outside = int(np.sum((seen < low) | (seen > high)))
    assert axes[3].get_title().endswith(f"observed outside the 90% interval for {outside} of 3")
    assert axes[3].get_ylabel() == "correlation"
    assert "'x' (black) and 12 data sets replicated from the posterior" in axes[0].figure.get_suptitle()


@pytest.mark.parametrize(
    "cls", [pmp.BetaBernoulliMixture, pmp.GammaPoissonMixture, pmp.CategoricalMixture], ids=lambda c: c.__name__
)
def test_plot_ppc_shows_frequencies_on_integer_bins_for_discrete_data(cls):
    """Integer data, categorical codes included: fractions of items on bins centred on integers; categorical codes
    (unordered) get no correlation panel."""
    rng = np.random.default_rng(1)
    rate = np.where(PPC_TRUTH == 0, 0.2, 0.7)[:, None]
    if cls is pmp.CategoricalMixture:
        X = np.where(rng.random((20, 2)) < rate, 2, rng.integers(0, 2, (20, 2)))  # codes 0, 1, 2
    else:
        X = (rng.random((20, 2)) < rate).astype(int) if cls is pmp.BetaBernoulliMixture else rng.poisson(30 * rate, (20, 2))
    model, idata = ppc_case(cls, X)
    axes = plot_ppc(idata, model, n_draws=10, random_seed=2)
    assert len(axes) == (2 if cls is pmp.CategoricalMixture else 3)
    for j in range(2):
        _, _, observed = step_patches(axes[j])
        edges = observed.get_data().edges
        assert axes[j].get_ylabel() == "fraction of items"
        np.testing.assert_array_equal(edges + 0.5, np.round(edges + 0.5))  # bins centred on integers
        np.testing.assert_allclose(observed.get_data().values, histograms(X[:, j], edges, False)[0])
        if cls is pmp.BetaBernoulliMixture:
            np.testing.assert_array_equal(edges, [-0.5, 0.5, 1.5])
        elif cls is pmp.CategoricalMixture:
            np.testing.assert_array_equal(edges, [-0.5, 0.5, 1.5, 2.5])


def test_plot_ppc_follows_features_and_given_axes():
    X = normal_data(d=3, seed=2)
    model, idata = ppc_case(pmp.NormalGammaMixture, X)
    fig, given = plt.subplots(1, 3)
    axes = plot_ppc(idata, model, features=[2, 0], feature_names=["a", "b", "c"], n_draws=5, random_seed=0, ax=given)
    assert list(axes) == list(given)
    assert [a.get_title() for a in axes[:2]] == ["c", "a"]
    assert [t.get_text() for t in axes[2].get_xticklabels()] == ["c\na"]
    np.testing.assert_allclose(axes[2].collections[2].get_offsets()[0, 1], np.corrcoef(X[:, 2], X[:, 0])[0, 1])
    assert fig.get_suptitle() == ""  # the caller's figure keeps its title
    single = plot_ppc(idata, model, features=[1], n_draws=5, random_seed=0)
    assert len(single) == 1 and single[0].get_title() == "feature 1"
    assert [t.get_text() for t in single[0].get_legend().get_texts()] == [
        "replicated, 90% interval", "replicated, median", "observed"
    ]



def test_plot_ppc_draws_no_empty_panels():
    """Four features fill one row of three and one panel of the next: the figure holds those and the correlations."""
    X = normal_data(n=40, d=4, seed=5)
    model, idata = ppc_case(pmp.NormalGammaMixture, X, draws=4)
    axes = plot_ppc(idata, model, random_seed=1)
    assert len(axes) == 4 + 1
    assert axes[0].figure.axes == list(axes)

def test_plot_ppc_defaults_to_the_first_features_and_subsamples_many_items():
    X = normal_data(n=40, d=8, seed=3)
    model, idata = ppc_case(pmp.NormalGammaMixture, X, draws=4)
    axes = plot_ppc(idata, model, max_items=10, random_seed=4)  # n_draws: all 4 draws (fewer than PPC_DRAWS)
    assert len(axes) == plots.DEFAULT_FEATURES + 1
    assert [a.get_title() for a in axes[:-1]] == [f"feature {j}" for j in range(plots.DEFAULT_FEATURES)]
    title = axes[0].figure.get_suptitle()
    assert "4 data sets" in title and "features 0-5 of 8 (choose with features=)" in title
    assert "10 of 40 items, at random" in title
    _, _, observed = step_patches(axes[0])
    heights, edges = observed.get_data().values, observed.get_data().edges
    counts = heights * np.diff(edges) * 10  # densities of 10 items: counts out of 10
    np.testing.assert_allclose(counts, np.round(counts), atol=1e-9)
    assert round(counts.sum()) == 10


def test_plot_ppc_bad_input_gets_a_clear_error_before_any_draw():
    X = normal_data(d=2)
    model, idata = ppc_case(pmp.NormalGammaMixture, X, draws=3)
    cases = [
        (lambda: plot_ppc(idata, model, features=[2]), ValueError, r"features must be indices in 0 \.\. 1 \(n = 2 features\)"),
        (lambda: plot_ppc(idata, model, features=[0.5]), ValueError, "features must hold integer feature indices"),
        (lambda: plot_ppc(idata, model, features=[]), ValueError, "non-empty 1-D list of feature indices"),
        (lambda: plot_ppc(idata, model, ax=plt.subplots()[1]), TypeError, "sequence of 3 matplotlib Axes"),
        (lambda: plot_ppc(idata, model, feature_names=["a"]), ValueError, "feature_names must hold 2 names, one per column"),
        (lambda: plot_ppc(idata, model, feature_names="ab"), TypeError, "feature_names must be a sequence of strings"),
        (lambda: plot_ppc(idata, model, max_items=1), ValueError, "max_items must be an integer >= 2"),
        (lambda: plot_ppc(idata, model, n_draws=0), ValueError, "n_draws must be a positive integer"),
        (lambda: plot_ppc(idata, model, n_draws=4), ValueError, "at most the 3 posterior draws"),
        (lambda: plot_ppc(idata, model, var_name="z"), ValueError, "names the observed variable"),
        (lambda: plot_ppc(X, model), TypeError, "idata must be"),
        (lambda: plot_ppc(idata), TypeError, "plot_ppc needs the model"),
        (lambda: plot_ppc(az.from_dict(posterior={"alpha": np.ones((1, 3))}), model), ValueError, "plot_ppc needs the posterior draws of 'z'"),
    ]
    for call, error, match in cases:
        with pytest.raises(error, match=match):
            call()
    with pm.Model() as network:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=3)
        pmp.InfiniteRelationalModel("A", partition=z, a=1.0, b=1.0, observed=np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]]))
    with pytest.raises(TypeError, match="'A' is an observation model of type InfiniteRelationalModel: plot_ppc supports"):
        plot_ppc(az.from_dict(posterior={"z": np.zeros((1, 2, 3), dtype=int)}), network)
    assert plt.get_fignums() == [1]  # the figure made for the ax case: plot_ppc made none
