"""``log det`` of a batch of positive definite matrices as one PyTensor op, with a batched gradient.

The Normal-inverse-Wishart log marginal needs ``log|Ψ_n|`` for every occupied
cluster and ``log|Psi0|``, and NUTS on ``kappa0``, ``nu0`` or ``Psi0`` needs
their gradient at every leapfrog step.  PyTensor's own graphs are slow there:
the gradient of a Cholesky-based log determinant runs triangular solves
matrix by matrix in Python, and PyTensor rewrites ``slogdet(X)`` into that
form whenever a Cholesky factor of ``X`` is computed elsewhere in the graph
(the support condition on ``Psi0`` computes one).  Measured on the wine data
(178 items, 13 features, 20 clusters): 67 ms per gradient evaluation, against
0.3 ms with this op.

.. math::

    \\operatorname{LogDet}(A)_b = \\log|\\det A_b|, \\qquad
    \\frac{\\partial \\operatorname{LogDet}(A)_b}{\\partial A_b} = A_b^{-T},

both computed by numpy on the whole stack at once (``slogdet``, ``inv``: LU
factorisations).  For the positive definite matrices it is given, the value
equals the Cholesky form up to rounding.  Second derivatives are not
implemented (NUTS needs the first only).

A PyTensor module: the families' numba code never imports it (the PyTensor
graph functions of ``normal_inverse_wishart`` import it when a PyMC model is built).
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
from pytensor.gradient import grad_not_implemented
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op


class LogDet(Op):
    """``log|det A|`` over the last two axes of ``A`` (``..., d, d``); float64 (module docstring)."""

    __props__ = ()

    def make_node(self, a):
        a = pt.as_tensor_variable(a)
        if a.type.ndim < 2:
            raise TypeError(f"log_det needs a (batch of) square matrices, got {a.type}")
        a = pt.cast(a, "float64")
        return Apply(self, [a], [pt.tensor(dtype="float64", shape=a.type.shape[:-2])])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(np.linalg.slogdet(inputs[0])[1], dtype=np.float64)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0][:-2]]

    def L_op(self, inputs, outputs, output_grads):
        (a,), (g,) = inputs, output_grads
        return [pt.shape_padright(g, 2) * inverse_transpose(a)]


class InverseTranspose(Op):
    """``A^{-T}`` over the last two axes of ``A`` (the gradient of :class:`LogDet`); first derivatives only."""

    __props__ = ()

    def make_node(self, a):
        a = pt.cast(pt.as_tensor_variable(a), "float64")
        return Apply(self, [a], [a.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.ascontiguousarray(np.swapaxes(np.linalg.inv(inputs[0]), -1, -2))

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def L_op(self, inputs, outputs, output_grads):
        return [grad_not_implemented(self, 0, inputs[0], "second derivatives of log_det")]


log_det = LogDet()
inverse_transpose = InverseTranspose()
