"""Input validation shared by every public entry point.

Each check raises a ``ValueError`` or ``TypeError`` that names the argument,
states what was expected and what was given, so that bad input fails at model
construction time with a message a user can act on -- never inside numba.
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
from pytensor.graph.basic import Constant, Variable


def constant_value(value):
    """Return ``value`` as a numpy array if it is known at graph-build time, else ``None``.

    Python numbers, numpy arrays and PyTensor constants are known; any other
    PyTensor variable (for example a PyMC random variable) is symbolic.
    """
    if isinstance(value, Constant):
        return np.asarray(value.data)
    if isinstance(value, Variable):
        try:
            return np.asarray(pt.get_underlying_scalar_constant_value(value))
        except Exception:
            return None
    try:
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError) as err:
        raise TypeError(f"expected a number, array or PyTensor variable, got {type(value).__name__}") from err


def check_hyperparameter(name, value, *, lower=None, upper=None, lower_inclusive=False, ndim_max=1, length=None):
    """Validate a hyperparameter that may be a constant or a PyMC random variable.

    Constants are checked for finiteness, shape and support; symbolic values are
    only checked for their number of dimensions.  Returns ``value`` unchanged.
    """
    if isinstance(value, Variable):
        if value.type.ndim > ndim_max:
            raise ValueError(f"{name} must have at most {ndim_max} dimension(s), got a {value.type.ndim}-d variable")
        known = constant_value(value)
        if known is None:
            return value
    else:
        known = constant_value(value)
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


def check_n_items(name, n):
    """``n`` must be a positive Python/numpy integer."""
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"{name} must be a positive integer (the number of items), got {type(n).__name__} {n!r}")
    if n < 1:
        raise ValueError(f"{name} must be a positive integer (the number of items), got {n}")
    return int(n)


def _concrete_float_array(name, data, what):
    """``data`` as a float64 numpy array; a symbolic variable or non-numeric input is a TypeError."""
    if isinstance(data, Variable):
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


def check_static_length(name, value, length):
    """A symbolic vector hyperparameter with a known static length must have length ``length``.

    Complements :func:`check_hyperparameter`, which checks the length of constants only.
    Returns ``value`` unchanged.
    """
    if isinstance(value, Variable) and value.type.ndim == 1:
        static = value.type.shape[0]
        if static is not None and static != length:
            raise ValueError(f"{name} must be a scalar or have length {length}, got a variable of length {static}")
    return value


def check_spd_matrix(name, value, size):
    """``value`` must be a ``size`` x ``size`` symmetric positive definite matrix.

    Constants are checked fully (shape, finiteness, symmetry, Cholesky); symbolic
    values only for their number of dimensions and static shape.  Returns ``value``.
    """
    if isinstance(value, Variable):
        if value.type.ndim != 2:
            raise ValueError(f"{name} must be a {size} x {size} matrix, got a {value.type.ndim}-d variable")
        if any(s is not None and s != size for s in value.type.shape):
            raise ValueError(f"{name} must be a {size} x {size} matrix, got static shape {value.type.shape}")
        known = constant_value(value) if isinstance(value, Constant) else None
        if known is None:
            return value
    else:
        known = constant_value(value)
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


def check_partition_input(name, partition, n_items=None):
    """Return ``partition`` as a 1-D integer PyTensor vector of cluster labels, one per item.

    Its length, when known at graph-build time (static shape, constant or shared
    value), must equal ``n_items``; known labels must lie in ``0 .. length - 1``.
    """
    if isinstance(partition, Variable):
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
    if isinstance(var, Constant):
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
