"""A component model written in PyMC against the hand-written ``NormalMixture`` kernels, and its log likelihoods
against the numpy floor.

The same model both ways: ``K_max`` rows of ``mu ~ N(0, 10)`` and ``tau ~ Gamma(2, 2)`` (each ``(K_max, d)``) and
``x_ij ~ N(mu[z_i, j], 1/tau[z_i, j])`` -- once as ``pmp.NormalMixture`` (numba Algorithm 8 with the conjugate
parameter updates, ``kernels.auxiliary_gibbs``), once in plain PyMC,
``pm.Normal("x", mu[z], 1 / pm.math.sqrt(tau[z]), observed=X)``, which ``GibbsStep`` samples through the generic
path (``distributions.components``: every item's log likelihood under every row from one vectorised PyTensor
evaluation, then the numba Algorithm 8 pass, the relabelling and prior draws of the empty rows; NUTS moves the
rows, not timed here).  Data: ``--clusters`` planted Normal clusters, ``z`` started at the planted partition and the
rows at their cluster means and precisions, so both do the same work per sweep.

Columns, per ``n`` (medians over ``--repeats`` interleaved rounds; ratios are medians of per-round ratios):

* ``NormalMixture step``: ``GibbsStep.step`` on ``NormalMixture`` (one sweep and the parameter updates);
* ``generic step``: ``GibbsStep.step`` on the PyMC model (everything the step does);
* ``log lik.``: the generic step's log-likelihood matrix (PyTensor, C backend, PyMC's default) alone;
* ``numba b.``: the same graph compiled with PyTensor's numba backend (``mode="NUMBA"``);
* ``floor``: the same matrix by numpy, as BLAS products (``X² τᵀ``, ``X (τ μ)ᵀ``) plus the per-row constants;
* ``numba pass``: the generic step's Algorithm 8 pass alone (``gibbs.transition`` on the kernel model);
* first step of each (compilation: numba on a fresh cache unless ``--warm-cache``, PyTensor's C modules as
  cached by the machine), reported separately.

Run:  python benchmarks/components.py [--n 1000 10000 100000] [--d 2] [--k-max 20] [--clusters 5] [--repeats 7]
          [--warm-cache]
"""

import argparse
import os
import sys
import tempfile
import time

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--n", nargs="+", type=int, default=[1000, 10_000, 100_000])
parser.add_argument("--d", type=int, default=2)
parser.add_argument("--k-max", type=int, default=20)
parser.add_argument("--clusters", type=int, default=5)
parser.add_argument("--repeats", type=int, default=7)
parser.add_argument("--warm-cache", action="store_true", help="use the existing numba cache instead of a fresh one")
args = parser.parse_args()
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
if not args.warm_cache:
    os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="pmp-bench-numba-")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
import pymc as pm  # noqa: E402

import pymc_partitions as pmp  # noqa: E402
from pymc_partitions.kernels import gibbs  # noqa: E402

LOG_2PI = np.log(2.0 * np.pi)


def data(n, rng):
    z = rng.integers(args.clusters, size=n)
    means = rng.normal(0.0, 4.0, size=(args.clusters, args.d))
    scales = rng.uniform(0.5, 1.5, size=(args.clusters, args.d))
    x = rng.normal(means[z], scales[z])
    return x, pmp.relabel(z), z


def models(x):
    n, d = x.shape
    with pm.Model() as fast:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=n)
        mu = pm.Normal("mu", 0.0, 10.0, shape=(args.k_max, d))
        tau = pm.Gamma("tau", 2.0, 2.0, shape=(args.k_max, d))
        pmp.NormalMixture("x", partition=z, mu=mu, tau=tau, observed=x)
    with pm.Model() as generic:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=n)
        mu = pm.Normal("mu", 0.0, 10.0, shape=(args.k_max, d))
        tau = pm.Gamma("tau", 2.0, 2.0, shape=(args.k_max, d))
        pm.Normal("x", mu[z], 1.0 / pm.math.sqrt(tau[z]), observed=x)
    return fast, generic


