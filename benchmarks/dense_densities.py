"""Block log densities (``families.log_densities``) against the per-item loop and the BLAS floor.

The per-item work of the samplers with explicit cluster parameters (the
hybrid's cold shards, the sub-cluster passes) is the log density of n items
under K parameter rows.  For each family, D and K this times, as medians over
interleaved rounds (each round runs all three, so machine noise hits them
alike; ratios are medians of the per-round ratios):

* ``loop``: ``families.log_density`` for every (item, row) in a numba loop
  (what the kernels did);
* ``block``: ``families.log_densities`` on all n items (its products tiled to
  at most ``_common.GEMM_MAX_WORK`` multiply-adds each, single-threaded);
* ``floor``: the same arithmetic as one BLAS product of the same shape,
  numpy's ``A @ Wᵀ`` on precomputed inputs, with A the block's left factor
  for all n items (``X`` for the linear families, ``[X², X]`` for the
  Normal-Gamma) -- for the Normal-inverse-Wishart, whose product
  ``X [Λ_1ᵀ … Λ_Kᵀ]`` has n·K·D entries, one product per 4·10^6 output
  entries into one reused buffer.  The floor leaves out what the block adds
  to the product: the per-item constants (log factorials of the counts for
  the Dirichlet-multinomial and Gamma-Poisson), the NIW's row norms.

The parameter rows are drawn with ``draw_params`` from planted clusters.
OpenBLAS runs single-threaded here (``OPENBLAS_NUM_THREADS=1``, set before
numpy loads; ``--blas-threads`` to change it): the block kernel keeps every
product on one thread anyway, and a multi-threaded floor on a shared 2-core
machine measures the machine's load, not the arithmetic.  "first call" is the
compilation (fresh numba cache unless ``--warm-cache``), once per family.
Accuracy: "max rel. diff" is ``max |block − loop| / max(1, |loop|)`` over the
entries, "diff / bound" is ``max |block − loop|`` over the rounding bound the
block returned (at most 1 if the bound holds).  The load average is printed
before and after the run; ``--plot PATH`` saves the ratios block / floor and
loop / block as a figure.

Run:  python benchmarks/dense_densities.py [--n 50000] [--repeats 5] [--families ng niw bb dm gp]
          [--dims 8 32 128] [--niw-dims 8 32] [--clusters 10 50] [--warm-cache] [--blas-threads 1]
          [--plot docs/figures/dense_densities.png]
"""

import argparse
import os
import sys
import tempfile
import time

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--n", type=int, default=50_000)
parser.add_argument("--repeats", type=int, default=5)
parser.add_argument("--families", nargs="+", default=["ng", "niw", "bb", "dm", "gp"],
                    choices=["ng", "niw", "bb", "cat", "dm", "gp"])
parser.add_argument("--dims", nargs="+", type=int, default=[8, 32, 128], help="D of the Normal-Gamma")
parser.add_argument("--niw-dims", nargs="+", type=int, default=[8, 32], help="D of the Normal-inverse-Wishart")
parser.add_argument("--clusters", nargs="+", type=int, default=[10, 50], help="K")
parser.add_argument("--warm-cache", action="store_true", help="use the existing numba cache instead of a fresh one")
parser.add_argument("--blas-threads", default="1", help="OPENBLAS_NUM_THREADS for this run (default 1)")
parser.add_argument("--plot", default=None, help="save a figure of the ratios to this path")
args = parser.parse_args()
os.environ["OPENBLAS_NUM_THREADS"] = args.blas_threads
if not args.warm_cache:
    os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="pmp-bench-numba-")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
from numba import njit  # noqa: E402

from pymc_partitions import families  # noqa: E402

NAMES = {
    "ng": families.NORMAL_GAMMA, "niw": families.NORMAL_INVERSE_WISHART, "bb": families.BETA_BERNOULLI,
    "cat": families.CATEGORICAL, "dm": families.DIRICHLET_MULTINOMIAL, "gp": families.GAMMA_POISSON,
}
LINEAR_D = 64
"""D of the Beta-Bernoulli, Dirichlet-multinomial and Gamma-Poisson rows (the categorical: 16 features x 4 values)."""


