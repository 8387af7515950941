"""Conjugate observation families: additive statistics, marginals, predictives, draws.

Layer 1 of the package: pure numba, no PyMC or PyTensor. One module per family,
all with identical signatures, so that kernels are generic over families:

=====================================  ==========================================
``stat_size(d)``                       length s of a statistics row
``cache_size(d)``                      length of a predictive cache
``param_size(d)``                      length of a drawn cluster parameter θ
``item_stats(x, out)``                 additive statistics of one item into ``out``
``log_marginal(stats, params)``        exact log ∫ Π_i p(x_i | θ) p(θ) dθ
``fill_cache(stats, params, out)``     per-cluster predictive constants
``log_predictive(cache, x, params)``   log p(x | stats), O(d) (O(d²) for NIW)
``draw_params(stats, params, rng, out)``  θ ~ p(θ | stats)
``log_density(theta, x, params)``      log p(x | θ)
``log_densities(theta, x, params, out)``  ``out[i, k] = log p(x_i | θ_k)`` by matrix products; a rounding bound
``draw_data(theta, labels, data, params, rng)``  python: replicated items, row i ~ p(x | θ[labels[i]])
``pack_params(d, *hyper)``             python: validated ``params`` vector
=====================================  ==========================================

Conventions, shared by every family:

- data ``x`` is a C-contiguous float64 (n, d) array and one item is a row;
- ``params`` is float64 with ``params[0] = d``, then the family's hyperparameters;
- a statistics row has ``stats[0]`` = number of items and is additive: the
  statistics of a union of items are the sum of theirs; an empty cluster is an
  all-zero row, whose ``log_marginal`` is exactly 0;
- ``log_predictive(fill_cache(stats), x)`` equals
  ``log_marginal(stats + item_stats(x)) − log_marginal(stats)`` (the prior
  predictive for empty ``stats``);
- ``rng`` is a ``np.random.Generator``.

Each family module documents its model, layouts and update equations.

Coordinates.  Sums of raw x and x² cancel catastrophically in Σx² − (Σx)²/m
when the data sit far from zero relative to their spread (coordinates in
metres, timestamps).  The families with a location hyperparameter (mu0 of
the Normal-Gamma and Normal-inverse-Wishart, m of the Normal) are invariant
under moving the data and that hyperparameter together, so the kernels work
relative to a fixed *origin* ``o`` (``state.make_model``): they see
``x − o`` and the location minus ``o`` (:func:`shift_params`; each such module
says where its location sits in ``params`` with ``LOCATION``).  The default
origin is the data's column means (:func:`origin`), fixed for a model, so
statistics stay additive (across items, clusters and the hybrid sampler's
shards) and the marginals, predictives and densities are unchanged up to
rounding.  What a kernel stores in data units -- the cluster means in
``theta``, the hybrid plan's drawn θ -- is relative to ``o`` too; whatever
goes back to PyMC is converted (``kernels.parameters``).

What centring guarantees.  A statistic is a sum of centred values ``y = x − o``
(exact by Sterbenz's lemma for data within a factor 2 of ``o``), with
rounding errors relative to Σy², i.e. of size eps·m(ȳ² + s²) for a cluster
of m items with mean ȳ (relative to ``o``) and variance s².  The global
offset of the data therefore no longer matters, but a cluster's own distance
from ``o`` does: its scatter Σy² − (Σy)²/m still cancels when |ȳ| ≫ s.  Per
cluster and feature, with μ0' the location minus ``o`` and κ_n = κ0 + m, the
relative error of a log marginal is about eps·R (measured: below 2.5 eps·R),

    R = (ȳ² + μ0'² + s²) / (s² + κ0 (ȳ − μ0')²/κ_n + 2 b0/m)     (Normal-Gamma),

since b_n is bounded below by its prior-mean term; the same with
s² the smallest eigenvalue of the cluster's covariance plus Psi0/m for the
Normal-inverse-Wishart (whose prior term bounds one direction only), and
R = (ȳ² + μ'² + s²)/(s² + (ȳ − μ')²) for the Normal given its cluster mean μ.
So 1e-9 relative holds while R ≤ 1e6: for clusters up to about 1000 of their
standard deviations from the data's mean (and from μ0), and, for the
Normal-Gamma with μ0 at the data's mean, for any separation while
κ_n/κ0 ≤ 1e6.  Beyond that, e.g. clusters 1e5 spreads apart with μ0 on one
of them, the error grows as eps·R (3e-7 relative at R = 2e10); removing it
would take per-cluster compensated (double-double) statistics.

Block log densities.  The per-item work of the samplers with explicit
cluster parameters (the hybrid's cold shards, the sub-cluster passes) is
the log density of many items under K fixed parameter rows.
``log_densities(theta, x, params, out)`` evaluates it as matrix products:
``X Wᵀ + c`` with the log-odds or log-probabilities for the Beta-Bernoulli,
categorical, Dirichlet-multinomial and Gamma-Poisson (plus the per-item
constant, which does not depend on the cluster), one product of
``[X², X]`` for the diagonal Normal-Gamma (the square expanded), and the
items whitened by every cluster's inverse Cholesky factor in one stacked
product for the Normal-inverse-Wishart (then row norms).  ``x`` and
``out`` are C-contiguous, ``out`` is (m, K); every product call does at
most ``_common.GEMM_MAX_WORK`` multiply-adds, so BLAS runs it on the
calling thread (a numba thread of the hybrid, say).  Each returns a bound,
from the classical rounding analysis of sums (Higham 2002, Lemma 3.1), on
``|out[i, k] − log_density(theta[k], x[i])|`` over the block, so a caller
can tell which entries could differ from the loop's by more than a given
amount and recompute just those (``kernels.hybrid``: chains bit-identical
to the loop's).  The bound is of order u·(the magnitudes summed); only the
Normal-Gamma's expanded square loses accuracy for clusters far from the
origin (its docstring).

Every family has a module, registered in ``pymc_partitions.registry`` (one
line: its module and its PyMC class), and a spec (``SPEC`` in its module,
``families.spec``): its kind, data and hyperparameters with their support.
Its integer code is its place in the registry (``BETA_BERNOULLI``, ...,
``CATEGORICAL``: the module name in capitals), and its *tag* (``TAGS[code]``)
is an empty named tuple whose class carries the code and the family's kind
(``_dispatch``).  Kernels hold the tag in their ``Model`` and call the
functions below with it: numba then compiles each kernel for one family,
with that family's code only (no run-time branch on the family).  Called
from Python, the same functions take a tag or an integer code and run the
family module's function.  The Infinite Relational Model
(``infinite_relational``) is not additive: its code and tag identify its
observation model and the kernels' relational code paths.  Neither is the
conditionally conjugate Normal (``normal``), the one *parametric* family: its
clusters keep explicit parameters, and the kernels' parametric code paths call
its module directly.
"""

