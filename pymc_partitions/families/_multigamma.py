r"""The log multivariate gamma function as one PyTensor op, with its gradient: the Normal-inverse-Wishart's ``log Γ_d``.

.. math::

    \operatorname{MultiGammaLn}_d(a) = \sum_{j=0}^{d-1} \log\Gamma\!\left(a - \tfrac{j}{2}\right),
    \qquad
    \frac{\partial}{\partial a} \operatorname{MultiGammaLn}_d(a) = \sum_{j=0}^{d-1} \psi\!\left(a - \tfrac{j}{2}\right),

elementwise over ``a``: ``log Γ_d(a)`` without its constant ``d(d-1)/4 log π``
(which cancels in the log marginal's ratio ``Γ_d(ν_n/2) / Γ_d(ν_0/2)``).  Both
are computed by scipy on an ``(len(a), d)`` array at once.

Why an op: written as ``d`` elementwise PyTensor terms, the graph has ``2d``
``gammaln`` nodes that PyTensor fuses, with their gradients, into one
elementwise C function whose size grows with ``d``; at ``d = 272`` compiling
the model's log density took about 300 s (``model.compile_logp()`` for the
Old Faithful data transposed, 2 items of 272 features; issue #43).  Written as
a reduction over a ``(K, d)`` array instead, PyTensor 2.38 fuses the
gradient's ``digamma`` into C code that lacks its definition (a compile
error).  The op keeps the graph the same size for every ``d``.  Second
derivatives are not implemented (NUTS needs the first only).

A PyTensor module: the families' numba code never imports it.
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
from pytensor.gradient import grad_not_implemented
from pytensor.graph.basic import Apply
from pytensor.graph.op import Op
from scipy import special


def _terms(a, d):
    """``a - j/2`` for ``j = 0 .. d-1``: an array of shape ``a.shape + (d,)``."""
    return np.asarray(a, dtype=np.float64)[..., None] - 0.5 * np.arange(d)


class MultiGammaLn(Op):
    """``sum_j gammaln(a - j/2)`` over ``j < d``, elementwise in ``a`` (float64; module docstring)."""

    __props__ = ("d",)

    def __init__(self, d):
        self.d = int(d)

    def make_node(self, a):
        a = pt.cast(pt.as_tensor_variable(a), "float64")
        return Apply(self, [a], [a.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(special.gammaln(_terms(inputs[0], self.d)).sum(axis=-1), dtype=np.float64)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def L_op(self, inputs, outputs, output_grads):
        return [output_grads[0] * MultiDigamma(self.d)(inputs[0])]


class MultiDigamma(Op):
    """``sum_j digamma(a - j/2)`` over ``j < d``, elementwise in ``a``: the gradient of :class:`MultiGammaLn`."""

    __props__ = ("d",)

    def __init__(self, d):
        self.d = int(d)

    def make_node(self, a):
        a = pt.cast(pt.as_tensor_variable(a), "float64")
        return Apply(self, [a], [a.type()])

    def perform(self, node, inputs, output_storage):
        output_storage[0][0] = np.asarray(special.psi(_terms(inputs[0], self.d)).sum(axis=-1), dtype=np.float64)

    def infer_shape(self, fgraph, node, input_shapes):
        return [input_shapes[0]]

    def L_op(self, inputs, outputs, output_grads):
        return [grad_not_implemented(self, 0, inputs[0], "second derivatives of multigammaln")]


def multigammaln(a, d):
    """``log Γ_d(a) - d(d-1)/4 log π`` elementwise (a graph), by :class:`MultiGammaLn`.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.special import multigammaln as reference
    >>> from pymc_partitions.families._multigamma import multigammaln
    >>> value = multigammaln(np.array([3.0, 7.5]), 4).eval()
    >>> np.allclose(value, [reference(3.0, 4), reference(7.5, 4)] - 4 * 3 / 4 * np.log(np.pi))
    True
    """
    return MultiGammaLn(d)(a)
