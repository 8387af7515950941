"""Steps on ``NormalMixture`` inside real ``pm.sample`` runs: ownership of mu and tau, the rows they write, bad input."""

import numpy as np
import pymc as pm
import pytest
from pymc.sampling.mcmc import assign_step_methods
from scipy import stats

import pymc_partitions as pmp
from pymc_partitions.distributions.cluster_rows import parameter_rows
from pymc_partitions.state import canonical_labels

RNG = np.random.default_rng(31)
X = np.r_[RNG.normal(-4.0, 1.0, (12, 2)), RNG.normal(4.0, 1.0, (12, 2))]
K_MAX = 6
M, SIGMA = 0.0, 5.0
STEPS = [
    lambda z, mu, tau: pmp.GibbsStep(z),
    lambda z, mu, tau: pmp.IncrementalMetropolisStep(z),
    lambda z, mu, tau: pmp.NonconjugateSplitMergeStep([z, mu, tau]),
]


def build(k_max=K_MAX, center=None):
    with pm.Model() as model:
        alpha = pm.Gamma("alpha", 2.0, 1.0)
        z = pmp.DirichletProcessPartition("z", alpha=alpha, n=len(X))
        mu = pm.Normal("mu", M if center is None else center, SIGMA, shape=(k_max, 2))
        tau = pm.Gamma("tau", 2.0, 2.0, shape=(k_max, 2))
        pmp.NormalMixture("x", partition=z, mu=mu, tau=tau, observed=X)
    return model


def sample(model, make_step, **kwargs):
    options = dict(draws=150, tune=50, chains=2, cores=1, progressbar=False, random_seed=7, compute_convergence_checks=False)
    options.update(kwargs)
    with model:
        step = make_step(model["z"], model["mu"], model["tau"])
        return step, pm.sample(step=[step], **options)


@pytest.mark.parametrize("make_step", STEPS, ids=["gibbs", "incremental_metropolis", "split_merge"])
def test_steps_own_mu_and_tau_and_write_them_in_canonical_order(make_step):
    model = build()
    step, idata = sample(model, make_step)
    assert [v.name for v in step.vars] == ["z", "mu", "tau_log__"]
    with model:  # pm.sample leaves only alpha to NUTS
        _, assigned = assign_step_methods(model, [step])
    assert {var.name for variables in assigned.values() for var in variables} == {"alpha_log__"}
    posterior = idata["posterior"]
    z, mu, tau = (posterior[name].values.reshape(-1, *posterior[name].shape[2:]) for name in ("z", "mu", "tau"))
    k = z.max(axis=1) + 1
    np.testing.assert_array_equal(k, idata["sample_stats"]["partition_n_clusters"].values.ravel())
    assert np.all(k <= K_MAX)
    # row k holds the parameters of cluster k: a cluster of 3 or more items has its mean on their side (-4 or +4)
    for r in range(len(z)):
        for label in range(k[r]):
            items = X[z[r] == label]
            if len(items) >= 3:
                np.testing.assert_array_equal(np.sign(mu[r, label]), np.sign(items.mean(axis=0)))
    # the rows no item uses are fresh prior draws at every step
    unused = np.concatenate([mu[r, k[r]:].ravel() for r in range(len(z))])
    unused_tau = np.concatenate([tau[r, k[r]:].ravel() for r in range(len(z))])
    assert len(unused) > 500
    assert stats.kstest(unused, stats.norm(M, SIGMA).cdf).pvalue > 1e-3
    assert stats.kstest(unused_tau, stats.gamma(2.0, scale=0.5).cdf).pvalue > 1e-3
    logp = model.compile_logp()
    draws = [{"alpha_log__": a, "z": zz, "mu": mm, "tau_log__": np.log(tt)} for a, zz, mm, tt in
             zip(np.log(posterior["alpha"].values.ravel()), z, mu, tau)]
    assert all(np.isfinite(logp(point)) for point in draws[::25])


def test_pm_sample_without_step_gives_gibbs_the_partition_and_its_parameters():
    model = build()
    with model:
        _, assigned = assign_step_methods(model, [])
    assert {v.name for v in assigned[pmp.GibbsStep]} == {"z", "mu", "tau_log__"}
    assert {v.name for v in assigned[pm.NUTS]} == {"alpha_log__"}


@pytest.mark.parametrize("make_step", STEPS, ids=["gibbs", "incremental_metropolis", "split_merge"])
def test_random_seed_gives_identical_traces_for_cores_1_and_2(make_step):
    model = build()
    one = sample(model, make_step, cores=1)[1]
    two = sample(model, make_step, cores=2)[1]
    for name in ("z", "mu", "tau", "alpha"):
        np.testing.assert_array_equal(one["posterior"][name].values, two["posterior"][name].values)


def test_rows_changed_by_another_step_are_read_back():
    """The kept state serves while the point holds what the step wrote; rows written by something else are read."""
    model = build()
    with model:
        step = pmp.NonconjugateSplitMergeStep([model["z"], model["mu"], model["tau"]])
    new_point, _ = step.step(model.initial_point())
    assert step.chain.state_at(step.problem, step._models, new_point)[1] is step.chain.state
    moved = {**new_point, "mu": new_point["mu"] + 0.5, "tau_log__": new_point["tau_log__"] - 0.1}
    kernel_model, state = step.chain.state_at(step.problem, step._models, moved)
    assert state is not step.chain.state
    z = canonical_labels(state)
    mu, tau = parameter_rows(kernel_model, state, z, np.random.default_rng(0))
    k = z.max() + 1
    np.testing.assert_allclose(mu[:k], moved["mu"][:k])
    np.testing.assert_allclose(tau[:k], np.exp(moved["tau_log__"][:k]))


