"""Tests for pymc_partitions.summary.similarity: the posterior co-clustering matrix."""

import itertools

import arviz as az
import numpy as np
import pytest
from exact import make_idata

from pymc_partitions.labels import relabel
from pymc_partitions.summary import posterior_similarity


def brute_similarity(draws):
    """Mean over draws of the indicator matrices 1(z_i = z_j)."""
    draws = np.asarray(draws)
    return np.mean(draws[:, :, None] == draws[:, None, :], axis=0)


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


def test_balanced_splits_give_two_fifths():
    # uniform over the 10 splits of 6 items into two triples: Pr(z_i = z_j) = 4/10 for i != j
    draws = np.array([relabel([0 if i in triple else 1 for i in range(6)])
                      for triple in itertools.combinations(range(6), 3) if 0 in triple])
    similarity = posterior_similarity(make_idata(draws))
    np.testing.assert_allclose(similarity[np.triu_indices(6, 1)], 0.4)
    np.testing.assert_array_equal(np.diag(similarity), 1.0)


def test_recorded_labels_replace_missing_z():
    """z left out of the trace: the partition_label_{i} stats of keep_items give their co-clustering."""
    rng = np.random.default_rng(8)
    z = rng.integers(0, 3, size=(2, 25, 10))
    kept = [0, 3, 6, 9]
    stats = {f"partition_label_{i}": z[..., i] for i in kept}
    without_z = az.from_dict(posterior={"alpha": rng.random((2, 25))}, sample_stats=stats)
    brute = brute_similarity(z.reshape(-1, 10))
    np.testing.assert_allclose(posterior_similarity(without_z), brute[np.ix_(kept, kept)])
    np.testing.assert_allclose(posterior_similarity(without_z, items=[9, 0]), brute[np.ix_([9, 0], [9, 0])])
    with pytest.raises(ValueError, match=r"items \[1, 2\] were not recorded"):
        posterior_similarity(without_z, items=[1, 2])
    with pytest.raises(ValueError, match="items must be non-negative indices"):
        posterior_similarity(without_z, items=[-1, 3])


@pytest.mark.parametrize(
    ("items", "match"),
    [
        ([-1, 2], "items must be indices in 0 .. 2"),
        ([1, 1], r"items must not contain repeated indices, got \[1\]"),
        ([0, 3], "items must be indices in 0 .. 2"),
        ([], "items must be a non-empty 1-D list of item indices"),
        ([[0, 1]], "items must be a non-empty 1-D list of item indices"),
        ([0.0, 1.0], "items must hold integer item indices"),
    ],
)
def test_posterior_similarity_bad_items(items, match):
    idata = make_idata(np.array([[0, 0, 1], [0, 1, 1]]))
    with pytest.raises(ValueError, match=match):
        posterior_similarity(idata, items=items)
