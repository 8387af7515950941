"""A sub-cluster pass over items at high D: the item loop against the blocked pass and the BLAS floor (issue #53).

A pass of ``SubClusterSplitMergeStep`` (``kernels.passes.pass_shard``) does, per item ``h`` of a proposal's two
clusters, two O(d²) log densities ``log w_t + log N(x_h | μ_t, Σ_t)`` (t = 0, 1), draws the side, and adds the
item's statistics ``[1, x, x xᵀ]`` (Normal-inverse-Wishart: d² more) to that side.  On the data of
``benchmarks/subcluster.py``'s size (e) (DPMMSubClusters.jl's generator) split into two planted clusters with θ
drawn from their posteriors, this times, as medians of ``--repeats`` interleaved rounds:

* ``loop``: the pass as it was (a numba loop of ``families.log_density`` for both sides and ``item_stats``);
* ``pass``: ``passes.pass_shard`` as it is (its log densities in blocks of ``passes.PASS_BLOCK`` items by
  ``families.log_densities`` from ``passes.BLOCK_MIN_PARAMS`` parameters on, the loop's recomputation for the
  items within ``FAR_LOG_ODDS`` of a tie);
* ``densities, loop`` / ``densities, block``: the two sides' log densities alone, item by item and by
  ``families.log_densities``; ``statistics``: the item statistics added per side alone (a numba loop);
* ``floor``: the same products by numpy on precomputed inputs: ``X [Λ_0ᵀ Λ_1ᵀ]`` (the whitening of both
  sides) and ``X_tᵀ X_t`` for each side (its second moments), one BLAS call each.

Accuracy: the largest relative difference of the block log densities from the loop's, and whether the pass's
sides and sums equal the loop's (the sides bit for bit; the sums too, they are added in the same order).
OpenBLAS on one thread (set before numpy loads): the passes run one per shard on the calling thread.

Run:  python benchmarks/pass_densities.py [--n 50000] [--dims 8 32 64 128] [--repeats 5]
"""

import argparse
import os
import sys
import time

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--n", type=int, default=50_000, help="items of the pass")
parser.add_argument("--dims", nargs="+", type=int, default=[8, 32, 64, 128])
parser.add_argument("--repeats", type=int, default=5)
args = parser.parse_args()
os.environ["OPENBLAS_NUM_THREADS"] = "1"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
from numba import njit  # noqa: E402

import subcluster as race  # noqa: E402
from pymc_partitions import families  # noqa: E402
from pymc_partitions.kernels import passes  # noqa: E402
from pymc_partitions.kernels.streams import keyed_uniform  # noqa: E402

NIW = families.TAGS[families.NORMAL_INVERSE_WISHART]


@njit(cache=True)
def loop_pass(family, data, params, theta, log_w, seed, items, sides, stats, sizes):
    """The pass's item loop before the blocks: both log densities by ``log_density``, the side, the sums."""
    item = np.empty(stats.shape[1])
    log_q = 0.0
    for r in range(items.shape[0]):
        h = items[r]
        x = data[h]
        gap = (log_w[1] + families.log_density(family, theta[1], x, params)) - (
            log_w[0] + families.log_density(family, theta[0], x, params))
        p = 1.0 / (1.0 + np.exp(-gap)) if gap >= 0.0 else np.exp(gap) / (1.0 + np.exp(gap))
        side = 1 if keyed_uniform(seed, h) < p else 0
        v = -gap if side == 1 else gap
        log_q -= v + np.log1p(np.exp(-v)) if v > 0.0 else np.log1p(np.exp(v))
        sides[r] = side
        sizes[side] += 1
        families.item_stats(family, x, item)
        for c in range(item.shape[0]):
            stats[side, c] += item[c]
    return log_q


@njit(cache=True)
def loop_densities(family, data, params, theta, out):
    for i in range(data.shape[0]):
        for t in range(theta.shape[0]):
            out[i, t] = families.log_density(family, theta[t], data[i], params)


@njit(cache=True)
def statistics(family, data, sides, stats):
    item = np.empty(stats.shape[1])
    for i in range(data.shape[0]):
        families.item_stats(family, data[i], item)
        for c in range(item.shape[0]):
            stats[sides[i], c] += item[c]


@njit(cache=True)
def cluster_stats(family, x, labels, k):
    stats = np.zeros((k, families.stat_size(family, x.shape[1])))
    item = np.empty(stats.shape[1])
    for i in range(x.shape[0]):
        families.item_stats(family, x[i], item)
        for r in range(item.shape[0]):
            stats[labels[i], r] += item[r]
    return stats


