"""Input validation shared by every public entry point.

Each check raises a ``ValueError`` or ``TypeError`` that names the argument,
states what was expected and what was given, so that bad input fails once, at
the boundary (model construction, step construction, a summary call), with a
message a user can act on -- never inside numba.  Checks return the validated
value, converted where that helps the caller (an ``int``, a float64 or int64
array, a canonical spelling).

This module imports neither PyMC nor PyTensor: the numba layers (``families``,
``priors``, ``state``, ``kernels``) use it and must load on a Dask worker
without them.  A value can only be a PyTensor variable once PyTensor has been
imported, so the symbolic checks look PyTensor up in ``sys.modules`` instead of
importing it (as scikit-learn's ``_is_pandas_df`` does for pandas);
:func:`constant_value` (given a variable) and :func:`check_partition_input`
(which builds a graph) import it when called.

Sections: symbolic values; integers, flags and choices; hyperparameters; data
matrices; partitions, labels and item indices; cluster parameters; summaries.
"""

from __future__ import annotations

import sys

import numpy as np

# --------------------------------------------------------------------------- #
# Symbolic values
# --------------------------------------------------------------------------- #


def _is_variable(value):
    """True if ``value`` is a PyTensor variable (PyTensor is not imported to find out)."""
    graph = sys.modules.get("pytensor.graph.basic")
    return graph is not None and isinstance(value, graph.Variable)


def _is_constant(value):
    """True if ``value`` is a PyTensor constant (PyTensor is not imported to find out)."""
    graph = sys.modules.get("pytensor.graph.basic")
    return graph is not None and isinstance(value, graph.Constant)


def constant_value(value):
    """Return ``value`` as a numpy array if it is known at graph-build time, else ``None``.

    Python numbers, numpy arrays and PyTensor constants are known; any other
    PyTensor variable (for example a PyMC random variable) is symbolic.
    """
    if _is_constant(value):
        return np.asarray(value.data)
    if _is_variable(value):
        from pytensor.tensor import get_underlying_scalar_constant_value

        try:
            return np.asarray(get_underlying_scalar_constant_value(value))
        except Exception:
            return None
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(f"expected a number, array or PyTensor variable, got {type(value).__name__}") from err


# --------------------------------------------------------------------------- #
# Integers, flags and choices
# --------------------------------------------------------------------------- #


