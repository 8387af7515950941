"""Diagnostics table of a partition posterior: label-invariant scalars with ESS and R-hat.

Raw labels are no diagnostic target (``docs/design.md`` §7.3); :func:`summarize`
reports scalars that are functions of the partition only -- the number of
clusters ``K`` and the number of large ones (at least 1 % of the items,
``labels.large_cluster_size``), the log joint ``log p(z | η) + log p(x | z, η)``, the
largest-cluster fraction ``max_k n_k / n`` and, given a reference partition,
the VI distance and adjusted Rand index of each draw to it
(:mod:`.distances`) -- each with ArviZ's rank-normalised bulk/tail ESS and
split R-hat over chains, and the acceptance rate of each move type.

Sample stats read (written by the step methods, see ``docs/design.md`` §7.2):
``partition_n_clusters``, ``partition_n_large_clusters``, ``partition_log_joint``,
``partition_largest_fraction``, ``partition_accepted``, ``partition_accept``
and ``partition_move`` (the move codes of ``kernels.info``: 0 Gibbs sweep,
1 split proposal, 2 merge proposal, 3 no move; for ARM "split" means
``z_i = z_j``, although its moves can also keep or lower the number of
clusters).  Both counts of clusters and the largest-cluster fraction fall
back on the draws of ``z`` when their stats are absent.
"""

from __future__ import annotations

import warnings

import numpy as np

from pymc_partitions._jit import announced
from pymc_partitions._validation import check_idata, check_label_vector, check_var_name
from pymc_partitions.kernels.info import MOVE_NAMES, PROPOSALS
from pymc_partitions.labels import large_cluster_counts, largest_fraction_rows, relabel
from pymc_partitions.summary._idata import group, partition_draws, scalar_stat, variable
from pymc_partitions.summary.distances import distances_to_reference

__all__ = ["summarize"]

_SUMMARY_COLUMNS = ["mean", "sd", "5%", "50%", "95%", "ess_bulk", "ess_tail", "r_hat"]


def _scalar_row(values):
    """Mean, sd, quantiles, ESS bulk/tail and R-hat of a (chain, draw) array."""
    import arviz as az

    x = np.asarray(values, dtype=np.float64)
    flat = x.ravel()
    row = {
        "mean": flat.mean(),
        "sd": flat.std(ddof=1) if flat.size > 1 else np.nan,
        "5%": np.quantile(flat, 0.05),
        "50%": np.quantile(flat, 0.5),
        "95%": np.quantile(flat, 0.95),
        "ess_bulk": np.nan,
        "ess_tail": np.nan,
        "r_hat": np.nan,
    }
    if x.shape[1] >= 4 and np.ptp(flat) > 0:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            row["ess_bulk"] = _as_float(az.ess(x, method="bulk"))
            row["ess_tail"] = _as_float(az.ess(x, method="tail"))
            if x.shape[0] >= 2:
                row["r_hat"] = _as_float(az.rhat(x))
    return row


def _as_float(result):
    """A scalar from whatever an ArviZ diagnostic returned (float, array or Dataset)."""
    if hasattr(result, "data_vars"):
        result = next(iter(result.data_vars.values()))
    return float(np.asarray(getattr(result, "values", result)).reshape(-1)[0])


