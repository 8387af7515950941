"""Tests for pymc_partitions.datasets."""

import numpy as np
import pytest

from pymc_partitions.datasets import (
    BERNOULLI_MIXTURE_TABLE,
    NORMAL_MIXTURE_MEANS,
    bernoulli_mixture,
    crabs,
    downsample_by_degree,
    flea_beetles,
    galaxies,
    old_faithful,
    nips234_coauthor,
    normal_mixture,
)


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


def test_crabs():
    X, group, names, features = crabs()
    assert X.shape == (200, 5) and X.dtype == np.float64 and np.all(X > 0)
    assert features == ("FL", "RW", "CL", "CW", "BD")
    assert names == ("blue male", "blue female", "orange male", "orange female")
    assert np.bincount(group).tolist() == [50, 50, 50, 50]
    assert X[0].tolist() == [8.1, 6.7, 16.1, 19.0, 7.0] and group[0] == 0  # MASS::crabs row 1, a blue male
    sex, species = crabs("sex"), crabs("species")
    assert sex.target_names == ("female", "male") and species.target_names == ("blue", "orange")
    assert np.array_equal(group, 2 * species.target + 1 - sex.target)
    with pytest.raises(ValueError, match="target must be one of"):
        crabs("colour")


def test_galaxies():
    X, names = galaxies()
    assert X.shape == (82, 1) and X.dtype == np.float64 and names == ("velocity",)
    v = X[:, 0]
    assert np.all(np.diff(v) > 0)  # MASS's order: increasing velocity
    assert v[:3].tolist() == [9172.0, 9350.0, 9483.0] and v[-1] == 34279.0
    assert v[77] == 26690.0  # MASS's value, with the typo its documentation notes (Roeder: 26960)
    assert round(float(v.mean()), 2) == 20828.17  # summary(galaxies) in R: mean 20828


def test_old_faithful():
    X, names = old_faithful()
    assert X.shape == (272, 2) and X.dtype == np.float64 and names == ("eruptions", "waiting")
    assert X[:2].tolist() == [[3.6, 79.0], [1.8, 54.0]] and X[-1].tolist() == [4.467, 74.0]
    assert X[:, 0].min() == 1.6 and X[:, 0].max() == 5.1 and X[:, 1].min() == 43 and X[:, 1].max() == 96
    np.testing.assert_allclose(X.mean(axis=0), [3.487783, 70.897059], atol=1e-6)  # colMeans(faithful) in R


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


@pytest.mark.parametrize("example, d", [(1, 2), (2, 3)])
def test_normal_mixture(example, d):
    X, z = normal_mixture(example=example, random_seed=5)
    assert X.shape == (100, d) and X.dtype == np.float64
    assert np.bincount(z).tolist() == [20] * 5 and z.tolist() == sorted(z.tolist())
    np.testing.assert_array_equal(X, normal_mixture(example=example, random_seed=5).data)
    residuals = X - NORMAL_MIXTURE_MEANS[example][z]
    assert abs(residuals.mean()) < 4 / np.sqrt(residuals.size) and abs(residuals.std() - 1.0) < 0.1
    with pytest.raises(ValueError, match="example"):
        normal_mixture(example=3)


def _tiny_graph():
    """Edges 0-1, 0-2, 1-2, 2-3, 3-4: degrees 2, 2, 3, 2, 1; sorted (degree, index) descending: 2, 3, 1, 0, 4."""
    A = np.zeros((5, 5), dtype=int)
    for i, j in [(0, 1), (0, 2), (1, 2), (2, 3), (3, 4)]:
        A[i, j] = A[j, i] = 1
    return A


@pytest.mark.parametrize(
    "fraction, vertices",
    [
        (1.0, [0, 1, 2, 3, 4]),
        (0.8, [0, 1, 2, 3]),
        (0.6, [1, 2, 3]),  # m = 3
        (0.5, [1, 2, 3]),  # 2.5 rounds up to 3
        (0.4, [2, 3]),  # ties at degree 2 broken by the larger index: 3 before 1 and 0
        (0.1, [2]),  # 0.5 rounds up to 1
    ],
)
def test_downsample_by_degree_tiny_graph(fraction, vertices):
    A = _tiny_graph()
    sub, kept = downsample_by_degree(A, fraction)
    assert kept.tolist() == vertices and kept.dtype == np.int64
    assert sub.dtype == np.float64 and np.array_equal(sub, A[np.ix_(vertices, vertices)])


