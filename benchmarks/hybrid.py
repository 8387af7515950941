"""The hybrid sampler (``HybridDPStep``): the paper's synthetic study, scale, shards, Dask, warm start.

Sub-commands (default: all), each printing its tables and saving a plot in
``docs/figures/``:

* ``f1`` -- the paper's Sec. 5.1: 100 items from two unit-variance Gaussians at
  ±5·1 in D dimensions; pairwise F1 of the partition against the truth over
  iterations for collapsed Gibbs, a fully uncollapsed sampler (the paper's
  comparison: weights of the K occupied and U = 5 empty atoms from
  Dir(m_1..m_K, α/U..α/U), empty atoms' parameters from the prior, every item
  reassigned given them) and the hybrid on 4 shards (one shard: collapsed Gibbs);
  mean of 10 runs, each from items assigned uniformly at random to 10 clusters.
* ``scale`` -- n = 10^5 and 10^6, D = 2 and 16, 10 well-separated clusters,
  DP Normal-Gamma: time per iteration at the planted partition for the
  collapsed Gibbs sweep (``GibbsStep``'s kernel) and the hybrid (16 shards)
  in this process and on a Dask ``LocalCluster`` with 1 and 2 worker
  processes; bytes per iteration; time from a random 10-cluster start to
  99 % of the way to the planted partition's log joint.
* ``shards`` -- n = 10^5, D = 2, 8 to 64 shards on 2 workers: time and bytes
  per iteration, bytes predicted from K and s.
* ``warm`` -- warm against cold start (the paper's Figure 3 for the DP): 16
  shards, n = 10^5, from one cluster; clusters and log joint over time.
* ``compile`` -- the first and second iteration of the serial and the
  numba-parallel hybrid paths and of a Gibbs sweep in this process: run it
  with an empty ``NUMBA_CACHE_DIR`` for the compilation time, again for the
  time to load the cache.

Times are medians of repeats in one run (the machine is shared); numba
compilation is reported separately.  Run:

    python benchmarks/hybrid.py [f1|scale|shards|warm|compile] [--quick]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

import numpy as np

from pymc_partitions import families, priors
from pymc_partitions.kernels import gibbs, hybrid, twofold
from pymc_partitions.state import build_state, canonical_labels, log_joint, make_model

FIGURES = os.path.join(os.path.dirname(__file__), "..", "docs", "figures")
ALPHA = 1.0


def ng_model(x, alpha=ALPHA):
    params = families.pack_params(families.NORMAL_GAMMA, x.shape[1], 0.0, 0.01, 2.0, 2.0)
    return make_model(families.NORMAL_GAMMA, x, params, priors.DP, np.array([alpha]), np.zeros(0))


def planted(n, d, k=10, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(0.0, 10.0, (k, d))
    truth = rng.integers(0, k, n)
    return centers[truth] + rng.normal(0.0, 1.0, (n, d)), truth


# --------------------------------------------------------------------------- samplers at the kernel level


class Gibbs:
    name = "GibbsStep (collapsed)"

    def __init__(self, model, z, rng):
        self.model, self.rng = model, rng
        self.state = build_state(model, z.astype(np.int64))

    def step(self):
        self.state, _ = gibbs.sweep(self.model, self.state, self.rng)

    def labels(self):
        return canonical_labels(self.state)

    def log_joint(self):
        return log_joint(self.model, self.state)


class Hybrid:
    """``HybridDPStep``'s kernel (``hybrid.KERNEL``) on ``n_shards`` shards, in this process (``executor=None``) or
    on a ``distributed.cluster.DaskShards``; ``hot(t)`` hot shards at iteration ``t``."""

    def __init__(self, model, z, rng, n_shards, name, executor=None, hot=lambda t: 1, n_sweeps=1):
        self.model, self.rng, self.executor, self.name, self.hot, self.n_sweeps = model, rng, executor, name, hot, n_sweeps
        self.state = build_state(model, z.astype(np.int64))
        labels = canonical_labels(self.state).astype(np.int64)
        self.sampler = hybrid.KERNEL.init(model, labels, hybrid.Options(n_shards, n_sweeps), rng)._replace(executor=executor)
        self.t = 0

    def step(self):
        sampler = self.sampler._replace(n_hot=np.int64(self.hot(self.t)))
        self.state, self.sampler, self.info = hybrid.KERNEL.transition(self.model, self.state, sampler, self.rng)
        self.t += 1

    def labels(self):
        return self.info.labels if self.t else canonical_labels(self.state)

    def log_joint(self):
        return log_joint(self.model, self.state)


def dask_cluster(workers, threads):
    from distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
        env={"NUMBA_NUM_THREADS": str(threads)},
    )
    return cluster, Client(cluster)


def timed_steps(sampler, n_steps):
    times = []
    for _ in range(n_steps):
        start = time.perf_counter()
        sampler.step()
        times.append(time.perf_counter() - start)
    return times


# --------------------------------------------------------------------------- f1: the paper's Sec. 5.1


def pair_f1(z, truth):
    """F1 of the co-clustered pairs of ``z`` against those of ``truth``."""
    same_z = z[:, None] == z[None, :]
    same_t = truth[:, None] == truth[None, :]
    upper = np.triu(np.ones_like(same_z), 1)
    tp = np.sum(same_z & same_t & upper)
    fp = np.sum(same_z & ~same_t & upper)
    fn = np.sum(~same_z & same_t & upper)
    return 2 * tp / max(2 * tp + fp + fn, 1)


def make_uncollapsed():
    from numba import njit

    from pymc_partitions.families._common import log_gamma_variate
    from pymc_partitions.kernels.moves import choose

    @njit(cache=True)
    def uncollapsed_sweep(model, z, n_empty, rng):
        """The paper's uncollapsed comparison (Sec. 5.1): K occupied and U empty atoms, then all items given them."""
        n, d = model.data.shape
        k = z.max() + 1
        width = families.stat_size(model.family, d)
        stats = np.zeros((k + n_empty, width))
        item = np.empty(width)
        for i in range(n):
            families.item_stats(model.family, model.data[i], item)
            stats[z[i]] += item
        log_w = np.empty(k + n_empty)
        theta = np.empty((k + n_empty, families.param_size(model.family, d)))
        for c in range(k + n_empty):
            shape = stats[c, 0] if c < k else model.prior_params[0] / n_empty
            log_w[c] = log_gamma_variate(rng, shape)
            families.draw_params(model.family, stats[c], model.params, rng, theta[c])
        out = np.empty(n, dtype=np.int64)
        weights = np.empty(k + n_empty)
        for i in range(n):
            for c in range(k + n_empty):
                weights[c] = log_w[c] + families.log_density(model.family, theta[c], model.data[i], model.params)
            out[i], _ = choose(weights, k + n_empty, -1, rng)
        return out

    return uncollapsed_sweep


