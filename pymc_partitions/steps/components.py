"""What a partition step adds for a user's component model (``distributions.components``): the rows.

The step moves ``z`` given the rows of the cluster parameters, which PyMC's
other samplers (NUTS) move given ``z``.  Each step

1. gives the kernels every item's log likelihood under every row
   (:meth:`ComponentRows.data`, the data of ``families.component``) and each
   cluster the row it occupies (:meth:`ComponentRows.load`); the rows no
   cluster occupies are the auxiliary components of Algorithm 8 and the new
   clusters' parameters of Algorithm 7;
2. after the kernel's transition, relabels: the clusters in order of first
   appearance take rows ``0 .. K-1`` with their parameters
   (:meth:`ComponentRows.write`), and every other row is drawn afresh from its
   prior given the current hyperparameters.

Why this leaves the model's posterior invariant, the relabelling included:
``docs/exactness.md``, "Your own component model".  The step writes the rows
but does not own them (``value_vars`` is empty), so ``pm.sample`` gives them to
NUTS.
"""

from __future__ import annotations

import numpy as np

from pymc_partitions.state import cluster_order


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
