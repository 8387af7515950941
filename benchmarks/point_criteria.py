"""Which point partition summarises the posterior: VI, Binder, generalised VI and PEAR on the same draws.

For each data set one posterior sample is drawn (default step assignment of
``pm.sample``, learned default priors for the package's mixtures, 2 chains),
then every criterion of ``pmp.point_partition`` is applied to the same draws.
Reported per criterion: the number of clusters of the estimate, of them those
holding at least 1 % of the items, the three largest sizes, the adjusted Rand
index against the known classes, the posterior expected VI (bits), PEAR (the
posterior expected adjusted Rand index that the default criterion maximises,
from the posterior similarity matrix) and the time of the search; beside them the partition with one cluster and the
classes themselves.  The ``poisson``
set is issue 51's overlapping clusterwise Poisson regression (three groups,
(intercept, slope) = (0.5, 1.0), (2.0, -0.5), (1.0, 0.0), log link, written in
plain PyMC with K_max = 10 rows); its ``oracle`` row classifies each item with
the true parameters, the best any partition can do there.  Also printed: the
posterior mean number of clusters and of clusters with at least 1 % of the items.

Run:  python benchmarks/point_criteria.py [--sets poisson flea iris wine crabs] [--draws 500] [--n 2000]
"""

from __future__ import annotations

import argparse
import pathlib
import sys
import time

import numpy as np
import pymc as pm

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the package of this tree, not an installed copy
sys.path.insert(0, str(ROOT / "benchmarks"))
import pymc_partitions as pmp  # noqa: E402
from real_data import load  # noqa: E402

CRITERIA = (("VI", 1.0), ("VI", 2.0), ("Binder", 1.0), ("PEAR", 1.0))
SEED = 1


def poisson(n, rng):
    """Issue 51's data: ``(model, classes, oracle)``."""
    x = rng.uniform(-1.0, 1.0, n)
    classes = rng.integers(0, 3, n)
    a_true, b_true = np.array([0.5, 2.0, 1.0]), np.array([1.0, -0.5, 0.0])
    y = rng.poisson(np.exp(a_true[classes] + b_true[classes] * x))
    rate = a_true + b_true * x[:, None]
    oracle = np.argmax(y[:, None] * rate - np.exp(rate), axis=1)
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=n)
        a = pm.Normal("a", 0.0, 2.0, shape=10)
        b = pm.Normal("b", 0.0, 2.0, shape=10)
        pm.Poisson("y", pm.math.exp(a[z] + b[z] * x), observed=y)
    return model, classes, oracle


def mixture(name):
    """A real set of ``benchmarks/real_data.py`` (``flea``: the flea beetles) with the learned default prior."""
    if name == "flea":
        bunch = pmp.datasets.flea_beetles()
        x, classes, family, extra = bunch.data, bunch.target, pmp.NormalInverseWishartMixture, {}
    else:
        x, classes, family, extra = load(name)
    with pm.Model() as model:
        alpha = pm.Gamma("alpha", 1.0, 1.0)
        z = pmp.DirichletProcessPartition("z", alpha=alpha, n=len(x))
        family.with_default_priors("x", partition=z, observed=x, **extra)
    return model, classes, None


def pear_of(similarity, labels):
    """PEAR of ``labels`` (Fritsch & Ickstadt 2009, eq. (11)) from the posterior similarity matrix, by brute force."""
    upper = np.triu_indices(len(labels), 1)
    pi = similarity[upper]
    joined = (labels[:, None] == labels[None, :])[upper]
    pairs, joined_pairs, total, shared = len(pi), joined.sum(), pi.sum(), pi[joined].sum()
    chance = joined_pairs * total / pairs
    return (shared - chance) / ((joined_pairs + total) / 2 - chance)


def rows(name, model, classes, oracle, draws):
    with model:
        start = time.perf_counter()
        idata = pm.sample(draws=draws, tune=draws, chains=2, cores=1, random_seed=SEED, progressbar=False,
                          compute_convergence_checks=False)
        seconds = time.perf_counter() - start
    z = idata["posterior"]["z"].values.reshape(-1, idata["posterior"]["z"].shape[-1])
    n = z.shape[1]
    sizes = [np.bincount(d) for d in z]
    k_mean = np.mean([len(s) for s in sizes])
    k_large = np.mean([np.sum(s >= 0.01 * n) for s in sizes])
    print(f"\n{name}: n = {n}, sampled in {seconds:.0f} s; posterior mean K {k_mean:.2f}, K of clusters >= 1 % {k_large:.2f}")
    similarity = pmp.posterior_similarity(idata)
    print("\n| criterion | K | K >= 1 % | largest | ARI | expected VI | PEAR | search s |")
    print("|---|---|---|---|---|---|---|---|")
    pmp.point_partition(idata, loss="VI", random_seed=0, n_starts=1)  # compile outside the timings
    pmp.point_partition(idata, loss="PEAR", random_seed=0, n_starts=1)
    candidates = []
    for loss, a in CRITERIA:
        start = time.perf_counter()
        estimate = pmp.point_partition(idata, loss=loss, a=a, random_seed=0)
        candidates.append((f"{loss}" + (f" a={a:g}" if a != 1.0 else ""), estimate, time.perf_counter() - start))
    candidates.append(("one cluster", np.zeros(n, dtype=np.int64), float("nan")))
    candidates.append(("the classes", classes, float("nan")))
    if oracle is not None:
        candidates.append(("oracle (true parameters)", oracle, float("nan")))
    for label, estimate, search in candidates:
        counts = np.sort(np.bincount(estimate))[::-1]
        ari = pmp.adjusted_rand_index(estimate, classes)
        loss = pmp.expected_loss(idata, estimate, loss="VI")
        print(f"| {label} | {len(counts)} | {np.sum(counts >= 0.01 * n)} | {counts[:3].tolist()} | {ari:.3f} | "
              f"{loss:.3f} | {pear_of(similarity, np.asarray(estimate)):.3f} | {search:.2f} |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=["poisson", "flea", "iris", "wine", "crabs"])
    parser.add_argument("--draws", type=int, default=500, help="draws per chain, after as many tuning steps")
    parser.add_argument("--n", type=int, default=2000, help="items of the Poisson regression")
    args = parser.parse_args()
    print(f"$ python benchmarks/point_criteria.py --sets {' '.join(args.sets)} --draws {args.draws} --n {args.n}")
    for name in args.sets:
        if name == "poisson":
            rows(name, *poisson(args.n, np.random.default_rng(0)), args.draws)
        else:
            rows(name, *mixture(name), args.draws)


if __name__ == "__main__":
    main()
