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

Conventions, shared by every family (each family module documents its model,
layouts and update equations):

- data ``x`` is a C-contiguous float64 (n, d) array and one item is a row;
- ``params`` is float64 with ``params[0] = d``, then the family's hyperparameters;
- a statistics row has ``stats[0]`` = number of items and is additive: the
  statistics of a union of items are the sum of theirs; an empty cluster is an
  all-zero row, whose ``log_marginal`` is exactly 0;
- ``log_predictive(fill_cache(stats), x)`` equals
  ``log_marginal(stats + item_stats(x)) − log_marginal(stats)`` (the prior
  predictive for empty ``stats``);
- ``rng`` is a ``np.random.Generator``.

Coarsening.  The last entry of ``params`` is ``zeta`` in (0, 1]
(``_common.coarsening``): every item's likelihood is raised to it, the
c-posterior of Miller & Dunson (2019) with ``zeta = c / (c + n)``
(``coarsening=c`` on the observation models).  For the conjugate families
``p(x | θ)^zeta`` is again an exponential-family kernel with the statistics
scaled by ``zeta`` (the item's base measure raised too: ``zeta log x!``,
``zeta`` times the multinomial coefficient, ``(2π)^(-zeta/2)``), so every
function reads the statistics as ``zeta * stats`` (the state keeps the
unscaled sums), ``log_marginal`` is the conjugate formula at those real
"effective counts", ``log_predictive`` the difference of two such marginals,
``draw_params`` draws from the coarsened posterior and ``log_density`` (and
``log_densities``) return ``zeta log p(x | θ)``.  ``zeta = 1`` takes the
unchanged arithmetic (bit for bit).  ``docs/exactness.md``, "Coarsened
posteriors", has each family's formulas.

