"""Tests for pymc_partitions.summary: relabelling, co-clustering, point estimates, summaries."""

import itertools
import warnings

import arviz as az
import numpy as np
import pytest
from exact import set_partitions

from pymc_partitions.summary import (
    adjusted_rand_index,
    expected_loss,
    point_partition,
    posterior_similarity,
    relabel,
    summarize,
    vi_distance,
)

warnings.filterwarnings("ignore", category=FutureWarning, module="arviz")


# --------------------------------------------------------------------------- #
# helpers
# --------------------------------------------------------------------------- #


def make_idata(draws, chains=1, **stats):
    """InferenceData with posterior z of shape (chains, draws/chains, n) and optional sample stats."""
    draws = np.asarray(draws)
    posterior = {"z": draws.reshape(chains, -1, draws.shape[-1])}
    return az.from_dict(posterior=posterior, sample_stats=stats or None)


def brute_loss(draws, candidate, loss):
    """Posterior expected loss by direct definitions (repeated draws counted once, weighted)."""
    candidate = np.asarray(candidate)
    unique, counts = np.unique(np.asarray(draws), axis=0, return_counts=True)
    if loss == "VI":
        values = [_vi_entropies(d, candidate) for d in unique]
    else:
        same_c = candidate[:, None] == candidate[None, :]
        iu = np.triu_indices(len(candidate), 1)
        values = [(same_c != (d[:, None] == d[None, :]))[iu].sum() for d in unique]
    return float(np.dot(values, counts) / counts.sum())


def _vi_entropies(a, b):
    """VI = 2 H(a, b) - H(a) - H(b) from empirical distributions (independent of vi_distance's formula)."""

    def entropy(labels):
        _, counts = np.unique(labels, axis=0, return_counts=True)
        p = counts / counts.sum()
        return -np.sum(p * np.log2(p))

    return 2 * entropy(np.stack([a, b], axis=1)) - entropy(a) - entropy(b)


def one_move_draws(truth):
    """Every partition obtained from `truth` by moving one item into another existing cluster."""
    k = truth.max() + 1
    draws = []
    for i in range(len(truth)):
        for target in range(k):
            if target != truth[i]:
                d = truth.copy()
                d[i] = target
                draws.append(relabel(d))
    return np.array(draws)


# --------------------------------------------------------------------------- #
# relabel
# --------------------------------------------------------------------------- #


def test_relabel_order_of_first_appearance():
    assert relabel([3, 3, 1, 7, 1, 0]).tolist() == [0, 0, 1, 2, 1, 3]
    assert relabel([-5, 10**12, -5]).tolist() == [0, 1, 0]
    assert relabel(np.array([2.0, 2.0, 0.0])).tolist() == [0, 0, 1]
    assert relabel([4]).tolist() == [0]


def test_relabel_vectorised_and_idempotent():
    rng = np.random.default_rng(0)
    z = rng.integers(0, 6, size=(3, 4, 25))
    canon = relabel(z)
    assert canon.shape == z.shape
    for idx in np.ndindex(z.shape[:-1]):
        row, expected, seen = z[idx], [], {}
        for label in row:
            expected.append(seen.setdefault(label, len(seen)))
        assert canon[idx].tolist() == expected
        # same partition: equal co-clustering pattern
        assert np.array_equal(row[:, None] == row[None, :], canon[idx][:, None] == canon[idx][None, :])
    assert np.array_equal(relabel(canon), canon)


def test_relabel_bad_input():
    with pytest.raises(ValueError, match="z"):
        relabel(3)
    with pytest.raises(ValueError, match="z"):
        relabel([0.5, 1.0])
    with pytest.raises(TypeError, match="z"):
        relabel(["a", "b"])


# --------------------------------------------------------------------------- #
# distances
# --------------------------------------------------------------------------- #


