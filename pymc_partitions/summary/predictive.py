r"""Posterior predictive draws of a partition model's data: replicated data sets for model checks.

A replicated data set is a draw from the posterior predictive distribution

.. math::

    p(X^{\mathrm{rep}} \mid X) = \int p(X^{\mathrm{rep}} \mid z, \theta)\,
        p(\theta \mid X, z, \eta)\, p(z, \eta \mid X)\; d\theta\, dz\, d\eta,

with the same items in the same clusters as the observed data ``X``.  The
conjugate observation models (:mod:`~pymc_partitions.distributions.mixtures`)
integrate the cluster parameters :math:`\theta` out, so the trace holds the
partition ``z`` and the hyperparameters :math:`\eta` but no :math:`\theta`.
For each chosen posterior draw :math:`(z, \eta)` a replicate is drawn in three
steps:

1. the sufficient statistics :math:`T_k` of each cluster's observed items;
2. :math:`\theta_k \sim p(\theta \mid T_k, \eta)` for every cluster, the
   conjugate posterior (``families.draw_params``, the draws of the hybrid sampler);
3. :math:`x^{\mathrm{rep}}_i \sim p(x \mid \theta_{z_i})` for every item
   (``families.draw_data``).

For :class:`~pymc_partitions.NormalMixture` the cluster parameters ``mu`` and
``tau`` are in the trace: step 3 alone, with their posterior draws.

``pm.sample_posterior_predictive`` does not do this for the conjugate models:
their forward draw (the op's ``rng_fn``) draws every cluster's parameters from
the *prior* :math:`p(\theta \mid \eta)` -- new clusters that ignore the data,
which is no check of the fit.

The model is read once (``distributions.discovery.read_problem``, shared
with the steps): the data in the kernels' coordinates, and the
hyperparameters evaluated at each posterior draw
(``Hyperparameters.at_draw``); the partition and ``NormalMixture``'s cluster
parameters are posterior variables themselves.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pymc as pm

from pymc_partitions import families
from pymc_partitions._dispatch import ADDITIVE, PARAMETRIC, RELATIONAL
from pymc_partitions._jit import announced
from pymc_partitions._validation import check_idata, check_item_indices, check_positive_int, check_random_seed, constant_value
from pymc_partitions.distributions.discovery import read_observed
from pymc_partitions.distributions.mixtures import PartitionMixtureRV
from pymc_partitions.distributions.observed import model_observed_rvs
from pymc_partitions.summary._idata import group, set_group, variable

__all__ = ["posterior_predictive"]

DEFAULT_DRAWS = 100
"""Replicated data sets drawn by :func:`posterior_predictive` when ``n_draws`` is not given (fewer if the posterior has fewer draws)."""

DISCRETE_FAMILIES = tuple(code for code in range(len(families.SPECS)) if families.integer_data(code))
"""Families whose data are integers (0/1, counts, category codes; their specs' data kinds): their checks compare
frequencies, not densities."""


class PredictiveModel(NamedTuple):
    """An observation model ready for posterior predictive draws (:func:`predictive_model`).

    Attributes
    ----------
    name : str
        The observed variable.
    problem : distributions.discovery.Problem
        The model read once (its family, data in the kernels' coordinates, hyperparameter graphs, zeta).
    inputs : tuple of str
        The posterior variables a draw's parameters are read from, in order: the partition (unless its labels are
        a constant), the hyperparameters' free random variables (``problem.hyperparameters.draw_inputs``), then
        ``NormalMixture``'s ``mu`` and ``tau``.
    input_shapes : tuple of tuple
        The shape of one draw of each input (``None`` entries: not fixed).
    """

    name: str
    problem: object
    inputs: tuple
    input_shapes: tuple

    @property
    def family(self):
        return self.problem.family

    @property
    def data(self):
        """The observed data, ``(n, d)``."""
        return self.problem.observed

    def parameters(self, values, index):
        """``(partition, family_values, rows)`` at posterior draw ``index`` of ``values`` (:func:`posterior_values`):
        the labels, the family's kernel hyperparameters (``pack_params`` order) and the cluster rows (``mu``,
        ``tau`` of ``NormalMixture``; empty otherwise)."""
        problem = self.problem
        draw = [value[index] for value in values]
        if problem.value_var is None:  # labels given as a constant
            draw.insert(0, constant_value(problem.partition))
        n_hyper = len(problem.hyperparameters.draw_inputs)
        _, family_values = problem.hyperparameters.at_draw(draw[1 : 1 + n_hyper])
        return np.asarray(draw[0]), family_values, draw[1 + n_hyper :]


def predictive_model(model, var_name, purpose, *, relational=False):
    """The observation model ``var_name`` of ``model`` (default: its only one), read (``distributions.discovery``).

    ``model=None`` is the model in context.  ``purpose`` (the caller) goes
    into the errors; ``relational=True`` accepts the Infinite Relational
    Model too (its parameters only: it has no posterior predictive draws here).
    """
    if model is None:
        try:
            model = pm.modelcontext(None)
        except TypeError as err:
            raise TypeError(f"{purpose} needs the model: pass model= or call it inside `with model:`") from err
    elif not isinstance(model, pm.Model):
        raise TypeError(f"model must be a pm.Model or None (the model in context), got {type(model).__name__}")
    rv = _observation_model(model, var_name, PartitionMixtureRV)
    op = rv.owner.op
    kind = families.tag(op.family).kind
    supported = kind == PARAMETRIC or (kind == ADDITIVE and _draws_data(op.family)) or (relational and kind == RELATIONAL)
    if not supported:
        raise TypeError(
            f"var_name {rv.name!r} is an observation model of type {op._print_name[0]}: "
            f"{purpose} supports the mixtures of items x features data "
            "(BetaBernoulliMixture, NormalGammaMixture, NormalInverseWishartMixture, DirichletMultinomialMixture, "
            "GammaPoissonMixture, CategoricalMixture, NormalMixture)"
            + ("; for a network use plots.plot_adjacency" if op.family == families.INFINITE_RELATIONAL else "")
        )
    problem = read_observed(model, rv)
    hyperparameters = problem.hyperparameters
    rows = [] if problem.rows is None else [model.values_to_rvs[v] for v in problem.rows.value_vars]
    labels = () if problem.value_var is None else (problem.partition,)
    inputs = (*(v.name for v in labels), *hyperparameters.draw_inputs, *(r.name for r in rows))
    shapes = (*(tuple(v.type.shape) for v in labels), *hyperparameters.draw_shapes, *(tuple(r.type.shape) for r in rows))
    return PredictiveModel(rv.name, problem, inputs, shapes)


def _draws_data(family):
    """Whether the additive family ``family`` has posterior predictive draws (``draw_data``)."""
    return hasattr(families.module_of(family), "draw_data")


def _observation_model(model, var_name, op_class):
    """The observed variable ``var_name`` of ``model`` whose op is ``op_class`` (default: the only one)."""
    candidates = [rv for rv in model_observed_rvs(model) if isinstance(getattr(rv.owner, "op", None), op_class)]
    names = [rv.name for rv in candidates]
    if var_name is None:
        if len(candidates) == 1:
            return candidates[0]
        if not candidates:
            raise ValueError("the model has no observation model of a partition (e.g. pmp.NormalGammaMixture(..., observed=X))")
        raise ValueError(f"the model has {len(candidates)} observation models {names}: choose one with var_name=")
    if not isinstance(var_name, str):
        raise TypeError(f"var_name must be None or a string (the observed variable's name), got {type(var_name).__name__}")
    if var_name in names:
        return candidates[names.index(var_name)]
    if var_name in model.named_vars and model.named_vars[var_name] in model.free_RVs:
        raise ValueError(
            f"var_name {var_name!r} is a free variable of the model; var_name names the observed variable "
            f"(the observation model: {names}), not the partition"
        )
    raise ValueError(f"var_name {var_name!r} is not an observation model of a partition in the model; those are {names}")


def posterior_values(idata, predictive, purpose):
    """The posterior draws of ``predictive.inputs``, chains pooled: a list of (chains * draws, ...) arrays.

    Every input must be in the posterior with the model's shape; the error
    names the missing or mismatched variable.
    """
    posterior = group(check_idata(idata), "posterior")
    if posterior is None:
        raise ValueError(f"{purpose} needs a 'posterior' group (the result of pm.sample); idata has none")
    values = []
    for name, shape in zip(predictive.inputs, predictive.input_shapes):
        value = variable(posterior, name)
        if value is None:
            raise ValueError(
                f"{purpose} needs the posterior draws of {name!r}, on which the observation model "
                f"{predictive.name!r} depends; keep it in the trace (pm.sample(var_names=...))"
            )
        array = np.asarray(value.values)
        draw_shape = array.shape[2:]
        fits = array.ndim >= 2 and len(draw_shape) == len(shape)
        if not fits or any(s is not None and s != t for s, t in zip(shape, draw_shape)):
            raise ValueError(
                f"posterior[{name!r}] has shape {array.shape} but the model's {name!r} has shape {shape} per draw "
                "(dims (chain, draw, ...)): idata does not come from this model"
            )
        values.append(array.reshape(-1, *draw_shape))
    # with no random input (fixed partition and hyperparameters) every draw gives the same parameters
    available = values[0].shape[0] if values else int(posterior.sizes.get("chain", 0) * posterior.sizes.get("draw", 0))
    if available == 0:
        raise ValueError(f"{purpose} needs at least one posterior draw; the posterior has none")
    return values, available


def item_statistics(family, data):
    """The additive statistics ``t(x_i)`` of every item: an (n, s) float64 array (one ``families.item_stats`` each)."""
    stats = np.zeros((data.shape[0], families.stat_size(family, data.shape[1])))
    for i in range(data.shape[0]):
        families.item_stats(family, data[i], stats[i])
    return stats


def draw_replicates(predictive, values, draws, items, rng):
    """Replicated data sets of the rows ``items``, one per posterior draw index in ``draws``: (len(draws), len(items), d).

    ``values`` are the posterior draws of ``predictive.inputs``
    (:func:`posterior_values`).  The conjugate families work relative to the
    kernels' origin (``families.origin``, the data's column means for the
    Normal families), as the samplers do, so that the cluster statistics
    keep their precision for data far from zero; the replicates are moved back.
    """
    problem = predictive.problem
    out = np.empty((len(draws), len(items), predictive.data.shape[1]))
    if problem.family == families.NORMAL:
        for s, index in enumerate(draws):
            partition, _, (mu, tau) = predictive.parameters(values, index)
            out[s] = _replicate_parametric(partition, mu, tau, items, rng)
        return out
    item_stats = item_statistics(problem.family, problem.data)
    for s, index in enumerate(draws):
        partition, hyper, _ = predictive.parameters(values, index)
        # θ from the posterior the model defines: the coarsened one under coarsening=c (zeta < 1)
        packed = families.pack_params(problem.family, problem.d, *hyper, zeta=problem.zeta)
        packed = families.shift_params(problem.family, packed, problem.origin)
        replicate = _replicate_conjugate(problem.family, partition, packed, problem.data, item_stats, items, rng)
        out[s] = replicate + problem.origin if problem.origin.any() else replicate  # only the Normal families move
    return out


def _replicate_parametric(partition, mu, tau, items, rng):
    """``NormalMixture``: x_rep_i ~ N(mu[z_i], 1/tau[z_i]) with the draw's cluster parameters (canonical labels index their rows)."""
    labels = partition[items]
    return rng.normal(np.asarray(mu, dtype=float)[labels], 1.0 / np.sqrt(np.asarray(tau, dtype=float)[labels]))


