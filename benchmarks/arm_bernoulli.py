"""Table 2 of the ARM paper: Gibbs, split-merge, ARM and arm-past on the Bernoulli mixture, Examples 1-3.

Protocol (Herlau et al., ``papers/000_…``, Sec. 3.1, Table 2, and Sec. 3.4):

* data: ``datasets.bernoulli_mixture(example=k)``, n = 100 items in 5 planted
  blocks of 20, d = 6, 8, 10 (Table 1); DP(alpha = 1) prior, Beta(1, 1)
  Bernoulli likelihood;
* per data set, S = 8 chains each run 50 Gibbs sweeps from the partition with
  every item in one cluster (the paper does not state its start); those 8
  states start all three methods;
* then T iterations of each method, each the transition of its PyMC step run
  by the test runners (``tests/runners.py``): Gibbs (one sweep), SM (one Jain-Neal split-merge
  proposal with L = 5 restricted scans, then one sweep), ARM (one ARM move
  per chain, then one sweep, the 8 chains forming the population) and
  arm-past (the same with ``ARMStep(variant="arm-past")``'s move, ours, not
  in the paper);
* per chain: the autocorrelation time of the largest-block fraction, and of
  the co-clustering indicator ``delta(z_i, z_j)`` for the 105 pairs of 15 items
  (3 drawn at random from each planted block, the same items for every chain
  and method of a data set), summarised per chain by the mean over pairs and
  by the max over pairs (the paper's "average of the maximum" is ambiguous);
* autocorrelation time ``1 + 2 sum_{tau>=1} r(tau)`` on the whole run (no
  burn-in; the paper discards none either), ``r`` the sample autocorrelation
  of the chain (biased covariance via FFT), the sum truncated by Geyer's
  initial monotone sequence (pairs ``r(2k) + r(2k+1)`` summed while positive,
  made non-increasing).  A trace that is constant in a chain has no defined
  time; it is left out and counted;
* cost factor of a method = wall time of its T iterations on the 8 chains /
  wall time of T Gibbs iterations on the same 8 chains and data set (measured
  in the same run, one after the other); "normalized iterations" = T x cost
  factor (mean and std over data sets, as in Table 2), and normalized
  autocorrelation times = times x the median cost factor of the method in
  that example, i.e. in units of Gibbs-sweep equivalents.

Acceptance rates are counted by the chain runners from the transitions' ``Info``.

Default: a quick setting (3 data sets per example, T = 500; a few minutes).
``--full``: the paper's 20 data sets x T = 2000.  Compile time (first calls in
a fresh NUMBA_CACHE_DIR, or cache load with ``--warm-cache``) is reported
separately and is not part of any cost factor.

``--plot PATH`` saves the normalized times (mean and standard error over data
sets x chains, per example and method) as a bar chart.

Run:  python benchmarks/arm_bernoulli.py [--full | --datasets 3 --iterations 500] [--examples 1 2 3] [--seed 0]
      python benchmarks/arm_bernoulli.py --full --plot docs/figures/arm_bernoulli_normalized.png
"""

import argparse
import os
import re
import sys
import tempfile
import time

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--full", action="store_true", help="the paper's setting: 20 data sets x 2000 iterations")
parser.add_argument("--datasets", type=int, default=None, help="data sets per example (default 3; 20 with --full)")
parser.add_argument(
    "--iterations", type=int, default=None, help="iterations T per method (default 500; 2000 with --full)"
)
parser.add_argument("--examples", type=int, nargs="+", default=[1, 2, 3], choices=[1, 2, 3])
parser.add_argument("--chains", type=int, default=8)
parser.add_argument("--init-iterations", type=int, default=50, help="Gibbs sweeps giving the shared start states")
parser.add_argument("--intermediate", type=int, default=5, help="restricted scans L of split-merge")
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--warm-cache", action="store_true", help="use the existing numba cache instead of a fresh one")
parser.add_argument("--plot", default=None, help="save a figure of the normalized autocorrelation times to this path")
args = parser.parse_args()
if args.datasets is None:
    args.datasets = 20 if args.full else 3
if args.iterations is None:
    args.iterations = 2000 if args.full else 500
