"""A new user's first hour (issue #43): each failure they met, reproduced, and what it does now.

1. ``pm.sample_posterior_predictive`` on a conjugate model draws the cluster
   parameters from their prior: it now warns and names
   ``pmp.posterior_predictive(..., extend_inferencedata=True)``, whose
   replicates (from the posterior) ``az.plot_ppc`` reads.
2. PyMC 5.28.5 leaves the observed variable twice in ``model.observed_RVs``
   after ``pm.sample_posterior_predictive``: the package ignores the
   duplicate, and removes it, so ``pm.sample`` works again.
3. ``K`` is the deterministic ``z_n_clusters``, in ``az.summary`` and ``az.plot_trace``.
4. The flagship example ``examples/flea_beetles.py`` runs clean: no Python
   warning, no warning in PyMC's log (a short run of its ``main``).
5. ``pm.sample()`` assigns the default step chosen in ``docs/benchmarks.md``.
6. Transposed data warn, naming the shapes; the Normal-inverse-Wishart log
   density's graph no longer grows with ``d``.
7. A wrong-length or non-integer initial ``z`` is a ``ValueError`` naming
   ``z`` before sampling; so is a population step with too few chains.

The data are the galaxy velocities (82 items, 1000 km/s), the fits tiny
(2 chains of 40 draws): the tests check plumbing and the replicates' scale,
which 80 draws settle (module fixture).
"""

import importlib.util
import logging
import pathlib
import warnings

import arviz as az
import numpy as np
import pymc as pm
import pytensor
import pytest

import pymc_partitions as pmp
from pymc_partitions.distributions.observed import model_observed_rvs

X = pmp.datasets.galaxies().data / 1000.0


def galaxy_model(**prior_kwargs):
    with pm.Model() as model:
        alpha = pm.Gamma("alpha", 1.0, 1.0)
        z = pmp.DirichletProcessPartition("z", alpha=alpha, n=len(X), **prior_kwargs)
        pmp.NormalGammaMixture.with_default_priors("x", partition=z, observed=X)
    return model


def sample(model, **kwargs):
    options = dict(draws=40, tune=40, chains=2, cores=1, random_seed=1, progressbar=False, compute_convergence_checks=False)
    with model:
        return pm.sample(**{**options, **kwargs})


@pytest.fixture(scope="module")
def fitted():
    model = galaxy_model()
    return model, sample(model)


# -- 1 and 2: posterior predictive ---------------------------------------------------------------


def test_1_pymc_posterior_predictive_warns_and_the_replacement_draws_from_the_posterior(fitted):
    model, idata = fitted
    with model, pytest.warns(UserWarning, match=r"'x' \(NormalGammaMixture\).*prior.*pmp\.posterior_predictive"):
        prior_draws = pm.sample_posterior_predictive(idata, progressbar=False, random_seed=2)
    extended = pmp.posterior_predictive(idata.copy(), model, extend_inferencedata=True, random_seed=2)
    replicates = extended["posterior_predictive"]["x"]
    assert replicates.dims == ("chain", "draw", "x_dim_0", "x_dim_1") and replicates.shape == (2, 40, 82, 1)

    def mean_correlation(draws):  # of each item's replicate with its observed value, averaged over the replicates
        return np.mean([np.corrcoef(rep, X[:, 0])[0, 1] for rep in np.asarray(draws).reshape(80, 82)])

    # replicates from the posterior keep each cluster where the data put it (the galaxies' groups are far apart:
    # about 0.9); PyMC's draw new cluster parameters from the prior, unrelated to the data (about 0, sd 0.1 over
    # 80 replicates of a few clusters each)
    assert mean_correlation(replicates.values) > 0.7
    assert abs(mean_correlation(prior_draws["posterior_predictive"]["x"].values)) < 0.35
    az.plot_ppc(extended, num_pp_samples=20, random_seed=0)


