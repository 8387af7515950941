"""The convergence check ``pm.sample`` runs after sampling, on the label-invariant quantities of a partition.

After sampling, ``pm.sample(compute_convergence_checks=True)`` (the default)
calls ``pymc.stats.convergence.run_convergence_checks(idata, model)``, which
computes R-hat and ESS of every free variable in the posterior.  Labels are
not identifiable (``docs/design.md`` §7.3): on the raw labels of ``z`` and on
the cluster parameter rows of a ``NormalMixture`` or a component model (row
``k`` holds whichever cluster is ``k``-th in order of first appearance, the
unused rows are draws from the prior) R-hat says nothing about convergence,
and a constant label (``z[0]`` is always 0) makes ArviZ divide 0 by 0.  PyMC
5.28 has no per-variable opt-out, so :func:`install` replaces the name
``run_convergence_checks`` that ``pymc.sampling.mcmc`` calls by
:func:`run_convergence_checks`, which

* for a model without a partition variable is PyMC's own check, unchanged;
* for a model with one runs PyMC's check on the other free variables (the
  hyperparameters: NUTS's divergences, R-hat and ESS as before), then checks
  the partition's label-invariant sample stats -- the number of clusters
  ``partition_n_clusters``, of large clusters ``partition_n_large_clusters``
  and the log joint ``partition_log_joint`` -- with PyMC's thresholds (R-hat
  above 1.01, bulk ESS below 100 per chain; a quantity constant over every
  draw of every chain has converged and is skipped);
* warns (``KMaxWarning``) when the number of clusters reached the rows'
  bound ``K_max`` in more than :data:`K_MAX_SHARE` of the draws: the model
  sampled is then a mixture of at most ``K_max`` clusters, not the
  Dirichlet-process-style mixture written, and only more rows fix it.
"""

from __future__ import annotations

import types
import warnings

import arviz as az
import numpy as np
import pymc.sampling.mcmc as pymc_mcmc
from pymc.stats.convergence import SamplerWarning, WarningType

from pymc_partitions.distributions.discovery import partition_variables, read_problem

__all__ = ["K_MAX_SHARE", "KMaxWarning", "install", "run_convergence_checks"]

K_MAX_SHARE = 0.01
"""Warn when the number of clusters equals ``K_max`` in more than this share of the draws."""

CHECKED_STATS = {
    "partition_n_clusters": "the number of clusters",
    "partition_n_large_clusters": "the number of large clusters",
    "partition_log_joint": "the log joint of the partition and the data",
}
"""The label-invariant sample stats checked, and how a message names them."""

_PYMC_CHECK = pymc_mcmc.run_convergence_checks
"""PyMC's own check, which :func:`run_convergence_checks` calls for everything but the partition."""


class KMaxWarning(UserWarning):
    """The number of clusters reached the cluster rows' bound ``K_max`` in more than a small share of the draws."""


def install():
    """Make ``pm.sample`` run :func:`run_convergence_checks` after sampling (idempotent; module docstring)."""
    pymc_mcmc.run_convergence_checks = run_convergence_checks


def run_convergence_checks(idata, model):
    """PyMC's convergence check with the partition variables and their rows left out and the partitions' label-
    invariant stats checked instead; warns :class:`KMaxWarning` when ``K_max`` binds (module docstring).

    Returns PyMC's ``SamplerWarning`` list, which ``pm.sample`` logs and keeps in its report.
    """
    partitions = partition_variables(model)
    if not partitions or not hasattr(idata, "posterior"):
        return _PYMC_CHECK(idata, model)
    problems = [read_problem(model, value) for value in partitions]
    hidden = set().union(*(_label_switching_names(problem) for problem in problems))
    others = [rv for rv in model.free_RVs if rv.name not in hidden]
    found = [rv for rv in others if rv.name in idata.posterior]
    result = []
    if found:
        view = types.SimpleNamespace(free_RVs=others, deterministics=model.deterministics)
        result += _PYMC_CHECK(idata, view)
    stats = getattr(idata, "sample_stats", None)
    if stats is None:
        return result
    for problem in problems:
        _warn_if_k_max_binds(problem, stats)
    chains, draws = idata.posterior.sizes["chain"], idata.posterior.sizes["draw"]
    if chains >= 2 and draws >= 100:
        result += _partition_warnings(stats, chains)
    return result


