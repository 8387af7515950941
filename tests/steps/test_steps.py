"""Step methods inside real ``pm.sample`` runs: assignment, reproducibility, stats, bad input."""

import numpy as np
import pymc as pm
import pytest

import pymc_partitions as pmp
from pymc_partitions.kernels.info import SAMPLE_STATS

pytestmark = pytest.mark.pytensor_python  # PyTensor without C: conftest.py

RNG = np.random.default_rng(3)
X = np.r_[RNG.normal(-4.0, 1.0, (15, 2)), RNG.normal(4.0, 1.0, (15, 2))]


def two_cluster_model(alpha=None):
    with pm.Model() as model:
        alpha = pm.Gamma("alpha", 2.0, 1.0) if alpha is None else alpha
        z = pmp.DirichletProcessPartition("z", alpha=alpha, n=len(X))
        pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=0.1, a0=2.0, b0=2.0, observed=X)
    return model


def sample(model, **kwargs):
    options = dict(draws=60, tune=20, chains=2, cores=1, progressbar=False, random_seed=7, compute_convergence_checks=False)
    options.update(kwargs)
    with model:
        return pm.sample(**options)


def test_pm_sample_assigns_split_merge_to_conjugate_partitions_by_default():
    model = two_cluster_model()
    idata = sample(model)  # no step= given: the default of steps.default (docs/benchmarks.md, "The default step")
    assert "partition_n_clusters" in idata["sample_stats"]
    assert set(np.unique(idata["sample_stats"]["partition_move"].values)) <= {1, 2}  # split-merge proposals


@pytest.mark.parametrize("make_step", [pmp.GibbsStep, pmp.SplitMergeStep])
def test_sample_stats_and_recovery(make_step):
    model = two_cluster_model()
    idata = sample(model, step=[make_step(model["z"], model=model)])
    stats = idata["sample_stats"]
    for name in SAMPLE_STATS:
        assert stats[name].shape == (2, 60)
    assert np.all(stats["partition_n_clusters"].values >= 1)
    z = idata["posterior"]["z"].values
    # two well-separated groups of 15: the posterior keeps them apart
    assert np.mean(z[:, :, 0][..., None] != z[:, :, 15:]) > 0.95
    np.testing.assert_array_equal(stats["partition_n_clusters"].values, z.max(axis=-1) + 1)
    if make_step is pmp.SplitMergeStep:
        assert set(np.unique(stats["partition_move"].values)) <= {1, 2}


@pytest.mark.parametrize(
    "make_step",
    [pmp.GibbsStep, pmp.SplitMergeStep, pmp.MinHashSplitMergeStep,
     lambda z, model: pmp.MinHashSplitMergeStep(z, variant="lsh", gibbs_sweep=True, model=model)],
    ids=["gibbs", "split_merge", "minsm", "lsh"],
)
def test_random_seed_gives_identical_traces_for_cores_1_and_2(make_step):
    model = two_cluster_model()
    one = sample(model, step=[make_step(model["z"], model=model)], cores=1)
    two = sample(model, step=[make_step(model["z"], model=model)], cores=2)
    np.testing.assert_array_equal(one["posterior"]["z"].values, two["posterior"]["z"].values)
    np.testing.assert_array_equal(one["posterior"]["alpha"].values, two["posterior"]["alpha"].values)
    np.testing.assert_array_equal(one["sample_stats"]["partition_log_joint"].values, two["sample_stats"]["partition_log_joint"].values)


def test_log_joint_stat_matches_model():
    model = two_cluster_model(alpha=1.5)
    idata = sample(model, step=[pmp.GibbsStep(model["z"], model=model)], chains=1, draws=10)
    logp = model.compile_logp()
    for z, recorded in zip(idata["posterior"]["z"].values[0], idata["sample_stats"]["partition_log_joint"].values[0]):
        assert recorded == pytest.approx(logp({"z": z}), abs=1e-8)


def test_trace_without_z_keeps_derived_scalars():
    """Large-n mode: z left out of the trace with var_names; summaries of the scalars still work."""
    model = two_cluster_model()
    idata = sample(model, step=[pmp.GibbsStep(model["z"], model=model)], var_names=["alpha"])
    assert "z" not in idata["posterior"]
    table = pmp.summarize(idata)
    assert {"n_clusters", "log_joint"} <= set(table.index)
    assert np.isfinite(table.loc["n_clusters", "r_hat"])
    with pytest.raises(ValueError, match="keep 'z'"):
        pmp.posterior_similarity(idata)


def test_keep_items_records_labels_for_coclustering_without_z():
    """Large-n mode: z out of the trace, a subset's labels kept as scalar stats, their co-clustering exact."""
    model = two_cluster_model()
    kept = [0, 3, 15, 20]
    with_z = sample(model, step=[pmp.GibbsStep(model["z"], model=model, keep_items=kept)])
    without_z = sample(model, step=[pmp.GibbsStep(model["z"], model=model, keep_items=kept)], var_names=["alpha"])
    assert "z" not in without_z["posterior"]
    np.testing.assert_array_equal(without_z["sample_stats"]["partition_label_15"].values, with_z["posterior"]["z"].values[..., 15])
    expected = pmp.posterior_similarity(with_z, items=[20, 0, 15])
    np.testing.assert_array_equal(pmp.posterior_similarity(without_z, items=[20, 0, 15]), expected)
    assert pmp.posterior_similarity(without_z).shape == (4, 4)
    with pytest.raises(ValueError, match="were not recorded"):
        pmp.posterior_similarity(without_z, items=[1, 2])


