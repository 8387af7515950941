"""Point estimate vs. sampling on the digits: ``point_partition`` before and after the incremental search.

Two problems from scikit-learn's ``load_digits`` (n = 1,797 images of 8 x 8
pixels):

* ``digits``: the pixels projected on their first 8 principal components, a
  DP(alpha = 1) ``NormalInverseWishartMixture`` with its data-based
  ``default_hyperparameters``;
* ``binary``: the pixels binarised (value >= 8 of 16), a DP(alpha = 1)
  ``BetaBernoulliMixture`` with its ``default_hyperparameters``.

Each is sampled by ``pm.sample(step=SplitMergeStep(z), chains=2, draws=1000,
tune=1000, random_seed=1)`` with PyMC's default ``cores`` (``cpu_count() // 2``:
the chains one after the other on a 2-CPU machine), after a short run that
compiles the kernels, so that ``pm.sample s`` is the sampling alone
(``CPU s``: this process's CPU time, the sampling's own when the chains ran
in it).  The draws of ``z`` and those times are saved in
``build/point_partition_<problem>.npz``, and later runs time only the point
estimates (``--resample`` samples again: do so for a table of times taken
under the same load).  Then, on the same draws, for each loss:

* ``before``: ``point_partition`` of ``point.py`` at commit ``BEFORE`` (loaded
  from git into a temporary module), the search when issue #32 was filed;
* ``after``: ``pymc_partitions.point_partition`` of this tree, which runs its
  starts on numba's threads (one per CPU);

both with ``random_seed=0`` and their default ``n_starts=10``,
``max_sweeps=50``, after a warm-up call on a tiny problem (compilation not
counted).  ``after`` is timed ``--repeats`` times and its fastest call
reported (the machine is shared), ``before`` once.  ``point s`` is the wall
time, ``CPU s`` the CPU time of the process (all threads), ``point/sample``
the ratio of the wall times, ``E[loss]`` the posterior expected loss of the
estimate (this tree's ``expected_loss`` over all draws: VI in bits, Binder in
disagreeing pairs) and ``clusters`` its number of clusters.

Run:  python benchmarks/point_partition.py [--problems digits binary] [--losses VI Binder] [--skip-before]
      [--resample] [--repeats 3]
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
"""The commit of ``main`` whose ``summary/point.py`` is timed as "before"."""

DRAWS, TUNE, CHAINS, SEED = 1000, 1000, 2, 1


def make_data(problem):
    """``(X, mixture class)`` of ``problem``: PCA(8) digits with NIW, or binarised digits with Beta-Bernoulli."""
    from sklearn.datasets import load_digits
    from sklearn.decomposition import PCA

    import pymc_partitions as pmp

    pixels = load_digits().data
    if problem == "digits":
        return PCA(n_components=8, random_state=0).fit_transform(pixels), pmp.NormalInverseWishartMixture
    return (pixels >= 8).astype(np.int64), pmp.BetaBernoulliMixture


def sample(problem, draws, tune):
    """``(z draws (chains, draws, n), wall s, CPU s)`` of ``pm.sample`` with ``SplitMergeStep`` on ``problem``."""
    import pymc as pm

    import pymc_partitions as pmp

    x, mixture = make_data(problem)
    with pm.Model():
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(x))
        mixture("x", partition=z, observed=x, **mixture.default_hyperparameters(x))
        wall, cpu = time.perf_counter(), time.process_time()
        idata = pm.sample(
            step=pmp.SplitMergeStep(z), draws=draws, tune=tune, chains=CHAINS, random_seed=SEED,
            progressbar=False, compute_convergence_checks=False,
        )
        return idata.posterior["z"].values, time.perf_counter() - wall, time.process_time() - cpu


def cached_draws(problem, resample):
    """Draws and sampling times of ``problem``: from ``build/``, or sampled (after a compiling run) and saved."""
    path = CACHE / f"point_partition_{problem}.npz"
    if path.exists() and not resample:
        saved = np.load(path)
        return saved["z"], float(saved["wall"]), float(saved["cpu"])
    sample(problem, draws=5, tune=5)
    z, wall, cpu = sample(problem, DRAWS, TUNE)
    CACHE.mkdir(exist_ok=True)
    np.savez_compressed(path, z=z, wall=wall, cpu=cpu)
    return z, wall, cpu


def load_before():
    """``point.py`` of commit ``BEFORE`` as a module (its imports from the package did not change since)."""
    source = subprocess.run(
        ["git", "show", f"{BEFORE}:pymc_partitions/summary/point.py"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    path = pathlib.Path(tempfile.mkdtemp(prefix="point_before_")) / "point_before.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("point_before", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def timed(function, idata, loss, repeats):
    """``(labels, wall s, CPU s)`` of the fastest of ``repeats`` calls ``function(idata, loss=loss, random_seed=0)``.

    A call on a tiny problem compiles the function (or loads it from the cache) first.
    """
    import arviz as az

    function(az.from_dict(posterior={"z": np.array([[[0, 0, 1], [0, 1, 1]]])}), loss=loss, random_seed=0)
    best = None
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        labels = function(idata, loss=loss, random_seed=0)
        call = (labels, time.perf_counter() - wall, time.process_time() - cpu)
        best = call if best is None or call[1] < best[1] else best
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="+", default=["digits", "binary"], choices=["digits", "binary"])
    parser.add_argument("--losses", nargs="+", default=["VI", "Binder"], choices=["VI", "Binder"])
    parser.add_argument("--skip-before", action="store_true", help=f"do not time the search of {BEFORE}")
    parser.add_argument("--resample", action="store_true", help="sample again instead of reading build/")
    parser.add_argument("--repeats", type=int, default=3, help="calls of the new point_partition; the fastest counts")
    args = parser.parse_args()

    import arviz as az

    import pymc_partitions as pmp

    versions = [("after", pmp.point_partition)]
    if not args.skip_before:
        versions.append(("before", load_before().point_partition))
    rows = []
    for problem in args.problems:
        z, sampling, sampling_cpu = cached_draws(problem, args.resample)
        idata = az.from_dict(posterior={"z": z})
        for loss in args.losses:
            for version, function in versions:
                labels, wall, cpu = timed(function, idata, loss, args.repeats if version == "after" else 1)
                value = pmp.expected_loss(idata, labels, loss=loss)
                rows.append((problem, loss, version, sampling, sampling_cpu, wall, cpu, value, int(labels.max()) + 1))
                print(*rows[-1], sep="  ", flush=True)

    header = (
        f"{'problem':8} {'loss':6} {'version':7} {'pm.sample s':>11} {'CPU s':>7} {'point s':>8} {'CPU s':>7} "
        f"{'point/sample':>12} {'E[loss]':>13} {'clusters':>8}"
    )
    print(f"\n{header}\n{'-' * len(header)}")
    for problem, loss, version, sampling, sampling_cpu, wall, cpu, value, clusters in rows:
        print(
            f"{problem:8} {loss:6} {version:7} {sampling:11.1f} {sampling_cpu:7.1f} {wall:8.2f} {cpu:7.2f} "
            f"{wall / sampling:12.3f} {value:13.6f} {clusters:8d}"
        )
    print(f"\nn = 1797; {CHAINS} chains x {DRAWS} draws ({TUNE} tune), SplitMergeStep, random_seed={SEED}; "
          f"point_partition(random_seed=0); {os.cpu_count()} CPUs")
    print("command: python " + " ".join([os.path.relpath(__file__, ROOT), *sys.argv[1:]]))


if __name__ == "__main__":
    main()
