"""How well each partition step mixes on real data, at equal wall time (issue 53 item 1).

For each data set (those of ``benchmarks/real_data.py`` and ``blobs``: 5,000
x 5, 6 centres of ``sklearn.datasets.make_blobs``, standardised) the model is
``real_data.py``'s coarsened learned default (``alpha ~ Gamma(1, 1)``,
``DirichletProcessPartition``, ``Family.with_default_priors`` with
``coarsening=c``, the hyperparameters moved by NUTS), ``c`` the value
``pmp.calibrate_coarsening`` chose in ``docs/real_data_results.md``
(:data:`COARSENING`; ``blobs``: no coarsening; ``--ordinary``: none for any
set).  Each step that supports the model runs 4 chains from ``pm.sample``'s
default start, one after the other (``cores=1``), for about ``--seconds`` of
sampling per chain: after a tiny run that compiles everything, two pilots (10
and ``10 + PILOT`` draws) time a draw without ``pm.sample``'s fixed set-up
cost, and the run then takes as many draws as fit the budget (tuning:
``--tune`` steps, not counted in the budget; the seconds reported are those
of the run, tuning's share taken out).

Reported per (set, step), from ``pmp.summarize``: split R-hat and bulk / tail
ESS of ``K`` (``n_clusters``) and of the log joint; ESS of ``K`` per second of
sampling; the mean ``K`` of each chain; and the time to R-hat 1.05: R-hat of
``K`` over the first ``t`` seconds of every chain, the first ``t`` on a grid of
tenths of the run at which it is at most 1.05 (``-`` if never).  A step that
does not support the model is listed with the reason.

Figures, saved in ``docs/figures/``: ``mixing_<set>.png``, the trace of ``K``
of each chain, one panel per step.

Run:  python benchmarks/mixing.py [--sets digits-counts wine ...] [--steps default split_merge ...]
                                  [--seconds 60] [--tune 300] [--ordinary]
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import matplotlib

matplotlib.use("Agg")
import arviz as az  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pymc as pm  # noqa: E402
from sklearn.datasets import make_blobs  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the package of this tree, not an installed copy
sys.path.insert(0, str(ROOT / "benchmarks"))
import pymc_partitions as pmp  # noqa: E402
from real_data import SETS, build, load  # noqa: E402

FIGURES = ROOT / "docs" / "figures"
CHAINS, SEED, PILOT = 4, 1, 30
TARGET_RHAT = 1.05

STEPS = {
    "default": None,
    "gibbs": lambda z: pmp.GibbsStep(z),
    "split_merge": lambda z: pmp.SplitMergeStep(z),
    "past_states": lambda z: pmp.PastStatesSplitMergeStep(z),
    "arm": lambda z: pmp.ARMStep(z),
    "minsm": lambda z: pmp.MinHashSplitMergeStep(z),
    "tgmcmc": lambda z: pmp.TreeGuidedStep(z),
    "hybrid": lambda z: pmp.HybridDPStep(z),
    "subcluster": lambda z: pmp.SubClusterSplitMergeStep(z),
    "tempered": lambda z: pmp.TemperedGibbsStep(z),
    "tempered3": lambda z: pmp.TemperedGibbsStep(z, ladder=(1.0, 0.7, 0.5)),
}
"""The steps compared, by name (``default``: ``pm.sample``'s own assignment; ``tempered``: the default ladder of
eight levels; ``tempered3``: three levels, the default before 7 December 2026)."""
COARSENING = {
    "whiteside": 315.0, "penguins": 1490.0, "iris": 358.0, "wine": 849.0, "crabs": 2000.0, "karate": 5610.0,
    "breast-cancer": 5690.0, "digits-pca8": 1.8e4, "digits-binary": 6160.0, "digits-counts": 248.0, "galaxy": 820.0,
}
"""``c`` of each real set, as ``calibrate_coarsening`` chose it in ``docs/real_data_results.md``."""


def blobs():
    """``(data, classes, family, extra)``: issue 53's blob set, 5,000 x 5, 6 centres, standardised."""
    x, classes = make_blobs(n_samples=5000, n_features=5, centers=6, random_state=0)
    return StandardScaler().fit_transform(x), classes, pmp.NormalInverseWishartMixture, {}


def sample(model, make_step, draws, tune, seed=SEED):
    """``(idata, seconds)``: ``pm.sample`` with ``make_step(z)`` (or the default assignment), 4 chains in turn."""
    with model:
        step = None if make_step is None else [make_step(model["z"])]
        start = time.perf_counter()
        idata = pm.sample(
            step=step, draws=draws, tune=tune, chains=CHAINS, cores=1, random_seed=seed, progressbar=False,
            compute_convergence_checks=False,
        )
    return idata, time.perf_counter() - start


def rhat_of_k(k):
    """Split R-hat of the per-chain traces ``k`` (chains, draws)."""
    return float(az.rhat(az.convert_to_dataset({"k": k}))["k"])