def test_1_no_warning_outside_posterior_predictive():
    with galaxy_model(), warnings.catch_warnings():
        warnings.simplefilter("error")
        pm.sample_prior_predictive(draws=3, random_seed=0)


def test_2_duplicate_observed_variable_is_repaired_and_everything_still_works(fitted):
    model, idata = fitted
    with model, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the warning of test 1 (once per model)
        pm.sample_posterior_predictive(idata, progressbar=False, random_seed=3)
    assert [rv.name for rv in model.observed_RVs] == ["x"]  # PyMC 5.28.5 leaves ['x', 'x']: repaired
    again = sample(model, draws=5, tune=5)  # the default step
    with model:
        stepped = sample(model, draws=5, tune=5, step=pmp.SplitMergeStep(model["z"]))
    for result in (again, stepped):
        assert result["posterior"]["z_n_clusters"].shape == (2, 5)
    assert pmp.posterior_predictive(idata, model, n_draws=3, random_seed=0).shape == (3, 82, 1)
    pmp.plots.plot_ppc(idata, model, n_draws=3, random_seed=0)


def test_2_graph_discovery_ignores_a_duplicate_observed_variable(fitted):
    model, idata = fitted
    model = model.copy()
    model.observed_RVs.append(model["x"])  # what pm.sample_posterior_predictive does, without our repair
    assert [rv.name for rv in model_observed_rvs(model)] == ["x"] and len(model.observed_RVs) == 2
    with model:
        pmp.GibbsStep(model["z"])
        pmp.SplitMergeStep(model["z"])
    assert pmp.posterior_predictive(idata, model, n_draws=2, random_seed=0).shape == (2, 82, 1)
    pmp.plots.plot_ppc(idata, model, n_draws=2, random_seed=0)


def test_extend_inferencedata_refuses_a_subset():
    idata = az.from_dict(posterior={"z": np.zeros((1, 3, 82), dtype=int)})
    with pytest.raises(ValueError, match="leave n_draws and items at None"):
        pmp.posterior_predictive(idata, galaxy_model(), n_draws=2, extend_inferencedata=True)


# -- 3: K in ArviZ ---------------------------------------------------------------------------------


