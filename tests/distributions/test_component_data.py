"""A component model's data are checked before sampling: missing observations and non-finite covariates are named
errors, not PyTensor's."""

import numpy as np
import numpy.ma as ma
import pymc as pm
import pytest

import pymc_partitions as pmp

N = 30
RNG = np.random.default_rng(0)
X = RNG.normal(size=N)
Y = RNG.poisson(2.0, N).astype(float)


def poisson_regression(x, y, data=False):
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=N)
        a = pm.Normal("a", 0.0, 2.0, shape=4)
        b = pm.Normal("b", 0.0, 2.0, shape=4)
        covariate = pm.Data("x", x) if data else x
        pm.Poisson("y", pm.math.exp(a[z] + b[z] * covariate), observed=y)
    return model


def test_missing_observations_are_refused_with_what_to_do():
    y = ma.masked_array(Y, mask=np.arange(N) % 10 == 3)
    model = poisson_regression(X, y)
    with model, pytest.raises(ValueError, match=r"'y'.* has missing values \(3 of them.*Drop the items whose y"):
        pmp.GibbsStep(model["z"])


# pm.Data itself refuses NaN (PyMC's NotImplementedError names auto-imputation), so NaN comes as a numpy array only
@pytest.mark.parametrize(("data", "bad"), [(False, np.nan), (False, np.inf), (True, np.inf)],
                         ids=["numpy-nan", "numpy-inf", "pm.Data-inf"])
def test_non_finite_covariates_are_named_before_sampling(data, bad):
    x = X.copy()
    x[[4, 11]] = bad
    model = poisson_regression(x, Y, data=data)
    name = "the data 'x'" if data else "a covariate"
    with model, pytest.raises(ValueError, match=rf"{name}.* NaN or infinite values at 2 item\(s\), first \[4, 11\]"):
        pm.sample(draws=2, tune=0, chains=1, progressbar=False, compute_convergence_checks=False)


def test_finite_data_pass():
    model = poisson_regression(X, Y, data=True)
    with model:
        assert isinstance(pmp.GibbsStep(model["z"]), pmp.GibbsStep)


@pytest.mark.parametrize("sampler", ["nutpie", "numpyro"])
def test_a_nuts_sampler_other_than_pymcs_is_a_named_error_with_the_fix(sampler):
    with poisson_regression(X, Y), pytest.raises(ValueError, match=rf"nuts_sampler='{sampler}'.*partition 'z'.*"
                                                                  r"use nuts_sampler='pymc'.*PyMC's NUTS"):
        pm.sample(nuts_sampler=sampler, draws=10, tune=10, chains=1, progressbar=False)
