"""``HybridDPStep`` inside real ``pm.sample`` runs (local backend): stats, warm start, reproducibility.

Its bad options and unsupported models are rows of ``tests/test_bad_input.py``.
"""

import numpy as np
import pymc as pm

import pymc_partitions as pmp
from pymc_partitions.kernels.info import MOVE_HYBRID

RNG = np.random.default_rng(5)
X = np.r_[RNG.normal(-4.0, 1.0, (15, 2)), RNG.normal(4.0, 1.0, (15, 2))]


def model_with(prior="dp"):
    with pm.Model() as model:
        if prior == "dp":
            z = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(X))
        else:
            z = pmp.PitmanYorPartition("z", alpha=0.5, sigma=0.3, n=len(X))
        pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=0.1, a0=2.0, b0=2.0, observed=X)
    return model


def sample(model, step_options, **kwargs):
    options = dict(draws=40, tune=12, chains=2, cores=1, progressbar=False, random_seed=9, compute_convergence_checks=False)
    options.update(kwargs)
    with model:
        return pm.sample(step=[pmp.HybridDPStep(model["z"], **step_options)], **options)


def test_stats_claim_the_model_log_posterior():
    """``partition_log_joint`` is the model's logp of the recorded ``z``; the claimed change is its difference."""
    model = model_with("py")
    idata = sample(model, dict(n_shards=4), draws=30)
    logp = model.compile_logp()
    z = idata["posterior"]["z"].values
    stats = idata["sample_stats"]
    expected = np.array([[logp({"z": zi}) for zi in chain] for chain in z])
    np.testing.assert_allclose(stats["partition_log_joint"].values, expected, atol=1e-8)
    np.testing.assert_allclose(np.diff(expected, axis=1), stats["partition_log_target_ratio"].values[:, 1:], atol=1e-8)
    assert set(np.unique(stats["partition_move"].values)) == {MOVE_HYBRID}
    np.testing.assert_array_equal(stats["partition_n_clusters"].values, z.max(axis=-1) + 1)


def test_warm_start_lets_all_shards_open_clusters_while_tuning_only():
    idata = sample(model_with(), dict(n_shards=4, warm_start=8), discard_tuned_samples=False, tune=12)
    tuning = idata["warmup_sample_stats"]["partition_hot_shards"].values
    np.testing.assert_array_equal(tuning, np.tile([4, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1], (2, 1)))
    assert np.all(idata["sample_stats"]["partition_hot_shards"].values == 1)


def test_warm_start_stops_with_tuning_even_if_longer():
    idata = sample(model_with(), dict(n_shards=3, warm_start=100), discard_tuned_samples=False, tune=4, draws=5)
    assert np.all(idata["warmup_sample_stats"]["partition_hot_shards"].values > 1)
    assert np.all(idata["sample_stats"]["partition_hot_shards"].values == 1)


def test_random_seed_gives_identical_traces_for_cores_1_and_2():
    model = model_with()
    one = sample(model, dict(n_shards=3, warm_start=5), cores=1)
    two = sample(model, dict(n_shards=3, warm_start=5), cores=2)
    np.testing.assert_array_equal(one["posterior"]["z"].values, two["posterior"]["z"].values)
    np.testing.assert_array_equal(one["sample_stats"]["partition_log_joint"].values, two["sample_stats"]["partition_log_joint"].values)
