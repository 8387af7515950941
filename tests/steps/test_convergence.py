"""pm.sample's convergence check on a partition: label-invariant quantities, not labels; K_max that binds warns."""

import logging
import warnings

import arviz as az
import numpy as np
import pymc as pm
import pymc.sampling.mcmc as pymc_mcmc
import pytest

import pymc_partitions as pmp
from pymc_partitions.steps import convergence

RNG = np.random.default_rng(3)
COUNTS = np.r_[RNG.poisson(1.0, 30), RNG.poisson(15.0, 30), RNG.poisson(50.0, 30)]


def poisson_model(k_max):
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(COUNTS))
        lam = pm.LogNormal("lam", 2.0, 2.0, shape=k_max)
        pm.Poisson("y", lam[z], observed=COUNTS)
    return model


def fabricated(k, log_joint, chains=2, draws=200, seed=0):
    """A posterior whose labels and rows switch at random (every raw R-hat large), with the given stats."""
    rng = np.random.default_rng(seed)
    n = len(COUNTS)
    return az.from_dict(
        posterior={
            "z": rng.integers(0, 3, size=(chains, draws, n)),
            "lam": np.sort(rng.gamma(2.0, 10.0, size=(chains, draws, 4)), axis=-1)[..., ::-1] * (1 + np.arange(chains))[:, None, None, None],
        },
        sample_stats={"partition_n_clusters": k, "partition_log_joint": log_joint},
    )


def test_pm_sample_runs_the_partition_check():
    poisson_model(4)
    pmp.GibbsStep  # the first public name registers the steps and installs the check
    assert pymc_mcmc.run_convergence_checks is convergence.run_convergence_checks


def test_labels_and_rows_are_left_out_and_the_stats_are_checked():
    model = poisson_model(4)
    rng = np.random.default_rng(1)
    mixed = fabricated(np.full((2, 200), 3), rng.normal(-300.0, 2.0, size=(2, 200)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 0/0 RuntimeWarning from the constant label z[0]
        assert convergence.run_convergence_checks(mixed, model) == []
    stuck = fabricated(np.r_[np.full((1, 200), 2), np.full((1, 200), 3)], np.r_[
        rng.normal(-300.0, 2.0, size=(1, 200)), rng.normal(-320.0, 2.0, size=(1, 200))])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        found = convergence.run_convergence_checks(stuck, model)
    messages = " ".join(w.message for w in found)
    assert "rhat statistic of the partition" in messages
    assert "the number of clusters" in messages and "the log joint" in messages


def test_models_without_a_partition_get_pymcs_own_check():
    with pm.Model() as model:
        pm.Normal("mu")
    rng = np.random.default_rng(2)
    idata = az.from_dict(posterior={"mu": np.r_[rng.normal(size=(1, 200)), rng.normal(3.0, 1.0, size=(1, 200))]})
    ours = [w.message for w in convergence.run_convergence_checks(idata, model)]
    assert ours == [w.message for w in convergence._PYMC_CHECK(idata, model)]
    assert any("rhat" in m for m in ours)


def test_k_max_that_binds_warns_with_the_share_and_the_fix():
    model = poisson_model(4)
    k = np.full((2, 200), 3)
    k[0, :10] = 4  # 2.5 % of the draws at the bound
    with pytest.warns(convergence.KMaxWarning, match=r"K_max = 4 cluster rows in 2\.5% of the draws.*'lam'.*shape=8"):
        convergence.run_convergence_checks(fabricated(k, np.random.default_rng(0).normal(size=(2, 200))), model)
    k[0, :10] = 3
    k[0, :2] = 4  # 0.5 %: a small share, no warning
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        convergence.run_convergence_checks(fabricated(k, np.random.default_rng(0).normal(size=(2, 200))), model)


def test_pm_sample_warns_when_k_max_binds():
    with poisson_model(2):  # three groups, two rows
        with pytest.warns(convergence.KMaxWarning, match="K_max = 2"):
            pm.sample(draws=100, tune=50, chains=2, random_seed=1, progressbar=False)


def test_a_default_pm_sample_on_well_mixed_data_prints_no_false_warning(caplog):
    x = np.r_[RNG.normal(-6.0, 1.0, 40), RNG.normal(0.0, 1.0, 40), RNG.normal(6.0, 1.0, 40)][:, None]
    with pm.Model():
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(x))
        pmp.NormalGammaMixture("x", partition=z, observed=x, **pmp.NormalGammaMixture.default_hyperparameters(x))
        with warnings.catch_warnings(record=True) as caught, caplog.at_level(logging.INFO, logger="pymc"):
            warnings.simplefilter("always")
            idata = pm.sample(draws=400, tune=200, chains=2, random_seed=5, progressbar=False)
    environment = ("PyTensor could not link to a BLAS",)  # a property of the installation, not of the run
    assert [str(w.message) for w in caught if not str(w.message).startswith(environment)] == []
    logged = caplog.text
    assert "rhat statistic" not in logged and "effective sample size" not in logged
    assert idata.posterior["z_n_large_clusters"].values.min() == 3
