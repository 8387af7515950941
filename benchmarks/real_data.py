"""Real data with known classes: fixed and learned default priors against scikit-learn (issue #32 item 3).

Data sets (all install with scikit-learn or networkx, no download):

* ``iris`` (150 x 4, 3 species), ``wine`` (178 x 13, 3 cultivars):
  standardised, ``NormalInverseWishartMixture``;
* ``breast-cancer`` (569 x 30, 2 diagnoses): standardised, then its first 5
  principal components, ``NormalInverseWishartMixture``;
* ``digits-pca8`` (1797 x 64, 10 digits): the pixels' first 8 principal
  components, ``NormalInverseWishartMixture``;
* ``digits-binary``: the pixels binarised (value >= 8 of 16),
  ``BetaBernoulliMixture`` (binary data);
* ``digits-counts``: the pixel values (integers 0-16) as counts,
  ``GammaPoissonMixture`` (count data);
* ``karate``: Zachary's karate club (34 members, 78 friendships, the 2
  factions after the split), ``InfiniteRelationalModel`` (a network);
* ``penguins`` (342 x 4, 3 species), ``crabs`` (200 x 5, 2 species x 2
  sexes): ``pymc_partitions.datasets``, standardised,
  ``NormalInverseWishartMixture``;
* ``whiteside`` (56 weeks of gas use against temperature, before and after
  insulation: two regression lines), ``NormalLinearRegressionMixture`` with
  ``covariates = [1, Temp]`` (scikit-learn clusters the points ``(Temp, Gas)``);
* ``galaxy`` (82 galaxy velocities / 1000 km/s, no classes: K only),
  ``NormalGammaMixture``, ``pymc_partitions.datasets.galaxies`` (MASS's
  ``galaxies``).

Each is fitted four ways in the same run:

* ``fixed``: ``Family(**Family.default_hyperparameters(X))``;
* ``learned``: ``Family.with_default_priors`` (hyperpriors centred on those
  values, the hyperparameters moved by NUTS);
* ``coarsened``: the learned default with ``coarsening=c``, ``c`` chosen by
  ``pmp.calibrate_coarsening`` (its elbow rule, no labels; 2 chains x 300
  draws per value on the default grid of 8 values from 10 to 10 n);
* ``sklearn``: ``BayesianGaussianMixture(n_components=20,
  weight_concentration_prior_type="dirichlet_process",
  covariance_type="full", random_state=0)`` on the same matrix (for the
  network, the rows of the adjacency matrix).

Our models: ``alpha ~ Gamma(1, 1)``, ``DirichletProcessPartition``,
``SplitMergeStep`` (a Gibbs sweep after each proposal), ``pm.sample`` with 4
chains, ``random_seed=1``.  Columns: the number of clusters of
``point_partition(idata, loss="VI", random_seed=0)`` (``K point``), its
adjusted Rand index and normalised mutual information against the classes,
the posterior mean and 90 % interval of the number of clusters, split R-hat
and bulk ESS of ``K`` and of the log joint (``summarize``), wall times
of ``pm.sample`` and of ``point_partition`` (after a tiny fit of the same
family, so no numba compilation is counted; the machine's load average is printed before and after), and ``log p gap``:
the model's log density of the classes minus that of its point partition,
the continuous variables at their posterior means (a large negative gap
says the model itself, not the sampler, prefers more clusters than
classes).  For scikit-learn
``K`` is the number of components that own an item, ``time`` its ``fit``.

Figures, saved in ``docs/figures/``: ``real_data_<set>.png`` (the posterior of
``K`` of each configuration, and the co-clustering matrices of the learned
and the coarsened models, items ordered by the coarsened point partition),
``real_data_<set>_ppc.png`` (``plot_ppc`` of the learned model, its first four
features) and ``real_data_<set>_calibration.png`` (the calibration curve, and
K and the ARI of the point partition against ``c``).

Run:  python benchmarks/real_data.py [--quick] [--draws 1000] [--tune 1000] [--sets iris wine ...]
      (``--quick``: 300 draws after 300 tuning steps; ``--configs fixed learned coarsened sklearn``)
"""

from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import networkx as nx  # noqa: E402
import numpy as np  # noqa: E402
import pymc as pm  # noqa: E402
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.metrics import normalized_mutual_info_score  # noqa: E402
from sklearn.mixture import BayesianGaussianMixture  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the package of this tree, not an installed copy
import pymc_partitions as pmp  # noqa: E402

FIGURES = ROOT / "docs" / "figures"
CHAINS, SEED = 4, 1


def standardised(x):
    return StandardScaler().fit_transform(x)


