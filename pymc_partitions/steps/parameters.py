"""Explicit cluster parameters as PyMC variables (``NormalMixture``'s ``mu`` and ``tau``): what a step adds for them.

A model whose clusters keep explicit parameters (the parametric kind,
``_dispatch``) has them as PyMC variables of shape ``(K_max, d)``.  A partition
step on such a model owns them with ``z``: :class:`ParameterBlock` reads their
rows from PyMC's point when the step rebuilds its state, and writes them back
in canonical order after each transition, the unused rows drawn from their
prior (:func:`load_rows`, :func:`parameter_rows`).  Steps on the other kinds hold no block, so the
generic step (``steps.base``) knows nothing of parameters.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
from pymc.logprob.transforms import LogTransform

from pymc_partitions._validation import check_parameter_values
from pymc_partitions.distributions.mixtures import PartitionMixtureRV
from pymc_partitions.distributions.observed import model_observed_rvs
from pymc_partitions.families import normal
from pymc_partitions.state import cluster_order


class ParameterBlock:
    """The cluster parameter variables ``parameters`` (random variables of ``model``) of a partition step."""

    def __init__(self, model, parameters):
        self.names = [model.rvs_to_values[p].name for p in parameters]
        self.value_vars = [model.rvs_to_values[p] for p in parameters]
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


def is_cluster_parameter(var):
    """True for an explicit cluster parameter (``NormalMixture``'s ``mu`` or ``tau``) of the model on the context stack.

    ``pm.sample`` asks each step method's ``competence`` about a variable
    without saying which model it belongs to, so this looks in the model
    context (``with model: pm.sample()``); without one it is False.
    """
    try:
        model = pm.modelcontext(None)
    except TypeError:
        return False
    for obs in model_observed_rvs(model):
        op = getattr(obs.owner, "op", None)
        if isinstance(op, PartitionMixtureRV):
            try:
                _, parameters = op.kernel_inputs(op.dist_params(obs.owner))
            except (TypeError, ValueError):  # not a parameter a step can sample (the step says why)
                continue
            if any(var is parameter for parameter in parameters):
                return True
    return False


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
