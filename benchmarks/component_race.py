"""The race for a component model written in PyMC: time from ``pm.sample``'s call to the planted partition.

Clusterwise linear regression with ``--lines`` planted lines (intercepts 3 apart, slopes in [-0.5, 0.5],
``x ~ U(-1, 1)``, noise 0.3: the lines are at least 6.7 noise sd apart, so the planted partition is recoverable),
or with ``--glm`` a Poisson GLM (log rate ``a_k + b_k x``).  Each sampler runs ``pm.sample`` from its default
start (one cluster for the partition samplers) with ``--chains`` chains on ``--cores`` cores, and a callback
records, at every draw (tuning included), the wall time since the call and the adjusted Rand index of that draw's
partition with the planted one:

* ``default``: ``pm.sample()`` with no ``step=`` (the library's assignment: the partition step and NUTS);
* ``algorithm 8``: ``GibbsStep`` on ``z``, NUTS on the rest;
* ``split-merge``: ``NonconjugateSplitMergeStep`` (``steps.component_split_merge``, then one Algorithm 8 scan),
  NUTS on the rest;
* ``NUTS mixture``: what a PyMC user fits today, a sparse finite mixture with ``K`` components
  (``w ~ Dirichlet(1/K)``, ``pm.NormalMixture`` / ``pm.Mixture`` of Poissons), all of it NUTS; a draw's partition
  assigns each item to its most probable component.

Columns: seconds from the call to the first draw with ARI >= ``--target`` (any chain; ``>budget`` if none within
``--budget`` seconds, when the run is stopped), seconds until every chain has drawn the planted partition (ARI >=
``--target`` with exactly ``--lines`` clusters: no spurious cluster left), the last draw's ARI, R-hat of the number of clusters over the chains
(occupied components for the mixture), divergences, and the split-merge acceptance rate.  One run per sampler and
size (``--repeats`` for more, medians); the load average is printed before and after.

Run:  python benchmarks/component_race.py [--n 1000 10000 100000] [--lines 4] [--glm] [--budget 600]
          [--samplers default gibbs split_merge nuts_mixture] [--chains 2] [--cores 2] [--draws 500] [--tune 500]
          [--k-max 20] [--plot docs/figures/component_race.png]
"""

import argparse
import os
import sys
import time

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--n", nargs="+", type=int, default=[1000, 10_000, 100_000])
parser.add_argument("--lines", type=int, default=4)
parser.add_argument("--glm", action="store_true", help="a Poisson GLM instead of the linear regression")
parser.add_argument("--samplers", nargs="+", default=["default", "gibbs", "split_merge", "nuts_mixture"])
parser.add_argument("--budget", type=float, default=600.0, help="seconds before a run is stopped")
parser.add_argument("--target", type=float, default=0.95)
parser.add_argument("--chains", type=int, default=2)
parser.add_argument("--cores", type=int, default=2)
parser.add_argument("--draws", type=int, default=500)
parser.add_argument("--tune", type=int, default=500)
parser.add_argument("--k-max", type=int, default=20)
parser.add_argument("--repeats", type=int, default=1)
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--plot", default=None, help="save the ARI-against-time curves to this path")
parser.add_argument("--table", default=None, help="also write the table to this file (markdown)")
args = parser.parse_args() if __name__ == "__main__" else parser.parse_args([])  # defaults when imported
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
import pymc as pm  # noqa: E402
from scipy import stats  # noqa: E402

import pymc_partitions as pmp  # noqa: E402

NOISE = 0.3


class OutOfTime(Exception):
    pass


def planted(n, rng):
    """``(x, y, labels)`` of the planted lines (module docstring)."""
    labels = rng.integers(args.lines, size=n)
    x = rng.uniform(-1.0, 1.0, size=n)
    intercepts = 3.0 * np.arange(args.lines) - 1.5 * (args.lines - 1)
    slopes = rng.uniform(-0.5, 0.5, size=args.lines)
    if args.glm:
        intercepts = np.log(2.0) + 1.2 * np.arange(args.lines)  # rates 2, 6.6, 22, ... at x = 0
        return x, rng.poisson(np.exp(intercepts[labels] + slopes[labels] * x)), labels
    return x, intercepts[labels] + slopes[labels] * x + rng.normal(0.0, NOISE, size=n), labels


