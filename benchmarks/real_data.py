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
  factions after the split), ``InfiniteRelationalModel`` (a network).

Each is fitted three ways in the same run:

* ``fixed``: ``Family(**Family.default_hyperparameters(X))``;
* ``learned``: ``Family.with_default_priors`` (hyperpriors centred on those
  values, the hyperparameters moved by NUTS);
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
``K`` fixed against learned, and both co-clustering matrices, items ordered
by the learned point partition) and ``real_data_<set>_ppc.png``
(``plot_ppc`` of the learned model, its first four features).

Run:  python benchmarks/real_data.py [--quick] [--draws 1000] [--tune 1000] [--sets iris wine ...]
      (``--quick``: 300 draws after 300 tuning steps)
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
    """``(data, classes, family)`` of the data set ``name``."""
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


SETS = ("iris", "wine", "breast-cancer", "digits-pca8", "digits-binary", "digits-counts", "karate")


def fit(x, family, learned, draws, tune, cores):
    """``(model, idata, seconds)`` of our model with the fixed (``learned=False``) or learned default."""
    with pm.Model() as model:
        alpha = pm.Gamma("alpha", 1.0, 1.0)
        z = pmp.DirichletProcessPartition("z", alpha=alpha, n=len(x))
        if learned:
            family.with_default_priors("x", partition=z, observed=x)
        else:
            family("x", partition=z, observed=x, **family.default_hyperparameters(x))
        start = time.perf_counter()
        idata = pm.sample(
            step=[pmp.SplitMergeStep(z)], draws=draws, tune=tune, chains=CHAINS, cores=cores, random_seed=SEED,
            progressbar=False, compute_convergence_checks=False,
        )
        seconds = time.perf_counter() - start
    return model, idata, seconds


def warm_up(x, family):
    """A tiny fit and point estimate of ``family`` on 20 items, so that the timed runs find every numba kernel
    compiled (or loaded from numba's cache)."""
    small = x[:20, :20] if family is pmp.InfiniteRelationalModel else x[:20]
    _, idata, _ = fit(small, family, True, draws=4, tune=4, cores=1)
    pmp.point_partition(idata, loss="VI", random_seed=0)


def describe(model, idata, seconds, classes):
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
    return logp({**values, "z": np.asarray(classes, dtype=np.int32)}) - logp({**values, "z": np.asarray(point, dtype=np.int32)})


def sklearn_row(x, classes):
    model = BayesianGaussianMixture(
        n_components=20, weight_concentration_prior_type="dirichlet_process", covariance_type="full", random_state=0,
        max_iter=1000,
    )
    start = time.perf_counter()
    labels = model.fit(x).predict(x)
    seconds = time.perf_counter() - start
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
    """The posterior of K (fixed against learned) and both co-clustering matrices, ordered by ``point``."""
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6))
    for config, (_, idata) in fits.items():
        k = np.asarray(idata["sample_stats"]["partition_n_clusters"].values).ravel()
        values, counts = np.unique(k, return_counts=True)
        axes[0].bar(values + (-0.2 if config == "fixed" else 0.2), counts / counts.sum(), width=0.4, label=config)
    axes[0].axvline(len(np.unique(classes)), color="black", linestyle="--", label="classes")
    axes[0].set(xlabel="number of clusters K", ylabel="posterior probability", title=f"{name}: posterior of K")
    axes[0].legend()
    for ax, (config, (_, idata)) in zip(axes[1:], fits.items()):
        pmp.plots.plot_similarity(idata, partition=point, ax=ax, colorbar=False)
        ax.set_title(f"{config}: co-clustering (learned point partition's order)")
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
        x, classes, family = load(name)
        n_classes = len(np.unique(classes))
        warm_up(x, family)
        fits, points = {}, {}
        for config in ("fixed", "learned"):
            model, idata, seconds = fit(x, family, config == "learned", draws, tune, args.cores)
            point, row = describe(model, idata, seconds, classes)
            fits[config], points[config] = (model, idata), point
            notes.append(f"{name} {config}: posterior means {row.pop('posterior means')}")
            print("| " + " | ".join([name, str(n_classes), config] + [cell(row[c]) for c in COLUMNS]) + " |", flush=True)
        row = sklearn_row(x, classes)
        print("| " + " | ".join([name, str(n_classes), "sklearn"] + [cell(row.get(c, "")) for c in COLUMNS]) + " |")
        figure(name, fits, points["learned"], classes)
        if family is not pmp.InfiniteRelationalModel:
            ppc_figure(name, *fits["learned"], x.shape[1])
    print()
    print("\n".join(notes))
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
