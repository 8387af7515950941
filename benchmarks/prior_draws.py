"""Exact prior draws of the partition priors (``pymc_partitions.prior_draws``) at 10^5 and 10^6 items.

Times one draw of each prior -- DP(alpha = 1), Pitman-Yor(1, 0.25), the mixture
of finite mixtures (gamma = 1, k - 1 ~ Poisson(3) truncated at k = 40) and the
NGG given u (alpha = 1.3, sigma = 0.4, tau = 0.9, u at its typical scale n / E[T])
-- as the median of ``--repeats`` calls with a warm numba cache; the first call
(compile in a fresh ``NUMBA_CACHE_DIR``, or cache load with ``--warm-cache``) is
reported separately.  These are what ``pm.draw`` and
``pm.sample_prior_predictive`` call.

Run:  python benchmarks/prior_draws.py [--repeats 5] [--warm-cache]
"""

import argparse
import os
import sys
import tempfile
import time

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--repeats", type=int, default=5)
parser.add_argument("--warm-cache", action="store_true")
args = parser.parse_args()
if not args.warm_cache:
    os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="pmp-bench-numba-")

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

from pymc_partitions import prior_draws  # noqa: E402

K_PRIOR = stats.poisson.pmf(np.arange(40), 3.0)
LOG_K_PRIOR = np.log(K_PRIOR / K_PRIOR.sum())
ALPHA, SIGMA, TAU = 1.3, 0.4, 0.9


def typical_u(n):
    """``n / E[T]`` with ``E[T] = alpha sigma tau^(sigma - 1)``, the scale of u a priori."""
    return n / (ALPHA * SIGMA * TAU ** (SIGMA - 1.0))


PRIORS = {
    "DP(1)": lambda n, rng: prior_draws.dirichlet_process_partition(n, 1.0, rng),
    "PY(1, 0.25)": lambda n, rng: prior_draws.pitman_yor_partition(n, 1.0, 0.25, rng),
    "MFM(1, Poisson(3))": lambda n, rng: prior_draws.mixture_of_finite_mixtures_partition(n, 1.0, LOG_K_PRIOR, rng),
    "NGG given u": lambda n, rng: prior_draws.ngg_partition(n, ALPHA, SIGMA, TAU, typical_u(n), rng),
}


def main():
    print(f"$ python benchmarks/{os.path.basename(__file__)} {' '.join(sys.argv[1:])}")
    print()
    print("| prior | first call [s] | n = 10^5 [s] | K | n = 10^6 [s] | K |")
    print("|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    for name, draw in PRIORS.items():
        start = time.perf_counter()
        draw(100, rng)
        first = time.perf_counter() - start
        cells = []
        for n in (100_000, 1_000_000):
            times = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                z = draw(n, rng)
                times.append(time.perf_counter() - start)
            cells.append(f"{np.median(times):.3f} | {int(z.max()) + 1}")
        print(f"| {name} | {first:.2f} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
