"""Lee & Choi (2015), Sec. 4: Gibbs, split-merge and tgMCMC on the toy data, the 10K data and a news corpus; G and D.

Protocol (``papers/003_…``, Sec. 4, Fig. 3-5; details the paper leaves open are
chosen here and listed):

* data: ``datasets.gaussian_toy`` (1,300 points, 2-D, 13 clusters),
  ``datasets.gaussian_10k`` (10,000 points, 6-D, Pitman-Yor(3, 0.8) labels)
  and ``datasets.lee_news`` (300 news documents, Dirichlet-multinomial, in
  place of the NIPS corpus, which is not available offline);
* Gaussian likelihood with the paper's Normal-Wishart base measure (eq. 13):
  ``mu0`` the sample mean, ``kappa0 = r = 0.1``, ``nu0 = d + 6``,
  ``Psi0 = Sigma / (10 det Sigma)^(1/d)`` (``Sigma`` the sample covariance);
  documents: symmetric ``Dir(0.1)``;
* priors: DP(alpha = 1) and NGGP(alpha = 1, sigma = 0.2, tau = 1) with ``u``
  redrawn after every iteration by an exact slice-sampling update of
  ``p(u | Pi)`` (Theorem 1, eq. 4), the same update for every sampler (the
  paper's hyperparameter values are not given);
* samplers: the PyMC steps themselves, called as ``pm.sample`` calls them
  (``step.step(point)``): ``GibbsStep`` (one sweep), ``SplitMergeStep``
  (5 proposals with L = 5 restricted scans, then one sweep) and
  ``TreeGuidedStep`` (G = 20 global moves, one local sweep with D = 2: the
  paper's settings) and the same step with ``n_local = 4`` local sweeps
  ("tgMCMC, 4 local"; a local sweep updates only the items SampleSub picks,
  and under the NGGP the number of clusters moves mostly by small clusters
  that local updates open and close); the tree-guided steps tune (rebuild
  their guide trees at their iterations 1, 2, 4, ...) during the first 10 %
  of their CPU budgets, which counts towards their time;
* start: the paper's sequential initialisation (``ibhc.sequential_partition``:
  items in random order join the tree of least ``d``, or a new one if ``d > 1``),
  the same start for the samplers of a repeat;
* each sampler runs for a fixed CPU-time budget (the paper: 10 s for the toy,
  1,000 s for 10K, 10,000 s for NIPS; here ``--seconds``), ``--repeats`` times;
* statistics per run: the largest joint log-likelihood ``log p(X, Pi, u)``
  reached, the ESS of the number of clusters (ArviZ, whole run as in the
  paper, and over the second half, where the chains have converged), ESS of
  the second half per CPU second, the mean log acceptance ratio ``log r`` of
  the split/merge proposals (the last of each iteration, second half; the
  fraction of tgMCMC merges whose reverse split is impossible, ``log r =
  -inf``, is listed apart) and the median CPU time per iteration; mean and
  standard deviation over repeats;
* G and D (Fig. 3, top right): tgMCMC on the toy data (DP) with G in
  {5, 10, 15, 20} (D = 2) and D in {1, 2, 3, 4} (G = 20), 100 iterations
  (tuning in the first 64), the log-likelihood averaged over repeats against
  the iteration, and the time per iteration.

Plots are written to ``docs/tgmcmc_*.png``.  Numba compilation (the first
iterations in a fresh process) is timed separately and excluded.

Global splits draw their split node with SampleSub's ``eps`` 10^-3 times the
tree's largest ``d``; ``--paper-eps`` uses the paper's ``eps`` (the largest ``d``).

Run:  python benchmarks/tgmcmc.py [--experiments toy panels 10k news] [--seconds 10] [--repeats 5] [--seed 0] [--paper-eps]
"""

import argparse
import math
import os
import sys
import time

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--experiments", nargs="+", default=["toy", "panels", "10k", "news"], choices=["toy", "panels", "10k", "news"])
parser.add_argument("--seconds", type=float, default=10.0, help="CPU seconds per toy run (10K: x10, news: x6)")
parser.add_argument("--repeats", type=int, default=5)
parser.add_argument("--panel-iterations", type=int, default=100)
parser.add_argument("--seed", type=int, default=0)
parser.add_argument("--plots", default=os.path.join(os.path.dirname(__file__), "..", "docs"))
parser.add_argument("--paper-eps", action="store_true", help="global splits' SampleSub with the paper's eps = largest d")
args = parser.parse_args()
if args.paper_eps:  # the kernels compile with another constant: keep them out of the usual numba cache
    os.environ["NUMBA_CACHE_DIR"] = os.path.join(os.environ.get("NUMBA_CACHE_DIR", ".numba_cache"), "paper_eps")

