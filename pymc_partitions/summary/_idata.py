"""Reading partition posteriors from ArviZ ``InferenceData`` or ``xarray.DataTree``.

``pm.sample`` returns an ``InferenceData`` (PyMC 5) or a ``DataTree`` (PyMC 6);
both are read as ``idata[group][variable]`` (``docs/design.md`` §7.5), so every reader
here accepts either:

- :func:`partition_draws` -- the posterior draws of the partition variable,
  chains pooled, in canonical labels (raw labels are not identifiable, so no
  summary reads their values);
- :func:`draws_of_items` -- those draws restricted to a subset of the items;
- :func:`scalar_stat` -- a scalar sample stat as a (chain, draw) array;
- :func:`recorded_labels` -- the labels that a step's ``keep_items`` recorded
  as the scalar stats ``partition_label_{i}``, for traces that leave ``z`` out
  (``pm.sample(var_names=...)`` for large ``n``);
- :func:`set_group` -- add (or replace) a group, in either container.
"""

from __future__ import annotations

import numpy as np

from pymc_partitions._validation import as_label_array, check_item_indices, check_posterior_draws, check_var_name
from pymc_partitions.kernels.info import LABEL_STAT_PREFIX
from pymc_partitions.labels import canonical_rows, relabel


def group(idata, name):
    """``idata[name]`` for an InferenceData or a DataTree, ``None`` if the group is absent."""
    try:
        return idata[name]
    except (KeyError, AttributeError, TypeError):
        return None


def set_group(idata, name, dataset):
    """Set group ``name`` of ``idata`` to the ``xarray.Dataset`` ``dataset``, in place (replacing one of that name)."""
    if hasattr(idata, "add_groups"):  # arviz.InferenceData
        if name in idata.groups():
            del idata[name]
        idata.add_groups({name: dataset})
    else:  # xarray.DataTree
        import xarray as xr

        idata[name] = xr.DataTree(dataset)


def variable(group, name):
    """``group[name]``, ``None`` if the group or the variable is absent."""
    if group is None:
        return None
    try:
        if name not in group:
            return None
        return group[name]
    except (KeyError, TypeError):
        return None


def partition_draws(idata, var_name, purpose):
    """Posterior draws of the partition as a canonical int32 array (chains * draws, n).

    ``purpose`` (the calling function) goes into the error raised when the
    posterior or the partition variable is missing.  One draw is a valid
    posterior (of one draw); none, or draws of no items, are not.
    """
    check_var_name(var_name)
    posterior = group(idata, "posterior")
    if posterior is None:
        raise ValueError(f"{purpose} needs a 'posterior' group holding '{var_name}'; idata has none")
    z = variable(posterior, var_name)
    if z is None:
        raise ValueError(
            f"{purpose} needs the draws of the partition variable '{var_name}', but the posterior does not hold it; "
            f"keep '{var_name}' in the trace (do not exclude it with pm.sample(var_names=...)), "
            f"or pass var_name= if the partition variable has another name"
        )
    values = check_posterior_draws(f"posterior['{var_name}']", z.values, tuple(z.dims))
    return relabel(values.reshape(-1, values.shape[-1]))


def draws_of_items(draws, items):
    """Canonical ``draws`` (rows) restricted to the columns ``items``, relabelled canonically.

    ``items=None`` keeps all items (``draws`` is returned as is); otherwise
    ``items`` must be distinct indices in ``0 .. n - 1``, and the result's
    columns follow their order.
    """
    if items is None:
        return draws
    n = draws.shape[1]
    idx = check_item_indices("items", items, n, allow_empty=False)
    return canonical_rows(np.ascontiguousarray(draws[:, idx]), n)


def scalar_stat(idata, name):
    """A scalar sample stat as a (chain, draw) array, or ``None`` if absent."""
    value = variable(group(idata, "sample_stats"), name)
    if value is None:
        return None
    arr = np.asarray(value.values if hasattr(value, "values") else value)
    if arr.ndim != 2:
        raise ValueError(f"sample_stats['{name}'] must be a scalar stat with dims (chain, draw), got shape {arr.shape}")
    return arr


def recorded_labels(idata, var_name):
    """``(items, labels)`` from the ``partition_label_{i}`` stats when ``var_name`` is not in the posterior, else ``None``.

    ``items`` is the sorted list of recorded item indices; ``labels`` the
    integer (chains * draws, len(items)) array of their raw labels.
    """
    if variable(group(idata, "posterior"), var_name) is not None:
        return None
    stats = group(idata, "sample_stats")
    names = [] if stats is None else [str(k) for k in stats.data_vars if str(k).startswith(LABEL_STAT_PREFIX)]
    if not names:
        return None
    items = sorted(int(name[len(LABEL_STAT_PREFIX) :]) for name in names)
    labels = np.stack([scalar_stat(idata, f"{LABEL_STAT_PREFIX}{i}").reshape(-1) for i in items], axis=1)
    return items, as_label_array("partition_label stats", labels)
