"""``distributions.components``: a user's component model found in the graph, checked, and its log likelihoods
under every row, against scipy densities written here."""

import numpy as np
import pymc as pm
import pytest
from scipy import stats
from scipy.special import expit

import pymc_partitions as pmp
from pymc_partitions.distributions.component_fits import RowFits
from pymc_partitions.distributions.components import find_component_model

pytestmark = pytest.mark.pytensor_python

N, K = 7, 4
RNG = np.random.default_rng(3)
X = RNG.normal(size=N)
Y = RNG.normal(size=N)
COUNTS = RNG.poisson(3.0, size=N)


def component_of(build):
    """The component model of the model ``build(z)`` makes (its observed variables returned as a list)."""
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=N)
        observed = build(z)
    return model, find_component_model(model, z, observed)


def table_at(model, component, seed=0):
    """The point (rows drawn from their prior) and ``L`` there."""
    point = model.initial_point()
    point.update(component.draw_rows(point, np.random.default_rng(seed)))
    return point, component.log_likelihoods(point)


def poisson(z):
    lam = pm.LogNormal("lam", 1.0, 1.0, shape=K)
    return [pm.Poisson("y", lam[z], observed=COUNTS)]


def poisson_reference(point):
    lam = np.exp(point["lam_log__"])
    return stats.poisson.logpmf(COUNTS[:, None], lam[None, :])


def regression_shared_noise(z):
    a = pm.Normal("a", 0.0, 2.0, shape=K)
    b = pm.Normal("b", 0.0, 2.0, shape=K)
    sigma = pm.HalfNormal("sigma", 1.0)
    return [pm.Normal("y", a[z] + b[z] * X, sigma, observed=Y)]


def regression_reference(point):
    mean = point["a"][None, :] + point["b"][None, :] * X[:, None]
    return stats.norm.logpdf(Y[:, None], mean, np.exp(point["sigma_log__"]))


COARSENING = 3.5
"""``c`` of the coarsened regression: ``zeta = c / (c + 7) = 1/3``."""


def coarsened_regression(z):
    """The regression's likelihood wrapped in ``pmp.Coarsened``: each item's log likelihood times ``zeta``."""
    a = pm.Normal("a", 0.0, 2.0, shape=K)
    b = pm.Normal("b", 0.0, 2.0, shape=K)
    sigma = pm.HalfNormal("sigma", 1.0)
    return [pmp.Coarsened("y", pm.Normal.dist(a[z] + b[z] * X, sigma), coarsening=COARSENING, observed=Y)]


def coarsened_reference(point):
    return COARSENING / (COARSENING + N) * regression_reference(point)


def mvnormal_rows(z):
    design = np.column_stack([np.ones(N), X])
    beta = pm.MvNormal("beta", np.zeros(2), 4.0 * np.eye(2), shape=(K, 2))
    return [pm.Normal("y", (design * beta[z]).sum(axis=-1), 0.5, observed=Y)]


def mvnormal_reference(point):
    mean = point["beta"][:, 0][None, :] + point["beta"][:, 1][None, :] * X[:, None]
    return stats.norm.logpdf(Y[:, None], mean, 0.5)


def logistic_columns(z):
    beta = pm.Normal("beta", 0.0, 1.5, shape=(K, 2))
    return [pm.Bernoulli("y", logit_p=beta[z, 0] + beta[z, 1] * X, observed=(Y > 0).astype(int))]


def logistic_reference(point):
    p = expit(point["beta"][:, 0][None, :] + point["beta"][:, 1][None, :] * X[:, None])
    return stats.bernoulli.logpmf((Y > 0).astype(int)[:, None], p)


def deterministic_hierarchical(z):
    """Rows through a deterministic transform, their prior with a random location, two observed variables."""
    centre = pm.Normal("centre", 0.0, 1.0)
    log_lam = pm.Normal("log_lam", centre, 1.0, shape=K)
    lam = pm.Deterministic("lam", pm.math.exp(log_lam))
    scale = pm.HalfNormal("scale", 1.0, shape=K)
    return [pm.Poisson("y", lam[z], observed=COUNTS), pm.Normal("w", 0.0, scale[z], observed=Y)]


