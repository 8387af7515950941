"""A model's observed variables, and what ``pm.sample_posterior_predictive`` (PyMC 5.28.5) does to them.

Two things every reader of a model's graph in this package must know:

* PyMC 5.28.5's ``pm.sample_posterior_predictive(idata)`` appends each
  observed variable of ``idata.observed_data`` to ``model.observed_RVs`` a
  second time: it extends that list in place (``observed_vars =
  model.observed_RVs; observed_vars += [...]``, ``pymc/sampling/forward.py``)
  with the variables it means to add only if absent, but tests absence by
  comparing their names with the variables.  The graph discovery of the
  steps and summaries reads the observed variables through
  :func:`model_observed_rvs`, which drops those duplicates.  The model's own
  log density (``model.logp()``, which ``pm.sample`` calls for every model)
  fails on them (``Cannot convert None to a tensor variable``), so the forward
  draw of every observation model of this package calls
  :func:`check_forward_draw`, which removes them from the model where PyMC
  put them (:func:`repair_observed_rvs`), while PyMC is still sampling.
* PyMC's posterior predictive draws each observed variable forward from the
  posterior draws of its parents.  A conjugate observation model's parents
  are the partition and the hyperparameters; its cluster parameters are
  integrated out, so a forward draw takes them from their *prior*: the
  replicates ignore where the data put the clusters.  PyMC offers no way for
  a random variable to condition on its observed value, so
  :func:`check_forward_draw` warns (once per model) when
  ``pm.sample_posterior_predictive`` makes such a draw, and names the call
  that draws the cluster parameters from their posterior:
  ``pmp.posterior_predictive(idata, model, extend_inferencedata=True)``.
  (``NormalMixture`` keeps its cluster parameters in the trace: PyMC's draws
  are right for it, and it does not warn.)
"""

from __future__ import annotations

import sys
import warnings
import weakref

__all__ = ["model_observed_rvs", "repair_observed_rvs", "check_forward_draw"]

_PYMC_POSTERIOR_PREDICTIVE = ("pymc.sampling.forward", "sample_posterior_predictive")
"""Module and function name of ``pm.sample_posterior_predictive``, whose frame :func:`check_forward_draw` looks for."""

_warned = weakref.WeakSet()
"""The models whose posterior predictive draws were warned about (once per model)."""


def model_observed_rvs(model):
    """``model.observed_RVs`` with each variable once, in order: without the duplicates that
    ``pm.sample_posterior_predictive`` (PyMC 5.28.5) leaves (module docstring).

    Examples
    --------
    >>> import numpy as np, pymc as pm
    >>> from pymc_partitions.distributions.observed import model_observed_rvs
    >>> with pm.Model() as model:
    ...     x = pm.Normal("x", observed=np.zeros(3))
    >>> model.observed_RVs.append(x)  # what pm.sample_posterior_predictive(idata) does
    >>> [rv.name for rv in model_observed_rvs(model)], len(model.observed_RVs)
    (['x'], 2)
    """
    return list(dict.fromkeys(model.observed_RVs))


def repair_observed_rvs(model):
    """Remove, in place, the duplicate entries of ``model.observed_RVs`` and of its parent models' lists.

    PyMC's ``treelist`` forbids item assignment, so the later copies are
    deleted one by one; the first of each stays where it was.
    """
    observed = model.observed_RVs
    while observed is not None:
        seen = set()
        for position in reversed([i for i, rv in enumerate(observed) if rv in seen or seen.add(rv)]):
            del observed[position]
        observed = getattr(observed, "parent", None)


def _posterior_predictive_model():
    """The model of the ``pm.sample_posterior_predictive`` call up the stack, or ``None`` if not called by it."""
    frame = sys._getframe(2)
    module, name = _PYMC_POSTERIOR_PREDICTIVE
    while frame is not None:
        if frame.f_code.co_name == name and frame.f_globals.get("__name__") == module:
            return frame.f_locals.get("model")
        frame = frame.f_back
    return None


def check_forward_draw(op, integrates_out):
    """Called by the forward draw (``rng_fn``) of an observation model's ``op``.

    Under ``pm.sample_posterior_predictive`` it repairs that model's
    observed variables (:func:`repair_observed_rvs`) and, if the op
    ``integrates_out`` its cluster parameters, warns once per model that its
    replicates draw them from the prior, naming the observed variables and
    ``pmp.posterior_predictive``.  Elsewhere (``pm.draw``,
    ``pm.sample_prior_predictive``, where the prior is right) it does nothing.
    """
    model = _posterior_predictive_model()
    if model is None:
        return
    repair_observed_rvs(model)
    if not integrates_out or model in _warned:
        return
    _warned.add(model)
    names = [rv.name for rv in model_observed_rvs(model) if type(getattr(rv.owner, "op", None)) is type(op)]  # compiled: a copy
    kind = op._print_name[0]
    instead = (
        "pmp.posterior_predictive(idata, model, extend_inferencedata=True) draws them from their posterior "
        "given the data and adds the replicates to idata (then az.plot_ppc(idata))"
        if kind != "InfiniteRelationalModel"
        else "pmp.plots.plot_adjacency shows how the fitted blocks match the network"
    )
    warnings.warn(
        f"pm.sample_posterior_predictive draws {', '.join(map(repr, names)) or 'the data'} ({kind}) with each "
        "cluster's parameters from their prior given the hyperparameters: the model integrates them out, so the "
        f"trace has no posterior draws of them and the replicates ignore where the data put the clusters; {instead}",
        UserWarning,
        stacklevel=2,
    )
