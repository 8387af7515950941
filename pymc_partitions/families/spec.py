"""The spec of an observation family: its hyperparameters and their support, its data, its defaults.

Each family module declares one :class:`FamilySpec` (``SPEC``) next to its
numba functions.  From the specs (``families.SPECS``, indexed by family code)
the package builds what used to be written per family:

* ``families.pack_params`` -- the validated ``params`` vector of the kernels
  (:func:`pack`): ``[d, *each kernel hyperparameter flattened]``;
* the support of every hyperparameter, as numbers (:func:`check_values`,
  used by ``pack``) and as PyTensor conditions in the observation models' log
  densities (``distributions.mixtures``): one declaration, :class:`Hyper`;
* the PyMC distribution class of every additive family, its ``dist``
  signature and defaults (``distributions.mixtures``);
* ``default_hyperparameters(X)`` (:attr:`FamilySpec.defaults`);
* the learned defaults of ``with_default_priors`` (:attr:`FamilySpec.hyperpriors`): the few
  hyperparameters that decide how readily clusters open, each a log-normal
  :class:`Learned` variable centred on its data-based value, and how the
  distribution's hyperparameters follow from them (:class:`Hyperpriors`).

Pure Python and numpy: no numba, no PyMC.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from pymc_partitions._validation import check_dimension, check_hyperparameter, check_zeta

FEATURE = "feature"
"""A scalar or one value per feature (``d`` values in ``params``)."""
SCALAR = "scalar"
"""One value."""
MATRIX = "matrix"
"""A ``d x d`` symmetric positive-definite matrix (``d*d`` values in ``params``)."""
COUNT = "count"
"""One integer >= 1 (e.g. the number of parameter rows of ``NormalMixture``)."""
CATEGORIES = "categories"
"""One integer >= 1 per feature, fixed with the data (e.g. the number of values a categorical feature takes)."""
ITEMS = "items"
"""One non-negative integer per item, used only to draw data (not a kernel hyperparameter)."""
COEFFICIENTS = "coefficients"
"""A scalar or one value per covariate: ``d - 1`` values in ``params`` (a regression's data rows are ``[y, x]``)."""
COEFFICIENT_MATRIX = "coefficient_matrix"
"""A ``(d - 1) x (d - 1)`` symmetric positive-definite matrix (one row and column per covariate)."""
COVARIATES = "covariates"
"""The ``n x (d - 1)`` design matrix, fixed with the data and also in it; used only to draw data (not a kernel
hyperparameter)."""

SHAPES = (FEATURE, SCALAR, MATRIX, COUNT, CATEGORIES, ITEMS, COEFFICIENTS, COEFFICIENT_MATRIX, COVARIATES)

REAL, BINARY, COUNTS, CODES, ADJACENCY = "real", "binary", "counts", "codes", "adjacency"
"""What a family's data are: real values, 0/1, non-negative integer counts, integer category codes
(``0 .. C_j - 1``), or a symmetric 0/1 adjacency matrix."""
INTEGER_DATA = (BINARY, COUNTS, CODES, ADJACENCY)
"""The kinds of data whose values are integers (posterior predictive checks compare frequencies, not densities)."""


class Hyper(NamedTuple):
    """One hyperparameter of a family.

    name : str
    shape : str              :data:`FEATURE`, :data:`SCALAR`, :data:`MATRIX`, :data:`COUNT`, :data:`CATEGORIES`
                             or :data:`ITEMS`
    lower : float or None    open lower bound of the support (``None``: any finite value; matrices: positive definite)
    lower_plus_d : bool      the bound is ``lower + d`` (``nu0 > d - 1``)
    default                  the ``dist`` default: a value, or ``callable(d, data)`` (``None``: required)
    location : bool          a location: the kernels shift it with the data's origin (``families.shift_params``)
    """

    name: str
    shape: str
    lower: float | None = None
    lower_plus_d: bool = False
    default: Any = None
    location: bool = False

    def bound(self, d):
        """The open lower bound for ``d`` features (``None`` if unbounded)."""
        if self.lower is None:
            return None
        return self.lower + d if self.lower_plus_d else self.lower

    @property
    def kernel(self):
        """Whether the kernels read it (``pack``): all but the draw-only :data:`ITEMS` and :data:`COVARIATES` inputs."""
        return self.shape not in (ITEMS, COVARIATES)

    def rule(self):
        """The support as text, e.g. ``"kappa0 > 0"``."""
        if self.shape in (MATRIX, COEFFICIENT_MATRIX):
            return f"{self.name} symmetric positive definite"
        if self.shape in (COUNT, CATEGORIES, ITEMS):
            return f"{self.name} integer{'s' if self.shape != COUNT else ''} >= {0 if self.shape == ITEMS else 1}"
        if self.lower is None:
            return f"{self.name} finite"
        if self.lower_plus_d:
            return f"{self.name} > d - {-self.lower:g}" if self.lower < 0 else f"{self.name} > d + {self.lower:g}"
        return f"{self.name} > {self.lower:g}"


class Learned(NamedTuple):
    """One learned hyperparameter of a family's default hierarchical prior: ``lower + LogNormal(log(median - lower), sigma)``.

    Its value ``v`` satisfies ``log(v - lower) ~ Normal(log(median - lower), sigma)``: the prior median is
    ``median`` (the family's data-based value), and ``v - lower`` lies within a factor ``exp(sigma)`` of
    ``median - lower`` with probability 0.68 and within ``exp(2 sigma)`` with 0.95.  Its log density is
    smooth in the unconstrained value ``log(v - lower)``, which NUTS and the slice sampler move.

    name : str       the keyword of :attr:`Hyperpriors.assemble`; the PyMC variable is ``f"{model_name}_{name}"``
    median : float   the prior median (the data-based value it replaces)
    sigma : float    the log-scale standard deviation (default 1)
    lower : float    the lower bound of the support (default 0; ``nu0``: ``d - 1``)
    """

    name: str
    median: float
    sigma: float = 1.0
    lower: float = 0.0


class Hyperpriors(NamedTuple):
    """A family's learned default for data ``x``: the learned hyperparameters and the model's hyperparameters in
    terms of them.

    learned : tuple     the :class:`Learned` hyperparameters
    assemble : callable ``assemble(**values) -> dict``: the distribution's keyword arguments (every kernel
                        hyperparameter) given a value for each learned one, by name; plain arithmetic, so the
                        values may be numbers or PyTensor graphs (PyMC variables)
    """

    learned: tuple
    assemble: Callable


class FamilySpec(NamedTuple):
    """An observation family: kind, data, hyperparameters (signature order), and data-based defaults.

    kind : str              ``_dispatch.ADDITIVE``, ``RELATIONAL`` or ``PARAMETRIC``
    data : str              :data:`REAL`, :data:`BINARY`, :data:`COUNTS`, :data:`CODES` or :data:`ADJACENCY`
    hypers : tuple          the :class:`Hyper` of each hyperparameter, in the order of the distribution's signature
    defaults : callable     ``defaults(x) -> dict``: data-based hyperparameters (``default_hyperparameters``)
    derived : callable      ``derived(params) -> array`` appended to the packed ``params`` (a quantity every
                            evaluation would otherwise recompute, e.g. ``log|Psi0|``), or ``None``
    hyperpriors : callable  ``hyperpriors(x) -> Hyperpriors``: the learned default of ``with_default_priors``
                            (each family module's ``default_hyperpriors``), or ``None``
    """

    kind: str
    data: str
    hypers: tuple
    defaults: Callable | None = None
    derived: Callable | None = None
    hyperpriors: Callable | None = None

    @property
    def kernel_hypers(self):
        """The hyperparameters the kernels read, in ``params`` order."""
        return tuple(h for h in self.hypers if h.kernel)

    def support_message(self):
        """Every hyperparameter's support as one text (``"kappa0 > 0, a0 > 0, b0 > 0"``)."""
        shown = [h for h in self.hypers if h.kernel and (h.lower is not None or h.shape in (MATRIX, COEFFICIENT_MATRIX))]
        return ", ".join(h.rule() for h in shown)


def check_value(hyper, value, d):
    """``value`` of ``hyper`` for ``d`` features, validated (``ValueError``/``TypeError`` naming it), as a float array
    of its canonical shape: ``(d,)`` for :data:`FEATURE` and :data:`CATEGORIES`, ``()``, or ``(d, d)``."""
    if hyper.shape == FEATURE:
        check_hyperparameter(hyper.name, value, lower=hyper.bound(d), length=d)
        return np.broadcast_to(np.asarray(value, dtype=float), (d,))
    if hyper.shape == SCALAR:
        check_hyperparameter(hyper.name, value, ndim_max=0, lower=hyper.bound(d))
        return np.asarray(value, dtype=float)
    if hyper.shape == MATRIX:
        return _check_spd(hyper.name, value, d)
    if hyper.shape == COEFFICIENTS:
        check_hyperparameter(hyper.name, value, lower=hyper.bound(d), length=d - 1)
        return np.broadcast_to(np.asarray(value, dtype=float), (d - 1,))
    if hyper.shape == COEFFICIENT_MATRIX:
        return _check_spd(hyper.name, value, d - 1)
    if hyper.shape == COUNT:
        count = np.asarray(value)
        if count.ndim != 0 or count.dtype.kind not in "iuf" or not np.isfinite(count) or count != np.round(count) or count < 1:
            raise ValueError(f"{hyper.name} must be an integer >= 1, got {value!r}")
        return count.astype(float)
    if hyper.shape == CATEGORIES:
        counts = np.asarray(value)
        if counts.shape != (d,) or counts.dtype.kind not in "iuf" or not np.all(np.isfinite(counts)):
            raise ValueError(f"{hyper.name} must be {d} integers >= 1 (one per feature), got {value!r}")
        if not np.all(counts == np.round(counts)) or np.any(counts < 1):
            raise ValueError(f"{hyper.name} must be {d} integers >= 1 (one per feature), got {counts.tolist()}")
        return counts.astype(float)
    raise ValueError(f"{hyper.name} is not a kernel hyperparameter")


def _check_spd(name, value, d):
    """A finite symmetric positive-definite ``d x d`` matrix (symmetric to ``numpy.allclose``, the tolerance of the
    PyTensor support condition), symmetrised."""
    check_hyperparameter(name, value, ndim_max=2)
    matrix = np.asarray(value, dtype=float)
    if matrix.shape != (d, d):
        raise ValueError(f"{name} must be a {d} x {d} matrix (one row per feature), got shape {matrix.shape}")
    if not np.allclose(matrix, matrix.T):
        raise ValueError(f"{name} must be a symmetric matrix, got {matrix}")
    matrix = 0.5 * (matrix + matrix.T)
    try:
        np.linalg.cholesky(matrix)
    except np.linalg.LinAlgError as err:
        raise ValueError(f"{name} must be positive definite, got {matrix}") from err
    return matrix


def pack(spec, d, *values, zeta=1.0):
    """The kernels' ``params`` vector ``[d, *values flattened, *derived, zeta]`` of a family with ``spec``, each
    value validated.

    ``values`` are the kernel hyperparameters (:attr:`FamilySpec.kernel_hypers`)
    in their order; locations in data units (``families.shift_params`` moves
    them to the kernels' origin).  The last entry is ``zeta`` in (0, 1], the
    power of every item's likelihood (``families``, "Coarsening"; 1: the
    ordinary posterior).
    """
    d = check_dimension(d)
    zeta = check_zeta(zeta)
    hypers = spec.kernel_hypers
    if len(values) != len(hypers):
        names = ", ".join(h.name for h in hypers)
        raise TypeError(f"expected {len(hypers)} hyperparameters ({names}), got {len(values)}")
    params = np.concatenate([[float(d)], *(np.ravel(check_value(h, v, d)) for h, v in zip(hypers, values))])
    if spec.derived is not None:
        params = np.concatenate([params, np.ravel(spec.derived(params))])
    return np.ascontiguousarray(np.append(params, zeta))


def location_slice(spec, d):
    """The slice of ``params`` that holds the family's location hyperparameter, or ``None`` if it has none."""
    start = 1
    for h in spec.kernel_hypers:
        width = {
            FEATURE: d, SCALAR: 1, MATRIX: d * d, COUNT: 1, CATEGORIES: d, COEFFICIENTS: d - 1,
            COEFFICIENT_MATRIX: (d - 1) * (d - 1),
        }[h.shape]
        if h.location:
            return slice(start, start + width)
        start += width
    return None
