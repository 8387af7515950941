"""MinHash split-merge against the other partition samplers: the paper's speed comparison (``papers/004_...``, Sec. 4).

Data sets (DP Normal-Gamma mixture, ``alpha = 1``, ``mu0 = 0, kappa0 = 0.01, a0 = b0 = 2``):

* S1, S2, S3 as in Sec. 4.2: K = 10 Gaussians in D = 25 dimensions, centres
  ``N(0, 3^2)`` per coordinate, each cluster's standard deviation uniform on
  ``[0.5, 1.5]``, n = 100 / 1,000 / 10,000; and the same generator at
  n = 100,000 (``n1e5``) and 1,000,000 (``n1e6``);
* ``digits``: scikit-learn's bundled handwritten digits (1,797 images of
  8x8 pixels, 10 classes; ``pip install ".[bench]"``), columns standardised.

Samplers, each started from one cluster holding every item:

* ``Gibbs``: ``GibbsStep``, one iteration = one collapsed Gibbs sweep;
* ``RGSM``: ``SplitMergeStep()`` with its defaults (restricted-Gibbs
  split-merge, 5 intermediate scans, one proposal then a Gibbs sweep per
  iteration);
* ``SDDS``, ``LSHSM``, ``MinSM``: ``MinHashSplitMergeStep(variant="sdds" |
  "lsh" | "minsm")`` (``gibbs_sweep=False``), one iteration = one proposal;
* ``MinSM+G``: ``MinHashSplitMergeStep(n_moves=max(100, n // 100),
  gibbs_sweep=True)``: MinSM proposals followed by a Gibbs sweep, one
  iteration = one proposal.

Each (data set, sampler) runs in a fresh process with a warm numba cache: it
first compiles the sampler on 50 items of the same family (``compile``, the
first call's time), then creates the step on the data (``setup``: PyMC model,
hash tables), then calls the step's transition (the function ``pm.sample``
calls, no trace) for a fixed wall-clock budget, recording the collapsed
log-likelihood ``log p(x | z)`` against time and iterations.  Reported:

* ``t(1% LL)``: the first time the log-likelihood is within 1 % of the best
  final log-likelihood of all samplers on that data set (``-`` never);
  ``t(1% LJ)`` the same for the log joint ``log p(z) + log p(x | z)``, the
  log posterior the samplers target (up to a constant);
* ``iters``, ``per iter``: iterations done and the median cost of one;
* ``final LL``, ``final LJ``, ``K``: at the end of the budget;
* ``NMI``, ``acc``: the final partition against the truth (NMI with the
  paper's ``sqrt(H H')`` normalisation; accuracy after the best one-to-one
  matching of clusters to classes);
* ``peak RSS``: the process's peak resident memory.

Plots (log-likelihood and log joint against wall-clock time, log-likelihood against iterations) go to
``docs/minsm/<data set>.png``, the raw runs to ``docs/minsm/results.json``.

Run:  python benchmarks/minsm.py [--datasets S1,S2,S3,digits,n1e5,n1e6] [--methods ...] [--budget-scale 1]
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

BUDGET = {"S1": 5.0, "S2": 15.0, "S3": 40.0, "digits": 40.0, "n1e5": 150.0, "n1e6": 300.0}
"""Wall-clock seconds each sampler gets on each data set."""

SIZES = {"S1": 100, "S2": 1_000, "S3": 10_000, "n1e5": 100_000, "n1e6": 1_000_000}
METHODS = ("Gibbs", "RGSM", "SDDS", "LSHSM", "MinSM", "MinSM+G")
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "minsm")


def make_data(name):
    """``(X, truth)`` of the data set ``name``."""
    if name == "digits":
        from sklearn.datasets import load_digits

        digits = load_digits()
        x = digits.data.astype(float)
        sd = x.std(axis=0)
        return (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0), digits.target
    rng = np.random.default_rng(0)
    n, k, d = SIZES[name], 10, 25
    centres = rng.normal(0.0, 3.0, (k, d))
    sds = rng.uniform(0.5, 1.5, k)
    truth = rng.integers(0, k, n)
    x = centres[truth]
    x += sds[truth, None] * rng.standard_normal((n, d))
    return x, truth


def make_step(method, z):
    """The step and the number of proposals (iterations) one call of its transition makes."""
    import pymc_partitions as pmp

    if method == "MinSM+G":  # MinSM proposals, then a Gibbs sweep that costs about as much as they do
        batch = max(100, int(z.type.shape[0]) // 100)
        return pmp.MinHashSplitMergeStep(z, n_moves=batch, gibbs_sweep=True), batch
    if method == "Gibbs":
        return pmp.GibbsStep(z), 1
    if method == "RGSM":
        return pmp.SplitMergeStep(z), 1
    batch = 20  # proposals per call: one call's Python overhead is then a few percent of a cheap move's
    variant = {"SDDS": "sdds", "LSHSM": "lsh", "MinSM": "minsm"}[method]
    return pmp.MinHashSplitMergeStep(z, variant=variant, n_moves=batch), batch


def build(method, x):
    import pymc as pm

    import pymc_partitions as pmp

    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(x))
        pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=0.01, a0=2.0, b0=2.0, observed=x)
        step, batch = make_step(method, z)
    return step, step.kernel_model(model.initial_point()), batch


def run_one(dataset, method, budget):
    """Child process: compile, set up, run for ``budget`` seconds; returns the record."""
    import resource

    from pymc_partitions.state import build_state, log_joint, log_likelihood

    x, truth = make_data(dataset)
    step, kernel_model, _ = build(method, x[:50])
    begin = time.perf_counter()
    small = build_state(kernel_model, np.zeros(50, dtype=np.int64))
    type(step).transition(kernel_model, small, type(step).init(kernel_model, small, step.options, None), np.random.default_rng(0))
    compile_time = time.perf_counter() - begin
    begin = time.perf_counter()
    step, kernel_model, batch = build(method, x)
    state = build_state(kernel_model, np.zeros(len(x), dtype=np.int64))
    sampler = type(step).init(kernel_model, state, step.options, None)  # the hash tables
    setup_time = time.perf_counter() - begin
    rng = np.random.default_rng(1)
    transition = type(step).transition
    times, iters, lls, ljs, ks, call_times = [0.0], [0], [log_likelihood(kernel_model, state)], [log_joint(kernel_model, state)], [1], []
    start = time.perf_counter()
    last = 0.0
    calls = 0
    while True:
        before = time.perf_counter()
        state, sampler, _ = transition(kernel_model, state, sampler, rng)
        now = time.perf_counter()
        call_times.append(now - before)
        calls += 1
        elapsed = now - start
        if elapsed - last >= budget / 400 or calls <= 20 or elapsed >= budget:
            last = elapsed
            times.append(elapsed)
            iters.append(calls * batch)
            lls.append(log_likelihood(kernel_model, state))
            ljs.append(log_joint(kernel_model, state))
            ks.append(int(state.n_clusters[0]))
        if elapsed >= budget:
            break
    labels = state.labels.copy()
    return {
        "dataset": dataset, "method": method, "n": len(x), "budget": budget, "compile": compile_time, "setup": setup_time,
        "times": times, "iters": iters, "ll": lls, "lj": ljs, "k": ks, "per_iter": float(np.median(call_times)) / batch,
        "nmi": nmi(truth, labels), "accuracy": accuracy(truth, labels), "truth": truth_values(kernel_model, truth),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def truth_values(kernel_model, truth):
    """``(log p(x | truth), log p(truth) + log p(x | truth))``."""
    from pymc_partitions.state import build_state, log_joint, log_likelihood

    state = build_state(kernel_model, truth.astype(np.int64))
    return log_likelihood(kernel_model, state), log_joint(kernel_model, state)


def contingency(a, b):
    _, a = np.unique(a, return_inverse=True)
    _, b = np.unique(b, return_inverse=True)
    table = np.zeros((a.max() + 1, b.max() + 1))
    np.add.at(table, (a, b), 1)
    return table


def nmi(truth, labels):
    """``I(C; C') / sqrt(H(C) H(C'))`` (the paper's Sec. 4.4); 1 if both are one cluster, 0 if only one of them is."""
    p = contingency(truth, labels) / len(truth)
    pa, pb = p.sum(axis=1), p.sum(axis=0)
    nz = p > 0
    mutual = float((p[nz] * np.log(p[nz] / np.outer(pa, pb)[nz])).sum())
    ha, hb = -(pa * np.log(pa)).sum(), -(pb * np.log(pb)).sum()
    if ha * hb == 0:
        return float(ha == hb)
    return mutual / np.sqrt(ha * hb)


def accuracy(truth, labels):
    """Fraction of items in a cluster matched to their class, under the best one-to-one matching."""
    from scipy.optimize import linear_sum_assignment

    table = contingency(truth, labels)
    rows, cols = linear_sum_assignment(-table)
    return float(table[rows, cols].sum() / len(truth))


def time_to_within(record, key, target):
    for t, value in zip(record["times"], record[key]):
        if value >= target:
            return t
    return None


def report(records, datasets):
    """The tables (printed) and the plots (saved) of ``records``."""
    import matplotlib.pyplot as plt

    lines = []
    for dataset in datasets:
        runs = [r for r in records if r["dataset"] == dataset]
        if not runs:
            continue
        best = {key: max((r[key][-1] for r in runs if key in r), default=np.nan) for key in ("ll", "lj")}
        target = {key: value - 0.01 * abs(value) for key, value in best.items()}
        truth = next(r["truth"] for r in runs if "truth" in r)
        lines.append(f"\n{dataset}: n = {runs[0]['n']}, budget {runs[0]['budget']:.0f} s per sampler; "
                     f"best final LL {best['ll']:.1f} (truth {truth[0]:.1f}), best final LJ {best['lj']:.1f} (truth {truth[1]:.1f})")
        lines.append(f"{'sampler':8} {'compile':>8} {'setup':>7} {'t(1% LL)':>9} {'t(1% LJ)':>9} {'iters':>9} {'per iter':>10} "
                     f"{'final LL':>13} {'final LJ':>13} {'K':>4} {'NMI':>5} {'acc':>5} {'peak RSS':>9}")
        fig, axes = plt.subplots(1, 3, figsize=(15, 4))
        for r in runs:
            hits = [time_to_within(r, key, target[key]) if key in r else None for key in ("ll", "lj")]
            hits = [("%.2fs" % h) if h is not None else "-" for h in hits]
            lines.append(
                f"{r['method']:8} {r['compile']:7.1f}s {r['setup']:6.2f}s {hits[0]:>9} {hits[1]:>9} {r['iters'][-1]:9d} "
                f"{r['per_iter'] * 1e3:8.3f}ms {r['ll'][-1]:13.1f} {r['lj'][-1] if 'lj' in r else float('nan'):13.1f} "
                f"{r['k'][-1]:4d} {r['nmi']:5.3f} {r['accuracy']:5.3f} {r['peak_rss_mb']:7.0f}MB"
            )
            axes[0].plot(np.maximum(r["times"], 1e-3), r["ll"], label=r["method"])
            if "lj" in r:
                axes[1].plot(np.maximum(r["times"], 1e-3), r["lj"], label=r["method"])
            axes[2].plot(np.maximum(r["iters"], 1), r["ll"], label=r["method"])
        panels = [("ll", "wall-clock time (s)", "log p(x | z)"), ("lj", "wall-clock time (s)", "log p(z) + log p(x | z)"),
                  ("ll", "iterations (Gibbs: sweeps; RGSM: proposal + sweep; others: proposals)", "log p(x | z)")]
        for ax, (key, xlabel, ylabel) in zip(axes, panels):
            ax.set_xscale("log")
            ax.axhline(target[key], color="grey", lw=0.8, ls="--")
            ax.axhline(truth[0 if key == "ll" else 1], color="black", lw=0.8, ls=":")
            ax.set_ylim(best[key] - 0.3 * abs(best[key]), best[key] + 0.02 * abs(best[key]))
            ax.set_xlabel(xlabel, fontsize=8)
            ax.set_ylabel(ylabel)
        axes[0].legend(fontsize=8)
        fig.suptitle(f"{dataset} (n = {runs[0]['n']}): dashed = within 1 % of the best final value, dotted = the true partition",
                     fontsize=10)
        fig.tight_layout()
        fig.savefig(os.path.join(OUT, f"{dataset}.png"), dpi=90)
        plt.close(fig)
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--datasets", default="S1,S2,S3,digits,n1e5")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--budget-scale", type=float, default=1.0)
    parser.add_argument("--child", nargs=3, metavar=("DATASET", "METHOD", "BUDGET"))
    parser.add_argument("--report", action="store_true", help="only print the tables and redraw the plots of the saved runs")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_one(args.child[0], args.child[1], float(args.child[2]))))
        return
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, "results.json")
    records = json.load(open(path)) if os.path.exists(path) else []
    datasets = [] if args.report else args.datasets.split(",")
    for dataset in datasets:
        for method in args.methods.split(","):
            budget = BUDGET[dataset] * args.budget_scale
            out = subprocess.run([sys.executable, __file__, "--child", dataset, method, str(budget)], capture_output=True, text=True)
            if out.returncode != 0:
                raise RuntimeError(f"{dataset} {method} failed:\n{out.stderr[-3000:]}")
            record = json.loads(out.stdout.strip().splitlines()[-1])
            records = [r for r in records if (r["dataset"], r["method"]) != (dataset, method)] + [record]
            json.dump(records, open(path, "w"))
            print(f"done {dataset} {method}: final LL {record['ll'][-1]:.1f}", flush=True)
    print(report(records, [d for d in BUDGET if any(r["dataset"] == d for r in records)]))
    print(f"\ncommand: python benchmarks/minsm.py --datasets {args.datasets} --methods {args.methods} --budget-scale {args.budget_scale}")


if __name__ == "__main__":
    main()
