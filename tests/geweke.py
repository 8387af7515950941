"""Geweke (2004) "getting it right" pieces shared by the samplers' Geweke tests.

A Normal-Gamma model with one feature on ``GEWEKE_N`` items: the forward
simulation draws a partition from the prior and then data (:func:`draw_data`);
the successive-conditional chain alternates the sampler under test with a
fresh draw of the data given the partition.  Both are summarised by
:func:`statistics` and compared with batch-means standard errors
(:func:`batch_mean_and_error`).
"""

import numpy as np

GEWEKE_N = 6
NG_HYPER = dict(mu0=0.0, kappa0=1.0, a0=3.0, b0=3.0)


def draw_data(z, rng):
    """x | Π: each cluster's (μ, λ) from the Normal-Gamma prior, then its items, one feature."""
    k = int(z.max()) + 1
    precision = rng.gamma(NG_HYPER["a0"], 1.0 / NG_HYPER["b0"], k)
    mean = rng.normal(NG_HYPER["mu0"], 1.0 / np.sqrt(NG_HYPER["kappa0"] * precision))
    return rng.normal(mean[z], 1.0 / np.sqrt(precision[z]))[:, None]


def statistics(z, x):
    """Clusters, items 0 and 1 together, Σ x², and the within-cluster spread Σ_{i<j, z_i = z_j} (x_i − x_j)²."""
    same = z[:, None] == z[None, :]
    spread = np.triu(same * (x - x.T) ** 2, 1).sum()
    return np.array([z.max() + 1, z[0] == z[1], (x**2).sum(), spread])


def batch_mean_and_error(values, n_batches=100):
    batches = values[: len(values) // n_batches * n_batches].reshape(n_batches, -1, values.shape[1]).mean(axis=1)
    return values.mean(axis=0), batches.std(axis=0, ddof=1) / np.sqrt(n_batches)