def time_to_target(k, seconds_per_draw):
    """Seconds of sampling per chain from which R-hat of ``K`` (over the draws so far) stays at most 1.05.

    Checked on tenths of the run: the first tenth from which every later tenth, and the whole run, has R-hat at
    most 1.05 (an early R-hat below it by chance does not count); NaN if the whole run's is above.
    """
    draws = k.shape[1]
    ends = [max(4, draws * tenth // 10) for tenth in range(1, 11)]
    below = [rhat_of_k(k[:, :end]) <= TARGET_RHAT for end in ends]
    if not below[-1]:
        return float("nan")
    first = len(below) - 1
    while first > 0 and below[first - 1]:
        first -= 1
    return ends[first] * seconds_per_draw


def measure(x, family, extra, coarsening, make_step, seconds, tune):
    """The row of one (set, step): the pilot, the run at the wall-time budget, its diagnostics."""
    model = build(x, family, True, extra, coarsening)
    sample(model, make_step, 10, 0)  # compiles every function and kernel
    _, short = sample(model, make_step, 10, 0)
    _, pilot = sample(model, make_step, 10 + PILOT, 0)
    per_draw = max(pilot - short, 1e-6) / (CHAINS * PILOT)  # the cost of pm.sample's set-up taken out
    draws = max(50, int(seconds / per_draw))
    idata, total = sample(model, make_step, draws, tune)
    per_draw = total / (CHAINS * (draws + tune))
    table = pmp.summarize(idata)
    k = idata["sample_stats"]["partition_n_clusters"].values
    return {
        "draws": draws,
        "seconds": draws * per_draw,
        "k_rhat": table.loc["n_clusters", "r_hat"],
        "k_ess": (table.loc["n_clusters", "ess_bulk"], table.loc["n_clusters", "ess_tail"]),
        "lj_rhat": table.loc["log_joint", "r_hat"],
        "lj_ess": (table.loc["log_joint", "ess_bulk"], table.loc["log_joint", "ess_tail"]),
        "ess_per_s": table.loc["n_clusters", "ess_bulk"] / (CHAINS * draws * per_draw),
        "chain_k": k.mean(axis=1),
        "to_target": time_to_target(k, per_draw),
        "trace": k,
    }


def row(name, result):
    if isinstance(result, str):
        return f"| {name} | {result} |||||||||"
    chain_k = ", ".join(f"{v:.1f}" for v in result["chain_k"])
    to_target = "-" if np.isnan(result["to_target"]) else f"{result['to_target']:.0f}"
    return (
        f"| {name} | {result['draws']} | {result['seconds']:.0f} | {result['k_rhat']:.3f} | "
        f"{result['k_ess'][0]:.0f} / {result['k_ess'][1]:.0f} | {result['lj_rhat']:.3f} | "
        f"{result['lj_ess'][0]:.0f} / {result['lj_ess'][1]:.0f} | {result['ess_per_s']:.2f} | {chain_k} | {to_target} |"
    )


def figure(name, results):
    traced = {step: r for step, r in results.items() if not isinstance(r, str)}
    if not traced:
        return
    fig, axes = plt.subplots(len(traced), 1, figsize=(8, 1.8 * len(traced)), sharex=False, squeeze=False)
    for ax, (step, result) in zip(axes[:, 0], traced.items()):
        seconds = np.arange(result["trace"].shape[1]) * result["seconds"] / result["trace"].shape[1]
        for chain in result["trace"]:
            ax.plot(seconds, chain, lw=0.7)
        ax.set_ylabel(f"{step}\nK", fontsize=8)
    axes[-1, 0].set_xlabel("seconds of sampling per chain")
    fig.suptitle(f"{name}: K of {CHAINS} chains, R-hat of K in the table")
    fig.tight_layout()
    FIGURES.mkdir(parents=True, exist_ok=True)
    fig.savefig(FIGURES / f"mixing_{name}.png", dpi=90)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=[*SETS, "blobs"])
    parser.add_argument("--steps", nargs="+", default=list(STEPS), choices=list(STEPS))
    parser.add_argument("--seconds", type=float, default=60.0, help="seconds of sampling per chain (after tuning)")
    parser.add_argument("--tune", type=int, default=300)
    parser.add_argument("--ordinary", action="store_true", help="no coarsening on any set")
    args = parser.parse_args()
    print(f"$ python benchmarks/mixing.py --sets {' '.join(args.sets)} --steps {' '.join(args.steps)} "
          f"--seconds {args.seconds:g} --tune {args.tune}" + (" --ordinary" if args.ordinary else ""))
    for name in args.sets:
        x, classes, family, extra = blobs() if name == "blobs" else load(name)
        coarsening = None if args.ordinary else COARSENING.get(name)
        print(f"\n{name}: n = {len(x)}, {family.__name__}, coarsening c = {coarsening}")
        print("\n| step | draws | s / chain | R-hat K | ESS K bulk / tail | R-hat log joint | ESS log joint | "
              "ESS K / s | mean K per chain | s to R-hat 1.05 |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        results = {}
        for step in args.steps:
            try:
                results[step] = measure(x, family, extra, coarsening, STEPS[step], args.seconds, args.tune)
            except (TypeError, ValueError) as error:  # the step refuses this model: say why
                results[step] = f"not run: {str(error).splitlines()[0][:120]}"
            print(row(step, results[step]), flush=True)
        figure(name, results)


if __name__ == "__main__":
    main()
