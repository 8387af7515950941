"""Tests for pymc_partitions.datasets."""

import numpy as np
import pytest

from pymc_partitions.datasets import BERNOULLI_MIXTURE_TABLE, bernoulli_mixture, flea_beetles, nips234_coauthor


def test_flea_beetles():
    ds = flea_beetles()
    X, y, names, features = ds
    assert X.shape == (74, 6) and X.dtype == np.float64
    assert y.shape == (74,) and y.dtype.kind == "i"
    assert np.bincount(y).tolist() == [21, 31, 22]
    assert names == ("Concinna", "Heikertingeri", "Heptapotamica")
    assert features == ("tars1", "tars2", "head", "aede1", "aede2", "aede3")
    assert ds.data is X and ds.target_names is names
    assert np.all(np.isfinite(X)) and np.all(X > 0)
    assert X[0].tolist() == [191, 131, 53, 150, 15, 104]  # first row of GGally's flea


def test_nips234_coauthor():
    A = nips234_coauthor()
    assert A.shape == (234, 234) and A.dtype == np.int8
    assert np.array_equal(A, A.T)
    assert np.all(np.diag(A) == 0)
    assert set(np.unique(A).tolist()) == {0, 1}
    assert int(A.sum()) // 2 == 598


@pytest.mark.parametrize("example, d", [(1, 6), (2, 8), (3, 10)])
def test_bernoulli_mixture_shapes_and_reproducibility(example, d):
    X, z = bernoulli_mixture(example=example, random_seed=3)
    assert X.shape == (100, d)
    assert set(np.unique(X).tolist()) <= {0, 1}
    assert np.bincount(z).tolist() == [20] * 5
    assert z.tolist() == sorted(z.tolist())
    X2, z2 = bernoulli_mixture(example=example, random_seed=3)
    assert np.array_equal(X, X2) and np.array_equal(z, z2)
    assert not np.array_equal(X, bernoulli_mixture(example=example, random_seed=4).data)


def test_bernoulli_mixture_copies_last_column():
    # attributes 7..d have the probabilities of attribute 6: check block frequencies on a large sample
    freq = np.mean([bernoulli_mixture(example=3, random_seed=s).data for s in range(60)], axis=0)
    block_freq = freq.reshape(5, 20, 10).mean(axis=1)  # (block, attribute)
    expected = np.concatenate([BERNOULLI_MIXTURE_TABLE, np.repeat(BERNOULLI_MIXTURE_TABLE[:, -1:], 4, axis=1)], axis=1)
    np.testing.assert_allclose(block_freq, expected, atol=0.03)  # 1200 draws per cell: sd <= 0.015
    X, _ = bernoulli_mixture(example=2, random_seed=0)
    assert not np.array_equal(X[:, 5], X[:, 6])  # independent draws, not duplicated data


@pytest.mark.parametrize("example", [0, 4, "1", 1.5, True])
def test_bernoulli_mixture_bad_example(example):
    with pytest.raises(ValueError, match="example"):
        bernoulli_mixture(example=example)