Coordinates.  The families with a location hyperparameter (mu0 of the
Normal-Gamma and Normal-inverse-Wishart, m of the Normal) are invariant under
moving the data and that location together, so the kernels see ``x − o`` and
the location minus a fixed *origin* ``o`` (``state.make_model``,
:func:`shift_params`, ``LOCATION`` in each such module), by default the data's
column means (:func:`origin`), and store cluster means (``theta``, the hybrid
plan's θ) relative to ``o``.  Sums of centred values keep Σx² − (Σx)²/m well
conditioned for any offset of the data; for which cluster separations the log
marginals stay accurate to 1e-9: ``docs/exactness.md``, "Coordinates and rounding".

Block log densities.  ``log_densities(theta, x, params, out)`` gives the log
densities of a block of m items under K parameter rows (the hybrid's cold
shards) as matrix products -- ``X Wᵀ + c`` for the linear families, ``[X², X]``
for the Normal-Gamma, the items whitened by every cluster for the
Normal-inverse-Wishart -- each product at most ``_common.GEMM_MAX_WORK``
multiply-adds, so BLAS runs it on the calling thread.  Each returns a bound
(Higham 2002, Lemma 3.1) on ``|out[i, k] − log_density(theta[k], x[i])|``,
so a caller can recompute by the loop just the entries that matter
(``kernels.hybrid``: chains bit-identical to the loop's).  Timings against
the loop and the BLAS floor: ``docs/benchmarks.md``, "Block log densities".

Every family is registered in ``pymc_partitions.registry`` with a spec
(``SPEC``, ``families.spec``); its code is its place there (``BETA_BERNOULLI``,
..., ``CATEGORICAL``), and its tag ``TAGS[code]`` makes numba compile a kernel
per family; Python callers pass a tag or a code.  The IRM (``infinite_relational``)
is not additive (``docs/toolkit.md``, "Families").

Parametric families.  Clusters keep explicit parameters θ, one row per
occupied slot of the state: the conditionally conjugate Normal (``normal``,
``NormalMixture``) and the generic component model (``component``: the rows of
the user's own PyMC parameters, its data the items' log likelihoods under
every row).  Besides ``stat_size``, ``param_size``, ``item_stats`` and
``log_density`` of the table above, each defines

=======================================================  ==========================================
``k_max(params)``                                        the most clusters the model allows
``log_prior_density(theta, params)``                     log g(θ), the prior density the kernels target
``cluster_log_likelihood(stats, theta, params)``         Σ_{i in c} log p(x_i | θ)
``update_parameters(stats, params, theta, target, rng)``  Gibbs update of θ given the cluster (or the
                                                         density of the outcome ``target``)
``initialise_parameters(params, stats, theta, slots, k, rng)``  θ for the ``k`` clusters of a state built
                                                         from labels
``auxiliary_capacity(params, n_auxiliary)``              rows of Algorithm 8's auxiliary buffer
``auxiliary_values(params, theta, slots, k, aux, fresh, rng)``  the auxiliary components into ``aux``,
                                                         returning how many (Neal 2000, Algorithm 8)
=======================================================  ==========================================

and ``normal`` also ``draw_prior(params, rng, theta)`` (θ ~ g), which the
nonconjugate split-merge needs.  The kernels' parametric code paths call these
through the same dispatch as the additive functions, so a new parametric
family is a module and a registry line, not an edit of ``state`` or ``kernels``.
"""

import importlib
import numbers

import numpy as np

from pymc_partitions._dispatch import ADDITIVE, FAMILY_DISPATCH, KINDS, PARAMETRIC, family_function, make_tag
from pymc_partitions.registry import FAMILIES

from . import spec as _spec

MODULES = tuple(importlib.import_module(f"{__name__}.{module}") for module, _ in FAMILIES)
"""Every family's module, indexed by code."""
SPECS = tuple(module.SPEC for module in MODULES)
"""Every family's spec (``families.spec.FamilySpec``), indexed by code."""
CLASS_NAMES = tuple(name for _, name in FAMILIES)
"""The name of every family's PyMC distribution class, indexed by code."""

for _code, (_module, _) in enumerate(FAMILIES):
    globals()[_module.upper()] = _code  # BETA_BERNOULLI = 0, ..., CATEGORICAL = 7, ..., COMPONENT = 9

_FAMILY_CLASSES = tuple(
    make_tag("".join(part.title() for part in module.split("_")), __name__, code=code, kind=spec.kind)
    for code, ((module, _), spec) in enumerate(zip(FAMILIES, SPECS))
)
"""A tag class per family (``_dispatch.FAMILY_DISPATCH == "compile"``, the default)."""
_KIND_CLASSES = {
    kind: make_tag(
        f"{kind.title()}Family", __name__, fields=("code",), kind=kind,
        codes=tuple(code for code, spec in enumerate(SPECS) if spec.kind == kind),
    )
    for kind in KINDS
}
"""A tag class per kind, the family's code a value (``_dispatch.FAMILY_DISPATCH == "run"``)."""
for _cls in (*_FAMILY_CLASSES, *_KIND_CLASSES.values()):
    globals()[_cls.__name__] = _cls  # the tag classes are module attributes: numba's cache pickles them by reference
if FAMILY_DISPATCH == "compile":
    TAGS = tuple(cls() for cls in _FAMILY_CLASSES)
else:
    TAGS = tuple(_KIND_CLASSES[spec.kind](code) for code, spec in enumerate(SPECS))
"""The family tags, indexed by code."""

__all__ = [
    *(module.upper() for module, _ in FAMILIES),
    "MODULES",
    "SPECS",
    "CLASS_NAMES",
    "TAGS",
    "tag",
    "module_of",
    "parametric_module_of",
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
    "k_max",
    "log_prior_density",
    "cluster_log_likelihood",
    "update_parameters",
    "draw_prior",
    "initialise_parameters",
    "auxiliary_capacity",
    "auxiliary_values",
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


def parametric_module_of(family):
    """The module of the parametric family given by its tag or integer code (Python callers)."""
    code = _code_of(family)
    if SPECS[code].kind != PARAMETRIC:
        raise ValueError(f"family must be a parametric family, got {CLASS_NAMES[code]} (code {code})")
    return MODULES[code]


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


@family_function(MODULES, parametric_module_of)
def k_max(family, params):
    """The most clusters a parametric model allows (its number of parameter rows)."""


@family_function(MODULES, parametric_module_of)
def log_prior_density(family, theta, params):
    """log g(θ): the prior density of a cluster's parameters that the kernels target."""


@family_function(MODULES, parametric_module_of)
def cluster_log_likelihood(family, stats, theta, params):
    """Σ_{i in c} log p(x_i | θ) from the cluster's statistics."""


@family_function(MODULES, parametric_module_of)
def update_parameters(family, stats, params, theta, target, rng):
    """Gibbs update of θ given the cluster (``target`` empty), or θ set to ``target``; the log density of the outcome."""


@family_function(MODULES, parametric_module_of)
def draw_prior(family, params, rng, theta):
    """θ ~ g into ``theta``."""


@family_function(MODULES, parametric_module_of)
def initialise_parameters(family, params, stats, theta, slots, k, rng):
    """Parameters for the clusters in ``slots[:k]`` of a state built from labels alone."""


@family_function(MODULES, parametric_module_of)
def auxiliary_capacity(family, params, n_auxiliary):
    """Rows of the auxiliary buffer Algorithm 8 needs with ``n_auxiliary`` requested values."""


@family_function(MODULES, parametric_module_of)
def auxiliary_values(family, params, theta, slots, k, auxiliary, fresh, rng):
    """Algorithm 8's auxiliary components for a state with ``k`` clusters into ``auxiliary``; returns how many.

    ``auxiliary[:fresh]`` already hold values (a singleton's own parameters)."""


def draw_data(family, theta, labels, data, params, rng):
    """Replicated items of the additive family ``family`` (tag or code): row i drawn from p(x | θ[labels[i]]).

    Python only (numpy, vectorised over items).  ``theta`` holds one cluster
    parameter per row (``draw_params`` layout), ``labels`` the row of each
    replicated item, ``data`` those items' observed rows (the Dirichlet-multinomial
    keeps their totals; the other families read only the shape).  The
    posterior predictive draws of :mod:`pymc_partitions.summary.predictive`.
    """
    return module_of(family).draw_data(theta, labels, data, params, rng)


def pack_params(family, d, *hyper, zeta=1.0):
    """Validated ``params`` vector of the family with code ``family`` for ``d`` features: ``[d, *hyper]`` flattened
    in the order of its spec's kernel hyperparameters, each checked against its support, then ``zeta``, the power
    of every item's likelihood (module docstring, "Coarsening"; ``families.spec.pack``)."""
    return _spec.pack(SPECS[_code_of(family)], d, *hyper, zeta=zeta)


def kernel_data(family, data, *hyper):
    """The data the kernels hold for the observed ``data`` of the family with code ``family``: the data itself, or
    the module's ``kernel_data(data, *hyper)`` (the categorical family's one-hot encoding)."""
    encode = getattr(MODULES[_code_of(family)], "kernel_data", None)
    return np.ascontiguousarray(data if encode is None else encode(data, *hyper), dtype=np.float64)


def origin(family, data):
    """The default origin of the kernels' coordinates for ``data`` (n, d) of the family ``family`` (code or tag).

    The column means of the data for the families with a location
    hyperparameter: centred values keep Σ(x − o)² − (Σ(x − o))²/m well
    conditioned for any offset of the data (``docs/exactness.md``,
    "Coordinates and rounding").  Zeros (no shift) for the others: their data
    are counts, 0/1 values or an adjacency matrix, whose sums are exact.  A
    float64 vector of length d.
    """
    data = np.asarray(data, dtype=np.float64)
    if _spec.location_slice(SPECS[_code_of(family)], data.shape[1]) is None or data.shape[0] == 0:
        return np.zeros(data.shape[1])
    return data.mean(axis=0)


def integer_data(family):
    """Whether the data of the family ``family`` (code or tag) are integers (its spec's data kind: 0/1, counts,
    category codes, adjacency), not real values."""
    return SPECS[_code_of(family)].data in _spec.INTEGER_DATA


def centred(family, data, at=None):
    """``(data - at, at)``: the data of the family ``family`` in the kernels' coordinates, contiguous float64, and
    their origin ``at`` (by default :func:`origin`'s; zeros: the data unchanged).  With :func:`shift_params` for
    the hyperparameters, the one place the shift is written."""
    data = np.ascontiguousarray(data, dtype=np.float64)
    at = origin(family, data) if at is None else np.array(at, dtype=np.float64).reshape(-1)
    if np.any(at != 0.0):
        data = np.ascontiguousarray(data - at)
    return data, at


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