def _replicate_conjugate(family, partition, params, data, item_stats, items, rng):
    """θ_k ~ p(θ | T_k, params) for every cluster of ``partition``, then x_rep_i ~ p(x | θ_{z_i}) for the rows ``items``.

    ``data`` (n, d) and its ``item_stats`` (n, s) are in the coordinates of
    the packed ``params`` (module docstring).
    """
    _, labels = np.unique(partition, return_inverse=True)
    labels = labels.reshape(-1)
    cluster_stats = np.zeros((labels.max() + 1, item_stats.shape[1]))
    np.add.at(cluster_stats, labels, item_stats)
    theta = np.empty((cluster_stats.shape[0], families.param_size(family, data.shape[1])))
    for k in range(cluster_stats.shape[0]):
        families.draw_params(family, cluster_stats[k], params, rng, theta[k])
    return families.draw_data(family, theta, labels[items], data[items], params, rng)


def choose_draws(n_draws, available, rng, default):
    """Distinct posterior draw indices out of ``available``, at random, in increasing order.

    ``n_draws`` of them (validated by the caller), or for ``n_draws=None``
    ``default`` of them, all if there are fewer.
    """
    if n_draws is None:
        n_draws = min(default, available)
    elif n_draws > available:
        raise ValueError(f"n_draws must be at most the {available} posterior draws (chains x draws), got {n_draws}")
    return np.sort(rng.choice(available, size=n_draws, replace=False))