def start(model, x, z, planted):
    """The initial point with ``z`` at the planted partition and the occupied rows at its clusters' moments."""
    point = model.initial_point()
    point["z"] = z.astype(np.int32)
    mu = np.zeros((args.k_max, x.shape[1]))
    tau = np.ones((args.k_max, x.shape[1]))
    for k in range(z.max() + 1):
        mu[k] = x[z == k].mean(axis=0)
        tau[k] = 1.0 / x[z == k].var(axis=0)
    point["mu"], point["tau_log__"] = mu, np.log(tau)
    return point


def floor(x, point):
    """``L`` by numpy as BLAS-shaped products: ``Σ_j [½ log(τ/2π) − ½ τ (x − μ)²]`` for every item and row."""
    mu, tau = point["mu"], np.exp(point["tau_log__"])
    constant = 0.5 * (np.log(tau) - LOG_2PI).sum(axis=1) - 0.5 * (tau * mu**2).sum(axis=1)
    return (x**2) @ (-0.5 * tau).T + x @ (tau * mu).T + constant


def timed(function):
    start_time = time.perf_counter()
    result = function()
    return time.perf_counter() - start_time, result


def main():
    rng = np.random.default_rng(0)
    print(f"load average before: {os.getloadavg()}")
    print(f"d = {args.d}, K_max = {args.k_max}, {args.clusters} planted clusters, {args.repeats} rounds")
    header = (
        f"{'n':>8} | {'NormalMixture step':>18} | {'generic step':>12} | {'ratio':>6} | {'log lik.':>9} | "
        f"{'numba b.':>9} | {'floor':>9} | {'lik./floor':>10} | {'numba pass':>10} | {'first step: NM / generic (s)':>28}"
    )
    print(header)
    print("-" * len(header))
    for n in args.n:
        x, z, planted = data(n, rng)
        fast, generic = models(x)
        with fast:
            fast_step = pmp.GibbsStep(fast["z"], rng=np.random.default_rng(1))
        built, _ = timed(lambda: None)
        with generic:
            built, generic_step = timed(lambda: pmp.GibbsStep(generic["z"], rng=np.random.default_rng(1)))
        fast_point, generic_point = start(fast, x, z, planted), start(generic, x, z, planted)
        first_fast, _ = timed(lambda: fast_step.step(fast_point))
        first_generic, _ = timed(lambda: generic_step.step(generic_point))
        component = generic_step._parameters.component
        kernel_model, state = generic_step._state_at(generic_point)
        np.testing.assert_allclose(component.log_likelihoods(generic_point), floor(x, generic_point), rtol=1e-9, atol=1e-9)
        numba_backend = generic.compile_fn(
            component.row_log_likelihood_graph(), inputs=generic.value_vars, on_unused_input="ignore", point_fn=True,
            mode="NUMBA",
        )
        np.testing.assert_allclose(numba_backend(generic_point).T, floor(x, generic_point), rtol=1e-9, atol=1e-9)
        rounds = []
        for _ in range(args.repeats):
            t_fast, _ = timed(lambda: fast_step.step(fast_point))
            t_generic, _ = timed(lambda: generic_step.step(generic_point))
            t_lik, _ = timed(lambda: component.log_likelihoods(generic_point))
            t_floor, _ = timed(lambda: floor(x, generic_point))
            t_numba, _ = timed(lambda: numba_backend(generic_point))
            state = generic_step._state_at(generic_point)[1]
            t_pass, _ = timed(lambda: gibbs.transition(kernel_model, state, generic_step.options, np.random.default_rng(2)))
            rounds.append((t_fast, t_generic, t_lik, t_floor, t_pass, t_numba))
        r = np.array(rounds)
        med = np.median(r, axis=0)
        print(
            f"{n:>8} | {med[0] * 1e3:>15.2f} ms | {med[1] * 1e3:>9.2f} ms | {np.median(r[:, 1] / r[:, 0]):>6.2f} | "
            f"{med[2] * 1e3:>6.2f} ms | {med[5] * 1e3:>6.2f} ms | {med[3] * 1e3:>6.2f} ms | {np.median(r[:, 2] / r[:, 3]):>10.2f} | "
            f"{med[4] * 1e3:>7.2f} ms | {first_fast:>12.2f} / {first_generic:.2f} (+{built:.2f} build)"
        )
    print(f"load average after: {os.getloadavg()}")
    print("command: python benchmarks/components.py " + " ".join(sys.argv[1:]))


if __name__ == "__main__":
    main()
