"""How well a point partition summarises the posterior: its credible ball, its clusters' certainty, its K.

A point estimate ``ĉ`` (:func:`~pymc_partitions.summary.point_partition`)
hides how much the draws ``z^(s)`` disagree with it.  :func:`partition_uncertainty`
returns, from the draws alone:

- the posterior expected VI ``mean_s VI(z^(s), ĉ)`` and the radius of the
  credible ball of Wade & Ghahramani (2018, Sect. 3.2): the smallest ``ε`` with
  ``Pr(VI(z, ĉ) <= ε | data) >= credible``, the ``credible`` quantile of the
  draws' distances to ``ĉ``; beside it the median VI between two draws, the
  posterior's own spread;
- per cluster ``l`` of ``ĉ`` (``m_l`` items): its *certainty*, the posterior
  probability that two of its items are clustered together,
  ``mean_{i<j in l} π_ij = mean_s Σ_k C(n^s_kl) / C(m_l)`` with
  ``π_ij = Pr(z_i = z_j | data)``, ``n^s_kl`` the contingency counts of draw
  ``s`` and ``C(x) = x (x - 1) / 2``; and the cluster it is most often
  confused with, the largest ``mean_{i in l, j in l'} π_ij =
  mean_s Σ_k n^s_kl n^s_kl' / (m_l m_l')`` (both ``O(draws × n)``, no
  ``n × n`` matrix);
- the number of *large* clusters (``labels.large_cluster_size``: at least 1 % of the items)
  of ``ĉ`` against the draws' 90 % interval of the same count.

References
----------
Wade, S. & Ghahramani, Z. (2018). Bayesian cluster analysis: point estimation
and credible balls. *Bayesian Analysis* 13(2):559-626.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from pymc_partitions._jit import announced, jit
from pymc_partitions._validation import check_fraction, check_idata, check_label_vector, check_random_seed
from pymc_partitions.labels import large_cluster_counts, large_cluster_size, relabel
from pymc_partitions.summary._idata import draws_of_items, partition_draws
from pymc_partitions.summary.distances import vi_distance

__all__ = ["PartitionUncertainty", "partition_uncertainty"]


@jit
def _cluster_affinity(draws, labels, n_labels):
    """``A[l, l'] = mean_s Σ_k n^s_kl n^s_kl'`` and ``W[l] = mean_s Σ_k C(n^s_kl)`` over the draws (module docstring)."""
    n_draws, n = draws.shape
    affinity = np.zeros((n_labels, n_labels))
    within = np.zeros(n_labels)
    for s in range(n_draws):
        k = draws[s].max() + 1
        table = np.zeros((k, n_labels))
        for i in range(n):
            table[draws[s, i], labels[i]] += 1.0
        affinity += table.T @ table
        within += 0.5 * (table * (table - 1.0)).sum(axis=0)
    return affinity / n_draws, within / n_draws


class PartitionUncertainty(NamedTuple):
    """What :func:`partition_uncertainty` returns.

    Attributes
    ----------
    partition : ndarray of int32
        The point estimate, canonical labels.
    expected_vi : float
        ``mean_s VI(z^(s), partition)``, bits.
    ball_radius : float
        The credible ball's radius: ``credible`` of the draws lie within this VI of ``partition``.
    credible : float
        Its probability.
    draw_spread : float
        Median VI between two draws (chosen at random): how much the posterior itself varies.
    clusters : pandas.DataFrame
        One row per cluster: ``size``, ``certainty`` (probability that two of its
        items are co-clustered), ``confused_with`` (the cluster its items are most
        often co-clustered with, -1 if none) and ``confusion`` (that probability).
    n_large : int
        Large clusters of ``partition`` (``labels.large_cluster_size``).
    n_large_interval : tuple of int
        The draws' 5 % and 95 % quantiles of the same count.
    """

    partition: np.ndarray
    expected_vi: float
    ball_radius: float
    credible: float
    draw_spread: float
    clusters: pd.DataFrame
    n_large: int
    n_large_interval: tuple

    @property
    def is_typical(self):
        """Whether ``partition`` has a number of large clusters inside the draws' 90 % interval."""
        low, high = self.n_large_interval
        return low <= self.n_large <= high


@announced("partition_uncertainty")
def partition_uncertainty(idata, partition, var_name="z", credible=0.95, items=None, random_seed=0):
    """The uncertainty around a point partition: credible ball, co-clustering certainty of each cluster, K.

    See the module docstring for the definitions (Wade & Ghahramani 2018's
    credible ball, with the VI distance).

    Parameters
    ----------
    idata : arviz.InferenceData or xarray.DataTree
        ``idata["posterior"][var_name]`` with dims (chain, draw, n).
    partition : array_like of int, shape (m,)
        The point estimate (``m = n`` or ``len(items)``), e.g. from :func:`point_partition`.
    var_name : str
    credible : float
        Probability of the credible ball, in (0, 1].
    items : sequence of int, optional
        Restrict the draws to these items.
    random_seed : int, numpy Generator or None
        Chooses the pairs of draws of ``draw_spread``.

    Returns
    -------
    PartitionUncertainty

    Examples
    --------
    >>> import arviz as az, numpy as np
    >>> truth = np.repeat([0, 1], 10)
    >>> draws = np.tile(truth, (1, 50, 1))
    >>> draws[0, ::2, 19] = 0                      # half the draws put item 19 in the first cluster
    >>> u = partition_uncertainty(az.from_dict(posterior={"z": draws}), truth)
    >>> u.clusters.round(3).to_dict("list")
    {'size': [10, 10], 'certainty': [1.0, 0.9], 'confused_with': [1, 0], 'confusion': [0.05, 0.05]}
    >>> u.n_large, u.n_large_interval, u.is_typical
    (2, (2, 2), True)
    """
    check_idata(idata)
    credible = check_fraction("credible", credible, "the probability of the credible ball")
    rng = check_random_seed("random_seed", random_seed)
    draws = np.ascontiguousarray(draws_of_items(partition_draws(idata, var_name, "partition_uncertainty"), items))
    labels = relabel(check_label_vector("partition", partition, draws.shape[1]))
    distances = np.array([vi_distance(d, labels) for d in draws])
    pairs = rng.integers(0, draws.shape[0], size=(min(200, draws.shape[0]), 2))
    spread = float(np.median([vi_distance(draws[a], draws[b]) for a, b in pairs]))
    n_labels = int(labels.max()) + 1
    affinity, within = _cluster_affinity(draws.astype(np.int64), labels.astype(np.int64), n_labels)
    sizes = np.bincount(labels, minlength=n_labels).astype(np.float64)
    pairs_within = 0.5 * sizes * (sizes - 1.0)
    certainty = np.divide(within, pairs_within, out=np.ones(n_labels), where=pairs_within > 0)
    between = affinity / np.outer(sizes, sizes)
    np.fill_diagonal(between, -1.0)
    confused = np.argmax(between, axis=1) if n_labels > 1 else np.full(n_labels, -1)
    clusters = pd.DataFrame({
        "size": sizes.astype(np.int64),
        "certainty": certainty,
        "confused_with": confused,
        "confusion": between[np.arange(n_labels), confused] if n_labels > 1 else np.zeros(n_labels),
    })
    clusters.index.name = "cluster"
    large = large_cluster_counts(draws)
    return PartitionUncertainty(
        partition=labels,
        expected_vi=float(distances.mean()),
        ball_radius=float(np.quantile(distances, credible)),
        credible=credible,
        draw_spread=spread,
        clusters=clusters,
        n_large=int(np.sum(sizes >= large_cluster_size(draws.shape[1]))),
        n_large_interval=(int(np.quantile(large, 0.05)), int(np.quantile(large, 0.95))),
    )
