"""The per-cluster sums behind every partition log density (``distributions.cluster_sums``)."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

from pymc_partitions.distributions.cluster_sums import cluster_counts, cluster_sums


@pytest.mark.parametrize("labels", [[0, 0, 1, 2, 1], [3, 3, 0], [2, -1, 2, 0]])
def test_sums_and_counts_by_label(labels):
    z = np.array(labels, dtype=np.int32)
    values = np.arange(2 * z.size, dtype=float).reshape(-1, 2) + 0.5
    sums, counts = pytensor.function([], [cluster_sums(z, values), cluster_counts(z)])()
    k = z.max() + 1
    assert sums.shape == (k, 2) and counts.shape == (k,)
    for label in range(k):
        np.testing.assert_allclose(sums[label], values[z == label].sum(axis=0))
        assert counts[label] == np.sum(z == label)


def test_gradient_gathers_by_label():
    """d/dv of sum_k w_k . T_k is w_{z_i} for item i (and 0 for a negative label), checked numerically."""
    z = pt.ivector("z")
    z_value = np.array([1, 0, 1, -1, 2], dtype=np.int32)
    weights = np.random.default_rng(0).normal(size=(3, 2))
    values = np.random.default_rng(1).normal(size=(5, 2))

    def objective(v):
        return (cluster_sums(z_value, v) * weights).sum()

    pytensor.gradient.verify_grad(objective, [values], rng=np.random.default_rng(2))
    v = pt.matrix("v")
    grad = pytensor.function([z, v], pytensor.grad((cluster_sums(z, v) * weights).sum(), v))(z_value, values)
    expected = np.where((z_value >= 0)[:, None], weights[np.maximum(z_value, 0)], 0.0)
    np.testing.assert_allclose(grad, expected)


def test_rejects_what_is_not_labels_and_values():
    with pytest.raises(TypeError, match="integer label vector"):
        cluster_sums(np.zeros(3), np.zeros((3, 1)))
    with pytest.raises(TypeError, match=r"\(n, s\) matrix"):
        cluster_sums(np.zeros(3, dtype=np.int32), np.zeros(3))
