"""What bad input gets (docs/design.md §6): one table over every public entry point.

Two tables:

* ``RAISES`` -- rows ``(id, call, error, match)``: ``call()`` raises ``error``
  (a ``ValueError`` or ``TypeError``) whose message contains ``match``, a
  substring that names the argument.  Rows cover the partition priors, the
  observation models, the step methods and their options (construction, and a
  ``step()`` call where the bad value is read from the sampler's point), the
  summaries and the dataset loaders, each with the kinds of bad value that
  apply: wrong type, wrong shape or length, NaN/inf, out of support, negative
  or fractional labels, empty input.  Most rows are generated from small
  specs (a hyperparameter's kind and the bad values of that kind).
* ``OUT_OF_SUPPORT`` -- rows ``(id, build, name, bad, good)``: ``build()``
  gives a model in which the hyperparameter ``name`` is a random variable
  (``pm.Normal``, so it can leave its support); the model's log density is
  ``-inf`` (never NaN) at each value of ``bad``, and finite at each value of
  ``good``.

Valid edge cases (one posterior draw,
integer-valued float labels, negative labels where any integers are allowed)
are checked at the end.  Nothing here samples; a ``step()`` call is one transition.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import arviz as az
import numpy as np
import pymc as pm
import pytensor.tensor as pt
import pytest
from scipy import stats

import pymc_partitions as pmp
from pymc_partitions import datasets

pytestmark = pytest.mark.pytensor_python  # PyTensor without C: conftest.py

warnings.filterwarnings("ignore", category=FutureWarning, module="arviz")
warnings.filterwarnings("ignore", message="More chains .* than draws", category=UserWarning)

N, D = 6, 2
LABELS = np.array([0, 0, 1, 1, 2, 2])
RNG = np.random.default_rng(0)
REAL = RNG.normal(size=(N, D))
BINARY = (REAL > 0).astype(float)
COUNTS = RNG.poisson(3.0, size=(N, D)).astype(float)
ADJACENCY = np.zeros((N, N))
ADJACENCY[[0, 1, 2, 3], [1, 0, 3, 2]] = 1.0
K_PRIOR = np.full(4, 0.25)
POSTERIOR = az.from_dict(posterior={"z": np.array([[[0, 0, 1, 1], [0, 1, 1, 1]]])})


def in_model(build):
    """A call that runs ``build()`` inside a fresh ``pm.Model``."""

    def call():
        with pm.Model():
            build()

    return call


def row(id, call, error, match):
    return pytest.param(call, error, match, id=id)


# --------------------------------------------------------------------------- partition priors

# Each prior: its class and keyword arguments inside the support.
PRIORS = {
    "DirichletProcessPartition": (pmp.DirichletProcessPartition, dict(alpha=1.0, n=4)),
    "PitmanYorPartition": (pmp.PitmanYorPartition, dict(alpha=1.0, sigma=0.3, n=4)),
    "NGGPartition": (pmp.NGGPartition, dict(alpha=1.0, sigma=0.3, tau=1.0, u=1.0, n=4)),
    "NGGAuxiliary": (pmp.NGGAuxiliary, dict(alpha=1.0, sigma=0.3, tau=1.0, n=4)),
    "MixtureOfFiniteMixturesPartition": (pmp.MixtureOfFiniteMixturesPartition, dict(gamma=1.0, k_prior=K_PRIOR, n=4)),
}

# (value, error, message) per bad value of each hyperparameter
PRIOR_HYPER_BAD = {
    ("DirichletProcessPartition", "alpha"): [
        (0.0, ValueError, "alpha must be > 0"),
        (-0.7, ValueError, "alpha must be > 0"),
    ],
    ("PitmanYorPartition", "sigma"): [
        (-0.1, ValueError, "sigma must be >= 0"),
        (1.0, ValueError, "sigma must be < 1"),
    ],
    ("PitmanYorPartition", "alpha"): [
        (-0.3, ValueError, "alpha must be > -sigma"),
        (-0.5, ValueError, "alpha must be > -sigma"),
    ],
    ("NGGPartition", "alpha"): [(0.0, ValueError, "alpha must be > 0")],
    ("NGGPartition", "sigma"): [(0.0, ValueError, "sigma must be > 0"), (1.0, ValueError, "sigma must be < 1")],
    ("NGGPartition", "tau"): [(-0.5, ValueError, "tau must be >= 0")],
    ("NGGPartition", "u"): [(0.0, ValueError, "u must be > 0"), (-1.0, ValueError, "u must be > 0")],
    ("NGGAuxiliary", "alpha"): [(-1.0, ValueError, "alpha must be > 0")],
    ("NGGAuxiliary", "sigma"): [(1.5, ValueError, "sigma must be < 1")],
    ("NGGAuxiliary", "tau"): [(-0.5, ValueError, "tau must be >= 0")],
    ("MixtureOfFiniteMixturesPartition", "gamma"): [(0.0, ValueError, "gamma must be > 0")],
}

# bad values every scalar hyperparameter of a prior shares
SCALAR_BAD = [
    ("nan", np.nan, ValueError, "{name} must be finite"),
    ("inf", np.inf, ValueError, "{name} must be finite"),
    ("vector", np.ones(2), ValueError, "{name} must have at most 0 dimension"),
    ("string", "1", TypeError, "{name} must be a number"),
    ("none", None, TypeError, "{name} must be a number"),
    ("bool", True, TypeError, "{name} must be a number"),
]


def _prior_rows():
    rows = []
    for prior, (cls, good) in PRIORS.items():
        for (owner, name), bad_values in PRIOR_HYPER_BAD.items():
            if owner != prior:
                continue
            for value, error, match in bad_values:
                kwargs = {**good, name: value}
                rows.append(row(f"{prior}-{name}={value}", in_model(lambda c=cls, k=kwargs: c("z", **k)), error, match))
            for label, value, error, match in SCALAR_BAD:
                kwargs = {**good, name: value}
                rows.append(
                    row(
                        f"{prior}-{name}-{label}",
                        in_model(lambda c=cls, k=kwargs: c("z", **k)),
                        error,
                        match.format(name=name),
                    )
                )
            rows.append(
                row(
                    f"{prior}-{name}-vector-rv",
                    in_model(lambda c=cls, g=good, nm=name: c("z", **{**g, nm: pm.Gamma("h", 1.0, 1.0, shape=2)})),
                    ValueError,
                    f"{name} must have at most 0 dimension",
                )
            )
        for label, n, error in [
            ("zero", 0, ValueError),
            ("negative", -3, ValueError),
            ("float", 2.5, TypeError),
            ("bool", True, TypeError),
            ("none", None, TypeError),
            ("string", "4", TypeError),
            ("array", np.array(4), TypeError),
        ]:
            kwargs = {**good, "n": n}
            rows.append(
                row(
                    f"{prior}-n-{label}",
                    in_model(lambda c=cls, k=kwargs: c("z", **k)),
                    error,
                    "n must be a positive integer",
                )
            )
        rows.append(
            row(
                f"{prior}-n-rv",
                in_model(lambda c=cls, g=good: c("z", **{**g, "n": pm.Poisson("k", 3.0)})),
                TypeError,
                "n must be a positive integer",
            )
        )
        if prior == "NGGAuxiliary":
            continue
        # a partition variable in a model: one label vector of n = 4 items
        for label, extra, error, match in [
            ("initval-short", dict(initval=[0, 0, 0]), ValueError, "initval must be a 1-D label vector of length 4"),
            ("initval-2d", dict(initval=[[0, 0, 0, 0]]), ValueError, "initval must be a 1-D label vector of length 4"),
            (
                "initval-fractional",
                dict(initval=[0, 0.5, 0, 0]),
                ValueError,
                "initval must hold integer cluster labels",
            ),
            ("initval-nan", dict(initval=[0, np.nan, 0, 0]), ValueError, "initval must hold integer cluster labels"),
            (
                "initval-bool",
                dict(initval=[True, False, True, True]),
                TypeError,
                "initval must hold integer cluster labels",
            ),
            ("initval-empty", dict(initval=[]), ValueError, "initval must be a 1-D label vector of length 4"),
            (
                "observed-long",
                dict(observed=[0, 0, 1, 1, 2]),
                ValueError,
                "observed must be a 1-D label vector of length 4",
            ),
            (
                "observed-fractional",
                dict(observed=[0, 0, 1, 1.5]),
                ValueError,
                "observed must hold integer cluster labels",
            ),
            ("size", dict(size=2), ValueError, "size must be None for a partition variable in a model"),
            ("shape-batch", dict(shape=(2, 4)), ValueError, "shape must have one dimension"),
            ("shape-length", dict(shape=(3,)), ValueError, "shape must end in n = 4"),
        ]:
            kwargs = {**good, **extra}
            rows.append(row(f"{prior}-{label}", in_model(lambda c=cls, k=kwargs: c("z", **k)), error, match))
        rows.append(
            row(
                f"{prior}-dims-length",
                lambda c=cls, g=good: _with_coords(lambda: c("z", **g, dims="item"), item=range(3)),
                ValueError,
                "shape must end in n = 4",
            )
        )
        rows.append(
            row(
                f"{prior}-dist-shape-length",
                lambda c=cls, g=good: c.dist(**g, shape=(2, 3)),
                ValueError,
                "shape must end in n = 4",
            )
        )
    # Pitman-Yor: known alpha with symbolic sigma still needs alpha > -1
    rows.append(
        row(
            "PitmanYorPartition-alpha=-1-sigma-rv",
            in_model(lambda: pmp.PitmanYorPartition("z", alpha=-1.0, sigma=pm.Beta("s", 1.0, 1.0), n=4)),
            ValueError,
            "alpha must be > -sigma > -1",
        )
    )
    mfm = pmp.MixtureOfFiniteMixturesPartition
    for label, k_prior, error, match in [
        ("not-summing-to-1", [0.5, 0.2], ValueError, "k_prior must hold finite non-negative probabilities"),
        ("negative", [1.5, -0.5], ValueError, "k_prior must hold finite non-negative probabilities"),
        ("nan", [np.nan, 1.0], ValueError, "k_prior must hold finite non-negative probabilities"),
        ("2d", [[1.0]], ValueError, "k_prior must be a non-empty 1-D array"),
        ("empty", [], ValueError, "k_prior must be a non-empty 1-D array"),
        ("string", "abc", TypeError, "k_prior must be a number"),
    ]:
        rows.append(
            row(
                f"MixtureOfFiniteMixturesPartition-k_prior-{label}",
                in_model(lambda k=k_prior: mfm("z", gamma=1.0, k_prior=k, n=4)),
                error,
                match,
            )
        )
    rows.append(
        row(
            "MixtureOfFiniteMixturesPartition-k_prior-rv",
            in_model(lambda: mfm("z", gamma=1.0, k_prior=pm.Dirichlet("w", np.ones(3)), n=4)),
            TypeError,
            "k_prior must be a constant array",
        )
    )
    return rows


def _with_coords(build, **coords):
    with pm.Model(coords=coords):
        build()


# --------------------------------------------------------------------------- observation models

# name -> (class, observed data, {hyperparameter: kind})
MIXTURES = {
    "BetaBernoulliMixture": (pmp.BetaBernoulliMixture, BINARY, {"a": "positive", "b": "positive"}),
    "NormalGammaMixture": (
        pmp.NormalGammaMixture,
        REAL,
        {"mu0": "real", "kappa0": "positive", "a0": "positive", "b0": "positive"},
    ),
    "NormalInverseWishartMixture": (
        pmp.NormalInverseWishartMixture,
        REAL,
        {"mu0": "real", "kappa0": "positive-scalar", "nu0": "degrees", "Psi0": "spd"},
    ),
    "DirichletMultinomialMixture": (pmp.DirichletMultinomialMixture, COUNTS, {"beta": "positive"}),
    "GammaPoissonMixture": (pmp.GammaPoissonMixture, COUNTS, {"a": "positive", "b": "positive"}),
    "InfiniteRelationalModel": (
        pmp.InfiniteRelationalModel,
        ADJACENCY,
        {"a": "positive-scalar", "b": "positive-scalar"},
    ),
}

# bad values of each hyperparameter kind (d = 2): (label, value, error, message template)
HYPER_BAD = {
    "positive": [
        ("zero", 0.0, ValueError, "{name} must be > 0"),
        ("negative", [1.0, -1.0], ValueError, "{name} must be > 0"),
        ("nan", np.nan, ValueError, "{name} must be finite"),
        ("inf", [1.0, np.inf], ValueError, "{name} must be finite"),
        ("length", [1.0, 1.0, 1.0], ValueError, "{name} must be a scalar or have length 2"),
        ("2d", np.ones((2, 2)), ValueError, "{name} must have at most 1 dimension"),
        ("string", "1", TypeError, "{name} must be a number"),
        ("none", None, TypeError, "{name} must be a number"),
    ],
    "real": [
        ("nan", np.nan, ValueError, "{name} must be finite"),
        ("inf", [0.0, -np.inf], ValueError, "{name} must be finite"),
        ("length", [0.0, 0.0, 0.0], ValueError, "{name} must be a scalar or have length 2"),
        ("2d", np.zeros((2, 2)), ValueError, "{name} must have at most 1 dimension"),
        ("string", "0", TypeError, "{name} must be a number"),
    ],
    "positive-scalar": [
        ("zero", 0.0, ValueError, "{name} must be > 0"),
        ("negative", -1.0, ValueError, "{name} must be > 0"),
        ("nan", np.nan, ValueError, "{name} must be finite"),
        ("vector", [1.0, 1.0], ValueError, "{name} must have at most 0 dimension"),
        ("string", "1", TypeError, "{name} must be a number"),
    ],
    "degrees": [
        ("d-1", 1.0, ValueError, "{name} must be > 1"),
        ("nan", np.nan, ValueError, "{name} must be finite"),
        ("vector", [3.0, 3.0], ValueError, "{name} must have at most 0 dimension"),
        ("string", "3", TypeError, "{name} must be a number"),
    ],
    "spd": [
        ("not-positive-definite", -np.eye(2), ValueError, "{name} must be positive definite"),
        ("asymmetric", np.array([[1.0, 0.5], [0.0, 1.0]]), ValueError, "{name} must be symmetric"),
        ("shape", np.eye(3), ValueError, "{name} must be a 2 x 2 matrix"),
        ("vector", np.ones(2), ValueError, "{name} must be a 2 x 2 matrix"),
        ("nan", np.full((2, 2), np.nan), ValueError, "{name} must be finite"),
        ("string", "eye", TypeError, "{name} must be a number"),
    ],
}

# bad observed data: (label, data kinds it applies to, value, error, message)
DATA_BAD = [
    ("missing", "all", None, ValueError, "observed is required"),
    ("string", "all", "abc", TypeError, "observed must be a numeric"),
    ("nan", "all", "nan", ValueError, "observed contains NaN or infinite values"),
    ("inf", "all", "inf", ValueError, "observed contains NaN or infinite values"),
    ("3d", "matrix", np.zeros((N, D, 1)), ValueError, "observed must be a 2-D array"),
    ("empty", "matrix", np.zeros((0, D)), ValueError, "observed must have at least one item"),
    ("ragged", "matrix", [[1.0, 2.0], [3.0]], TypeError, "observed must be a numeric array"),
    ("non-binary", "binary", "half", ValueError, "observed must contain only 0 and 1"),
    ("negative-count", "counts", "negative", ValueError, "observed must contain non-negative integer counts"),
    ("fractional-count", "counts", "half", ValueError, "observed must contain non-negative integer counts"),
    ("non-square", "adjacency", np.zeros((N, N - 1)), ValueError, "observed must be a square n x n adjacency matrix"),
    ("asymmetric", "adjacency", np.triu(np.ones((N, N)), 1), ValueError, "observed must be symmetric"),
    ("weighted", "adjacency", 2.0 * ADJACENCY, ValueError, "observed must contain only 0 and 1"),
    ("self-loop", "adjacency", np.eye(N), ValueError, "observed must have a zero diagonal"),
    ("empty", "adjacency", np.zeros((0, 0)), ValueError, "observed must have at least one vertex"),
]


def _data_kinds(name):
    if name == "InfiniteRelationalModel":
        return {"all", "adjacency"}
    kinds = {"all", "matrix"}
    if name == "BetaBernoulliMixture":
        kinds.add("binary")
    if name in ("DirichletMultinomialMixture", "GammaPoissonMixture"):
        kinds.add("counts")
    return kinds


def _bad_data(good, value):
    """The bad observed value: ``value`` itself, or ``good`` spoilt as ``value`` says."""
    if not isinstance(value, str) or value == "abc":
        return value
    bad = good.copy()
    bad[1, 0] = {"nan": np.nan, "inf": np.inf, "half": 0.5, "negative": -1.0}[value]
    if good is ADJACENCY:
        bad[0, 1] = bad[1, 0]
    return bad


# bad partition labels: (label, value, error, message)
PARTITION_BAD = [
    ("short", LABELS[:5], ValueError, "partition has 5 labels but observed has 6 rows"),
    ("float", LABELS.astype(float), TypeError, "partition must hold integer cluster labels"),
    ("negative", LABELS - 1, ValueError, "partition labels must lie in 0..5"),
    ("too-large", LABELS + 4, ValueError, "partition labels must lie in 0..5"),
    ("2d", LABELS[None, :], ValueError, "partition must be a 1-D vector of cluster labels"),
    ("string", "z", TypeError, "partition must hold integer cluster labels"),
    ("none", None, TypeError, "partition must hold integer cluster labels"),
]


def _mixture_rows():
    rows = []
    for name, (cls, data, hypers) in MIXTURES.items():
        for hyper, kind in hypers.items():
            for label, value, error, match in HYPER_BAD[kind]:
                build = lambda c=cls, x=data, h=hyper, v=value: c(
                    "x", partition=LABELS, observed=x, **{h: v}
                )  # noqa: E731
                rows.append(row(f"{name}-{hyper}-{label}", in_model(build), error, match.format(name=hyper)))
        for label, kinds, value, error, match in DATA_BAD:
            if kinds not in _data_kinds(name):
                continue
            bad = _bad_data(data, value)
            rows.append(
                row(
                    f"{name}-observed-{label}",
                    in_model(lambda c=cls, x=bad: c("x", partition=LABELS, observed=x)),
                    error,
                    match,
                )
            )
        for label, value, error, match in PARTITION_BAD:
            rows.append(
                row(
                    f"{name}-partition-{label}",
                    in_model(lambda c=cls, x=data, z=value: c("x", partition=z, observed=x)),
                    error,
                    match,
                )
            )
        rows.append(
            row(
                f"{name}-partition-float-rv",
                in_model(lambda c=cls, x=data: c("x", partition=pm.Normal("q", shape=N), observed=x)),
                TypeError,
                "partition must be an integer vector of cluster labels",
            )
        )
        rows.append(
            row(
                f"{name}-prior-n-mismatch",
                in_model(
                    lambda c=cls, x=data: c(
                        "x", partition=pmp.DirichletProcessPartition("z", alpha=1.0, n=N - 1), observed=x
                    )
                ),
                ValueError,
                "partition has 5 labels but observed has 6 rows",
            )
        )
        rows.append(
            row(
                f"{name}-size",
                in_model(lambda c=cls, x=data: c("x", partition=LABELS, observed=x, size=2)),
                ValueError,
                "size is not supported",
            )
        )
    for label, extra, match in [
        ("d-mismatch", dict(d=3), "d=3 does not match the 2 columns of observed"),
        ("shape", dict(shape=(N, 3)), "shape must be (n, 2)"),
    ]:
        rows.append(
            row(
                f"BetaBernoulliMixture-{label}",
                in_model(lambda e=extra: pmp.BetaBernoulliMixture("x", partition=LABELS, observed=BINARY, **e)),
                ValueError,
                match,
            )
        )
    rows.append(
        row(
            "BetaBernoulliMixture-dist-no-d",
            lambda: pmp.BetaBernoulliMixture.dist(partition=LABELS),
            ValueError,
            "d (the number of features) is required",
        )
    )
    rows.append(
        row(
            "NormalGammaMixture-a0-rv-length",
            in_model(
                lambda: pmp.NormalGammaMixture(
                    "x", partition=LABELS, a0=pm.Gamma("a0", 1.0, 1.0, shape=3), observed=REAL
                )
            ),
            ValueError,
            "a0 must be a scalar or have length 2, got a variable of length 3",
        )
    )
    rows.append(
        row(
            "NormalInverseWishartMixture-Psi0-rv-shape",
            in_model(
                lambda: pmp.NormalInverseWishartMixture(
                    "x", partition=LABELS, Psi0=pm.Normal("p", shape=(3, 3)), observed=REAL
                )
            ),
            ValueError,
            "Psi0 must be a 2 x 2 matrix, got static shape (3, 3)",
        )
    )
    dm = pmp.DirichletMultinomialMixture
    for label, totals, error, match in [
        ("length", [1, 2], ValueError, "totals must have one entry per item (6)"),
        ("negative", [-1] * N, ValueError, "totals must hold non-negative integers"),
        ("fractional", [1.5] * N, ValueError, "totals must hold non-negative integers"),
        ("nan", [np.nan] * N, ValueError, "totals must hold non-negative integers"),
        ("2d", [[1] * N], ValueError, "totals must be a 1-D vector"),
        ("string", "abc", TypeError, "totals must be a number"),
    ]:
        rows.append(
            row(
                f"DirichletMultinomialMixture-totals-{label}",
                in_model(lambda t=totals: dm("x", partition=LABELS, observed=COUNTS, totals=t)),
                error,
                match,
            )
        )
    rows.append(
        row(
            "DirichletMultinomialMixture-dist-no-totals",
            lambda: dm.dist(partition=LABELS, d=D),
            ValueError,
            "totals is required for DirichletMultinomialMixture.dist without observed data",
        )
    )
    return rows


# --------------------------------------------------------------------------- step methods


def _model(alpha=1.0, prior=None, mixture=None):
    """A small model: partition ``z`` of N items (DP by default) and a Normal-Gamma mixture (by default)."""
    with pm.Model() as model:
        z = prior() if prior else pmp.DirichletProcessPartition("z", alpha=alpha() if callable(alpha) else alpha, n=N)
        if mixture:
            mixture(z)
        else:
            pmp.NormalGammaMixture("x", partition=z, observed=REAL)
    return model


def step_call(make, *args, model=None, **kwargs):
    """A call that builds ``make(model["z"], *args, model=model, **kwargs)`` on ``model`` (default :func:`_model`)."""

    def call():
        m = _model() if model is None else model()
        with m:
            make(m["z"], *args, model=m, **kwargs)

    return call


def step_at(point_changes, model=None, make=None):
    """A call that builds a step (``make``, default GibbsStep) and runs one ``step()`` at the changed initial point."""

    def call():
        m = model() if model else _model(alpha=lambda: pm.Normal("alpha", 1.0, 1.0))
        step = (make or pmp.GibbsStep)(m["z"], model=m)
        step.step({**m.initial_point(), **point_changes})

    return call


STEPS = {
    "GibbsStep": pmp.GibbsStep,
    "SplitMergeStep": pmp.SplitMergeStep,
    "PastStatesSplitMergeStep": pmp.PastStatesSplitMergeStep,
    "ARMStep": pmp.ARMStep,
    "MinHashSplitMergeStep": pmp.MinHashSplitMergeStep,
    "HybridDPStep": pmp.HybridDPStep,
    "TreeGuidedStep": pmp.TreeGuidedStep,
    "SubClusterSplitMergeStep": pmp.SubClusterSplitMergeStep,
    "TemperedGibbsStep": pmp.TemperedGibbsStep,
}


def _step_rows():
    rows = []
    for name, make in STEPS.items():
        rows += [
            row(
                f"{name}-vars-not-partition",
                step_call_on(make, "alpha"),
                TypeError,
                "vars must hold a partition variable",
            ),
            row(
                f"{name}-vars-observed", step_call_on(make, "x"), ValueError, "not random variables in the model: ['x']"
            ),
            row(
                f"{name}-vars-two-partitions",
                _two_partitions(make),
                ValueError,
                "vars must hold one partition variable",
            ),
            row(
                f"{name}-no-observation-model",
                _no_observation_model(make),
                ValueError,
                "no observation model uses partition 'z'",
            ),
            row(
                f"{name}-two-observation-models", _two_observation_models(make), ValueError, "has 2 observation models"
            ),
            row(
                f"{name}-vars-int",
                step_call_on(make, 3),
                TypeError,
                "vars",
            ),
            row(
                f"{name}-model-string",
                lambda m=make: m(_model()["z"], model="m"),
                TypeError,
                "model",
            ),
            row(
                f"{name}-rng-string",
                step_call(make, rng="x"),
                TypeError,
                "rng",
            ),
            row(
                f"{name}-compile_kwargs-int",
                step_call(make, compile_kwargs=3),
                TypeError,
                "compile_kwargs",
            ),
            (
                row(f"{name}-n=1", _one_item(make), ValueError, "needs a partition of at least 2 items")
                if make not in (pmp.GibbsStep, pmp.HybridDPStep, pmp.TemperedGibbsStep)  # one item: a sweep is valid
                else None
            ),
        ]
        for label, keep, match in [
            ("repeated", [0, 0], "keep_items must not contain repeated indices"),
            ("out-of-range", [N], "keep_items must be indices in 0 .. 5"),
            ("negative", [-1], "keep_items must be indices in 0 .. 5"),
            ("float", [0.5], "keep_items must hold integer item indices"),
            ("2d", [[0]], "keep_items must be a 1-D list of item indices"),
            ("string", "a", "keep_items must be a 1-D list of item indices"),
        ]:
            rows.append(row(f"{name}-keep_items-{label}", step_call(make, keep_items=keep), ValueError, match))
    options = [
        ("GibbsStep", dict(n_sweeps=0), ValueError, "n_sweeps must be an integer >= 1"),
        ("GibbsStep", dict(n_sweeps=1.5), ValueError, "n_sweeps must be an integer >= 1"),
        ("GibbsStep", dict(n_sweeps=True), ValueError, "n_sweeps must be an integer >= 1"),
        ("GibbsStep", dict(n_sweeps="2"), ValueError, "n_sweeps must be an integer >= 1"),
        ("SplitMergeStep", dict(n_intermediate=-1), ValueError, "n_intermediate must be an integer >= 0"),
        ("SplitMergeStep", dict(n_intermediate=2.0), ValueError, "n_intermediate must be an integer >= 0"),
        ("SplitMergeStep", dict(n_moves=0), ValueError, "n_moves must be an integer >= 1"),
        ("SplitMergeStep", dict(n_moves=1.5), ValueError, "n_moves must be an integer >= 1"),
        ("SplitMergeStep", dict(gibbs_sweep="yes"), TypeError, "gibbs_sweep must be True or False"),
        ("SplitMergeStep", dict(gibbs_sweep=None), TypeError, "gibbs_sweep must be True or False"),
        ("SplitMergeStep", dict(init="past_states"), TypeError, "use pmp.PastStatesSplitMergeStep"),
        ("PastStatesSplitMergeStep", dict(hyperparameters="nuts"), ValueError, "hyperparameters must be"),
        ("PastStatesSplitMergeStep", dict(n_intermediate=-1), ValueError, "n_intermediate must be an integer >= 0"),
        ("ARMStep", dict(variant="rarm"), ValueError, "variant must be one of"),
        ("ARMStep", dict(variant="ARM"), ValueError, "variant must be one of"),
        ("ARMStep", dict(variant=None), ValueError, "variant must be one of"),
        ("ARMStep", dict(variant="arm_past"), ValueError, "variant must be one of ['arm', 'sarm', 'srm', 'arm-past'], got 'arm_past'"),
        ("ARMStep", dict(variant="ARM-PAST"), ValueError, "variant must be one of ['arm', 'sarm', 'srm', 'arm-past'], got 'ARM-PAST'"),
        ("ARMStep", dict(variant="arm-past", n_moves=0), ValueError, "n_moves must be an integer >= 1"),
        ("ARMStep", dict(n_moves=0), ValueError, "n_moves must be an integer >= 1"),
        ("ARMStep", dict(gibbs_sweep=1), TypeError, "gibbs_sweep must be True or False"),
        ("ARMStep", dict(hyperparameters="nuts"), ValueError, "hyperparameters must be"),
        ("ARMStep", dict(hyperparameters=True), ValueError, "hyperparameters must be"),
        ("MinHashSplitMergeStep", dict(variant="minhash"), ValueError, "variant must be one of"),
        ("MinHashSplitMergeStep", dict(n_moves=0), ValueError, "n_moves must be an integer >= 1"),
        ("MinHashSplitMergeStep", dict(gibbs_sweep=1), TypeError, "gibbs_sweep must be True or False"),
        ("MinHashSplitMergeStep", dict(n_tables=0), ValueError, "n_tables must be an integer >= 1"),
        ("MinHashSplitMergeStep", dict(variant="lsh", n_bits=40), ValueError, "n_bits must be an integer between 1 and 30"),
        ("MinHashSplitMergeStep", dict(hash_seed=-1), ValueError, "hash_seed must be an integer >= 0"),
        ("HybridDPStep", dict(n_shards=0), ValueError, f"n_shards must lie in 1 .. {N}"),
        ("HybridDPStep", dict(n_shards=N + 1), ValueError, f"n_shards must lie in 1 .. {N}"),
        ("HybridDPStep", dict(n_shards=2.0), TypeError, "n_shards must be an integer"),
        ("HybridDPStep", dict(sync_every=0), ValueError, "sync_every must be an integer >= 1"),
        ("HybridDPStep", dict(sync_every=1.5), ValueError, "sync_every must be an integer >= 1"),
        ("HybridDPStep", dict(warm_start=-1), ValueError, "warm_start must be an integer >= 0"),
        ("HybridDPStep", dict(warm_start=True), ValueError, "warm_start must be an integer >= 0"),
        ("HybridDPStep", dict(backend="dask"), ValueError, 'backend must be "local" or a dask.distributed.Client'),
        ("HybridDPStep", dict(backend=None), TypeError, 'backend must be "local" or a dask.distributed.Client'),
        ("HybridDPStep", dict(backend=3), TypeError, 'backend must be "local" or a dask.distributed.Client'),
        ("HybridDPStep", dict(n_proposals=-1), ValueError, "n_proposals must be an integer >= 0"),
        ("HybridDPStep", dict(n_proposals=0.5), ValueError, "n_proposals must be an integer >= 0"),
        ("SubClusterSplitMergeStep", dict(n_proposals=-1), ValueError, "n_proposals must be an integer >= 0"),
        ("SubClusterSplitMergeStep", dict(n_proposals=2.5), ValueError, "n_proposals must be an integer >= 0"),
        ("SubClusterSplitMergeStep", dict(n_launch_sweeps=-1), ValueError, "n_launch_sweeps must be an integer >= 0"),
        ("SubClusterSplitMergeStep", dict(n_refine_sweeps="1"), ValueError, "n_refine_sweeps must be an integer >= 0"),
        ("SubClusterSplitMergeStep", dict(n_global_sweeps=True), ValueError, "n_global_sweeps must be an integer >= 0"),
        ("SubClusterSplitMergeStep", dict(n_shards=0), ValueError, f"n_shards must lie in 1 .. {N}"),
        ("SubClusterSplitMergeStep", dict(n_shards=N + 1), ValueError, f"n_shards must lie in 1 .. {N}"),
        ("SubClusterSplitMergeStep", dict(n_shards=2.0), TypeError, "n_shards must be an integer"),
        ("SubClusterSplitMergeStep", dict(backend="dask"), ValueError, 'backend must be "local" or a dask.distributed.Client'),
        ("SubClusterSplitMergeStep", dict(backend=None), TypeError, 'backend must be "local" or a dask.distributed.Client'),
        ("SubClusterSplitMergeStep", dict(backend=3), TypeError, 'backend must be "local" or a dask.distributed.Client'),
        ("TreeGuidedStep", dict(n_global=-1), ValueError, "n_global must be an integer >= 0"),
        ("TreeGuidedStep", dict(n_global=2.5), ValueError, "n_global must be an integer >= 0"),
        ("TreeGuidedStep", dict(n_local=-1), ValueError, "n_local must be an integer >= 0"),
        ("TreeGuidedStep", dict(n_local="1"), ValueError, "n_local must be an integer >= 0"),
        ("TreeGuidedStep", dict(D=0), ValueError, "D must be an integer >= 1"),
        ("TreeGuidedStep", dict(D=None), ValueError, "D must be an integer >= 1"),
        ("TemperedGibbsStep", dict(ladder=(1.0,)), ValueError, "ladder must hold at least two levels"),
        ("TemperedGibbsStep", dict(ladder=(0.9, 0.5)), ValueError, "ladder must start at 1.0"),
        ("TemperedGibbsStep", dict(ladder=(1.0, 0.5, 0.7)), ValueError, "ladder must be strictly decreasing"),
        ("TemperedGibbsStep", dict(ladder=(1.0, 0.0)), ValueError, "ladder must hold numbers in (0, 1]"),
        ("TemperedGibbsStep", dict(ladder="1.0, 0.5"), ValueError, "ladder must"),
        ("TemperedGibbsStep", dict(n_sweeps=0), ValueError, "n_sweeps must be an integer >= 1"),
        ("TemperedGibbsStep", dict(n_split_merge=-1), ValueError, "n_split_merge must be an integer >= 0"),
        ("TemperedGibbsStep", dict(n_split_merge=1.5), ValueError, "n_split_merge must be an integer >= 0"),
    ]
    for name, kwargs, error, match in options:
        label = "-".join(f"{k}={v}" for k, v in kwargs.items())
        rows.append(row(f"{name}-{label}", step_call(STEPS[name], **kwargs), error, match))
    irm = lambda: _model(  # noqa: E731
        mixture=lambda z: pmp.InfiniteRelationalModel("x", partition=z, a=1.0, b=1.0, observed=ADJACENCY)
    )
    normal = lambda: _model(  # noqa: E731
        mixture=lambda z: pmp.NormalMixture(
            "x", partition=z, mu=pm.Normal("mu", 0.0, 1.0, shape=(N, D)), tau=pm.Gamma("tau", 2.0, 2.0, shape=(N, D)),
            observed=REAL,
        )
    )
    rows += [
        row("TreeGuidedStep-relational-model", step_call(pmp.TreeGuidedStep, model=irm), TypeError, "TreeGuidedStep samples conjugate mixtures (cluster parameters integrated out), not relational models"),
        row(
            "TreeGuidedStep-parametric-model",
            step_call(pmp.TreeGuidedStep, model=normal),
            TypeError,
            "not models whose clusters keep explicit parameters",
        ),
    ]
    rows.append(
        row(
            "GibbsStep-vars-partition-and-alpha",
            lambda: _gibbs_with_alpha(),
            TypeError,
            "GibbsStep samples the partition variable 'z' only",
        )
    )
    # one transition, with the bad value in the sampler's point
    py = lambda: _model(
        prior=lambda: pmp.PitmanYorPartition("z", alpha=1.0, sigma=pm.Normal("sigma", 0.3, 0.1), n=N)
    )  # noqa: E731
    bb_b = lambda: _model(
        mixture=lambda z: pmp.BetaBernoulliMixture("x", partition=z, b=pm.Normal("b", 1.0, 1.0), observed=BINARY)
    )  # noqa: E731
    niw = lambda: _model(  # noqa: E731
        mixture=lambda z: pmp.NormalInverseWishartMixture(
            "x", partition=z, Psi0=pm.Normal("s", 1.0, 1.0) * np.eye(D), observed=REAL
        )
    )
    rows += [
        row("step-alpha-out-of-support", step_at({"alpha": np.array(-0.7)}), ValueError, "alpha must be > 0"),
        row("step-alpha-nan", step_at({"alpha": np.array(np.nan)}), ValueError, "alpha must be finite"),
        row(
            "step-sigma-out-of-support",
            step_at({"sigma": np.array(1.2)}, model=py),
            ValueError,
            "sigma must be in [0, 1)",
        ),
        row("step-family-b-out-of-support", step_at({"b": np.array(-1.0)}, model=bb_b), ValueError, "b must be > 0"),
        row(
            "step-family-Psi0-not-positive-definite",
            step_at({"s": np.array(-1.0)}, model=niw),
            ValueError,
            "Psi0 must be positive definite",
        ),
        row("step-z-fractional", step_at({"z": np.full(N, 0.5)}), ValueError, "z must hold integer cluster labels"),
        row(
            "step-z-nan",
            step_at({"z": np.array([0, 0, 0, 0, 0, np.nan])}),
            ValueError,
            "z must hold integer cluster labels",
        ),
        row(
            "step-z-short",
            step_at({"z": np.zeros(N - 1, dtype=np.int32)}),
            ValueError,
            "z must be a 1-D label vector of length 6",
        ),
        row(
            "step-z-2d",
            step_at({"z": np.zeros((1, N), dtype=np.int32)}),
            ValueError,
            "z must be a 1-D label vector of length 6",
        ),
        row("ARMStep-step-outside-pm.sample", step_at({}, make=pmp.ARMStep), ValueError, "population step"),
        row("ARMStep-two-chains", _arm_two_chains, ValueError, "needs pm.sample(chains=...) >= 3"),
        row(
            "HybridDPStep-MFM-prior",
            step_call(
                pmp.HybridDPStep,
                model=lambda: _model(prior=lambda: pmp.MixtureOfFiniteMixturesPartition("z", gamma=1.0, k_prior=K_PRIOR, n=N)),
            ),
            TypeError,
            "HybridDPStep needs a DirichletProcessPartition or PitmanYorPartition prior, got a MixtureOfFiniteMixturesPartition",
        ),
        row(
            "HybridDPStep-relational-model",
            step_call(
                pmp.HybridDPStep,
                model=lambda: _model(mixture=lambda z: pmp.InfiniteRelationalModel("x", partition=z, observed=ADJACENCY)),
            ),
            TypeError,
            "HybridDPStep samples conjugate mixtures (cluster parameters integrated out), not relational models",
        ),
        row(
            "SubClusterSplitMergeStep-global-sweeps-MFM-prior",
            step_call(
                pmp.SubClusterSplitMergeStep,
                model=lambda: _model(prior=lambda: pmp.MixtureOfFiniteMixturesPartition("z", gamma=1.0, k_prior=K_PRIOR, n=N)),
            ),
            ValueError,
            "global iteration (n_global_sweeps > 0) needs a DirichletProcessPartition or PitmanYorPartition prior; "
            "with this prior use n_global_sweeps=0",
        ),
        row(
            "SubClusterSplitMergeStep-relational-model",
            step_call(
                pmp.SubClusterSplitMergeStep,
                model=lambda: _model(mixture=lambda z: pmp.InfiniteRelationalModel("x", partition=z, observed=ADJACENCY)),
            ),
            TypeError,
            "SubClusterSplitMergeStep samples conjugate mixtures (cluster parameters integrated out), not relational models",
        ),
        row(
            "SubClusterSplitMergeStep-parametric-model",
            step_call(pmp.SubClusterSplitMergeStep, model=normal),
            TypeError,
            "SubClusterSplitMergeStep samples conjugate mixtures (cluster parameters integrated out), not models whose "
            "clusters keep explicit parameters",
        ),
        row(
            "HybridDPStep-n_proposals-n=1",
            _one_item(lambda z, model: pmp.HybridDPStep(z, model=model, n_proposals=1)),
            ValueError,
            "HybridDPStep with n_proposals > 0 needs a partition of at least 2 items",
        ),
        row(
            "PastStatesSplitMergeStep-step-outside-pm.sample",
            step_at({}, make=lambda z, model: pmp.PastStatesSplitMergeStep(z, model=model)),
            ValueError,
            "population step",
        ),
    ]
    return [r for r in rows if r is not None]


def step_call_on(make, var):
    """A call that builds ``make(vars)`` with ``vars`` the model variable named ``var`` (or ``var`` itself)."""

    def call():
        m = _model(alpha=lambda: pm.Gamma("alpha", 1.0, 1.0))
        with m:
            make(m[var] if isinstance(var, str) else var, model=m)

    return call


def _two_partitions(make):
    def call():
        with pm.Model() as m:
            z1 = pmp.DirichletProcessPartition("z1", alpha=1.0, n=N)
            z2 = pmp.DirichletProcessPartition("z2", alpha=1.0, n=N)
            pmp.NormalGammaMixture("x1", partition=z1, observed=REAL)
            pmp.NormalGammaMixture("x2", partition=z2, observed=REAL)
            make([z1, z2], model=m)

    return call


def _no_observation_model(make):
    def call():
        with pm.Model() as m:
            z = pmp.DirichletProcessPartition("z", alpha=1.0, n=N)
            make(z, model=m)

    return call


def _two_observation_models(make):
    def call():
        with pm.Model() as m:
            z = pmp.DirichletProcessPartition("z", alpha=1.0, n=N)
            pmp.NormalGammaMixture("x1", partition=z, observed=REAL)
            pmp.NormalGammaMixture("x2", partition=z, observed=REAL)
            make(z, model=m)

    return call


def _one_item(make):
    def call():
        with pm.Model() as m:
            z = pmp.DirichletProcessPartition("z", alpha=1.0, n=1)
            pmp.NormalGammaMixture("x", partition=z, observed=REAL[:1])
            make(z, model=m)

    return call


def _gibbs_with_alpha():
    m = _model(alpha=lambda: pm.Gamma("alpha", 1.0, 1.0))
    pmp.GibbsStep([m["z"], m["alpha"]], model=m)


def _arm_two_chains():
    m = _model()
    point = m.initial_point()
    pmp.ARMStep(m["z"], model=m).link_population([point, point], 0)


# --------------------------------------------------------------------------- summaries

SUMMARIES = {
    "summarize": pmp.summarize,
    "posterior_similarity": pmp.posterior_similarity,
    "point_partition": pmp.point_partition,
    "expected_loss": lambda idata, **kw: pmp.expected_loss(idata, [0, 0, 1, 1], **kw),
}

IDATA_BAD = [
    ("ndarray", np.zeros((1, 2, 4), dtype=int), TypeError, "idata must be an arviz.InferenceData or xarray.DataTree"),
    ("list", [[[0, 0, 1, 1]]], TypeError, "idata must be an arviz.InferenceData or xarray.DataTree"),
    ("dict", {"posterior": {"z": np.zeros((1, 2, 4), dtype=int)}}, TypeError, "idata must be an arviz.InferenceData"),
    ("none", None, TypeError, "idata must be an arviz.InferenceData or xarray.DataTree"),
    ("posterior-group", POSTERIOR.posterior, TypeError, "idata must be an arviz.InferenceData or xarray.DataTree"),
]

POSTERIOR_BAD = [
    ("fractional", np.array([[[0, 0, 1, 1.5]]]), ValueError, "posterior['z'] must hold integer cluster labels"),
    ("nan", np.array([[[0, 0, 1, np.nan]]]), ValueError, "posterior['z'] must hold integer cluster labels"),
    ("bool", np.array([[[True, False, True, True]]]), TypeError, "posterior['z'] must hold integer cluster labels"),
    ("no-item-axis", np.array([[0, 0, 1, 1]]), ValueError, "posterior['z'] must have dims (chain, draw, n)"),
    ("no-draws", np.zeros((1, 0, 4), dtype=int), ValueError, "posterior['z'] must hold at least one draw"),
    ("no-items", np.zeros((1, 3, 0), dtype=int), ValueError, "posterior['z'] must hold at least one draw"),
]

# bad label vectors for the functions that take one, 4 items expected
LABELS_BAD = [
    ("fractional", [0, 0, 1, 1.5], ValueError, "{name} must hold integer cluster labels"),
    ("nan", [0, 0, 1, np.nan], ValueError, "{name} must hold integer cluster labels"),
    ("inf", [0, 0, 1, np.inf], ValueError, "{name} must hold integer cluster labels"),
    ("bool", [True, True, False, False], TypeError, "{name} must hold integer cluster labels"),
    ("string", "abcd", TypeError, "{name} must hold integer cluster labels"),
    ("none", None, TypeError, "{name} must hold integer cluster labels"),
    ("ragged", [[0, 1], [0]], ValueError, "{name} must be a rectangular array"),
    ("scalar", 3, ValueError, "{name} must have at least one dimension"),
]
LENGTH_BAD = [
    ("short", [0, 0, 1], ValueError, "{name} must be a 1-D label vector of length 4"),
    ("2d", [[0, 0, 1, 1]], ValueError, "{name} must be a 1-D label vector of length 4"),
    ("empty", [], ValueError, "{name} must be a 1-D label vector of length 4"),
]
PAIR_LENGTH_BAD = [
    ("short", [0, 0, 1], ValueError, "a and b must be 1-D label vectors of the same length"),
    ("2d", [[0, 0, 1, 1]], ValueError, "a and b must be 1-D label vectors of the same length"),
]

ITEMS_BAD = [
    ("float", [0.0, 1.0], "items must hold integer item indices"),
    ("out-of-range", [0, 4], "items must be indices in 0 .. 3"),
    ("negative", [-1, 2], "items must be indices in 0 .. 3"),
    ("repeated", [1, 1], "items must not contain repeated indices"),
    ("empty", [], "items must be a non-empty 1-D list of item indices"),
    ("2d", [[0, 1]], "items must be a non-empty 1-D list of item indices"),
    ("string", "ab", "items must be a non-empty 1-D list of item indices"),
]


def _summary_rows():
    rows = []
    for name, fn in SUMMARIES.items():
        for label, idata, error, match in IDATA_BAD:
            rows.append(row(f"{name}-idata-{label}", lambda f=fn, i=idata: f(i), error, match))
        for label, draws, error, match in POSTERIOR_BAD:
            idata = az.from_dict(posterior={"z": draws})
            rows.append(row(f"{name}-posterior-{label}", lambda f=fn, i=idata: f(i), error, match))
        rows.append(
            row(f"{name}-var_name-int", lambda f=fn: f(POSTERIOR, var_name=3), TypeError, "var_name must be a string")
        )
        if name != "summarize":
            rows.append(
                row(
                    f"{name}-var_name-missing",
                    lambda f=fn: f(POSTERIOR, var_name="w"),
                    ValueError,
                    "keep 'w' in the trace",
                )
            )
            for label, items, match in ITEMS_BAD:
                call = (
                    (lambda i=items: pmp.expected_loss(POSTERIOR, [0, 0], items=i))
                    if name == "expected_loss"
                    else (lambda f=fn, i=items: f(POSTERIOR, items=i))
                )
                rows.append(row(f"{name}-items-{label}", call, ValueError, match))
    for name, choices in (("point_partition", "loss must be one of 'VI', 'Binder', 'PEAR'"),
                          ("expected_loss", "loss must be 'VI' or 'Binder'")):
        fn = SUMMARIES[name]
        rows.append(row(f"{name}-loss-unknown", lambda f=fn: f(POSTERIOR, loss="L2"), ValueError, choices))
        rows.append(row(f"{name}-loss-int", lambda f=fn: f(POSTERIOR, loss=3), ValueError, choices))
    for option in ("n_starts", "max_sweeps"):
        for value, error in [(0, ValueError), (-1, ValueError), (1.5, TypeError), (True, TypeError)]:
            rows.append(
                row(
                    f"point_partition-{option}={value}",
                    lambda o=option, v=value: pmp.point_partition(POSTERIOR, **{o: v}),
                    error,
                    f"{option} must be a positive integer",
                )
            )
    for value, error in [("x", TypeError), (-1, ValueError), (1.5, TypeError), (True, TypeError)]:
        rows.append(
            row(
                f"point_partition-random_seed={value}",
                lambda v=value: pmp.point_partition(POSTERIOR, random_seed=v),
                error,
                "random_seed must be None, a non-negative integer",
            )
        )
    label_args = {
        "expected_loss-partition": ("partition", lambda v: pmp.expected_loss(POSTERIOR, v), LABELS_BAD + LENGTH_BAD),
        # reference=None means "no reference"
        "summarize-reference": (
            "reference",
            lambda v: pmp.summarize(POSTERIOR, reference=v),
            [bad for bad in LABELS_BAD + LENGTH_BAD if bad[0] != "none"],
        ),
        "relabel": ("z", pmp.relabel, LABELS_BAD),
        "vi_distance-a": ("a", lambda v: pmp.vi_distance(v, [0, 0, 1, 1]), LABELS_BAD + PAIR_LENGTH_BAD),
        "vi_distance-b": ("b", lambda v: pmp.vi_distance([0, 0, 1, 1], v), LABELS_BAD + PAIR_LENGTH_BAD),
        "adjusted_rand_index-a": (
            "a",
            lambda v: pmp.adjusted_rand_index(v, [0, 0, 1, 1]),
            LABELS_BAD + PAIR_LENGTH_BAD,
        ),
        "adjusted_rand_index-b": (
            "b",
            lambda v: pmp.adjusted_rand_index([0, 0, 1, 1], v),
            LABELS_BAD + PAIR_LENGTH_BAD,
        ),
    }
    for id_, (arg, fn, bad_values) in label_args.items():
        for label, value, error, match in bad_values:
            rows.append(row(f"{id_}-{label}", lambda f=fn, v=value: f(v), error, match.format(name=arg)))
    for fn in ("vi_distance", "adjusted_rand_index"):
        rows.append(
            row(
                f"{fn}-empty",
                lambda f=getattr(pmp, fn): f([], []),
                ValueError,
                "a and b must contain at least one item",
            )
        )
    return rows


# --------------------------------------------------------------------------- dataset loaders


def _dataset_rows():
    rows = []
    for value in (0, 4, "1", 1.5, True, None, [1]):
        rows.append(
            row(
                f"bernoulli_mixture-example={value!r}",
                lambda v=value: datasets.bernoulli_mixture(example=v),
                ValueError,
                "example must be 1, 2 or 3",
            )
        )
    for value, error in [("x", TypeError), (-1, ValueError), (1.5, TypeError), (True, TypeError)]:
        rows.append(
            row(
                f"bernoulli_mixture-random_seed={value!r}",
                lambda v=value: datasets.bernoulli_mixture(random_seed=v),
                error,
                "random_seed must be None, a non-negative integer",
            )
        )
    good = datasets.nips234_coauthor()
    for label, adjacency, error, match in [
        ("string", "A", TypeError, "adjacency must be a numeric adjacency matrix"),
        ("ragged", [[0, 1], [1]], TypeError, "adjacency must be a numeric adjacency matrix"),
        ("3d", np.zeros((2, 2, 2)), ValueError, "adjacency must be a square n x n adjacency matrix"),
        ("non-square", np.zeros((2, 3)), ValueError, "adjacency must be a square n x n adjacency matrix"),
        ("empty", np.zeros((0, 0)), ValueError, "adjacency must have at least one vertex"),
        ("asymmetric", np.triu(np.ones((3, 3)), 1), ValueError, "adjacency must be symmetric"),
        ("weighted", 2.0 * ADJACENCY, ValueError, "adjacency must contain only 0 and 1"),
        ("self-loop", np.eye(3), ValueError, "adjacency must have a zero diagonal"),
        ("nan", np.full((2, 2), np.nan), ValueError, "adjacency contains NaN or infinite values"),
    ]:
        rows.append(
            row(
                f"downsample_by_degree-adjacency-{label}",
                lambda a=adjacency: datasets.downsample_by_degree(a, 0.5),
                error,
                match,
            )
        )
    for label, fraction, error, match in [
        ("zero", 0, ValueError, "fraction must lie in (0, 1]"),
        ("above-1", 1.5, ValueError, "fraction must lie in (0, 1]"),
        ("negative", -0.1, ValueError, "fraction must lie in (0, 1]"),
        ("nan", np.nan, ValueError, "fraction must lie in (0, 1]"),
        ("rounds-to-0", 1e-5, ValueError, "rounds to 0 vertices"),
        ("string", "0.5", TypeError, "fraction must be a number in (0, 1]"),
        ("none", None, TypeError, "fraction must be a number in (0, 1]"),
        ("bool", True, TypeError, "fraction must be a number in (0, 1]"),
        ("array", np.array(0.5), TypeError, "fraction must be a number in (0, 1]"),
    ]:
        rows.append(
            row(
                f"downsample_by_degree-fraction-{label}",
                lambda f=fraction: datasets.downsample_by_degree(good, f),
                error,
                match,
            )
        )
    return rows


def _initial_point(build):
    """A call that builds a model (``build()`` inside a fresh ``pm.Model``) and computes its initial point."""

    def call():
        with pm.Model() as model:
            build()
        model.initial_point()

    return call


def _ngg(**hypers):
    """An NGG prior (``u`` an ``NGGAuxiliary``) with ``hypers`` replacing its defaults."""
    values = {"alpha": 1.0, "sigma": 0.3, "tau": 1.0, **hypers}
    u = values.pop("u", None)
    if u is None:
        u = pmp.NGGAuxiliary("u", n=N, **values)
    return pmp.NGGPartition("z", u=u, n=N, **values)


def _issue_33_item_3():
    """The reproduction of issue 33, item 3: ``pm.sample`` with ``sigma = pm.Uniform("sigma", -1, 1)``, initially 0."""
    with pm.Model():
        sigma = pm.Uniform("sigma", -1.0, 1.0)
        z = _ngg(sigma=sigma)
        pmp.NormalGammaMixture("x", partition=z, observed=REAL)
        pm.sample(draws=5, tune=5, chains=1, progressbar=False, compute_convergence_checks=False, random_seed=1)


def _boundary_rows():
    """Hyperpriors whose initial value sits on (or beyond) the boundary of the support (issue 33, item 3).

    ``pm.Uniform`` starts at its midpoint and ``pm.Normal`` at its mean, so a
    prior symmetric about a boundary starts on it; ``pm.HalfNormal``,
    ``pm.Exponential`` and ``pm.Gamma`` start inside ``(0, inf)``.  A partition
    prior's hyperparameters are refused when PyMC computes the initial point
    (before any sampler or random draw sees them); an observation model has no
    initial point of its own (it is observed), so its hyperparameters are
    refused by the step before its first transition.  Either way a ValueError
    naming the argument, its support and the fix.
    """
    fix = "give {name} a prior, or an initval, inside that support"
    prior_cases = [
        ("DirichletProcessPartition-alpha-Normal(0,1)",
         lambda: pmp.DirichletProcessPartition("z", alpha=pm.Normal("alpha", 0.0, 1.0), n=N),
         "DirichletProcessPartition: alpha must be > 0", "alpha"),
        ("PitmanYorPartition-sigma-Uniform(0,2)",
         lambda: pmp.PitmanYorPartition("z", alpha=1.0, sigma=pm.Uniform("sigma", 0.0, 2.0), n=N),
         "PitmanYorPartition: sigma must be in [0, 1)", "sigma"),
        ("PitmanYorPartition-alpha-Normal(-sigma,1)",
         lambda: pmp.PitmanYorPartition("z", alpha=pm.Normal("alpha", -0.3, 1.0), sigma=0.3, n=N),
         "PitmanYorPartition: alpha must be > -sigma", "alpha"),
        ("NGGPartition-sigma-Uniform(-1,1)", lambda: _ngg(sigma=pm.Uniform("sigma", -1.0, 1.0)), "sigma must be in (0, 1)", "sigma"),
        ("NGGPartition-alpha-Normal(0,1)", lambda: _ngg(alpha=pm.Normal("alpha", 0.0, 1.0), u=1.0),
         "NGGPartition: alpha must be > 0", "alpha"),
        ("NGGPartition-tau-Uniform(-2,0)", lambda: _ngg(tau=pm.Uniform("tau", -2.0, 0.0), u=1.0),
         "NGGPartition: tau must be >= 0", "tau"),
        ("NGGPartition-u-Normal(0,1)", lambda: _ngg(u=pm.Normal("u", 0.0, 1.0)), "NGGPartition: u must be > 0", "u"),
        ("NGGAuxiliary-sigma-Uniform(-1,1)",
         lambda: pmp.NGGAuxiliary("u", alpha=1.0, sigma=pm.Uniform("sigma", -1.0, 1.0), tau=1.0, n=N),
         "NGGAuxiliary: sigma must be in (0, 1)", "sigma"),
        ("NGGAuxiliary-alpha-Normal(0,1)",
         lambda: pmp.NGGAuxiliary("u", alpha=pm.Normal("alpha", 0.0, 1.0), sigma=0.3, tau=1.0, n=N),
         "NGGAuxiliary: alpha must be > 0", "alpha"),
        ("MixtureOfFiniteMixturesPartition-gamma-Normal(0,1)",
         lambda: pmp.MixtureOfFiniteMixturesPartition("z", gamma=pm.Normal("gamma", 0.0, 1.0), k_prior=K_PRIOR, n=N),
         "MixtureOfFiniteMixturesPartition: gamma must be > 0", "gamma"),
    ]
    rows = []
    for id, build, match, name in prior_cases:
        rows.append(row(f"initial-point-{id}", _initial_point(build), ValueError, match))
        rows.append(row(f"initial-point-{id}-fix", _initial_point(build), ValueError, fix.format(name=name)))
    rows.append(row("issue-33-item-3-pm.sample", _issue_33_item_3, ValueError, "sigma must be in (0, 1)"))
    h = lambda mean=0.0: pm.Normal("h", mean, 1.0)  # noqa: E731  starts at its mean
    mixture_cases = [
        ("NormalGammaMixture-kappa0", lambda z: pmp.NormalGammaMixture("x", partition=z, kappa0=h(), observed=REAL), "kappa0 must be > 0"),
        ("NormalGammaMixture-a0", lambda z: pmp.NormalGammaMixture("x", partition=z, a0=h(), observed=REAL), "a0 must be > 0"),
        ("NormalGammaMixture-b0", lambda z: pmp.NormalGammaMixture("x", partition=z, b0=h(), observed=REAL), "b0 must be > 0"),
        ("NormalInverseWishartMixture-kappa0",
         lambda z: pmp.NormalInverseWishartMixture("x", partition=z, kappa0=h(), observed=REAL), "kappa0 must be > 0"),
        ("NormalInverseWishartMixture-nu0-Uniform(0,2)",
         lambda z: pmp.NormalInverseWishartMixture("x", partition=z, nu0=pm.Uniform("h", 0.0, 2.0), observed=REAL),
         "nu0 must be > 1.0"),
        ("NormalInverseWishartMixture-Psi0",
         lambda z: pmp.NormalInverseWishartMixture("x", partition=z, Psi0=h() * np.eye(D), observed=REAL),
         "Psi0 must be positive definite"),
        ("BetaBernoulliMixture-a", lambda z: pmp.BetaBernoulliMixture("x", partition=z, a=h(), observed=BINARY), "a must be > 0"),
        ("BetaBernoulliMixture-b", lambda z: pmp.BetaBernoulliMixture("x", partition=z, b=h(), observed=BINARY), "b must be > 0"),
        ("DirichletMultinomialMixture-beta",
         lambda z: pmp.DirichletMultinomialMixture("x", partition=z, beta=h(), observed=COUNTS), "beta must be > 0"),
        ("GammaPoissonMixture-a", lambda z: pmp.GammaPoissonMixture("x", partition=z, a=h(), observed=COUNTS), "a must be > 0"),
        ("GammaPoissonMixture-b", lambda z: pmp.GammaPoissonMixture("x", partition=z, b=h(), observed=COUNTS), "b must be > 0"),
        ("InfiniteRelationalModel-a", lambda z: pmp.InfiniteRelationalModel("x", partition=z, a=h(), observed=ADJACENCY), "a must be > 0"),
        ("InfiniteRelationalModel-b", lambda z: pmp.InfiniteRelationalModel("x", partition=z, b=h(), observed=ADJACENCY), "b must be > 0"),
        ("NormalMixture-tau-alpha",
         lambda z: pmp.NormalMixture("x", partition=z, mu=pm.Normal("mu", 0.0, 1.0, shape=(3, D)),
                                     tau=pm.Gamma("tau", h(), 1.0, shape=(3, D)), observed=REAL),
         "a must be > 0"),
        ("NormalMixture-mu-sigma",
         lambda z: pmp.NormalMixture("x", partition=z, mu=pm.Normal("mu", 0.0, h(), shape=(3, D)),
                                     tau=pm.Gamma("tau", 2.0, 1.0, shape=(3, D)), observed=REAL),
         "1/sigma**2 are mu's pm.Normal parameters"),
    ]
    for id, mixture, match in mixture_cases:
        model = lambda m=mixture: _model(mixture=m)  # noqa: E731
        rows.append(row(f"initial-point-{id}", step_at({}, model=model), ValueError, match))
        rows.append(row(f"initial-point-{id}-fix", step_at({}, model=model), ValueError, "give it a prior, or an initval, inside its support"))
    return rows


RAISES = _prior_rows() + _mixture_rows() + _step_rows() + _summary_rows() + _dataset_rows() + _boundary_rows()


@pytest.mark.parametrize("call, error, match", RAISES)
def test_bad_input_raises_a_named_error(call, error, match):
    with pytest.raises(error) as info:
        call()
    assert match in str(info.value), str(info.value)


# --------------------------------------------------------------------------- random hyperparameters out of support


def _prior_model(cls, good, name):
    """A builder: ``h -> model`` with ``cls``'s hyperparameter ``name`` equal to ``h``, the others as in ``good``."""

    def build(h):
        with pm.Model() as model:
            cls("u" if cls is pmp.NGGAuxiliary else "z", **{**good, name: h() if callable(h) else h})
        return model

    return build


