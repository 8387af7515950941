"""Tests for pymc_partitions.summary.distances: VI and ARI, of two partitions and of draws to a reference."""

import numpy as np
import pytest
from exact import vi_by_entropies

from pymc_partitions.labels import relabel
from pymc_partitions.summary import adjusted_rand_index, vi_distance
from pymc_partitions.summary.distances import distances_to_reference


def ari_by_pairs(a, b):
    """ARI by its pair-counting definition (item pairs together in a, in b, in both)."""
    iu = np.triu_indices(len(a), 1)
    sa, sb = (a[:, None] == a[None, :])[iu], (b[:, None] == b[None, :])[iu]
    expected = sa.sum() * sb.sum() / len(iu[0])
    return ((sa & sb).sum() - expected) / (0.5 * (sa.sum() + sb.sum()) - expected)


def test_vi_and_ari_against_definitions():
    rng = np.random.default_rng(1)
    for _ in range(20):
        a = rng.integers(0, 4, 12)
        b = rng.integers(0, 3, 12)
        assert vi_distance(a, b) == pytest.approx(vi_by_entropies(a, b), abs=1e-12)
        assert vi_distance(a, b) == pytest.approx(vi_distance(b, a))
        assert adjusted_rand_index(a, b) == pytest.approx(ari_by_pairs(a, b))
    assert vi_distance([0, 0, 1], [1, 1, 0]) == 0.0
    assert vi_distance(np.zeros(8, int), np.arange(8)) == pytest.approx(3.0)
    assert adjusted_rand_index(np.arange(5), np.arange(5)) == 1.0
    with pytest.raises(ValueError, match="same length"):
        vi_distance([0, 1], [0, 1, 2])


def test_label_values_do_not_matter():
    a = np.array([3, 3, -1, 10**12, -1, 3])
    b = np.array([0, 1, 1, 2, 2, 0])
    assert vi_distance(a, b) == pytest.approx(vi_distance(relabel(a), b))
    assert adjusted_rand_index(a, b) == pytest.approx(adjusted_rand_index(relabel(a), b))
    assert vi_distance(a, a * 7 + 1) == 0.0
    assert adjusted_rand_index(a, a * 7 + 1) == 1.0


def test_degenerate_partitions():
    # one item: no pairs, ARI 1 by convention; all singletons vs one cluster: VI = log2 N
    assert adjusted_rand_index([0], [5]) == 1.0
    assert vi_distance([0], [5]) == 0.0
    assert adjusted_rand_index(np.zeros(6, int), np.zeros(6, int)) == 1.0
    assert vi_distance(np.arange(16), np.zeros(16, int)) == pytest.approx(4.0)


def test_distances_to_reference_is_the_pairwise_distance_of_each_draw():
    rng = np.random.default_rng(7)
    draws = relabel(rng.integers(0, 5, size=(30, 11)))
    reference = relabel(rng.integers(0, 3, size=11))
    vi, ari = distances_to_reference(draws, reference)
    np.testing.assert_allclose(vi, [vi_by_entropies(d, reference) for d in draws], atol=1e-12)
    np.testing.assert_allclose(ari, [ari_by_pairs(d, reference) for d in draws])


@pytest.mark.parametrize(
    ("a", "b", "error", "match"),
    [
        ([0, 1], [0, 1, 2], ValueError, "a and b must be 1-D label vectors of the same length"),
        ([[0, 1]], [[0, 1]], ValueError, "same length"),
        ([], [], ValueError, "at least one item"),
        ([0.5, 1.0], [0, 1], ValueError, "a must hold integer cluster labels"),
        ([0, 1], ["x", "y"], TypeError, "b must hold integer cluster labels"),
    ],
)
def test_bad_partitions(a, b, error, match):
    for distance in (vi_distance, adjusted_rand_index):
        with pytest.raises(error, match=match):
            distance(a, b)
