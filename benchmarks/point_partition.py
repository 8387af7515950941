"""Point estimate vs. sampling time on the digits: ``point_partition`` before and after the incremental search.

Two problems from scikit-learn's ``load_digits`` (n = 1,797 images of 8 x 8
pixels):

* ``digits``: the pixels projected on their first 8 principal components, a
  DP(alpha = 1) ``NormalInverseWishartMixture`` with its data-based
  ``default_hyperparameters``;
* ``binary``: the pixels binarised (value >= 8 of 16), a DP(alpha = 1)
  ``BetaBernoulliMixture`` with its ``default_hyperparameters``.

Each is sampled once by ``pm.sample(step=SplitMergeStep(z), chains=2,
draws=1000, tune=1000, cores=1, random_seed=1)``; the draws of ``z`` and the
sampling time (numba cache warm: a first short run compiles) are saved in
``build/point_partition_<problem>.npz``, so later runs time only the point
estimates (``--resample`` samples again).  Then, on the same draws, for each
loss:

* ``before``: the search of ``point.py`` at commit ``BEFORE`` (loaded from
  git into a temporary module), the algorithm as it was when issue #32 was
  filed;
* ``after``: ``pymc_partitions.point_partition`` of this tree;

both with ``random_seed=0`` and their default ``n_starts``/``max_sweeps``,
each timed once after a warm-up call on a small problem (compilation not
counted).  The table prints the time, the expected loss of each estimate
(computed by this tree's ``expected_loss`` on all draws), its number of
clusters and the ratio of the new time to the sampling time.

Run:  python benchmarks/point_partition.py [--problems digits binary] [--losses VI Binder] [--skip-before] [--resample]
"""

import argparse
import importlib.util
import os
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the package of this tree, not an installed copy
CACHE = ROOT / "build"
BEFORE = "3d7a424"
"""The commit of ``main`` whose ``summary/point.py`` is the algorithm timed as "before"."""

DRAWS, TUNE, CHAINS, SEED = 1000, 1000, 2, 1


def make_data(problem):
    """``(X, model class)`` of ``problem``: PCA(8) digits with NIW, or binarised digits with Beta-Bernoulli."""
    import pymc_partitions as pmp
    from sklearn.datasets import load_digits
    from sklearn.decomposition import PCA

    pixels = load_digits().data
    if problem == "digits":
        return PCA(n_components=8, random_state=0).fit_transform(pixels), pmp.NormalInverseWishartMixture
    return (pixels >= 8).astype(np.int64), pmp.BetaBernoulliMixture


def sample(problem, draws, tune):
    """``(z draws (chains, draws, n), seconds)`` of ``pm.sample`` with ``SplitMergeStep`` on ``problem``."""
    import pymc as pm
    import pymc_partitions as pmp

    x, mixture = make_data(problem)
    with pm.Model():
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(x))
        mixture("x", partition=z, observed=x, **mixture.default_hyperparameters(x))
        start = time.perf_counter()
        idata = pm.sample(
            step=pmp.SplitMergeStep(z), draws=draws, tune=tune, chains=CHAINS, cores=1,
            random_seed=SEED, progressbar=False, compute_convergence_checks=False,
        )
        seconds = time.perf_counter() - start
    return idata.posterior["z"].values, seconds


def cached_draws(problem, resample):
    """The draws and sampling time of ``problem``, from ``build/`` or sampled (after a warm-up run) and saved."""
    path = CACHE / f"point_partition_{problem}.npz"
    if path.exists() and not resample:
        saved = np.load(path)
        return saved["z"], float(saved["seconds"])
    sample(problem, draws=5, tune=5)  # compiles the kernels: the timed run below finds them compiled
    z, seconds = sample(problem, DRAWS, TUNE)
    CACHE.mkdir(exist_ok=True)
    np.savez_compressed(path, z=z, seconds=seconds)
    return z, seconds


def load_before():
    """``point.py`` of commit ``BEFORE`` as a module (it imports only package modules that did not change)."""
    source = subprocess.run(
        ["git", "show", f"{BEFORE}:pymc_partitions/summary/point.py"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout
    directory = pathlib.Path(tempfile.mkdtemp(prefix="point_before_"))
    path = directory / "point_before.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("point_before", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timed(function, idata, loss):
    """``(labels, seconds)`` of ``function(idata, loss=loss, random_seed=0)`` after a warm-up on a small problem."""
    import arviz as az

    function(az.from_dict(posterior={"z": np.array([[[0, 0, 1], [0, 1, 1]]])}), loss=loss, random_seed=0)
    start = time.perf_counter()
    labels = function(idata, loss=loss, random_seed=0)
    return labels, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="+", default=["digits", "binary"], choices=["digits", "binary"])
    parser.add_argument("--losses", nargs="+", default=["VI", "Binder"], choices=["VI", "Binder"])
    parser.add_argument("--skip-before", action="store_true", help="do not time the algorithm of commit BEFORE")
    parser.add_argument("--resample", action="store_true", help="sample again instead of reading build/")
    args = parser.parse_args()

    import arviz as az
    import pymc_partitions as pmp

    before = None if args.skip_before else load_before()
    rows = []
    for problem in args.problems:
        z, sampling = cached_draws(problem, args.resample)
        idata = az.from_dict(posterior={"z": z})
        for loss in args.losses:
            versions = [("after", pmp.point_partition)] + ([] if before is None else [("before", before.point_partition)])
            for version, function in versions:
                labels, seconds = timed(function, idata, loss)
                value = pmp.expected_loss(idata, labels, loss=loss)
                rows.append((problem, loss, version, sampling, seconds, value, int(labels.max()) + 1))
                print(rows[-1], flush=True)

    header = f"{'problem':8} {'loss':6} {'version':7} {'pm.sample s':>11} {'point s':>8} {'point/sample':>12} {'E[loss]':>12} {'clusters':>8}"
    print()
    print(header)
    print("-" * len(header))
    for problem, loss, version, sampling, seconds, value, clusters in rows:
        print(f"{problem:8} {loss:6} {version:7} {sampling:11.1f} {seconds:8.2f} {seconds / sampling:12.3f} {value:12.6f} {clusters:8d}")
    print()
    print("draws: chains=2, draws=1000, tune=1000, SplitMergeStep, random_seed=1; point_partition(random_seed=0)")
    print("command: python " + " ".join([os.path.relpath(__file__, ROOT), *sys.argv[1:]]))


if __name__ == "__main__":
    main()