import arviz as az  # noqa: E402
import numpy as np  # noqa: E402
import pymc as pm  # noqa: E402
from numba import njit  # noqa: E402

import pymc_partitions as pmp  # noqa: E402
from pymc_partitions import datasets  # noqa: E402
from pymc_partitions.kernels import ibhc, tgmcmc  # noqa: E402

if args.paper_eps:
    tgmcmc.SPLIT_LOG_EPS = 0.0  # read when the kernels compile

PAPER = {
    ("toy", "dp"): {
        "Gibbs": (-1730.4069, 10.4644, None, 0.0458), "SM": (-1602.3353, 7.6180, -362.4405, 0.0702),
        "tgMCMC": (-1577.7484, 35.6452, -3.4844, 0.0161),
    },
    ("toy", "ngg"): {
        "Gibbs": (-1594.7382, 15.8512, None, 0.0523), "SM": (-1588.5188, 36.2608, -325.9407, 0.0698),
        "tgMCMC": (-1587.8633, 149.7197, -2.6589, 0.0152),
    },
    ("10k", "ngg"): {
        "Gibbs": (-74476.4666, 27.0464, None, 10.7325), "SM": (-74400.0337, 24.9432, -913.0825, 11.1163),
        "tgMCMC": (-73364.2985, 93.5509, -8.7375, 0.4295),
    },
    ("news", "ngg"): {  # the paper's NIPS corpus (1,500 documents, 12,419 words), not the same data
        "Gibbs": (-4247895.5166, 18.1758, None, 186.2020), "SM": (-4246689.8072, 28.6608, -3290.2988, 186.9424),
        "tgMCMC": (-4243009.3500, 3.1274, -256.4831, 42.4176),
    },
}
"""The paper's means (Fig. 3-5): max log-likelihood, ESS of the number of clusters, mean log r, seconds per iteration."""

TUNE_FRACTION = 0.1
PANEL_TUNE = 64


def gaussian_model(X, prior):
    n, d = X.shape
    sigma = np.cov(X.T)
    psi = sigma / (10.0 * np.linalg.det(sigma)) ** (1.0 / d)
    with pm.Model() as model:
        z = add_prior(prior, n)
        pmp.NormalInverseWishartMixture("x", partition=z, mu0=X.mean(axis=0), kappa0=0.1, nu0=d + 6.0, Psi0=psi, observed=X)
    return model


def document_model(counts, prior):
    with pm.Model() as model:
        z = add_prior(prior, counts.shape[0])
        pmp.DirichletMultinomialMixture("x", partition=z, beta=0.1, observed=counts)
    return model


def add_prior(prior, n):
    if prior == "dp":
        return pmp.DirichletProcessPartition("z", alpha=1.0, n=n)
    u = pmp.NGGAuxiliary("u", alpha=1.0, sigma=0.2, tau=1.0, n=n)
    return pmp.NGGPartition("z", alpha=1.0, sigma=0.2, tau=1.0, u=u, n=n)


SAMPLERS = ("Gibbs", "SM", "tgMCMC", "tgMCMC, 4 local")


def make_step(name, model, seed=0, G=20, D=2):
    z, rng = model["z"], np.random.default_rng(seed)
    if name == "Gibbs":
        return pmp.GibbsStep(z, model=model, rng=rng)
    if name == "SM":
        return pmp.SplitMergeStep(z, model=model, rng=rng, n_moves=5, n_intermediate=5)
    n_local = 4 if name == "tgMCMC, 4 local" else 1
    return pmp.TreeGuidedStep(z, model=model, rng=rng, n_global=G, D=D, n_local=n_local)


@njit(cache=True)
def log_u_density(log_u, n, k, alpha, sigma, tau):
    """log p(u | Pi) + log u (the NGG joint, eq. (4), in log u)."""
    u = math.exp(log_u)
    return n * log_u - alpha * ((u + tau) ** sigma - tau**sigma) + (sigma * k - n) * math.log(u + tau)


@njit(cache=True)
def slice_log_u(log_u, n, k, alpha, sigma, tau, rng):
    """One slice-sampling update (stepping out, width 1, then shrinkage) of ``log u`` given ``K = k`` clusters."""
    level = log_u_density(log_u, n, k, alpha, sigma, tau) + math.log(rng.random())
    left = log_u - rng.random()
    right = left + 1.0
    while log_u_density(left, n, k, alpha, sigma, tau) > level:
        left -= 1.0
    while log_u_density(right, n, k, alpha, sigma, tau) > level:
        right += 1.0
    while True:
        proposal = left + (right - left) * rng.random()
        if log_u_density(proposal, n, k, alpha, sigma, tau) > level:
            return proposal
        if proposal < log_u:
            left = proposal
        else:
            right = proposal


