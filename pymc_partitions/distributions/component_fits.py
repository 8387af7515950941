r"""Candidate rows of a component model: their log likelihoods, their prior, and Laplace approximations.

What the whole-cluster moves of a component model (``steps.component_split_merge``)
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
from pytensor.compile.sharedvalue import SharedVariable
from pytensor.gradient import grad
from pytensor.graph.replace import clone_replace, vectorize_graph
from pytensor.graph.traversal import ancestors

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
        self._data = []

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
        the candidates padded with the fixed start row to blocks of ``K_max`` rows, vectorised over the blocks.
        """
        model, component = self.component.model, self.component
        m = phi.shape[0]
        terms = model.logp(vars=list(component.observed), sum=False)
        total = sum(_per_item(term) for term in terms)
        nodes = component._index_nodes_of(total)
        likelihood = vectorize_graph(total, {node.outputs[0]: _rows_of(node, m, component.n, True) for node in nodes})
        likelihood = clone_replace(likelihood, dict(zip(self._values, self._split(phi))), rebuild_strict=False)
        k = component.k_max
        blocks = (m + k - 1) // k
        padding = pt.repeat(pt.as_tensor_variable(self.start)[None, :], blocks * k - m, axis=0)
        padded = pt.concatenate([phi, padding], axis=0)
        prior = sum(_per_item(term) for term in model.logp(vars=list(component.rows), sum=False))
        block = [value.type() for value in self._values]
        prior = clone_replace(prior, dict(zip(self._values, block)), rebuild_strict=False)
        batched = [piece.reshape((blocks, k, *shape)) for piece, shape in zip(self._split(padded), self.shapes)]
        prior = vectorize_graph(prior, dict(zip(block, batched))).reshape((blocks * k,))[:m]
        return likelihood, prior

    def _compile(self, inputs, outputs):
        """A compiled function of ``inputs`` and of the model's value variables ``outputs`` need (those only: a call
        costs less for each input it need not check), with the names of those value variables."""
        needed = set(ancestors(outputs))
        values = [v for v in self.component.model.value_vars if v in needed and v not in self._values]
        function = pm.pytensorf.compile([*inputs, *values], outputs, on_unused_input="ignore")
        self._data += [v for v in needed if isinstance(v, SharedVariable) and v not in self._data]  # pm.Data
        return function, [v.name for v in values]

    # -- compiled functions --------------------------------------------------------------------

    def candidates(self, point, phi):
        """``(L, log g)``: every item's log likelihood under each candidate row of ``phi`` (m, p), ``(m, n)``, and each
        row's prior log density in value space, ``(m,)``, at the other values of ``point``."""
        if self._candidates is None:
            rows = pt.dmatrix("rows")
            self._candidates = self._compile([rows], list(self._graphs(rows)))
        function, names = self._candidates
        likelihood, prior = function(np.atleast_2d(np.asarray(phi, dtype=np.float64)), *(point[name] for name in names))
        return np.asarray(likelihood), np.asarray(prior)

    def _objectives(self, point, weights, rows):
        """``F_r`` and its gradient for each candidate row ``rows[r]`` with the items weighted by ``weights[r]``
        (module docstring), in one evaluation: ``(values (M,), gradients (M, p))``."""
        if self._fit is None:
            candidate, weight = pt.dmatrix("rows"), pt.dmatrix("weights")
            likelihood, prior = self._graphs(candidate)
            objective = (weight * likelihood).sum(axis=1) + prior
            self._fit = self._compile([candidate, weight], [objective, grad(objective.sum(), candidate)])
        function, names = self._fit
        values, gradients = function(rows, weights, *(point[name] for name in names))
        return np.asarray(values), np.asarray(gradients)

    def laplace(self, point, weights):
        """``[(mean, cov), ...]``: the Laplace approximation of one row's conditional posterior for each row of
        ``weights`` (m, n), the items weighted by it (module docstring), found together (:meth:`_newton`).

        Deterministic in the weights, the point's other values and the data (``pm.Data`` included), so each is
        remembered under a digest of all three (:data:`CACHE_SIZE` fits): a move and its reverse, and the moves of
        later steps while those stay, fit each set of items once.  (A fit remembered under anything less would make
        the proposal depend on the chain's past.)"""
        weights = np.atleast_2d(np.asarray(weights, dtype=np.float64))
        if self._fit is None:
            self._objectives(point, weights[:1], self.start[None, :])  # compiles, and names the inputs
        context = hashlib.blake2b(digest_size=16)
        for name in self._fit[1]:
            context.update(np.ascontiguousarray(point[name]).tobytes())
        for shared in self._data:  # data that can change between steps (pm.Data): part of what a fit is of
            context.update(np.ascontiguousarray(shared.get_value(borrow=True)).tobytes())
        keys = []
        for row in weights:
            digest = context.copy()
            digest.update(row.tobytes())
            keys.append(digest.digest())
        missing = [r for r, key in enumerate(keys) if key not in self._cache]
        if missing:
            for r, fit in zip(missing, self._newton(point, weights[missing])):
                if len(self._cache) >= self.CACHE_SIZE:
                    self._cache.pop(next(iter(self._cache)))
                self._cache[keys[r]] = fit
        return [self._cache[key] for key in keys]

    def _newton(self, point, weights):
        """Newton's method with backtracking for each row of ``weights`` from :attr:`start`, in lockstep: one call
        evaluates every pending problem's ``F``, gradient and Hessian (:meth:`_with_precision`) at its candidate
        row, a step is halved until ``F`` does not decrease, and a problem stops when its step cannot be improved
        or no longer raises ``F``."""
        m = weights.shape[0]
        rows = np.tile(self.start, (m, 1))
        value, gradient, precision = self._with_precision(point, weights, rows)
        active = np.arange(m)
        for _ in range(self.NEWTON_STEPS):
            if not active.size:
                break
            steps = np.linalg.solve(precision[active], gradient[active][:, :, None])[:, :, 0]
            before = value[active]
            scale = np.ones(active.size)
            moved = np.zeros(active.size, dtype=bool)
            for _ in range(30):  # halve each problem's step until F does not decrease
                pending = np.flatnonzero(~moved)
                problems = active[pending]
                candidates = rows[problems] + scale[pending, None] * steps[pending]
                values, gradients, precisions = self._with_precision(point, weights[problems], candidates)
                better = np.isfinite(values) & (values >= value[problems])
                accepted = problems[better]
                rows[accepted], value[accepted] = candidates[better], values[better]
                gradient[accepted], precision[accepted] = gradients[better], precisions[better]
                moved[pending[better]] = True
                if moved.all():
                    break
                scale[~moved] *= 0.5
            converged = value[active[moved]] - before[moved] <= 1e-10 * (1.0 + np.abs(value[active[moved]]))
            active = active[moved][~converged]
        covariances = np.linalg.inv(precision)
        return [(rows[r], covariances[r]) for r in range(m)]

    def _with_precision(self, point, weights, rows):
        """``F``, its gradient and ``-F''`` (forward differences of the gradient, symmetrised, eigenvalues floored by
        :data:`EIGEN_FLOOR`) at each row of ``rows``, from one evaluation of ``m (p + 1)`` candidate rows."""
        m, p = rows.shape
        steps = 1e-6 * np.maximum(1.0, np.abs(rows))  # (m, p)
        shifted = rows[:, None, :] + np.eye(p)[None, :, :] * steps[:, :, None]  # (m, p, p)
        batch = np.concatenate([rows[:, None, :], shifted], axis=1).reshape(m * (p + 1), p)
        values, gradients = self._objectives(point, np.repeat(weights, p + 1, axis=0), batch)
        gradients = gradients.reshape(m, p + 1, p)
        hessians = (gradients[:, 1:, :] - gradients[:, :1, :]) / steps[:, :, None]  # row q: d gradient / d phi_q
        precision = _floored(-np.swapaxes(hessians, 1, 2), self.EIGEN_FLOOR)
        return values.reshape(m, p + 1)[:, 0], gradients[:, 0, :], precision


def _floored(matrices, floor):
    """The symmetric parts of ``matrices`` (m, p, p) with their eigenvalues raised to at least ``floor`` times the
    largest (and ``floor``); the identity for a matrix with a non-finite entry."""
    symmetric = 0.5 * (matrices + np.swapaxes(matrices, 1, 2))
    finite = np.isfinite(symmetric).all(axis=(1, 2))
    symmetric[~finite] = np.eye(symmetric.shape[1])  # whose eigen-decomposition gives it back exactly
    values, vectors = np.linalg.eigh(symmetric)
    values = np.maximum(values, np.maximum(floor, floor * values.max(axis=1, keepdims=True)))
    return (vectors * values[:, None, :]) @ np.swapaxes(vectors, 1, 2)
