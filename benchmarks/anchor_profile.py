"""Where an iteration of ``SubClusterSplitMergeStep`` goes on the anchor's 128-D workload (issue #53, item 4).

The data of ``benchmarks/subcluster.py``'s size (e) (DPMMSubClusters.jl's ``generate_gaussian_data`` recipe,
``subcluster.dpmm_gaussian``) at ``--n`` items, the race's model (``alpha ~ Gamma(1, 1)`` on NUTS,
``NormalInverseWishartMixture`` with ``default_hyperparameters``), one ``pm.sample`` from its default start:
its first ``--warm`` draws are not profiled (compilation, or loading numba's cache, and the first iterations
from one cluster, whose work is not typical); the next ``--draws`` draws run under ``cProfile``.

The sub-cluster step's driver is interpreted at this n (``kernels.twofold``), so every numba call it makes
is made from a Python function, and ``cProfile``'s *own* time (``tottime``) of a driver is the time of the
numba code it calls.  The rows group those functions:

* ``pair passes``: ``passes.run_pass``, the launch's, final and refine passes over a proposal's items: per
  item two O(d²) log densities (or predictives) and the item's statistics ``[1, x, x xᵀ]`` added to its side;
* ``hybrid sweep``: ``hybrid.sweep_shards``, the global iteration's shards (cold: block log densities under
  the instantiated clusters; hot: the collapsed sweep, with O(d³) predictive caches);
* ``summaries``: ``hybrid.summarize_shards`` and the other executor operations of ``begin``/``finish`` (every
  cluster's statistics from the labels, O(n d²));
* ``parameter draws, marginals, caches``: the drivers' own numba calls (``launch``, ``propose_split``,
  ``propose_merge``, ``refine``, ``final_pass``, ...): ``draw_params`` (Cholesky and Bartlett, O(d³)),
  ``log_marginal`` (Cholesky, O(d³)), ``fill_cache`` on the slots that change;
* ``NUTS on alpha``: PyMC's NUTS step; ``PyMC, other``: the rest of ``pm.sample``.

``--scorer`` also times the race's measurement (``subcluster.Scorer``: NMI and the model's log joint) once.
Run:  python benchmarks/anchor_profile.py [--n 50000] [--warm 4] [--draws 6] [--scorer]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import resource
import sys
import time
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import subcluster as race  # noqa: E402

GROUPS = {
    "pair passes (passes.run_pass)": ("run_pass",),
    "hybrid sweep (hybrid.sweep_shards)": ("sweep_shards",),
    "summaries (begin, finish, summarize_shards)": ("summarize_shards", "begin", "finish", "summarize", "sweep"),
    "pair selection (select, pair_items, scan)": ("select", "pair_items", "scan_pair", "scan_labels", "item_slots"),
    "parameter draws, marginals, caches (driver's own numba calls)": (
        "launch", "final_pass", "propose_split", "propose_merge", "refine", "propose", "transition", "iterate",
        "sweep_summaries", "pair_pass", "shard_sums", "assign", "merge_items", "run_shards",
    ),
}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=50_000)
    parser.add_argument("--warm", type=int, default=4, help="draws before profiling")
    parser.add_argument("--draws", type=int, default=6, help="draws profiled")
    parser.add_argument("--scorer", action="store_true")
    args = parser.parse_args()
    import logging

    import pymc as pm

    import pymc_partitions as pmp

    logging.getLogger("pymc").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore", category=UserWarning)
    size = {**race.SIZES["e"], "n": args.n}
    x, truth = race.planted(size)
    model = race.build_model(x, size["family"], "gamma")
    # one pm.sample: the profiler is switched on after the ``warm`` first draws, off after ``draws`` more
    profiler = cProfile.Profile()
    stamps = []

    def callback(trace, draw):
        stamps.append(time.perf_counter())
        if len(stamps) == args.warm:
            profiler.enable()
        if len(stamps) == args.warm + args.draws:
            profiler.disable()

    with model:
        step = pmp.SubClusterSplitMergeStep(model["z"])
        cpu0 = time.process_time()
        start = time.perf_counter()
        pm.sample(step=step, tune=0, draws=args.warm + args.draws, chains=1, cores=1, progressbar=False,
                  random_seed=1, var_names=["alpha"], compute_convergence_checks=False, callback=callback,
                  return_inferencedata=False)
        cpu = time.process_time() - cpu0
    wall = stamps[-1] - stamps[args.warm - 1]
    print(f"$ python benchmarks/anchor_profile.py {' '.join(sys.argv[1:])}")
    print(f"n = {args.n:,}, D = 128, K planted = 20; the {args.warm} draws before profiling took "
          f"{stamps[args.warm - 1] - start:.1f} s (compilation or cache loading included)")
    stats = pstats.Stats(profiler)
    own = {}
    for (filename, _, name), (_, _, tottime, cumtime, _) in stats.stats.items():
        own.setdefault(name, [0.0, 0.0, filename])
        own[name][0] += tottime
        own[name][1] = max(own[name][1], cumtime)
    nuts = sum(v[1] for k, v in own.items() if k == "astep" and "nuts" in v[2].lower() or
               (k == "astep" and "hmc" in v[2].lower()))
    rows = []
    counted = 0.0
    for label, names in GROUPS.items():
        t = sum(own[name][0] for name in names if name in own)
        rows.append((label, t))
        counted += t
    rows.append(("NUTS on alpha (PyMC's astep, cumulative)", nuts))
    total = sum(v[0] for v in own.values())
    rows.append(("PyMC and Python, other", max(0.0, total - counted - nuts)))
    print(f"profiled {args.draws} draws: {wall:.2f} s wall ({wall / args.draws:.2f} s per draw), process CPU over "
          f"the whole run {cpu:.1f} s, peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB, "
          f"load average after {os.getloadavg()[0]:.2f}\n")
    print("| part | seconds per draw | share |")
    print("|---|---|---|")
    for label, t in rows:
        print(f"| {label} | {t / args.draws:.3f} | {100 * t / max(total, 1e-12):.0f} % |")
    print(f"| total profiled | {total / args.draws:.3f} | 100 % |")
    print("\nlargest own times (s per draw):")
    for name, (tottime, _, filename) in sorted(own.items(), key=lambda kv: -kv[1][0])[:12]:
        print(f"  {tottime / args.draws:8.3f}  {name}  ({os.path.basename(filename)})")
    if args.scorer:
        scorer = race.Scorer(model, truth)
        begin = time.perf_counter()
        scorer(truth)
        print(f"\nthe race's measurement (Scorer: NMI and log joint) once: {time.perf_counter() - begin:.3f} s")


if __name__ == "__main__":
    main()