class Uncollapsed:
    name = "uncollapsed (U = 5)"

    def __init__(self, model, z, rng, sweep):
        from pymc_partitions.labels import relabel

        self.model, self.rng, self.sweep = model, rng, sweep
        self.z = relabel(z).astype(np.int64)

    def step(self):
        from pymc_partitions.labels import relabel

        self.z = relabel(self.sweep(self.model, self.z, 5, self.rng)).astype(np.int64)

    def labels(self):
        return self.z


def bench_f1(quick):
    dims = [2, 16, 64] if quick else [2, 8, 32, 128]
    runs, iterations = (3, 30) if quick else (10, 50)
    uncollapsed = make_uncollapsed()
    results = {}
    print("\n## F1 over iterations (Sec. 5.1: n = 100, two components at ±5·1, identity covariance)\n")
    print(f"mean pairwise F1 of {runs} runs, each from a uniformly random assignment to 10 clusters; the hybrid on 4 shards\n")
    print("| D | sampler | iter 1 | iter 5 | iter 10 | iter 20 | last |")
    print("|---|---|---|---|---|---|---|")
    for d in dims:
        rng = np.random.default_rng(d)
        curves = {}
        for r in range(runs):
            truth = np.repeat([0, 1], 50)
            x = np.where(truth[:, None] == 0, -5.0, 5.0) + rng.normal(0.0, 1.0, (100, d))
            params = families.pack_params(families.NORMAL_GAMMA, d, 0.0, 0.1, 1.0, 1.0)
            model = make_model(families.NORMAL_GAMMA, x, params, priors.DP, np.array([1.0]), np.zeros(0))
            z0 = np.random.default_rng(r).integers(0, 10, 100).astype(np.int32)
            samplers = [
                Gibbs(model, z0, rng),
                Uncollapsed(model, z0, rng, uncollapsed),
                Hybrid(model, z0, rng, 4, "hybrid, 4 shards"),
            ]
            for sampler in samplers:
                f1 = []
                for _ in range(iterations):
                    sampler.step()
                    f1.append(pair_f1(sampler.labels(), truth))
                curves.setdefault(sampler.name, []).append(f1)
        for name, rows in curves.items():
            mean = np.mean(rows, axis=0)
            results[(d, name)] = mean
            print(f"| {d} | {name} | " + " | ".join(f"{mean[t]:.2f}" for t in (0, 4, 9, 19, iterations - 1)) + " |")
    plot_f1(results, dims)