def test_downsample_by_degree_tiny_graph_subgraph():
    sub, kept = downsample_by_degree(_tiny_graph(), 0.6)
    np.testing.assert_array_equal(sub, [[0, 1, 0], [1, 0, 1], [0, 1, 0]])  # edges 1-2, 2-3
    result = downsample_by_degree(_tiny_graph(), 0.6)
    assert result._fields == ("adjacency", "vertices") and np.array_equal(result.vertices, kept)


@pytest.mark.parametrize("fraction, m", [(1.0, 234), (0.9, 211), (0.8, 187)])
def test_downsample_nips234(fraction, m):
    A = nips234_coauthor()
    assert round(fraction * 234) == m
    sub, kept = downsample_by_degree(A, fraction)
    assert sub.shape == (m, m) and kept.shape == (m,) and sub.dtype == np.float64
    assert np.array_equal(sub, sub.T) and np.all(np.diag(sub) == 0)
    assert np.all(np.diff(kept) > 0)
    np.testing.assert_array_equal(sub, A[np.ix_(kept, kept)])
    degree = A.sum(axis=1)
    dropped = np.setdiff1d(np.arange(234), kept)
    if dropped.size:
        assert degree[kept].min() >= degree[dropped].max()
        # at the threshold degree, kept vertices have larger indices than dropped ones
        threshold = degree[kept].min()
        tied_kept, tied_dropped = kept[degree[kept] == threshold], dropped[degree[dropped] == threshold]
        if tied_dropped.size:
            assert tied_kept.min() > tied_dropped.max()


@pytest.mark.parametrize("fraction", [0.0, -0.1, 1.5, np.nan, np.inf, 0.05])
def test_downsample_bad_fraction(fraction):
    with pytest.raises(ValueError, match="fraction"):
        downsample_by_degree(_tiny_graph(), fraction)


@pytest.mark.parametrize("fraction", ["0.5", True, None, [0.5]])
def test_downsample_fraction_type(fraction):
    with pytest.raises(TypeError, match="fraction"):
        downsample_by_degree(_tiny_graph(), fraction)


def test_downsample_bad_adjacency():
    A = _tiny_graph()
    with pytest.raises(ValueError, match="adjacency.*square"):
        downsample_by_degree(A[:, :4], 0.5)
    asym = A.copy()
    asym[0, 4] = 1
    with pytest.raises(ValueError, match="adjacency.*symmetric"):
        downsample_by_degree(asym, 0.5)
    with pytest.raises(ValueError, match="adjacency.*0 and 1"):
        downsample_by_degree(3 * A, 0.5)


def test_penguins():
    from pymc_partitions.datasets import penguins

    X, y, names, features = penguins()
    assert X.shape == (342, 4) and np.all(np.isfinite(X))
    assert np.bincount(y).tolist() == [151, 68, 123] and names == ("Adelie", "Chinstrap", "Gentoo")
    assert X[0].tolist() == [39.1, 18.7, 181.0, 3750.0]  # the first row of palmerpenguins::penguins


def test_whiteside():
    from pymc_partitions.datasets import whiteside

    data = whiteside()
    assert data.response.shape == (56,) and data.covariates.shape == (56, 2)
    assert np.all(data.covariates[:, 0] == 1.0) and np.bincount(data.target).tolist() == [26, 30]
    assert (data.response[0], data.covariates[0, 1], data.target[0]) == (7.2, -0.8, 0)  # MASS::whiteside row 1
    before, after = (np.polyfit(data.covariates[data.target == k, 1], data.response[data.target == k], 1) for k in (0, 1))
    assert before[1] > after[1] and before[0] < after[0]  # insulation: a lower, flatter line