@announced("posterior_predictive")
def posterior_predictive(
    idata, model=None, *, var_name=None, n_draws=None, items=None, random_seed=None, extend_inferencedata=False
):
    r"""Replicated data sets drawn from the posterior predictive distribution of a partition model.

    For each of ``n_draws`` posterior draws :math:`(z, \eta)`, chosen at
    random without replacement (chains pooled), every cluster's parameters
    are drawn from their posterior given its observed items,
    :math:`\theta_k \sim p(\theta \mid \{x_i : z_i = k\}, \eta)`, and then
    every item from its cluster, :math:`x^{\mathrm{rep}}_i \sim p(x \mid
    \theta_{z_i})` (:mod:`pymc_partitions.summary.predictive`).  Each replicate
    has the observed data's items, clusters and shape; for the
    Dirichlet-multinomial also its row totals (the model conditions on them).
    For ``NormalMixture`` the posterior draws of ``mu`` and ``tau`` are used.

    Unlike ``pm.sample_posterior_predictive``, which draws the integrated-out
    cluster parameters of the conjugate models from their prior, this
    conditions them on the data: the replicates are what the fitted model
    says data like ``X`` look like.

    Parameters
    ----------
    idata : InferenceData or DataTree
        The result of ``pm.sample`` on ``model`` (its posterior must hold the
        partition and every random hyperparameter of the observation model).
    model : pm.Model, optional
        Default: the model in context.
    var_name : str, optional
        Name of the observed variable (the observation model), as in ArviZ's
        ``plot_ppc``; default: the model's only observation model of a partition.
    n_draws : int, optional
        Number of replicated data sets, at most the number of posterior draws
        (default: ``DEFAULT_DRAWS`` = 100, or every draw if there are fewer).
    items : sequence of int, optional
        Replicate these items only (default all); the cluster parameters are
        still drawn given all the items.
    random_seed : int, Generator or None
    extend_inferencedata : bool, default False
        Add the replicates to ``idata`` instead, in place, as PyMC's
        ``pm.sample_posterior_predictive(idata, extend_inferencedata=True)``
        does: one replicate per posterior draw, the group
        ``posterior_predictive`` with the variable ``var_name`` of dims
        ``(chain, draw, *dims of observed_data[var_name])`` (PyMC's
        ``f"{var_name}_dim_0"``, ``f"{var_name}_dim_1"`` if ``idata`` has no
        ``observed_data`` group, which is then added), so that
        ``az.plot_ppc(idata)`` compares them with the data.  Thin ``idata``
        first for fewer (``idata.sel(draw=slice(None, None, 10))``);
        ``n_draws`` and ``items`` must then be ``None``.

    Returns
    -------
    ndarray of float64, shape (n_draws, m, d)
        ``m`` items (``len(items)``, or ``n``) by ``d`` features per replicate;
        with ``extend_inferencedata``, ``idata`` itself.

    Examples
    --------
    >>> import arviz as az, numpy as np, pymc as pm
    >>> import pymc_partitions as pmp
    >>> X = np.array([[0.0], [0.2], [5.0], [5.3]])
    >>> with pm.Model() as model:
    ...     z = pmp.DirichletProcessPartition("z", alpha=1.0, n=4)
    ...     x = pmp.NormalGammaMixture("x", partition=z, mu0=2.5, kappa0=0.01, a0=5.0, b0=0.1, observed=X)
    >>> idata = az.from_dict(posterior={"z": np.array([[[0, 0, 1, 1]] * 200])})  # 1 chain, 200 draws
    >>> reps = pmp.posterior_predictive(idata, model, n_draws=200, random_seed=0)
    >>> reps.shape
    (200, 4, 1)
    >>> reps[:, :2].mean().round(1), reps[:, 2:].mean().round(1)  # near the clusters' means, 0.1 and 5.15
    (np.float64(0.1), np.float64(5.1))
    >>> idata = pmp.posterior_predictive(idata, model, extend_inferencedata=True, random_seed=0)
    >>> idata.posterior_predictive["x"].dims, idata.observed_data["x"].shape
    (('chain', 'draw', 'x_dim_0', 'x_dim_1'), (4, 1))
    """
    purpose = "posterior_predictive"
    check_idata(idata)
    if not isinstance(extend_inferencedata, (bool, np.bool_)):
        raise TypeError(f"extend_inferencedata must be True or False, got {extend_inferencedata!r}")
    if extend_inferencedata and (n_draws is not None or items is not None):
        raise ValueError(
            "extend_inferencedata=True replicates every item at every posterior draw (the layout of az.plot_ppc): "
            "leave n_draws and items at None, and thin idata first for fewer draws "
            "(idata.sel(draw=slice(None, None, 10)))"
        )
    if n_draws is not None:
        check_positive_int("n_draws", n_draws, "the number of replicated data sets")
    rng = check_random_seed("random_seed", random_seed)
    predictive = predictive_model(model, var_name, purpose)
    n = predictive.data.shape[0]
    chosen = np.arange(n) if items is None else check_item_indices("items", items, n, allow_empty=False)
    values, available = posterior_values(idata, predictive, purpose)
    if extend_inferencedata:
        return _extend(idata, predictive, draw_replicates(predictive, values, np.arange(available), chosen, rng))
    draws = choose_draws(n_draws, available, rng, DEFAULT_DRAWS)
    return draw_replicates(predictive, values, draws, chosen, rng)


def _extend(idata, predictive, replicates):
    """``idata`` with the group ``posterior_predictive`` holding ``replicates`` (one per posterior draw, in
    (chain, draw) order) in ArviZ's layout, and ``observed_data`` if it had none."""
    import xarray as xr

    posterior = group(idata, "posterior")
    name, data = predictive.name, predictive.data
    observed = variable(group(idata, "observed_data"), name)
    if observed is not None and tuple(observed.shape) == data.shape:
        dims = tuple(observed.dims)
    else:
        dims = (f"{name}_dim_0", f"{name}_dim_1")
        existing = group(idata, "observed_data")
        if existing is None:
            existing = xr.Dataset()
        elif hasattr(existing, "to_dataset"):  # a DataTree node
            existing = existing.to_dataset()
        set_group(idata, "observed_data", existing.assign({name: (dims, data)}))
    chains, draws = int(posterior.sizes["chain"]), int(posterior.sizes["draw"])
    coords = {"chain": posterior["chain"].values, "draw": posterior["draw"].values}
    values = replicates.reshape(chains, draws, *data.shape)
    set_group(idata, "posterior_predictive", xr.Dataset({name: (("chain", "draw", *dims), values)}, coords=coords))
    return idata
