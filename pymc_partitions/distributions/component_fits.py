r"""Candidate rows of a component model: their log likelihoods, their prior, and Laplace approximations.

What the whole-cluster moves of a component model (``kernels.component_split_merge``)
need from the model's own graph, compiled once per model:

* one row of every row variable, in PyMC's value space, flattened into a
  vector ``phi`` of length ``p`` (:meth:`RowFits.rows_of` reads the ``K_max``
  rows of a point, :meth:`RowFits.with_rows` writes them back);
* :meth:`RowFits.candidates`: for ``m`` candidate rows, every item's log
  likelihood under each, ``(m, n)``, and each one's prior log density in value
  space (the Jacobian of the transforms included), ``(m,)``;
* :meth:`RowFits.laplace`: a Gaussian approximation ``N(mean, cov)`` of the
  conditional posterior of one cluster's row given a set of items (weights
  ``w``), from Newton's method on

  .. math::

      F(\phi) = \sum_i w_i \log f(y_i \mid \phi) + \log g(\phi),

  with the gradient and Hessian from PyTensor.  It is a deterministic
  function of the weights and the point's other values, started from a fixed
  row (the model's initial point), so a proposal built on it has the same
  density when a move and its reverse evaluate it.  Where ``-F''`` is not
  positive definite its eigenvalues are floored; a fit that does not finish
  still gives a valid (if poorer) proposal.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from pytensor.gradient import grad
from pytensor.graph.replace import clone_replace, vectorize_graph

from pymc_partitions.distributions.components import _per_item, _rows_of

__all__ = ["RowFits"]


class RowFits:
    """The compiled candidate-row functions of a ``ComponentModel`` (module docstring)."""

    NEWTON_STEPS = 30
    """Most Newton iterations of a fit."""
    EIGEN_FLOOR = 1e-6
    """Smallest eigenvalue of a fit's precision ``-F''``, relative to its largest (and at least this absolutely)."""
    CACHE_SIZE = 4096
    """Laplace fits remembered (the oldest is forgotten first)."""

    def __init__(self, component):
        self.component = component
        model = component.model
        self._values = [model.rvs_to_values[rv] for rv in component.rows]
        self.shapes = [tuple(int(s) for s in value.type.shape[1:]) for value in self._values]
        self.sizes = [math.prod(shape) for shape in self.shapes]
        self.p = sum(self.sizes)
        self.start = self.rows_of(model.initial_point())[0].copy()
        self._candidates = None
        self._fit = None
        self._cache = {}

    # -- rows and points -----------------------------------------------------------------------

    def rows_of(self, point):
        """The ``K_max`` rows of ``point`` as a ``(K_max, p)`` float64 array (value space)."""
        k = self.component.k_max
        return np.concatenate([np.asarray(point[v.name], dtype=np.float64).reshape(k, -1) for v in self._values], axis=1)

    def with_rows(self, point, rows):
        """``point`` with its rows replaced by ``rows`` ``(K_max, p)`` (a new dict)."""
        new, offset = dict(point), 0
        for value, shape, size in zip(self._values, self.shapes, self.sizes):
            new[value.name] = np.asarray(rows[:, offset : offset + size].reshape(-1, *shape), dtype=value.dtype)
            offset += size
        return new

    def _split(self, phi):
        """Symbolic ``(m, p)`` rows into one ``(m, *shape)`` tensor per row variable."""
        pieces, offset = [], 0
        for value, shape, size in zip(self._values, self.shapes, self.sizes):
            pieces.append(pt.cast(phi[:, offset : offset + size].reshape((phi.shape[0], *shape)), value.dtype))
            offset += size
        return pieces

    def _graphs(self, phi):
        """``(L (m, n), log g (m,))`` for the symbolic candidate rows ``phi`` (m, p).

        The likelihood's graph is vectorised over the ``m`` candidates directly;
        the rows' prior log density, whose graph PyMC writes for exactly
        ``K_max`` rows (its value's shape is a constant there), is evaluated on
        the candidates padded to ``K_max`` rows with the fixed start row.
        """
        model, component = self.component.model, self.component
        m = phi.shape[0]
        terms = model.logp(vars=list(component.observed), sum=False)
        total = sum(_per_item(term) for term in terms)
        nodes = component._index_nodes_of(total)
        likelihood = vectorize_graph(total, {node.outputs[0]: _rows_of(node, m, component.n, True) for node in nodes})
        likelihood = clone_replace(likelihood, dict(zip(self._values, self._split(phi))), rebuild_strict=False)
        padding = pt.repeat(pt.as_tensor_variable(self.start)[None, :], component.k_max - m, axis=0)
        padded = pt.concatenate([phi, padding], axis=0)
        prior = sum(_per_item(term) for term in model.logp(vars=list(component.rows), sum=False))
        prior = clone_replace(prior, dict(zip(self._values, self._split(padded))), rebuild_strict=False)[:m]
        return likelihood, prior

    def _inputs(self):
        return [v for v in self.component.model.value_vars if v not in self._values]

    # -- compiled functions --------------------------------------------------------------------

    def candidates(self, point, phi):
        """``(L, log g)``: every item's log likelihood under each candidate row of ``phi`` (m, p), ``(m, n)``, and each
        row's prior log density in value space, ``(m,)``, at the other values of ``point``."""
        if self._candidates is None:
            rows = pt.dmatrix("rows")
            likelihood, prior = self._graphs(rows)
            self._candidates = pm.pytensorf.compile([rows, *self._inputs()], [likelihood, prior], on_unused_input="ignore")
        likelihood, prior = self._candidates(np.atleast_2d(phi), *self._values_at(point))
        return np.asarray(likelihood), np.asarray(prior)

    def _values_at(self, point):
        return [point[v.name] for v in self._inputs()]

    def _objective(self):
        if self._fit is None:
            row, weights = pt.dvector("row"), pt.dvector("weights")
            likelihood, prior = self._graphs(row[None, :])
            objective = (weights * likelihood[0]).sum() + prior[0]
            outputs = [objective, grad(objective, row)]
            self._fit = pm.pytensorf.compile([row, weights, *self._inputs()], outputs, on_unused_input="ignore")
        return self._fit

    def laplace(self, point, weights):
        """``(mean, cov)`` of the Laplace approximation of one row's conditional posterior given the items weighted
        by ``weights`` (n,) (module docstring).  Deterministic in ``weights`` and the point's other values, so it is
        remembered under a digest of both (:data:`CACHE_SIZE` fits): a move and its reverse, and the moves of
        later steps while those values stay, fit each set of items once."""
        values = self._values_at(point)
        weights = np.asarray(weights, dtype=np.float64)
        digest = hashlib.blake2b(weights.tobytes(), digest_size=16)
        for value in values:
            digest.update(np.ascontiguousarray(value).tobytes())
        key = digest.digest()
        if key not in self._cache:
            if len(self._cache) >= self.CACHE_SIZE:
                self._cache.pop(next(iter(self._cache)))
            self._cache[key] = self._fit_laplace(values, weights)
        return self._cache[key]

    def _fit_laplace(self, values, weights):
        function = self._objective()

        def evaluate(row):
            value, gradient = function(row, weights, *values)
            return float(value), np.asarray(gradient)

        row = self.start.copy()
        value, gradient = evaluate(row)
        precision = self._precision(evaluate, row, gradient)
        for _ in range(self.NEWTON_STEPS):
            step = np.linalg.solve(precision, gradient)
            for halving in range(30):
                candidate = row + step * 0.5**halving
                new_value, new_gradient = evaluate(candidate)
                if np.isfinite(new_value) and new_value >= value:
                    break
            else:
                break
            converged = new_value - value <= 1e-10 * (1.0 + abs(new_value))
            row, value, gradient = candidate, new_value, new_gradient
            precision = self._precision(evaluate, row, gradient)
            if converged:
                break
        return row, np.linalg.inv(precision)

    def _precision(self, evaluate, row, gradient):
        """``-F''`` at ``row`` by forward differences of the gradient (``p`` more evaluations), symmetrised and with
        its eigenvalues floored (:data:`EIGEN_FLOOR`)."""
        columns = []
        for q in range(self.p):
            h = 1e-6 * max(1.0, abs(row[q]))
            shifted = row.copy()
            shifted[q] += h
            columns.append((evaluate(shifted)[1] - gradient) / h)
        return _floored(-np.array(columns).T, self.EIGEN_FLOOR)


def _floored(matrix, floor):
    """The symmetric ``matrix`` with its eigenvalues raised to at least ``floor`` times the largest (and ``floor``)."""
    symmetric = 0.5 * (matrix + matrix.T)
    if not np.all(np.isfinite(symmetric)):
        return np.eye(symmetric.shape[0])
    values, vectors = np.linalg.eigh(symmetric)
    values = np.maximum(values, max(floor, floor * values.max()))
    return (vectors * values) @ vectors.T