if not args.warm_cache:
    os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="pmp-bench-numba-")

import numpy as np  # noqa: E402
from pymc_partitions import families, priors  # noqa: E402
from pymc_partitions.datasets import bernoulli_mixture  # noqa: E402
from pymc_partitions.kernels import arm, gibbs, split_merge  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import runners as chain  # noqa: E402  (the test runners: tests/runners.py)
from pymc_partitions.state import make_model  # noqa: E402

METHODS = ("Gibbs", "SM", "ARM", "arm-past")
ITEMS_PER_BLOCK = 3

# Table 2 of the paper: mean (std) over 20 data sets x 8 chains; the paper writes
# 116.5(939) for 116.5 +- 93.9.  Normalized iterations for T = 2000.
PAPER = {
    (1, "Gibbs"): ((116.5, 93.9), (91.6, 88.9), (2000, 0)),
    (1, "SM"): ((27.8, 12.2), (23.2, 10.3), (6741, 468)),
    (1, "ARM"): ((14.9, 7.7), (13.6, 7.1), (6712, 47)),
    (2, "Gibbs"): ((165.4, 165.6), (131.3, 135.9), (2000, 0)),
    (2, "SM"): ((27.9, 14.9), (26.4, 14.9), (6855, 482)),
    (2, "ARM"): ((8.5, 5.0), (9.2, 4.9), (6731, 59)),
    (3, "Gibbs"): ((88.9, 137.4), (99.3, 132.7), (2000, 0)),
    (3, "SM"): ((19.3, 17.1), (30.4, 25.4), (7503, 185)),
    (3, "ARM"): ((10.8, 12.5), (14.7, 14.0), (6705, 44)),
}


def autocorrelation_time(x):
    """Integrated autocorrelation time of each column of ``x`` (T, m); NaN for a constant column.

    ``tau = 1 + 2 sum_{t=1}^{2K+1} r(t) = -1 + 2 sum_{k=0}^{K} G_k`` with
    ``G_k = r(2k) + r(2k+1)``, ``K`` the last index of the initial positive
    sequence of ``G`` and ``G`` replaced by its running minimum (Geyer 1992,
    initial monotone sequence estimator).
    """
    x = np.asarray(x, dtype=np.float64)
    n_steps = x.shape[0]
    centred = x - x.mean(axis=0)
    size = 1 << int(2 * n_steps - 1).bit_length()
    spectrum = np.fft.rfft(centred, n=size, axis=0)
    acov = np.fft.irfft(spectrum * np.conj(spectrum), n=size, axis=0)[:n_steps] / n_steps
    defined = acov[0] > 1e-12
    rho = acov / np.where(defined, acov[0], 1.0)
    half = n_steps // 2
    pair_sums = rho[0 : 2 * half : 2] + rho[1 : 2 * half : 2]
    nonpositive = pair_sums <= 0.0
    first = np.where(nonpositive.any(axis=0), nonpositive.argmax(axis=0), half)
    monotone = np.minimum.accumulate(pair_sums, axis=0)
    keep = np.arange(half)[:, None] < first[None, :]
    tau = -1.0 + 2.0 * np.where(keep, monotone, 0.0).sum(axis=0)
    return np.where(defined, tau, np.nan)


def largest_fraction_trace(labels):
    """Fraction of items in the largest cluster after each iteration; ``labels`` (T, n) canonical."""
    n_steps, n = labels.shape
    offsets = labels.astype(np.int64) + n * np.arange(n_steps)[:, None]
    counts = np.bincount(offsets.ravel(), minlength=n_steps * n).reshape(n_steps, n)
    return counts.max(axis=1) / n


def chain_statistics(trace, pairs):
    """Per-chain ``(tau_trace, tau_pairs_mean, tau_pairs_max, n_pairs_undefined)`` of one chain's (T, n) labels."""
    tau_trace = autocorrelation_time(largest_fraction_trace(trace)[:, None])[0]
    indicators = trace[:, pairs[:, 0]] == trace[:, pairs[:, 1]]
    tau_pairs = autocorrelation_time(indicators)
    defined = tau_pairs[~np.isnan(tau_pairs)]
    undefined = pairs.shape[0] - defined.shape[0]
    if defined.shape[0] == 0:
        return tau_trace, np.nan, np.nan, undefined
    return tau_trace, defined.mean(), defined.max(), undefined


