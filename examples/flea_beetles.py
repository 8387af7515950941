"""Cluster the flea beetles (Lubischew 1962) with a Dirichlet process mixture and the learned default prior.

74 beetles of 3 species, 6 measurements each.  The model puts a DP prior with
``alpha ~ Gamma(1, 1)`` on the partition and a full-covariance Normal-inverse-
Wishart mixture on the measurements, with the learned default
(``with_default_priors``: the covariance scale, ``kappa0`` and ``nu0`` are
variables with log-normal priors centred on data-based values; the species
differ in how the measurements co-vary, which a diagonal model would split
into extra clusters).  ``pm.sample()`` assigns the package's default step to
the partition (it says which in its log) and NUTS to the continuous variables.

PyMC's own convergence checks are switched off (``compute_convergence_checks=False``)
because they read every label of ``z``, which is no diagnostic target: ``z[0]``
is always 0 (labels are stored in order of first appearance), so its R-hat is
0/0, and the other labels' R-hat measures label switching, not convergence.
The script runs the same checks on what is identifiable -- every continuous
variable and the number of clusters ``z_n_clusters`` (``az.summary(idata,
var_names=["~z"])``) -- and says if an R-hat exceeds 1.01.  It prints that
table, K's posterior mean and 90 % interval, the point partition (VI loss)
against the species and its adjusted Rand index, and checks the headline: the
point partition recovers the species (adjusted Rand index above 0.9; 1.000 with
the defaults below).

Run:  python examples/flea_beetles.py
"""

import arviz as az
import numpy as np
import pandas as pd
import pymc as pm

import pymc_partitions as pmp


def main(draws=1000, tune=1000, chains=4, random_seed=2026):
    """Fit the model, print the summaries and return ``(idata, ari)``.

    ``draws``, ``tune`` and ``chains`` go to ``pm.sample`` (the test suite runs
    a shorter chain, ``tests/test_examples.py``).  Raises ``AssertionError`` if
    the point partition's adjusted Rand index to the species is 0.9 or less.
    """
    beetles = pmp.datasets.flea_beetles()
    X = beetles.data
    with pm.Model():
        alpha = pm.Gamma("alpha", 1.0, 1.0)
        z = pmp.DirichletProcessPartition("z", alpha=alpha, n=len(X))
        pmp.NormalInverseWishartMixture.with_default_priors("x", partition=z, observed=X)
        idata = pm.sample(
            draws=draws, tune=tune, chains=chains, cores=1, random_seed=random_seed, compute_convergence_checks=False
        )
    table = az.summary(idata, var_names=["~z"], hdi_prob=0.9)
    point = pmp.point_partition(idata, loss="VI", random_seed=random_seed)
    k = idata["posterior"]["z_n_clusters"].values
    with pd.option_context("display.width", 120, "display.max_columns", 20):
        print(table)
        worst = table["r_hat"].idxmax()
        if table.loc[worst, "r_hat"] > 1.01:
            print(f"\nR-hat of {worst} is {table.loc[worst, 'r_hat']:.3f} > 1.01: run longer (draws=...)")
        print(f"\nnumber of clusters K: mean {k.mean():.2f}, 90% interval {np.quantile(k, 0.05):.0f}-{np.quantile(k, 0.95):.0f}")
        species = pd.Categorical.from_codes(beetles.target, beetles.target_names)
        print("\npoint partition (VI loss) vs species:")
        print(pd.crosstab(species, point, rownames=["species"], colnames=["cluster"]))
    ari = pmp.adjusted_rand_index(point, beetles.target)
    print(f"\nclusters found: {len(np.unique(point))} (3 species); adjusted Rand index vs species: {ari:.3f}")
    assert ari > 0.9, f"the point partition should recover the three species (adjusted Rand index {ari:.3f})"
    return idata, ari


if __name__ == "__main__":
    main()