@njit(cache=True)
def loop_densities(family, theta, x, params, out):
    """``out[i, k] = families.log_density(θ_k, x_i)``, item by item: the kernels' loop."""
    for i in range(x.shape[0]):
        for k in range(theta.shape[0]):
            out[i, k] = families.log_density(family, theta[k], x[i], params)


def floor_product(a, w, out, rows):
    """``a @ wᵀ`` by numpy: one BLAS call, or one per ``rows`` rows of ``a`` into the same buffer ``out``."""
    for r0 in range(0, a.shape[0], rows):
        r1 = min(a.shape[0], r0 + rows)
        np.matmul(a[r0:r1], w.T, out=out[: r1 - r0])


@njit(cache=True)
def cluster_stats(family, x, labels, k):
    """Statistics rows of the planted clusters."""
    stats = np.zeros((k, families.stat_size(family, x.shape[1])))
    item = np.empty(stats.shape[1])
    for i in range(x.shape[0]):
        families.item_stats(family, x[i], item)
        for r in range(item.shape[0]):
            stats[labels[i], r] += item[r]
    return stats


def problem(name, n, d, k, rng):
    """Data (relative to their origin, as the kernels hold them), params and K drawn parameter rows."""
    family = NAMES[name]
    truth = rng.integers(0, k, n)
    if name in ("ng", "niw"):
        x = rng.normal(0.0, 4.0, (k, d))[truth] + rng.normal(size=(n, d))
        x -= families.origin(family, x)
        hyper = (np.zeros(d), 0.1, 2.0, np.ones(d)) if name == "ng" else (np.zeros(d), 0.1, d + 2.0, np.eye(d))
        width = d
    elif name == "bb":
        x = (rng.random((n, d)) < rng.beta(0.5, 0.5, (k, d))[truth]).astype(float)
        hyper, width = (1.0, 1.0), d
    elif name == "cat":
        categories = np.full(16, 4)
        probabilities = rng.dirichlet(np.ones(4), (k, 16))
        codes = (rng.random((n, 16, 1)) > np.cumsum(probabilities, axis=2)[truth]).sum(axis=2).clip(0, 3)
        x = families.categorical.one_hot(codes, categories)
        hyper, width = (np.ones(16), categories), 16
    else:
        x = rng.poisson(rng.gamma(0.5, 4.0, (k, d))[truth]).astype(float)
        hyper, width = ((np.ones(d),) if name == "dm" else (1.0, 1.0)), d
    params = families.pack_params(family, width, *hyper)
    tag = families.TAGS[family]
    stats = cluster_stats(tag, np.ascontiguousarray(x), truth, k)
    theta = np.empty((k, families.param_size(family, x.shape[1])))
    for c in range(k):
        families.draw_params(family, stats[c], params, rng, theta[c])
    return tag, np.ascontiguousarray(x), params, theta


