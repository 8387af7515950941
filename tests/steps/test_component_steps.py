"""Partition steps on a component model written in PyMC (``distributions.cluster_rows``): what ``pm.sample`` assigns, what a
step writes, the log-density change it claims, reproducibility, and the errors for what it cannot do."""

import numpy as np
import pymc as pm
import pytest

import pymc_partitions as pmp

N, K = 12, 6
Y = np.array([0, 1, 0, 2, 1, 9, 11, 8, 10, 25, 23, 27])


def poisson_model(k_max=K, alpha=1.0, coarsening=None):
    """Poisson clusters on ``Y``; with ``coarsening=c`` the likelihood wrapped in ``pmp.Coarsened``."""
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=alpha, n=N)
        lam = pm.LogNormal("lam", 1.5, 1.5, shape=k_max)
        if coarsening is None:
            pm.Poisson("y", lam[z], observed=Y)
        else:
            pmp.Coarsened("y", pm.Poisson.dist(lam[z]), coarsening=coarsening, observed=Y)
    return model


def test_pm_sample_assigns_gibbs_to_z_and_nuts_to_the_rows():
    """The issue's example: with no ``step=``, ``pm.sample`` gives ``z`` to GibbsStep (Algorithm 8,
    ``steps.default``) and the rows to NUTS; the three groups of counts are found."""
    model = poisson_model()
    with model:
        _, selected = pm.sampling.mcmc.assign_step_methods(model)
    assert {method.__name__: [v.name for v in values] for method, values in selected.items()} == {
        "GibbsStep": ["z"], "NUTS": ["lam_log__"],
    }
    with model:
        idata = pm.sample(draws=300, tune=300, chains=2, cores=1, progressbar=False, random_seed=2)
    z_hat = pmp.point_partition(idata)
    assert pmp.adjusted_rand_index(z_hat, np.repeat([0, 1, 2], [5, 4, 3])) == 1.0
    # the package's summaries and plots read it as any partition posterior
    table = pmp.summarize(idata)
    assert table.loc["n_clusters", "mean"] >= 3 and np.isfinite(table.loc["log_joint", "r_hat"])
    similarity = pmp.posterior_similarity(idata)
    same = np.equal.outer(*(2 * [np.repeat([0, 1, 2], [5, 4, 3])]))
    assert similarity.shape == (N, N) and similarity[same].mean() > 0.6 and similarity[~same].max() < 0.1
    for plot in (pmp.plots.plot_n_clusters, pmp.plots.plot_similarity):
        assert plot(idata) is not None
    rates = pmp.cluster_parameters(idata, z_hat, model=model)["lam"].mean(("chain", "draw")).values
    np.testing.assert_allclose(rates, [Y[:5].mean(), Y[5:9].mean(), Y[9:].mean()], rtol=0.25)


def step_and_point(model, make=pmp.GibbsStep, seed=0):
    with model:
        step = make(model["z"], rng=np.random.default_rng(seed))
    point = model.initial_point()
    point.update(step.problem.component.draw_rows(point, np.random.default_rng(seed + 1)))
    return step, point


@pytest.mark.parametrize("coarsening", [None, 4.0])
@pytest.mark.parametrize("make", [pmp.GibbsStep, pmp.IncrementalMetropolisStep])
def test_claimed_change_is_the_models_with_the_rows_fixed(make, coarsening):
    """Delta test: the change a step claims is that of the PyMC model's ``log p(z) + log p(y | z, rows)``: the rows'
    prior is not part of it (the clusters' rows are relabelled, the empty rows redrawn by the step); coarsened
    (``pmp.Coarsened``, ``zeta = 1/4``), the model's likelihood is ``zeta log f``, and so is the steps'."""
    model = poisson_model(coarsening=coarsening)
    logp = model.compile_logp(vars=[model["z"], model["y"]])
    step, point = step_and_point(model, make)
    changes = []
    for _ in range(30):
        new, (stats_,) = step.step(point)
        changes.append(logp(new) - logp(point))
        assert np.isclose(stats_["partition_log_target_ratio"], changes[-1], rtol=1e-9, atol=1e-8)
        point = new
    assert np.count_nonzero(changes) > 10  # the partition moved