def load(name):
    """``(data, classes, family, extra)`` of the data set ``name``: ``extra`` the keywords of the observation model
    besides the data (the regression's ``covariates``), ``classes`` ``None`` without known classes."""
    if name == "penguins":
        bunch = pmp.datasets.penguins()
        return standardised(bunch.data), bunch.target, pmp.NormalInverseWishartMixture, {}
    if name == "crabs":
        bunch = pmp.datasets.crabs()
        return standardised(bunch.data), bunch.target, pmp.NormalInverseWishartMixture, {}
    if name == "whiteside":
        data = pmp.datasets.whiteside()
        return data.response, data.target, pmp.NormalLinearRegressionMixture, {"covariates": data.covariates}
    if name == "galaxy":
        return pmp.datasets.galaxies().data / 1000.0, None, pmp.NormalGammaMixture, {}
    return (*_load_sklearn(name), {})


def _load_sklearn(name):
    if name == "iris":
        bunch = load_iris()
        return standardised(bunch.data), bunch.target, pmp.NormalInverseWishartMixture
    if name == "wine":
        bunch = load_wine()
        return standardised(bunch.data), bunch.target, pmp.NormalInverseWishartMixture
    if name == "breast-cancer":
        bunch = load_breast_cancer()
        return PCA(5, random_state=0).fit_transform(standardised(bunch.data)), bunch.target, pmp.NormalInverseWishartMixture
    if name == "karate":
        graph = nx.karate_club_graph()
        clubs = [graph.nodes[v]["club"] for v in graph.nodes]
        adjacency = nx.to_numpy_array(graph, nodelist=list(graph.nodes), weight=None)
        return adjacency, np.unique(clubs, return_inverse=True)[1], pmp.InfiniteRelationalModel
    digits = load_digits()
    if name == "digits-pca8":
        return PCA(8, random_state=0).fit_transform(digits.data), digits.target, pmp.NormalInverseWishartMixture
    if name == "digits-binary":
        return (digits.data >= 8).astype(float), digits.target, pmp.BetaBernoulliMixture
    if name == "digits-counts":
        return digits.data.astype(float), digits.target, pmp.GammaPoissonMixture
    raise ValueError(f"unknown data set {name!r}")


SETS = (
    "iris", "wine", "breast-cancer", "digits-pca8", "digits-binary", "digits-counts", "karate", "penguins", "crabs",
    "whiteside", "galaxy",
)
CONFIGS = ("fixed", "learned", "coarsened", "sklearn")


def build(x, family, learned, extra, coarsening=None):
    """Our model with the fixed (``learned=False``) or learned default, ``coarsening=c`` if given."""
    with pm.Model() as model:
        alpha = pm.Gamma("alpha", 1.0, 1.0)
        z = pmp.DirichletProcessPartition("z", alpha=alpha, n=len(x))
        if learned:
            family.with_default_priors("x", partition=z, observed=x, coarsening=coarsening, **extra)
        else:
            family("x", partition=z, observed=x, coarsening=coarsening, **extra, **family.default_hyperparameters(x, **extra))
    return model


def fit(x, family, learned, draws, tune, cores, extra, coarsening=None):
    """``(model, idata, seconds)`` of :func:`build`'s model, sampled."""
    model = build(x, family, learned, extra, coarsening)
    with model:
        z = model["z"]
        start = time.perf_counter()
        idata = pm.sample(
            step=[pmp.SplitMergeStep(z)], draws=draws, tune=tune, chains=CHAINS, cores=cores, random_seed=SEED,
            progressbar=False, compute_convergence_checks=False,
        )
        seconds = time.perf_counter() - start
    return model, idata, seconds


def warm_up(x, family, extra):
    """A tiny fit and point estimate of ``family`` on 20 items, so that the timed runs find every numba kernel
    compiled (or loaded from numba's cache)."""
    small = x[:20, :20] if family is pmp.InfiniteRelationalModel else x[:20]
    small_extra = {key: value[:20] for key, value in extra.items()}
    _, idata, _ = fit(small, family, True, draws=4, tune=4, cores=1, extra=small_extra)
    pmp.point_partition(idata, loss="VI", random_seed=0)