def test_vi_and_ari_against_definitions():
    rng = np.random.default_rng(1)
    for _ in range(20):
        a = rng.integers(0, 4, 12)
        b = rng.integers(0, 3, 12)
        assert vi_distance(a, b) == pytest.approx(_vi_entropies(a, b), abs=1e-12)
        assert vi_distance(a, b) == pytest.approx(vi_distance(b, a))
        # ARI by its pair-counting definition
        iu = np.triu_indices(12, 1)
        sa, sb = (a[:, None] == a[None, :])[iu], (b[:, None] == b[None, :])[iu]
        expected = sa.sum() * sb.sum() / len(iu[0])
        ari = ((sa & sb).sum() - expected) / (0.5 * (sa.sum() + sb.sum()) - expected)
        assert adjusted_rand_index(a, b) == pytest.approx(ari)
    assert vi_distance([0, 0, 1], [1, 1, 0]) == 0.0
    assert vi_distance(np.zeros(8, int), np.arange(8)) == pytest.approx(3.0)
    assert adjusted_rand_index(np.arange(5), np.arange(5)) == 1.0
    with pytest.raises(ValueError, match="same length"):
        vi_distance([0, 1], [0, 1, 2])


# --------------------------------------------------------------------------- #
# posterior similarity
# --------------------------------------------------------------------------- #


def test_posterior_similarity_matches_brute_force():
    rng = np.random.default_rng(2)
    draws = rng.integers(0, 4, size=(60, 9))  # non-canonical labels on purpose
    idata = make_idata(draws, chains=3)
    brute = np.zeros((9, 9))
    for d in draws:
        for i in range(9):
            for j in range(9):
                brute[i, j] += d[i] == d[j]
    brute /= len(draws)
    np.testing.assert_allclose(posterior_similarity(idata), brute)
    items = [7, 2, 4]
    np.testing.assert_allclose(posterior_similarity(idata, items=items), brute[np.ix_(items, items)])


def test_posterior_similarity_on_datatree():
    draws = np.array([[0, 0, 1], [0, 1, 1]])
    tree = make_idata(draws).to_datatree()
    np.testing.assert_allclose(posterior_similarity(tree), [[1, 0.5, 0], [0.5, 1, 0.5], [0, 0.5, 1]])


# --------------------------------------------------------------------------- #
# point_partition
# --------------------------------------------------------------------------- #


@pytest.mark.parametrize("loss", ["VI", "Binder"])
def test_point_partition_recovers_planted_partition(loss):
    rng = np.random.default_rng(3)
    truth = np.repeat(np.arange(3), 10)
    draws = np.tile(truth, (200, 1))
    noise = rng.random(draws.shape) < 0.1
    draws[noise] = rng.integers(0, 5, noise.sum())  # moves to other clusters and to new ones
    idata = make_idata(draws, chains=2)
    estimate = point_partition(idata, loss=loss, random_seed=0)
    assert estimate.tolist() == truth.tolist()
    assert estimate.dtype.kind == "i"


@pytest.mark.parametrize("loss", ["VI", "Binder"])
def test_point_partition_beats_best_draw(loss):
    # every draw misplaces exactly one item; the planted partition is not a draw but is optimal
    truth = np.repeat(np.arange(3), 4)
    draws = one_move_draws(truth)
    assert not any(np.array_equal(d, truth) for d in draws)
    idata = make_idata(draws)
    estimate = point_partition(idata, loss=loss, random_seed=1)
    best_draw = min(brute_loss(draws, d, loss) for d in draws)
    value = brute_loss(draws, estimate, loss)
    assert value < best_draw - 1e-9
    assert estimate.tolist() == truth.tolist()
    assert expected_loss(idata, estimate, loss=loss) == pytest.approx(value)


