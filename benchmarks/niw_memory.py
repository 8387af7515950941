"""Memory and time of the Normal-inverse-Wishart model at high D: its log density and the step's state.

For the race's size (d) of ``benchmarks/subcluster.py`` (D = 128, 75 planted
clusters of unequal sizes; ``planted`` there) at each ``--n``, each in a fresh
process so that its peak resident memory is its own:

* ``log density``: the PyMC model's ``compile_logp()`` at the planted labels
  (what NUTS evaluates at every leapfrog step and the race uses to score),
  median of 3 evaluations after the first; its per-cluster statistics
  ``[Σ x, Σ x xᵀ]`` are one matrix product per cluster
  (``families/_cluster_moments.py``), never the (n, D + D²) matrix of every
  item's ``[x, x xᵀ]``;
* ``state``: ``state.state_of`` (the step's numba state built from the
  labels), median of 2 calls after a first that compiles.

Columns: seconds, the log density's value (the same with or without
per-item rows), and the process's peak resident memory (``ru_maxrss``: the
data, PyMC and PyTensor included).  OpenBLAS single-threaded.

Run:  python benchmarks/niw_memory.py [--n 20000,100000]
(from a checkout's root)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def child(n, what):
    import resource
    import time
    import warnings

    import numpy as np

    warnings.filterwarnings("ignore")
    sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
    import subcluster

    import pymc_partitions as pmp
    from pymc_partitions.state import state_of

    x, truth = subcluster.planted({**subcluster.SIZES["d"], "n": n})
    model = subcluster.build_model(x, "normal_inverse_wishart", "fixed")
    z = pmp.relabel(truth).astype(np.int64)
    point = {**model.initial_point(), "z": z}
    times, value = [], None
    if what == "log density":
        logp = model.compile_logp()
        for _ in range(4):
            start = time.perf_counter()
            value = float(logp(point))
            times.append(time.perf_counter() - start)
    else:
        with model:
            step = pmp.SubClusterSplitMergeStep(model["z"])
        kernel_model = step.kernel_model(point)
        for _ in range(3):
            start = time.perf_counter()
            state_of(kernel_model, z)
            times.append(time.perf_counter() - start)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"seconds": float(np.median(times[1:])), "value": value, "peak_mb": peak}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", default="20000,100000")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(int(args.child[0]), args.child[1])))
        return
    print(f"$ python benchmarks/niw_memory.py --n {args.n}")
    print("| n | measured | seconds | log density | peak RSS [MB] |")
    print("|---|---|---|---|---|")
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    for n in (int(value) for value in args.n.split(",")):
        for what in ("log density", "state"):
            out = subprocess.run(
                [sys.executable, __file__, "--child", str(n), what], env=env, capture_output=True, text=True, check=True
            )
            row = json.loads(out.stdout.strip().splitlines()[-1])
            value = "-" if row["value"] is None else f"{row['value']:.1f}"
            print(f"| {n:,} | {what} | {row['seconds']:.3f} | {value} | {row['peak_mb']:.0f} |", flush=True)


if __name__ == "__main__":
    main()