def bernoulli_model(data):
    d = data.shape[1]
    params = families.pack_params(families.BETA_BERNOULLI, d, 1.0, 1.0)
    return make_model(families.BETA_BERNOULLI, data, params, priors.DP, np.array([1.0]), priors.empty_table())


def transitions():
    """Each method's chain runner, step transition and options: one Gibbs sweep; one split-merge proposal
    (L scans) then a sweep; one ARM (or arm-past) move then a sweep, the chains a population (the PyMC steps'
    ``transition`` with these options; their sampler state is the options)."""
    return {
        "Gibbs": (chain.run, gibbs.transition, gibbs.Options(1)),
        "SM": (chain.run, split_merge.transition, split_merge.Options(1, args.intermediate, True)),
        "ARM": (chain.run_population, arm.transition, arm.Options(arm.ARM, 1, True)),
        "arm-past": (chain.run_population, arm.transition, arm.Options(arm.ARM_PAST, 1, True)),
    }


def start_states(model, n, rng_key):
    """``S`` states after ``init_iterations`` Gibbs sweeps from one cluster, one Gibbs chain each."""
    one_cluster = np.zeros((args.chains, n), dtype=np.int64)
    labels, _, _ = chain.run(gibbs.transition, model, one_cluster, gibbs.Options(1), args.init_iterations, np.random.default_rng(rng_key))
    return labels[-1].astype(np.int64)


def run_dataset(example, index):
    """Every method on data set ``index`` of ``example``: per-method stats, times and acceptance."""
    key = (args.seed, example, index)
    data, target = bernoulli_mixture(example=example, random_seed=np.random.default_rng([*key, 0]))
    n = data.shape[0]
    model = bernoulli_model(data)
    rng = np.random.default_rng([*key, 1])
    items = np.concatenate([rng.choice(np.flatnonzero(target == b), ITEMS_PER_BLOCK, replace=False) for b in range(5)])
    pairs = np.array([(items[a], items[b]) for a in range(items.size) for b in range(a + 1, items.size)])
    z0 = start_states(model, n, (*key, 2))
    T = args.iterations

    traces, seconds, acceptance = {}, {}, {}
    for code, (name, (run, transition, options)) in enumerate(transitions().items()):
        start = time.perf_counter()
        labels, accepted, proposed = run(transition, model, z0, options, T, np.random.default_rng([*key, 3 + code]))
        seconds[name] = time.perf_counter() - start
        traces[name] = [labels[:, s] for s in range(args.chains)]
        acceptance[name] = (int(accepted.sum()), int(proposed.sum()))

    stats = {name: np.array([chain_statistics(tr, pairs) for tr in traces[name]]) for name in METHODS}
    return stats, seconds, acceptance, pairs.shape[0]


def compile_all():
    """First call of every jitted entry point on a tiny run (compile, or cache load)."""
    data, _ = bernoulli_mixture(example=1, random_seed=0)
    model = bernoulli_model(data)
    z = np.zeros(data.shape[0], dtype=np.int64)
    z0 = np.stack([z, np.arange(data.shape[0]) % 2, np.arange(data.shape[0]) % 3]).astype(np.int64)
    start = time.perf_counter()
    for run, transition, options in transitions().values():
        run(transition, model, z0, options, 4, np.random.default_rng(0))
    return time.perf_counter() - start


def cost_factor(per_method, name):
    """Median over data sets of ``name``'s time / Gibbs's time: its cost per iteration in Gibbs sweeps."""
    return np.median(np.array(per_method[name]["seconds"]) / np.array(per_method["Gibbs"]["seconds"]))


def mean_std(values, digits=1):
    values = np.asarray(values, dtype=float)
    values = values[~np.isnan(values)]
    if values.size == 0:
        return "n/a"
    return f"{values.mean():.{digits}f} ({values.std():.{digits}f})"


