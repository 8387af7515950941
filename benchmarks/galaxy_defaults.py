"""The galaxy velocities: fixed against learned default priors, and the learned default coarsened (issue 41).

82 galaxy velocities / 1000 km/s (MASS's ``galaxies``, ``pymc_partitions.datasets.galaxies``), ``NormalGammaMixture``,
``DirichletProcessPartition(alpha=1)``, ``pm.sample`` (the default steps: ``GibbsStep`` on ``z``, NUTS on
the learned hyperparameters), 2 chains x 1,000 draws after 1,000 tuning steps, ``random_seed=1``.
Configurations: ``fixed``, ``learned``, ``learned`` with keywords (``a0=1.5`` or ``kappa0=0.1`` fixes a
learned hyperparameter, ``scale_sigma=0.5`` gives ``scale`` a LogNormal(0, 0.5) prior, ``c=82`` sets the
coarsening) and ``calibrated`` (``calibrate_coarsening`` on the learned default, then that ``c``).
Prints K's posterior mean and 90 % interval and the learned hyperparameters' posterior means.

Run:  python benchmarks/galaxy_defaults.py fixed learned a0=1.5 kappa0=0.1 scale_sigma=0.5 c=20 c=82 calibrated
"""

from __future__ import annotations

import os
import pathlib
import sys
import time

import numpy as np
import pymc as pm

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import pymc_partitions as pmp  # noqa: E402


def velocities():
    return pmp.datasets.galaxies().data / 1000.0


def build(x, config, coarsening=None, **kw):
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(x))
        if config == "fixed":
            pmp.NormalGammaMixture("x", partition=z, observed=x, **pmp.NormalGammaMixture.default_hyperparameters(x))
        else:
            if "scale_sigma" in kw:
                kw["scale"] = pm.LogNormal("x_scale", 0.0, kw.pop("scale_sigma"))
            pmp.NormalGammaMixture.with_default_priors("x", partition=z, observed=x, coarsening=coarsening, **kw)
    return model


def run(x, label, model):
    start = time.perf_counter()
    with model:
        idata = pm.sample(
            draws=1000, tune=1000, chains=2, cores=1, random_seed=1, progressbar=False, compute_convergence_checks=False
        )
    k = idata["sample_stats"]["partition_n_clusters"].values.ravel()
    means = ", ".join(
        f"{name} {float(idata['posterior'][name].mean()):.3g}" for name in idata["posterior"].data_vars if name != "z"
    )
    print(f"| {label} | {k.mean():.2f} | {np.quantile(k, 0.05):.0f}-{np.quantile(k, 0.95):.0f} | {means} | "
          f"{time.perf_counter() - start:.0f} |", flush=True)


def main():
    print(f"$ python benchmarks/{os.path.basename(__file__)} {' '.join(sys.argv[1:])}")
    print(f"load average {os.getloadavg()}")
    x = velocities()
    print("| configuration | K mean | K 90% | posterior means | seconds |")
    print("|---|---|---|---|---|")
    for arg in sys.argv[1:] or ["fixed", "learned", "calibrated"]:
        if arg in ("fixed", "learned"):
            run(x, arg, build(x, arg))
        elif arg == "calibrated":
            result = pmp.calibrate_coarsening(lambda c: build(x, "learned", c), random_seed=1)
            print(result.table.round(3).to_string(index=False))
            run(x, f"learned, calibrated c = {result.value:.3g}", build(x, "learned", result.value))
        else:
            key, value = arg.split("=")
            if key == "c":
                run(x, f"learned, coarsening={value}", build(x, "learned", float(value)))
            else:
                run(x, f"learned, {arg}", build(x, "learned", **{key: float(value)}))


if __name__ == "__main__":
    main()
