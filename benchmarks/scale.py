"""One machine, 10^6 items: ``pm.sample`` with ``GibbsStep`` and ``SplitMergeStep`` on a DP Normal-Gamma mixture.

The large-n path a user takes (README, "Large n"): ``z`` left out of the trace
(``var_names``), ``keep_items`` recording the labels of 100 items for their
co-clustering, the derived scalars (number of clusters, log joint) recorded
as sample stats.  Data: n items (default 1,000,000), D = 2, 10 well-separated
clusters; ``alpha ~ Gamma(1, 1)`` moved by NUTS in the same ``pm.sample``.
For each step a fresh process with a warm numba cache (this script first
compiles everything at a small n, and reports that time separately) runs
``pm.sample(chains=1,
tune=--tune, draws=--draws)`` started at the planted partition (``initvals``;
from PyMC's default start, one cluster, single-item Gibbs moves need many
sweeps to separate the clusters of this data, see ``docs/benchmarks.md``)
and reports:

* ``per draw``: median wall time between consecutive draws (``pm.sample``'s
  callback), after tuning: the partition step, NUTS on ``alpha`` (whose every
  leapfrog step evaluates the model's log density, the O(n) marginal
  likelihood included) and PyMC's bookkeeping; ``step``: the partition step's
  own median time per draw; ``x floor`` divides them by the arithmetic floor,
  a bare numba loop evaluating the n·K Student-t predictive log densities of
  one sweep once (no sampling, no bookkeeping; K = 10, measured in this
  process, median of 5); ``x floor at K`` scales the floor to the chain's
  mean number of clusters K (its work is proportional to n·K), so a chain
  that holds more clusters than the data's 10 is compared with the
  arithmetic of the sweep it actually makes;
* ``before first draw``: from the ``pm.sample`` call to the first draw, minus
  one per-draw time: model compilation, initial point, step set-up; in
  seconds and in Gibbs sweeps (one ``kernels.gibbs.sweep`` at the true
  partition, measured here, median of 5);
* ``peak RSS``: the process's peak resident memory (``ru_maxrss``), the data,
  PyTensor's compiled model and the trace included.

Run:  python benchmarks/scale.py [--n 1000000] [--draws 20] [--tune 5]
"""

import argparse
import json
import math
import os
import subprocess
import sys
import textwrap
import time

import numpy as np

CHILD = """
import json, resource, time
import numpy as np
import pymc as pm
import pymc_partitions as pmp

rng = np.random.default_rng(0)
centers = rng.normal(0.0, 10.0, (10, 2))
truth = rng.integers(0, 10, __N__)
X = centers[truth] + rng.normal(0.0, 1.0, (__N__, 2))
stamps = []
step_times = []
with pm.Model() as model:
    alpha = pm.Gamma("alpha", 1.0, 1.0)
    z = pmp.DirichletProcessPartition("z", alpha=alpha, n=__N__)
    pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=0.01, a0=2.0, b0=2.0, observed=X)
    kept = list(range(0, __N__, __N__ // 100))[:100]
    step = __STEP__(z, keep_items=kept)
    partition_step = step.step

    def timed_step(point):
        begin = time.perf_counter()
        result = partition_step(point)
        step_times.append(time.perf_counter() - begin)
        return result

    step.step = timed_step
    start = time.perf_counter()
    idata = pm.sample(
        step=step, tune=__TUNE__, draws=__DRAWS__, chains=1, cores=1, progressbar=False, random_seed=1,
        var_names=["alpha"], compute_convergence_checks=False, initvals={"z": truth},
        callback=lambda trace, draw: stamps.append(time.perf_counter()),
    )
assert "z" not in idata["posterior"]
similarity = pmp.posterior_similarity(idata)
gaps = np.diff(stamps)[__TUNE__:]
print(json.dumps({
    "per_draw": float(np.median(gaps)),
    "step": float(np.median(step_times[__TUNE__ + 1:])),
    "before_first": float(stamps[0] - start - np.median(gaps)),
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "mean_clusters": float(idata["sample_stats"]["partition_n_clusters"].values[0].mean()),
    "similarity_shape": list(similarity.shape),
}))
"""


