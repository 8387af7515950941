r"""Choosing the coarsening ``c`` without labels (Miller & Dunson 2019, Sec. 4.3).

The c-posterior (``coarsening=c`` on an observation model) raises every
item's likelihood to :math:`\zeta = c / (c + n)`.  A small ``c`` lets the
posterior ignore departures of the data from the cluster model (fewer,
coarser clusters); a large ``c`` is the ordinary posterior, which under
misspecification keeps adding clusters.  Miller & Dunson choose ``c`` from the
curve of the posterior mean log-likelihood (their measure of fit) against
``c``: it rises steeply while more clusters capture real structure, then
levels off when they only model the departures; the chosen ``c`` is at the
*elbow*.  :func:`calibrate_coarsening` runs short chains for a grid of ``c``,
records that curve and the number of clusters, and picks the elbow by the
rule stated in its docstring.  It never sees class labels.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import arviz as az
import numpy as np
import pymc as pm

from pymc_partitions import families
from pymc_partitions._dispatch import RELATIONAL
from pymc_partitions._validation import check_axes, check_idata, check_random_seed, coarsening_power
from pymc_partitions.distributions.coarsened import CoarsenedRV
from pymc_partitions.distributions.discovery import partition_variables, read_observed, read_problem
from pymc_partitions.distributions.mixtures import PartitionMixtureRV
from pymc_partitions.distributions.observed import model_observed_rvs
from pymc_partitions.summary._idata import group, variable
from pymc_partitions.summary.predictive import (
    _observation_model, choose_draws, item_statistics, posterior_values, predictive_model,
)

__all__ = ["calibrate_coarsening", "CoarseningCalibration", "expected_log_likelihood", "elbow"]

SAMPLE_DEFAULTS = {"draws": 300, "tune": 300, "chains": 2, "cores": 1, "progressbar": False, "compute_convergence_checks": False}
"""``pm.sample`` keywords of :func:`calibrate_coarsening` unless given: short runs (a curve, not a final fit)."""
GRID_POINTS = 8
"""Values of ``c`` in the default grid."""
ELBOW_MIN_GAP = 1e-6
"""A point is an elbow only if it lies this far above the chord (rescaled units): rounding is no elbow."""
FIT_DRAWS = 100
"""Posterior draws per value of ``c`` at which the log-likelihood is evaluated (:func:`expected_log_likelihood`)."""


def expected_log_likelihood(idata, model, *, var_name=None, n_draws=FIT_DRAWS, coarsened_parameters=True, random_seed=None):
    r"""Posterior draws of the ordinary log-likelihood :math:`\log p(X \mid \theta, z) = \sum_i \log p(x_i \mid \theta_{z_i})`.

    Miller & Dunson's measure of fit, under whatever posterior ``idata`` holds
    (ordinary or coarsened).  The conjugate models integrate :math:`\theta`
    out, so for each of ``n_draws`` posterior draws :math:`(z, \eta)` every
    cluster's parameters are drawn from their conditional
    :math:`p_\zeta(\theta_k \mid X, z, \eta)` -- the model's, coarsened if it
    is (``families.draw_params``), or with ``coarsened_parameters=False`` the
    ordinary one (``zeta = 1``: the fit of the posterior's *partitions*, not
    widened by the coarsening's broader parameters) -- and the items' log
    densities are those of the ordinary likelihood; ``NormalMixture`` reads
    ``mu`` and ``tau`` from the trace; for a network
    (``InfiniteRelationalModel``) every block pair's edge probability is
    drawn from its Beta conditional and the log-likelihood is that of the
    vertex pairs, :math:`\sum_{k \le l} N^+_{kl} \log \theta_{kl} + N^-_{kl} \log (1 - \theta_{kl})`
    (``families.infinite_relational``); a component model
    written in PyMC (README, "Your own cluster model"), whose log-likelihood
    is PyMC's own (``pm.compute_log_likelihood``) summed over the items and
    its observed variables (``var_name``: one of them), each
    :class:`~pymc_partitions.Coarsened` one divided by its ``zeta``.
    Returns a float64 array of ``n_draws`` values.

    Examples
    --------
    >>> import arviz as az, numpy as np, pymc as pm
    >>> import pymc_partitions as pmp
    >>> from pymc_partitions.calibration import expected_log_likelihood
    >>> X = np.array([[0.0], [0.2], [5.0], [5.3]])
    >>> with pm.Model() as model:
    ...     z = pmp.DirichletProcessPartition("z", alpha=1.0, n=4)
    ...     x = pmp.NormalGammaMixture("x", partition=z, mu0=2.5, kappa0=0.01, a0=5.0, b0=0.1, observed=X)
    >>> together = az.from_dict(posterior={"z": np.zeros((1, 50, 4), dtype=int)})
    >>> apart = az.from_dict(posterior={"z": np.array([[[0, 0, 1, 1]] * 50])})
    >>> fit = [expected_log_likelihood(i, model, n_draws=50, random_seed=0).mean() for i in (together, apart)]
    >>> bool(fit[1] > fit[0])
    True
    """
    rng = check_random_seed("random_seed", random_seed)
    component = _component_model(model, var_name)
    return _expected_log_likelihood(idata, model, component, var_name, n_draws, coarsened_parameters, rng)


def _expected_log_likelihood(idata, model, component, var_name, n_draws, coarsened_parameters, rng):
    """:func:`expected_log_likelihood` given the model's component model (``None``: a package observation model)."""
    purpose = "expected_log_likelihood"
    if component is not None:
        return _component_log_likelihood(idata, model, component, var_name, n_draws, rng)
    predictive = predictive_model(model, var_name, purpose, relational=True)
    problem = predictive.problem
    values, available = posterior_values(idata, predictive, purpose)
    draws = choose_draws(min(n_draws, available), available, rng, n_draws)
    out = np.empty(len(draws))
    if problem.family == families.INFINITE_RELATIONAL:
        power = problem.zeta if coarsened_parameters else 1.0
        for s, index in enumerate(draws):
            partition, (a, b), _ = predictive.parameters(values, index)
            out[s] = _network_log_likelihood(predictive.data, partition, float(a), float(b), power, rng)
        return out
    if problem.family == families.NORMAL:
        x = predictive.data
        for s, index in enumerate(draws):
            partition, _, (mu, tau) = predictive.parameters(values, index)
            mu, tau = np.asarray(mu)[partition], np.asarray(tau)[partition]
            out[s] = np.sum(0.5 * np.log(tau / (2 * np.pi)) - 0.5 * tau * (x - mu) ** 2)
        return out
    stats = item_statistics(problem.family, problem.data)
    for s, index in enumerate(draws):
        partition, hyper, _ = predictive.parameters(values, index)
        coarsened = families.shift_params(
            problem.family, families.pack_params(problem.family, problem.d, *hyper, zeta=problem.zeta), problem.origin
        )
        ordinary = coarsened.copy()
        ordinary[-1] = 1.0
        if not coarsened_parameters:
            coarsened = ordinary
        out[s] = _log_likelihood(problem.family, partition, coarsened, ordinary, problem.data, stats, rng)
    return out


def _component_model(model, var_name):
    """The :class:`~pymc_partitions.distributions.components.ComponentModel` of ``model``'s partition when its
    likelihood is written in plain PyMC (``var_name``, if given, one of its observed variables); ``None`` when an
    observation model of the package takes the partition, or when the model has none or several partitions (the
    package's path then says what is missing)."""
    if model is None:
        try:
            model = pm.modelcontext(None)
        except TypeError:
            return None  # predictive_model says what is missing
    if not isinstance(model, pm.Model):
        return None
    if any(isinstance(getattr(rv.owner, "op", None), PartitionMixtureRV) for rv in model_observed_rvs(model)):
        return None
    if len(partition_variables(model)) != 1:
        return None
    component = read_problem(model).component
    names = [obs.name for obs in component.observed]
    if var_name is not None and var_name not in names:
        raise ValueError(f"var_name {var_name!r} is not an observed variable of the partition's likelihood; those are {names}")
    return component


def _component_observed(component, var_name):
    """The component model's observed variables the fit sums over: all, or ``var_name``."""
    return [obs for obs in component.observed if var_name is None or obs.name == var_name]


def _component_zeta(model, component, var_name):
    """The power ``zeta = c / (c + n)`` of the observed variables (1 for one not wrapped in ``Coarsened``); they must
    share it."""
    n = int(component.partition.type.shape[0])  # every observed variable has one entry per item
    powers = {}
    for obs in _component_observed(component, var_name):
        c = float(obs.owner.inputs[1].data) if isinstance(obs.owner.op, CoarsenedRV) else np.inf
        powers[obs.name] = 1.0 if np.isinf(c) else float(coarsening_power(c, n))
    if len(set(powers.values())) > 1:
        raise ValueError(
            f"the observed variables {sorted(powers)} are coarsened with different powers zeta {powers}: give each "
            "pmp.Coarsened(..., coarsening=c) with the same c, or choose one with var_name="
        )
    return powers


def _component_log_likelihood(idata, model, component, var_name, n_draws, rng):
    """:func:`expected_log_likelihood` of a component model: PyMC's log-likelihood at ``n_draws`` posterior draws."""
    posterior = group(check_idata(idata), "posterior")
    if posterior is None:
        raise ValueError("expected_log_likelihood needs a 'posterior' group (the result of pm.sample); idata has none")
    pooled = posterior.stack(sample=("chain", "draw"))
    draws = choose_draws(min(n_draws, pooled.sizes["sample"]), pooled.sizes["sample"], rng, n_draws)
    chosen = pooled.isel(sample=draws).drop_vars(["sample", "chain", "draw"]).rename(sample="draw")
    chosen = chosen.assign_coords(draw=np.arange(len(draws))).expand_dims(chain=[0]).transpose("chain", "draw", ...)
    powers = _component_zeta(model, component, var_name)
    log_likelihood = pm.compute_log_likelihood(
        az.InferenceData(posterior=chosen), var_names=list(powers), model=model, extend_inferencedata=False,
        progressbar=False,
    )
    if isinstance(log_likelihood, az.InferenceData):  # the group itself in newer PyMC versions
        log_likelihood = log_likelihood["log_likelihood"]
    out = np.zeros(len(draws))
    for name, zeta in powers.items():
        values = log_likelihood[name]
        out += values.sum(dim=[d for d in values.dims if d not in ("chain", "draw")]).values[0] / zeta
    return out


def _network_log_likelihood(adjacency, partition, a, b, power, rng):
    r"""``Σ_{k≤l} N+_kl log θ_kl + N-_kl log(1 − θ_kl)`` with ``θ_kl ~ Beta(a + power N+_kl, b + power N-_kl)``:
    edges ``N+`` and non-edges ``N-`` among the vertex pairs of blocks ``k`` and ``l`` (each pair once)."""
    _, labels = np.unique(partition, return_inverse=True)
    member = np.eye(labels.max() + 1)[labels.reshape(-1)]  # (n, K) one-hot
    sizes = member.sum(axis=0)
    edges = member.T @ adjacency @ member  # between blocks each pair once; within, twice
    pairs = np.outer(sizes, sizes)
    edges[np.diag_indices_from(edges)] /= 2.0
    pairs[np.diag_indices_from(pairs)] = sizes * (sizes - 1) / 2.0
    upper = np.triu_indices(len(sizes))
    present, absent = edges[upper], pairs[upper] - edges[upper]
    theta = rng.beta(a + power * present, b + power * absent)
    return float(np.sum(present * np.log(theta) + absent * np.log1p(-theta)))


def _log_likelihood(family, partition, coarsened, ordinary, data, stats, rng):
    """``Σ_i log p(x_i | θ_{z_i})`` with ``θ_k ~ p_ζ(θ | T_k)`` (``coarsened`` params) and ``ordinary`` densities."""
    _, labels = np.unique(partition, return_inverse=True)
    labels = labels.reshape(-1)
    order = np.argsort(labels, kind="stable")
    bounds = np.searchsorted(labels[order], np.arange(labels.max() + 2))
    theta = np.empty((1, families.param_size(family, data.shape[1])))
    total = 0.0
    for k in range(labels.max() + 1):
        members = order[bounds[k] : bounds[k + 1]]
        families.draw_params(family, stats[members].sum(axis=0), coarsened, rng, theta[0])
        block = np.empty((len(members), 1))
        families.log_densities(family, theta, np.ascontiguousarray(data[members]), ordinary, block)
        total += block.sum()
    return total


def elbow(values, fit):
    """The elbow of the curve ``fit`` against ``log c`` (Kneedle, Satopää et al. 2011): the index of the largest
    gap above the chord.

    With ``u = (log c − log c_min) / (log c_max − log c_min)`` and
    ``v = (fit − fit(c_min)) / (fit(c_max) − fit(c_min))`` (both 0 at the
    smallest ``c`` and 1 at the largest), the elbow maximises ``v − u``: the
    point after which the fit gains least per unit of ``log c``.  If no point
    lies above the chord (by more than :data:`ELBOW_MIN_GAP`) (``v ≤ u`` everywhere: the fit rises at least as fast
    at large ``c``, no elbow) or the fit does not rise, the largest ``c``.
    """
    order = np.argsort(values)
    u = np.log(np.asarray(values, dtype=float)[order])
    v = np.asarray(fit, dtype=float)[order]
    if len(u) < 3 or v[-1] <= v[0]:
        return int(order[-1])
    gap = (v - v[0]) / (v[-1] - v[0]) - (u - u[0]) / (u[-1] - u[0])
    best = int(np.argmax(gap))
    return int(order[best] if gap[best] > ELBOW_MIN_GAP else order[-1])


@dataclass
class CoarseningCalibration:
    """The result of :func:`calibrate_coarsening`.

    value : float          the chosen ``c`` (the elbow, :func:`elbow`)
    table : DataFrame      one row per ``c`` (increasing): ``c``, ``zeta``, ``fit`` (posterior mean log-likelihood),
                           ``fit_se`` (its Monte-Carlo standard error), ``n_clusters`` (posterior mean K),
                           ``n_clusters_5``/``n_clusters_95`` (its 5 % and 95 % quantiles), ``seconds`` (sampling)
    idata : dict           ``c -> InferenceData`` of each run
    models : dict          ``c -> pm.Model``
    """

    value: float
    table: object
    idata: dict = field(repr=False)
    models: dict = field(repr=False)

    def plot(self, ax=None):
        """The calibration curve: the fit against ``c`` (log axis), K on a second axis, the chosen ``c`` marked.

        Returns the axes of the fit (the K axis is ``ax.twin``).
        """
        import matplotlib.pyplot as plt  # optional: plots only

        ax = plt.gca() if ax is None else check_axes("ax", ax)[0]
        table = self.table
        ax.errorbar(table["c"], table["fit"], yerr=table["fit_se"], marker="o", color="C0", label="posterior mean log-likelihood")
        ax.set_xscale("log")
        ax.set_xlabel("coarsening c")
        ax.set_ylabel("posterior mean log-likelihood", color="C0")
        ax.axvline(self.value, color="0.4", linestyle="--", label=f"chosen c = {self.value:.3g}")
        twin = ax.twinx()
        twin.plot(table["c"], table["n_clusters"], marker="s", color="C1")
        twin.fill_between(table["c"], table["n_clusters_5"], table["n_clusters_95"], color="C1", alpha=0.2)
        twin.set_ylabel("clusters K (mean, 90 % interval)", color="C1")
        ax.twin = twin
        ax.legend(loc="lower right")
        return ax


def calibrate_coarsening(build_model, values=None, *, step=None, var_name=None, random_seed=None, **sample_kwargs):
    r"""Choose the coarsening ``c`` of a partition model by Miller & Dunson's calibration, without labels.

    For each ``c`` in ``values`` it builds ``build_model(c)``, samples it
    briefly (``pm.sample`` with :data:`SAMPLE_DEFAULTS` unless given), and
    records the posterior mean of the ordinary log-likelihood
    :math:`\log p(X \mid \theta, z)` (:func:`expected_log_likelihood`, the
    fit: Miller & Dunson's measure, with each cluster's :math:`\theta` drawn
    from its ordinary conditional given the cluster's items, so that the
    curve measures how well the c-posterior's partitions fit rather than how
    much the coarsening widens :math:`\theta`; on small data sets that
    widening alone bends the curve at a tiny ``c``) and of the number of
    clusters ``K``.  The fit rises with ``c`` as the
    posterior uses more clusters; the chosen ``c`` is the *elbow* of the fit
    against :math:`\log c`: with both rescaled to [0, 1] between the
    smallest and the largest ``c``, the ``c`` whose fit lies furthest above
    the straight line between those two (:func:`elbow`; the largest ``c``
    when there is no elbow).  The numba kernels are compiled once for all
    values (``c`` is a run-time value); each value compiles its model's
    PyTensor functions.

    Parameters
    ----------
    build_model : callable
        ``build_model(c) -> pm.Model`` whose observation model has ``coarsening=c``,
        or whose likelihood written in PyMC is ``pmp.Coarsened(..., coarsening=c)``
        (a component model: the fit is PyMC's log-likelihood at the trace's
        cluster parameters, :func:`expected_log_likelihood`); ``c=None`` must
        give the ordinary model: it is called once with ``None`` to read ``n``
        when ``values`` is not given.
    values : sequence of float, optional
        The values of ``c`` (> 0).  Default: :data:`GRID_POINTS` values
        log-spaced from 10 to ``10 n`` (``zeta`` from ``10/(10 + n)`` to 0.91).
    step : callable, optional
        ``step(model) -> step method(s)`` for each model (default: ``pm.sample``'s
        assignment, ``GibbsStep`` on the partition).
    var_name : str, optional
        The observation model, if the model has several.
    random_seed : int, optional
        Seeds every run (the same seed for each ``c``).
    **sample_kwargs
        Passed to ``pm.sample``.

    Returns
    -------
    CoarseningCalibration
        ``.value`` (the chosen ``c``), ``.table`` (one row per ``c``), ``.plot(ax=None)``,
        and each run's ``idata`` and model.

    Examples
    --------
    >>> import numpy as np, pymc as pm
    >>> import pymc_partitions as pmp
    >>> X = np.random.default_rng(0).normal([[0.0], [4.0]] * 20, 1.0)  # 40 items, two groups
    >>> def build(c):
    ...     with pm.Model() as model:
    ...         z = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(X))
    ...         pmp.NormalGammaMixture("x", partition=z, observed=X, coarsening=c,
    ...                                **pmp.NormalGammaMixture.default_hyperparameters(X))
    ...     return model
    >>> result = pmp.calibrate_coarsening(build, values=[2.0, 20.0, 200.0], draws=100, tune=100, random_seed=1)
    >>> list(result.table.columns[:5])
    ['c', 'zeta', 'fit', 'fit_se', 'n_clusters']
    >>> result.value in (2.0, 20.0, 200.0)
    True
    """
    import pandas as pd  # the result's table; pandas comes with ArviZ

    if not callable(build_model):
        raise TypeError(f"build_model must be a callable c -> pm.Model, got {type(build_model).__name__}")
    if step is not None and not callable(step):
        raise TypeError(f"step must be None or a callable model -> step method(s), got {type(step).__name__}")
    seed = None if random_seed is None else int(check_random_seed("random_seed", random_seed).integers(2**31))
    if values is None:
        n = _n_observations(_checked_model(build_model, None), var_name)
        values = np.geomspace(10.0, 10.0 * n, GRID_POINTS)
    values = _check_values(values)
    kwargs = {**SAMPLE_DEFAULTS, **sample_kwargs}
    rows, idatas, models = [], {}, {}
    for c in values:
        model = _checked_model(build_model, c)
        with model:
            start = time.perf_counter()
            idata = pm.sample(step=None if step is None else step(model), random_seed=seed, **kwargs)
            seconds = time.perf_counter() - start
        component = _component_model(model, var_name)  # found once per model: discovery compiles a check
        fit = _expected_log_likelihood(
            idata, model, component, var_name, FIT_DRAWS, False, check_random_seed("random_seed", seed)
        )
        k = _n_clusters(idata)
        zeta = _zeta(model, component, var_name)
        rows.append({
            "c": c, "zeta": zeta, "fit": fit.mean(), "fit_se": fit.std(ddof=1) / np.sqrt(len(fit)) if len(fit) > 1 else 0.0,
            "n_clusters": k.mean(), "n_clusters_5": np.quantile(k, 0.05), "n_clusters_95": np.quantile(k, 0.95),
            "seconds": seconds,
        })
        idatas[c], models[c] = idata, model
    table = pd.DataFrame(rows)
    chosen = float(table["c"].iloc[elbow(table["c"].to_numpy(), table["fit"].to_numpy())])
    return CoarseningCalibration(chosen, table, idatas, models)


def _check_values(values):
    array = np.asarray(values, dtype=float).ravel() if not isinstance(values, str) else None
    if array is None or array.size == 0 or not np.all(np.isfinite(array)) or np.any(array <= 0):
        raise ValueError(f"values must be a non-empty sequence of finite numbers c > 0, got {values!r}")
    if len(np.unique(array)) != array.size:
        raise ValueError(f"values must be distinct, got {values!r}")
    return [float(v) for v in np.sort(array)]


def _checked_model(build_model, c):
    model = build_model(c)
    if not isinstance(model, pm.Model):
        raise TypeError(f"build_model({c!r}) must return a pm.Model, got {type(model).__name__}")
    return model


def _problem(model, var_name):
    """The problem (``distributions.discovery``) of the partition that the observation model ``var_name`` takes."""
    return read_observed(model, _observation_model(model, var_name, PartitionMixtureRV))


def _n_observations(model, var_name):
    """The number of observations ``coarsening`` weighs: the items, or the vertex pairs of a network."""
    component = _component_model(model, var_name)
    if component is not None:
        return int(component.partition.type.shape[0])
    problem = _problem(model, var_name)
    return problem.n * (problem.n - 1) // 2 if problem.kind == RELATIONAL else problem.n


def _zeta(model, component, var_name):
    if component is not None:
        return next(iter(_component_zeta(model, component, var_name).values()))
    return _problem(model, var_name).zeta


def _n_clusters(idata):
    """Every draw's number of clusters (the partition steps' ``partition_n_clusters`` sample stat), chains pooled."""
    stats = group(idata, "sample_stats")
    values = None if stats is None else variable(stats, "partition_n_clusters")
    if values is None:
        raise ValueError("calibrate_coarsening needs the partition steps' sample stat partition_n_clusters in idata")
    array = np.asarray(values.values, dtype=float)
    return array[np.isfinite(array)].ravel()