def _mixture_model(cls, data, name, wrap=None):
    """A builder: ``h -> model`` with ``cls`` on fixed labels and hyperparameter ``name`` equal to ``wrap(h)``."""

    def build(h):
        with pm.Model() as model:
            value = h() if callable(h) else h
            cls("x", partition=LABELS, observed=data, **{name: wrap(value) if wrap else value})
        return model

    return build


def _asymmetric(h):
    return pt.stack([pt.stack([pt.constant(1.0), pt.as_tensor(h, dtype="float64")]), pt.constant([0.0, 1.0])])


# (id, builder, mean of h ~ Normal(mean, 1), bad values of h, good values of h)
OUT_OF_SUPPORT = [
    (
        "DirichletProcessPartition-alpha",
        _prior_model(pmp.DirichletProcessPartition, dict(n=4), "alpha"),
        1.0,
        [0.0, -0.7, -5.7],
        [0.3, 2.0],
    ),
    (
        "PitmanYorPartition-alpha",
        _prior_model(pmp.PitmanYorPartition, dict(sigma=0.3, n=4), "alpha"),
        1.0,
        [-0.3, -0.7],
        [-0.2, 1.5],
    ),
    (
        "PitmanYorPartition-sigma",
        _prior_model(pmp.PitmanYorPartition, dict(alpha=1.0, n=4), "sigma"),
        0.3,
        [-0.1, 1.0, 1.5],
        [0.0, 0.5],
    ),
    (
        "NGGPartition-alpha",
        _prior_model(pmp.NGGPartition, dict(sigma=0.3, tau=1.0, u=1.0, n=4), "alpha"),
        1.0,
        [0.0, -1.0],
        [0.5],
    ),
    (
        "NGGPartition-sigma",
        _prior_model(pmp.NGGPartition, dict(alpha=1.0, tau=1.0, u=1.0, n=4), "sigma"),
        0.3,
        [0.0, 1.0, -0.2],
        [0.5],
    ),
    (
        "NGGPartition-tau",
        _prior_model(pmp.NGGPartition, dict(alpha=1.0, sigma=0.3, u=1.0, n=4), "tau"),
        1.0,
        [-0.5],
        [0.0, 2.0],
    ),
    (
        "NGGPartition-u",
        _prior_model(pmp.NGGPartition, dict(alpha=1.0, sigma=0.3, tau=1.0, n=4), "u"),
        1.0,
        [0.0, -1.0],
        [0.5],
    ),
    (
        "NGGAuxiliary-alpha",
        _prior_model(pmp.NGGAuxiliary, dict(sigma=0.3, tau=1.0, n=4), "alpha"),
        1.0,
        [0.0, -1.0],
        [0.5],
    ),
    (
        "NGGAuxiliary-sigma",
        _prior_model(pmp.NGGAuxiliary, dict(alpha=1.0, tau=1.0, n=4), "sigma"),
        0.3,
        [0.0, 1.0],
        [0.5],
    ),
    ("NGGAuxiliary-tau", _prior_model(pmp.NGGAuxiliary, dict(alpha=1.0, sigma=0.3, n=4), "tau"), 1.0, [-0.5], [0.0]),
    (
        "MixtureOfFiniteMixturesPartition-gamma",
        _prior_model(pmp.MixtureOfFiniteMixturesPartition, dict(k_prior=K_PRIOR, n=4), "gamma"),
        1.0,
        [0.0, -0.5],
        [0.5],
    ),
    ("BetaBernoulliMixture-a", _mixture_model(pmp.BetaBernoulliMixture, BINARY, "a"), 1.0, [0.0, -1.0], [0.5]),
    ("BetaBernoulliMixture-b", _mixture_model(pmp.BetaBernoulliMixture, BINARY, "b"), 1.0, [-1.0], [2.0]),
    ("NormalGammaMixture-kappa0", _mixture_model(pmp.NormalGammaMixture, REAL, "kappa0"), 1.0, [0.0, -1.0], [0.5]),
    ("NormalGammaMixture-a0", _mixture_model(pmp.NormalGammaMixture, REAL, "a0"), 1.0, [-1.0], [0.5]),
    ("NormalGammaMixture-b0", _mixture_model(pmp.NormalGammaMixture, REAL, "b0"), 1.0, [-1.0], [0.5]),
    (
        "NormalInverseWishartMixture-kappa0",
        _mixture_model(pmp.NormalInverseWishartMixture, REAL, "kappa0"),
        1.0,
        [0.0, -1.0],
        [0.5],
    ),
    (
        "NormalInverseWishartMixture-nu0",
        _mixture_model(pmp.NormalInverseWishartMixture, REAL, "nu0"),
        3.0,
        [1.0, 0.0],
        [1.5, 4.0],
    ),
    (
        "NormalInverseWishartMixture-Psi0-not-positive-definite",
        _mixture_model(pmp.NormalInverseWishartMixture, REAL, "Psi0", wrap=lambda h: h * np.eye(D)),
        1.0,
        [0.0, -1.0],
        [0.5],
    ),
    (
        "NormalInverseWishartMixture-Psi0-asymmetric",
        _mixture_model(pmp.NormalInverseWishartMixture, REAL, "Psi0", wrap=_asymmetric),
        0.0,
        [0.5, -0.2],
        [0.0],
    ),
    (
        "DirichletMultinomialMixture-beta",
        _mixture_model(pmp.DirichletMultinomialMixture, COUNTS, "beta"),
        1.0,
        [0.0, -1.0],
        [0.5],
    ),
    ("GammaPoissonMixture-a", _mixture_model(pmp.GammaPoissonMixture, COUNTS, "a"), 1.0, [-1.0], [0.5]),
    ("GammaPoissonMixture-b", _mixture_model(pmp.GammaPoissonMixture, COUNTS, "b"), 1.0, [0.0], [0.5]),
    ("InfiniteRelationalModel-a", _mixture_model(pmp.InfiniteRelationalModel, ADJACENCY, "a"), 1.0, [0.0, -1.0], [0.5]),
    ("InfiniteRelationalModel-b", _mixture_model(pmp.InfiniteRelationalModel, ADJACENCY, "b"), 1.0, [-1.0], [0.5]),
]