@pytest.mark.parametrize("seed", range(4))
def test_point_partition_is_the_enumerated_minimum(seed):
    rng = np.random.default_rng(10 + seed)
    n = 6
    partitions = set_partitions(n)
    assert len(partitions) == 203
    support = partitions[rng.choice(len(partitions), size=6, replace=False)]
    draws = support[rng.choice(6, size=40, p=rng.dirichlet(np.ones(6)))]
    idata = make_idata(draws)
    for loss in ("VI", "Binder"):
        values = np.array([brute_loss(draws, p, loss) for p in partitions])
        estimate = point_partition(idata, loss=loss, random_seed=seed)
        assert brute_loss(draws, estimate, loss) == pytest.approx(values.min(), abs=1e-9)
        assert expected_loss(idata, estimate, loss=loss) == pytest.approx(values.min(), abs=1e-9)


def test_binder_and_vi_disagree_on_balanced_splits():
    # Posterior uniform over the 10 splits of 6 items into two triples: Pr(z_i = z_j) = 0.4 < 1/2,
    # so Binder's estimate is all singletons (expected loss = Σ_{i<j} P_ij = 6), while the VI
    # estimate is one cluster (expected VI = H(draw) = 1 bit): VI merges where Binder splits
    # (the tendencies discussed by Wade & Ghahramani 2018).
    draws = np.array([relabel([0 if i in triple else 1 for i in range(6)])
                      for triple in itertools.combinations(range(6), 3) if 0 in triple])
    assert len(draws) == 10
    idata = make_idata(draws)
    np.testing.assert_allclose(posterior_similarity(idata)[np.triu_indices(6, 1)], 0.4)
    binder = point_partition(idata, loss="Binder", random_seed=0)
    vi = point_partition(idata, loss="VI", random_seed=0)
    assert binder.tolist() == list(range(6))
    assert vi.tolist() == [0] * 6
    assert expected_loss(idata, binder, loss="Binder") == pytest.approx(6.0)
    assert expected_loss(idata, vi, loss="VI") == pytest.approx(1.0)
    partitions = set_partitions(6)
    assert min(brute_loss(draws, p, "VI") for p in partitions) == pytest.approx(1.0)
    assert min(brute_loss(draws, p, "Binder") for p in partitions) == pytest.approx(6.0)


def test_point_partition_reproducible_and_items():
    rng = np.random.default_rng(4)
    draws = rng.integers(0, 3, size=(50, 15))
    idata = make_idata(draws)
    a = point_partition(idata, random_seed=7, n_starts=3)
    b = point_partition(idata, random_seed=7, n_starts=3)
    assert np.array_equal(a, b)
    sub = point_partition(idata, items=[0, 3, 5, 9], random_seed=7)
    assert sub.shape == (4,)
    assert np.array_equal(relabel(sub), sub)


def test_point_partition_bad_arguments():
    idata = make_idata(np.array([[0, 0, 1], [0, 1, 1]]))
    with pytest.raises(ValueError, match="loss"):
        point_partition(idata, loss="foo")
    with pytest.raises(ValueError, match="items"):
        point_partition(idata, items=[0, 3])
    with pytest.raises(ValueError, match="items"):
        posterior_similarity(idata, items=[-1, 2])
    with pytest.raises(ValueError, match="items"):
        posterior_similarity(idata, items=[1, 1])
    with pytest.raises(ValueError, match="n_starts"):
        point_partition(idata, n_starts=0)
    with pytest.raises(TypeError, match="max_sweeps"):
        point_partition(idata, max_sweeps=2.5)
    with pytest.raises(ValueError, match="partition"):
        expected_loss(idata, [0, 1])


# --------------------------------------------------------------------------- #
# summarize and missing z
# --------------------------------------------------------------------------- #


