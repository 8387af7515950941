"""ARM paper network experiments on NIPS 234: Gelman-Rubin R-hat and acceptance at equal normalized cost.

Reproduces the NIPS rows of Tables 3, 4 and 5 of Herlau, Mørup, Schmidt & Teh
(``papers/000_…``, Sec. 3.2-3.6): the Infinite Relational Model (CRP prior,
Beta-Bernoulli blocks, alpha = a = b = 1) on the 234-author NIPS co-authorship
network, downsampled by degree to a fraction ``scale`` of its vertices
(``datasets.downsample_by_degree``, Sec. 3.3), sampled by

* ``gibbs``: one Gibbs sweep per iteration;
* ``sm``: one Jain-Neal split-merge proposal (L = 5 restricted scans, random
  launch) then a Gibbs sweep, S independent chains;
* ``bsm``: split-merge whose launch comes from two past states of the
  population (Sec. 3.6.2), then a Gibbs sweep;
* ``sarm``: ARM without block moves (Sec. 3.6.2), then a Gibbs sweep;
* ``arm``: the adaptive reconfiguration move (Algorithm 3), then a Gibbs sweep;
* ``arm-past``: ARM with its inside set and blocks from the past states alone
  (``ARMStep(variant="arm-past")``, ``docs/exactness.md``), then a Gibbs sweep.

Protocol, per scale (paper Sec. 3, 3.4, 3.5):

1. ``R`` independent restarts (default 4).  In each, ``S`` chains (default 8)
   start from independent CRP(1) prior draws and make ``--init-sweeps`` Gibbs
   sweeps (default 50, the paper's Sec. 3 initialisation, "used for all
   methods"); every method of the restart starts from these S states.
2. ARM runs ``T`` iterations (``--iterations``).
3. Normalized cost: from ARM's final states (restart 0) every method is timed
   round-robin for ``--calibration-rounds`` rounds in this process; the median
   cost of one iteration of a method, per chain, divided by that of one Gibbs
   sweep per chain, is its cost in Gibbs-sweep units (the paper's
   "standardized iterations", Sec. 3.4).  Times are process CPU times
   (``time.process_time``; every kernel is single-threaded), because wall time
   on a shared machine moves with other people's load.  The population
   samplers' per-iteration time is the difference between a (2 + P)- and a
   2-iteration run, because their first two iterations have no history to draw
   a background from.
4. Every other method runs ``T * cost_arm / cost_method`` iterations, i.e. the
   same normalized cost ``T * cost_arm`` Gibbs sweeps.
5. R-hat of the log joint (``state.log_joint``: log CRP prior + log IRM
   likelihood), first half of each trace discarded.  The paper computes R-hat
   *across restarts* (Sec. 3.4: population chains are dependent), so the main
   number is, for each chain index ``s``, the R-hat of the R chains
   ``(restart r, chain s)`` -- R independent chains -- and we report the mean
   and standard deviation of these S values.  ``all RS`` treats all R*S chains
   as one group (biased low for the population samplers, whose chains share
   history).  Classic, non-split Gelman-Rubin for m chains of length N:
   ``W`` = mean within-chain variance, ``B/N`` = variance of the chain means
   (both with ddof=1), ``R-hat = sqrt(((N-1)/N W + B/N) / W)``.
6. Acceptance x 100: accepted / attempted moves, per restart over all chains,
   mean (sd) over restarts.  Gibbs has none.

The mixing table adds, on the kept half of each run: R-hat of the number of
clusters ``K`` across restarts (as for the log joint), and the bulk ESS
(``arviz.ess``, rank-normalized) of the log joint and of ``K`` for each
chain index over its R independent restarts, mean over the indices, per
Gibbs-sweep equivalent (divided by R x kept iterations x cost) and per CPU
second (divided by the run's CPU time / (2 S)).  ``--load out.npz`` prints it
again from a ``--save`` file, with R-hat of the log joint and of ``K`` and
both ESS at the prefixes T/8 .. T (against normalized cost), each restart's
mean log joint, and with ``--plot PATH`` a figure of R-hat against cost.

R-hat is also reported at the prefixes T/8, T/4, T/2 of every run (each prefix
is itself a valid shorter run: the population history at iteration t is the
last half of iterations 0..t, whatever the total length), which gives R-hat
against normalized cost; the paper's T = 1000 column is the T/2 prefix of a
T = 2000 run.

Compile time (first call in a fresh NUMBA_CACHE_DIR, or cache load with
``--warm-cache``) is reported separately and excluded from all timings.

``--plateau`` measures acceptance only, from the plateau: in each restart the
S chains are initialised as above, then run ``--plateau-warmup`` ARM
iterations (default 300); from those states every method of ``--methods``
(default sm, arm, arm-past) runs ``T`` iterations, and its acceptance (mean
(sd) over restarts) and mean log joint are printed.  The population methods
draw their past states from this run's own history (its last half), so every
background is a plateau state.

Run:  python benchmarks/arm_networks.py                     # quick: scale 1, T = 100 ARM iterations
      python benchmarks/arm_networks.py --full              # the paper: scales 1 0.9 0.8, T = 2000
      python benchmarks/arm_networks.py --scales 1 0.9 0.8 --iterations 1000 [--seed 0] [--save out.npz]
      python benchmarks/arm_networks.py --plateau --iterations 200   # acceptance of sm, arm, arm-past at the plateau
      python benchmarks/arm_networks.py --load out.npz --plot rhat.png  # R-hat against cost of a saved run
"""

