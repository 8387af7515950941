"""Gibbs sweep throughput for a DP Normal-Gamma mixture, against the arithmetic floor.

n = 100,000 items, D = 2, 10 well-separated true clusters; the state starts at
the true partition so K stays about 10.  Reports, as medians over repeats:

* ``gibbs sweep``: one collapsed Gibbs sweep (``kernels.gibbs.sweep``);
* ``floor``: a bare numba loop evaluating the same n*K Student-t predictive log
  densities once (per item and cluster: D log1p's and the arithmetic around
  them, no sampling, no bookkeeping) -- the arithmetic a sweep cannot avoid;
* ``GibbsStep.step``: the PyMC step, fed its own output as ``pm.sample``
  does (it keeps its numba state between calls: one sweep, canonical
  relabelling of z and the sample stats);
* split-merge proposals per second (``kernels.split_merge.transition``, one
  proposal with L = 5, no sweep).

The three timings are taken round-robin, and the ratio to the floor is the
median over rounds of the per-round ratio, so machine noise hits both alike.

Compile time (first call in a fresh NUMBA_CACHE_DIR, or cache load if
``--warm-cache``) is reported separately.

Run:  python benchmarks/gibbs_throughput.py [--n 100000] [--repeats 7] [--warm-cache]
"""

import argparse
import os
import sys
import tempfile
import time

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--n", type=int, default=100_000)
parser.add_argument("--clusters", type=int, default=10)
parser.add_argument("--repeats", type=int, default=7)
parser.add_argument("--warm-cache", action="store_true", help="use the existing numba cache instead of a fresh one")
args = parser.parse_args()
if not args.warm_cache:
    os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="pmp-bench-numba-")

import math  # noqa: E402

import numpy as np  # noqa: E402
import pymc as pm  # noqa: E402
from numba import njit  # noqa: E402

import pymc_partitions as pmp  # noqa: E402
from pymc_partitions.kernels import gibbs, split_merge  # noqa: E402
from pymc_partitions.state import build_state  # noqa: E402


@njit(cache=True)
def predictive_floor(data, cache):
    """Sum over items and clusters of the Student-t predictive log density (cache layout of normal_gamma)."""
    n, d = data.shape
    total = 0.0
    for i in range(n):
        for k in range(cache.shape[0]):
            value = cache[k, 0]
            for j in range(d):
                delta = data[i, j] - cache[k, 1 + j]
                value += cache[k, 1 + 2 * d + j] * math.log1p(cache[k, 1 + d + j] * delta * delta)
            total += value
    return total


def first_call(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def interleaved(fns, repeats):
    """Median time of each function, timed round-robin so all see the same machine state,
    and the median over rounds of each one's time relative to the first."""
    times = np.empty((repeats, len(fns)))
    for r in range(repeats):
        for c, fn in enumerate(fns):
            start = time.perf_counter()
            fn()
            times[r, c] = time.perf_counter() - start
    return np.median(times, axis=0), np.median(times / times[:, :1], axis=0)


def main():
    rng = np.random.default_rng(0)
    n, k = args.n, args.clusters
    centers = rng.normal(0.0, 10.0, (k, 2))
    truth = rng.integers(0, k, n)
    X = centers[truth] + rng.normal(0.0, 1.0, (n, 2))
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=n)
        pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=0.01, a0=2.0, b0=2.0, observed=X)
    step = pmp.GibbsStep(z, model=model)
    point = {**model.initial_point(), "z": pmp.relabel(truth)}
    kernel_model = step.kernel_model(point)
    labels = point["z"].astype(np.int64)
    state = build_state(kernel_model, labels)
    sweep_rng = np.random.default_rng(1)
    occupied = state.slots[: state.n_clusters[0]]
    cache = np.ascontiguousarray(state.cache[occupied])

    holder = {"state": state}

    def one_sweep():
        holder["state"], _ = gibbs.sweep(kernel_model, holder["state"], sweep_rng)

    points = {"point": point}

    def one_step():
        points["point"], _ = step.step(points["point"])

    fns = [lambda: predictive_floor(X, cache), one_sweep, one_step]
    names = ["floor: n*K predictive log densities", "gibbs sweep (kernel)", "GibbsStep.step (PyMC adapter)"]
    firsts = [first_call(fn) for fn in fns]
    medians, ratios = interleaved(fns, args.repeats)
    rows = list(zip(names, firsts, medians, ratios))

    sm_state = {"state": build_state(kernel_model, labels)}
    sm_rng = np.random.default_rng(2)
    n_props = 20

    options = split_merge.Options(1, 5, False)

    def proposals():
        for _ in range(n_props):
            sm_state["state"], _, _ = split_merge.transition(kernel_model, sm_state["state"], options, sm_rng)

    first = first_call(proposals)
    (sm_time,), _ = interleaved([proposals], max(3, args.repeats // 2))

    print(f"$ python {' '.join(sys.argv)}")
    print(f"n = {n}, D = 2, true clusters = {k}, K in state = {holder['state'].n_clusters[0]}, numba cache: "
          f"{'warm' if args.warm_cache else 'fresh (first call = compile)'}")
    print()
    print(f"| {'what':40s} | {'first call [s]':>14s} | {'median [s]':>10s} | {'x floor':>7s} |")
    print(f"|{'-' * 42}|{'-' * 16}|{'-' * 12}|{'-' * 9}|")
    for name, first_time, median, ratio in rows:
        print(f"| {name:40s} | {first_time:14.3f} | {median:10.4f} | {ratio:7.2f} |")
    print("(x floor: median over rounds of time / floor time in the same round)")
    print()
    print(f"split-merge (L = 5): {n_props / sm_time:.1f} proposals/s "
          f"(median of {max(3, args.repeats // 2)} batches of {n_props}; first batch incl. compile {first:.2f} s)")


if __name__ == "__main__":
    main()
