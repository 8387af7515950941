"""Jain & Neal (2007): Algorithms 7 and 8 against nonconjugate split-merge on a Normal mixture.

The experiments of ``papers/001_…`` (Secs. 5.2 and 6) with this package's kernels: each
sampler is the transition of its PyMC step (``IncrementalMetropolisStep``,
``GibbsStep`` -- Algorithm 8 --, ``NonconjugateSplitMergeStep``), run by
``tests/runners.py``'s ``run`` from the partition with every item in one cluster, as in
the paper.  Model: ``NormalMixture`` under a DP(alpha = 1) partition prior,
``mu_j ~ N(w_j, 1/b_j)``, ``tau_j ~ Gamma(r, rate R)``, ``K_max = n`` (no
restriction).

* Simulated Examples 1 and 2 (``datasets.normal_mixture``): n = 100, five
  components of 20; prior ``w = 0``, ``b = 1/100``, ``r = R = 2`` (assumed:
  the paper's values are not legible).  Samplers: Algorithm 7, Algorithm 8
  with m = 3 auxiliary components, SM(5,1,0,5), SM(0,1,0,0), SM(0,1,1,0) and
  SM(5,1,1,5) (a/d restricted scans to the split/merge launch states, b
  proposals and c Algorithm 8 scans with m = 1 per iteration).
* Beetle data (``datasets.flea_beetles``, n = 74, d = 6): Algorithm 8 (m = 3)
  against SM(5,1,1,5) under two priors: "vague", ``w_j = 0``, ``b_j = 10^-4``
  (the paper's first setting is not legible; ours puts the means' prior far
  from the data, as a prior chosen without looking at it does) and
  "data-based", ``w_j`` = the feature's mean and ``b_j`` = 1/its variance (the
  paper's second, "more reflective of the data"); ``r = R = 1`` in both.

Reported per sampler: CPU seconds per iteration (``time.process_time``
around each chain, median over chains; compile time separate), burn-in (the
first iteration whose partition has adjusted Rand index >= 0.9 with the true
components -- >= 0.8 with the species for the beetles --, median over
chains), the integrated autocorrelation time (``n / ESS``, ArviZ, all chains
after the burn-in cut) of the largest component's fraction and of one
co-clustering indicator, in iterations and in CPU seconds, and the traces of
the cumulative fractions of the five largest components (the paper's
figures), saved as PNG next to ``docs/nonconjugate_results.md``.

Run:  python benchmarks/nonconjugate.py [--iterations 5000] [--beetle-iterations 2000] [--chains 3] [--seed 0]
"""

import argparse
import os
import sys
import tempfile
import time

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--iterations", type=int, default=5000, help="iterations per chain, simulated examples")
parser.add_argument("--beetle-iterations", type=int, default=2000, help="iterations per chain, beetle data")
parser.add_argument("--chains", type=int, default=3, help="independent chains per sampler (seeds)")
parser.add_argument("--burn", type=float, default=0.2, help="fraction of each chain left out of autocorrelation times")
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs"))
parser.add_argument("--warm-cache", action="store_true", help="use the existing numba cache instead of a fresh one")
args = parser.parse_args()
if not args.warm_cache:
    os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="pmp-bench-numba-")

import arviz as az  # noqa: E402
import matplotlib  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from pymc_partitions import families, priors  # noqa: E402
from pymc_partitions.datasets import flea_beetles, normal_mixture  # noqa: E402
from pymc_partitions.kernels import gibbs, incremental_metropolis, nonconjugate_split_merge  # noqa: E402
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import runners as chain  # noqa: E402  (the test runners: tests/runners.py)
from pymc_partitions.state import make_model  # noqa: E402
from pymc_partitions.summary.distances import distances_to_reference  # noqa: E402


def split_merge(a, b, c, d):
    return nonconjugate_split_merge.transition, nonconjugate_split_merge.Options(a, b, c, d, 1)