def _label_switching_names(problem):
    """The names of the posterior variables whose values are labels or rows by label: ``z`` and its rows."""
    rows = problem.rows
    value_names = set() if rows is None else set(rows.names)
    if problem.component is not None:
        value_names |= set(problem.component.row_names)
    model = problem.model
    row_names = {model.values_to_rvs[v].name for v in model.value_vars if v.name in value_names}
    return {problem.partition.name, *row_names}


def _partition_warnings(stats, chains):
    """R-hat and ESS warnings on :data:`CHECKED_STATS`, with PyMC's thresholds and kinds of message."""
    rhat, ess = {}, {}
    for name in CHECKED_STATS:
        if name not in stats:
            continue
        values = np.asarray(stats[name].values, dtype=np.float64)
        if values.ndim != 2 or np.ptp(values) == 0:
            continue
        with warnings.catch_warnings():  # chains each constant at different values: 0/0 in ArviZ
            warnings.simplefilter("ignore", RuntimeWarning)
            r, e = float(az.rhat(values)), float(az.ess(values, method="bulk"))
        rhat[name] = r if np.isfinite(r) else np.inf
        ess[name] = e if np.isfinite(e) else 0.0
    result = []
    high = {name: value for name, value in rhat.items() if value > 1.01}
    if high:
        described = ", ".join(f"{CHECKED_STATS[name]} ({value:.3f})" for name, value in high.items())
        result.append(SamplerWarning(
            WarningType.CONVERGENCE,
            f"The rhat statistic of the partition is larger than 1.01 for {described}: the chains disagree about "
            "the clustering. Run longer, or give the partition a step that moves whole clusters if its step does not "
            "(pmp.SplitMergeStep, pmp.SubClusterSplitMergeStep); pmp.summarize(idata) shows these diagnostics",
            "info",
            extra=high,
        ))
    low = {name: value for name, value in ess.items() if value / chains < 100}
    if low:
        described = ", ".join(f"{CHECKED_STATS[name]} ({value:.0f})" for name, value in low.items())
        result.append(SamplerWarning(
            WarningType.CONVERGENCE,
            f"The effective sample size of the partition is smaller than 100 per chain for {described}. A higher "
            "number is needed for reliable rhat and ess computation; pmp.summarize(idata) shows them",
            "error",
            extra=low,
        ))
    return result


def _warn_if_k_max_binds(problem, stats):
    """:class:`KMaxWarning` when ``partition_n_clusters`` equals the rows' ``K_max`` in more than
    :data:`K_MAX_SHARE` of the draws."""
    rows = problem.rows
    if rows is None or "partition_n_clusters" not in stats:
        return
    k = np.asarray(stats["partition_n_clusters"].values)
    bound = int(rows.k_max)
    share = float(np.mean(k >= bound))
    if share <= K_MAX_SHARE:
        return
    rows_of = ", ".join(repr(name) for name in sorted(_label_switching_names(problem) - {problem.partition.name}))
    warnings.warn(
        f"{problem.name!r} used all K_max = {bound} cluster rows in {share:.1%} of the draws "
        f"({int(np.sum(k >= bound))} of {k.size}): where the bound binds, the posterior is that of a mixture of at most {bound} clusters, not "
        f"the partition prior's.  Give the cluster rows ({rows_of}) more rows, e.g. shape={2 * bound}; each draw "
        f"costs about K_max times more work per item (the log likelihood of every item under every row)",
        KMaxWarning,
        stacklevel=4,
    )