def calibrate(name, x, family, extra, classes):
    """``calibrate_coarsening`` on the learned default (2 chains x 300 draws per value), its figure, and the chosen c.

    The figure adds what the rule never sees: the ARI of each value's point partition against the classes."""
    start = time.perf_counter()
    result = pmp.calibrate_coarsening(
        lambda c: build(x, family, True, extra, c), step=lambda model: [pmp.SplitMergeStep(model["z"])], random_seed=SEED,
    )
    seconds = time.perf_counter() - start
    points = {c: pmp.point_partition(idata, loss="VI", random_seed=0) for c, idata in result.idata.items()}
    table = result.table.assign(
        K_point=[len(np.unique(points[c])) for c in result.table["c"]],
        ARI=[pmp.adjusted_rand_index(points[c], classes) if classes is not None else np.nan for c in result.table["c"]],
    )
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    result.plot(ax=axes[0])
    axes[0].set_title(f"{name}: calibration ({seconds:.0f} s)")
    axes[1].plot(table["c"], table["K_point"], marker="o", label="K of the point partition")
    if classes is not None:
        axes[1].axhline(len(np.unique(classes)), color="black", linestyle="--", label="classes")
        twin = axes[1].twinx()
        twin.plot(table["c"], table["ARI"], marker="s", color="C2")
        twin.set_ylabel("ARI against the classes (not used by the rule)", color="C2")
    axes[1].axvline(result.value, color="0.4", linestyle="--")
    axes[1].set(xscale="log", xlabel="coarsening c", ylabel="K", title=f"{name}: K and ARI against c")
    axes[1].legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(FIGURES / f"real_data_{name}_calibration.png", dpi=90)
    plt.close(fig)
    return result.value, seconds, table


def describe(model, idata, seconds, classes):
    """One table row's numbers (and the point partition) of a fitted model (no classes: K and diagnostics only)."""
    if classes is None:
        point, row = _describe(model, idata, seconds, np.zeros(len(idata["posterior"]["z"][0, 0]), dtype=int))
        return point, {key: ("" if key in ("ARI", "NMI", "log p gap") else value) for key, value in row.items()}
    return _describe(model, idata, seconds, classes)


def _describe(model, idata, seconds, classes):
    """One table row's numbers (and the point partition) of a fitted model."""
    start = time.perf_counter()
    point = pmp.point_partition(idata, loss="VI", random_seed=0)
    point_seconds = time.perf_counter() - start
    table = pmp.summarize(idata)
    k = np.asarray(idata["sample_stats"]["partition_n_clusters"].values).ravel()
    hyper = {
        rv.name: float(idata["posterior"][rv.name].mean())
        for rv in model.free_RVs if rv.name not in ("z", "alpha")
    }
    hyper["alpha"] = float(idata["posterior"]["alpha"].mean())
    return point, {
        "log p gap": class_gap(model, idata, point, classes),
        "K point": len(np.unique(point)),
        "ARI": pmp.adjusted_rand_index(point, classes),
        "NMI": normalized_mutual_info_score(classes, point),
        "K mean": k.mean(),
        "K 90%": f"{np.quantile(k, 0.05):.0f}-{np.quantile(k, 0.95):.0f}",
        "R-hat K": table.loc["n_clusters", "r_hat"],
        "ESS K": table.loc["n_clusters", "ess_bulk"],
        "R-hat log joint": table.loc["log_joint", "r_hat"],
        "ESS log joint": table.loc["log_joint", "ess_bulk"],
        "sample s": seconds,
        "point s": point_seconds,
        "posterior means": ", ".join(f"{name} {value:.3g}" for name, value in hyper.items()),
    }


def class_gap(model, idata, point, classes):
    """``log p(z = classes, x | h) - log p(z = point, x | h)``, ``h`` the continuous variables at their posterior
    means: how much less probable the model finds the classes than its own point partition (negative: the model,
    not the sampler, prefers the point partition)."""
    logp = model.compile_logp(jacobian=False)
    values = {}
    for rv in model.free_RVs:
        if rv.name == "z":
            continue
        mean = np.asarray(idata["posterior"][rv.name].mean().values, dtype=float)
        transform = model.rvs_to_transforms.get(rv)
        value = mean if transform is None else transform.forward(mean, *rv.owner.inputs).eval()
        values[model.rvs_to_values[rv].name] = np.asarray(value, dtype=float)
    classes = pmp.relabel(np.asarray(classes)).astype(np.int32)  # canonical labels: the prior's support
    return logp({**values, "z": classes}) - logp({**values, "z": np.asarray(point, dtype=np.int32)})


def sklearn_row(x, classes, extra):
    if "covariates" in extra:  # a regression: cluster the points (covariates without the intercept, response)
        x = np.column_stack([extra["covariates"][:, 1:], x])
    model = BayesianGaussianMixture(
        n_components=20, weight_concentration_prior_type="dirichlet_process", covariance_type="full", random_state=0,
        max_iter=1000,
    )
    start = time.perf_counter()
    labels = model.fit(x).predict(x)
    seconds = time.perf_counter() - start
    if classes is None:
        return {"K point": len(np.unique(labels)), "sample s": seconds}
    return {
        "K point": len(np.unique(labels)),
        "ARI": pmp.adjusted_rand_index(labels, classes),
        "NMI": normalized_mutual_info_score(classes, labels),
        "sample s": seconds,
    }