def main():
    wall = time.perf_counter()
    compile_seconds = compile_all()
    results = {}
    for example in args.examples:
        per_method = {name: {"stats": [], "seconds": [], "accepted": 0, "moved": 0} for name in METHODS}
        n_pairs = 0
        for index in range(args.datasets):
            start = time.perf_counter()
            stats, seconds, acceptance, n_pairs = run_dataset(example, index)
            for name in METHODS:
                per_method[name]["stats"].append(stats[name])
                per_method[name]["seconds"].append(seconds[name])
            for name, (accepted, moved) in acceptance.items():
                per_method[name]["accepted"] += accepted
                per_method[name]["moved"] += moved
            print(
                f"example {example} data set {index + 1}/{args.datasets}: {time.perf_counter() - start:.1f} s "
                "(" + ", ".join(f"{name} {seconds[name]:.2f} s" for name in METHODS) + ")",
                file=sys.stderr,
                flush=True,
            )
        results[example] = (per_method, n_pairs)

    T = args.iterations
    print(f"$ python {' '.join(sys.argv)}")
    print(
        f"Bernoulli mixture, n = 100, {args.datasets} data sets x {args.chains} chains per example, T = {T}, "
        f"{args.init_iterations} Gibbs sweeps from one cluster to start, SM L = {args.intermediate}, "
        f"alpha = a = b = 1, "
        f"seed {args.seed}"
    )
    print(
        f"numba cache: {'warm' if args.warm_cache else 'fresh'}; compile (first calls): {compile_seconds:.1f} s; "
        f"total wall time {time.perf_counter() - wall:.0f} s"
    )
    print()
    print("Autocorrelation times, mean (std) over data sets x chains;")
    print("'norm.' = x median cost factor (Gibbs-sweep units).")
    print("Indicator: per chain, mean (or max) over the pairs whose indicator is not constant in that chain.")
    header = (
        f"| ex | method   | {'trace':>13s} | {'indicator':>13s} | {'indicator max':>13s} | {'norm. trace':>13s} "
        f"| {'norm. indic.':>13s} | {'paper trace':>13s} | {'paper indic.':>13s} |"
    )
    print(header)
    print(re.sub(r"[^|]", "-", header))
    for example, (per_method, _) in results.items():
        gibbs_seconds = np.array(per_method["Gibbs"]["seconds"])
        for name in METHODS:
            stats = np.concatenate(per_method[name]["stats"])
            factor = cost_factor(per_method, name)
            paper = [f"{mean} ({std})" for mean, std in PAPER[(example, name)][:2]] if (example, name) in PAPER else ["--"] * 2
            print(
                f"| {example:2d} | {name:8s} | {mean_std(stats[:, 0]):>13s} | {mean_std(stats[:, 1]):>13s} "
                f"| {mean_std(stats[:, 2]):>13s} | {mean_std(stats[:, 0] * factor):>13s} "
                f"| {mean_std(stats[:, 1] * factor):>13s} "
                f"| {paper[0]:>13s} | {paper[1]:>13s} |"
            )
    print()
    print("Cost per iteration in Gibbs-sweep units (method time / Gibbs time, same data set and start states),")
    print(f"normalized iterations = {T} x cost factor (mean (std) over data sets; the paper's are for T = 2000),")
    print("acceptance = accepted / attempted moves (ARM: iterations with a usable background),")
    print("undefined = constant traces.")
    header = (
        f"| ex | method   | {'cost factor med [min, max]':>26s} | {'norm. iterations':>16s} | {'paper norm. it.':>15s} "
        f"| {'accept':>6s} | {'time [s]':>8s} | {'undefined trace':>15s} | {'undefined pairs':>15s} |"
    )
    print(header)
    print(re.sub(r"[^|]", "-", header))
    for example, (per_method, n_pairs) in results.items():
        gibbs_seconds = np.array(per_method["Gibbs"]["seconds"])
        for name in METHODS:
            ratios = np.array(per_method[name]["seconds"]) / gibbs_seconds
            stats = np.concatenate(per_method[name]["stats"])
            n_chains = stats.shape[0]
            accept = (
                f"{per_method[name]['accepted'] / per_method[name]['moved']:.3f}" if per_method[name]["moved"] else "-"
            )
            paper = "{} ({})".format(*PAPER[(example, name)][2]) if (example, name) in PAPER else "--"
            cost = f"{np.median(ratios):.2f} [{ratios.min():.2f}, {ratios.max():.2f}]"
            print(
                f"| {example:2d} | {name:8s} | {cost:>26s} | {mean_std(T * ratios, 0):>16s} "
                f"| {paper:>15s} | {accept:>6s} | {sum(per_method[name]['seconds']):8.1f} "
                f"| {f'{int(np.isnan(stats[:, 0]).sum())}/{n_chains}':>15s} "
                f"| {f'{int(stats[:, 3].sum())}/{n_chains * n_pairs}':>15s} |"
            )
    print()
    print("Spread and paired comparison (the paper's Fig. 6b): per-chain median [10%, 90%] of the times, and in how")
    print("many data sets ARM's (or arm-past's) time (mean over its chains) is lower than the method's, raw for ARM")
    print("and after normalization for both.")
    header = (
        f"| ex | method   | {'trace median [10%, 90%]':>24s} | {'indic. median [10%, 90%]':>24s} "
        f"| {'ARM lower, raw (trace, indic.)':>30s} | {'ARM lower, normalized':>21s} "
        f"| {'arm-past lower, normalized':>26s} |"
    )
    print(header)
    print(re.sub(r"[^|]", "-", header))
    for example, (per_method, _) in results.items():
        gibbs_seconds = np.array(per_method["Gibbs"]["seconds"])
        factors = {name: cost_factor(per_method, name) for name in METHODS}
        means = {name: np.array([np.nanmean(s[:, :2], axis=0) for s in per_method[name]["stats"]]) for name in METHODS}

        def lower(reference, name, normalized=True):
            """Data sets where ``reference``'s (trace, indicator) time is below ``name``'s: "a/N, b/N"."""
            if name == reference:
                return "-"
            scale = (factors[reference], factors[name]) if normalized else (1.0, 1.0)
            counts = (means[reference] * scale[0] < means[name] * scale[1]).sum(axis=0)
            return f"{counts[0]}/{len(means[name])}, {counts[1]}/{len(means[name])}"

        for name in METHODS:
            stats = np.concatenate(per_method[name]["stats"])
            spreads = [
                f"{np.nanmedian(column):.1f} [{np.nanpercentile(column, 10):.1f}, {np.nanpercentile(column, 90):.1f}]"
                for column in (stats[:, 0], stats[:, 1])
            ]
            print(
                f"| {example:2d} | {name:8s} | {spreads[0]:>24s} | {spreads[1]:>24s} "
                f"| {lower('ARM', name, normalized=False):>30s} | {lower('ARM', name):>21s} "
                f"| {lower('arm-past', name):>26s} |"
            )
    if args.plot:
        plot_normalized(results, args.plot)