@pytest.mark.parametrize("build, mean, bad, good", [pytest.param(*spec, id=i) for i, *spec in OUT_OF_SUPPORT])
def test_random_hyperparameter_out_of_support_has_log_density_minus_inf(build, mean, bad, good):
    """``-inf`` (not NaN) outside the support; inside, the density of the model with ``h`` fixed there, plus h's."""
    model = build(lambda: pm.Normal("h", mean, 1.0))
    logp = model.compile_logp()
    point = model.initial_point()
    for value in bad:
        assert logp({**point, "h": np.array(value)}) == -np.inf, value
    for value in good:
        fixed = build(value)
        same_point = {name: v for name, v in point.items() if name != "h"}
        expected = fixed.compile_logp()(same_point) + stats.norm.logpdf(value, mean, 1.0)
        assert logp({**point, "h": np.array(value)}) == pytest.approx(expected, rel=1e-10), value


# --------------------------------------------------------------------------- valid edge cases


def test_one_posterior_draw_and_integer_valued_float_labels_are_valid():
    """One draw is a posterior of one draw; labels stored as floats with integer values are labels."""
    for draws in (np.array([[[5, 5, -2, -2]]]), np.array([[[0.0, 0.0, 1.0, 1.0]]])):
        idata = az.from_dict(posterior={"z": draws})
        assert pmp.point_partition(idata, random_seed=0).tolist() == [0, 0, 1, 1]
        np.testing.assert_array_equal(
            pmp.posterior_similarity(idata), [[1, 1, 0, 0], [1, 1, 0, 0], [0, 0, 1, 1], [0, 0, 1, 1]]
        )
        assert pmp.expected_loss(idata, [7, 7, -1, -1]) == 0.0
        assert pmp.summarize(idata).loc["n_clusters", "mean"] == 2.0