def run(model, name, z0, budget, seed, iterations=None, **options):
    """One run from ``z0`` for ``budget`` CPU seconds (or ``iterations``); returns the per-iteration records."""
    step = make_step(name, model, seed, **options)
    u_rng = np.random.default_rng(seed + 1)
    point = model.initial_point()
    point["z"] = z0.astype(np.int32)
    ngg = "u_log__" in point
    n = len(z0)
    records = {"k": [], "loglik": [], "log_r": [], "seconds": [], "move": []}
    spent, t = 0.0, 0
    while (iterations is None and spent < budget) or (iterations is not None and t < iterations):
        if step.tune and ((iterations is None and spent > TUNE_FRACTION * budget) or t == PANEL_TUNE):
            step.stop_tuning()
        start = time.process_time()
        point, (stats,) = step.step(point)
        if ngg:
            point["u_log__"] = np.array(slice_log_u(float(point["u_log__"]), n, stats["partition_n_clusters"], 1.0, 0.2, 1.0, u_rng))
        elapsed = time.process_time() - start
        spent += elapsed
        t += 1
        records["k"].append(stats["partition_n_clusters"])
        records["loglik"].append(stats["partition_log_joint"])
        records["log_r"].append(stats["partition_log_accept_ratio"])
        records["move"].append(stats["partition_move"])
        records["seconds"].append(elapsed)
    return {key: np.asarray(value) for key, value in records.items()}


def ess(x):
    x = np.asarray(x, dtype=float)
    if np.ptp(x) == 0:
        return float("nan")
    return float(az.ess(x[None, :], method="bulk"))


def summarise(record):
    half = len(record["k"]) // 2
    second = slice(half, None)
    proposals = np.isin(record["move"][second], (1, 2))
    log_r = record["log_r"][second][proposals]
    seconds_second = record["seconds"][second].sum()
    ess_half = ess(record["k"][second])
    return {
        "max loglik": record["loglik"].max(),
        "ESS (whole run)": ess(record["k"]),
        "ESS (2nd half)": ess_half,
        "ESS/CPU s": ess_half / seconds_second,
        "log r": log_r[np.isfinite(log_r)].mean() if np.isfinite(log_r).any() else float("nan"),
        "log r = -inf": float(np.mean(~np.isfinite(log_r))) if proposals.any() else float("nan"),
        "s/iter": float(np.median(record["seconds"])),
        "iterations": len(record["k"]),
        "final K": int(np.median(record["k"][second])),
    }


def table(rows, paper):
    columns = [
        "max loglik", "ESS (whole run)", "ESS (2nd half)", "ESS/CPU s", "log r", "log r = -inf", "s/iter", "iterations", "final K",
    ]
    lines = ["| sampler | " + " | ".join(columns) + " | paper: max loglik | ESS | log r | s/iter |"]
    lines.append("|---" * (len(columns) + 5) + "|")
    for name, runs in rows.items():
        cells = []
        for column in columns:
            values = np.array([r[column] for r in runs], dtype=float)
            cells.append("-" if np.isnan(values).all() else f"{np.nanmean(values):.4g} ({np.nanstd(values):.2g})")
        p = paper.get(name) if paper else None
        ref = [f"{v:.4g}" if v is not None else "-" for v in p] if p else ["-"] * 4
        lines.append(f"| {name} | " + " | ".join(cells) + " | " + " | ".join(ref) + " |")
    return "\n".join(lines)


def compare(label, model, budget, repeats, plot_name):
    """The samplers from the same starts; prints the table, plots log-likelihood against CPU time."""
    import matplotlib.pyplot as plt

    kernel_model = make_step("Gibbs", model).kernel_model(model.initial_point())
    rows = {name: [] for name in SAMPLERS}
    traces = {name: [] for name in rows}
    for r in range(repeats):
        z0 = ibhc.sequential_partition(kernel_model, np.random.default_rng([args.seed, r]))
        for name in rows:
            record = run(model, name, z0, budget, seed=1000 * r + 7)
            rows[name].append(summarise(record))
            traces[name].append(record)
            print(
                f"  {label} repeat {r}: {name:15s} {len(record['k'])} iterations, max loglik {record['loglik'].max():.1f}, "
                f"ESS of K (whole run) {rows[name][-1]['ESS (whole run)']:.1f}",
                flush=True,
            )
    print(f"\n### {label}\n")
    print(table(rows, PAPER.get(label)))
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for name, color in zip(rows, ("C0", "C1", "C2", "C3")):
        for q, record in enumerate(traces[name]):
            ax.plot(np.cumsum(record["seconds"]), record["loglik"], color=color, alpha=0.6, lw=0.8, label=name if q == 0 else None)
    ax.set_xlabel("CPU time [s]")
    ax.set_ylabel("log p(X, Pi, u)")
    ax.set_title(label)
    ax.legend()
    low = np.percentile(np.concatenate([t["loglik"] for name in traces for t in traces[name]]), 5)
    ax.set_ylim(bottom=low)
    fig.tight_layout()
    fig.savefig(os.path.join(args.plots, plot_name), dpi=110)
    plt.close(fig)
    return rows


