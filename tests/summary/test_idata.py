"""Tests for pymc_partitions.summary._idata: reading draws and stats from InferenceData and DataTree."""

import warnings

import arviz as az
import numpy as np
import pytest
from exact import make_idata, step_stats

from pymc_partitions.summary import point_partition, posterior_similarity, summarize
from pymc_partitions.summary._idata import draws_of_items, partition_draws, recorded_labels, scalar_stat

warnings.filterwarnings("ignore", category=FutureWarning, module="arviz")


@pytest.mark.parametrize("as_tree", [False, True])
def test_partition_draws_are_pooled_and_canonical(as_tree):
    z = np.array([[[5, 5, 2], [1, 0, 0]], [[7, 3, 7], [0, 0, 0]]])  # 2 chains, 2 draws, 3 items
    idata = az.from_dict(posterior={"z": z})
    draws = partition_draws(idata.to_datatree() if as_tree else idata, "z", "test")
    assert draws.dtype == np.int32
    assert draws.tolist() == [[0, 0, 1], [0, 1, 1], [0, 1, 0], [0, 0, 0]]


def test_draws_of_items():
    draws = np.array([[0, 1, 2, 1], [0, 0, 1, 1]], dtype=np.int32)
    assert draws_of_items(draws, None) is draws
    assert draws_of_items(draws, [3, 2, 1]).tolist() == [[0, 1, 0], [0, 0, 1]]
    with pytest.raises(ValueError, match="items must be indices in 0 .. 3"):
        draws_of_items(draws, [4])


def test_scalar_stat_and_recorded_labels():
    rng = np.random.default_rng(9)
    stats = {**step_stats(rng, 2, 8), "partition_label_12": np.ones((2, 8), int), "partition_label_3": np.zeros((2, 8), int)}
    idata = az.from_dict(posterior={"alpha": rng.random((2, 8))}, sample_stats=stats)
    np.testing.assert_array_equal(scalar_stat(idata, "partition_move"), stats["partition_move"])
    assert scalar_stat(idata, "partition_missing") is None
    items, labels = recorded_labels(idata, "z")
    assert items == [3, 12]
    assert labels.shape == (16, 2) and np.all(labels[:, 0] == 0) and np.all(labels[:, 1] == 1)
    with_z = az.from_dict(posterior={"z": rng.integers(0, 2, (2, 8, 13))}, sample_stats=stats)
    assert recorded_labels(with_z, "z") is None  # z in the trace wins


def test_missing_z():
    rng = np.random.default_rng(6)
    stats = step_stats(rng, 2, 40)
    idata = az.from_dict(posterior={"alpha": rng.gamma(1.0, size=(2, 40))}, sample_stats=stats)
    for call in (posterior_similarity, point_partition):
        with pytest.raises(ValueError, match="keep 'z' in the trace"):
            call(idata)
    with pytest.raises(ValueError, match="keep 'z' in the trace"):
        summarize(idata, reference=np.zeros(5, int))
    stats_only = az.from_dict(sample_stats=stats)
    with pytest.raises(ValueError, match="posterior"):
        posterior_similarity(stats_only)
    with pytest.raises(ValueError, match="pass var_name="):
        point_partition(make_idata(np.zeros((2, 3), int)), var_name="labels")


def test_malformed_traces():
    with pytest.raises(ValueError, match=r"posterior\['z'\] must have dims \(chain, draw, n\)"):
        partition_draws(az.from_dict(posterior={"z": np.zeros((1, 4))}), "z", "test")
    with pytest.raises(ValueError, match=r"posterior\['z'\] must hold integer cluster labels"):
        partition_draws(az.from_dict(posterior={"z": np.full((1, 2, 3), 0.5)}), "z", "test")
    bad_stat = az.from_dict(sample_stats={"partition_move": np.zeros((1, 4, 2))})
    with pytest.raises(ValueError, match=r"sample_stats\['partition_move'\] must be a scalar stat"):
        scalar_stat(bad_stat, "partition_move")
    with pytest.raises(TypeError, match="var_name must be a string"):
        partition_draws(make_idata(np.zeros((2, 3), int)), ["z"], "test")
