"""``summary.cluster_parameters``: rows matched to the clusters of a point partition by overlap."""

import arviz as az
import numpy as np
import pymc as pm
import pytest

import pymc_partitions as pmp


def test_rows_are_matched_by_overlap():
    """In each draw the row holding most of a cluster's items gives its parameters, whichever label it has."""
    rng = np.random.default_rng(0)
    chains, draws, n, k_max = 2, 30, 9, 4
    z_hat = np.repeat([0, 1, 2], 3)
    z = np.empty((chains, draws, n), dtype=np.int32)
    beta = rng.normal(size=(chains, draws, k_max, 2))
    expected = np.empty((chains, draws, 3, 2))
    for c in range(chains):
        for d in range(draws):
            rows = rng.permutation(3)  # the clusters' rows in this draw
            labels = rows[z_hat].copy()
            labels[rng.integers(n)] = rng.integers(3)  # one item elsewhere: overlap still decides
            z[c, d] = labels
            for cluster in range(3):
                counts = np.bincount(labels[z_hat == cluster], minlength=k_max)
                expected[c, d, cluster] = beta[c, d, counts.argmax()]
    idata = az.from_dict(posterior={"z": z, "beta": beta, "sigma": rng.normal(size=(chains, draws))})
    result = pmp.cluster_parameters(idata, z_hat, var_names=["beta"])
    assert result["beta"].dims == ("chain", "draw", "cluster", "beta_dim_1")
    np.testing.assert_array_equal(result["beta"].values, expected)
    assert result["cluster_size"].values.tolist() == [3, 3, 3]
    assert az.summary(result).shape[0] == 6  # ArviZ summarises it like any posterior
    with pytest.raises(ValueError, match="one label per item"):
        pmp.cluster_parameters(idata, z_hat[:-1], var_names=["beta"])
    with pytest.raises(ValueError, match="not in the posterior"):
        pmp.cluster_parameters(idata, z_hat, var_names=["gamma"])
    with pytest.raises(ValueError, match="cluster parameter rows"):
        pmp.cluster_parameters(idata, z_hat, var_names=["sigma"])


def test_a_model_that_integrates_its_parameters_out_needs_var_names():
    X = np.r_[np.zeros((5, 1)), np.ones((5, 1))]
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=10)
        pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=1.0, a0=1.0, b0=1.0, observed=X)
    idata = az.from_dict(posterior={"z": np.zeros((1, 2, 10), dtype=np.int32)})
    with pytest.raises(ValueError, match="pass var_names"):
        pmp.cluster_parameters(idata, np.zeros(10, int), model=model)
    with pytest.raises(ValueError, match="pass model=model"):
        pmp.cluster_parameters(idata, np.zeros(10, int))


def test_a_normal_mixtures_rows_are_found_from_the_model():
    X = np.r_[np.zeros((5, 2)), np.ones((5, 2))]
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=10)
        pmp.NormalMixture.with_default_priors("x", partition=z, observed=X, k_max=4)
    rng = np.random.default_rng(1)
    draws = {name: rng.normal(size=(1, 3, 4, 2)) for name in ("x_mu", "x_tau")}
    z_draws = np.tile(np.repeat([0, 1], 5), (1, 3, 1)).astype(np.int32)
    idata = az.from_dict(posterior={"z": z_draws, **draws})
    result = pmp.cluster_parameters(idata, np.repeat([0, 1], 5), model=model)
    assert set(result.data_vars) == {"x_mu", "x_tau"}
    np.testing.assert_array_equal(result["x_mu"].values, draws["x_mu"][:, :, :2])  # occupied rows only
