"""Issue 51's overlapping clusterwise Poisson regression, at a size the suite affords: the default point partition
summarises the posterior (VI's merges everything into one cluster, and says so)."""

import warnings

import numpy as np
import pymc as pm
import pytest

import pymc_partitions as pmp


@pytest.mark.slow
def test_default_point_partition_keeps_the_overlapping_groups():
    rng = np.random.default_rng(0)
    n = 600
    x = rng.uniform(-1.0, 1.0, n)
    classes = rng.integers(0, 3, n)
    a_true, b_true = np.array([0.5, 2.0, 1.0]), np.array([1.0, -0.5, 0.0])
    y = rng.poisson(np.exp(a_true[classes] + b_true[classes] * x))
    rate = a_true + b_true * x[:, None]
    oracle = np.argmax(y[:, None] * rate - np.exp(rate), axis=1)  # each item classified with the true parameters
    with pm.Model():
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=n)
        a = pm.Normal("a", 0.0, 2.0, shape=10)
        b = pm.Normal("b", 0.0, 2.0, shape=10)
        pm.Poisson("y", pm.math.exp(a[z] + b[z] * x), observed=y)
        idata = pm.sample(draws=300, tune=300, chains=2, cores=1, random_seed=1, progressbar=False,
                          compute_convergence_checks=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # the default estimate is typical of the draws: no warning
        estimate = pmp.point_partition(idata, random_seed=0)
    best = pmp.adjusted_rand_index(oracle, classes)
    assert pmp.adjusted_rand_index(estimate, classes) >= 0.9 * best
    uncertainty = pmp.partition_uncertainty(idata, estimate)
    assert uncertainty.is_typical and uncertainty.n_large >= 2
    with pytest.warns(UserWarning, match="lies far from typical draws"):
        merged = pmp.point_partition(idata, loss="VI", random_seed=0)
    assert merged.max() == 0  # VI's minimum: one cluster (expected VI below that of the true groups)
    assert pmp.expected_loss(idata, merged) < pmp.expected_loss(idata, classes)