def _is_integer(value):
    """True for a Python or numpy integer that is not a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def check_positive_int(name, value, what=None):
    """``value`` must be an integer >= 1; returns it as ``int``.

    A non-integer is a ``TypeError``, an integer < 1 a ``ValueError``; ``what``
    (e.g. ``"the number of items"``) is added to the message.
    """
    expected = f"a positive integer ({what})" if what else "a positive integer"
    if not _is_integer(value):
        raise TypeError(f"{name} must be {expected}, got {type(value).__name__} {value!r}")
    if value < 1:
        raise ValueError(f"{name} must be {expected}, got {value}")
    return int(value)


def check_count(name, value, low):
    """``value`` must be an integer >= ``low`` (step options such as ``n_moves``); returns it as ``int``.

    Anything else, a non-integer included, is a ``ValueError``.
    """
    if not _is_integer(value) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def check_count_between(name, value, low, high):
    """``value`` must be an integer in ``[low, high]``; returns it as ``int`` (else ``ValueError``)."""
    if not _is_integer(value) or not low <= value <= high:
        raise ValueError(f"{name} must be an integer between {low} and {high}, got {value!r}")
    return int(value)


def check_ladder(name, ladder):
    """``ladder`` must be a sequence of at least two real numbers in ``(0, 1]``, the first 1, strictly decreasing
    (the likelihood powers of tempering's levels); returns it as a tuple of ``float`` (else ``ValueError``)."""
    try:
        values = np.asarray(ladder, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a sequence of numbers in (0, 1], got {ladder!r}") from None
    if isinstance(ladder, (str, bytes)) or values.ndim != 1 or values.shape[0] < 2:
        raise ValueError(f"{name} must hold at least two levels (e.g. (1.0, 0.7, 0.5)), got {ladder!r}")
    if not np.all(np.isfinite(values)) or not np.all((values > 0.0) & (values <= 1.0)):
        raise ValueError(f"{name} must hold numbers in (0, 1], got {ladder!r}")
    if values[0] != 1.0:
        raise ValueError(f"{name} must start at 1.0 (level 1 is the posterior), got {ladder!r}")
    if not np.all(np.diff(values) < 0.0):
        raise ValueError(f"{name} must be strictly decreasing, got {ladder!r}")
    return tuple(float(v) for v in values)


def check_dimension(d):
    """``d`` (the number of features) must be a positive integer; returns it as ``int`` (else ``ValueError``)."""
    if not _is_integer(d) or d < 1:
        raise ValueError(f"d must be a positive integer (the number of features), got {d!r}")
    return int(d)


def check_flag(name, value):
    """``value`` must be ``True`` or ``False``; returns it."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return value


def check_option(name, value, options):
    """``value`` must be one of ``options`` exactly (strings, or ``None`` where allowed); returns it."""
    if not any(value is option or (isinstance(value, str) and value == option) for option in options):
        raise ValueError(f"{name} must be one of {list(options)}, got {value!r}")
    return value


def check_choice(name, value, choices):
    """``value`` must be one of the strings ``choices``, compared case-insensitively.

    Returns the spelling used in ``choices`` (``"vi"`` -> ``"VI"``).
    """
    by_key = {choice.lower(): choice for choice in choices}
    if isinstance(value, str) and value.lower() in by_key:
        return by_key[value.lower()]
    quoted = [repr(choice) for choice in choices]
    expected = " or ".join(quoted) if len(quoted) <= 2 else "one of " + ", ".join(quoted)
    raise ValueError(f"{name} must be {expected}, got {value!r}")


def check_integer_choice(name, value, choices, what):
    """``value`` must be one of the integers ``choices``; returns it as ``int`` (else ``ValueError``).

    ``what`` explains the choices (e.g. ``"d = 6, 8 or 10 attributes"``).
    """
    if not _is_integer(value) or value not in choices:
        expected = ", ".join(str(c) for c in choices[:-1]) + f" or {choices[-1]}"
        raise ValueError(f"{name} must be {expected} ({what}), got {value!r}")
    return int(value)


def check_fraction(name, value, what):
    """``value`` must be a real number in ``(0, 1]``; returns it as ``float``.

    A non-number (a string, a bool, an array) is a ``TypeError``; NaN or a
    number outside ``(0, 1]`` a ``ValueError``.  ``what`` says what it is a fraction of.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number in (0, 1], got {type(value).__name__} {value!r}")
    value = float(value)
    if not 0.0 < value <= 1.0:
        raise ValueError(f"{name} must lie in (0, 1] ({what}), got {value}")
    return value


def check_positive_number(name, value, what):
    """``value`` must be a finite real number ``> 0``; returns it as ``float``.

    A non-number (a string, a bool, an array) is a ``TypeError``; NaN, an
    infinity or a number ``<= 0`` a ``ValueError``.  ``what`` says what it weighs.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a positive number, got {type(value).__name__} {value!r}")
    value = float(value)
    if not (np.isfinite(value) and value > 0.0):
        raise ValueError(f"{name} must be a finite number > 0 ({what}), got {value}")
    return value


def check_random_seed(name, value):
    """``value`` must be what :func:`numpy.random.default_rng` takes; returns that generator.

    ``None``, a non-negative integer (not a bool), a sequence of them, a
    ``SeedSequence``, a ``BitGenerator`` or a ``Generator``; anything else is
    a ``TypeError`` (a negative integer a ``ValueError``) naming ``name``.
    """
    expected = "None, a non-negative integer or a numpy Generator"
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be {expected}, got bool {value!r}")
    try:
        return np.random.default_rng(value)
    except ValueError as err:
        raise ValueError(f"{name} must be {expected}, got {value!r}") from err
    except TypeError as err:
        raise TypeError(f"{name} must be {expected}, got {type(value).__name__} {value!r}") from err


# --------------------------------------------------------------------------- #
# Hyperparameters
# --------------------------------------------------------------------------- #


def _numeric_value(name, value):
    """``value`` as a float64 numpy array if it is known at graph-build time, else ``None`` (symbolic).

    Strings, booleans, ``None`` and other non-numeric values are a ``TypeError`` naming ``name``.
    """
    if _is_variable(value):
        return constant_value(value)
    expected = "a number, an array of numbers or a PyTensor variable"
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be {expected}, got a ragged {type(value).__name__}") from err
    if raw.dtype.kind not in "iuf":
        raise TypeError(f"{name} must be {expected}, got {type(value).__name__} {value!r}")
    return raw.astype(float)


def check_hyperparameter(name, value, *, lower=None, upper=None, lower_inclusive=False, ndim_max=1, length=None):
    """Validate a hyperparameter that may be a constant or a PyMC random variable.

    Constants are checked for type, finiteness, shape and support; symbolic
    values only for their number of dimensions (their support is the log
    density's business: ``-inf`` outside it).  Returns ``value`` unchanged.
    """
    if _is_variable(value) and value.type.ndim > ndim_max:
        raise ValueError(f"{name} must have at most {ndim_max} dimension(s), got a {value.type.ndim}-d variable")
    known = _numeric_value(name, value)
    if known is None:
        return value
    if known.ndim > ndim_max:
        raise ValueError(f"{name} must have at most {ndim_max} dimension(s), got shape {known.shape}")
    if length is not None and known.ndim == 1 and known.shape[0] != length:
        raise ValueError(f"{name} must be a scalar or have length {length}, got length {known.shape[0]}")
    if not np.all(np.isfinite(known)):
        raise ValueError(f"{name} must be finite, got {known}")
    if lower is not None:
        bad = known < lower if lower_inclusive else known <= lower
        if np.any(bad):
            relation = ">=" if lower_inclusive else ">"
            raise ValueError(f"{name} must be {relation} {lower}, got {known}")
    if upper is not None and np.any(known >= upper):
        raise ValueError(f"{name} must be < {upper}, got {known}")
    return value


def check_coarsening(coarsening):
    """``coarsening`` (the c of Miller & Dunson's c-posterior) is ``None`` or a finite number > 0; returns it as
    ``None`` or ``float``."""
    if coarsening is None:
        return None
    if isinstance(coarsening, (bool, np.bool_)) or not isinstance(coarsening, (int, float, np.integer, np.floating)):
        raise TypeError(
            f"coarsening must be None (no coarsening) or a positive number c (each item's likelihood is raised to "
            f"c / (c + n)), got {coarsening!r}"
        )
    value = float(coarsening)
    if not np.isfinite(value) or value <= 0.0:
        raise ValueError(
            f"coarsening must be None (no coarsening) or a finite number c > 0 (each item's likelihood is raised to "
            f"c / (c + n)), got {coarsening!r}"
        )
    return value


def coarsening_power(coarsening, count):
    """The power ``zeta = c / (c + count)`` of each of ``count`` likelihood terms under ``coarsening=c``: ``c`` a value
    :func:`check_coarsening` returned (``None``: 1.0) or a symbolic scalar, ``count`` a number or a symbolic scalar."""
    return 1.0 if coarsening is None else coarsening / (coarsening + count)


def check_zeta(zeta):
    """The likelihood power ``zeta`` of a coarsened model: a float in (0, 1]; returns it as ``float``."""
    value = np.asarray(zeta)
    if value.ndim != 0 or value.dtype.kind not in "iuf" or not np.isfinite(value) or not 0.0 < value <= 1.0:
        raise ValueError(f"zeta (the power of every item's likelihood) must be a number in (0, 1], got {zeta!r}")
    return float(value)


def check_static_length(name, value, length):
    """A symbolic vector hyperparameter with a known static length must have length ``length``.

    Complements :func:`check_hyperparameter`, which checks the length of constants only.
    Returns ``value`` unchanged.
    """
    if _is_variable(value) and value.type.ndim == 1:
        static = value.type.shape[0]
        if static is not None and static != length:
            raise ValueError(f"{name} must be a scalar or have length {length}, got a variable of length {static}")
    return value


def check_spd_matrix(name, value, size):
    """``value`` must be a ``size`` x ``size`` symmetric positive definite matrix.

    Constants are checked fully (shape, finiteness, symmetry, Cholesky); symbolic
    values only for their number of dimensions and static shape.  Returns ``value``.
    """
    if _is_variable(value):
        if value.type.ndim != 2:
            raise ValueError(f"{name} must be a {size} x {size} matrix, got a {value.type.ndim}-d variable")
        if any(s is not None and s != size for s in value.type.shape):
            raise ValueError(f"{name} must be a {size} x {size} matrix, got static shape {value.type.shape}")
        known = constant_value(value) if _is_constant(value) else None
        if known is None:
            return value
    else:
        known = _numeric_value(name, value)
    if known.shape != (size, size):
        raise ValueError(f"{name} must be a {size} x {size} matrix (one row per feature), got shape {known.shape}")
    if not np.all(np.isfinite(known)):
        raise ValueError(f"{name} must be finite, got {known}")
    if not np.allclose(known, known.T, rtol=1e-10, atol=1e-12 * max(1.0, float(np.max(np.abs(known))))):
        raise ValueError(f"{name} must be symmetric, got {known}")
    try:
        np.linalg.cholesky(known)
    except np.linalg.LinAlgError as err:
        raise ValueError(f"{name} must be positive definite, got {known}") from err
    return value


def check_probabilities(name, value, what):
    """``value`` must be a constant 1-D array of non-negative probabilities summing to 1; returns their logs.

    ``what`` says what the entries are (``"p(k) for k = 1..k_max"``).
    """
    if _is_variable(value) and not _is_constant(value):
        raise TypeError(f"{name} must be a constant array of probabilities {what}, not a symbolic PyTensor variable")
    p = _numeric_value(name, value)
    if p.ndim != 1 or p.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array of probabilities {what}, got shape {p.shape}")
    if not np.all(np.isfinite(p)) or np.any(p < 0) or not np.isclose(p.sum(), 1.0, atol=1e-6):
        raise ValueError(f"{name} must hold finite non-negative probabilities {what}, summing to 1")
    with np.errstate(divide="ignore"):
        return np.log(p / p.sum())


def check_pitman_yor(alpha, sigma):
    """Known values of a Pitman-Yor prior's ``alpha`` and ``sigma`` must satisfy ``alpha > -sigma``.

    With ``sigma`` symbolic, a known ``alpha`` must still exceed ``-1`` (as
    ``sigma < 1``): otherwise no ``sigma`` is in the support.
    """
    check_hyperparameter("sigma", sigma, lower=0.0, lower_inclusive=True, upper=1.0, ndim_max=0)
    check_hyperparameter("alpha", alpha, ndim_max=0)
    a, s = _numeric_value("alpha", alpha), _numeric_value("sigma", sigma)
    if a is not None and s is not None and not a > -s:
        raise ValueError(f"alpha must be > -sigma for a Pitman-Yor prior, got alpha={a}, sigma={s}")
    if a is not None and not a > -1.0:
        raise ValueError(f"alpha must be > -sigma > -1 for a Pitman-Yor prior, got alpha={a}")


# --------------------------------------------------------------------------- #
# Data matrices
# --------------------------------------------------------------------------- #


def _concrete_float_array(name, data, what):
    """``data`` as a float64 numpy array; a symbolic variable or non-numeric input is a TypeError."""
    if _is_variable(data):
        raise TypeError(f"{name} must be concrete data (numpy array), not a symbolic PyTensor variable")
    try:
        return np.asarray(data, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(f"{name} must be a numeric {what}, got {type(data).__name__}") from err


def check_data_matrix(name, data, *, binary=False, counts=False):
    """Validate an observed data matrix (items x features) and return it as float64.

    A 1-D array is read as one feature per item.  Rejects NaN/inf, and for
    ``binary`` anything but 0/1, for ``counts`` negative or non-integer values.
    """
    arr = _concrete_float_array(name, data, "array")
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (items x features), got shape {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} must have at least one item and one feature, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values; remove or impute them first")
    if binary and not np.all((arr == 0) | (arr == 1)):
        raise ValueError(f"{name} must contain only 0 and 1 for a Beta-Bernoulli mixture")
    if counts and (np.any(arr < 0) or np.any(arr != np.round(arr))):
        raise ValueError(f"{name} must contain non-negative integer counts")
    return np.ascontiguousarray(arr)


def check_adjacency(name, data):
    """Validate an unweighted undirected network and return its adjacency matrix as float64.

    ``data`` must be a concrete square 2-D array of finite 0/1 values, symmetric,
    with zero diagonal (no self loops).  Returns a C-contiguous float64 copy.
    """
    arr = _concrete_float_array(name, data, "adjacency matrix")
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1]:
        raise ValueError(f"{name} must be a square n x n adjacency matrix, got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} must have at least one vertex, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values; an adjacency matrix holds only 0 and 1")
    if not np.all((arr == 0) | (arr == 1)):
        bad = np.unique(arr[(arr != 0) & (arr != 1)])[:5]
        raise ValueError(
            f"{name} must contain only 0 and 1 (an unweighted network), got values such as {bad.tolist()}; "
            "threshold a weighted network first, e.g. (A > 0)"
        )
    if not np.array_equal(arr, arr.T):
        i, j = np.argwhere(arr != arr.T)[0]
        raise ValueError(
            f"{name} must be symmetric (an undirected network), but {name}[{i}, {j}] != {name}[{j}, {i}]; "
            "symmetrize it first, e.g. ((A + A.T) > 0)"
        )
    if np.any(np.diag(arr) != 0):
        i = int(np.flatnonzero(np.diag(arr))[0])
        raise ValueError(
            f"{name} must have a zero diagonal (no self loops), but {name}[{i}, {i}] = {arr[i, i]:g}; "
            "set the diagonal to 0 first"
        )
    return np.ascontiguousarray(arr)


def check_categories(name, value, d):
    """The number of values of each of ``d`` categorical features: ``d`` constant integers >= 1; returns int64."""
    values = _numeric_value(name, value) if not _is_variable(value) or _is_constant(value) else None
    if values is None:
        raise TypeError(f"{name} must be a constant vector of integers >= 1 (one per feature), not a symbolic PyTensor variable")
    values = np.atleast_1d(values)
    if values.shape != (d,):
        raise ValueError(f"{name} must have one entry per feature ({d}), got shape {values.shape}")
    if not np.all(np.isfinite(values)) or np.any(values < 1) or np.any(values != np.round(values)):
        raise ValueError(f"{name} must hold integers >= 1 (the values of each feature), got {values}")
    return values.astype(np.int64)


def check_totals(name, totals, n):
    """Row totals ``N_i`` of count data: a 1-D vector of ``n`` non-negative integers (``n=None``: any length).

    Returns them as int64.
    """
    values = _numeric_value(name, totals) if not _is_variable(totals) or _is_constant(totals) else None
    if values is None:
        raise TypeError(f"{name} must be a constant vector of non-negative integers, not a symbolic PyTensor variable")
    if values.ndim != 1:
        raise ValueError(f"{name} must be a 1-D vector of non-negative integers (one per item), got {values.shape}")
    if not np.all(np.isfinite(values)) or np.any(values < 0) or np.any(values != np.round(values)):
        raise ValueError(f"{name} must hold non-negative integers, got {values}")
    if n is not None and values.shape[0] != n:
        raise ValueError(f"{name} must have one entry per item ({n}), got length {values.shape[0]}")
    return values.astype(np.int64)


def check_covariates(name, covariates, n=None):
    """A design matrix: a constant finite (n, p) array with p >= 1 (a 1-D array is one covariate per item), as
    float64; ``n`` (if given) its number of rows."""
    values = _numeric_value(name, covariates) if not _is_variable(covariates) or _is_constant(covariates) else None
    if values is None:
        raise TypeError(f"{name} must be a constant (n, p) array (the design matrix is data), not a symbolic variable")
    if values.ndim == 1:
        values = values[:, None]
    if values.ndim != 2 or values.shape[0] == 0 or values.shape[1] == 0:
        raise ValueError(f"{name} must be a 2-D array (items x covariates) with at least one of each, got {values.shape}")
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{name} contains NaN or infinite values; remove or impute them first")
    if n is not None and values.shape[0] != n:
        raise ValueError(f"{name} must have one row per item ({n}), got {values.shape[0]} rows")
    return np.ascontiguousarray(values, dtype=np.float64)


# --------------------------------------------------------------------------- #
# Partitions, labels and item indices
# --------------------------------------------------------------------------- #


def check_partition_input(name, partition, n_items=None):
    """Return ``partition`` as a 1-D integer PyTensor vector of cluster labels, one per item.

    Its length, when known at graph-build time (static shape, constant or shared
    value), must equal ``n_items``; known labels must lie in ``0 .. length - 1``.
    Imports PyTensor (it builds a graph for a numpy ``partition``).
    """
    import pytensor.tensor as pt

    if _is_variable(partition):
        var = partition
    else:
        arr = np.asarray(partition)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"{name} must hold integer cluster labels, got dtype {arr.dtype}")
        var = pt.as_tensor_variable(arr)
    dtype = getattr(var.type, "dtype", None)
    if dtype is None or np.dtype(dtype).kind not in "iu":
        raise TypeError(f"{name} must be an integer vector of cluster labels, got dtype {dtype}")
    if var.type.ndim != 1:
        raise ValueError(f"{name} must be a 1-D vector of cluster labels (one per item), got {var.type.ndim}-d")
    if _is_constant(var):
        labels = np.asarray(var.data)
    elif hasattr(var, "get_value"):
        labels = np.asarray(var.get_value())
    else:
        labels = None
    length = var.type.shape[0] if labels is None else labels.shape[0]
    if n_items is not None and length is not None and length != n_items:
        raise ValueError(f"{name} has {length} labels but observed has {n_items} rows (items); they must match")
    if labels is not None and labels.size and (labels.min() < 0 or labels.max() >= labels.shape[0]):
        raise ValueError(f"{name} labels must lie in 0..{labels.shape[0] - 1}, got {labels.min()}..{labels.max()}")
    return var


def as_label_array(name, z):
    """``z`` as an integer numpy array of cluster labels, items on the last axis.

    Integer-valued floats are accepted (and converted to int64); booleans,
    other dtypes, non-integer or non-finite values, ragged nested lists and
    scalars are not.
    """
    try:
        arr = np.asarray(z)
    except ValueError as err:
        raise ValueError(f"{name} must be a rectangular array of integer cluster labels, got ragged input") from err
    if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise TypeError(f"{name} must hold integer cluster labels, got dtype {arr.dtype}")
    if arr.ndim == 0:
        raise ValueError(f"{name} must have at least one dimension (items on the last axis), got a scalar")
    if np.issubdtype(arr.dtype, np.floating):
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise ValueError(f"{name} must hold integer cluster labels, got non-integer values")
        arr = arr.astype(np.int64)
    return arr


def check_label_vector(name, z, n):
    """``z`` must be one label per item for ``n`` items; returns it as an integer array (see :func:`as_label_array`)."""
    arr = as_label_array(name, z)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise ValueError(f"{name} must be a 1-D label vector of length {n}, got shape {arr.shape}")
    return arr


def check_label_pair(a, b):
    """Two partitions ``a``, ``b`` of the same non-empty set of items; returns both as integer arrays."""
    a, b = as_label_array("a", a), as_label_array("b", b)
    if a.ndim != 1 or b.ndim != 1 or a.shape != b.shape:
        raise ValueError(f"a and b must be 1-D label vectors of the same length, got shapes {a.shape} and {b.shape}")
    if a.size == 0:
        raise ValueError("a and b must contain at least one item")
    return a, b


def check_partition_shape(shape, n):
    """``shape`` of a partition prior (``None`` or a tuple whose last entry is ``n``, the number of items).

    PyMC derives ``shape`` from ``shape=``, ``dims=`` or ``observed=``; the
    support dimension of a partition is its ``n`` items.
    """
    if shape is None or _is_variable(shape):
        return
    dims = (shape,) if _is_integer(shape) else tuple(shape)
    last = dims[-1] if dims else None
    if hasattr(last, "get_value"):  # the length of a model dimension (dims=) is a shared variable
        last = int(last.get_value())
    elif _is_variable(last):
        last = constant_value(last)
        last = None if last is None else int(last)
    if not dims or (last is not None and last != n):
        raise ValueError(
            f"shape must end in n = {n} (one label per item; shape comes from shape=, dims= or observed=), got {shape}"
        )


def check_single_partition(size, shape, dims):
    """A partition variable in a model is one partition: no ``size``, and ``shape``/``dims`` of one dimension.

    Its log density is that of one label vector; batches of partitions are
    for ``.dist`` draws (``pm.draw(DirichletProcessPartition.dist(..., size=...))``).
    """
    if size is not None and np.size(size) > 0:
        raise ValueError(
            f"size must be None for a partition variable in a model (one partition of n items), got {size}; "
            "draw batches of partitions with .dist(..., size=...) and pm.draw"
        )
    for name, value in (("shape", shape), ("dims", dims)):
        if value is None or _is_integer(value) or isinstance(value, str):
            continue
        if len(tuple(value)) != 1:
            raise ValueError(
                f"{name} must have one dimension for a partition variable in a model (its n items), got {value}"
            )


def check_initial_partition(name, z, n):
    """An initial value or observed value of a partition variable: integer labels, one per item.

    Returns them as an integer array (the caller puts them in canonical form:
    ``labels.relabel``).  Strategy strings (``"prior"``, ``"support_point"``)
    and PyTensor variables are returned unchanged.
    """
    if z is None or isinstance(z, str) or _is_variable(z):
        return z
    return check_label_vector(name, z, n)


def check_item_indices(name, items, n, *, allow_empty, noun="item"):
    """Distinct item indices in ``0 .. n - 1``, as an int64 array in the given order.

    ``allow_empty=True`` is for an optional list (a step's ``keep_items``):
    ``None`` or an empty list give an empty array.  ``allow_empty=False`` is for
    a selection that must name at least one item (the summaries' ``items``; the
    caller reads ``items=None`` as "all items" and does not call this).
    ``n=None`` when the number of items is not known: only the lower bound is checked.
    ``noun`` names what is indexed in the messages (``"feature"`` for columns).
    """
    expected = f"a 1-D list of {noun} indices" if allow_empty else f"a non-empty 1-D list of {noun} indices"
    if items is None:
        if allow_empty:
            return np.empty(0, dtype=np.int64)
        raise ValueError(f"{name} must be {expected}, got None")
    arr = np.asarray(items)
    if arr.ndim != 1 or (arr.size == 0 and not allow_empty):
        raise ValueError(f"{name} must be {expected}, got shape {arr.shape}")
    if arr.size == 0:
        return np.empty(0, dtype=np.int64)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name} must hold integer {noun} indices, got dtype {arr.dtype}")
    low, high = arr.min(), arr.max()
    if low < 0 or (n is not None and high >= n):
        bounds = "non-negative indices" if n is None else f"indices in 0 .. {n - 1} (n = {n} {noun}s)"
        raise ValueError(f"{name} must be {bounds}, got values from {low} to {high}")
    values, counts = np.unique(arr, return_counts=True)
    if np.any(counts > 1):
        raise ValueError(f"{name} must not contain repeated indices, got {values[counts > 1].tolist()} more than once")
    return arr.astype(np.int64)


# --------------------------------------------------------------------------- #
# Cluster parameters (NormalMixture)
# --------------------------------------------------------------------------- #


def check_parameter_block(name, value, d):
    """A block of cluster parameters, one row per possible cluster: ``(k_max, d)``; returns ``k_max``.

    ``value`` is a PyTensor variable of static shape ``(k_max, d)`` or an array
    of that shape (finite; ``positive`` values for ``tau`` are the model's
    support, not checked here).  ``k_max >= 1`` is the largest number of
    clusters the model allows.
    """
    if _is_variable(value):
        shape = value.type.shape
    else:
        arr = _concrete_float_array(name, value, "array")
        if not np.all(np.isfinite(arr)):
            raise ValueError(f"{name} contains NaN or infinite values")
        shape = arr.shape
    if len(shape) != 2 or shape[1] != d or shape[0] is None:
        raise ValueError(
            f"{name} must have shape (K_max, {d}): one row of parameters per possible cluster and one column per "
            f"feature of observed, with K_max known when the model is built; got shape {tuple(shape)}"
        )
    if shape[0] < 1:
        raise ValueError(f"{name} must have at least one row (K_max >= 1), got shape {tuple(shape)}")
    return int(shape[0])


def check_parameter_variable(name, var, op_name, distribution):
    """``var`` must be a random variable of ``distribution`` (e.g. ``pm.Normal``), whose op's name is ``op_name``.

    A step method samples ``NormalMixture``'s ``mu`` and ``tau`` itself, from
    their conditionals, so it needs their prior: a ``pm.Normal`` and a
    ``pm.Gamma`` whose parameters do not vary across rows (every cluster has
    the same prior).  Returns the op's distribution parameters.
    """
    op = getattr(getattr(var, "owner", None), "op", None)
    if getattr(op, "name", None) != op_name or not hasattr(op, "dist_params"):
        raise TypeError(
            f"{name} must be a {distribution} random variable of shape (K_max, d) for a partition step to sample "
            f"it with the partition, got {var!r}"
        )
    params = op.dist_params(var.owner)
    for param in params:
        rows = param.type.shape[0] if param.type.ndim == 2 else 1
        if rows != 1:
            raise ValueError(
                f"the {distribution} prior of {name} must be the same for every row (cluster): give its parameters "
                "as scalars or one value per feature (shape (d,)), not one row per cluster"
            )
    return params


def check_parameter_values(z, mu, tau, k_max):
    """The partition ``z`` and the rows ``mu``, ``tau`` of a point, before numba reads them.

    ``z`` must be canonical (labels in order of first appearance, the stored
    form) with at most ``k_max`` clusters; the rows of the occupied clusters
    must be finite, ``tau`` positive.
    """
    z = np.asarray(z)
    previous = np.maximum.accumulate(np.concatenate([[-1], z[:-1]]))
    if z[0] != 0 or np.any(z > previous + 1):
        raise ValueError("z must be canonical (labels 0, 1, ... in order of first appearance), as partition variables store it")
    k = int(z.max()) + 1
    if k > k_max:
        raise ValueError(
            f"z has {k} clusters but the model allows at most K_max = {k_max} (the rows of mu and tau); "
            "its log density is -inf there"
        )
    if not (np.all(np.isfinite(mu[:k])) and np.all(np.isfinite(tau[:k])) and np.all(tau[:k] > 0)):
        raise ValueError("mu and tau must be finite, and tau positive, in the rows of the occupied clusters")


# --------------------------------------------------------------------------- #
# The hybrid sampler
# --------------------------------------------------------------------------- #


def check_shard_count(name, value, n):
    """``value`` shards for ``n`` items: an integer in ``1 .. n``; returns it as ``int``."""
    if not _is_integer(value):
        raise TypeError(f"{name} must be an integer number of shards, got {type(value).__name__} {value!r}")
    if not 1 <= value <= n:
        raise ValueError(f"{name} must lie in 1 .. {n} (every shard needs at least one of the n = {n} items), got {value}")
    return int(value)


def check_backend(name, backend):
    """``"local"`` or a running ``dask.distributed.Client`` with at least one worker; returns it.

    The client is checked without importing Dask for the ``"local"`` case.
    """
    if isinstance(backend, str):
        if backend != "local":
            raise ValueError(f'{name} must be "local" or a dask.distributed.Client, got {backend!r}')
        return backend
    distributed = sys.modules.get("distributed")
    if distributed is None or not isinstance(backend, distributed.Client):
        raise TypeError(f'{name} must be "local" or a dask.distributed.Client, got {type(backend).__name__}')
    if backend.status != "running":
        raise ValueError(f"{name}: the Dask client is {backend.status}, not running; connect a new Client")
    if not backend.scheduler_info().get("workers"):
        raise ValueError(f"{name}: the Dask cluster at {backend.scheduler.address} has no workers; start some (dask-worker)")
    return backend


# --------------------------------------------------------------------------- #
# Summaries
# --------------------------------------------------------------------------- #


def check_var_name(var_name):
    """``var_name`` (the name of the partition variable in the trace) must be a string; returns it."""
    if not isinstance(var_name, str):
        raise TypeError(f"var_name must be a string (the partition variable's name), got {type(var_name).__name__}")
    return var_name


def check_idata(idata):
    """``idata`` must be an ``arviz.InferenceData`` or an ``xarray.DataTree`` (both have groups); returns it."""
    if not hasattr(idata, "groups"):
        raise TypeError(
            f"idata must be an arviz.InferenceData or xarray.DataTree (the result of pm.sample), got "
            f"{type(idata).__name__}; wrap draws of shape (chain, draw, n) as az.from_dict(posterior={{'z': draws}})"
        )
    return idata


def check_posterior_draws(name, values, dims):
    """Posterior draws of a partition: an integer array with dims ``(chain, draw, n)``, at least one draw and one item.

    ``dims`` are the array's dimension names (empty if unknown).  Returns the
    labels (see :func:`as_label_array`).
    """
    values = np.asarray(values)
    if values.ndim != 3 or (dims and dims[:2] != ("chain", "draw")):
        raise ValueError(f"{name} must have dims (chain, draw, n), got dims {dims or None} and shape {values.shape}")
    if values.shape[0] * values.shape[1] == 0 or values.shape[2] == 0:
        raise ValueError(f"{name} must hold at least one draw of at least one item, got shape {values.shape}")
    return as_label_array(name, values)


# --------------------------------------------------------------------------- #
# Plots
# --------------------------------------------------------------------------- #


def check_axes(name, ax, count=1):
    """``ax`` must be ``None``, a matplotlib ``Axes`` (``count == 1``) or ``count`` of them; returns a list or ``None``."""
    if ax is None:
        return None
    axes = [ax] if count == 1 else list(np.ravel(np.asarray(ax, dtype=object)))
    expected = "a matplotlib Axes" if count == 1 else f"a sequence of {count} matplotlib Axes"
    if len(axes) != count or not all(hasattr(a, "figure") and hasattr(a, "imshow") for a in axes):
        raise TypeError(f"{name} must be {expected} (e.g. from plt.subplots), got {type(ax).__name__}")
    return axes


def check_similarity_matrix(name, matrix):
    """A co-clustering matrix: square, symmetric, entries in [0, 1]; returns it as float64."""
    arr = _concrete_float_array(name, matrix, "matrix")
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or arr.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty square m x m matrix (posterior_similarity), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or np.any(arr > 1):
        raise ValueError(f"{name} must hold co-clustering probabilities in [0, 1]")
    if not np.allclose(arr, arr.T):
        raise ValueError(f"{name} must be symmetric (Pr(z_i = z_j) = Pr(z_j = z_i))")
    return arr


def check_chain_values(name, values):
    """Per-draw values of a scalar: (chain, draw) or one chain's (draw,); returns a 2-D float64 array."""
    arr = _concrete_float_array(name, values, "array")
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.size == 0:
        raise ValueError(f"{name} must have shape (chain, draw) or (draw,) with at least one draw, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    return arr


def check_window(window, n_draws):
    """A moving-window length in draws: ``None`` (about a twentieth of the draws, at least 10) or an int >= 1."""
    if window is None:
        return max(10, n_draws // 20)
    return check_positive_int("window", window)


def check_names(name, names, count, what):
    """``None`` or ``count`` strings, one per ``what`` (e.g. the data's columns); returns a tuple of them or ``None``."""
    if names is None:
        return None
    if isinstance(names, str) or not all(isinstance(v, str) for v in np.ravel(np.asarray(names, dtype=object))):
        raise TypeError(f"{name} must be a sequence of strings, one per {what}, got {names!r}")
    values = tuple(np.ravel(np.asarray(names, dtype=object)))
    if len(values) != count:
        raise ValueError(f"{name} must hold {count} names, one per {what}, got {len(values)}")
    return values