def plot_f1(results, dims):
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(dims), figsize=(3.2 * len(dims), 3), sharey=True)
    for ax, d in zip(axes, dims):
        for (dd, name), mean in results.items():
            if dd == d:
                ax.plot(np.arange(1, len(mean) + 1), mean, label=name)
        ax.set_title(f"D = {d}")
        ax.set_xlabel("iteration")
    axes[0].set_ylabel("pairwise F1")
    axes[-1].legend(fontsize=7)
    fig.tight_layout()
    save(fig, "hybrid_f1.png")


def save(fig, name):
    os.makedirs(FIGURES, exist_ok=True)
    path = os.path.join(FIGURES, name)
    fig.savefig(path, dpi=110)
    print(f"\n(plot: docs/figures/{name})")


# --------------------------------------------------------------------------- scale


def bench_scale(quick):
    sizes = [100_000] if quick else [100_000, 1_000_000]
    dims = [2, 16]
    repeats = 3 if quick else 5
    n_shards = 16
    print(f"\n## Time per iteration at the planted partition ({n_shards} shards; median of {repeats})\n")
    first_iterations(n_shards)  # compile (or load from the cache) outside the timings; see ``compile``
    clusters = {}
    for workers in (1, 2):
        clusters[workers] = dask_cluster(workers, max(1, 2 // workers))
    clients = {w: c for w, (_, c) in clusters.items()}
    rows = []
    print("| n | D | sampler | s / iteration | x Gibbs | bytes out / iter | bytes in / iter (+ labels) |")
    print("|---|---|---|---|---|---|---|")
    for n in sizes:
        for d in dims:
            x, truth = planted(n, d)
            model = ng_model(x)
            per_iter = {}
            for sampler in scale_samplers(model, truth, n_shards, clients):
                timed_steps(sampler, 1)  # first call: caches, workers' compilation
                per_iter[sampler.name] = float(np.median(timed_steps(sampler, repeats)))
                volume = getattr(getattr(sampler, "executor", None), "volume", None)
                out = f"{volume['sent']:,}" if volume else "-"
                inn = f"{volume['received']:,} (+ {volume['labels']:,})" if volume else "-"
                ratio = per_iter[sampler.name] / per_iter["GibbsStep (collapsed)"]
                print(f"| {n:,} | {d} | {sampler.name} | {per_iter[sampler.name]:.3f} | {ratio:.2f} | {out} | {inn} |", flush=True)
                rows.append((n, d, sampler.name, per_iter[sampler.name]))
            overhead_1 = per_iter["hybrid, Dask 1 worker"] - per_iter["hybrid, local"]
            print(f"|  |  | Dask overhead over local (1 worker) | {overhead_1:+.3f} |  |  |  |")
    print("\n## Time to 99 % of the way from a random 10-cluster start to the planted log joint\n")
    print("| n | D | sampler | iterations | seconds | K at end |")
    print("|---|---|---|---|---|---|")
    budget = 30.0 if quick else 90.0
    for n in sizes:
        for d in dims:
            x, truth = planted(n, d)
            model = ng_model(x)
            target_state = build_state(model, truth.astype(np.int64))
            target = log_joint(model, target_state)
            z0 = np.random.default_rng(1).integers(0, 10, n).astype(np.int32)
            for sampler in scale_samplers(model, z0, n_shards, clients, include_dask=(n == sizes[0])):
                initial = sampler.log_joint()
                goal = initial + 0.99 * (target - initial)
                elapsed, iterations = 0.0, 0
                while sampler.log_joint() < goal and elapsed < budget:
                    begin = time.perf_counter()
                    sampler.step()
                    elapsed += time.perf_counter() - begin
                    iterations += 1
                reached = sampler.log_joint() >= goal
                k = len(np.unique(sampler.labels()))
                print(f"| {n:,} | {d} | {sampler.name} | {iterations} | {elapsed:.1f}{'' if reached else ' (not reached)'} | {k} |", flush=True)
    for cluster, client in clusters.values():
        client.close()
        cluster.close()
    return rows


def scale_samplers(model, z, n_shards, clients, include_dask=True):
    from pymc_partitions.distributed.cluster import DaskShards

    yield Gibbs(model, z, np.random.default_rng(2))
    yield Hybrid(model, z, np.random.default_rng(2), n_shards, "hybrid, local")
    if include_dask:
        for workers, client in sorted(clients.items()):
            executor = DaskShards(client, families.NORMAL_GAMMA, model.data, n_shards)
            label = f"hybrid, Dask {workers} worker{'s' if workers > 1 else ''}"
            yield Hybrid(model, z, np.random.default_rng(2), n_shards, label, executor=executor)


# --------------------------------------------------------------------------- compile


def first_iterations(n_shards):
    """Seconds of the first and second iteration of each path (numba compiles, or loads its cache, in the first)."""
    rows = []
    for n, path in ((2000, "serial shards"), (twofold.PARALLEL_MIN_ITEMS + 10_000, "parallel shards")):
        x, truth = planted(n, 2)
        sampler = Hybrid(ng_model(x), truth, np.random.default_rng(0), n_shards, "hybrid")
        rows.append((f"hybrid, {path}", n, *timed_steps(sampler, 2)))
    x, truth = planted(2000, 2)
    rows.append(("GibbsStep sweep", 2000, *timed_steps(Gibbs(ng_model(x), truth, np.random.default_rng(0)), 2)))
    return rows


def bench_compile(quick):
    cache = os.environ.get("NUMBA_CACHE_DIR", "numba's default")
    print(f"\n## First iterations in a fresh process (NUMBA_CACHE_DIR: {cache}; 16 shards, D = 2)\n")
    print("| kernel | n | first iteration (s) | second (s) |")
    print("|---|---|---|---|")
    for name, n, first, second in first_iterations(16):
        print(f"| {name} | {n:,} | {first:.2f} | {second:.4f} |", flush=True)


# --------------------------------------------------------------------------- shards


def bench_shards(quick):
    from pymc_partitions.distributed.cluster import DaskShards

    n, d = 100_000, 2
    x, truth = planted(n, d)
    model = ng_model(x)
    cluster, client = dask_cluster(2, 1)
    print(f"\n## More shards than cores: n = {n:,}, D = {d}, 2 workers, at the planted partition (median of 5)\n")
    print("| shards | s / iteration | bytes out | predicted | bytes in (summaries) | predicted | labels |")
    print("|---|---|---|---|---|---|---|")
    s = families.stat_size(families.NORMAL_GAMMA, d)
    p = families.param_size(families.NORMAL_GAMMA, d)
    for n_shards in (8, 16, 32, 64):
        executor = DaskShards(client, families.NORMAL_GAMMA, model.data, n_shards)
        sampler = Hybrid(model, truth, np.random.default_rng(3), n_shards, "dask", executor=executor)
        timed_steps(sampler, 2)
        seconds = float(np.median(timed_steps(sampler, 5)))
        k = sampler.info.n_clusters
        hosts = len(executor._groups)
        # per host: plan (role, anchor, log weights, theta, tail params, two scalars), params, relabel per shard
        plan_bytes = 8 * (n_shards + 2 * k + k * p + 1 + 2) + 8 * len(model.params) + 8 * 2
        predicted_out = hosts * plan_bytes + 8 * n_shards * k
        predicted_in = n_shards * (k * 8 * (1 + s) + 2 * 8) + 8 * hosts
        v = executor.volume
        print(f"| {n_shards} | {seconds:.3f} | {v['sent']:,} | ≈ {predicted_out:,} | {v['received']:,} | ≈ {predicted_in:,} | {v['labels']:,} |", flush=True)
    client.close()
    cluster.close()


# --------------------------------------------------------------------------- warm start


def bench_warm(quick):
    n, d, n_shards = 100_000, 2, 16
    iterations = 48 if quick else 400
    warm_iterations = iterations // 8
    x, truth = planted(n, d)
    model = ng_model(x)
    z0 = np.zeros(n, dtype=np.int32)

    def schedule(t):
        return 1 if t >= warm_iterations else max(1, math.ceil(n_shards * (1 - t / warm_iterations)))

    print(f"\n## Warm against cold start: n = {n:,}, {n_shards} shards, from one cluster; warm start over the first {warm_iterations} iterations\n")
    print("| start | iteration | seconds | clusters | log joint |")
    print("|---|---|---|---|---|")
    traces = {}
    for name, hot in (("cold", lambda t: 1), ("warm", schedule)):
        sampler = Hybrid(model, z0, np.random.default_rng(4), n_shards, name, hot=hot)
        elapsed, trace = 0.0, []
        for t in range(iterations):
            begin = time.perf_counter()
            sampler.step()
            elapsed += time.perf_counter() - begin
            trace.append((elapsed, sampler.counts.shape[1], sampler.log_joint()))
            if t + 1 in (1, warm_iterations, 2 * warm_iterations, iterations // 2, iterations):
                print(f"| {name} | {t + 1} | {elapsed:.1f} | {trace[-1][1]} | {trace[-1][2]:.0f} |", flush=True)
        traces[name] = np.array(trace)
    truth_lj = log_joint(model, build_state(model, truth.astype(np.int64)))
    print(f"\nplanted partition: 10 clusters, log joint {truth_lj:.0f}")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(8, 3))
    for name, trace in traces.items():
        axes[0].plot(trace[:, 0], trace[:, 1], marker=".", label=name)
        axes[1].plot(trace[:, 0], trace[:, 2], marker=".", label=name)
    axes[1].axhline(truth_lj, color="grey", lw=0.8, ls="--", label="planted")
    axes[0].set_ylabel("clusters")
    axes[1].set_ylabel("log joint")
    for ax in axes:
        ax.set_xlabel("seconds")
        ax.legend(fontsize=7)
    fig.tight_layout()
    save(fig, "hybrid_warm_start.png")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", nargs="*", default=["scale", "shards", "warm", "f1"])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    args = parser.parse_args()
    print(f"$ python benchmarks/{os.path.basename(__file__)} {' '.join(sys.argv[1:])}")
    for what in args.what:
        {"f1": bench_f1, "scale": bench_scale, "shards": bench_shards, "warm": bench_warm, "compile": bench_compile}[what](args.quick)


if __name__ == "__main__":
    main()