def test_hyperparameters_moved_by_nuts():
    """The prior mean of mu is a PyMC variable moved by NUTS: the step reads it at every draw."""
    with pm.Model() as model:
        center = pm.Normal("center", 0.0, 3.0)
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(X))
        mu = pm.Normal("mu", center, SIGMA, shape=(K_MAX, 2))
        tau = pm.Gamma("tau", 2.0, 2.0, shape=(K_MAX, 2))
        pmp.NormalMixture("x", partition=z, mu=mu, tau=tau, observed=X)
        idata = pm.sample(
            step=[pmp.NonconjugateSplitMergeStep(z)], draws=100, tune=50, chains=1, progressbar=False, random_seed=3,
            compute_convergence_checks=False,
        )
    assert np.all(np.isfinite(idata["sample_stats"]["partition_log_joint"].values))
    assert idata["posterior"]["center"].values.std() > 0


def model_with(make_mu, make_tau):
    """A NormalMixture model whose ``mu`` and ``tau`` are built by the given functions (inside the model)."""

    def make():
        with pm.Model() as model:
            z = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(X))
            pmp.NormalMixture("x", partition=z, mu=make_mu(), tau=make_tau(), observed=X)
        return model

    return make


def bad_models():
    normal_means = lambda: pm.Normal("mu", 0.0, 1.0, shape=(K_MAX, 2))  # noqa: E731
    gamma_precisions = lambda: pm.Gamma("tau", 2.0, 2.0, shape=(K_MAX, 2))  # noqa: E731
    per_row_prior = model_with(lambda: pm.Normal("mu", np.zeros((K_MAX, 2)), 1.0, shape=(K_MAX, 2)), gamma_precisions)
    student_t_means = model_with(lambda: pm.StudentT("mu", nu=3.0, mu=0.0, sigma=1.0, shape=(K_MAX, 2)), gamma_precisions)
    half_normal_precisions = model_with(normal_means, lambda: pm.HalfNormal("tau", 1.0, shape=(K_MAX, 2)))

    def conjugate():
        with pm.Model() as model:
            z = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(X))
            pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=0.1, a0=2.0, b0=2.0, observed=X)
        return model

    return {
        "per-row prior": (per_row_prior, lambda m: pmp.GibbsStep(m["z"]), ValueError, "same for every row"),
        "student-t means": (student_t_means, lambda m: pmp.GibbsStep(m["z"]), TypeError, "mu must be a pm.Normal"),
        "half-normal precisions": (half_normal_precisions, lambda m: pmp.GibbsStep(m["z"]), TypeError, "tau must be a pm.Gamma"),
        "conjugate split-merge": (build, lambda m: pmp.SplitMergeStep(m["z"]), TypeError, "not models whose clusters keep explicit parameters"),
        "conjugate ARM": (build, lambda m: pmp.ARMStep(m["z"]), TypeError, "not models whose clusters keep explicit parameters"),
        "nonconjugate on conjugate": (conjugate, lambda m: pmp.NonconjugateSplitMergeStep(m["z"]), TypeError, "explicit parameters"),
        "algorithm 7 on conjugate": (conjugate, lambda m: pmp.IncrementalMetropolisStep(m["z"]), TypeError, "explicit parameters"),
        "n_auxiliary on conjugate": (conjugate, lambda m: pmp.GibbsStep(m["z"], n_auxiliary=2), ValueError, "n_auxiliary applies"),
        "n_auxiliary 0": (build, lambda m: pmp.GibbsStep(m["z"], n_auxiliary=0), ValueError, "n_auxiliary"),
        "n_split_scans": (build, lambda m: pmp.NonconjugateSplitMergeStep(m["z"], n_split_scans=-1), ValueError, "n_split_scans"),
        "n_moves": (build, lambda m: pmp.NonconjugateSplitMergeStep(m["z"], n_moves=0), ValueError, "n_moves"),
        "K_max 1": (lambda: build(k_max=1), lambda m: pmp.NonconjugateSplitMergeStep(m["z"]), ValueError, "K_max >= 2"),
        "other variable": (build, lambda m: pmp.GibbsStep([m["z"], m["alpha"]]), TypeError, "samples the partition variable 'z' and its cluster parameters 'mu', 'tau_log__' only"),
    }


@pytest.mark.parametrize("case", list(bad_models()))
def test_bad_input(case):
    make_model, make_step, error, match = bad_models()[case]
    model = make_model()
    with model:
        with pytest.raises(error, match=match):
            make_step(model)


def test_a_point_beyond_k_max_is_refused_before_numba_reads_it():
    model = build(k_max=3)
    with model:
        step = pmp.GibbsStep(model["z"])
    point = model.initial_point()
    point["z"] = np.array([0, 1, 2, 3] + [0] * (len(X) - 4), dtype=np.int32)
    with pytest.raises(ValueError, match="at most K_max = 3"):
        step.step(point)
    point["z"] = np.array([1] + [0] * (len(X) - 1), dtype=np.int32)
    with pytest.raises(ValueError, match="canonical"):
        step.step(point)
    point["z"] = np.zeros(len(X), dtype=np.int32)
    point["tau_log__"] = np.full((3, 2), np.nan)
    with pytest.raises(ValueError, match="tau positive"):
        step.step(point)