import importlib
import numbers

import numpy as np

from pymc_partitions._dispatch import ADDITIVE, family_function, make_tag
from pymc_partitions.registry import FAMILIES

from . import spec as _spec

MODULES = tuple(importlib.import_module(f"{__name__}.{module}") for module, _ in FAMILIES)
"""Every family's module, indexed by code."""
SPECS = tuple(module.SPEC for module in MODULES)
"""Every family's spec (``families.spec.FamilySpec``), indexed by code."""
CLASS_NAMES = tuple(name for _, name in FAMILIES)
"""The name of every family's PyMC distribution class, indexed by code."""

for _code, (_module, _) in enumerate(FAMILIES):
    globals()[_module.upper()] = _code  # BETA_BERNOULLI = 0, ..., CATEGORICAL = 7

_TAG_CLASSES = tuple(
    make_tag("".join(part.title() for part in module.split("_")), __name__, code=code, kind=spec.kind)
    for code, ((module, _), spec) in enumerate(zip(FAMILIES, SPECS))
)
for _cls in _TAG_CLASSES:
    globals()[_cls.__name__] = _cls  # the tag classes are module attributes: numba's cache pickles them by reference
TAGS = tuple(cls() for cls in _TAG_CLASSES)
"""The family tags, indexed by code."""

__all__ = [
    *(module.upper() for module, _ in FAMILIES),
    "MODULES",
    "SPECS",
    "CLASS_NAMES",
    "TAGS",
    "tag",
    "module_of",
    "stat_size",
    "cache_size",
    "param_size",
    "item_stats",
    "log_marginal",
    "fill_cache",
    "log_predictive",
    "draw_params",
    "log_density",
    "log_densities",
    "draw_data",
    "pack_params",
    "kernel_data",
    "origin",
    "shift_params",
]


def tag(code):
    """The tag of the family with integer ``code``."""
    if not _is_code(code, len(TAGS)):
        raise ValueError(f"family must be an integer code in 0..{len(TAGS) - 1}, got {code!r}")
    return TAGS[code]


def _is_code(code, count):
    return isinstance(code, numbers.Integral) and not isinstance(code, (bool, np.bool_)) and 0 <= code < count


def _code_of(family):
    code = getattr(family, "code", family)
    if not _is_code(code, len(TAGS)):
        raise ValueError(f"family must be a family's tag or integer code in 0..{len(TAGS) - 1}, got {family!r}")
    return code


