"""What a transition did: the move codes, the ``Info`` record every kernel returns, and its sample stats.

Every move returns a :class:`Move` (the accept decision and the two pieces of
the Metropolis-Hastings log ratio, which the delta tests compare with the
PyTensor model), every transition an :class:`Info`: its last move and the
partition it ends in (:func:`report`).  PyMC records them as sample stats
(:data:`SAMPLE_STATS`; ``docs/design.md`` §7.2: scalars only, every name prefixed with
``partition_``, move types as integers).

Move codes (``partition_move``), one table for every sampler and for ``summarize``:

====  ===========  ============================================================
code  name         meaning
====  ===========  ============================================================
0     gibbs        the step only made Gibbs sweeps (every update accepted;
                   tgMCMC with ``n_global=0``: its local moves)
1     split        a proposal that splits (split-merge, ARM: ``z_i = z_j``,
                   which for ARM can also keep or lower the cluster count;
                   tgMCMC: a global split of one cluster into two or more)
2     merge        a proposal that merges (``z_i != z_j``; tgMCMC: a global
                   merge of two or more clusters)
3     none         no proposal to make (a population step before two distinct
                   past states exist; tgMCMC: a single-item cluster drawn for
                   a split)
4     incremental  a sweep of single-item Metropolis-Hastings updates (Neal
                   2000, Algorithm 7)
5     hybrid       one iteration of the partially collapsed hybrid sampler
                   (``HybridDPStep``): conditional draws only, all accepted
6     subcluster   one iteration of the sub-cluster split-merge sampler
                   (``SubClusterSplitMergeStep``): split and merge proposals,
                   then a global reassignment
7     tempering    one iteration of tempering across coarsening levels
                   (``TemperedGibbsStep``): split-merge proposals and Gibbs
                   sweeps of every level, then swaps of adjacent levels'
                   partitions
====  ===========  ============================================================

For codes 4 and 6 ``accept_prob`` is the fraction of the proposals accepted and
``accepted`` whether any was; for code 7 ``accept_prob`` is the mean swap
probability ``min(1, r)`` of the iteration's swaps and ``accepted`` whether any
was.  For Gibbs and incremental sweeps, hybrid, subcluster and tempering
iterations (level 1's change) ``log_target_ratio`` is the change in log posterior and
``log_proposal_ratio`` its negative (a Gibbs update is a Metropolis-Hastings
move accepted with probability one).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from pymc_partitions._jit import jit
from pymc_partitions.labels import large_cluster_counts
from pymc_partitions.state import canonical_labels, largest_fraction, log_joint

MOVE_GIBBS = 0
MOVE_SPLIT = 1
MOVE_MERGE = 2
MOVE_NONE = 3
MOVE_INCREMENTAL = 4
MOVE_HYBRID = 5
MOVE_SUBCLUSTER = 6
MOVE_TEMPERING = 7

MOVE_NAMES = {
    MOVE_GIBBS: "gibbs", MOVE_SPLIT: "split", MOVE_MERGE: "merge", MOVE_NONE: "none", MOVE_INCREMENTAL: "incremental",
    MOVE_HYBRID: "hybrid", MOVE_SUBCLUSTER: "subcluster", MOVE_TEMPERING: "tempering",
}
"""Name of each ``partition_move`` code."""

PROPOSALS = (MOVE_SPLIT, MOVE_MERGE)
"""The codes of moves that are accepted or rejected (acceptance rates are reported for these)."""

Move = namedtuple("Move", ["move", "accepted", "accept_prob", "log_target_ratio", "log_proposal_ratio", "cluster_change"])
Move.__doc__ = """What one move did (the kernels' moves return it; a transition reports its last one).

move : int                 a move code (module docstring)
accepted : bool
accept_prob : float        min(1, exp(log_target_ratio + log_proposal_ratio))
log_target_ratio : float   log pi(new) - log pi(old), exact
log_proposal_ratio : float log q(old | new) - log q(new | old)
cluster_change : int       clusters after minus clusters before (0 if rejected)
"""

Info = namedtuple("Info", [*Move._fields, "n_clusters", "log_joint", "largest_fraction", "labels"])
Info.__doc__ = """What a transition returns: its last :class:`Move` and the partition after it, so that a
step learns everything it records from one call.

(the six fields of :class:`Move`)
n_clusters : int           clusters after the transition
log_joint : float          ``state.log_joint``: log p(z | hyperparameters) + log p(x | z, hyperparameters)
largest_fraction : float   ``state.largest_fraction``
labels : int32[n]          the canonical labels (``state.canonical_labels``), the stored ``z``
"""


@jit
def no_move():
    """The :class:`Move` of a step that had no proposal to make."""
    return Move(MOVE_NONE, False, 0.0, 0.0, 0.0, 0)


@jit
def report(model, state, move):
    """The :class:`Info` of a transition whose last move was ``move``, ending in ``state``. O(n + K s)."""
    return Info(
        move.move, move.accepted, move.accept_prob, move.log_target_ratio, move.log_proposal_ratio, move.cluster_change,
        state.n_clusters[0], log_joint(model, state), largest_fraction(state), canonical_labels(state),
    )


SAMPLE_STATS = {
    "partition_move": (np.int64, []),
    "partition_accepted": (bool, []),
    "partition_accept": (np.float64, []),
    "partition_log_target_ratio": (np.float64, []),
    "partition_log_accept_ratio": (np.float64, []),
    "partition_cluster_change": (np.int64, []),
    "partition_n_clusters": (np.int64, []),
    "partition_n_large_clusters": (np.int64, []),
    "partition_log_joint": (np.float64, []),
    "partition_largest_fraction": (np.float64, []),
    "partition_tune": (bool, []),
}
"""Sample stats of every partition step (``stats_dtypes_shapes``).

The first six describe the step's last move (:func:`info_stats`;
``partition_log_accept_ratio`` is ``log r``, the log target ratio plus the
log proposal ratio, not truncated at 0);
``partition_n_clusters``, ``partition_n_large_clusters`` (the clusters of at
least 1 % of the items and at least 2, ``labels.large_cluster_size``),
``partition_log_joint`` (``log p(z | hyperparameters) + log p(x | z,
hyperparameters)``) and ``partition_largest_fraction`` the partition after the
step; ``partition_tune`` is true while PyMC tunes."""


LABEL_STAT_PREFIX = "partition_label_"
"""A step's ``keep_items=[i, ...]`` records ``z[i]`` as the scalar sample stat ``partition_label_{i}``."""


def info_stats(info):
    """The sample stats of an :class:`Info` (all of :data:`SAMPLE_STATS` but ``partition_tune``)."""
    return {
        "partition_move": int(info.move),
        "partition_accepted": bool(info.accepted),
        "partition_accept": float(info.accept_prob),
        "partition_log_target_ratio": float(info.log_target_ratio),
        "partition_log_accept_ratio": float(info.log_target_ratio + info.log_proposal_ratio),
        "partition_cluster_change": int(info.cluster_change),
        "partition_n_clusters": int(info.n_clusters),
        "partition_n_large_clusters": large_cluster_counts(info.labels),
        "partition_log_joint": float(info.log_joint),
        "partition_largest_fraction": float(info.largest_fraction),
    }
