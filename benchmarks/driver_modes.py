"""The sharded samplers' two ways to run a driver (``kernels/twofold.py``): per-draw time, compiled against interpreted.

Below ``twofold.PARALLEL_MIN_ITEMS`` items a sub-cluster (or hybrid) step
runs its transition as one compiled numba function; from there on, or with
an executor, the driver runs in Python and calls numba for the per-item
work.  This script forces the interpreted way at every size (it replaces
``twofold.interpreted``) to measure what running it for small problems
would cost: ``pm.sample`` of ``--draws`` draws of a DP Normal-Gamma mixture
(three planted clusters, ``alpha = 1``, one chain), median of ``--repeats``
calls after a first call that compiles (its time printed separately).  Both
ways give the same chain; only the time differs.

Run:  python benchmarks/driver_modes.py [--n 200 2000] [--draws 1000] [--repeats 3] [--step SubClusterSplitMergeStep]
"""

import argparse
import time

import numpy as np
import pymc as pm

import pymc_partitions as pmp
from pymc_partitions.kernels import twofold

COMPILED_WHEN = twofold.interpreted


def per_draw(step_name, n, draws, repeats, interpreted):
    twofold.interpreted = (lambda state, sampler: True) if interpreted else COMPILED_WHEN
    rng = np.random.default_rng(0)
    X = rng.normal(0.0, 1.0, (n, 2)) + 6.0 * rng.integers(0, 3, (n, 1))
    with pm.Model():
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=n)
        pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=0.1, a0=2.0, b0=2.0, observed=X)
        kwargs = dict(tune=0, chains=1, cores=1, progressbar=False, compute_convergence_checks=False, random_seed=1)
        start = time.perf_counter()
        pm.sample(step=getattr(pmp, step_name)(z), draws=2, **kwargs)
        first = time.perf_counter() - start
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            pm.sample(step=getattr(pmp, step_name)(z), draws=draws, **kwargs)
            times.append(time.perf_counter() - start)
    return first, 1e3 * np.median(times) / draws


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, nargs="+", default=[200, 2000])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--step", default="SubClusterSplitMergeStep")
    args = parser.parse_args()
    print(f"$ python benchmarks/driver_modes.py --n {' '.join(map(str, args.n))} --draws {args.draws} "
          f"--repeats {args.repeats} --step {args.step}")
    print("| n | compiled: ms per draw | interpreted: ms per draw | ratio | first call (compiling if cold) compiled / interpreted [s] |")
    print("|---|---|---|---|---|")
    for n in args.n:
        first_c, compiled = per_draw(args.step, n, args.draws, args.repeats, interpreted=False)
        first_i, interpreted = per_draw(args.step, n, args.draws, args.repeats, interpreted=True)
        print(f"| {n} | {compiled:.3f} | {interpreted:.3f} | {interpreted / compiled:.2f} | {first_c:.1f} / {first_i:.1f} |")


if __name__ == "__main__":
    main()