def problem(d, rng):
    """Two planted clusters of size (e)'s generator in D = d, centred; θ drawn from their posteriors."""
    x, truth = race.dpmm_gaussian(args.n, d, 2, race.DPMM_MEAN_VARIANCE, rng)
    x = np.ascontiguousarray(x - x.mean(axis=0))
    hyper = families.normal_inverse_wishart.default_hyperparameters(x)
    params = families.pack_params(families.NORMAL_INVERSE_WISHART, d, hyper["mu0"], hyper["kappa0"], hyper["nu0"],
                                  hyper["Psi0"])
    stats = cluster_stats(NIW, x, truth, 2)
    theta = np.empty((2, families.param_size(families.NORMAL_INVERSE_WISHART, d)))
    for t in range(2):
        families.draw_params(families.NORMAL_INVERSE_WISHART, stats[t], params, rng, theta[t])
    log_w = np.log(np.bincount(truth, minlength=2) / args.n)
    return x, params, theta, log_w


def main():
    load_before = os.getloadavg()
    rng = np.random.default_rng(0)
    rows = []
    for d in args.dims:
        x, params, theta, log_w = problem(d, rng)
        n = x.shape[0]
        items = np.arange(n, dtype=np.int64)
        bounds = np.array([0, n], dtype=np.int64)
        seed = np.int64(12345)
        plan = passes.PassPlan(items, bounds, 0, False, theta, log_w, seed, np.zeros(n, dtype=np.int64), -1, True)
        width = families.stat_size(families.NORMAL_INVERSE_WISHART, d)
        out = {}

        def run_loop():
            out["loop"] = (np.empty(n, dtype=np.int64), np.zeros((2, width)), np.zeros(2, dtype=np.int64))
            out["loop_q"] = loop_pass(NIW, x, params, theta, log_w, seed, items, *out["loop"])

        def run_pass():
            out["pass"] = (np.empty(n, dtype=np.int64), np.zeros((2, width)), np.zeros(2, dtype=np.int64))
            out["pass_q"] = passes.pass_shard(NIW, x, params, plan, 0, n, *out["pass"])

        dens_loop = np.empty((n, 2))
        dens_block = np.empty((n, 2))

        def run_dens_loop():
            loop_densities(NIW, x, params, theta, dens_loop)

        def run_dens_block():
            families.log_densities(families.NORMAL_INVERSE_WISHART, theta, x, params, dens_block)

        def run_stats():
            statistics(NIW, x, out["loop"][0], np.zeros((2, width)))

        factors = np.ascontiguousarray(theta[:, d : d + d * d].reshape(2 * d, d))
        whitened = np.empty((n, 2 * d))

        def run_floor():
            np.matmul(x, factors.T, out=whitened)
            sides = out["loop"][0]
            for t in range(2):
                part = x[sides == t]
                part.T @ part

        fns = {"loop": run_loop, "pass": run_pass, "densities, loop": run_dens_loop,
               "densities, block": run_dens_block, "statistics": run_stats, "floor": run_floor}
        compile_times = {}
        for name, fn in fns.items():
            start = time.perf_counter()
            fn()
            compile_times[name] = time.perf_counter() - start
        times = np.empty((args.repeats, len(fns)))
        for r in range(args.repeats):
            for c, fn in enumerate(fns.values()):
                start = time.perf_counter()
                fn()
                times[r, c] = time.perf_counter() - start
        medians = dict(zip(fns, np.median(times, axis=0)))
        same_sides = bool(np.array_equal(out["loop"][0], out["pass"][0]))
        same_sums = bool(np.array_equal(out["loop"][1], out["pass"][1]))
        q_diff = abs(out["loop_q"] - out["pass_q"])
        rel = float(np.max(np.abs(dens_block - dens_loop) / np.maximum(1.0, np.abs(dens_loop))))
        rows.append((d, medians, same_sides, same_sums, q_diff, rel, float(np.median(times[:, 0] / times[:, 1]))))
        print(f"  D={d}: " + ", ".join(f"{k} {v:.4f} s" for k, v in medians.items()), file=sys.stderr, flush=True)
    load_after = os.getloadavg()
    print(f"$ python benchmarks/pass_densities.py {' '.join(sys.argv[1:])}")
    print(f"n = {args.n:,} items, 2 sides, median of {args.repeats} interleaved rounds, OPENBLAS_NUM_THREADS=1; load "
          f"average (1 min) before {load_before[0]:.2f}, after {load_after[0]:.2f}; passes.BLOCK_MIN_PARAMS = "
          f"{passes.BLOCK_MIN_PARAMS} (blocked from D = "
          f"{min(d for d in range(1, 200) if 1 + d + d * d >= passes.BLOCK_MIN_PARAMS)})\n")
    print("| D | loop pass [s] | pass now [s] | loop / now | densities, loop [s] | densities, block [s] | "
          "statistics [s] | floor [s] | now / floor | same sides | same sums | log q diff | max rel. diff |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for d, m, sides, sums, q_diff, rel, speedup in rows:
        print(f"| {d} | {m['loop']:.4f} | {m['pass']:.4f} | {speedup:.2f} | {m['densities, loop']:.4f} | "
              f"{m['densities, block']:.4f} | {m['statistics']:.4f} | {m['floor']:.4f} | "
              f"{m['pass'] / m['floor']:.1f} | {sides} | {sums} | {q_diff:.1e} | {rel:.1e} |")


if __name__ == "__main__":
    main()