def deterministic_reference(point):
    lam = np.exp(point["log_lam"])
    return stats.poisson.logpmf(COUNTS[:, None], lam[None, :]) + stats.norm.logpdf(
        Y[:, None], 0.0, np.exp(point["scale_log__"])[None, :]
    )


ALLOWED = {
    "poisson": (poisson, poisson_reference, ("lam_log__",)),
    "regression_shared_noise": (regression_shared_noise, regression_reference, ("a", "b")),
    "coarsened_regression": (coarsened_regression, coarsened_reference, ("a", "b")),
    "mvnormal_rows": (mvnormal_rows, mvnormal_reference, ("beta",)),
    "logistic_columns": (logistic_columns, logistic_reference, ("beta",)),
    "deterministic_hierarchical": (deterministic_hierarchical, deterministic_reference, ("log_lam", "scale_log__")),
}


@pytest.mark.parametrize("name", list(ALLOWED))
def test_log_likelihoods_under_every_row(name):
    build, reference, rows = ALLOWED[name]
    model, component = component_of(build)
    assert component.k_max == K and set(component.row_names) == set(rows)
    point, table = table_at(model, component)
    assert table.shape == (N, K) and table.flags.c_contiguous and table.dtype == np.float64
    np.testing.assert_allclose(table, reference(point), rtol=1e-8)  # PyMC keeps constants such as 0.5 in float32


def test_prior_draws_of_the_rows_follow_the_current_hyperparameters():
    """Rows drawn from ``N(centre, 1)`` at the point's ``centre``, in PyMC's value space (``scale`` by its log)."""
    model, component = component_of(deterministic_hierarchical)
    point = model.initial_point()
    point["centre"] = np.asarray(5.0)
    rng = np.random.default_rng(0)
    draws = [component.draw_rows(point, rng) for _ in range(2000)]
    log_lam = np.concatenate([d["log_lam"] for d in draws])
    scale = np.exp(np.concatenate([d["scale_log__"] for d in draws]))
    assert stats.kstest(log_lam, stats.norm(5.0, 1.0).cdf).pvalue > 1e-3
    assert stats.kstest(scale, stats.halfnorm(scale=1.0).cdf).pvalue > 1e-3
    again = component.draw_rows(point, np.random.default_rng(0))
    np.testing.assert_array_equal(again["log_lam"], draws[0]["log_lam"])  # reproducible from the generator


def test_permuted_rows_permute_the_table():
    model, component = component_of(deterministic_hierarchical)
    point, table = table_at(model, component)
    order = np.array([2, 0, 3, 1])
    np.testing.assert_allclose(component.log_likelihoods(component.permute_rows(point, order)), table[:, order])


def test_a_model_is_checked_once_until_it_changes():
    """The step assignment, the steps and the summaries of one model share its component model (its checks compile
    PyTensor functions); a variable added to the model makes it a new one, checked again."""
    model, component = component_of(poisson)
    z, y = model["z"], model["y"]
    assert find_component_model(model, z, [y]) is component
    with model:
        pm.Normal("other", 0.0, 1.0)
    again = find_component_model(model, z, [y])
    assert again is not component and again.row_names == component.row_names


def test_laplace_fits_follow_the_data():
    """A Laplace fit is remembered under the data too (``pm.Data``): after ``set_value`` the same items and point
    give the new data's fit, as a fresh ``RowFits`` computes it.  (Remembered under the items and the point only,
    the split-merge proposal depended on data seen before, which the split-merge Geweke test caught.)"""
    holder = {}

    def poisson_data(z):
        holder["counts"] = pm.Data("counts", COUNTS)
        lam = pm.LogNormal("lam", 1.0, 1.0, shape=K)
        return [pm.Poisson("y", lam[z], observed=holder["counts"])]

    model, component = component_of(poisson_data)
    point, weights = model.initial_point(), np.eye(N)[:2]
    before = [mean for mean, _ in RowFits(component).laplace(point, weights)]
    fits = RowFits(component)
    fits.laplace(point, weights)
    holder["counts"].set_value((COUNTS + 7).astype(holder["counts"].dtype))
    after = [mean for mean, _ in fits.laplace(point, weights)]
    fresh = [mean for mean, _ in RowFits(component).laplace(point, weights)]
    np.testing.assert_allclose(after, fresh)
    assert not np.allclose(after, before)