def test_3_number_of_clusters_is_a_model_variable_in_arviz(fitted):
    _, idata = fitted
    k = idata["posterior"]["z_n_clusters"].values
    assert np.array_equal(k, idata["sample_stats"]["partition_n_clusters"].values)
    assert np.array_equal(k, idata["posterior"]["z"].values.max(axis=-1) + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NaN R-hat from z[0]: the labels are left out
        table = az.summary(idata, var_names=["~z"])
    assert "z_n_clusters" in table.index and np.isfinite(table.loc["z_n_clusters", "r_hat"])
    az.plot_trace(idata, var_names=["z_n_clusters"])


def test_3_opt_out_and_observed_partitions_record_no_number_of_clusters():
    assert "z_n_clusters" not in galaxy_model(record_n_clusters=False).named_vars
    with pm.Model() as model:
        pmp.DirichletProcessPartition("z", alpha=1.0, n=4, observed=[0, 1, 1, 0])
    assert "z_n_clusters" not in model.named_vars
    with pytest.raises(TypeError, match="record_n_clusters must be True or False"):
        galaxy_model(record_n_clusters="yes")


# -- 4: the flagship example ----------------------------------------------------------------------


def test_4_flagship_example_runs_without_a_warning(caplog, capsys):
    path = pathlib.Path(__file__).resolve().parents[1] / "examples" / "flea_beetles.py"
    spec = importlib.util.spec_from_file_location("flea_beetles_example", path)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    with warnings.catch_warnings(), caplog.at_level(logging.INFO, logger="pymc"):
        warnings.simplefilter("error")
        idata, ari = example.main(draws=100, tune=100, chains=2)
    messages = [r.getMessage() for r in caplog.records]
    assert not [m for r, m in zip(caplog.records, messages) if r.levelno >= logging.WARNING]
    assert not [m for m in messages if "rhat" in m or "effective sample size" in m]  # PyMC's checks log at INFO
    printed = capsys.readouterr().out
    assert "z_n_clusters" in printed and "point partition (VI loss) vs species" in printed
    recorded = {"alpha", "x_kappa0", "x_nu0", "x_scale", "z", "z_n_clusters", "z_n_large_clusters"}
    assert set(idata["posterior"].data_vars) == recorded
    assert ari > 0.9  # the three species, as in the full run (ARI 1.000)


# -- 5: the default step ---------------------------------------------------------------------------


def test_5_pm_sample_assigns_the_default_step_and_says_why(caplog):
    model = galaxy_model()
    with model, caplog.at_level(logging.INFO, logger="pymc"):  # competence reads the model in context
        _, selected = pm.sampling.mcmc.assign_step_methods(model, None, methods=pm.STEP_METHODS)
    z_value = model.rvs_to_values[model["z"]]
    (chosen,) = [step for step, value_vars in selected.items() if z_value in value_vars]
    assert chosen is pmp.SplitMergeStep
    assert any("assigns SplitMergeStep to the partition variable 'z'" in r.getMessage() for r in caplog.records)


# -- 6: transposed data ----------------------------------------------------------------------------


def test_6_transposed_data_warn_naming_the_shapes():
    faithful = pmp.datasets.old_faithful().data
    with pm.Model():
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=2)
        with pytest.warns(UserWarning, match=r"2 items \(rows\) and 272 features \(columns\).*X\.T.*n=272"):
            pmp.NormalInverseWishartMixture.with_default_priors("x", partition=z, observed=faithful.T)
    with pm.Model(), warnings.catch_warnings():
        warnings.simplefilter("error")  # word counts: a vocabulary larger than the corpus is no sign of a transpose
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=3)
        pmp.DirichletMultinomialMixture("x", partition=z, beta=0.5, observed=np.ones((3, 10)))


def _logp_size(d):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # d > n: the transposed-data warning
        with pm.Model() as model:
            z = pmp.DirichletProcessPartition("z", alpha=1.0, n=2)
            pmp.NormalInverseWishartMixture.with_default_priors("x", partition=z, observed=np.eye(2, d) + 1.0)
    graph = pytensor.graph.fg.FunctionGraph(model.value_vars, [model.logp(), *model.dlogp()], clone=True)
    return len(graph.apply_nodes)


def test_6_niw_log_density_graph_does_not_grow_with_the_dimension():
    # the log multivariate gamma was d elementwise terms: at d = 272 (Old Faithful transposed) compiling the
    # log density took about 300 s; one op now (families._multigamma)
    assert _logp_size(272) == _logp_size(3)


# -- 7: initial values and chains ------------------------------------------------------------------


@pytest.mark.parametrize(
    "initvals, message",
    [
        ({"z": np.zeros(50, dtype=int)}, r"initvals\['z'\] must be a 1-D label vector of length 82, got shape \(50,\)"),
        ({"z": np.r_[0.5, np.zeros(81)]}, r"initvals\['z'\] must hold integer cluster labels, got non-integer"),
        ([{"z": np.zeros(82)}, {"z": np.zeros(81)}], r"initvals\[1\]\['z'\] must be a 1-D label vector of length 82"),
    ],
)
def test_7_wrong_initial_partition_is_a_value_error_naming_z(initvals, message):
    with pytest.raises(ValueError, match=message):
        sample(galaxy_model(), initvals=initvals)


def test_7_population_step_with_too_few_chains_fails_before_sampling(caplog):
    model = galaxy_model()
    with model, caplog.at_level(logging.INFO, logger="pymc"):
        with pytest.raises(ValueError, match=r"ARMStep is a population step and needs pm.sample\(chains=...\) >= 3, got chains=2"):
            sample(model, step=pmp.ARMStep(model["z"]))
    assert not any("Population sampling" in record.getMessage() for record in caplog.records)
