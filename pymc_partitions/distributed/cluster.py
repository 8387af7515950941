"""The sharded samplers on a Dask cluster (``backend=client``), surviving worker loss.

:class:`DaskShards` is the executor (``kernels.protocol.Executor``) of both
sharded samplers' drivers: the hybrid iteration (``kernels.hybrid``,
``HybridDPStep``) and the sub-cluster split-merge (``kernels.subcluster``,
``SubClusterSplitMergeStep``).  Set-up (once): the shards are split into
consecutive groups, one per worker; each group's rows of the data are
scattered to its worker, where a
:class:`~pymc_partitions.distributed.host.ShardHost` actor keeps them with the
group's labels.

*Hybrid.*  Each iteration the driver plans (``kernels.hybrid.plan_iteration``,
O(K p) to every worker), every host sweeps its shards with its numba threads,
and the driver merges what comes back: O(K s) summaries per shard and the
labels (which ``pm.sample`` needs for ``z``).  The next call carries each
shard's relabelling (O(K)), so labels never travel back to the workers; the
next iteration starts from the merge's summaries (``hybrid.is_result``) unless
another step changed the labels.

*Sub-cluster split-merge.*  The labels stay on the hosts during an
iteration; the driver draws pairs, seeds, parameters and decisions.  A pass
sends its parameters (O(p)) and gets the two sides' sums (O(s) per shard);
the hosts find the pair's items themselves, and an accepted split or a
restricted sweep travels as an O(p + s) *label operation* (its selection,
slots, parameters and seed: each host re-derives the sides from the keyed
uniforms, ``streams.keyed_uniform``, or keeps those of the pass), sent with
the host's next call.  The labels of the pair's anchors are *replayed* on the
driver from the last synchronised labels and the operations since, with the
same numba function the hosts use (:meth:`DaskShards.item_slots`).
The iteration's global move gets O(K s) summaries per shard, and the labels
come back once per iteration, for ``pm.sample``.

Actor calls go from the client to the workers directly, not through the
scheduler, which keeps a call's overhead to two messages per worker.

Worker loss: if a host's worker dies, the call is finished by rebuilding that
host's shards on a live worker from the last recorded state -- the data,
which the driver keeps, the labels of the last synchronisation and the label
operations recorded since -- and running the call again.  What a host
computes is a function of exactly those (and the call's arguments), so the
chain is the one a run without the failure gives.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time

import numpy as np

from pymc_partitions.distributed.host import ShardHost
from pymc_partitions.kernels import hybrid
from pymc_partitions.kernels.passes import drawn_side, reduce_shards
from pymc_partitions.state import link_all

LOSS_TIMEOUT = 30.0
"""Seconds to wait for the scheduler to confirm that a worker whose call failed is gone."""


class DaskShards:
    """The sharded samplers' executor (``kernels.protocol.Executor``) on the workers of ``client``: shards of ``data``
    (the driver's copy, kept for recovery).

    ``data`` are in the coordinates of the driver's kernel model (``model.data``,
    relative to its origin), as the hosts use them (``ShardHost``).
    ``step_name`` names the step in errors.  Its methods are the driver's
    executor operations, with their signatures; the labels live on the
    hosts between the synchronisations of :meth:`begin` (labels sent if they
    are not the hosts'), the global move (:meth:`sweep`: its labels come
    back for the merge) and :meth:`finish` (labels come back if operations
    changed them).  In between, the driver's ``state`` keeps the clusters'
    sizes and statistics current, and its labels are those of the last
    synchronisation.

    ``volume`` holds the bytes of the last iteration: ``sent`` (plans, pass
    parameters, label operations), ``received`` (summaries and sums) and
    ``labels`` (labels in either direction).
    """

    def __init__(self, client, family, data, n_shards, step_name="HybridDPStep"):
        self.client = client
        self.family = int(family)
        self.n_shards = n_shards
        self.step_name = step_name
        self._data = data
        self._bounds = hybrid.shard_bounds(data.shape[0], n_shards)
        n_groups = min(len(self._live_workers()), n_shards)
        self._groups = [group for group in np.array_split(np.arange(n_shards), n_groups)]
        self._hosts = [None] * n_groups
        self._host_futures = [None] * n_groups
        self._host_workers = [None] * n_groups
        self._z = None  # the labels at the last synchronisation
        self._log = []  # the label operations since then (a rebuilt host replays them)
        self._pending = [[] for _ in range(n_groups)]  # the operations each host has not applied yet
        self.volume = {"sent": 0, "received": 0, "labels": 0}

    def __reduce__(self):
        raise TypeError(
            f"a {self.step_name} with a Dask backend holds a live Client and cannot be copied to another process: "
            "run pm.sample(..., cores=1) (each chain's shards still run on the cluster)"
        )

    def __deepcopy__(self, memo):
        """The executor itself: it is a handle on the cluster, shared by every copy of a sampler state (PyMC deep-copies
        a step's state between chains); a copy always starts by checking the hosts' labels."""
        return self

    # -- the operations -----------------------------------------------------------------

    def begin(self, sampler, model, state):
        """A new iteration (and its ``volume``); the hosts take ``state.labels`` unless they hold them."""
        self.volume = dict.fromkeys(self.volume, 0)
        if self._z is None or self._log or not np.array_equal(self._z, state.labels):
            self._set_labels(state.labels.astype(np.int32))
        return state

    def item_slots(self, sampler, model, state, i, j):
        """The slots of ``i`` and ``j``: their synchronised labels with the operations since replayed (:meth:`_replay`)."""
        return self._replay(model, i), self._replay(model, j)

    def select(self, sampler, model, state, i, j):
        """``(slot_i, slot_j, i, j)``: the hosts find the items themselves (``ShardHost.pair_pass``)."""
        return (*self.item_slots(sampler, model, state, i, j), int(i), int(j))

    def pair_pass(self, sampler, model, state, selection, predictive, densities, log_w, seed, forced_slot, want_log_q):
        """The pass on the hosts (``ShardHost.pair_pass``), per-shard sums reduced in shard order."""
        results = self._call_all(
            "pair_pass", lambda h: (model.params, selection, predictive, densities, log_w, seed, forced_slot, want_log_q)
        )
        return reduce_shards(*(np.concatenate([r[q] for r in results]) for q in range(3)))

    def assign(self, sampler, model, state, selection, slot_a, slot_b, i, j, theta, log_w, seed):
        """Recorded as an ``"assign"`` operation (``ShardHost``), applied by the hosts with their next call."""
        self._record(("assign", selection, int(slot_a), int(slot_b), model.params, theta.copy(), log_w.copy(), seed))

    def merge_items(self, sampler, model, state, keep, drop):
        """Recorded as a ``"merge"`` operation."""
        self._record(("merge", int(keep), int(drop)))

    def summarize(self, sampler, model, state):
        """The hosts' summaries (``ShardHost.summarize``): ``(None, counts[P, K], stats[P, K, s])``; the hosts
        now hold cluster numbers (the labels stay there)."""
        position = state.position.copy()
        results = self._call_all("summarize", lambda h: (position, int(state.n_clusters[0])))
        self._log.append(("relabel", position))  # applied by that call; a host rebuilt before the merge replays it
        return None, np.concatenate([r[0] for r in results]), np.concatenate([r[1] for r in results])

    def sweep(self, sampler, model, labels, plan, n_sweeps, n_clusters):
        """The hybrid sweeps on the hosts (``ShardHost.run``), then the merge: ``(z, shard_counts, shard_stats)``;
        ``z`` is the new synchronised state."""
        labels, new, offsets, counts, stats = self._run(model, plan, n_sweeps, n_clusters)
        z, shard_counts, shard_stats, relabel = hybrid.merge(labels, self._bounds, new, offsets, counts, stats, n_clusters)
        self._record_merge(z, relabel, new, offsets, n_clusters)
        return z, shard_counts, shard_stats

    def finish(self, sampler, model, state):
        """``state`` with the hosts' labels (fetched if operations changed them since the last synchronisation) and
        member lists rebuilt from them."""
        if self._log:
            results = self._call_all("current_labels", lambda h: ())
            self._as_labels("received", sum(r.nbytes for r in results))
            self._z = np.concatenate(results)
            self._log = []
            state.labels[:] = self._z
            link_all(state)
        return state

    def _replay(self, model, h):
        """Item ``h``'s label now: its synchronised label through the recorded operations (``ShardHost.apply``), the
        sides drawn by ``passes.drawn_side`` from the driver's copy of the item's data."""
        label = int(self._z[h])
        for op in self._log:
            kind = op[0]
            if kind == "assign":
                (slot_i, slot_j, i, j), slot_a, slot_b, params, theta, log_w, seed = op[1:]
                if h == i:
                    label = slot_a
                elif h == j:
                    label = slot_b
                elif label == slot_i or label == slot_j:
                    side = drawn_side(model.family, model.data[h], params, theta, log_w, seed, h)
                    label = slot_b if side == 1 else slot_a
            elif kind == "merge":
                label = op[1] if label == op[2] else label
            else:
                label = int(op[1][label])
        return label

    # -- the hybrid sweep ------------------------------------------------------------------

    def _record_merge(self, z, relabel, new, offsets, n_clusters):
        """Record the merged labels (for recovery) and each shard's relabelling, sent with the next call."""
        for h, group in enumerate(self._groups):
            maps = [relabel[offsets[s] : offsets[s] + n_clusters + new[s]] for s in group]
            self._pending[h] = [("relabel_shards", maps)]
        self._z = z
        self._log = []

    def _run(self, model, plan, n_sweeps, n_clusters):
        results = self._call_all(
            "run", lambda h: (model.params, model.prior, model.prior_params, plan, n_sweeps, n_clusters)
        )
        self._as_labels("received", sum(r[0].nbytes for r in results))
        labels = np.concatenate([r[0] for r in results]).astype(np.int64)
        new = np.concatenate([r[1] for r in results])
        offsets = np.zeros(self.n_shards + 1, dtype=np.int64)
        offsets[1:] = np.cumsum(n_clusters + new)
        return labels, new, offsets, np.concatenate([r[3] for r in results]), np.concatenate([r[4] for r in results])

    # -- labels, hosts and recovery -----------------------------------------------------

    def _set_labels(self, z):
        """Synchronise: every host takes its rows of ``z`` (hosts are started the first time)."""
        self._z = z
        self._log = []
        self._pending = [[] for _ in self._groups]
        missing = [h for h in range(len(self._groups)) if self._hosts[h] is None]
        for h in missing:
            self._start(h)
        present = [h for h in range(len(self._groups)) if h not in missing]
        if present:
            self._call_all("set_labels", lambda h: (z[self._rows(h)],), present)
        self._as_labels("sent", z.nbytes)

    def _record(self, op):
        """A label operation the driver decided: every host applies it before its next call (``ShardHost.apply``)."""
        self._log.append(op)
        for pending in self._pending:
            pending.append(op)

    def _as_labels(self, direction, nbytes):
        """Count ``nbytes`` of what went ``direction`` (``"sent"`` or ``"received"``) as labels."""
        self.volume[direction] -= min(nbytes, self.volume[direction])
        self.volume["labels"] += nbytes

    def _rows(self, h):
        group = self._groups[h]
        return slice(self._bounds[group[0]], self._bounds[group[-1] + 1])

    def _live_workers(self):
        return sorted(self.client.scheduler_info()["workers"])

    def _start(self, h):
        """(Re)build host ``h`` on the least loaded live worker from the driver's data, the labels of the last
        synchronisation and the label operations since (sent with its first call)."""
        workers = self._live_workers()
        if not workers:
            raise RuntimeError(f"{self.step_name}: the Dask cluster has no workers left to rebuild lost shards on")
        load = {w: sum(hw == w for hw, host in zip(self._host_workers, self._hosts) if host is not None) for w in workers}
        worker = min(workers, key=lambda w: (load[w], workers.index(w)))
        rows = self._rows(h)
        group = self._groups[h]
        data = self.client.scatter(np.ascontiguousarray(self._data[rows]), workers=[worker], hash=False)
        bounds = self._bounds[group[0] : group[-1] + 2] - self._bounds[group[0]]
        future = self.client.submit(
            ShardHost, data, self._z[rows], bounds, group, self.family, rows.start, actor=True, workers=[worker],
            pure=False,
        )
        self._hosts[h] = future.result()
        self._host_futures[h] = future  # the worker keeps the actor only while its future is referenced
        self._host_workers[h] = worker
        self._pending[h] = list(self._log)

    def _call_all(self, method, arguments, hosts=None):
        """``getattr(host, method)(pending operations, *arguments(h))`` on every host, concurrently; lost hosts are
        rebuilt and rerun.  Counts the bytes sent and received."""
        hosts = range(len(self._groups)) if hosts is None else hosts
        pending, lost = {}, []
        for h in hosts:
            try:
                pending[h] = self._send(h, method, arguments(h))
            except (Exception, asyncio.CancelledError) as error:  # a lost worker raises from the call itself
                self._confirm_lost(h, error)
                lost.append(h)
        results = {}
        for h, future in pending.items():
            try:
                results[h] = future.result()
            except (Exception, asyncio.CancelledError) as error:
                self._confirm_lost(h, error)
                lost.append(h)
        for h in lost:
            while h not in results:
                self._start(h)
                try:
                    results[h] = self._send(h, method, arguments(h)).result()
                except (Exception, asyncio.CancelledError) as error:
                    self._confirm_lost(h, error)
        for h in hosts:
            self._pending[h] = []
        self.volume["received"] += sum(_nbytes(results[h]) for h in hosts)
        return [results[h] for h in hosts]

    def _send(self, h, method, arguments):
        self.volume["sent"] += _nbytes(self._pending[h]) + _nbytes(arguments)
        return getattr(self._hosts[h], method)(self._pending[h], *arguments)

    def _confirm_lost(self, h, error):
        """Return if host ``h``'s worker has left the cluster, else re-raise ``error`` (a genuine failure).

        A connection error may reach the client before the scheduler removes
        the worker: those wait up to :data:`LOSS_TIMEOUT` seconds for it.
        """
        lost_types = (OSError, TimeoutError, asyncio.CancelledError, concurrent.futures.CancelledError)
        connection = isinstance(error, lost_types) or "lost" in str(error).lower()
        deadline = time.monotonic() + (LOSS_TIMEOUT if connection else 0.0)
        while self._host_workers[h] in self._live_workers():
            if time.monotonic() >= deadline:
                raise error
            time.sleep(0.05)
        self._hosts[h] = None


def _nbytes(values):
    """Bytes of the numpy arrays in ``values`` (nested tuples and lists; scalars and strings count 8)."""
    if isinstance(values, np.ndarray):
        return values.nbytes
    if isinstance(values, (tuple, list)):
        return sum(_nbytes(v) for v in values)
    return 0 if values is None else 8
