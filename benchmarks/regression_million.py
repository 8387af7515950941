"""Clusterwise linear regression at 10^6 rows: ``NormalLinearRegressionMixture`` with ``SubClusterSplitMergeStep``.

Three planted regression lines ``y = b0 + b1 x + noise`` (x ~ Uniform(-2, 2), noise sd 0.3, weights 0.5,
0.3, 0.2; the design matrix ``[1, x]``), a DP partition with ``alpha ~ Gamma(1, 1)``, the fixed default
hyperparameters (``default_hyperparameters(y, covariates=X)``), ``pm.sample`` with the sub-cluster
split-merge step from one cluster (``tune=0``, ``z`` left out of the trace, its labels recorded by a
callback).  Prints first what a chain can reach (``NMI`` of labels drawn from their exact conditional
given the true lines, weights and noise, and of its MAP: the lines cross, so neither is 1), then the table of draws: seconds since ``pm.sample`` was called, K, the NMI to the planted
labels; the compile (first draw on 40,000 rows) is timed separately.  The model's statistics are the
additive ``XᵀX``, ``Xᵀy``, ``yᵀy`` and ``n``, so the step's parallel passes run on it unchanged.

Run:  python benchmarks/regression_million.py [--n 1000000] [--draws 15] [--seed 1]
"""

from __future__ import annotations

import argparse
import logging
import os
import pathlib
import sys
import time

import numpy as np
import pymc as pm
from sklearn.metrics import normalized_mutual_info_score

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import pymc_partitions as pmp  # noqa: E402

LINES = np.array([[0.0, 2.0], [1.0, -1.0], [-2.0, 0.5]])
WEIGHTS = np.array([0.5, 0.3, 0.2])
NOISE = 0.3


def data(n, rng):
    truth = rng.choice(3, size=n, p=WEIGHTS)
    x = rng.uniform(-2.0, 2.0, size=n)
    covariates = np.column_stack([np.ones(n), x])
    y = np.einsum("ij,ij->i", covariates, LINES[truth]) + rng.normal(0.0, NOISE, size=n)
    return y, covariates, truth


def oracle_nmi(y, covariates, truth, rng):
    """NMI to the planted labels of labels drawn from their exact conditional given the true lines, weights and noise
    (what a posterior draw can reach), and of that conditional's MAP labels."""
    log_p = np.log(WEIGHTS) - 0.5 * ((y[:, None] - covariates @ LINES.T) / NOISE) ** 2
    p = np.exp(log_p - log_p.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    drawn = (rng.random(len(y))[:, None] > np.cumsum(p, axis=1)).sum(axis=1)
    return normalized_mutual_info_score(truth, drawn), normalized_mutual_info_score(truth, p.argmax(axis=1))


def model_for(y, covariates):
    with pm.Model() as model:
        alpha = pm.Gamma("alpha", 1.0, 1.0)
        z = pmp.DirichletProcessPartition("z", alpha=alpha, n=len(y))
        hyper = pmp.NormalLinearRegressionMixture.default_hyperparameters(y, covariates=covariates)
        pmp.NormalLinearRegressionMixture("y", partition=z, covariates=covariates, observed=y, **hyper)
    return model


class Record:
    """``pm.sample``'s callback: seconds since the start and the labels at every draw."""

    def __init__(self):
        self.start, self.seconds, self.labels = time.perf_counter(), [], []

    def __call__(self, trace, draw):
        self.seconds.append(time.perf_counter() - self.start)
        self.labels.append(draw.point["z"].astype(np.int32))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--draws", type=int, default=15)
    parser.add_argument("--seed", type=int, default=1, help="pm.sample's random_seed (the data are fixed)")
    args = parser.parse_args()
    print(f"$ python benchmarks/{os.path.basename(__file__)} {' '.join(sys.argv[1:])}")
    print(f"load average {os.getloadavg()}")
    logging.getLogger("pymc").setLevel(logging.ERROR)
    rng = np.random.default_rng(0)
    y, covariates, truth = data(args.n, rng)
    draw_nmi, map_nmi = oracle_nmi(y, covariates, truth, np.random.default_rng(5))
    print(f"oracle: labels drawn given the true lines and weights NMI {draw_nmi:.4f}, their MAP {map_nmi:.4f}")
    start = time.perf_counter()
    with model_for(y[:40_000], covariates[:40_000]) as small:
        pm.sample(step=pmp.SubClusterSplitMergeStep(small["z"]), tune=0, draws=2, chains=1, progressbar=False, random_seed=0)
    print(f"compile and first draws on 40,000 rows: {time.perf_counter() - start:.1f} s")
    model = model_for(y, covariates)
    with model:
        record = Record()
        idata = pm.sample(
            step=pmp.SubClusterSplitMergeStep(model["z"]), tune=0, draws=args.draws, chains=1, cores=1,
            var_names=["alpha"], callback=record, random_seed=args.seed, compute_convergence_checks=False, progressbar=False,
        )
    k = idata["sample_stats"]["partition_n_clusters"].values[0]
    print("| draw | seconds | K | NMI |")
    print("|---|---|---|---|")
    for t, (seconds, labels) in enumerate(zip(record.seconds, record.labels)):
        print(f"| {t + 1} | {seconds:.1f} | {k[t]} | {normalized_mutual_info_score(truth, labels):.4f} |")
    print(f"median {np.median(np.diff(record.seconds)):.2f} s per draw; load average {os.getloadavg()}")


if __name__ == "__main__":
    main()
