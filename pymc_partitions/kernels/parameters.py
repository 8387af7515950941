"""The cluster parameters of parametric models: the state's ``theta`` block.

A parametric state keeps one parameter row ``theta[slot]`` per occupied
cluster.  The target of every parametric kernel is the joint density of the
partition and those rows,

    pi(Pi, theta) = p(Pi) prod_{c in Pi} g(theta_c) prod_{i in c} p(x_i | theta_c),

with respect to counting measure on partitions times Lebesgue measure on the
occupied clusters' parameters (``docs/exactness.md``, "Nonconjugate Normal
mixture"); for the generic component model ``g`` is 1 and the rows are given
(``families.component``: the kernels condition on them).  Every function here
calls the family's own (``families``, "Parametric families"), so they serve
every parametric family: conditional Gibbs updates of one or every cluster's
parameters, prior draws, a cluster's factor of ``pi``, and parameters for a
state built from labels alone.  The conversion to and from the PyMC variables
is the step's (``distributions.cluster_rows``).
"""

from __future__ import annotations

import numpy as np

from pymc_partitions import families, priors
from pymc_partitions._dispatch import kind_function
from pymc_partitions._jit import jit


@jit
def update_cluster(model, state, slot, target, rng):
    """Gibbs update of ``slot``'s parameters given its items; returns the log density of the outcome.

    ``target`` empty: draw (``families.update_parameters``); a parameter row:
    set the parameters to it and return the density of that outcome.
    """
    return families.update_parameters(model.family, state.stats[slot], model.params, state.theta[slot], target, rng)


@jit
def update_all(model, state, rng):
    """Gibbs update of every occupied cluster's parameters given its items (Neal 2000, Algorithms 7 and 8, last step)."""
    no_target = np.empty(0)
    for k in range(state.n_clusters[0]):
        update_cluster(model, state, state.slots[k], no_target, rng)


@jit
def draw_from_prior(model, state, slot, rng):
    """``theta[slot] ~ g``, the prior (split-merge launch states)."""
    families.draw_prior(model.family, model.params, rng, state.theta[slot])


@jit
def cluster_log_factor(model, stats, size, theta):
    """``log W(size) + log g(theta) + sum_i log p(x_i | theta)``: a cluster's factor of ``pi`` (module docstring)."""
    return (
        priors.log_w(model.prior, model.prior_params, size)
        + families.log_prior_density(model.family, theta, model.params)
        + families.cluster_log_likelihood(model.family, stats, theta, model.params)
    )


@jit
def _no_parameters(model, state, rng):
    pass


@jit
def _initialise_parameters(model, state, rng):
    families.initialise_parameters(model.family, model.params, state.stats, state.theta, state.slots, state.n_clusters[0], rng)


@kind_function(additive=_no_parameters, relational=_no_parameters, parametric=_initialise_parameters)
def initialise(model, state, rng):
    """Give a state built from labels alone parameters (``families.initialise_parameters``).

    Nothing to do for the conjugate kinds.
    """
