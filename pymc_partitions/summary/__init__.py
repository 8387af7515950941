"""Summaries of partition posteriors: canonical labels, co-clustering, point estimates, diagnostics.

Raw labels are not identifiable (any permutation of them is the same
partition), so nothing here looks at a label's value: every summary is a
function of the partition only.

- :func:`relabel` -- canonical labels (order of first appearance; :mod:`pymc_partitions.labels`).
- :func:`posterior_similarity` -- the co-clustering matrix ``Pr(z_i = z_j | data)``
  (:mod:`.similarity`).
- :func:`point_partition` -- the partition maximising the posterior expected
  adjusted Rand index (PEAR, Fritsch & Ickstadt 2009; the default) or minimising the
  posterior expected Variation of Information (Meilă 2007; Wade & Ghahramani 2018) or Binder loss,
  found by a SALSO-style greedy search (Dahl, Johnson & Müller 2022); and
  :func:`expected_loss`, the posterior expected loss of a given partition
  (:mod:`.point`, which derives the losses from the contingency table).
- :func:`partition_uncertainty` -- how well a point partition summarises the
  draws: the credible ball (Wade & Ghahramani 2018), each cluster's
  co-clustering certainty, its number of large clusters against the draws'
  (:mod:`.uncertainty`).
- :func:`summarize` -- a table of the label-invariant scalars (number of
  clusters, log joint, largest-cluster fraction) with ESS and R-hat, the
  acceptance rates of split and merge proposals, and distances to a reference
  (:mod:`.table`, which lists the sample stats it reads).
- :func:`vi_distance`, :func:`adjusted_rand_index` -- distances between two
  partitions (:mod:`.distances`, with their formulas).
- :func:`cluster_parameters` -- the parameters of each cluster of a point
  partition, from a component model's rows matched by overlap (:mod:`.clusters`).
- :func:`posterior_predictive` -- replicated data sets from the posterior
  predictive distribution, cluster parameters drawn given the data
  (:mod:`.predictive`; ``plots.plot_ppc`` draws and plots them).

All of them read ``InferenceData`` and ``xarray.DataTree`` alike (:mod:`._idata`).
"""

from pymc_partitions.labels import relabel
from pymc_partitions.summary.clusters import cluster_parameters
from pymc_partitions.summary.distances import adjusted_rand_index, vi_distance
from pymc_partitions.summary.point import expected_loss, point_partition
from pymc_partitions.summary.predictive import posterior_predictive
from pymc_partitions.summary.similarity import posterior_similarity
from pymc_partitions.summary.table import summarize
from pymc_partitions.summary.uncertainty import partition_uncertainty

__all__ = [
    "adjusted_rand_index",
    "cluster_parameters",
    "expected_loss",
    "partition_uncertainty",
    "point_partition",
    "posterior_predictive",
    "posterior_similarity",
    "relabel",
    "summarize",
    "vi_distance",
]
