"""The Normal-inverse-Wishart model on transposed data: 2 items of d features (issue #43, trap 6).

``old_faithful().data.T`` is 2 items with 272 features.  With the learned
default (``NormalInverseWishartMixture.with_default_priors``) a new user's
``pm.sample()`` ran for over 10 minutes.  This script times, in one fresh
process, what ``pm.sample`` does first with such a model: compile the log
density and its gradient (``model.compile_logp()``, ``model.compile_dlogp()``),
then evaluate the gradient (median of ``--repeats`` calls; NUTS makes up to
1,024 of them per draw).  Data: ``old_faithful().data.T`` for ``d = 272``,
standard normal draws otherwise.  The first compilation in a process with an
empty PyTensor compile directory also compiles PyTensor's own C code: compare
warm runs.

Run:  python benchmarks/transposed_niw.py [--d 272] [--repeats 20]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np
import pymc as pm

import pymc_partitions as pmp


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--d", type=int, default=272)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    X = pmp.datasets.old_faithful().data.T if args.d == 272 else np.random.default_rng(0).normal(size=(2, args.d))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the transposed-data warning
        with pm.Model() as model:
            alpha = pm.Gamma("alpha", 1.0, 1.0)
            z = pmp.DirichletProcessPartition("z", alpha=alpha, n=len(X))
            pmp.NormalInverseWishartMixture.with_default_priors("x", partition=z, observed=X)
    point = model.initial_point()
    print(f"$ python benchmarks/{os.path.basename(__file__)} {' '.join(sys.argv[1:])}")
    print(f"load average {os.getloadavg()[0]:.1f}; data {X.shape[0]} items x {X.shape[1]} features")
    start = time.perf_counter()
    model.compile_logp()
    print(f"compile logp:  {time.perf_counter() - start:8.1f} s")
    start = time.perf_counter()
    dlogp = model.compile_dlogp()
    print(f"compile dlogp: {time.perf_counter() - start:8.1f} s")
    dlogp(point)
    times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        dlogp(point)
        times.append(time.perf_counter() - start)
    print(f"one gradient:  {1000 * np.median(times):8.2f} ms (median of {args.repeats})")


if __name__ == "__main__":
    main()
