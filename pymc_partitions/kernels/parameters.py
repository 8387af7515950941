"""The cluster parameters of parametric models: the state's ``theta`` block (``families.normal``).

A parametric state keeps one parameter row ``theta[slot]`` per occupied
cluster.  The target of every parametric kernel is the joint density of the
partition and those rows,

    pi(Pi, theta) = p(Pi) prod_{c in Pi} g(theta_c) prod_{i in c} p(x_i | theta_c),

with respect to counting measure on partitions times Lebesgue measure on the
occupied clusters' parameters (``docs/exactness.md``, "Nonconjugate Normal
mixture").  The PyMC model has ``k_max`` parameter rows: the rows of the
occupied clusters in canonical order, and rows ``K..k_max-1`` that no item
uses and whose full conditional is the prior.  :func:`parameter_rows` writes
them out (drawing the unused rows from the prior, an exact Gibbs update of
those rows), :func:`load_rows` reads them back.  The rows are in data units;
the state's ``theta`` holds cluster means relative to ``model.origin``, the
coordinates of the model's data (``families``, "Coordinates"), so those two
functions are where means cross between the two (``mu = theta_mu + origin``).

Operations here: conditional Gibbs updates of one or every cluster's
parameters, prior draws, a cluster's factor of ``pi``, and the conversion to
and from the PyMC rows.
"""

from __future__ import annotations

import math

import numpy as np

from pymc_partitions import priors
from pymc_partitions._dispatch import kind_function
from pymc_partitions._jit import jit
from pymc_partitions.families import normal
from pymc_partitions.state import cluster_order


@jit
def update_cluster(model, state, slot, target, rng):
    """Gibbs update of ``slot``'s parameters given its items; returns the log density of the outcome.

    ``target`` empty: draw (``normal.update_parameters``); a parameter row:
    set the parameters to it and return the density of that outcome.
    """
    return normal.update_parameters(state.stats[slot], model.params, state.theta[slot], target, rng)


@jit
def update_all(model, state, rng):
    """Gibbs update of every occupied cluster's parameters given its items (Neal 2000, Algorithms 7 and 8, last step)."""
    no_target = np.empty(0)
    for k in range(state.n_clusters[0]):
        update_cluster(model, state, state.slots[k], no_target, rng)


@jit
def draw_from_prior(model, state, slot, rng):
    """``theta[slot] ~ g``, the prior (split-merge launch states)."""
    normal.draw_prior(model.params, rng, state.theta[slot])


@jit
def cluster_log_factor(model, stats, size, theta):
    """``log W(size) + log g(theta) + sum_i log p(x_i | theta)``: a cluster's factor of ``pi`` (module docstring)."""
    return (
        priors.log_w(model.prior, model.prior_params, size)
        + normal.log_prior_density(theta, model.params)
        + normal.cluster_log_likelihood(stats, theta, model.params)
    )


@jit
def load_rows(model, state, z, mu, tau):
    """Set the parameters of the cluster labelled ``k`` in ``z = canonical_labels(state)`` from row ``k`` of ``mu`` and ``tau``.

    ``mu`` is in data units: the state's means are ``mu - model.origin``.
    """
    d = model.data.shape[1]
    order = cluster_order(state, z)
    for k in range(order.shape[0]):
        theta = state.theta[order[k]]
        log_norm = 0.0
        for j in range(d):
            theta[j] = mu[k, j] - model.origin[j]
            theta[d + j] = tau[k, j]
            log_norm += 0.5 * (math.log(tau[k, j]) - math.log(2.0 * math.pi))
        theta[2 * d] = log_norm


@jit
def parameter_rows(model, state, z, rng):
    """``(mu, tau)``, each ``(k_max, d)``: row ``k`` holds the parameters of the cluster labelled ``k`` in
    ``z = canonical_labels(state)``; the rows of unused labels ``K..k_max-1`` are drawn from the prior.

    ``mu`` is in data units: ``theta``'s means plus ``model.origin``.
    """
    d = model.data.shape[1]
    k_max = normal.k_max(model.params)
    mu = np.empty((k_max, d))
    tau = np.empty((k_max, d))
    order = cluster_order(state, z)
    row = np.empty(normal.param_size(d))
    for k in range(k_max):
        if k < order.shape[0]:
            row[:] = state.theta[order[k]]
        else:
            normal.draw_prior(model.params, rng, row)
        for j in range(d):
            mu[k, j] = row[j] + model.origin[j]
            tau[k, j] = row[d + j]
    return mu, tau


@jit
def _no_parameters(model, state, rng):
    pass


@jit
def _initialise_parameters(model, state, rng):
    for k in range(state.n_clusters[0]):
        draw_from_prior(model, state, state.slots[k], rng)
    update_all(model, state, rng)


@kind_function(additive=_no_parameters, relational=_no_parameters, parametric=_initialise_parameters)
def initialise(model, state, rng):
    """Give a state built from labels alone parameters: a prior draw, then one Gibbs update given the items.

    Nothing to do for the conjugate kinds.  Any starting value is valid for
    MCMC; this one is in the bulk of the conditional posterior.
    """
