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

Each family module documents its model, layouts and update equations. This
module also provides integer codes, ``MODULES`` indexed by code, and numba
dispatch functions taking the code as a leading ``family`` argument (an if/elif
chain: one compiled specialization per function, and ``cache=True`` works).
Unknown codes raise ``ValueError``, except in the hot-path dispatchers
``item_stats``, ``fill_cache``, ``add_log_predictives``, ``log_predictive``
and ``log_density``, which give NaN: they are ``inline="always"`` (a call per
item passes every array field by value and costs more than the arithmetic of
a small cluster), and a ``raise`` (or any remaining call) in a caller's inner
loop stops numba from pruning the reference counting of array views such as
``caches[k]``, which made a d = 10 Beta-Bernoulli predictive ~5x slower. The
same happens when a caller grows large enough to exceed numba's
refcount-pruning limits, so hot loops should stay small. Codes are checked
once, in Python, when a kernel model is built.
"""

import math

import numba
import numpy as np

from . import beta_bernoulli, dirichlet_multinomial, gamma_poisson, normal_gamma, normal_inverse_wishart, relational

BETA_BERNOULLI = 0
NORMAL_GAMMA = 1
NORMAL_INVERSE_WISHART = 2
DIRICHLET_MULTINOMIAL = 3
GAMMA_POISSON = 4
# not an additive family: the Infinite Relational Model's likelihood couples clusters
# (``kernels.moves`` handles it); the code identifies its observation model
INFINITE_RELATIONAL = 5

MODULES = (beta_bernoulli, normal_gamma, normal_inverse_wishart, dirichlet_multinomial, gamma_poisson)

__all__ = [
    "BETA_BERNOULLI",
    "NORMAL_GAMMA",
    "NORMAL_INVERSE_WISHART",
    "DIRICHLET_MULTINOMIAL",
    "GAMMA_POISSON",
    "INFINITE_RELATIONAL",
    "MODULES",
    "stat_size",
    "cache_size",
    "param_size",
    "item_stats",
    "log_marginal",
    "fill_cache",
    "log_predictive",
    "add_log_predictives",
    "draw_params",
    "log_density",
    "pack_params",
]


@numba.njit(cache=True)
def stat_size(family, d):
    """Length of a statistics row of ``family``."""
    if family == BETA_BERNOULLI:
        return beta_bernoulli.stat_size(d)
    elif family == NORMAL_GAMMA:
        return normal_gamma.stat_size(d)
    elif family == NORMAL_INVERSE_WISHART:
        return normal_inverse_wishart.stat_size(d)
    elif family == DIRICHLET_MULTINOMIAL:
        return dirichlet_multinomial.stat_size(d)
    elif family == GAMMA_POISSON:
        return gamma_poisson.stat_size(d)
    raise ValueError("unknown family code")


@numba.njit(cache=True)
def cache_size(family, d):
    """Length of a predictive cache of ``family``."""
    if family == BETA_BERNOULLI:
        return beta_bernoulli.cache_size(d)
    elif family == NORMAL_GAMMA:
        return normal_gamma.cache_size(d)
    elif family == NORMAL_INVERSE_WISHART:
        return normal_inverse_wishart.cache_size(d)
    elif family == DIRICHLET_MULTINOMIAL:
        return dirichlet_multinomial.cache_size(d)
    elif family == GAMMA_POISSON:
        return gamma_poisson.cache_size(d)
    raise ValueError("unknown family code")


@numba.njit(cache=True)
def param_size(family, d):
    """Length of a cluster parameter vector θ of ``family``."""
    if family == BETA_BERNOULLI:
        return beta_bernoulli.param_size(d)
    elif family == NORMAL_GAMMA:
        return normal_gamma.param_size(d)
    elif family == NORMAL_INVERSE_WISHART:
        return normal_inverse_wishart.param_size(d)
    elif family == DIRICHLET_MULTINOMIAL:
        return dirichlet_multinomial.param_size(d)
    elif family == GAMMA_POISSON:
        return gamma_poisson.param_size(d)
    raise ValueError("unknown family code")


@numba.njit(cache=True, inline="always")
def item_stats(family, x, out):
    """Additive statistics of the single item ``x`` into ``out``."""
    if family == BETA_BERNOULLI:
        beta_bernoulli.item_stats(x, out)
    elif family == NORMAL_GAMMA:
        normal_gamma.item_stats(x, out)
    elif family == NORMAL_INVERSE_WISHART:
        normal_inverse_wishart.item_stats(x, out)
    elif family == DIRICHLET_MULTINOMIAL:
        dirichlet_multinomial.item_stats(x, out)
    elif family == GAMMA_POISSON:
        gamma_poisson.item_stats(x, out)
    else:
        out[:] = math.nan  # unknown code: no raise on this hot path (module docstring)


@numba.njit(cache=True, _nrt=True)
def log_marginal(family, stats, params):
    """Exact log marginal likelihood of the items summarised by ``stats``.

    Some families allocate here, so reference counting is switched on
    explicitly: a callee compiled for a kernel built without it
    (``kernels.moves.set_log_weights``) would otherwise inherit that setting.
    """
    if family == BETA_BERNOULLI:
        return beta_bernoulli.log_marginal(stats, params)
    elif family == NORMAL_GAMMA:
        return normal_gamma.log_marginal(stats, params)
    elif family == NORMAL_INVERSE_WISHART:
        return normal_inverse_wishart.log_marginal(stats, params)
    elif family == DIRICHLET_MULTINOMIAL:
        return dirichlet_multinomial.log_marginal(stats, params)
    elif family == GAMMA_POISSON:
        return gamma_poisson.log_marginal(stats, params)
    raise ValueError("unknown family code")


@numba.njit(cache=True, inline="always")
def fill_cache(family, stats, params, out):
    """Per-cluster predictive constants of ``stats`` into ``out``."""
    if family == BETA_BERNOULLI:
        beta_bernoulli.fill_cache(stats, params, out)
    elif family == NORMAL_GAMMA:
        normal_gamma.fill_cache(stats, params, out)
    elif family == NORMAL_INVERSE_WISHART:
        normal_inverse_wishart.fill_cache(stats, params, out)
    elif family == DIRICHLET_MULTINOMIAL:
        dirichlet_multinomial.fill_cache(stats, params, out)
    elif family == GAMMA_POISSON:
        gamma_poisson.fill_cache(stats, params, out)
    else:
        out[:] = math.nan  # unknown code: no raise on this hot path (module docstring)


@numba.njit(cache=True, inline="always")
def log_predictive(family, cache, x, params):
    """log p(x | stats) from a cache filled by ``fill_cache``."""
    if family < BETA_BERNOULLI or family > GAMMA_POISSON:
        return math.nan
    if family == BETA_BERNOULLI:
        return beta_bernoulli.log_predictive(cache, x, params)
    elif family == NORMAL_GAMMA:
        return normal_gamma.log_predictive(cache, x, params)
    elif family == NORMAL_INVERSE_WISHART:
        return normal_inverse_wishart.log_predictive(cache, x, params)
    elif family == DIRICHLET_MULTINOMIAL:
        return dirichlet_multinomial.log_predictive(cache, x, params)
    return gamma_poisson.log_predictive(cache, x, params)


@numba.njit(cache=True, inline="always")
def add_log_predictives(family, caches, slots, count, x, params, out):
    """``out[j] += log p(x | caches[slots[j]])`` for ``j < count``: the inner loop of a Gibbs sweep.

    The family branch is taken once, outside the loop; a runtime branch inside
    it makes the loop about three times slower (measured with
    ``benchmarks/gibbs_throughput.py``).
    """
    if family == BETA_BERNOULLI:
        for j in range(count):
            out[j] += beta_bernoulli.log_predictive(caches[slots[j]], x, params)
    elif family == NORMAL_GAMMA:
        for j in range(count):
            out[j] += normal_gamma.log_predictive(caches[slots[j]], x, params)
    elif family == NORMAL_INVERSE_WISHART:
        for j in range(count):
            out[j] += normal_inverse_wishart.log_predictive(caches[slots[j]], x, params)
    elif family == DIRICHLET_MULTINOMIAL:
        for j in range(count):
            out[j] += dirichlet_multinomial.log_predictive(caches[slots[j]], x, params)
    else:
        for j in range(count):
            out[j] += gamma_poisson.log_predictive(caches[slots[j]], x, params)


@numba.njit(cache=True)
def draw_params(family, stats, params, rng, out):
    """Draw cluster parameters θ ~ p(θ | stats) into ``out``."""
    if family == BETA_BERNOULLI:
        beta_bernoulli.draw_params(stats, params, rng, out)
    elif family == NORMAL_GAMMA:
        normal_gamma.draw_params(stats, params, rng, out)
    elif family == NORMAL_INVERSE_WISHART:
        normal_inverse_wishart.draw_params(stats, params, rng, out)
    elif family == DIRICHLET_MULTINOMIAL:
        dirichlet_multinomial.draw_params(stats, params, rng, out)
    elif family == GAMMA_POISSON:
        gamma_poisson.draw_params(stats, params, rng, out)
    else:
        raise ValueError("unknown family code")


@numba.njit(cache=True, inline="always")
def log_density(family, theta, x, params):
    """log p(x | θ) for θ as laid out by ``draw_params``."""
    if family < BETA_BERNOULLI or family > GAMMA_POISSON:
        return math.nan
    if family == BETA_BERNOULLI:
        return beta_bernoulli.log_density(theta, x, params)
    elif family == NORMAL_GAMMA:
        return normal_gamma.log_density(theta, x, params)
    elif family == NORMAL_INVERSE_WISHART:
        return normal_inverse_wishart.log_density(theta, x, params)
    elif family == DIRICHLET_MULTINOMIAL:
        return dirichlet_multinomial.log_density(theta, x, params)
    return gamma_poisson.log_density(theta, x, params)


def pack_params(family, d, *hyper):
    """Validated ``params`` vector of ``family`` for ``d`` features (see the family's ``pack_params``)."""
    if family == INFINITE_RELATIONAL and not isinstance(family, bool):
        return relational.pack_params(d, *hyper)
    if isinstance(family, bool) or not isinstance(family, (int, np.integer)) or not 0 <= family < len(MODULES):
        raise ValueError(f"family must be an integer code in 0..{len(MODULES)}, got {family!r}")
    return MODULES[family].pack_params(d, *hyper)
