"""The worker side of the sharded samplers: a set of shards, their data and their labels (no PyMC).

A :class:`ShardHost` lives in one process -- a Dask worker, as an actor
(``distributed.cluster``) -- and keeps its shards' rows of the data and
their current labels between calls.  Every call first applies the *label
operations* the driver has recorded since the host's last call (the driver
sends them with the call; :meth:`ShardHost.apply`), then does its work:

* the hybrid sampler's iteration (:meth:`ShardHost.run`): the driver's plan
  (O(K p)) in, the shards' labels and per-cluster summaries (O(K s) per
  shard) out;
* the sub-cluster split-merge's passes (:meth:`ShardHost.pair_pass`): the
  pass's parameters (O(p)) in, the two sides' sums (O(s) per shard) out; the
  items of the pair's clusters are found on the host, and the sides of an
  accepted split or of a restricted sweep are applied there (an ``"assign"``
  operation: re-derived from the pass's seed, or the last pass's sides);
* the per-shard summaries of the sub-cluster's global move
  (:meth:`ShardHost.summarize`) and the labels (:meth:`ShardHost.current_labels`).

Importing this module loads numpy, numba and the package's numba layers only.
"""

from __future__ import annotations

import numpy as np

from pymc_partitions import families
from pymc_partitions.kernels.hybrid import run_shards, summarize_shards
from pymc_partitions.kernels.passes import PassPlan, assign_labels, scan_pair, shard_sums
from pymc_partitions.state import make_model


