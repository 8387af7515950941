"""Where a draw's time goes on a component model written in PyMC: the partition step against NUTS on the rows.

The race's clusterwise regression (``benchmarks/component_race.py``: ``--lines`` planted lines, ``K_max`` rows of
``a``, ``b``, one noise scale) sampled by ``pm.sample()``'s assignment for it, written out -- ``GibbsStep`` on
``z`` (the log-likelihood matrix from PyMC's graph, the numba Algorithm 8 pass, the relabelling and the prior draws
of the empty rows) and NUTS on ``a``, ``b`` and ``sigma`` -- from the planted partition, one chain.  Each step
method's ``step`` is timed around its call; the first ``pm.sample`` (compilation) is not timed.  Issue 40 asks for
sharded or threaded item passes where the item pass dominates a draw: the ``partition step`` column is the most
such passes could save.

Run:  python benchmarks/component_step_share.py [--n 10000 100000] [--lines 4] [--draws 30] [--tune 30]
"""

import argparse
import os
import sys
import time

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--n", nargs="+", type=int, default=[10_000, 100_000])
parser.add_argument("--lines", type=int, default=4)
parser.add_argument("--draws", type=int, default=30)
parser.add_argument("--tune", type=int, default=30)
args = parser.parse_args()
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import pymc as pm  # noqa: E402

import component_race  # noqa: E402
import pymc_partitions as pmp  # noqa: E402

component_race.args.lines = args.lines


def timed(step, seconds):
    """``step`` with its ``step`` method timed into ``seconds`` (a one-item list)."""
    inner = step.step

    def step_and_time(point):
        start = time.perf_counter()
        try:
            return inner(point)
        finally:
            seconds[0] += time.perf_counter() - start

    step.step = step_and_time
    return step


def main():
    print(f"load average before: {os.getloadavg()}")
    header = f"{'n':>8} | {'s per draw':>10} | {'partition step':>14} | {'NUTS':>6} | {'partition share':>15}"
    print(header)
    print("-" * len(header))
    for n in args.n:
        x, y, labels = component_race.planted(n, np.random.default_rng(n))
        model = component_race.component_model(x, y)
        ours, nuts = [0.0], [0.0]
        with model:
            start = {**model.initial_point(), "z": labels.astype(model.initial_point()["z"].dtype)}
            kwargs = dict(chains=1, cores=1, progressbar=False, compute_convergence_checks=False, initvals=start)
            pm.sample(draws=2, tune=2, random_seed=0, **kwargs)  # compiles
            steps = [timed(pmp.GibbsStep(model["z"]), ours), timed(pm.NUTS([model["a"], model["b"], model["sigma"]]), nuts)]
            begin = time.perf_counter()
            pm.sample(draws=args.draws, tune=args.tune, step=steps, random_seed=1, **kwargs)
            per_draw = (time.perf_counter() - begin) / (args.draws + args.tune)
        total = ours[0] + nuts[0]
        print(f"{n:>8} | {per_draw:>10.3f} | {ours[0]:>13.1f}s | {nuts[0]:>5.1f}s | {ours[0] / total:>15.1%}", flush=True)
    print(f"load average after: {os.getloadavg()}")
    print("command: python benchmarks/component_step_share.py " + " ".join(sys.argv[1:]))


if __name__ == "__main__":
    main()