def module_of(family):
    """The module of the additive family given by its tag or integer code (Python callers)."""
    code = _code_of(family)
    if SPECS[code].kind != ADDITIVE:
        raise ValueError(f"family must be an additive family, got {CLASS_NAMES[code]} (code {code})")
    return MODULES[code]
@family_function(MODULES, module_of)
def stat_size(family, d):
    """Length of a statistics row of ``family`` for ``d`` features."""


@family_function(MODULES, module_of)
def cache_size(family, d):
    """Length of a predictive cache of ``family`` for ``d`` features."""


@family_function(MODULES, module_of)
def param_size(family, d):
    """Length of a cluster parameter vector θ of ``family`` for ``d`` features."""


@family_function(MODULES, module_of)
def item_stats(family, x, out):
    """Additive statistics of the single item ``x`` into ``out``."""


@family_function(MODULES, module_of)
def log_marginal(family, stats, params):
    """Exact log marginal likelihood of the items summarised by ``stats``."""


@family_function(MODULES, module_of)
def fill_cache(family, stats, params, out):
    """Per-cluster predictive constants of ``stats`` into ``out``."""


@family_function(MODULES, module_of)
def log_predictive(family, cache, x, params):
    """log p(x | stats) from a cache filled by ``fill_cache``."""


@family_function(MODULES, module_of)
def draw_params(family, stats, params, rng, out):
    """Draw cluster parameters θ ~ p(θ | stats) into ``out``."""


@family_function(MODULES, module_of)
def log_density(family, theta, x, params):
    """log p(x | θ) for θ as laid out by ``draw_params``."""


@family_function(MODULES, module_of)
def log_densities(family, theta, x, params, out):
    """``out[i, k] = log p(x_i | θ_k)`` for a block of items ``x`` (m, d) and parameter rows ``theta`` (K, p), as
    dense linear algebra (module docstring, "Block log densities"); returns a bound on ``|out − loop|``."""


def draw_data(family, theta, labels, data, params, rng):
    """Replicated items of the additive family ``family`` (tag or code): row i drawn from p(x | θ[labels[i]]).

    Python only (numpy, vectorised over items).  ``theta`` holds one cluster
    parameter per row (``draw_params`` layout), ``labels`` the row of each
    replicated item, ``data`` those items' observed rows (the Dirichlet-multinomial
    keeps their totals; the other families read only the shape).  The
    posterior predictive draws of :mod:`pymc_partitions.summary.predictive`.
    """
    return module_of(family).draw_data(theta, labels, data, params, rng)


def pack_params(family, d, *hyper):
    """Validated ``params`` vector of the family with code ``family`` for ``d`` features: ``[d, *hyper]`` flattened
    in the order of its spec's kernel hyperparameters, each checked against its support (``families.spec.pack``)."""
    return _spec.pack(SPECS[_code_of(family)], d, *hyper)


def kernel_data(family, data, *hyper):
    """The data the kernels hold for the observed ``data`` of the family with code ``family``: the data itself, or
    the module's ``kernel_data(data, *hyper)`` (the categorical family's one-hot encoding)."""
    encode = getattr(MODULES[_code_of(family)], "kernel_data", None)
    return np.ascontiguousarray(data if encode is None else encode(data, *hyper), dtype=np.float64)


def origin(family, data):
    """The default origin of the kernels' coordinates for ``data`` (n, d) of the family ``family`` (code or tag).

    The column means of the data for the families with a location
    hyperparameter: centred values keep Σ(x − o)² − (Σ(x − o))²/m well
    conditioned for any offset of the data (module docstring).  Zeros (no
    shift) for the others: their data are counts, 0/1 values or an adjacency
    matrix, whose sums are exact.  A float64 vector of length d.
    """
    data = np.asarray(data, dtype=np.float64)
    if _spec.location_slice(SPECS[_code_of(family)], data.shape[1]) is None or data.shape[0] == 0:
        return np.zeros(data.shape[1])
    return data.mean(axis=0)


def shift_params(family, params, origin):
    """``params`` of the same model for the data minus ``origin``: the location hyperparameter minus ``origin``.

    For a family without a location (its spec has none) ``params`` is returned
    unchanged, and ``origin`` must be zero.  Python; a new array.
    """
    params = np.array(params, dtype=np.float64)
    origin = np.asarray(origin, dtype=np.float64)
    d = int(params[0])
    location = _spec.location_slice(SPECS[_code_of(family)], d)
    if location is None:
        if np.any(origin != 0.0):
            raise ValueError(f"family {family!r} has no location hyperparameter: its origin must be zero")
        return params
    if origin.shape != (d,):
        raise ValueError(f"origin must have one value per feature ({d}), got shape {origin.shape}")
    params[location] -= origin
    return params