def child(n, step, tune, draws):
    code = textwrap.dedent(CHILD)
    for key, value in {"N": n, "STEP": f"pmp.{step}", "TUNE": tune, "DRAWS": draws}.items():
        code = code.replace(f"__{key}__", str(value))
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ)
    if result.returncode != 0:
        raise RuntimeError(result.stderr[-3000:])
    return json.loads(result.stdout.strip().splitlines()[-1])


def floor_and_sweep(n):
    """Median seconds of the arithmetic floor and of one Gibbs sweep at the true partition (10 clusters)."""
    import pymc as pm
    from numba import njit

    import pymc_partitions as pmp
    from pymc_partitions.kernels import gibbs
    from pymc_partitions.state import build_state

    @njit(cache=True)
    def predictive_floor(data, cache):
        n_items, d = data.shape
        total = 0.0
        for i in range(n_items):
            for k in range(cache.shape[0]):
                value = cache[k, 0]
                for j in range(d):
                    delta = data[i, j] - cache[k, 1 + j]
                    value += cache[k, 1 + 2 * d + j] * math.log1p(cache[k, 1 + d + j] * delta * delta)
                total += value
        return total

    rng = np.random.default_rng(0)
    centers = rng.normal(0.0, 10.0, (10, 2))
    truth = rng.integers(0, 10, n)
    X = centers[truth] + rng.normal(0.0, 1.0, (n, 2))
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=n)
        pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=0.01, a0=2.0, b0=2.0, observed=X)
    kernel_model = pmp.GibbsStep(z, model=model).kernel_model(model.initial_point())
    state = build_state(kernel_model, truth.astype(np.int64))
    cache = np.ascontiguousarray(state.cache[state.slots[: state.n_clusters[0]]])
    sweep_rng = np.random.default_rng(1)
    floors, sweeps = [], []
    predictive_floor(X, cache)
    gibbs.sweep(kernel_model, build_state(kernel_model, truth.astype(np.int64)), sweep_rng)
    for _ in range(5):
        start = time.perf_counter()
        predictive_floor(X, cache)
        floors.append(time.perf_counter() - start)
        fresh = build_state(kernel_model, truth.astype(np.int64))
        start = time.perf_counter()
        gibbs.sweep(kernel_model, fresh, sweep_rng)
        sweeps.append(time.perf_counter() - start)
    return float(np.median(floors)), float(np.median(sweeps))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--draws", type=int, default=20)
    parser.add_argument("--tune", type=int, default=5)
    args = parser.parse_args()
    print(f"$ python benchmarks/{os.path.basename(__file__)} {' '.join(sys.argv[1:])}")

    start = time.perf_counter()
    for step in ("GibbsStep", "SplitMergeStep"):
        child(2000, step, 1, 2)
    print(f"warm-up at n = 2000 (numba compile and cache; PyTensor compile): {time.perf_counter() - start:.1f} s")
    floor, sweep = floor_and_sweep(args.n)
    print(f"n = {args.n}, D = 2, 10 clusters; floor {floor:.4f} s, one Gibbs sweep {sweep:.4f} s ({sweep / floor:.2f}x floor)")
    print()
    print("| step | per draw [s] | x floor | step [s] | x floor | x floor at K | before first draw [s] | in sweeps "
          "| peak RSS [MB] | mean K |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for step in ("GibbsStep", "SplitMergeStep"):
        r = child(args.n, step, args.tune, args.draws)
        print(
            f"| {step} | {r['per_draw']:.3f} | {r['per_draw'] / floor:.2f} | {r['step']:.3f} | {r['step'] / floor:.2f} | "
            f"{r['step'] / (floor * r['mean_clusters'] / 10):.2f} | {r['before_first']:.2f} | {r['before_first'] / sweep:.1f} | "
            f"{r['peak_rss_mb']:.0f} | {r['mean_clusters']:.1f} |"
        )


if __name__ == "__main__":
    main()