def component_model(x, y):
    """The model in plain PyMC, the rows i.i.d. (the partition samplers' model)."""
    n, k = len(y), args.k_max
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=n)
        a = pm.Normal("a", 0.0 if not args.glm else np.log(y.mean() + 0.5), 5.0 if not args.glm else 2.0, shape=k)
        b = pm.Normal("b", 0.0, 2.0, shape=k)
        if args.glm:
            pm.Poisson("y", pm.math.exp(a[z] + b[z] * x), observed=y)
        else:
            sigma = pm.HalfNormal("sigma", 1.0)
            pm.Normal("y", a[z] + b[z] * x, sigma, observed=y)
    return model


def mixture_model(x, y):
    """The sparse finite mixture a PyMC user fits with NUTS: the same components, ``w ~ Dirichlet(1/K)``."""
    k = args.k_max
    with pm.Model() as model:
        w = pm.Dirichlet("w", np.full(k, 1.0 / k))
        a = pm.Normal("a", 0.0 if not args.glm else np.log(y.mean() + 0.5), 5.0 if not args.glm else 2.0, shape=k)
        b = pm.Normal("b", 0.0, 2.0, shape=k)
        mean = a[None, :] + b[None, :] * x[:, None]
        if args.glm:
            pm.Mixture("y", w, pm.Poisson.dist(mu=pm.math.exp(mean)), observed=y)
        else:
            sigma = pm.HalfNormal("sigma", 1.0)
            pm.NormalMixture("y", w, mu=mean, sigma=sigma, observed=y)
    return model


def mixture_partition(values, x, y):
    """Each item's most probable component at a draw of the mixture (``values``: w, a, b and sigma)."""
    w, a, b, sigma = values
    mean = a[None, :] + b[None, :] * x[:, None]
    if args.glm:
        log_f = stats.poisson.logpmf(y[:, None], np.exp(mean))
    else:
        log_f = stats.norm.logpdf(y[:, None], mean, sigma)
    return np.argmax(np.log(np.maximum(w, 1e-300)) + log_f, axis=1)


def run(name, x, y, labels, seed):
    """One ``pm.sample`` of sampler ``name``; returns the record of (seconds, chain, ARI, K) per draw and the idata."""
    model = mixture_model(x, y) if name == "nuts_mixture" else component_model(x, y)
    if name == "nuts_mixture":  # the draws hold transformed values: w, a, b and sigma from them
        names = ["w", "a", "b"] + ([] if args.glm else ["sigma"])
        compiled = model.compile_fn(
            [model[v] for v in names], inputs=model.value_vars, on_unused_input="ignore", point_fn=True
        )
        constrained = (lambda point: [*compiled(point), 1.0]) if args.glm else compiled  # noqa: E731 (no sigma)
    record = []
    start = time.perf_counter()

    def callback(trace, draw):
        elapsed = time.perf_counter() - start
        point = draw.point
        if name == "nuts_mixture":
            z = mixture_partition(constrained(point), x, y)
        else:
            z = point["z"]
        record.append((elapsed, draw.chain, pmp.adjusted_rand_index(z, labels), len(np.unique(z))))
        if elapsed > args.budget:
            raise OutOfTime

    with model:
        steps = {
            "default": None,
            "gibbs": lambda: [pmp.GibbsStep(model["z"])],
            "split_merge": lambda: [pmp.NonconjugateSplitMergeStep(model["z"], n_split_scans=2)],
            "nuts_mixture": None,
        }[name]
        try:
            idata = pm.sample(
                draws=args.draws, tune=args.tune, chains=args.chains, cores=args.cores, random_seed=seed,
                step=None if steps is None else steps(), callback=callback, progressbar=False,
                compute_convergence_checks=False, discard_tuned_samples=False,
            )
        except OutOfTime:
            idata = None
    return np.array(record), idata


