"""Do steps that each look converged agree?  Wine (coarsened, c = 849) under three partition steps, same start.

The model of ``benchmarks/mixing.py`` on ``wine``; each step runs 2 chains x 800 draws after 300 tuning steps
(``random_seed=1``).  Printed per step: the wall time, and per chain the mean ``K``, the mean log joint
(``partition_log_joint``), the posterior mean of ``alpha`` and of the learned hyperparameters; for
``TemperedGibbsStep`` its swap acceptance.

Run:  python benchmarks/wine_modes.py [tempered tempered3 gibbs split_merge]
"""

import pathlib
import sys
import time

import pymc as pm

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the package of this tree, not an installed copy
sys.path.insert(0, str(ROOT / "benchmarks"))
from mixing import COARSENING, STEPS  # noqa: E402
from real_data import build, load  # noqa: E402

COMPARED = ("gibbs", "tempered", "split_merge")


def main():
    x, _, family, extra = load("wine")
    for name in sys.argv[1:] or COMPARED:
        model = build(x, family, True, extra, COARSENING["wine"])
        with model:
            start = time.perf_counter()
            idata = pm.sample(
                step=[STEPS[name](model["z"])], draws=800, tune=300, chains=2, cores=1, random_seed=1,
                progressbar=False, compute_convergence_checks=False,
            )
        stats, post = idata["sample_stats"], idata["posterior"]
        learned = {v: post[v].values.mean(axis=1).round(2).tolist() for v in post.data_vars if v.startswith("x_")
                   and post[v].ndim == 2}
        print(f"{name}: {time.perf_counter() - start:.0f} s; per chain: K {stats['partition_n_clusters'].values.mean(1).round(2).tolist()}, "
              f"log joint {stats['partition_log_joint'].values.mean(1).round(1).tolist()}, "
              f"alpha {post['alpha'].values.mean(1).round(2).tolist()}, {learned}", flush=True)
        if name.startswith("tempered"):
            levels = sorted(int(v.rsplit("_", 1)[1]) for v in stats.data_vars if v.startswith("partition_ladder_"))
            ladder = [1.0] + [float(stats[f"partition_ladder_{level}"].values[0, -1]) for level in levels]
            print(f"   swap acceptance {float(stats['partition_swap_accept'].mean()):.3f}; chain 1's adapted ladder "
                  f"{[round(v, 3) for v in ladder]}")


if __name__ == "__main__":
    main()
