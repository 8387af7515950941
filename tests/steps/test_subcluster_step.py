"""``SubClusterSplitMergeStep`` inside real ``pm.sample`` runs (local backend): stats, ``keep_items``,
reproducibility, and the choice between its compiled transition and the driver run from Python.

Its bad options and unsupported models are rows of ``tests/test_bad_input.py``; its exactness is
``tests/test_subcluster_exactness.py``; the Dask backend is ``tests/distributed/test_dask_subcluster.py``.
"""

import numpy as np
import pymc as pm
import pytest

import pymc_partitions as pmp
from pymc_partitions.kernels import subcluster, twofold
from pymc_partitions.kernels.info import MOVE_SUBCLUSTER

RNG = np.random.default_rng(8)
X = np.r_[RNG.normal(-4.0, 1.0, (15, 2)), RNG.normal(4.0, 1.0, (15, 2))]


def model_with(prior="py"):
    with pm.Model() as model:
        if prior == "dp":
            z = pmp.DirichletProcessPartition("z", alpha=pm.Gamma("alpha", 2.0, 2.0), n=len(X))
        else:
            z = pmp.PitmanYorPartition("z", alpha=0.5, sigma=0.3, n=len(X))
        pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=0.1, a0=2.0, b0=2.0, observed=X)
    return model


def sample(model, step_options=None, make=None, **kwargs):
    options = dict(draws=30, tune=10, chains=2, cores=1, progressbar=False, random_seed=9, compute_convergence_checks=False)
    options.update(kwargs)
    with model:
        step = (make or (lambda z: pmp.SubClusterSplitMergeStep(z, **(step_options or {}))))(model["z"])
        return pm.sample(step=[step], **options), step


def test_stats_are_consistent_with_the_recorded_partition():
    """Move 6 at every draw; ``partition_n_clusters`` is the number of distinct labels of ``z`` and
    ``partition_log_joint`` the model's logp at it; the claimed change is its difference; ``partition_accept`` the
    fraction of proposals accepted; ``keep_items`` records those items' labels; the two groups stay apart."""
    model = model_with("py")
    idata, _ = sample(model, dict(n_proposals=4, n_shards=3, keep_items=[0, 29]))
    z = idata["posterior"]["z"].values
    stats = idata["sample_stats"]
    assert set(np.unique(stats["partition_move"].values)) == {MOVE_SUBCLUSTER}
    n_distinct = np.array([[len(np.unique(zi)) for zi in chain] for chain in z])
    np.testing.assert_array_equal(stats["partition_n_clusters"].values, n_distinct)
    logp = model.compile_logp()
    expected = np.array([[logp({"z": zi}) for zi in chain] for chain in z])
    np.testing.assert_allclose(stats["partition_log_joint"].values, expected, atol=1e-8)
    np.testing.assert_allclose(np.diff(expected, axis=1), stats["partition_log_target_ratio"].values[:, 1:], atol=1e-8)
    accept = stats["partition_accept"].values
    assert np.all((accept >= 0.0) & (accept <= 1.0)) and np.all(np.isin(accept * 4, np.arange(5)))
    np.testing.assert_array_equal(stats["partition_accepted"].values, accept > 0)
    np.testing.assert_array_equal(stats["partition_label_0"].values, z[..., 0])
    np.testing.assert_array_equal(stats["partition_label_29"].values, z[..., 29])
    assert not np.any(z[..., 0] == z[..., 29])


def test_random_seed_gives_identical_traces_for_cores_1_and_2():
    """With ``alpha`` moved by NUTS: each chain's sampler state is its own (``_state_class``)."""
    model = model_with("dp")
    one, _ = sample(model, dict(n_proposals=3, n_shards=2), cores=1)
    two, _ = sample(model, dict(n_proposals=3, n_shards=2), cores=2)
    for name in ("z", "alpha"):
        np.testing.assert_array_equal(one["posterior"][name].values, two["posterior"][name].values)
    np.testing.assert_array_equal(one["sample_stats"]["partition_log_joint"].values, two["sample_stats"]["partition_log_joint"].values)


def test_the_transition_choice_gives_the_same_chain(monkeypatch):
    """Below ``twofold.PARALLEL_MIN_ITEMS`` items the step's kernel runs its compiled driver, from there (or with
    an executor) the driver from Python (its passes on numba threads, ``tests/kernels/test_subcluster.py``); the
    same chain either way: here the step with its kernel's driver always interpreted."""
    model = model_with("dp")
    compiled, step = sample(model, dict(n_proposals=3, n_shards=3))
    assert step.kernel is subcluster.KERNEL and not twofold.interpreted(step.chain.state, step.chain.sampler)
    calls = []

    def interpreted(*args):
        calls.append(1)
        return subcluster.transition(*args)  # the driver from Python

    with model:
        driver_step = pmp.SubClusterSplitMergeStep(model["z"], n_proposals=3, n_shards=3)
    monkeypatch.setattr(driver_step, "kernel", subcluster.KERNEL._replace(transition=interpreted))
    driven, _ = sample(model, make=lambda z: driver_step)
    assert len(calls) == 2 * (30 + 10)  # every draw of both chains, tuning included
    for name in ("z", "alpha"):
        np.testing.assert_array_equal(compiled["posterior"][name].values, driven["posterior"][name].values)


@pytest.mark.parametrize("sync_every", [1, 2])
def test_hybrid_step_with_proposals_is_the_subcluster_step(sync_every):
    """``HybridDPStep(n_proposals=k, sync_every=m)`` runs ``SubClusterSplitMergeStep(n_proposals=k,
    n_global_sweeps=m)``'s iterations (default launch and restricted sweeps): the same chain, ``partition_move`` 6,
    one hot shard without a warm start."""
    model = model_with("dp")
    expected, _ = sample(model, dict(n_proposals=2, n_shards=3, n_global_sweeps=sync_every))
    idata, step = sample(model, make=lambda z: pmp.HybridDPStep(z, n_proposals=2, n_shards=3, sync_every=sync_every))
    assert step.options == subcluster.Options(2, 2, 1, 3, sync_every)
    np.testing.assert_array_equal(expected["posterior"]["z"].values, idata["posterior"]["z"].values)
    assert set(np.unique(idata["sample_stats"]["partition_move"].values)) == {MOVE_SUBCLUSTER}
    assert np.all(idata["sample_stats"]["partition_hot_shards"].values == 1)


def test_hybrid_step_with_proposals_warm_starts_while_tuning_only():
    idata, _ = sample(
        model_with("py"), make=lambda z: pmp.HybridDPStep(z, n_proposals=2, n_shards=4, warm_start=8),
        discard_tuned_samples=False, tune=12,
    )
    tuning = idata["warmup_sample_stats"]["partition_hot_shards"].values
    np.testing.assert_array_equal(tuning, np.tile([4, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1], (2, 1)))
    assert np.all(idata["sample_stats"]["partition_hot_shards"].values == 1)