SAMPLERS = {
    "Alg. 7": (incremental_metropolis.transition, incremental_metropolis.Options(1)),
    "Alg. 8 (m=3)": (gibbs.transition, gibbs.Options(1, 3)),
    "SM(5,1,0,5)": split_merge(5, 1, 0, 5),
    "SM(0,1,0,0)": split_merge(0, 1, 0, 0),
    "SM(0,1,1,0)": split_merge(0, 1, 1, 0),
    "SM(5,1,1,5)": split_merge(5, 1, 1, 5),
}
BEETLE_SAMPLERS = ("Alg. 8 (m=3)", "SM(5,1,1,5)")
PAIR = (0, 20)  # co-clustering indicator: an item of component 0 and one of component 1 (close in Example 2)
DATA_SEED = {1: 0, 2: 3}
"""Example 2 uses a data set whose posterior puts mass on both the four- and the five-component configurations, as
the paper's does (seeds 0-5 give P(5 components of >= 5 items) 0.03, 0.98, 0.32, 0.68, 0.03, 0.82 under SM(5,1,1,5))."""


def kernel_model(data, w, b, r, rate):
    d = data.shape[1]
    params = families.pack_params(families.NORMAL, d, w, b, r, rate, data.shape[0])
    return make_model(families.NORMAL, data, params, priors.DP, np.array([1.0]), priors.empty_table())


def compile_seconds():
    """Wall seconds of the first (compiling, or cache-loading) call of each transition type, on a tiny run."""
    data, _ = normal_mixture(example=1, random_seed=0)
    model = kernel_model(data[:10], 0.0, 0.01, 2.0, 2.0)
    z0 = np.zeros((1, 10), dtype=np.int64)
    out = {}
    for name in ("Alg. 7", "Alg. 8 (m=3)", "SM(5,1,1,5)"):
        transition, config = SAMPLERS[name]
        start = time.perf_counter()
        chain.run(transition, model, z0, config, 2, np.random.default_rng(0))
        out[name] = time.perf_counter() - start
    return out


def run_sampler(model, name, iterations, key):
    """``args.chains`` chains of ``name`` from one cluster: labels (chains, T, n) and CPU seconds per chain."""
    transition, config = SAMPLERS[name]
    n = model.data.shape[0]
    labels, seconds = [], []
    for c in range(args.chains):
        rng = np.random.default_rng([args.seed, *key, c])
        start = time.process_time()
        trace, _, _ = chain.run(transition, model, np.zeros((1, n), dtype=np.int64), config, iterations, rng)
        seconds.append(time.process_time() - start)
        labels.append(trace[:, 0])
    return np.stack(labels), np.array(seconds)


def top_fractions(labels, top=5):
    """Cumulative fractions of the ``top`` largest components after each iteration; labels (T, n) -> (T, top)."""
    n_steps, n = labels.shape
    offsets = labels.astype(np.int64) + n * np.arange(n_steps)[:, None]
    counts = np.bincount(offsets.ravel(), minlength=n_steps * n).reshape(n_steps, n)
    return np.cumsum(-np.sort(-counts, axis=1)[:, :top], axis=1) / n


def burn_in(labels, truth, threshold):
    """First iteration (1-based) whose adjusted Rand index with ``truth`` is >= ``threshold``; None if never."""
    _, ari = distances_to_reference(labels.astype(np.int64), truth.astype(np.int64))
    hits = np.flatnonzero(ari >= threshold)
    return int(hits[0]) + 1 if hits.size else None


def act(values):
    """Integrated autocorrelation time ``draws / ESS`` (ArviZ, chains x draws); NaN if the trace never moves."""
    values = np.asarray(values, dtype=float)
    if np.all(values == values.flat[0]):
        return np.nan
    return values.size / float(az.ess(values, method="mean"))


def summarise(labels, seconds, truth, threshold, pair):
    iterations = labels.shape[1]
    per_iteration = float(np.median(seconds)) / iterations
    burns = [burn_in(trace, truth, threshold) for trace in labels]
    kept = labels[:, int(args.burn * iterations) :]
    largest = np.stack([top_fractions(trace, 1)[:, 0] for trace in kept])
    together = (kept[:, :, pair[0]] == kept[:, :, pair[1]]).astype(float)
    act_largest, act_pair = act(largest), act(together)
    return {
        "ms/iter": 1e3 * per_iteration,
        "burn-in": burns,
        "act largest": act_largest,
        "act pair": act_pair,
        "cpu-s largest": act_largest * per_iteration,
        "cpu-s pair": act_pair * per_iteration,
        "largest": float(largest.mean()),
        "big components": float(np.mean([(np.bincount(z) >= 5).sum() for trace in kept for z in trace[::10]])),
        "P(5 big)": float(np.mean([(np.bincount(z) >= 5).sum() == 5 for trace in kept for z in trace[::10]])),
    }


