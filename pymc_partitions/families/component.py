"""Your own component model: clusters that index the rows of cluster parameters written in PyMC.

The generic *parametric* family (``_dispatch``).  The user's PyMC model holds
cluster parameters ``theta`` with ``K_max`` i.i.d. rows and a likelihood that
takes them by row indexing (``beta[z]``), so that item ``i`` has density
``f(y_i | theta_{z_i})`` (``distributions.components``).  The kernels never see
``theta`` or ``f``: given the current rows, PyTensor computes every item's log
likelihood under every row in one vectorised evaluation, and that matrix is
this family's data::

    data[i, r] = log f(y_i | theta_r),     i < n,  r < K_max.

A cluster's parameter is the *row* it occupies, ``theta[slot] = [r]``, and the
kernels condition on the rows: their target is the partition's conditional

    log p(Pi) + sum_i data[i, row(z_i)]

(plus constants in ``Pi``), which changes exactly as the PyMC model's log
density does when ``z`` moves with the rows fixed.  The rows themselves are
moved by PyMC's samplers (NUTS); :func:`update_parameters` leaves them.

Neal's (2000) Algorithm 8 in the ``K_max``-row form (``docs/exactness.md``,
"Your own component model"): the rows no cluster occupies are the auxiliary
components.  In the joint of the row labels and all ``K_max`` rows, where the
clusters' rows are a uniformly random injective assignment, item ``i`` opens a
new cluster in a given empty row with probability proportional to
``V(n, K+1)/V(n, K) W(1) / (K_max - K) f(y_i | theta_r)``: the auxiliary values
are the ``K_max - K`` empty rows (:func:`auxiliary_values`), each with weight
``1/(K_max - K)``.

Layouts (float64 vectors; ``d = K_max``, the width of a data row)::

    params = [d, k_max]                              2
    stats  = [n, sum_i data[i, r] (K_max)]           1 + K_max   (a cluster's log likelihood under every row)
    theta  = [row]                                   1
"""

import numpy as np

from pymc_partitions._dispatch import PARAMETRIC
from pymc_partitions._jit import jit

from .spec import COUNT, REAL, FamilySpec, Hyper

__all__ = [
    "stat_size",
    "param_size",
    "item_stats",
    "log_density",
    "k_max",
    "log_prior_density",
    "cluster_log_likelihood",
    "update_parameters",
    "initialise_parameters",
    "auxiliary_capacity",
    "auxiliary_values",
    "SPEC",
]


@jit
def stat_size(d):
    """``1 + d``: the count and the cluster's summed log likelihood under each of the ``d = K_max`` rows."""
    return 1 + d


@jit
def param_size(d):
    """One entry: the row the cluster occupies."""
    return 1


@jit(inline="always")
def item_stats(x, out):
    """``[1, log f(y_i | theta_r) for every row r]``: the item's row of the data, after a count of one."""
    out[0] = 1.0
    for r in range(x.shape[0]):
        out[1 + r] = x[r]


@jit(inline="always")
def log_density(theta, x, params):
    """``log f(y_i | theta_r)`` for the cluster in row ``r = theta[0]``: an entry of the item's data row."""
    return x[int(theta[0])]


@jit
def k_max(params):
    """The number of parameter rows, the most clusters the model allows."""
    return int(params[1])


@jit
def log_prior_density(theta, params):
    """0: the rows' prior density is PyMC's; the kernels condition on the rows (module docstring)."""
    return 0.0


@jit
def cluster_log_likelihood(stats, theta, params):
    """``sum_{i in c} log f(y_i | theta_r)`` for the cluster in row ``r``: one entry of its statistics."""
    return stats[1 + int(theta[0])]


@jit
def update_parameters(stats, params, theta, target, rng):
    """Leave the rows (PyMC's samplers move them) and return 0: the kernels' Gibbs sweeps update the labels only."""
    return 0.0


@jit
def initialise_parameters(params, stats, theta, slots, k, rng):
    """Rows of a state built from canonical labels: the cluster labelled ``k`` (in slot ``k``) occupies row ``k``."""
    for j in range(k):
        theta[slots[j], 0] = slots[j]


@jit
def auxiliary_capacity(params, n_auxiliary):
    """``K_max``: at most every row is empty and auxiliary (``n_auxiliary`` does not apply)."""
    return k_max(params)


@jit(inline="always")
def auxiliary_values(params, theta, slots, k, auxiliary, fresh, rng):
    """The empty rows as Algorithm 8's auxiliary components, into ``auxiliary[:m]``; returns ``m = K_max - k``.

    ``slots[:k]`` are the occupied slots and ``theta[slot, 0]`` their rows.
    Nothing is drawn (``fresh`` and ``rng`` are unused): the empty rows hold
    values PyMC's samplers and the step's prior draws left there, which in the
    joint of labels and rows are the auxiliary values (module docstring).  The
    rows are listed in increasing order; O(K_max + k), allocation-free.
    """
    rows = k_max(params)
    for r in range(rows):
        auxiliary[r, 0] = 0.0
    for j in range(k):
        auxiliary[int(theta[slots[j], 0]), 0] = -1.0  # occupied
    m = 0
    for r in range(rows):
        if auxiliary[r, 0] == 0.0:
            auxiliary[m, 0] = r
            m += 1
    return m


SPEC = FamilySpec(
    kind=PARAMETRIC,
    data=REAL,
    hypers=(Hyper("k_max", COUNT),),
)