def summary(name, record, idata):
    reached = record[record[:, 2] >= args.target]
    seconds = f"{reached[0, 0]:.1f}" if len(reached) else f">{record[-1, 0]:.0f}"
    planted_at = []
    for c in np.unique(record[:, 1]):
        chain = record[record[:, 1] == c]
        hits = chain[(chain[:, 2] >= args.target) & (chain[:, 3] == args.lines)]
        planted_at.append(hits[0, 0] if len(hits) else np.inf)
    all_planted = f"{max(planted_at):.1f}" if np.isfinite(max(planted_at)) else f">{record[-1, 0]:.0f}"
    last = {int(c): record[record[:, 1] == c][-1, 2] for c in np.unique(record[:, 1])}
    rhat, divergences, accept = "-", "-", "-"
    if idata is not None:
        stats_ = idata.sample_stats
        if "partition_n_clusters" in stats_:
            rhat = f"{float(pmp.summarize(idata).loc['n_clusters', 'r_hat']):.3f}"
        if "partition_accepted" in stats_ and name != "gibbs":
            moves = stats_["partition_move"].values
            accepted = stats_["partition_accepted"].values[(moves == 1) | (moves == 2)]
            accept = f"{accepted.mean():.2f}" if accepted.size else "-"
        if "diverging" in stats_:
            divergences = str(int(stats_["diverging"].sum()))
    return seconds, all_planted, min(last.values()), rhat, divergences, accept


def main():
    print(f"load average before: {os.getloadavg()}")
    kind = "Poisson GLM" if args.glm else "linear regression"
    print(f"{kind}, {args.lines} planted lines, K_max = K = {args.k_max}, {args.chains} chains on {args.cores} cores")
    header = f"{'n':>7} | {'sampler':>13} | {'s to ARI ' + str(args.target):>14} | {'s, all chains planted':>21} | {'last ARI':>8} | {'R-hat K':>7} | {'div.':>5} | {'accept':>6}"
    print(header)
    print("-" * len(header))
    curves, rows = {}, []
    for n in args.n:
        rng = np.random.default_rng(args.seed + n)
        x, y, labels = planted(n, rng)
        for name in args.samplers:
            for repeat in range(args.repeats):
                record, idata = run(name, x, y, labels, seed=args.seed + repeat)
                curves[(n, name, repeat)] = record
                seconds, all_planted, last, rhat, divergences, accept = summary(name, record, idata)
                line = f"{n:>7} | {name:>13} | {seconds:>14} | {all_planted:>21} | {last:>8.3f} | {rhat:>7} | {divergences:>5} | {accept:>6}"
                rows.append(line)
                print(line, flush=True)
    print(f"load average after: {os.getloadavg()}")
    print("command: python benchmarks/component_race.py " + " ".join(sys.argv[1:]))
    if args.table:
        with open(args.table, "w") as out:
            out.write("\n".join([header, "-" * len(header), *rows]) + "\n")
    if args.plot:
        plot(curves)


def plot(curves):
    """ARI with the planted lines (first chain) and the number of clusters (every chain) against the seconds since
    ``pm.sample``'s call, the first repeat of each sampler and size."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    sizes = sorted({n for n, _, _ in curves})
    fig, axes = plt.subplots(2, len(sizes), figsize=(4.5 * len(sizes), 6.0), squeeze=False, sharex="col")
    for column, n in enumerate(sizes):
        ari, clusters = axes[0, column], axes[1, column]
        for index, name in enumerate(args.samplers):
            record = curves.get((n, name, 0))
            if record is None or not len(record):
                continue
            for chain in np.unique(record[:, 1]):
                rows = record[record[:, 1] == chain]
                if chain == record[0, 1]:
                    ari.plot(rows[:, 0], rows[:, 2], color=f"C{index}", label=name)
                clusters.plot(rows[:, 0], rows[:, 3], color=f"C{index}", lw=0.8, label=name if chain == record[0, 1] else None)
        ari.axhline(args.target, color="grey", ls=":")
        clusters.axhline(args.lines, color="grey", ls=":")
        ari.set(title=f"n = {n}", ylabel="ARI with the planted lines (chain 1)", ylim=(-0.05, 1.05))
        clusters.set(xlabel="seconds since pm.sample", ylabel="clusters (every chain)")
        clusters.set_xscale("log")
        clusters.xaxis.set_major_formatter(ScalarFormatter())
        clusters.xaxis.set_minor_formatter(NullFormatter())
    axes[0, 0].legend()
    fig.tight_layout()
    fig.savefig(args.plot, dpi=120)
    print(f"figure: {args.plot}")


if __name__ == "__main__":
    main()
