"""Find communities in the NIPS co-authorship network with the Infinite Relational Model and ARM.

234 authors, 598 co-authorships (the "NIPS" network of the ARM paper).  The
model is the paper's (Sec. 3.2): a Dirichlet process partition of the
authors, ``alpha = 1``, and a Beta(1, 1) edge probability for every pair of
blocks.  ``ARMStep`` (adaptive reconfiguration moves, each followed by a Gibbs
sweep) runs over a population of 8 chains.  Prints the summary (number of
blocks, log joint with R-hat and ESS, ARM's acceptance rates) and saves the
adjacency matrix reordered by the VI point partition, with the block
boundaries drawn, to ``irm_nips.png``.

Run:  python examples/irm_nips.py
"""

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd
import pymc as pm

import pymc_partitions as pmp


def main(draws=1000, tune=500, chains=8, random_seed=2026, output="irm_nips.png"):
    A = pmp.datasets.nips234_coauthor()
    n = A.shape[0]
    with pm.Model():
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=n)
        pmp.InfiniteRelationalModel("A", partition=z, a=1.0, b=1.0, observed=A)
        # Each chain starts from its own draw of the CRP prior (3-6 clusters), as in
        # the paper.  The default initial point puts all chains in one cluster, from
        # which the Gibbs sweeps take thousands of iterations to break the network up.
        starts = pm.draw(z, draws=chains, random_seed=random_seed)
        idata = pm.sample(
            step=[pmp.ARMStep(z)], draws=draws, tune=tune, chains=chains, cores=1,
            initvals=[{"z": start} for start in starts], random_seed=random_seed,
        )
    with pd.option_context("display.width", 120, "display.max_columns", 20):
        print(pmp.summarize(idata))
    point = pmp.point_partition(idata, loss="VI", random_seed=random_seed)
    sizes = np.bincount(point)
    print(f"\npoint partition (VI loss): {len(sizes)} blocks, sizes {sorted(sizes.tolist(), reverse=True)}")

    # blocks by decreasing size, authors by degree within a block, block boundaries in red
    ax = pmp.plots.plot_adjacency(A, point)
    ax.set_title(f"NIPS 234 co-authors by IRM point partition ({len(sizes)} blocks)")
    fig = ax.figure
    fig.tight_layout()
    fig.savefig(output, dpi=150)
    print(f"saved {output}")


if __name__ == "__main__":
    main()