def test_initval_and_observed_partitions_are_stored_canonically():
    with pm.Model() as model:
        pmp.DirichletProcessPartition("z", alpha=1.0, n=4, initval=[3, 3, -1, 7])
        pmp.DirichletProcessPartition("w", alpha=1.0, n=4, observed=[5, 2, 5, 2])
    assert model.initial_point()["z"].tolist() == [0, 0, 1, 2]
    assert model.rvs_to_values[model["w"]].data.tolist() == [0, 1, 0, 1]
    assert np.isfinite(model.compile_logp()(model.initial_point()))


@pytest.mark.parametrize("make", [pmp.GibbsStep, pmp.SplitMergeStep, pmp.ARMStep])
def test_vars_none_means_the_models_partition_variable(make):
    """As for PyMC's own steps, ``vars=None`` takes the variables the step can sample: the partition."""
    model = _model()
    assert make(model=model).vars[0] is model.rvs_to_values[model["z"]]


def test_step_relabels_negative_and_sparse_labels_in_the_point():
    model = _model()
    step = pmp.GibbsStep(model["z"], model=model)
    for labels in ([0, 0, 0, 0, 0, -3], [9, 9, 2**40, 0, 0, 0]):
        point, _ = step.step({**model.initial_point(), "z": np.array(labels)})
        assert point["z"].tolist() == pmp.relabel(point["z"]).tolist()


def test_pm_sample_with_a_negative_initial_label_does_not_crash():
    """``pm.sample(initvals={"z": [0]*19 + [-3]})`` once crashed the interpreter inside numba.

    PyMC accepts the initial value (its dtype is right; ``pm.sample`` checks
    the initial log density only for NUTS-only models), so the step is the
    first to read it: it must relabel it and run.
    """
    code = textwrap.dedent("""
        import numpy as np, pymc as pm, pymc_partitions as pmp
        X = np.random.default_rng(0).normal(size=(20, 1))
        with pm.Model():
            z = pmp.DirichletProcessPartition("z", alpha=1.0, n=20)
            pmp.NormalGammaMixture("x", partition=z, observed=X)
            idata = pm.sample(step=pmp.GibbsStep([z]), initvals={"z": [0] * 19 + [-3]}, draws=5, tune=5,
                              chains=1, progressbar=False, compute_convergence_checks=False, random_seed=1)
        z = idata.posterior["z"].values.reshape(-1, 20)
        assert (z >= 0).all() and all((pmp.relabel(row) == row).all() for row in z)
        print("ok")
        """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip().endswith("ok")