def format_burns(burns):
    found = sorted(b for b in burns if b is not None)
    missing = len(burns) - len(found)
    text = "/".join(str(b) for b in found)
    if missing:
        text = (text + "/" if text else "") + f"never x{missing}"
    return text


def number(value, digits):
    """``value`` with ``digits`` decimals, or "const." for a trace that never moved after the burn-in cut."""
    return "const." if np.isnan(value) else f"{value:.{digits}f}"


def print_table(title, rows):
    print(f"\n{title}")
    header = ("sampler", "ms/iter", "burn-in (each chain)", "ACT largest", "ACT pair", "CPU s largest", "CPU s pair",
              "largest", "comps >= 5", "P(5 comps)")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for name, s in rows.items():
        cells = [name, f"{s['ms/iter']:.3f}", format_burns(s["burn-in"]), number(s["act largest"], 1), number(s["act pair"], 1),
                 number(s["cpu-s largest"], 4), number(s["cpu-s pair"], 4), f"{s['largest']:.2f}", f"{s['big components']:.2f}",
                 f"{s['P(5 big)']:.2f}"]
        print("| " + " | ".join(cells) + " |")


def plot_traces(panels, path, iterations, columns=3):
    """One panel per (title, labels (T, n)): the five cumulative fraction traces, as the paper's figures."""
    columns = min(columns, len(panels))
    rows = (len(panels) + columns - 1) // columns
    fig, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 2.8 * rows), sharey=True, squeeze=False)
    for ax, (title, labels) in zip(axes.flat, panels):
        fractions = top_fractions(labels)
        for q in range(fractions.shape[1]):
            ax.plot(np.arange(1, len(fractions) + 1), fractions[:, q], lw=0.6, color=plt.cm.viridis(q / 5))
        ax.set_title(title, fontsize=9)
        ax.set_xlim(0, iterations)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("iteration", fontsize=8)
    for ax in axes.flat[len(panels) :]:
        ax.axis("off")
    axes[0, 0].set_ylabel("cumulative fraction\nof the 5 largest", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"wrote {os.path.relpath(path)}")


def simulated(example):
    data, truth = normal_mixture(example=example, random_seed=DATA_SEED[example])
    model = kernel_model(data, 0.0, 0.01, 2.0, 2.0)
    rows, panels = {}, []
    for code, name in enumerate(SAMPLERS):
        labels, seconds = run_sampler(model, name, args.iterations, (example, code))
        rows[name] = summarise(labels, seconds, truth, 0.9, PAIR)
        panels.append((name, labels[0]))
    print_table(f"Example {example} (d = {data.shape[1]}, n = {data.shape[0]}, {args.iterations} iterations x "
                f"{args.chains} chains from one cluster)", rows)
    plot_traces(panels, os.path.join(args.out, f"nonconjugate_example{example}.png"), args.iterations)


def beetles():
    data, species, _, _ = flea_beetles()
    priors_used = {
        "vague": (0.0, 1e-4),
        "data-based": (data.mean(axis=0), 1.0 / data.var(axis=0)),
    }
    panels = []
    for p, (label, (w, b)) in enumerate(priors_used.items()):
        model = kernel_model(data, w, b, 1.0, 1.0)
        rows = {}
        for code, name in enumerate(BEETLE_SAMPLERS):
            labels, seconds = run_sampler(model, name, args.beetle_iterations, (3, p, code))
            rows[name] = summarise(labels, seconds, species, 0.8, (0, 30))
            _, ari = distances_to_reference(labels[:, int(args.burn * labels.shape[1]) :].reshape(-1, data.shape[0]).astype(np.int64), species)
            rows[name]["ARI"] = float(np.median(ari))
            panels.append((f"{name}, {label} prior", labels[0]))
        print_table(f"Beetles, {label} prior ({args.beetle_iterations} iterations x {args.chains} chains from one cluster; "
                    "burn-in: first ARI >= 0.8 with the species)", rows)
        print("median ARI with the species after the burn-in cut: " + ", ".join(f"{k} {v['ARI']:.2f}" for k, v in rows.items()))
    plot_traces(panels, os.path.join(args.out, "nonconjugate_beetles.png"), args.beetle_iterations, columns=2)


def main():
    print(" ".join([os.path.basename(sys.executable), *sys.argv]))
    print("compile (first call, s): " + ", ".join(f"{k} {v:.1f}" for k, v in compile_seconds().items()))
    simulated(1)
    simulated(2)
    beetles()


if __name__ == "__main__":
    main()
