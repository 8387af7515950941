"""Tests for pymc_partitions.summary.uncertainty: the credible ball, each cluster's certainty, K of large clusters."""

import numpy as np
import pytest
from exact import make_idata

from pymc_partitions.labels import relabel
from pymc_partitions.summary import partition_uncertainty, posterior_similarity, vi_distance
from pymc_partitions.labels import large_cluster_counts, large_cluster_size


def test_cluster_certainty_and_confusion_are_means_of_the_similarity_matrix():
    rng = np.random.default_rng(4)
    truth = np.repeat([0, 1, 2], [12, 8, 5])
    draws = np.array([relabel(np.where(rng.random(25) < 0.2, rng.integers(0, 4, 25), truth)) for _ in range(60)])
    idata = make_idata(draws, chains=2)
    u = partition_uncertainty(idata, truth)
    similarity = posterior_similarity(idata)
    for l in range(3):
        members = np.flatnonzero(truth == l)
        block = similarity[np.ix_(members, members)]
        assert u.clusters.loc[l, "certainty"] == pytest.approx(block[np.triu_indices(len(members), 1)].mean())
        means = [similarity[np.ix_(members, np.flatnonzero(truth == m))].mean() if m != l else -1 for m in range(3)]
        assert u.clusters.loc[l, "confused_with"] == int(np.argmax(means))
        assert u.clusters.loc[l, "confusion"] == pytest.approx(max(means))
    distances = [vi_distance(d, truth) for d in draws]
    assert u.expected_vi == pytest.approx(np.mean(distances))
    assert u.ball_radius == pytest.approx(np.quantile(distances, 0.95))
    assert np.mean(np.array(distances) <= u.ball_radius) >= 0.95


def test_large_clusters_are_counted_from_one_percent_of_the_items():
    assert large_cluster_size(50) == 2 and large_cluster_size(1000) == 10 and large_cluster_size(1001) == 11
    draws = np.array([np.repeat([0, 1, 2, 3], [500, 480, 15, 5]), np.repeat([0, 1, 2], [600, 391, 9])])
    assert large_cluster_counts(draws).tolist() == [3, 2]


def test_an_atypical_estimate_is_flagged():
    truth = np.repeat([0, 1, 2], 40)
    idata = make_idata(np.tile(truth, (20, 1)))
    assert partition_uncertainty(idata, truth).is_typical
    merged = partition_uncertainty(idata, np.zeros(120, dtype=np.int64))
    assert not merged.is_typical and merged.n_large == 1 and merged.n_large_interval == (3, 3)


def test_bad_arguments_are_named():
    idata = make_idata(np.zeros((4, 5), dtype=np.int64))
    with pytest.raises(ValueError, match="credible must lie in"):
        partition_uncertainty(idata, np.zeros(5, dtype=np.int64), credible=1.5)
    with pytest.raises(ValueError, match="partition"):
        partition_uncertainty(idata, np.zeros(4, dtype=np.int64))
