"""The batched log-determinant op of the Normal-inverse-Wishart log density (``families._log_det``)."""

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

from pymc_partitions.families._log_det import inverse_transpose, log_det

pytestmark = pytest.mark.pytensor_python  # PyTensor without C: conftest.py


def spd_stack(k, d, seed):
    a = np.random.default_rng(seed).normal(size=(k, d, d))
    return a @ np.swapaxes(a, 1, 2) + d * np.eye(d)


def test_value_is_the_cholesky_log_determinant_of_every_matrix():
    stack = spd_stack(5, 4, 0)
    a = pt.tensor3("a")
    got = pytensor.function([a], log_det(a))(stack)
    expected = [2.0 * np.log(np.diag(np.linalg.cholesky(m))).sum() for m in stack]
    np.testing.assert_allclose(got, expected, rtol=1e-13)
    m = pt.matrix("m")  # one matrix: a scalar
    assert pytensor.function([m], log_det(m))(stack[0]).shape == ()


def test_gradient_is_the_inverse_transpose():
    stack = spd_stack(3, 3, 1)
    pytensor.gradient.verify_grad(lambda a: log_det(a).sum(), [stack], rng=np.random.default_rng(2))
    a = pt.tensor3("a")
    np.testing.assert_allclose(pytensor.function([a], inverse_transpose(a))(stack), np.linalg.inv(stack).swapaxes(1, 2))


def test_gradient_through_a_scale_matches_the_trace_formula():
    """d/ds log|s P + Q| = tr((s P + Q)^{-1} P): the derivative NUTS takes for a learned scale of Psi0."""
    p, q = spd_stack(1, 3, 3)[0], spd_stack(4, 3, 4)
    s = pt.scalar("s")
    grad = pytensor.function([s], pytensor.grad(log_det(s * p + q).sum(), s))(0.7)
    expected = sum(np.trace(np.linalg.solve(0.7 * p + qk, p)) for qk in q)
    np.testing.assert_allclose(grad, expected, rtol=1e-12)


def test_a_vector_is_a_type_error():
    with pytest.raises(TypeError, match="square matrices"):
        log_det(pt.vector("v"))