def floor_inputs(name, x, theta):
    """The product the floor times: ``(a, w, out, rows)``, ``rows`` of ``a`` per BLAS call."""
    n, d = x.shape
    k = theta.shape[0]
    if name == "ng":
        a = np.hstack([x * x, x])
        w = np.hstack([-0.5 * theta[:, d : 2 * d], theta[:, d : 2 * d] * theta[:, :d]])
    elif name == "niw":
        w = np.ascontiguousarray(theta[:, d : d + d * d].reshape(k * d, d))
        rows = max(1, min(n, 4_000_000 // (k * d)))
        return x, w, np.empty((rows, k * d)), rows
    elif name in ("bb", "cat"):
        a, w = x, np.ascontiguousarray(theta[:, 1:])
    elif name == "dm":
        a, w = x, np.ascontiguousarray(theta)
    else:
        a, w = x, np.ascontiguousarray(theta[:, d:])
    return np.ascontiguousarray(a), np.ascontiguousarray(w), np.empty((n, k)), n


def configurations():
    for name in args.families:
        dims = {"ng": args.dims, "niw": args.niw_dims}.get(name, [LINEAR_D])
        for d in dims:
            for k in args.clusters:
                yield name, d, k


def plot(rows, path):
    """Bar chart of block / floor and loop / block per configuration (log scale), saved to ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{name} D={d} K={k}" for name, d, k, *_ in rows]
    where = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(max(6.0, 0.45 * len(rows) + 2.0), 4.0))
    ax.bar(where - 0.2, [row[6] for row in rows], 0.4, label="block / floor")
    ax.bar(where + 0.2, [row[8] for row in rows], 0.4, label="loop / block")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_yscale("log")
    ax.set_xticks(where, labels, rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("ratio of times (median of rounds)")
    ax.set_title(f"Block log densities, n = {args.n}, one BLAS thread")
    ax.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    load_before = os.getloadavg()
    rng = np.random.default_rng(0)
    compiled = {}
    rows = []
    for name, d, k in configurations():
        tag, x, params, theta = problem(name, args.n, d, k, rng)
        a, w, floor_out, chunk = floor_inputs(name, x, theta)
        loop_out = np.empty((x.shape[0], k))
        block_out = np.empty((x.shape[0], k))
        bound = [0.0]

        def run_loop():
            loop_densities(tag, theta, x, params, loop_out)

        def run_block():
            bound[0] = families.log_densities(tag, theta, x, params, block_out)

        def run_floor():
            floor_product(a, w, floor_out, chunk)

        if name not in compiled:
            compiled[name] = []
            for fn in (run_loop, run_block):
                start = time.perf_counter()
                fn()
                compiled[name].append(time.perf_counter() - start)
        run_floor()
        times = np.empty((args.repeats, 3))
        for r in range(args.repeats):
            for c, fn in enumerate((run_loop, run_block, run_floor)):
                start = time.perf_counter()
                fn()
                times[r, c] = time.perf_counter() - start
        scale = np.maximum(1.0, np.abs(loop_out))
        error = float(np.max(np.abs(block_out - loop_out) / scale))
        bound_share = float(np.max(np.abs(block_out - loop_out))) / bound[0]
        medians = np.median(times, axis=0)
        ratios = np.median(times / times[:, 2:3], axis=0)
        speedup = np.median(times[:, 0] / times[:, 1])
        rows.append((name, x.shape[1], k, *medians, ratios[1], ratios[0], speedup, error, bound_share))
        print(f"  {name} D={x.shape[1]} K={k}: loop {medians[0]:.4f} s, block {medians[1]:.4f} s, "
              f"floor {medians[2]:.4f} s", file=sys.stderr, flush=True)

    load_after = os.getloadavg()
    print(f"$ python {' '.join(sys.argv)}")
    print(f"n = {args.n}, median of {args.repeats} interleaved rounds, OPENBLAS_NUM_THREADS={args.blas_threads}, "
          f"numba cache: {'warm' if args.warm_cache else 'fresh (first call = compile)'}, load average "
          f"(1, 5, 15 min) before {', '.join(f'{v:.2f}' for v in load_before)}, "
          f"after {', '.join(f'{v:.2f}' for v in load_after)}")
    print()
    print("| family | D | K | loop [s] | block [s] | floor [s] | block / floor | loop / floor | loop / block "
          "| max rel. diff | diff / bound |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, d, k, loop, block, floor, block_ratio, loop_ratio, speedup, error, share in rows:
        print(f"| {name} | {d} | {k} | {loop:.4f} | {block:.4f} | {floor:.4f} | {block_ratio:.2f} | {loop_ratio:.1f} "
              f"| {speedup:.1f} | {error:.1e} | {share:.2f} |")
    print()
    print("| family | first call, loop [s] | first call, block [s] |")
    print("|---|---|---|")
    for name, (loop, block) in compiled.items():
        print(f"| {name} | {loop:.2f} | {block:.2f} |")
    if args.plot:
        plot(rows, args.plot)
        print(f"\nfigure: {args.plot}")


if __name__ == "__main__":
    main()