COLUMNS = (
    "K point", "ARI", "NMI", "K mean", "K 90%", "R-hat K", "ESS K", "R-hat log joint", "ESS log joint", "sample s",
    "point s", "log p gap",
)


def cell(value):
    if isinstance(value, str):
        return value
    if isinstance(value, (int, np.integer)):
        return str(value)
    return f"{value:.3f}" if abs(value) < 10 else f"{value:.1f}"


def figure(name, fits, point, classes):
    """The posterior of K of every configuration, and the co-clustering matrices before (learned) and after
    coarsening, ordered by ``point``."""
    shown = [config for config in ("learned", "coarsened") if config in fits] or list(fits)[:2]
    fig, axes = plt.subplots(1, 1 + len(shown), figsize=(5 * (1 + len(shown)), 4.6))
    width = 0.8 / len(fits)
    for q, (config, (_, idata)) in enumerate(fits.items()):
        k = np.asarray(idata["sample_stats"]["partition_n_clusters"].values).ravel()
        values, counts = np.unique(k, return_counts=True)
        axes[0].bar(values + (q - (len(fits) - 1) / 2) * width, counts / counts.sum(), width=width, label=config)
    if classes is not None:
        axes[0].axvline(len(np.unique(classes)), color="black", linestyle="--", label="classes")
    axes[0].set(xlabel="number of clusters K", ylabel="posterior probability", title=f"{name}: posterior of K")
    axes[0].legend()
    for ax, config in zip(axes[1:], shown):
        _, idata = fits[config]
        pmp.plots.plot_similarity(idata, partition=point, ax=ax, colorbar=False)
        ax.set_title(f"{config}: co-clustering")
    fig.tight_layout()
    fig.savefig(FIGURES / f"real_data_{name}.png", dpi=90)
    plt.close(fig)


def ppc_figure(name, model, idata, d):
    axes = pmp.plots.plot_ppc(idata, model, features=list(range(min(d, 4))), n_draws=40, random_seed=0)
    fig = np.ravel(axes)[0].figure
    fig.suptitle(f"{name}, learned default: posterior predictive check")
    fig.savefig(FIGURES / f"real_data_{name}_ppc.png", dpi=80)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="300 draws after 300 tuning steps")
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--cores", type=int, default=2, help="processes for the chains")
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    parser.add_argument("--configs", nargs="+", default=list(CONFIGS), choices=CONFIGS)
    args = parser.parse_args()
    draws, tune = (300, 300) if args.quick else (args.draws, args.tune)
    print(f"$ python benchmarks/{os.path.basename(__file__)} {' '.join(sys.argv[1:])}")
    print(f"{CHAINS} chains x {draws} draws after {tune} tuning steps; load average {os.getloadavg()}")
    FIGURES.mkdir(parents=True, exist_ok=True)
    header = ("data", "classes", "config", *COLUMNS)
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    notes = []
    for name in args.sets:
        try:
            x, classes, family, extra = load(name)
        except ImportError as err:
            notes.append(f"{name}: skipped ({err})")
            continue
        n_classes = "-" if classes is None else str(len(np.unique(classes)))
        warm_up(x, family, extra)
        fits, points = {}, {}
        for config in [c for c in args.configs if c != "sklearn"]:
            coarsening = None
            if config == "coarsened":
                coarsening, seconds, table = calibrate(name, x, family, extra, classes)
                notes.append(f"{name} calibration ({seconds:.0f} s): c = {coarsening:.4g}\n{table.to_string(index=False)}")
            model, idata, seconds = fit(x, family, config != "fixed", draws, tune, args.cores, extra, coarsening)
            point, row = describe(model, idata, seconds, classes)
            fits[config], points[config] = (model, idata), point
            notes.append(f"{name} {config}: posterior means {row.pop('posterior means')}")
            label = config if coarsening is None else f"coarsened (c = {coarsening:.3g})"
            print("| " + " | ".join([name, n_classes, label] + [cell(row[c]) for c in COLUMNS]) + " |", flush=True)
        if "sklearn" in args.configs:
            row = sklearn_row(x, classes, extra)
            print("| " + " | ".join([name, n_classes, "sklearn"] + [cell(row.get(c, "")) for c in COLUMNS]) + " |")
        if fits:
            figure(name, fits, points.get("coarsened", points.get("learned", next(iter(points.values())))), classes)
        if "learned" in fits and family is not pmp.InfiniteRelationalModel:
            ppc_figure(name, *fits["learned"], min(x.shape[1], 4) if x.ndim == 2 else 1)
    print()
    print("\n".join(notes))
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
