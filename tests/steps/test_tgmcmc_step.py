"""``TreeGuidedStep`` inside real ``pm.sample`` runs: stats, recovery, the guide's life cycle, reproducibility (bad input: ``tests/test_bad_input.py``)."""

import numpy as np
import pymc as pm
import pytest
from test_steps import sample, two_cluster_model

import pymc_partitions as pmp
from pymc_partitions.kernels.info import SAMPLE_STATS


def test_stats_and_recovery_with_alpha_by_nuts():
    model = two_cluster_model()
    idata = sample(model, step=[pmp.TreeGuidedStep(model["z"], model=model)])
    stats = idata["sample_stats"]
    for name in SAMPLE_STATS:
        assert stats[name].shape == (2, 60)
    assert set(np.unique(stats["partition_move"].values)) <= {1, 2, 3}
    z = idata["posterior"]["z"].values
    assert np.mean(z[:, :, 0][..., None] != z[:, :, 15:]) > 0.95
    np.testing.assert_array_equal(stats["partition_n_clusters"].values, z.max(axis=-1) + 1)
    assert idata["posterior"]["alpha"].std() > 0


def test_guide_is_rebuilt_at_tuning_steps_1_2_4_and_fixed_after():
    model = two_cluster_model(alpha=1.0)
    step = pmp.TreeGuidedStep(model["z"], model=model)
    point = model.initial_point()
    guides = []
    for _ in range(5):
        point, _ = step.step(point)
        guides.append(step.chain.sampler.guide.k_ref)  # an array of the guide: the same object while the guide is kept
    assert [guides[t] is guides[t - 1] for t in range(1, 5)] == [False, True, False, True]
    step.stop_tuning()
    for _ in range(9):
        point, _ = step.step(point)
        assert step.chain.sampler.guide.k_ref is guides[-1]


def test_guide_is_built_once_without_tuning():
    model = two_cluster_model(alpha=1.0)
    step = pmp.TreeGuidedStep(model["z"], model=model)
    step.stop_tuning()
    point, _ = step.step(model.initial_point())
    guide = step.chain.sampler.guide.k_ref
    for _ in range(3):
        point, _ = step.step(point)
    assert step.chain.sampler.guide.k_ref is guide


def test_random_seed_gives_identical_traces_for_cores_1_and_2():
    model = two_cluster_model()
    one = sample(model, step=[pmp.TreeGuidedStep(model["z"], model=model, n_global=5)], cores=1)
    two = sample(model, step=[pmp.TreeGuidedStep(model["z"], model=model, n_global=5)], cores=2)
    np.testing.assert_array_equal(one["posterior"]["z"].values, two["posterior"]["z"].values)
    np.testing.assert_array_equal(one["posterior"]["alpha"].values, two["posterior"]["alpha"].values)

