"""Convergence probe of the sub-cluster split-merge kernel from one cluster (issue #30, part 1).

DP Normal-Gamma mixture (``alpha = 1``, hyperparameters from
``NormalGammaMixture.default_hyperparameters(X)``), 10 planted Gaussian
clusters in D = 8 (centres N(0, 10^2), unit noise), every item starting in
one cluster (``pm.sample``'s default start).  Each sampler runs at the kernel
level for a wall-time budget; the table gives, at checkpoints, the NMI to the
planted labels, the number of clusters and the log joint (computed outside
the timed steps).  Numba compilation is paid on a copy of the first 40,000
items (enough for the threaded passes) and reported separately.

Samplers: ``kernels.subcluster`` (``transition`` called from Python: passes
on numba threads; 8 shards; with the default options this is also
``HybridDPStep(n_proposals=10)``'s iteration), the plain hybrid iteration
(``kernels.hybrid.transition``, ``HybridDPStep`` without proposals, on the
same shards, in this process), the Jain-Neal
split-merge transition (``kernels.split_merge``, 4 proposals and a Gibbs
sweep per step) and the collapsed Gibbs sweep (``kernels.gibbs``).

Run:

    python benchmarks/subcluster_probe.py [--n 100000] [--seconds 60] [--samplers subcluster,split_merge,gibbs]
        [--proposals 10] [--launch-sweeps 2] [--refine-sweeps 1] [--shards 8] [--global-sweeps 1] [--seed 0]

The hybrid sampler with and without the sub-cluster proposals (issue #30, item 6):

    python benchmarks/subcluster_probe.py --n 100000 --seconds 120 --samplers hybrid,subcluster
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from sklearn.metrics import normalized_mutual_info_score

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

import pymc_partitions as pmp  # noqa: E402
from pymc_partitions import families, priors  # noqa: E402
from pymc_partitions.distributed.local import LocalShards  # noqa: E402
from pymc_partitions.kernels import gibbs, hybrid, split_merge, subcluster  # noqa: E402
from pymc_partitions.state import build_state, canonical_labels, log_joint, make_model  # noqa: E402


def planted(n, d=8, k=10, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(0.0, 10.0, (k, d))
    truth = rng.integers(0, k, n)
    return centers[truth] + rng.normal(0.0, 1.0, (n, d)), truth


def kernel_model(x, alpha=1.0):
    hyper = pmp.NormalGammaMixture.default_hyperparameters(x)
    hyper = [hyper[name] for name in ("mu0", "kappa0", "a0", "b0")]
    params = families.pack_params(families.NORMAL_GAMMA, x.shape[1], *hyper)
    return make_model(families.NORMAL_GAMMA, x, params, priors.DP, np.array([alpha]), np.zeros(0))


class WithState:
    """A sampler keeping a partition ``state`` of ``model``."""

    def labels(self):
        return canonical_labels(self.state)

    def log_joint(self):
        return log_joint(self.model, self.state)


class SubCluster(WithState):
    name = "subcluster"

    def __init__(self, model, rng, options):
        self.model, self.rng = model, rng
        self.state = build_state(model, np.zeros(model.data.shape[0], dtype=np.int64))
        self.algo = subcluster.init(model, self.state, options, rng)

    def step(self):
        self.state, self.algo, _ = subcluster.transition(self.model, self.state, self.algo, self.rng)

    def extra(self):
        c = self.algo.counts
        return f"splits {c[1]}/{c[0]}, merges {c[3]}/{c[2]} ({c[4]} early)"


class Hybrid:
    name = "hybrid"

    def __init__(self, model, rng, options):
        self.model, self.rng = model, rng
        self.executor = LocalShards(options.n_shards)
        z = np.zeros(model.data.shape[0], dtype=np.int32)
        self.sampler = hybrid.init(model, z, hybrid.Options(options.n_shards, max(1, options.n_global_sweeps)), self.executor)

    def step(self):
        self.sampler, _ = hybrid.transition(self.model, self.sampler, 1, self.rng, self.executor)

    def extra(self):
        return ""

    def labels(self):
        return self.sampler.z

    def log_joint(self):
        return hybrid.log_joint_of(self.model, self.sampler.counts, self.sampler.stats)


class SplitMerge(WithState):
    name = "split_merge"
    options = split_merge.Options(4, 2, True)

    def __init__(self, model, rng, options):
        self.model, self.rng = model, rng
        self.state = build_state(model, np.zeros(model.data.shape[0], dtype=np.int64))

    def step(self):
        self.state, _, _ = split_merge.transition(self.model, self.state, self.options, self.rng)

    def extra(self):
        return ""


class Gibbs(SplitMerge):
    name = "gibbs"

    def step(self):
        self.state, _ = gibbs.sweep(self.model, self.state, self.rng)


SAMPLERS = {cls.name: cls for cls in (SubCluster, Hybrid, SplitMerge, Gibbs)}


WARM_ITEMS = 2 * subcluster.PARALLEL_MIN_ITEMS
"""Items of the copy the samplers compile on: enough for the passes that run on numba threads."""


def run(cls, x, truth, seconds, options, seed=0):
    """Steps of ``cls`` for ``seconds`` of stepping time; rows (time, iterations, K, NMI, log joint)."""
    small = kernel_model(x[: min(len(x), WARM_ITEMS)])  # compile on a smaller copy (same types, threaded passes too)
    start = time.perf_counter()
    warm = cls(small, np.random.default_rng(seed), options)
    for _ in range(2):
        warm.step()
    compile_time = time.perf_counter() - start
    model = kernel_model(x)
    sampler = cls(model, np.random.default_rng(seed), options)
    rows, elapsed, iterations, next_report = [], 0.0, 0, 0.0
    while elapsed < seconds:
        start = time.perf_counter()
        sampler.step()
        elapsed += time.perf_counter() - start
        iterations += 1
        if elapsed >= next_report or elapsed >= seconds:
            z = sampler.labels()
            nmi = normalized_mutual_info_score(truth, z)
            rows.append((elapsed, iterations, int(z.max()) + 1, nmi, sampler.log_joint(), sampler.extra()))
            next_report = max(next_report * 1.5, elapsed + 1.0)
    return compile_time, rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--samplers", default="subcluster,split_merge,gibbs")
    parser.add_argument("--proposals", type=int, default=10)
    parser.add_argument("--launch-sweeps", type=int, default=2)
    parser.add_argument("--refine-sweeps", type=int, default=1)
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--global-sweeps", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0, help="the samplers' random seed (the data's is fixed)")
    args = parser.parse_args()
    x, truth = planted(args.n)
    options = subcluster.Options(
        args.proposals, args.launch_sweeps, args.refine_sweeps, args.shards, args.global_sweeps
    )
    print(f"$ python benchmarks/subcluster_probe.py {' '.join(sys.argv[1:])}")
    print(f"n = {args.n}, D = 8, 10 planted clusters, DP(1) Normal-Gamma, default hyperparameters, start: one cluster")
    print(f"subcluster options: {options} (driver interpreted, passes on numba threads)")
    for name in args.samplers.split(","):
        compile_time, rows = run(SAMPLERS[name], x, truth, args.seconds, options, args.seed)
        print(f"\n{name} (compile and two steps on {min(args.n, WARM_ITEMS)} items: {compile_time:.1f} s)")
        print(f"{'time (s)':>9} {'iters':>6} {'K':>4} {'NMI':>7} {'log joint':>15}  notes")
        for elapsed, iterations, k, nmi, lj, extra in rows:
            print(f"{elapsed:9.1f} {iterations:6d} {k:4d} {nmi:7.4f} {lj:15.1f}  {extra}")
        reached = [row[0] for row in rows if row[3] >= 0.99]
        print(f"first checkpoint with NMI >= 0.99: {f'{reached[0]:.1f} s' if reached else 'none'}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