import argparse
import os
import sys
import tempfile
import time

METHODS = ("gibbs", "sm", "bsm", "sarm", "arm", "arm-past")
LABELS = {"gibbs": "Gibbs", "sm": "SM", "bsm": "bSM", "sarm": "sARM", "arm": "ARM", "arm-past": "arm-past"}

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--full", action="store_true", help="the paper's setting: --scales 1 0.9 0.8 --iterations 2000")
parser.add_argument("--scales", type=float, nargs="+", default=None, help="fractions of the vertices kept (default 1)")
parser.add_argument("--iterations", type=int, default=None, help="ARM iterations T (default 100; 2000 with --full)")
parser.add_argument(
    "--methods",
    nargs="+",
    choices=METHODS,
    default=None,
    help="default: all six at scale 1 (Table 4 and arm-past), gibbs sm arm at other scales (Table 3); arm is always run; "
    "with --plateau: sm arm arm-past",
)
parser.add_argument("--plateau", action="store_true", help="acceptance from plateau states only (see above)")
parser.add_argument("--plateau-warmup", type=int, default=300, help="ARM iterations that reach the plateau (--plateau)")
parser.add_argument("--chains", type=int, default=8, help="S, chains per restart (paper: 8)")
parser.add_argument("--restarts", type=int, default=4, help="independent restarts (paper: 4)")
parser.add_argument("--init-sweeps", type=int, default=50, help="Gibbs sweeps initialising each restart (paper: 50)")
parser.add_argument("--n-intermediate", type=int, default=5, help="L, restricted scans of SM and bSM (paper: 5)")
parser.add_argument("--calibration-rounds", type=int, default=5)
parser.add_argument("--calibration-iterations", type=int, default=10, help="P, iterations per method per timing")
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--save", default=None, help="write the log-joint traces and results to this .npz")
parser.add_argument("--load", default=None, help="print the mixing table (R-hat and ESS) of a --save file, run nothing")
parser.add_argument("--warm-cache", action="store_true", help="use the existing numba cache instead of a fresh one")
parser.add_argument("--plot", default=None, help="with --load: save R-hat against normalized cost to this path")
args = parser.parse_args()
if args.scales is None:
    args.scales = [1.0, 0.9, 0.8] if args.full else [1.0]
if args.iterations is None:
    args.iterations = 2000 if args.full else 100
if not args.warm_cache:
    os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="pmp-bench-numba-")

import math  # noqa: E402

import numpy as np  # noqa: E402
from numba import njit  # noqa: E402

from pymc_partitions import datasets, families, priors  # noqa: E402
from pymc_partitions.kernels import arm, gibbs, split_merge  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import runners as chain  # noqa: E402  (the test runners: tests/runners.py)
from pymc_partitions.state import build_state, log_joint, make_model  # noqa: E402

#: Herlau et al., NIPS rows, as (mean, sd); sd None where the paper prints "()" (below the last digit).
PAPER_TABLE3 = {  # (scale, T) -> method -> GR R-hat
    (1.0, 2000): {"gibbs": (20.46, 12.69), "sm": (2.50, 1.53), "arm": (1.04, 0.02)},
    (0.9, 2000): {"gibbs": (23.28, 7.65), "sm": (2.35, 0.74), "arm": (1.00, None)},
    (0.8, 2000): {"gibbs": (11.22, 2.78), "sm": (2.75, 1.11), "arm": (1.01, None)},
    (1.0, 1000): {"gibbs": (25.40, 10.90), "sm": (3.24, 2.72), "arm": (1.01, None)},
    (0.9, 1000): {"gibbs": (22.17, 7.64), "sm": (2.74, 0.44), "arm": (1.00, None)},
    (0.8, 1000): {"gibbs": (13.26, 4.52), "sm": (2.89, 1.60), "arm": (1.01, 0.01)},
}
PAPER_TABLE4 = {  # scale 1, 1000 iterations
    "gibbs": (24.88, 8.23),
    "sm": (2.43, 0.97),
    "bsm": (1.12, 0.15),
    "sarm": (2.41, 2.77),
    "arm": (1.09, 0.03),
}
PAPER_TABLE5 = {"sm": (0.48, 0.03), "bsm": (1.01, 0.08), "sarm": (1.37, 0.14), "arm": (19.41, 1.28)}
POPULATION_METHODS = ("bsm", "sarm", "arm", "arm-past")
CHECKPOINTS = (8, 4, 2, 1)  # R-hat at T/8, T/4, T/2, T


