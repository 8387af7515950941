"""The cluster rows a partition step moves with ``z``: one protocol, :class:`ClusterRows`, two implementations.

A model whose clusters keep explicit parameters has them as PyMC variables
with ``K_max`` rows; the partition step reads them when it (re)builds its
numba state and writes them back in canonical order after each transition:

* :class:`ParameterBlock`: ``NormalMixture``'s ``mu`` and ``tau`` (shape
  ``(K_max, d)``), which the step owns: it reads their rows from PyMC's point
  (:func:`load_rows`) and writes them in canonical order, the unused rows
  drawn from their prior (:func:`parameter_rows`);
* :class:`ComponentRows`: the row variables of a component model written in
  PyMC (``distributions.components``), which NUTS moves given ``z``: every
  step gives the kernels every item's log likelihood under every row
  (:meth:`ComponentRows.data`, the data of ``families.component``) and each
  cluster the row it occupies (:meth:`ComponentRows.load`); the rows no
  cluster occupies are the auxiliary components of Algorithm 8 and the new
  clusters' parameters of Algorithm 7.  After the transition the clusters in
  order of first appearance take rows ``0 .. K-1`` with their parameters
  (:meth:`ComponentRows.write`), and every other row is drawn afresh from its
  prior given the current hyperparameters.  Why this leaves the model's
  posterior invariant, the relabelling included: ``docs/exactness.md``, "Your
  own component model".  The step writes these rows but does not own them
  (``value_vars`` is empty), so ``pm.sample`` gives them to NUTS.

Models that integrate the cluster parameters out have no rows
(``Problem.rows`` is ``None``), so the generic step knows nothing of parameters.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np
from pymc.logprob.transforms import LogTransform

from pymc_partitions._validation import check_parameter_values
from pymc_partitions.families import normal
from pymc_partitions.state import cluster_order


class ClusterRows(Protocol):
    """What a partition step needs of the cluster rows it moves with ``z`` (module docstring)."""

    names: tuple
    """The names of the variables the step writes (and owns: ``value_vars``), besides ``z``."""
    value_vars: tuple
    """The value variables the step owns besides ``z`` (empty: PyMC's samplers own the rows)."""
    k_max: int
    """The number of rows: at most this many clusters."""
    dynamic: bool
    """Whether the kernels' data change with the rows (no numba state is kept between steps)."""

    def data(self, point):
        """The kernels' data at ``point`` (dynamic rows only)."""

    def load(self, kernel_model, state, z, point):
        """Give the clusters of ``state`` (built from the canonical labels of ``z``) their rows in ``point``, after
        checking them."""

    def write(self, kernel_model, state, z, point, rng):
        """Write the rows of the clusters of ``state`` (canonical labels ``z``) into ``point``, the unused rows drawn
        from their prior."""


class ParameterBlock:
    """The cluster parameter variables ``parameters`` (random variables of ``model``) of a partition step."""

    dynamic = False

    def __init__(self, model, parameters):
        self.names = tuple(model.rvs_to_values[p].name for p in parameters)
        self.value_vars = tuple(model.rvs_to_values[p] for p in parameters)
        self.k_max = int(parameters[0].type.shape[0])
        self._logged = [_log_transformed(model, p) for p in parameters]

    def rows(self, point):
        """The parameter variables' values at ``point`` (``tau``, not its log), as float64 arrays."""
        return [
            np.exp(value) if logged else value
            for value, logged in ((np.asarray(point[name], dtype=np.float64), logged) for name, logged in zip(self.names, self._logged))
        ]

    def load(self, kernel_model, state, z, point):
        """Put the rows of ``point`` into a state just built from its canonical labels ``z``, after checking them
        (``_validation.check_parameter_values``: ``z`` canonical, at most ``K_max`` clusters, valid occupied rows)."""
        rows = self.rows(point)
        check_parameter_values(z, *rows, normal.k_max(kernel_model.params))
        load_rows(kernel_model, state, np.asarray(z), *rows)

    def write(self, kernel_model, state, z, point, rng):
        """Write the cluster parameters into ``point`` in canonical order, unused rows drawn from the prior.

        The state then takes its rows back from ``point``: PyMC holds ``mu`` in
        data units (the model's origin plus the state's means, rounded to the
        float grid there) and ``tau`` through its log, so the kept state is the
        one a rebuild from ``point`` gives, and ``partition_log_joint`` is the
        log density of what PyMC records.
        """
        for name, logged, value in zip(self.names, self._logged, parameter_rows(kernel_model, state, z, rng)):
            point[name] = np.log(value) if logged else value
        load_rows(kernel_model, state, z, *self.rows(point))


def load_rows(kernel_model, state, z, mu, tau):
    """Set the parameters of the cluster labelled ``k`` in ``z = canonical_labels(state)`` from row ``k`` of ``mu``
    and ``tau`` (data units: the state's means are ``mu - kernel_model.origin``, ``families.normal``)."""
    order = cluster_order(state, np.asarray(z))
    k = order.shape[0]
    state.theta[order] = normal.theta_from_rows(mu[:k], tau[:k], kernel_model.origin)


def parameter_rows(kernel_model, state, z, rng):
    """``(mu, tau)``, each ``(k_max, d)``: row ``k`` holds the parameters of the cluster labelled ``k`` in
    ``z = canonical_labels(state)``; the rows of unused labels ``K..k_max-1`` are drawn from the prior g.

    ``mu`` is in data units (``theta``'s means plus the model's origin).
    """
    order = cluster_order(state, np.asarray(z))
    theta = np.empty((normal.k_max(kernel_model.params), state.theta.shape[1]))
    theta[: order.shape[0]] = state.theta[order]
    normal.draw_prior_rows(kernel_model.params, rng, theta[order.shape[0] :])
    return normal.rows_from_theta(theta, kernel_model.origin)


def _log_transformed(model, rv):
    """Whether the value variable of parameter ``rv`` is its log (PyMC's default for ``pm.Gamma``); other transforms are a ``TypeError``."""
    transform = model.rvs_to_transforms.get(rv)
    if transform is None:
        return False
    if isinstance(transform, LogTransform):
        return True
    raise TypeError(
        f"{rv.name} has the transform {type(transform).__name__}; a partition step writes cluster parameters "
        "untransformed or through the default log transform only"
    )


class ComponentRows:
    """The row variables of a component model (``distributions.components.ComponentModel``), for a partition step."""

    value_vars = ()
    names = ()
    dynamic = True
    """The kernels' data (the log likelihoods) change whenever the rows do: no state is kept between steps."""

    def __init__(self, component, name):
        self.component = component
        self.k_max = component.k_max
        self._z_name = name

    def data(self, point):
        """The kernels' data at ``point``: ``L[i, r] = log f(y_i | row r)``, (n, K_max)."""
        return self.component.log_likelihoods(point)

    def load(self, kernel_model, state, z, point):
        """Each cluster of a state built from the canonical labels of ``z`` occupies the row ``z`` gives its items,
        after checking that ``z`` (an integer label vector) indexes rows: labels in ``0 .. K_max - 1``."""
        z = np.asarray(z)
        if z.min() < 0 or z.max() >= self.k_max:
            raise ValueError(
                f"{self._z_name} indexes the {self.k_max} rows of {', '.join(self.component.row_names)}: its labels "
                f"must lie in 0 .. {self.k_max - 1} (the model allows at most K_max = {self.k_max} clusters), got "
                f"labels from {z.min()} to {z.max()}"
            )
        rows = np.empty(state.n_clusters[0])
        rows[state.labels] = z
        state.theta[: rows.shape[0], 0] = rows  # state_of puts canonical label k in slot k

    def write(self, kernel_model, state, z, point, rng):
        """Rows relabelled with the canonical labels ``z`` the kernel returned (row ``k`` of every row variable is
        the row the cluster labelled ``k`` occupied), the rows ``K .. K_max - 1`` drawn from their prior (in
        ``point``)."""
        occupied = state.theta[cluster_order(state, z), 0].astype(np.int64)
        empty = np.ones(self.k_max, dtype=bool)
        empty[occupied] = False
        point.update(self.component.permute_rows(point, np.concatenate([occupied, np.flatnonzero(empty)])))
        k = occupied.shape[0]
        if k < self.k_max:
            for name, draw in self.component.draw_rows(point, rng).items():
                value = np.array(point[name])
                value[k:] = draw[k:]
                point[name] = value
