"""The hybrid sampler's shards on a Dask cluster (``HybridDPStep(backend=client)``), surviving worker loss.

:class:`DaskShards` is an executor of ``kernels.hybrid.transition``.
Set-up (once): the shards are split into consecutive groups, one per worker;
each group's rows of the data are scattered to its worker, where a
:class:`~pymc_partitions.distributed.host.ShardHost` actor keeps them with the
group's labels.  Each iteration the driver plans (``kernels.hybrid.plan_iteration``,
O(K p) to every worker), every host sweeps its shards with its numba threads,
and the driver merges what comes back: O(K s) summaries per shard and the
labels (which ``pm.sample`` needs for ``z``).  The next plan carries each
shard's relabelling (O(K)), so labels never travel back to the workers.

Actor calls go from the client to the workers directly, not through the
scheduler, which keeps an iteration's overhead to two messages per worker.

Worker loss: if a host's worker dies, the iteration is finished by rebuilding
that host's shards on a live worker from the last recorded state -- the data,
which the driver keeps, and the canonical labels of the last merge -- and
running them with the same plan and seed.  A shard's iteration is a function
of exactly those, so the chain is the one a run without the failure gives.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import time

import numpy as np

from pymc_partitions.distributed.host import ShardHost
from pymc_partitions.kernels import hybrid

LOSS_TIMEOUT = 30.0
"""Seconds to wait for the scheduler to confirm that a worker whose call failed is gone."""


class DaskShards:
    """Shards of ``data`` (the driver's copy, kept for recovery) on the workers of ``client``.

    ``data`` are in the coordinates of the driver's kernel model (``model.data``,
    relative to its origin), as the hosts use them (``ShardHost``).

    ``volume`` holds the bytes of the last iteration: ``sent`` (plans and
    relabellings), ``received`` (summaries) and ``labels``.
    """

    def __init__(self, client, family, data, n_shards):
        self.client = client
        self.family = int(family)
        self.n_shards = n_shards
        self._data = data
        self._bounds = hybrid.shard_bounds(data.shape[0], n_shards)
        n_groups = min(len(self._live_workers()), n_shards)
        self._groups = [group for group in np.array_split(np.arange(n_shards), n_groups)]
        self._hosts = [None] * n_groups
        self._host_futures = [None] * n_groups
        self._host_workers = [None] * n_groups
        self._z = None
        self._relabel = [None] * n_groups
        self.volume = {"sent": 0, "received": 0, "labels": 0}

    def __reduce__(self):
        raise TypeError(
            "a HybridDPStep with a Dask backend holds a live Client and cannot be copied to another process: "
            "run pm.sample(..., cores=1) (each chain's shards still run on the cluster)"
        )

    # -- the iteration --------------------------------------------------------------

    def reset(self, model, z):
        """Give the hosts canonical labels ``z`` (starting them the first time); returns the per-shard summaries."""
        self._z = z
        for h in range(len(self._groups)):
            if self._hosts[h] is None:
                self._start(h)
            else:
                self._call(h, "set_labels", lambda h: (z[self._rows(h)],))
            self._relabel[h] = None
        return hybrid.summarize(model, z.astype(np.int64), self._bounds, int(z.max()) + 1)

    def run(self, model, z, bounds, plan, n_sweeps, n_clusters):
        """Steps 3-5 on the hosts' shards (``ShardHost.run``): ``(labels, new, offsets, counts, stats)``."""

        def arguments(h):
            return (model.params, model.prior, model.prior_params, plan, self._relabel[h], n_sweeps, n_clusters)

        results = self._call_all("run", arguments)
        self.volume["sent"] = sum(_nbytes(arguments(h)) for h in range(len(self._groups)))
        self.volume["received"] = sum(_nbytes(r[1:]) for r in results)
        self.volume["labels"] = sum(r[0].nbytes for r in results)
        labels = np.concatenate([r[0] for r in results]).astype(np.int64)
        new = np.concatenate([r[1] for r in results])
        offsets = np.zeros(self.n_shards + 1, dtype=np.int64)
        offsets[1:] = np.cumsum(n_clusters + new)
        return labels, new, offsets, np.concatenate([r[3] for r in results]), np.concatenate([r[4] for r in results])

    def merged(self, z, relabel, new, offsets, n_clusters):
        """Record the merged labels (for recovery) and each shard's relabelling, sent with the next plan."""
        for h, group in enumerate(self._groups):
            self._relabel[h] = [relabel[offsets[s] : offsets[s] + n_clusters + new[s]] for s in group]
        self._z = z

    # -- hosts and recovery ----------------------------------------------------------

    def _rows(self, h):
        group = self._groups[h]
        return slice(self._bounds[group[0]], self._bounds[group[-1] + 1])

    def _live_workers(self):
        return sorted(self.client.scheduler_info()["workers"])

    def _start(self, h):
        """(Re)build host ``h`` from the driver's data and the last recorded labels, on the least loaded live worker."""
        workers = self._live_workers()
        if not workers:
            raise RuntimeError("HybridDPStep: the Dask cluster has no workers left to rebuild lost shards on")
        load = {w: sum(hw == w for hw, host in zip(self._host_workers, self._hosts) if host is not None) for w in workers}
        worker = min(workers, key=lambda w: (load[w], workers.index(w)))
        rows = self._rows(h)
        group = self._groups[h]
        data = self.client.scatter(np.ascontiguousarray(self._data[rows]), workers=[worker], hash=False)
        bounds = self._bounds[group[0] : group[-1] + 2] - self._bounds[group[0]]
        future = self.client.submit(
            ShardHost, data, self._z[rows], bounds, group, self.family, actor=True, workers=[worker], pure=False
        )
        self._hosts[h] = future.result()
        self._host_futures[h] = future  # the worker keeps the actor only while its future is referenced
        self._host_workers[h] = worker
        self._relabel[h] = None

    def _call(self, h, method, arguments):
        return self._call_all(method, arguments, [h])[0]

    def _call_all(self, method, arguments, hosts=None):
        """``getattr(host, method)(*arguments(h))`` on every host, concurrently; lost hosts are rebuilt and rerun."""
        hosts = range(len(self._groups)) if hosts is None else hosts
        pending, lost = {}, []
        for h in hosts:
            try:
                pending[h] = getattr(self._hosts[h], method)(*arguments(h))
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
                    results[h] = getattr(self._hosts[h], method)(*arguments(h)).result()
                except (Exception, asyncio.CancelledError) as error:
                    self._confirm_lost(h, error)
        return [results[h] for h in hosts]

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
    """Bytes of the numpy arrays in ``values`` (nested tuples and lists; scalars count 8)."""
    if isinstance(values, np.ndarray):
        return values.nbytes
    if isinstance(values, (tuple, list)):
        return sum(_nbytes(v) for v in values)
    return 0 if values is None else 8