def transition(method):
    """The chain runner, step transition and options of ``method``; every method but Gibbs is followed by a
    Gibbs sweep, and the population methods run their chains as a population."""
    if method == "gibbs":
        return chain.run, gibbs.transition, gibbs.Options(1)
    if method == "sm":
        return chain.run, split_merge.transition, split_merge.Options(1, args.n_intermediate, True)
    if method == "bsm":
        return chain.run_population, split_merge.past_states_transition, split_merge.Options(1, args.n_intermediate, True)
    return chain.run_population, arm.transition, arm.Options(arm.VARIANTS[method], 1, True)


@njit(cache=True)
def log_joint_trace(model, labels):
    """Log joint and number of clusters of each row of ``labels`` (iterations x items, canonical)."""
    n_rows = labels.shape[0]
    values = np.empty(n_rows)
    sizes = np.empty(n_rows, dtype=np.int64)
    for t in range(n_rows):
        state = build_state(model, labels[t].astype(np.int64))
        values[t] = log_joint(model, state)
        sizes[t] = state.n_clusters[0]
    return values, sizes


def irm_model(adjacency):
    """The paper's IRM: DP(alpha = 1) prior, Beta(1, 1) block probabilities."""
    n = adjacency.shape[0]
    params = families.pack_params(families.INFINITE_RELATIONAL, n, 1.0, 1.0)
    return make_model(families.INFINITE_RELATIONAL, adjacency, params, priors.DP, np.array([1.0]), priors.empty_table())


def crp_draw(n, alpha, rng):
    """Labels of one draw from the Chinese restaurant process CRP(alpha)."""
    z = np.empty(n, dtype=np.int64)
    sizes = []
    for i in range(n):
        weights = np.array(sizes + [alpha], dtype=float)
        k = rng.choice(len(weights), p=weights / weights.sum())
        if k == len(sizes):
            sizes.append(0)
        sizes[k] += 1
        z[i] = k
    return z


def initial_states(model, n_chains, n_sweeps, rng):
    """``n_chains`` CRP(1) draws, then ``n_sweeps`` Gibbs sweeps of each: (S, n) int64."""
    n = model.data.shape[0]
    z0 = np.stack([crp_draw(n, 1.0, rng) for _ in range(n_chains)])
    if n_sweeps:
        z0 = chain.run(gibbs.transition, model, z0, gibbs.Options(1), n_sweeps, rng)[0][-1].astype(np.int64)
    return z0


def run_method(model, method, z0, n_iterations, rng):
    """Run ``method`` on the S chains ``z0``: labels (T, S, n) int32, accepted and attempted moves (totals)."""
    run, step_transition, options = transition(method)
    labels, accepted, proposed = run(step_transition, model, z0, options, n_iterations, rng)
    return labels, int(accepted.sum()), int(proposed.sum())


def traces(model, labels):
    """Log joint and K traces of labels (T, S, n): two arrays (S, T)."""
    pairs = [log_joint_trace(model, np.ascontiguousarray(labels[:, s])) for s in range(labels.shape[1])]
    return np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])


def gelman_rubin(chains):
    """Classic (non-split) potential scale reduction of chains (m, N): sqrt(((N-1)/N W + B/N) / W)."""
    n = chains.shape[1]
    w = chains.var(axis=1, ddof=1).mean()
    b_over_n = chains.mean(axis=1).var(ddof=1)
    if w == 0.0:
        return math.inf if b_over_n > 0.0 else math.nan
    return math.sqrt(((n - 1) / n * w + b_over_n) / w)


