"""Which step ``pm.sample()`` should assign to a partition variable: ESS per second of K and of the log joint (issue #43).

Each candidate moves ``z`` in ``pm.sample`` while NUTS moves the continuous
variables (the DP concentration ``alpha ~ Gamma(1, 1)`` and the learned
hyperparameters of ``Family.with_default_priors``), on three real data sets:

* ``galaxies`` -- 82 velocities in 1000 km/s (``datasets.galaxies``), ``NormalGammaMixture``;
* ``faithful`` -- Old Faithful, 272 x 2 (``datasets.old_faithful``), ``NormalInverseWishartMixture``;
* ``flea`` -- the flea beetles, 74 x 6 standardised (``datasets.flea_beetles``), ``NormalInverseWishartMixture``;
* ``crabs`` -- a component model written in PyMC (notebook ``11_your_own_cluster_model``): the crabs' rear
  width on standardised carapace length (``datasets.crabs``, n = 200), a line per cluster
  (``intercept``, ``slope`` with ``K_max = 10`` rows) and one noise scale.

Candidates:

* ``gibbs`` -- ``GibbsStep(z)``: one collapsed Gibbs sweep per draw;
* ``split_merge`` -- ``SplitMergeStep(z)``: one restricted-Gibbs split-merge proposal, then a Gibbs sweep;
* ``split_merge_5`` -- ``SplitMergeStep(z, n_moves=5)``: five proposals, then a Gibbs sweep;
* ``compound`` -- ``[GibbsStep(z), SplitMergeStep(z, gibbs_sweep=False)]``: the two steps
  as separate members of PyMC's ``CompoundStep``;

and on the component model (where ``SplitMergeStep`` does not apply):

* ``gibbs`` -- ``GibbsStep(z)``: Algorithm 8 in the ``K_max``-row form;
* ``nonconjugate_split_merge`` -- ``NonconjugateSplitMergeStep(z)``: a split-merge proposal with Laplace
  parameter proposals, then an Algorithm 8 scan.

For each data set, candidate and seed, ``pm.sample(draws, tune, chains=4,
cores=1)`` runs after a tiny warm-up fit in the same process (so no numba
compilation is timed), the candidates alternated within each seed; the time is the CPU time of the
``pm.sample`` call (tuning included, and the compilation of the model's PyTensor
functions, about a second, from a warm cache): on a shared machine CPU time
moves far less with the load than wall time.  ESS is ArviZ's rank-normalised bulk ESS of
the sample stats ``partition_n_clusters`` (K) and ``partition_log_joint``
over the 4 chains; R-hat is the split R-hat.  The table reports the median
over seeds of ESS per second and, for reference, of ESS and R-hat.

Run:  python benchmarks/default_step.py [--draws 1000] [--tune 1000] [--seeds 1 2 3] [--sets crabs]
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
import warnings

import arviz as az
import numpy as np
import pymc as pm

import pymc_partitions as pmp

CANDIDATES = ("gibbs", "split_merge", "split_merge_5", "compound")
COMPONENT_CANDIDATES = ("gibbs", "nonconjugate_split_merge")
SETS = ("galaxies", "faithful", "flea", "crabs")
COMPONENT_SETS = ("crabs",)
K_MAX = 10


def data_of(name):
    """The data matrix of a set and its learned-default observation model."""
    if name == "galaxies":
        return pmp.datasets.galaxies().data / 1000.0, pmp.NormalGammaMixture
    if name == "faithful":
        return pmp.datasets.old_faithful().data, pmp.NormalInverseWishartMixture
    beetles = pmp.datasets.flea_beetles().data
    return (beetles - beetles.mean(0)) / beetles.std(0), pmp.NormalInverseWishartMixture


def component_model(z):
    """The crabs' rear width, a line per cluster in plain PyMC (notebook 11's model)."""
    X, _, _, features = pmp.datasets.crabs("sex")
    length, rear = X[:, features.index("CL")], X[:, features.index("RW")]
    x = (length - length.mean()) / length.std()
    intercept = pm.Normal("intercept", rear.mean(), 5.0, shape=K_MAX)
    slope = pm.Normal("slope", 0.0, 5.0, shape=K_MAX)
    sigma = pm.HalfNormal("sigma", 1.0)
    pm.Normal("rear", intercept[z] + slope[z] * x, sigma, observed=rear)


def steps_of(candidate, z):
    if candidate == "nonconjugate_split_merge":
        return [pmp.NonconjugateSplitMergeStep(z)]
    if candidate == "gibbs":
        return [pmp.GibbsStep(z)]
    if candidate == "split_merge":
        return [pmp.SplitMergeStep(z)]
    if candidate == "split_merge_5":
        return [pmp.SplitMergeStep(z, n_moves=5)]
    return [pmp.GibbsStep(z), pmp.SplitMergeStep(z, gibbs_sweep=False)]


def fit(name, candidate, draws, tune, seed, chains=4):
    with pm.Model():
        alpha = pm.Gamma("alpha", 1.0, 1.0)
        if name in COMPONENT_SETS:
            z = pmp.DirichletProcessPartition("z", alpha=alpha, n=len(pmp.datasets.crabs().data))
            component_model(z)
        else:
            X, family = data_of(name)
            z = pmp.DirichletProcessPartition("z", alpha=alpha, n=len(X))
            family.with_default_priors("x", partition=z, observed=X)
        start = time.process_time()
        idata = pm.sample(
            step=steps_of(candidate, z), draws=draws, tune=tune, chains=chains, cores=1, random_seed=seed,
            progressbar=False, compute_convergence_checks=False,
        )
        return idata, time.process_time() - start


def measure(result):
    idata, seconds = result
    row = {"seconds": seconds}
    for key, stat in (("K", "partition_n_clusters"), ("log_joint", "partition_log_joint")):
        values = np.asarray(idata["sample_stats"][stat].values, dtype=float)
        if values.ndim == 3:  # a compound of two partition steps records each one's stats: keep the last step's
            values = values[..., -1]
        ess = float(az.ess(values, method="bulk"))
        row[f"ess_{key}"] = ess
        row[f"ess_s_{key}"] = ess / seconds
        row[f"rhat_{key}"] = float(az.rhat(values))
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--tune", type=int, default=1000)
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    every = list(dict.fromkeys(CANDIDATES + COMPONENT_CANDIDATES))
    parser.add_argument("--candidates", nargs="+", default=every, choices=every)
    args = parser.parse_args()
    logging.getLogger("pymc").setLevel(logging.ERROR)
    warnings.simplefilter("ignore")
    print(f"$ python benchmarks/{os.path.basename(__file__)} {' '.join(sys.argv[1:])}")
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    print()
    header = ["set", "step", "ESS/s K", "ESS/s log joint", "ESS K", "ESS log joint", "R-hat K", "R-hat log joint", "s"]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|", flush=True)
    for name in args.sets:
        applicable = COMPONENT_CANDIDATES if name in COMPONENT_SETS else CANDIDATES
        candidates = [c for c in args.candidates if c in applicable]
        for candidate in candidates:
            fit(name, candidate, draws=5, tune=5, seed=0, chains=1)  # loads the kernels: no compilation timed
        # candidates alternated within each seed, so that a change of the machine's load hits them alike
        runs = {c: [] for c in candidates}
        for seed in args.seeds:
            for candidate in candidates:
                runs[candidate].append(measure(fit(name, candidate, args.draws, args.tune, seed)))
        for candidate, rows in runs.items():

            def med(key):
                return float(np.median([r[key] for r in rows]))

            cells = [
                name, candidate, f"{med('ess_s_K'):.1f}", f"{med('ess_s_log_joint'):.1f}", f"{med('ess_K'):.0f}",
                f"{med('ess_log_joint'):.0f}", f"{med('rhat_K'):.3f}", f"{med('rhat_log_joint'):.3f}", f"{med('seconds'):.1f}",
            ]
            print("| " + " | ".join(cells) + " |", flush=True)
    print(f"\nload average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