class ShardHost:
    """Shards ``shards`` (global indices, consecutive) whose rows are ``data``, split at ``bounds`` (local offsets).

    ``data`` are the driver's kernel model's rows (``model.data``: relative to
    its origin), and the driver sends its ``model.params``, in the same
    coordinates: the host's models use them as they are (origin zero), so
    its statistics add up with the driver's.  ``labels`` are the shards'
    current labels (int, one per row: the hybrid's canonical labels, or the
    sub-cluster driver's slots); ``offset`` is the index of the first row
    among all items (the key of its uniforms, ``streams.keyed_uniform``).

    Label operations (tuples, applied in order by :meth:`apply`):

    * ``("relabel", map)``: ``label = map[label]`` for every row;
    * ``("relabel_shards", maps)``: the same with ``maps[q]`` on local shard ``q``;
    * ``("merge", keep, drop)``: ``drop`` becomes ``keep``;
    * ``("assign", selection, slot_a, slot_b, params, theta, log_w, seed)``:
      ``selection = (slot_i, slot_j, i, j)``; the rows labelled ``slot_i`` or
      ``slot_j`` but ``i`` and ``j`` take the side a pass with ``seed``,
      ``theta`` and ``log_w`` draws for them (``passes.drawn_side``):
      side 0 ``slot_a``, side 1 ``slot_b``; ``i`` gets ``slot_a``, ``j``
      ``slot_b`` (``shards.assign`` on the driver's state).
    """

    def __init__(self, data, labels, bounds, shards, family, offset=0):
        self.data = np.ascontiguousarray(data, dtype=np.float64)
        self.bounds = np.asarray(bounds, dtype=np.int64)
        self.shards = np.asarray(shards, dtype=np.int64)
        self.family = int(family)
        self.offset = int(offset)
        self._tag = families.tag(self.family)
        self.set_labels([], labels)

    def set_labels(self, ops, labels):
        """Replace the shards' labels (a partition set by another step, or the initial point); ``ops`` are moot."""
        self.labels = np.asarray(labels, dtype=np.int64).copy()
        self._version = 0  # counts label changes: the pair's items and the last pass's sides are cached per version
        self._pair_cache = (None, None, None)
        self._sides_key = None
        self._sides = np.empty(0, dtype=np.int8)

    # -- label operations -----------------------------------------------------------

    def apply(self, ops):
        """Apply the label operations ``ops`` (class docstring) in order."""
        for op in ops:
            kind = op[0]
            if kind == "relabel":
                self.labels = op[1][self.labels]
            elif kind == "relabel_shards":
                for q in range(self.shards.shape[0]):
                    rows = slice(self.bounds[q], self.bounds[q + 1])
                    self.labels[rows] = op[1][q][self.labels[rows]]
            elif kind == "merge":
                self.labels[self.labels == op[2]] = op[1]
            else:
                self._assign(*op[1:])
            self._version += 1

    def _assign(self, selection, slot_a, slot_b, params, theta, log_w, seed):
        items, item_bounds = self._pair(selection)
        if self._sides_key != (selection, self._version, seed):  # e.g. a host rebuilt since the pass: re-derive
            self._sides = np.empty(items.shape[0], dtype=np.int8)
            plan = PassPlan(items, item_bounds, self.offset, False, theta, log_w, seed, self.labels, -1, False)
            shard_sums(self._tag, self.data, params, plan, self._sides)
        _, _, i, j = selection
        assign_labels(self.labels, items, self._sides, slot_a, slot_b, i - self.offset, j - self.offset)

    def _pair(self, selection):
        """The rows of the pair's clusters but ``i`` and ``j`` (local indices, increasing) and each shard's start."""
        key, items, item_bounds = self._pair_cache
        if key != (selection, self._version):
            slot_i, slot_j, i, j = selection
            items, item_bounds = scan_pair(self.labels, slot_i, slot_j, i - self.offset, j - self.offset, self.bounds)
            self._pair_cache = ((selection, self._version), items, item_bounds)
        return items, item_bounds

    # -- work -------------------------------------------------------------------------

    def run(self, ops, params, prior, prior_params, plan, n_sweeps, n_clusters):
        """One hybrid iteration of these shards; returns ``(labels, new, offsets, counts, stats)`` (``run_shards``).

        The labels (after ``ops``) are cluster numbers ``0 .. n_clusters - 1``.
        Only the rows of labels in use are returned: shard ``q``'s summaries
        are ``counts[offsets[q] : offsets[q + 1]]``, one row per label
        ``0 .. n_clusters + new[q] - 1``.
        """
        self.apply(ops)
        origin = np.zeros(self.data.shape[1])  # rows and params are already relative to the driver's origin
        model = make_model(self.family, self.data, params, prior, prior_params, np.zeros(0), origin=origin)
        new, offsets, counts, stats = run_shards(model, self.labels, self.bounds, self.shards, plan, n_sweeps, n_clusters)
        self._version += 1
        used = np.concatenate([np.arange(offsets[q], offsets[q] + n_clusters + new[q]) for q in range(new.shape[0])])
        trimmed = np.zeros_like(offsets)
        trimmed[1:] = np.cumsum(n_clusters + new)
        return self.labels.astype(np.int32), new, trimmed, counts[used], stats[used]

    def pair_pass(self, ops, params, selection, predictive, densities, log_w, seed, forced_slot, want_log_q):
        """One pass of the sub-cluster split-merge over the items of the pair's clusters on these shards
        (``passes.shard_sums``): per shard, the sides' ``(stats[q, 2, s], sizes[q, 2], log q[q])``."""
        self.apply(ops)
        items, item_bounds = self._pair(selection)
        if self._sides.shape[0] != items.shape[0]:
            self._sides = np.empty(items.shape[0], dtype=np.int8)
        plan = PassPlan(
            items, item_bounds, self.offset, predictive, densities, log_w, seed, self.labels, forced_slot, want_log_q
        )
        result = shard_sums(self._tag, self.data, params, plan, self._sides)
        drawn = not predictive and forced_slot < 0  # the sides an "assign" with this seed would give
        self._sides_key = (selection, self._version, seed) if drawn else None
        return result

    def summarize(self, ops, position, n_clusters):
        """Labels to cluster numbers ``position[label]`` and their per-shard summaries ``(counts[q, K], stats[q, K, s])``
        (``hybrid.summarize_shards``)."""
        self.apply(ops)
        numbers = np.empty_like(self.labels)
        counts = np.zeros((self.shards.shape[0], n_clusters), dtype=np.int64)
        stats = np.zeros((self.shards.shape[0], n_clusters, families.stat_size(self._tag, self.data.shape[1])))
        summarize_shards(self._tag, self.data, self.labels, position, self.bounds, numbers, counts, stats)
        self.labels = numbers
        self._version += 1
        return counts, stats

    def current_labels(self, ops):
        """The shards' labels after ``ops`` (int32)."""
        self.apply(ops)
        return self.labels.astype(np.int32)