def _stats(rng, chains, draws):
    k = rng.integers(2, 6, size=(chains, draws))
    return {
        "partition_n_clusters": k,
        "partition_log_joint": -100.0 - 3.0 * k + rng.normal(size=(chains, draws)),
        "partition_largest_fraction": rng.uniform(0.3, 0.6, size=(chains, draws)),
        "partition_move": np.tile([0, 1, 2, 1], (chains, draws // 4)),
        "partition_accepted": np.tile([True, True, False, False], (chains, draws // 4)),
        "partition_accept": np.tile([1.0, 0.8, 0.1, 0.2], (chains, draws // 4)),
    }


def test_summarize_columns_and_rows():
    rng = np.random.default_rng(5)
    chains, draws, n = 2, 100, 8
    z = rng.integers(0, 3, size=(chains, draws, n))
    idata = az.from_dict(posterior={"z": z}, sample_stats=_stats(rng, chains, draws))
    table = summarize(idata, reference=np.repeat([0, 1], 4))
    assert list(table.columns) == ["mean", "sd", "5%", "50%", "95%", "ess_bulk", "ess_tail", "r_hat"]
    assert list(table.index) == [
        "n_clusters", "log_joint", "largest_fraction", "vi_reference", "ari_reference",
        "accept_rate_split", "accept_rate_merge",
    ]
    k = idata["sample_stats"]["partition_n_clusters"].values
    assert table.loc["n_clusters", "mean"] == pytest.approx(k.mean())
    assert table.loc["n_clusters", "ess_bulk"] == pytest.approx(float(az.ess(k.astype(float), method="bulk")))
    assert table.loc["log_joint", "r_hat"] == pytest.approx(
        float(az.rhat(idata["sample_stats"]["partition_log_joint"].values))
    )
    # split proposals are draws 1 and 3 of each block of 4: accepted, not accepted
    assert table.loc["accept_rate_split", "mean"] == pytest.approx(0.5)
    assert table.loc["accept_rate_merge", "mean"] == pytest.approx(0.0)
    assert table.attrs["moves"]["split"]["proposed"] == chains * draws // 2
    assert table.attrs["moves"]["split"]["mean_accept_prob"] == pytest.approx(0.5)
    flat = z.reshape(-1, n)
    ref = np.repeat([0, 1], 4)
    assert table.loc["vi_reference", "mean"] == pytest.approx(np.mean([vi_distance(d, ref) for d in flat]))
    assert table.loc["ari_reference", "mean"] == pytest.approx(np.mean([adjusted_rand_index(d, ref) for d in flat]))
    assert summarize(idata.to_datatree()).loc["log_joint", "mean"] == pytest.approx(table.loc["log_joint", "mean"])


def test_summarize_falls_back_on_z():
    z = np.array([[[0, 0, 1, 1], [0, 1, 2, 2], [0, 0, 0, 0], [0, 1, 0, 1]]])
    table = summarize(make_idata(z.reshape(-1, 4)))
    assert table.loc["n_clusters", "mean"] == pytest.approx(np.mean([2, 3, 1, 2]))
    assert table.loc["largest_fraction", "mean"] == pytest.approx(np.mean([0.5, 0.5, 1.0, 0.5]))


def test_missing_z():
    rng = np.random.default_rng(6)
    stats = _stats(rng, 2, 40)
    idata = az.from_dict(posterior={"alpha": rng.gamma(1.0, size=(2, 40))}, sample_stats=stats)
    table = summarize(idata)  # stats only: works
    assert {"n_clusters", "log_joint", "largest_fraction"} <= set(table.index)
    for call in (posterior_similarity, point_partition):
        with pytest.raises(ValueError, match="keep 'z' in the trace"):
            call(idata)
    with pytest.raises(ValueError, match="keep 'z' in the trace"):
        summarize(idata, reference=np.zeros(5, int))
    stats_only = az.from_dict(sample_stats=stats)
    assert "n_clusters" in summarize(stats_only).index
    with pytest.raises(ValueError, match="posterior"):
        posterior_similarity(stats_only)


def test_summarize_bad_reference():
    idata = make_idata(np.array([[0, 0, 1], [0, 1, 1]]))
    with pytest.raises(ValueError, match="reference"):
        summarize(idata, reference=[0, 1])
