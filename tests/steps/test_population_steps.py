"""Population steps (ARMStep, PastStatesSplitMergeStep) inside real ``pm.sample`` runs."""

import numpy as np
import pymc as pm
import pytest
from test_steps import X, sample, two_cluster_model

import pymc_partitions as pmp
from pymc_partitions.kernels.chain import population_sampler
from pymc_partitions.kernels.info import MOVE_NONE, SAMPLE_STATS

POPULATION_STEPS = {
    "arm": lambda z, **kw: pmp.ARMStep(z, **kw),
    "sarm": lambda z, **kw: pmp.ARMStep(z, variant="sarm", **kw),
    "srm": lambda z, **kw: pmp.ARMStep(z, variant="srm", **kw),
    "arm-past": lambda z, **kw: pmp.ARMStep(z, variant="arm-past", **kw),
    "bsm": lambda z, **kw: pmp.PastStatesSplitMergeStep(z, **kw),
}


@pytest.mark.parametrize("name", list(POPULATION_STEPS))
def test_random_seed_gives_identical_traces_for_cores_1_and_2(name):
    """Population sampling in one process and in one process per chain: same history, same draws."""
    model = two_cluster_model()
    runs = [
        sample(model, step=[POPULATION_STEPS[name](model["z"], model=model)], chains=3, cores=cores, draws=40)
        for cores in (1, 2)
    ]
    for group, var in (("posterior", "z"), ("posterior", "alpha"), ("sample_stats", "partition_accept")):
        np.testing.assert_array_equal(runs[0][group][var].values, runs[1][group][var].values)


def pitman_yor_model():
    """Two continuous hyperparameters (``alpha``, ``sigma``): the step's own slice sampler moves both."""
    with pm.Model() as model:
        alpha = pm.Gamma("alpha", 2.0, 1.0)
        sigma = pm.Uniform("sigma", 0.0, 0.9)
        z = pmp.PitmanYorPartition("z", alpha=alpha, sigma=sigma, n=len(X))
        pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=0.1, a0=2.0, b0=2.0, observed=X)
    return model


@pytest.mark.parametrize("name", ["arm", "bsm"])
def test_two_hyperparameters_identical_traces_for_cores_1_and_2(name, caplog):
    """Several continuous hyperparameters (once an AttributeError in link_population): sampled, logged,
    and the same draws in one process and in one process per chain."""
    model = pitman_yor_model()
    with caplog.at_level("INFO", logger="pymc"):
        runs = [
            sample(model, step=[POPULATION_STEPS[name](model["z"], model=model)], chains=3, cores=cores, draws=40)
            for cores in (1, 2)
        ]
    assert "sampling alpha, sigma with one pm.Slice" in caplog.text
    for group, var in (("posterior", "z"), ("posterior", "alpha"), ("posterior", "sigma"), ("sample_stats", "partition_accept")):
        np.testing.assert_array_equal(runs[0][group][var].values, runs[1][group][var].values)
    for var in ("alpha", "sigma"):
        assert np.unique(runs[0]["posterior"][var].values).size > 10, f"{var} should move"


def test_stats_and_cluster_change_without_gibbs():
    """With the Gibbs sweep off, the recorded change in clusters is exactly the move's.

    The chains start from different partitions: from one common start ARM alone has no two
    distinct past states and never moves (``partition_move`` = 3, "none"), which is checked too.
    """
    model = two_cluster_model(alpha=1.0)
    step = pmp.ARMStep(model["z"], model=model, gibbs_sweep=False)
    still = sample(model, step=[step], chains=3, draws=10, tune=0)
    assert np.all(still["sample_stats"]["partition_move"].values == MOVE_NONE)
    starts = [{"z": np.random.default_rng(c).integers(0, 4, len(X))} for c in range(4)]
    step = pmp.ARMStep(model["z"], model=model, gibbs_sweep=False)
    idata = sample(model, step=[step], chains=4, draws=80, tune=0, initvals=starts)
    stats = idata["sample_stats"]
    for name in SAMPLE_STATS:
        assert stats[name].shape == (4, 80)
    moves = stats["partition_move"].values
    assert set(np.unique(moves)) <= {1, 2, MOVE_NONE} and np.any(moves != MOVE_NONE)
    k = stats["partition_n_clusters"].values
    np.testing.assert_array_equal(np.diff(k, axis=1), stats["partition_cluster_change"].values[:, 1:])
    accepted = stats["partition_accepted"].values
    assert np.all(stats["partition_cluster_change"].values[~accepted] == 0)
    assert 0 < accepted.mean() < 1


def test_hyperparameters_get_slice_unless_disabled(caplog):
    model = two_cluster_model()
    with model, caplog.at_level("INFO", logger="pymc"):
        step = pmp.ARMStep(model["z"])
    assert model.rvs_to_values[model["alpha"]] in step.vars
    assert "pm.Slice" in caplog.text and "alpha" in caplog.text
    with model:
        own = pmp.ARMStep(model["z"], hyperparameters=None)
    assert len(own.vars) == 1
    idata = sample(model, step=[own, pm.Slice([model["alpha"]], model=model)], chains=3, draws=20)
    assert idata["posterior"]["alpha"].std() > 0


def test_population_step_needs_a_population():
    model = two_cluster_model(alpha=1.0)
    with model:
        step = pmp.ARMStep(model["z"])
    with pytest.raises(ValueError, match="chains >= 3"):
        step.step(model.initial_point())
    with pytest.raises(ValueError):
        sample(model, step=[pmp.ARMStep(model["z"], model=model)], chains=2)


def test_history_keeps_the_last_half():
    """The window after t steps is rows t//2 .. t-1 of what the chains were, through compaction and growth."""
    model = two_cluster_model(alpha=1.0)
    with model:
        step = pmp.ARMStep(model["z"])
    rng = np.random.default_rng(0)
    population = [model.initial_point() for _ in range(3)]
    step.link_population(population, 0)
    recorded = []
    for t in range(1, 300):
        for c in range(3):
            population[c] = {**population[c], "z": rng.integers(0, 3, len(X)).astype(np.int32)}
        recorded.append(np.stack([p["z"] for p in population]))
        step._record_population()
        window = population_sampler(step.options, *step._population()).history  # what the transition is given
        np.testing.assert_array_equal(window, np.stack(recorded[t // 2 : t]))
    assert step.history.shape[0] <= 256


def test_bad_population_step_input():
    model = two_cluster_model()
    with model:
        with pytest.raises(ValueError, match="variant"):
            pmp.ARMStep(model["z"], variant="fast")
        with pytest.raises(ValueError, match="n_moves"):
            pmp.ARMStep(model["z"], n_moves=0)
        with pytest.raises(TypeError, match="gibbs_sweep"):
            pmp.ARMStep(model["z"], gibbs_sweep=1)
        with pytest.raises(ValueError, match="hyperparameters"):
            pmp.ARMStep(model["z"], hyperparameters="nuts")
        with pytest.raises(TypeError, match="PastStatesSplitMergeStep"):
            pmp.SplitMergeStep(model["z"], init="past_states")
        with pytest.raises(TypeError, match="partition variable"):
            pmp.ARMStep(model["alpha"])
