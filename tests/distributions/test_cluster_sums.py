"""The per-cluster sums behind every partition log density (``distributions.cluster_sums``, and the
Normal-inverse-Wishart's ``families._cluster_moments``)."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

from pymc_partitions.distributions.cluster_sums import cluster_counts, cluster_sums
from pymc_partitions.families._cluster_moments import cluster_moments

pytestmark = pytest.mark.pytensor_python  # PyTensor without C: conftest.py


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


@pytest.mark.parametrize("labels", [[0, 0, 1, 2, 1], [3, 3, 0], [2, -1, 2, 0]])
def test_moments_by_label_without_per_item_outer_products(labels):
    """``cluster_moments`` (the Normal-inverse-Wishart's statistics) equals summing the rows ``[x, vec x xᵀ]``."""
    z = np.array(labels, dtype=np.int32)
    values = np.random.default_rng(3).normal(size=(z.size, 3))
    rows = np.concatenate([values, np.einsum("ia,ib->iab", values, values).reshape(z.size, 9)], axis=1)
    moments = pytensor.function([], cluster_moments(z, values))()
    np.testing.assert_allclose(moments, pytensor.function([], cluster_sums(z, rows))(), rtol=1e-12, atol=1e-12)


def test_moments_gradient():
    """d/dx_i of sum_k <W_k, moments_k> is w_k + (W_k + W_kᵀ) x_i for k = z_i (0 for a negative label)."""
    z_value = np.array([1, 0, 1, -1, 2], dtype=np.int32)
    weights = np.random.default_rng(0).normal(size=(3, 2 + 4))
    values = np.random.default_rng(1).normal(size=(5, 2))

    def objective(v):
        return (cluster_moments(z_value, v) * weights).sum()

    pytensor.gradient.verify_grad(objective, [values], rng=np.random.default_rng(2))
    v = pt.matrix("v")
    grad = pytensor.function([v], pytensor.grad(objective(v), v))(values)
    w = weights[np.maximum(z_value, 0)]
    square = w[:, 2:].reshape(5, 2, 2)
    expected = w[:, :2] + np.einsum("iab,ib->ia", square + square.transpose(0, 2, 1), values)
    np.testing.assert_allclose(grad, np.where((z_value >= 0)[:, None], expected, 0.0))


def test_moments_reject_what_is_not_labels_and_values():
    with pytest.raises(TypeError, match="cluster_moments needs an integer label vector"):
        cluster_moments(np.zeros(3), np.zeros((3, 1)))
    with pytest.raises(TypeError, match=r"cluster_moments needs an \(n, s\) matrix"):
        cluster_moments(np.zeros(3, dtype=np.int32), np.zeros(3))


def test_moments_of_repeated_inputs_are_reused_and_of_changed_inputs_recomputed():
    """The op keeps its last inputs and result (NUTS on ``alpha`` evaluates it at one partition many times): equal
    inputs give an equal, separate array; a changed label or value gives the moments of the new inputs."""
    z = pt.ivector("z")
    v = pt.matrix("v")
    f = pytensor.function([z, v], cluster_moments(z, v))
    rng = np.random.default_rng(4)
    labels = np.array([0, 1, 1, 0, 2], dtype=np.int32)
    values = rng.normal(size=(5, 2))

    def reference(labels, values):
        rows = np.concatenate([values, np.einsum("ia,ib->iab", values, values).reshape(len(labels), 4)], axis=1)
        return np.stack([rows[labels == k].sum(axis=0) for k in range(labels.max() + 1)])

    first = f(labels, values)
    second = f(labels, values)
    np.testing.assert_allclose(second, reference(labels, values), rtol=1e-12)
    np.testing.assert_array_equal(first, second)
    second[:] = np.nan  # the caller owns the result: the kept copy is not touched
    np.testing.assert_array_equal(f(labels, values), first)
    moved = labels.copy()
    moved[2] = 0
    np.testing.assert_allclose(f(moved, values), reference(moved, values), rtol=1e-12)
    shifted = values.copy()
    shifted[4, 1] += 1.0
    np.testing.assert_allclose(f(moved, shifted), reference(moved, shifted), rtol=1e-12)
    np.testing.assert_allclose(f(labels, values), reference(labels, values), rtol=1e-12)