def rhat_summary(log_joint_traces, length):
    """R-hat on iterations [length // 2, length) of traces (R, S, T).

    Returns (mean, sd, per_index, pooled): per chain index s the R-hat of the R
    restarts' chains s, their mean and sd over s, and the R-hat of all R*S
    chains treated as one group.
    """
    window = log_joint_traces[:, :, length // 2 : length]
    per_index = np.array([gelman_rubin(window[:, s]) for s in range(window.shape[1])])
    pooled = gelman_rubin(window.reshape(-1, window.shape[2]))
    finite = per_index[np.isfinite(per_index)]
    if finite.size < per_index.size:
        return math.inf, math.nan, per_index, pooled
    return per_index.mean(), per_index.std(ddof=1) if per_index.size > 1 else 0.0, per_index, pooled


def calibrate(model, methods, z, rng):
    """Median CPU seconds per iteration per chain of each method, timed round-robin from the states ``z`` (S, n)."""
    p = args.calibration_iterations
    n_chains = z.shape[0]
    times = {m: [] for m in methods}
    for _ in range(args.calibration_rounds):
        for m in methods:
            if m in POPULATION_METHODS:
                start = time.process_time()
                run_method(model, m, z, 2, rng)
                short = time.process_time() - start
                start = time.process_time()
                run_method(model, m, z, 2 + p, rng)
                times[m].append((time.process_time() - start - short) / (p * n_chains))
            else:
                start = time.process_time()
                run_method(model, m, z, p, rng)
                times[m].append((time.process_time() - start) / (p * n_chains))
    return {m: float(np.median(v)) for m, v in times.items()}


def compile_all(model, methods):
    """First call of every kernel used (compile time in a fresh cache); seconds per method."""
    rng = np.random.default_rng(12345)
    z0 = initial_states(model, 2, 1, rng)
    compile_times = {}
    start = time.perf_counter()
    log_joint_trace(model, z0.astype(np.int32))
    compile_times["log_joint_trace"] = time.perf_counter() - start
    for m in methods:
        start = time.perf_counter()
        run_method(model, m, z0, 3, rng)
        compile_times[m] = time.perf_counter() - start
    return compile_times


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def methods_for(scale):
    if args.methods is not None:
        chosen = set(args.methods) | {"arm"}
    else:
        chosen = set(METHODS) if scale == 1.0 else {"gibbs", "sm", "arm"}
    return [m for m in METHODS if m in chosen]


def run_scale(scale_index, scale, adjacency):
    """All methods and restarts at one scale; returns a dict of results."""
    sub = datasets.downsample_by_degree(adjacency, scale).adjacency
    model = irm_model(sub)
    n = sub.shape[0]
    methods = methods_for(scale)
    S, R, T = args.chains, args.restarts, args.iterations
    log(f"scale {scale}: n = {n}, methods {methods}")
    start = time.perf_counter()
    z0 = [
        initial_states(model, S, args.init_sweeps, np.random.default_rng([args.seed, scale_index, r, 0]))
        for r in range(R)
    ]
    init_time = time.perf_counter() - start

    def rng_for(r, m):
        return np.random.default_rng([args.seed, scale_index, r, 1 + METHODS.index(m)])

    results = {}

    def run_all_restarts(m, iterations):
        lj = np.empty((R, S, iterations))
        k = np.empty((R, S, iterations), dtype=np.int64)
        accept = []
        wall = cpu = 0.0
        last = None
        for r in range(R):
            t0, c0 = time.perf_counter(), time.process_time()
            labels, accepted, moved = run_method(model, m, z0[r], iterations, rng_for(r, m))
            wall += time.perf_counter() - t0
            cpu += time.process_time() - c0
            lj[r], k[r] = traces(model, labels)
            accept.append(accepted / moved if moved else math.nan)
            if r == 0:
                last = labels[-1].astype(np.int64)
            log(f"  {m} restart {r}: {iterations} iterations, K(last) = {k[r, :, -1].tolist()}")
        results[m] = {
            "iterations": iterations,
            "log_joint": lj,
            "clusters": k,
            "accept": np.array(accept),
            "wall": wall,
            "cpu": cpu,
        }
        return last

    arm_final = run_all_restarts("arm", T)
    start = time.perf_counter()
    calibration_rng = np.random.default_rng([args.seed, scale_index, 99])
    per_iteration = calibrate(model, sorted(set(methods) | {"gibbs"}), arm_final, calibration_rng)
    calibration_time = time.perf_counter() - start
    sweep = per_iteration["gibbs"]
    cost = {m: per_iteration[m] / sweep for m in per_iteration}
    budget = T * cost["arm"]
    costs = ", ".join(f"{m} {c:.2f}" for m, c in cost.items())
    log(f"  calibration: Gibbs sweep {1e3 * sweep:.2f} ms CPU/chain; cost {costs}")
    for m in methods:
        if m != "arm":
            run_all_restarts(m, max(2, int(round(budget / cost[m]))))
    for m in methods:
        res = results[m]
        res["cost"] = cost[m]
        res["realized_cost"] = res["cpu"] / (res["iterations"] * S * R) / sweep
        res["rhat"] = {c: rhat_summary(res["log_joint"], max(2, res["iterations"] // c)) for c in CHECKPOINTS}
    return {
        "scale": scale,
        "n": n,
        "methods": methods,
        "results": results,
        "sweep_seconds": sweep,
        "budget": budget,
        "init_time": init_time,
        "calibration_time": calibration_time,
    }


def fmt(mean, sd):
    if mean is None:
        return "--"
    if not math.isfinite(mean):
        return "inf"
    return f"{mean:.2f} ({sd:.2f})" if sd is not None and math.isfinite(sd) else f"{mean:.2f} ( )"


def rule(head):
    """The markdown separator row under the header row ``head``."""
    return "|" + "|".join("-" * len(c) for c in head.split("|")[1:-1]) + "|"


def print_scale(out):
    S, R, T = args.chains, args.restarts, args.iterations
    scale, results = out["scale"], out["results"]
    print()
    print(f"### NIPS 234, scale {scale:g} (n = {out['n']}), S = {S}, {R} restarts, T = {T} ARM iterations, "
          f"normalized cost {out['budget']:.0f} Gibbs sweeps per chain")
    print(f"Gibbs sweep: {1e3 * out['sweep_seconds']:.2f} ms CPU per chain (calibration); "
          f"init {out['init_time']:.1f} s, "
          f"calibration {out['calibration_time']:.1f} s")
    print()
    head = (f"| {'method':6s} | {'iters':>6s} | {'cost':>5s} | {'real.':>5s} | {'wall [s]':>8s} | "
            f"{'R-hat T/2':>14s} | {'R-hat T':>14s} | {'all RS, T':>9s} | {'accept x100':>12s} | "
            f"{'log joint':>9s} | {'K':>5s} | {'paper T=1000':>14s} | {'paper T=2000':>14s} |")
    print(head)
    print(rule(head))
    for m in out["methods"]:
        res = results[m]
        half = res["rhat"][2]
        full = res["rhat"][1]
        accept = res["accept"]
        acc = fmt(100 * accept.mean(), 100 * accept.std(ddof=1) if accept.size > 1 else 0.0) if m != "gibbs" else "--"
        last_half = res["log_joint"][:, :, res["iterations"] // 2 :]
        k_half = res["clusters"][:, :, res["iterations"] // 2 :]
        p1000 = PAPER_TABLE4.get(m) if scale == 1.0 else PAPER_TABLE3.get((scale, 1000), {}).get(m)
        if scale == 1.0 and m in PAPER_TABLE3[(1.0, 1000)]:
            p1000 = PAPER_TABLE3[(1.0, 1000)][m]
        p2000 = PAPER_TABLE3.get((scale, 2000), {}).get(m)
        print(f"| {LABELS[m]:6s} | {res['iterations']:6d} | {res['cost']:5.2f} | {res['realized_cost']:5.2f} | "
              f"{res['wall']:8.1f} | {fmt(half[0], half[1]):>14s} | {fmt(full[0], full[1]):>14s} | {full[3]:9.2f} | "
              f"{acc:>12s} | {last_half.mean():9.1f} | {k_half.mean():5.1f} | "
              f"{fmt(*p1000) if p1000 else '--':>14s} | {fmt(*p2000) if p2000 else '--':>14s} |")
    print("(cost: calibrated Gibbs-sweep units per iteration; real.: run CPU time / (iterations x chains) / sweep; "
          "R-hat: mean (sd) over the S chain indices of the R-hat across restarts; all RS: one group of R*S chains; "
          "log joint, K: mean over the kept half)")
    if scale == 1.0:
        print(f"(paper T=1000 at scale 1: Table 3 for Gibbs/SM/ARM, Table 4 for bSM/sARM; "
              f"Table 4 also gives Gibbs {fmt(*PAPER_TABLE4['gibbs'])}, SM {fmt(*PAPER_TABLE4['sm'])}, "
              f"ARM {fmt(*PAPER_TABLE4['arm'])})")
    print()
    print("R-hat (mean over chain indices) against normalized cost [Gibbs sweeps per chain]:")
    costs = [out["budget"] / c for c in CHECKPOINTS]
    head = f"| {'method':6s} | " + " | ".join(f"{c:>8.0f}" for c in costs) + " |"
    print(head)
    print(rule(head))
    for m in out["methods"]:
        vals = [results[m]["rhat"][c][0] for c in CHECKPOINTS]
        print(f"| {LABELS[m]:6s} | " + " | ".join(f"{v:8.2f}" for v in vals) + " |")
    print()
    mixing_table({m: results[m] for m in out["methods"]})
    if "sm" in results:
        sm_acc, arm_acc = results["sm"]["accept"].mean(), results["arm"]["accept"].mean()
        ratio = arm_acc / sm_acc if sm_acc > 0 else math.inf
        hits = [c for c, cp in zip(costs, CHECKPOINTS)
                if results["arm"]["rhat"][cp][0] <= 1.1 and results["sm"]["rhat"][cp][0] > 1.5]
        print()
        print(f"criterion: ARM accept / SM accept = {ratio:.1f} (>= 10: {'yes' if ratio >= 10 else 'no'}); "
              f"normalized costs with ARM R-hat <= 1.1 and SM R-hat > 1.5: "
              f"{', '.join(f'{c:.0f}' for c in hits) if hits else 'none'}")
    sys.stdout.flush()


def plateau_acceptance(adjacency):
    """``--plateau``: acceptance of each method from plateau states (ARM warm-up), at scale 1."""
    model = irm_model(adjacency)
    methods = args.methods or ["sm", "arm", "arm-past"]
    S, R, T = args.chains, args.restarts, args.iterations
    accept = {m: [] for m in methods}
    log_joint_mean = {m: [] for m in methods}
    start_log_joint = []
    for r in range(R):
        z0 = initial_states(model, S, args.init_sweeps, np.random.default_rng([args.seed, r, 0]))
        warm = run_method(model, "arm", z0, args.plateau_warmup, np.random.default_rng([args.seed, r, 1]))[0]
        plateau = warm[-1].astype(np.int64)
        start_log_joint.append(traces(model, warm[-1:])[0].mean())
        for m in methods:
            labels, accepted, moved = run_method(model, m, plateau, T, np.random.default_rng([args.seed, r, 2 + METHODS.index(m)]))
            accept[m].append(accepted / moved if moved else math.nan)
            log_joint_mean[m].append(traces(model, labels)[0].mean())
            log(f"  restart {r} {m}: {accepted}/{moved} accepted")
    print()
    print(f"### Acceptance from plateau states: NIPS 234, scale 1, S = {S}, {R} restarts, "
          f"{args.plateau_warmup} ARM warm-up iterations, then T = {T} iterations of each method (each followed by a Gibbs sweep)")
    print(f"log joint at the end of the warm-up: mean {np.mean(start_log_joint):.1f} over restarts "
          f"({', '.join(f'{v:.1f}' for v in start_log_joint)})")
    print()
    head = f"| {'method':8s} | {'accept x100':>12s} | {'per restart':>28s} | {'log joint':>9s} | {'vs SM':>6s} |"
    print(head)
    print(rule(head))
    sm = np.mean(accept["sm"]) if "sm" in accept else math.nan
    for m in methods:
        a = 100 * np.array(accept[m])
        ratio = a.mean() / (100 * sm) if sm > 0 else math.nan
        print(f"| {LABELS[m]:8s} | {fmt(a.mean(), a.std(ddof=1) if a.size > 1 else 0.0):>12s} | "
              f"{', '.join(f'{v:.2f}' for v in a):>28s} | {np.mean(log_joint_mean[m]):9.1f} | {ratio:6.1f} |")
    print("(accept x100: accepted / attempted moves over all chains of a restart, mean (sd) over restarts; "
          "log joint: mean over the run; vs SM: mean acceptance / SM's)")


def mixing_table(per_method):
    """Print R-hat and ESS of log joint and K (see the module docstring); ``per_method``: m -> dict with
    ``log_joint`` and ``clusters`` (R, S, T), ``cost`` (Gibbs sweeps per iteration) and ``cpu`` (seconds)."""
    head = (f"| {'method':8s} | {'iters':>6s} | {'R-hat lj':>12s} | {'R-hat K':>12s} | {'ESS lj/sweep':>12s} | "
            f"{'ESS K/sweep':>11s} | {'ESS lj/CPU s':>12s} | {'ESS K/CPU s':>11s} |")
    print(head)
    print(rule(head))
    for m, res in per_method.items():
        iterations = res["log_joint"].shape[2]
        rows = []
        for name in ("log_joint", "clusters"):
            rhat = rhat_summary(res[name].astype(float), iterations)
            rows.append((rhat, *ess_rates(res, name, iterations)))
        (rl, el, cl), (rk, ek, ck) = rows
        print(f"| {LABELS[m]:8s} | {iterations:6d} | {fmt(rl[0], rl[1]):>12s} | {fmt(rk[0], rk[1]):>12s} | {el:12.4f} | "
              f"{ek:11.4f} | {cl:12.2f} | {ck:11.2f} |")
    print("(kept half; R-hat: mean (sd) over chain indices of the R-hat across restarts; ESS: bulk ESS of each chain "
          "index over the restarts, mean over indices, per Gibbs-sweep equivalent and per CPU second of one chain)")


def load_and_print(path):
    """``--load``: per scale of a ``--save`` file, R-hat of the log joint and of K against normalized cost, the
    restarts' mean log joint, the mixing table and (``--plot``) a figure of R-hat against cost."""
    saved = np.load(path)
    scales = sorted({key.split("_")[0] for key in saved.files}, reverse=True)
    for scale in scales:
        per_method = {}
        for m in METHODS:
            key = f"{scale}_{m}"
            if key + "_log_joint" in saved:
                cost, _, _, cpu = saved[key + "_cost"]
                per_method[m] = {"log_joint": saved[key + "_log_joint"], "clusters": saved[key + "_clusters"],
                                 "cost": cost, "cpu": cpu, "accept": saved[key + "_accept"]}
        n_chains = next(iter(per_method.values()))["log_joint"].shape[1]
        print(f"### {path}: scale {scale[1:]}, S = {n_chains}")
        rhat_against_cost(per_method)
        restart_means(per_method)
        mixing_table(per_method)
        if args.plot:
            plot_rhat(per_method, f"NIPS 234, scale {scale[1:]}", args.plot)


def rhat_against_cost(per_method):
    """R-hat (mean over chain indices, across restarts) of the log joint and of K at the prefixes T/8 .. T of every
    run, which all methods reach at the same normalized cost; then which costs meet issue #21's criterion."""
    budget = max(res["cost"] * res["log_joint"].shape[2] for res in per_method.values())
    costs = [budget / c for c in CHECKPOINTS]
    table = {}
    print("R-hat of the log joint / of K against normalized cost [Gibbs sweeps per chain]:")
    head = f"| {'method':8s} | " + " | ".join(f"{c:>13.0f}" for c in costs) + " |"
    print(head)
    print(rule(head))
    for m, res in per_method.items():
        iterations = res["log_joint"].shape[2]
        table[m] = [
            tuple(rhat_summary(res[name].astype(float), max(2, iterations // c))[0] for name in ("log_joint", "clusters"))
            for c in CHECKPOINTS
        ]
        print(f"| {LABELS[m]:8s} | " + " | ".join(f"{lj:6.2f} / {k:4.2f}" for lj, k in table[m]) + " |")
    rates = {
        m: [[ess_rates(res, name, max(4, res["log_joint"].shape[2] // c)) for name in ("log_joint", "clusters")]
            for c in CHECKPOINTS]
        for m, res in per_method.items()
    }
    for unit, digits in ((0, 4), (1, 2)):
        print()
        print(f"Bulk ESS per {('Gibbs-sweep equivalent', 'CPU second')[unit]} of the log joint / of K "
              "(kept half of each prefix, as in the mixing table):")
        head = f"| {'method':8s} | " + " | ".join(f"{c:>15.0f}" for c in costs) + " |"
        print(head)
        print(rule(head))
        for m, cells in rates.items():
            text = [" / ".join(f"{pair[unit]:.{digits}f}" for pair in cell) for cell in cells]
            print(f"| {LABELS[m]:8s} | " + " | ".join(f"{t:>15s}" for t in text) + " |")
    if {"sm", "arm", "arm-past"} <= set(table):
        hits = [
            f"{cost:.0f}"
            for cost, past, sm, arm_ in zip(costs, table["arm-past"], table["sm"], table["arm"])
            if max(past) <= 1.1 and min(sm) > 1.5 and min(arm_) > 1.1
        ]
        print(f"arm-past R-hat <= 1.1 on both while SM's > 1.5 and ARM's > 1.1 on both: at {', '.join(hits) or 'none'}")
        ratio = per_method["arm-past"]["accept"].mean() / per_method["sm"]["accept"].mean()
        print(f"acceptance arm-past / SM = {ratio:.1f}")
    print()


def ess_rates(res, name, length):
    """Bulk ESS of ``res[name]`` on the kept half of its first ``length`` iterations -- each chain index over the R
    restarts, mean over the indices -- per Gibbs-sweep equivalent and per CPU second of one chain."""
    import arviz

    restarts, chains, iterations = res[name].shape
    window = res[name][:, :, length // 2 : length].astype(float)
    ess = np.mean([float(arviz.ess(window[:, s])) for s in range(chains)])
    per_sweep = ess / (restarts * window.shape[2] * res["cost"])
    per_cpu = ess / (res["cpu"] * length / iterations / (2 * chains))
    return per_sweep, per_cpu


def restart_means(per_method):
    """Mean log joint of each restart's S chains over the kept half: a restart whose whole population sits in a
    lower mode shows here, and dominates R-hat across restarts."""
    print("Mean log joint of each restart (kept half, mean over its chains):")
    for m, res in per_method.items():
        lj = res["log_joint"]
        means = lj[:, :, lj.shape[2] // 2 :].mean(axis=(1, 2))
        print(f"  {LABELS[m]:8s} " + ", ".join(f"{v:.1f}" for v in means))
    print()


def plot_rhat(per_method, title, path):
    """Save R-hat of the log joint and of K against normalized cost (12 prefixes of each run)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharex=True)
    for m, res in per_method.items():
        iterations = res["log_joint"].shape[2]
        lengths = np.unique(np.geomspace(16, iterations, 12).astype(int))
        for ax, name in zip(axes, ("log_joint", "clusters")):
            values = [rhat_summary(res[name].astype(float), length)[0] for length in lengths]
            ax.plot(lengths * res["cost"], values, marker="o", markersize=3, label=LABELS[m])
    for ax, label in zip(axes, ("log joint density", "number of clusters K")):
        ax.axhline(1.1, color="grey", linestyle=":", linewidth=1)
        ax.set_xscale("log")
        ax.set_yscale("log")
        low, high = ax.get_ylim()
        ax.set_yticks([t for t in (1.0, 1.1, 1.2, 1.5, 2, 3, 5, 10, 20) if low <= t <= high])
        ax.yaxis.set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("normalized cost [Gibbs sweeps per chain]")
        ax.set_ylabel(f"R-hat of the {label} across restarts")
    axes[0].legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"saved {path}")


def main():
    if args.load:
        print(f"$ python {' '.join(sys.argv)}")
        load_and_print(args.load)
        return
    adjacency = datasets.nips234_coauthor().astype(np.float64)
    if args.plateau:
        methods = sorted(set(args.methods or ["sm", "arm", "arm-past"]) | {"arm", "gibbs"}, key=METHODS.index)
        log("compiling")
        compile_times = compile_all(irm_model(adjacency), methods)
        print(f"$ python {' '.join(sys.argv)}")
        print(f"numba cache: {'warm' if args.warm_cache else 'fresh (first call = compile)'}; first calls [s]: "
              + ", ".join(f"{k} {v:.1f}" for k, v in compile_times.items()))
        start = time.perf_counter()
        plateau_acceptance(adjacency)
        print(f"total (excluding compile) {time.perf_counter() - start:.0f} s")
        return
    all_methods = sorted({m for s in args.scales for m in methods_for(s)} | {"gibbs"}, key=METHODS.index)
    log("compiling")
    compile_times = compile_all(irm_model(adjacency), all_methods)
    print(f"$ python {' '.join(sys.argv)}")
    print(f"numba cache: {'warm' if args.warm_cache else 'fresh (first call = compile)'}; first calls [s]: "
          + ", ".join(f"{k} {v:.1f}" for k, v in compile_times.items()))
    print(f"S = {args.chains}, restarts = {args.restarts}, init = CRP(1) draw + {args.init_sweeps} Gibbs sweeps, "
          f"L = {args.n_intermediate}, seed = {args.seed}")
    sys.stdout.flush()
    outputs = []
    start = time.perf_counter()
    for scale_index, scale in enumerate(args.scales):
        t0 = time.perf_counter()
        out = run_scale(scale_index, scale, adjacency)
        out["time"] = time.perf_counter() - t0
        outputs.append(out)
        print_scale(out)
        print(f"scale {scale:g} took {out['time']:.0f} s")
        sys.stdout.flush()
    print()
    print(f"total (excluding compile) {time.perf_counter() - start:.0f} s")
    if "sm" in outputs[0]["results"] or any("bsm" in o["results"] for o in outputs):
        print()
        print("Acceptance x 100 (Table 5; paper at scale 1):")
        head = f"| {'scale':5s} | " + " | ".join(f"{LABELS[m]:>14s}" for m in METHODS[1:]) + " |"
        print(head)
        print(rule(head))
        for o in outputs:
            cells = []
            for m in METHODS[1:]:
                a = o["results"].get(m, {}).get("accept")
                cells.append(fmt(100 * a.mean(), 100 * a.std(ddof=1) if a.size > 1 else 0.0) if a is not None else "--")
            print(f"| {o['scale']:5g} | " + " | ".join(f"{c:>14s}" for c in cells) + " |")
        print("| paper | " + " | ".join(f"{fmt(*PAPER_TABLE5[m]) if m in PAPER_TABLE5 else '--':>14s}" for m in METHODS[1:]) + " |")
    if args.save:
        payload = {}
        for o in outputs:
            for m, res in o["results"].items():
                key = f"s{o['scale']:g}_{m}"
                payload[key + "_log_joint"] = res["log_joint"]
                payload[key + "_clusters"] = res["clusters"]
                payload[key + "_accept"] = res["accept"]
                payload[key + "_cost"] = np.array([res["cost"], res["realized_cost"], res["wall"], res["cpu"]])
        np.savez_compressed(args.save, **payload)
        print(f"saved {args.save}")


if __name__ == "__main__":
    main()