def panels(model, repeats, iterations):
    """Fig. 3 (top right): tgMCMC's average log-likelihood against the iteration for several G and D."""
    import matplotlib.pyplot as plt

    kernel_model = make_step("Gibbs", model).kernel_model(model.initial_point())
    starts = [ibhc.sequential_partition(kernel_model, np.random.default_rng([args.seed, 50 + r])) for r in range(repeats)]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5), sharey=True)
    lines = ["| setting | s/iter | mean loglik, iterations 1-10 | 11-30 | 31-100 |", "|---|---|---|---|---|"]
    for ax, key, values in ((axes[0], "G", (5, 10, 15, 20)), (axes[1], "D", (1, 2, 3, 4))):
        for value in values:
            options = {"G": value, "D": 2} if key == "G" else {"G": 20, "D": value}
            records = [run(model, "tgMCMC", z0, None, seed=500 + r, iterations=iterations, **options) for r, z0 in enumerate(starts)]
            mean = np.mean([rec["loglik"] for rec in records], axis=0)
            ax.plot(np.arange(1, iterations + 1), mean, label=f"{key} = {value}")
            per_iter = np.median(np.concatenate([rec["seconds"] for rec in records]))
            parts = [mean[:10].mean(), mean[10:30].mean(), mean[30:].mean()]
            lines.append(f"| {key} = {value} | {per_iter:.4f} | " + " | ".join(f"{p:.1f}" for p in parts) + " |")
        ax.set_xlabel("iteration")
        ax.set_title(f"tgMCMC, varying {key}")
        ax.legend()
    axes[0].set_ylabel("average log p(X, Pi)")
    low = min(ax.get_lines()[0].get_ydata()[5] for ax in axes)
    axes[0].set_ylim(bottom=low)
    fig.tight_layout()
    fig.savefig(os.path.join(args.plots, "tgmcmc_G_D.png"), dpi=110)
    plt.close(fig)
    print("\n### G and D (toy, DP)\n")
    print("\n".join(lines))


def compile_all(model):
    """First calls of every sampler (compilation, or loading numba's cache), timed apart from the runs."""
    start = time.perf_counter()
    z0 = np.zeros(model["z"].type.shape[0], dtype=np.int64)
    for name in SAMPLERS[:3]:  # the fourth runs the third's kernels
        run(model, name, z0, None, seed=0, iterations=2)
    return time.perf_counter() - start


def main():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    print("command: python benchmarks/tgmcmc.py " + " ".join(sys.argv[1:]))
    wall = time.perf_counter()
    if "toy" in args.experiments or "panels" in args.experiments:
        X, truth = datasets.gaussian_toy(random_seed=args.seed)
        fig, ax = plt.subplots(figsize=(3.5, 3.5))
        ax.scatter(X[:, 0], X[:, 1], c=truth, s=3, cmap="tab20")
        ax.set_title("toy data (1,300 points, 13 clusters)")
        fig.tight_layout()
        fig.savefig(os.path.join(args.plots, "tgmcmc_toy_data.png"), dpi=110)
        plt.close(fig)
        for prior in ("dp", "ngg"):
            model = gaussian_model(X, prior)
            print(f"compile (toy, {prior}): {compile_all(model):.1f} s", flush=True)
            if "toy" in args.experiments:
                compare(("toy", prior), model, args.seconds, args.repeats, f"tgmcmc_toy_{prior}.png")
        if "panels" in args.experiments:
            panels(gaussian_model(X, "dp"), args.repeats, args.panel_iterations)
    if "10k" in args.experiments:
        X, truth = datasets.gaussian_10k(random_seed=args.seed)
        print(f"10K: {int(truth.max()) + 1} clusters in the labels")
        model = gaussian_model(X, "ngg")
        print(f"compile (10k): {compile_all(model):.1f} s", flush=True)
        compare(("10k", "ngg"), model, 10 * args.seconds, max(1, args.repeats // 3), "tgmcmc_10k.png")
    if "news" in args.experiments:
        counts = datasets.lee_news().counts
        model = document_model(counts.astype(float), "ngg")
        print(f"compile (news): {compile_all(model):.1f} s", flush=True)
        compare(("news", "ngg"), model, 6 * args.seconds, max(1, args.repeats // 2), "tgmcmc_news.png")
    print(f"\ntotal wall time {time.perf_counter() - wall:.0f} s")


if __name__ == "__main__":
    main()