@announced("summarize")
def summarize(idata, var_name="z", reference=None):
    """Label-invariant summary of a partition posterior, with convergence diagnostics.

    Rows (each present when its input is):

    - ``n_clusters`` -- number of clusters (``partition_n_clusters``, or from ``z``);
    - ``n_large_clusters`` -- number of clusters of at least 1 % of the items and at
      least 2 (``partition_n_large_clusters``, or from ``z``): the groups a reader
      sees, without the few tiny clusters every DP posterior holds;
    - ``log_joint`` -- log joint density of the partition and data (``partition_log_joint``);
    - ``largest_fraction`` -- fraction of items in the largest cluster
      (``partition_largest_fraction``, or from ``z``);
    - ``vi_reference``, ``ari_reference`` -- VI distance (bits) and adjusted
      Rand index of each draw to ``reference`` (needs ``z`` in the trace);
    - ``accept_rate_split``, ``accept_rate_merge`` -- fraction of split / merge
      proposals accepted (``partition_move``, ``partition_accepted``), in the
      ``mean`` column (other columns NaN).

    Columns: ``mean``, ``sd``, ``5%``, ``50%``, ``95%``, ``ess_bulk``,
    ``ess_tail``, ``r_hat`` (ArviZ rank-normalised ESS and split R-hat over
    chains; NaN when the quantity is constant, or R-hat with one chain).
    ``result.attrs["moves"]`` holds, per move type (``kernels.info.MOVE_NAMES``) that occurs,
    ``{"proposed", "accepted", "accept_rate", "mean_accept_prob"}``.

    Parameters
    ----------
    idata : arviz.InferenceData or xarray.DataTree
        Result of ``pm.sample`` with a partition step method.
    var_name : str
        Name of the partition variable (only needed for fallbacks and ``reference``).
    reference : array_like of int, shape (n,), optional
        A reference partition (e.g. the truth for simulated data).

    Returns
    -------
    pandas.DataFrame

    Examples
    --------
    >>> import arviz as az, numpy as np
    >>> from pymc_partitions.summary import summarize
    >>> rng = np.random.default_rng(0)
    >>> k = rng.integers(2, 5, size=(2, 100))
    >>> idata = az.from_dict(sample_stats={
    ...     "partition_n_clusters": k,
    ...     "partition_log_joint": -50.0 - k + rng.normal(size=(2, 100)),
    ...     "partition_move": rng.integers(0, 3, size=(2, 100)),
    ...     "partition_accepted": rng.random((2, 100)) < 0.3,
    ... })
    >>> table = summarize(idata)
    >>> list(table.index)
    ['n_clusters', 'log_joint', 'accept_rate_split', 'accept_rate_merge']
    >>> list(table.columns)
    ['mean', 'sd', '5%', '50%', '95%', 'ess_bulk', 'ess_tail', 'r_hat']
    """
    import pandas as pd

    check_idata(idata)
    check_var_name(var_name)
    z = variable(group(idata, "posterior"), var_name)
    z_draws = None

    def get_draws():
        nonlocal z_draws
        if z_draws is None:
            arr = partition_draws(idata, var_name, "summarize")
            shape = np.asarray(z.values).shape
            z_draws = arr.reshape(shape)
        return z_draws

    rows = {}
    n_clusters = scalar_stat(idata, "partition_n_clusters")
    if n_clusters is None and z is not None:
        n_clusters = get_draws().max(axis=-1) + 1
    if n_clusters is not None:
        rows["n_clusters"] = _scalar_row(n_clusters)
    n_large = scalar_stat(idata, "partition_n_large_clusters")
    if n_large is None and z is not None:
        draws = get_draws()
        n_large = large_cluster_counts(draws.reshape(-1, draws.shape[-1])).reshape(draws.shape[:2])
    if n_large is not None:
        rows["n_large_clusters"] = _scalar_row(n_large)
    log_joint = scalar_stat(idata, "partition_log_joint")
    if log_joint is not None:
        rows["log_joint"] = _scalar_row(log_joint)
    largest = scalar_stat(idata, "partition_largest_fraction")
    if largest is None and z is not None:
        draws = get_draws()
        flat = np.ascontiguousarray(draws.reshape(-1, draws.shape[-1]))
        largest = largest_fraction_rows(flat, flat.shape[1]).reshape(draws.shape[:2])
    if largest is not None:
        rows["largest_fraction"] = _scalar_row(largest)

    if reference is not None:
        if z is None:
            partition_draws(idata, var_name, "summarize(reference=...)")  # raises the missing-z error
        draws = get_draws()
        ref = relabel(check_label_vector("reference", reference, draws.shape[-1]))
        vi, ari = distances_to_reference(np.ascontiguousarray(draws.reshape(-1, draws.shape[-1])), ref)
        rows["vi_reference"] = _scalar_row(vi.reshape(draws.shape[:2]))
        rows["ari_reference"] = _scalar_row(ari.reshape(draws.shape[:2]))

    moves = {}
    move = scalar_stat(idata, "partition_move")
    accepted = scalar_stat(idata, "partition_accepted")
    accept = scalar_stat(idata, "partition_accept")
    if move is not None:
        move = move.astype(np.int64)
        for code, name in MOVE_NAMES.items():
            mask = move == code
            proposed = int(mask.sum())
            if proposed == 0:
                continue
            moves[name] = {
                "proposed": proposed,
                "accepted": int(accepted[mask].astype(bool).sum()) if accepted is not None else None,
                "accept_rate": float(accepted[mask].astype(bool).mean()) if accepted is not None else np.nan,
                "mean_accept_prob": float(np.mean(accept[mask])) if accept is not None else np.nan,
            }
            if code in PROPOSALS:
                row = dict.fromkeys(_SUMMARY_COLUMNS, np.nan)
                row["mean"] = moves[name]["accept_rate"]
                rows[f"accept_rate_{name}"] = row

    if not rows:
        raise ValueError(
            "nothing to summarize: idata has neither the partition sample stats "
            "(partition_n_clusters, partition_log_joint, ...) nor the partition variable "
            f"'{var_name}' in the posterior"
        )
    table = pd.DataFrame.from_dict(rows, orient="index", columns=_SUMMARY_COLUMNS)
    table.attrs["moves"] = moves
    return table