@pytest.mark.parametrize("coarsening", [None, 4.0])
def test_split_merge_claims_the_models_change(coarsening):
    """Delta test of the split-merge moves (``steps.component_split_merge``): the log target ratio of every
    accepted proposal is the change of the PyMC model's ``log p(z) + log p(y | z, rows) + sum_occupied log g``
    (the rows no cluster occupies are redrawn by the step, outside the ratio); coarsened too (``zeta = 1/4``: the
    Laplace fits and the ratio both read the model's ``zeta log f``)."""
    model = poisson_model(coarsening=coarsening)
    logp = model.compile_logp(vars=[model["z"], model["y"]])
    row_prior = model.compile_logp(vars=[model["lam"]], sum=False)
    step, point = step_and_point(model, lambda z, rng: pmp.NonconjugateSplitMergeStep(z, n_gibbs_scans=0, rng=rng))

    def target(p):
        return logp(p) + row_prior(p)[0][: p["z"].max() + 1].sum()

    accepted = set()
    for _ in range(60):
        new, (stats_,) = step.step(point)
        if stats_["partition_accepted"]:
            accepted.add(stats_["partition_move"])
            assert np.isclose(stats_["partition_log_target_ratio"], target(new) - target(point), rtol=1e-9, atol=1e-7)
        else:
            assert np.array_equal(new["z"], point["z"])
        point = new
    assert accepted == {1, 2}  # both splits and merges were accepted and checked


def test_rows_follow_their_clusters_and_empty_rows_are_redrawn():
    """After a step ``z`` is canonical, row ``k`` holds the parameters of the cluster labelled ``k`` (the same
    value the kernel used for it, so each item's likelihood is unchanged by the relabelling), and the rows no
    cluster occupies are fresh prior draws."""
    model = poisson_model()
    step, point = step_and_point(model)
    likelihood = model.compile_logp(vars=[model["y"]], sum=False)
    for _ in range(20):
        new, _ = step.step(point)
        z = new["z"]
        first = [int(np.flatnonzero(z == k)[0]) for k in range(z.max() + 1)]
        assert np.array_equal(np.sort(first), first)  # canonical
        assert set(new["lam_log__"][: z.max() + 1]) <= set(point["lam_log__"])  # occupied rows are old rows
        assert not set(new["lam_log__"][z.max() + 1 :]) & set(point["lam_log__"])  # empty rows are new draws
        assert np.all(np.isfinite(likelihood(new)[0]))
        point = new


def test_random_seed_gives_identical_traces_for_cores_1_and_2():
    traces = []
    for cores in (1, 2):
        with poisson_model():
            idata = pm.sample(draws=20, tune=10, chains=2, cores=cores, progressbar=False, random_seed=5, compute_convergence_checks=False)
        traces.append((idata.posterior["z"].values, idata.posterior["lam"].values))
    np.testing.assert_array_equal(traces[0][0], traces[1][0])
    np.testing.assert_array_equal(traces[0][1], traces[1][1])


@pytest.mark.parametrize(
    "make",
    [
        lambda z: pmp.SplitMergeStep(z),
        lambda z: pmp.MinHashSplitMergeStep(z),
        lambda z: pmp.SubClusterSplitMergeStep(z),
    ],
)
def test_steps_that_cannot_sample_it_say_which_can(make):
    with poisson_model():
        with pytest.raises(TypeError, match="GibbsStep, pmp.IncrementalMetropolisStep, pmp.NonconjugateSplitMergeStep"):
            make(pm.modelcontext(None)["z"])


def test_bad_options_and_initial_values():
    model = poisson_model()
    with model:
        with pytest.raises(ValueError, match="n_auxiliary does not apply"):
            pmp.GibbsStep(model["z"], n_auxiliary=2)
        step = pmp.GibbsStep(model["z"])
    point = model.initial_point()
    point["z"] = np.r_[np.arange(N - 1), 0].astype(np.int32)  # 11 clusters but K_max = 6 rows
    with pytest.raises(ValueError, match="labels must lie in 0 .. 5"):
        step.step(point)