def plot_normalized(results, path):
    """Bar chart: per example, each method's normalized trace and indicator-max times (mean +- s.e.)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = ((0, "largest-block fraction"), (2, "co-clustering indicator, max over pairs"))
    fig, axes = plt.subplots(1, len(columns), figsize=(11, 3.8))
    width = 0.8 / len(METHODS)
    for ax, (column, title) in zip(axes, columns):
        for m, name in enumerate(METHODS):
            means, errors = [], []
            for per_method, _ in results.values():
                times = np.concatenate(per_method[name]["stats"])[:, column] * cost_factor(per_method, name)
                times = times[~np.isnan(times)]
                means.append(times.mean())
                errors.append(times.std() / np.sqrt(times.size))
            positions = np.arange(len(results)) + (m - (len(METHODS) - 1) / 2) * width
            ax.bar(positions, means, width, yerr=errors, capsize=2, label=name)
        ax.set_xticks(np.arange(len(results)), [f"Example {example}" for example in results])
        ax.set_title(title, fontsize=10)
        ax.set_ylabel("autocorrelation time [Gibbs-sweep equivalents]")
    axes[0].legend(fontsize=8)
    fig.suptitle(f"Bernoulli mixture, {args.datasets} data sets x {args.chains} chains, T = {args.iterations}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"saved {path}")


if __name__ == "__main__":
    main()
