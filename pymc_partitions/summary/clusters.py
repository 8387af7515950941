"""The parameters of the clusters of a point partition, from the draws of a component model's rows.

A component model (``distributions.components``) and a ``NormalMixture``
record their cluster parameters as rows: in every draw row ``k`` belongs to the cluster labelled
``k``, in order of first appearance, so the same row holds different clusters
in different draws and a raw row's summary mixes them.  :func:`cluster_parameters`
matches each cluster ``C`` of a point partition ``z_hat`` to the row of each
draw that holds most of its items,

.. math::

    k_s(C) = \\arg\\max_k \\#\\{i \\in C : z^{(s)}_i = k\\},

and returns the parameters of those rows: draws of "the parameters of cluster
``C``", which ArviZ summarises with intervals, ESS and R-hat like any other
variable: ``az.summary(pmp.cluster_parameters(idata, model=model))`` lists
the occupied clusters only, one row per cluster of the point estimate, where
``az.summary(idata)`` would list all ``K_max`` raw rows (the unused ones
draws from the prior, the others switching clusters between draws).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from pymc_partitions._validation import as_label_array, check_var_name
from pymc_partitions.distributions.discovery import read_problem
from pymc_partitions.summary._idata import group, variable
from pymc_partitions.summary.point import point_partition

__all__ = ["cluster_parameters"]


def cluster_parameters(idata, z_hat=None, var_names=None, model=None, var_name="z"):
    """Posterior draws of the parameters of each cluster of the point partition ``z_hat`` (module docstring).

    Parameters
    ----------
    idata : InferenceData or DataTree
        A posterior holding the partition ``var_name`` and the cluster parameter rows.
    z_hat : array of n labels, optional
        The point partition (default: :func:`~pymc_partitions.point_partition` of ``idata``, PEAR).
    var_names : list of str, optional
        The row variables to match (default: every posterior variable whose first dimension after
        ``chain`` and ``draw`` has ``K_max`` rows, ``K_max`` read from the cluster rows of ``model``: its component
        model or ``NormalMixture``).
    model : pm.Model, optional
        The model, to find its row variables when ``var_names`` is not given (default: the model in context).
    var_name : str, default "z"

    Returns
    -------
    xarray.Dataset
        For each variable, draws of shape ``(chain, draw, cluster, ...)``: ``[..., c, ...]`` are the parameters of
        cluster ``c`` of ``z_hat`` (canonical labels); the coordinate ``cluster_size`` gives its size.

    Examples
    --------
    >>> import numpy as np, pymc as pm, pymc_partitions as pmp
    >>> counts = np.r_[np.zeros(10, int), np.full(10, 20)]
    >>> with pm.Model() as model:
    ...     z = pmp.DirichletProcessPartition("z", alpha=1.0, n=20)
    ...     lam = pm.LogNormal("lam", 1.0, 2.0, shape=5)
    ...     y = pm.Poisson("y", lam[z], observed=counts)
    ...     idata = pm.sample(draws=200, tune=200, chains=2, progressbar=False, random_seed=1,
    ...                       compute_convergence_checks=False)
    ...     rates = pmp.cluster_parameters(idata, np.r_[np.zeros(10, int), np.ones(10, int)])
    >>> [round(float(v)) for v in rates["lam"].mean(("chain", "draw"))]  # the two groups' rates
    [0, 20]
    """
    check_var_name(var_name)
    posterior = group(idata, "posterior")
    z = variable(posterior, var_name)
    if z is None:
        raise ValueError(f"cluster_parameters needs the posterior draws of the partition '{var_name}' (keep it in the trace)")
    if z_hat is None:
        z_hat = point_partition(idata, var_name=var_name)
    z_hat = as_label_array("z_hat", z_hat)
    if z_hat.shape != (z.shape[-1],):
        raise ValueError(f"z_hat must hold one label per item ({z.shape[-1]}), got shape {z_hat.shape}")
    names = _row_variables(posterior, var_name, var_names, model)
    chains, draws, n = z.shape
    labels = np.asarray(z.values, dtype=np.int64).reshape(-1, n)
    _, clusters = np.unique(z_hat, return_inverse=True)
    k_hat = clusters.max() + 1
    rows = max(int(posterior[name].shape[2]) for name in names)
    overlap = np.zeros((labels.shape[0], k_hat, rows), dtype=np.int64)
    draw_index = np.repeat(np.arange(labels.shape[0]), n)
    np.add.at(overlap, (draw_index, np.tile(clusters, labels.shape[0]), labels.ravel()), 1)
    matched = overlap.argmax(axis=2)  # (draws, clusters)
    out = {}
    for name in names:
        values = np.asarray(posterior[name].values)
        flat = values.reshape(chains * draws, *values.shape[2:])
        picked = np.take_along_axis(flat, matched.reshape(matched.shape + (1,) * (flat.ndim - 2)), axis=1)
        dims = ("chain", "draw", "cluster", *posterior[name].dims[3:])
        out[name] = (dims, picked.reshape(chains, draws, *picked.shape[1:]))
    coords = {"chain": posterior["chain"].values, "draw": posterior["draw"].values, "cluster": np.arange(k_hat)}
    data = xr.Dataset(out, coords=coords)
    return data.assign_coords(cluster_size=("cluster", np.bincount(clusters)))


def _row_variables(posterior, var_name, var_names, model):
    """The names of the row variables to match: ``var_names`` checked, or those of the model's component model."""
    if var_names is not None:
        names = [var_names] if isinstance(var_names, str) else list(var_names)
        missing = [name for name in names if variable(posterior, name) is None]
        if missing:
            raise ValueError(f"var_names {missing} are not in the posterior")
        if any(posterior[name].ndim < 3 for name in names):
            raise ValueError(f"var_names must be cluster parameter rows (a dimension after chain and draw), got {names}")
        return names
    try:
        problem = read_problem(model, var_name)
    except TypeError:
        raise ValueError(
            "cluster_parameters needs the model to find its cluster parameter rows: pass model=model (or call it "
            "inside `with model:`), or var_names=[...]"
        ) from None
    rows = problem.rows
    if rows is None:
        raise ValueError(
            "cluster_parameters summarises cluster parameter rows (a component model written in PyMC, beta[z]-style, "
            "or NormalMixture); this model integrates its cluster parameters out (see pmp.posterior_predictive), or pass var_names"
        )
    names = [
        name for name in posterior.data_vars
        if name != var_name and posterior[name].ndim >= 3 and posterior[name].shape[2] == rows.k_max
    ]
    if not names:
        raise ValueError(f"the posterior holds no variable with {rows.k_max} rows (the model's cluster parameters)")
    return names