def test_mfm_and_py_priors_run_in_pm_sample():
    from scipy import stats

    k_prior = stats.poisson.pmf(np.arange(40), 1.0)
    k_prior /= k_prior.sum()
    for build in (
        lambda: pmp.MixtureOfFiniteMixturesPartition("z", gamma=pm.Gamma("gamma", 2.0, 2.0), k_prior=k_prior, n=len(X)),
        lambda: pmp.PitmanYorPartition("z", alpha=pm.Gamma("alpha", 2.0, 2.0), sigma=pm.Beta("sigma", 2.0, 5.0), n=len(X)),
    ):
        with pm.Model() as model:
            z = build()
            pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=0.1, a0=2.0, b0=2.0, observed=X)
        idata = sample(model, step=[pmp.SplitMergeStep(z, model=model)], chains=1)
        assert np.all(np.isfinite(idata["sample_stats"]["partition_log_joint"].values))


def test_bad_step_input():
    model = two_cluster_model()
    with model:
        with pytest.raises(TypeError, match="partition variable"):
            pmp.GibbsStep(model["alpha"])
        with pytest.raises(ValueError, match="n_sweeps"):
            pmp.GibbsStep(model["z"], n_sweeps=0)
        with pytest.raises(ValueError, match="n_intermediate"):
            pmp.SplitMergeStep(model["z"], n_intermediate=-1)
        with pytest.raises(ValueError, match="n_moves"):
            pmp.SplitMergeStep(model["z"], n_moves=1.5)
        with pytest.raises(TypeError, match="gibbs_sweep"):
            pmp.SplitMergeStep(model["z"], gibbs_sweep="yes")
        with pytest.raises(ValueError, match="keep_items"):
            pmp.GibbsStep(model["z"], keep_items=[0, 0])
        with pytest.raises(ValueError, match="keep_items"):
            pmp.SplitMergeStep(model["z"], keep_items=[len(X)])
    with pm.Model():
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=4)
        with pytest.raises(ValueError, match="no observation model"):
            pmp.GibbsStep(z)
    with pm.Model():
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=4)
        pmp.NormalGammaMixture("x1", partition=z, observed=np.zeros((4, 1)))
        pmp.NormalGammaMixture("x2", partition=z, observed=np.zeros((4, 1)))
        with pytest.raises(ValueError, match="observation models"):
            pmp.GibbsStep(z)


def test_family_hyperparameters_are_read_fresh_from_the_point():
    """A hyperparameter moved by another PyMC step reaches the kernels at the next step."""
    with pm.Model() as model:
        b0 = pm.Gamma("b0", 2.0, 1.0)
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(X))
        pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=0.1, a0=2.0, b0=b0, observed=X)
    step = pmp.GibbsStep(z, model=model)
    point = model.initial_point()
    logp = model.compile_logp(jacobian=False)
    from pymc_partitions.state import build_state, log_joint

    for log_b0 in (-1.0, 0.5, 2.0):
        point = {**point, "b0_log__": np.array(log_b0)}
        kernel_model = step.kernel_model(point)
        state = build_state(kernel_model, np.zeros(len(X), dtype=np.int64))
        hyperprior = pm.logp(pm.Gamma.dist(2.0, 1.0), np.exp(log_b0)).eval()
        assert log_joint(kernel_model, state) + hyperprior == pytest.approx(logp(point), abs=1e-8)
    idata = sample(model, step=[pmp.GibbsStep(z, model=model)], chains=1)
    assert idata["posterior"]["b0"].std() > 0


@pytest.mark.parametrize("make_step", [pmp.GibbsStep, pmp.ARMStep])
def test_steps_know_whether_pymc_is_tuning(make_step):
    """``partition_tune`` is true for the tuning draws and false after, for every chain (``stop_tuning``)."""
    model = two_cluster_model(alpha=1.0)
    idata = sample(model, step=[make_step(model["z"], model=model)], chains=3, tune=5, draws=4, discard_tuned_samples=False)
    assert np.all(idata["warmup_sample_stats"]["partition_tune"].values)
    assert not np.any(idata["sample_stats"]["partition_tune"].values)


def test_step_keeps_its_state_and_rebuilds_when_z_comes_from_elsewhere():
    """A step fed its own output reuses its numba state; another z is rebuilt from scratch, and either way the log
    joint it reports is the model's.  The other z must differ from the last one written (an equal z is reused, and
    the initial point, one cluster, is sometimes what two sweeps leave), so it is chosen after the second step."""
    model = two_cluster_model(alpha=1.0)
    step = pmp.GibbsStep(model["z"], model=model, rng=np.random.default_rng(0))
    logp = model.compile_logp(jacobian=False)
    point, _ = step.step(model.initial_point())
    kept = step.chain.state.labels
    point, stats = step.step(point)
    assert np.shares_memory(step.chain.state.labels, kept)  # the same numba state, moved on
    assert stats[0]["partition_log_joint"] == pytest.approx(logp(point), abs=1e-8)
    other = dict(point)
    other["z"] = (np.arange(len(X)) >= 15).astype(point["z"].dtype)  # the two true clusters
    if np.array_equal(other["z"], point["z"]):
        other["z"] = np.zeros_like(point["z"])
    point, stats = step.step(other)
    assert not np.shares_memory(step.chain.state.labels, kept)
    assert stats[0]["partition_log_joint"] == pytest.approx(logp(point), abs=1e-8)