def z_arithmetic(z):
    a = pm.Normal("a", 0.0, 1.0, shape=K)
    return [pm.Normal("y", a[z] + 0.1 * z, 1.0, observed=Y)]


def coarsened_z_arithmetic(z):
    a = pm.Normal("a", 0.0, 1.0, shape=K)
    return [pmp.Coarsened("y", pm.Normal.dist(a[z] + 0.1 * z, 1.0), coarsening=2.0, observed=Y)]


def rows_not_identical(z):
    a = pm.Normal("a", np.arange(K, dtype=float), 1.0, shape=K)
    return [pm.Normal("y", a[z], 1.0, observed=Y)]


def not_row_wise(z):
    a = pm.Normal("a", 0.0, 1.0, shape=K)
    return [pm.Normal("y", pm.math.cumsum(a)[z], 1.0, observed=Y)]


def not_factoring(z):
    a = pm.Normal("a", 0.0, 1.0, shape=K)
    mean = a[z]
    return [pm.Normal("y", mean - mean.mean(), 1.0, observed=Y)]


def rows_outside_indexing(z):
    a = pm.Normal("a", 0.0, 1.0, shape=K)
    return [pm.Normal("y", a[z], 1.0 + a.sum() ** 2, observed=Y)]


def multivariate_over_items(z):
    a = pm.Normal("a", 0.0, 1.0, shape=K)
    return [pm.MvNormal("y", a[z], np.eye(N), observed=Y)]


def one_draw_over_rows(z):
    a = pm.MvNormal("a", np.zeros(K), np.eye(K))
    return [pm.Normal("y", a[z], 1.0, observed=Y)]


def row_prior_depends_on_rows(z):
    scale = pm.HalfNormal("scale", 1.0, shape=K)
    a = pm.Normal("a", 0.0, scale, shape=K)
    return [pm.Normal("y", a[z], scale[z], observed=Y)]


def prior_of_another_variable_uses_rows(z):
    a = pm.Normal("a", 0.0, 1.0, shape=K)
    pm.Normal("b", a.sum(), 1.0)
    return [pm.Normal("y", a[z], 1.0, observed=Y)]


def potential_on_rows(z):
    a = pm.Normal("a", 0.0, 1.0, shape=K)
    pm.Potential("ordered", pm.math.switch(a[0] < a[1], 0.0, -np.inf))
    return [pm.Normal("y", a[z], 1.0, observed=Y)]


def wrong_length(z):
    a = pm.Normal("a", 0.0, 1.0, shape=K)
    return [pm.Normal("y", a[z][:3], 1.0, observed=Y[:3])]


def rows_of_other_lengths(z):
    a = pm.Normal("a", 0.0, 1.0, shape=K)
    b = pm.Normal("b", 0.0, 1.0, shape=K + 1)
    return [pm.Normal("y", a[z] + b[z], 1.0, observed=Y)]


NOT_ALLOWED = {
    "z_arithmetic": (z_arithmetic, "enters the likelihood of 'y' through"),
    "coarsened_z_arithmetic": (coarsened_z_arithmetic, "enters the likelihood of 'y' through"),
    "rows_not_identical": (rows_not_identical, "differs between rows"),
    "not_row_wise": (not_row_wise, "row-wise functions"),
    "not_factoring": (not_factoring, "factor over items"),
    "rows_outside_indexing": (rows_outside_indexing, "other than through their rows"),
    "multivariate_over_items": (multivariate_over_items, "one multivariate draw over the items"),
    "one_draw_over_rows": (one_draw_over_rows, "one multivariate draw over its rows"),
    "row_prior_depends_on_rows": (row_prior_depends_on_rows, "depends on 'scale'"),
    "prior_of_another_variable_uses_rows": (prior_of_another_variable_uses_rows, "'b' depends on 'a'"),
    "potential_on_rows": (potential_on_rows, "potential 'ordered'"),
    "wrong_length": (wrong_length, "one entry per item"),
    "rows_of_other_lengths": (rows_of_other_lengths, "same static number of rows"),
}


@pytest.mark.parametrize("name", list(NOT_ALLOWED))
def test_models_outside_the_form_are_refused_before_sampling(name):
    build, message = NOT_ALLOWED[name]
    with pytest.raises(ValueError, match=message):
        component_of(build)
