r"""Your own component model: a partition that indexes the rows of cluster parameters written in PyMC.

A user writes the component likelihood with PyMC's own distributions, taking a
cluster's parameters from ``z`` by row indexing::

    with pm.Model():
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(y))
        lam = pm.LogNormal("lam", 0.0, 1.0, shape=20)          # K_max = 20 rows, i.i.d.
        pm.Poisson("y", lam[z], observed=y)

The joint density is

.. math::

    p(z) \prod_{r < K_{\max}} g(\theta_r \mid \eta) \prod_i f(y_i \mid \theta_{z_i}, \phi, x_i),

with ``theta`` the *row variables* (free variables whose leading axis has
``K_max`` rows, i.i.d. given hyperparameters ``eta`` that do not depend on
``z``), ``phi`` parameters shared by all clusters and ``x_i`` covariates.
:func:`find_component_model` finds this structure in the model graph and
checks it (a ``ValueError`` naming the variable and what is allowed), and
:class:`ComponentModel` compiles what the step methods need from the model's
own graph:

* :meth:`ComponentModel.log_likelihoods`: every item's log likelihood under
  every row, ``L[i, r] = log f(y_i | theta_r, phi, x_i)``, one vectorised
  PyTensor evaluation (the likelihood's graph with each ``T[z]`` replaced by
  every row of ``T``, ``pytensor.graph.replace.vectorize_graph``): the data of
  the kernels' ``families.component``;
* :meth:`ComponentModel.draw_rows`: a draw of every row variable from its
  prior given the current hyperparameters (forward sampling of the row
  variables' own graph), in the value space PyMC samples;
* :meth:`ComponentModel.permute_rows`: the rows relabelled with the partition.

The partition is restricted to at most ``K_max`` clusters, as for
``NormalMixture``: a ``z`` with a label ``>= K_max`` indexes no row (PyTensor
raises an ``IndexError``), and the step methods never propose one.  With random
hyperparameters of the partition prior the restriction is the factor
``1[K <= K_max]`` of the joint, not a renormalised prior.  Choose ``K_max``
well above the number of clusters the posterior supports.

What is allowed, checked before sampling:

* ``z`` enters the observed variables only as the index of the first axis of
  tensors with ``K_max`` rows (``beta[z]``, ``beta[z, 0]``, ``pm.math.exp(log_lam)[z]``);
* each such tensor is a row-wise function of the row variables (row ``r``
  depends on row ``r`` of each only; checked by permuting the rows), and the
  row variables enter the likelihood through it only;
* a row variable's prior is the same for every row (its parameters broadcast
  along the first axis, which is a batch axis, not a support axis) and does
  not depend on ``z`` or on another row variable; no other term of the model
  (priors, potentials, other observed variables) depends on the rows or ``z``;
* every observed variable that depends on ``z`` has one entry per item along
  its first axis (``n`` rows), and its log likelihood factors over items
  (checked by changing one item's label).
"""

from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
from pytensor.compile.sharedvalue import SharedVariable
from pytensor.graph.replace import clone_replace, vectorize_graph
from pytensor.graph.traversal import ancestors, io_toposort
from pytensor.tensor.random.op import RandomVariable
from pytensor.tensor.shape import Shape, Shape_i
from pytensor.tensor.subtensor import AdvancedSubtensor, AdvancedSubtensor1

from pymc_partitions._jit import announcing_if_slow

__all__ = ["ComponentModel", "find_component_model", "depends_on"]


def depends_on(graphs, variables):
    """The members of ``variables`` that ``graphs`` depend on through values (not through shapes alone)."""
    targets = set(variables)
    found, seen, pending = [], set(), list(graphs)
    while pending:
        var = pending.pop()
        if var in seen:
            continue
        seen.add(var)
        if var in targets:
            found.append(var)
        node = var.owner
        if node is not None and not isinstance(node.op, (Shape, Shape_i)):
            pending.extend(node.inputs)
    return found


class ComponentModel:
    """A user's component model around one partition variable (module docstring).

    Built by :func:`find_component_model`.  Attributes: ``partition`` (the
    partition random variable), ``n``, ``k_max``, ``observed`` (the observed
    variables that depend on ``z``), ``rows`` (the row random variables) and
    ``row_names`` (the names of their value variables in PyMC's point).
    """

    def __init__(self, model, partition, observed, rows, k_max):
        self.model = model
        self.partition = partition
        self.n = int(partition.type.shape[0])
        self.k_max = int(k_max)
        self.observed = tuple(observed)
        self.rows = tuple(rows)
        self.row_names = tuple(model.rvs_to_values[rv].name for rv in rows)
        self._log_likelihoods = None
        self._draw = None

    # -- what the steps call ---------------------------------------------------------------------

    def log_likelihoods(self, point):
        """``L`` (n, K_max), C-contiguous float64: ``L[i, r] = log f(y_i | theta_r, ...)`` at ``point`` (module docstring)."""
        if self._log_likelihoods is None:
            observed = ", ".join(repr(o.name) for o in self.observed)
            message = f"compiling {observed}'s log likelihoods under every cluster row with PyTensor, first use only"
            with announcing_if_slow(message):
                self._log_likelihoods = self._compile_log_likelihoods(point)
        return np.ascontiguousarray(self._log_likelihoods(point).T, dtype=np.float64)

    def _compile_log_likelihoods(self, point):
        """The compiled ``(K_max, n)`` graph: rows kept at shape ``(K_max, 1, ...)`` so that what depends on a row
        only (``log sigma``) is computed once per row, not once per item; if the model's graph needs the items'
        axis in full (a shape check on it), rows broadcast to ``(K_max, n, ...)`` instead."""
        for broadcast in (False, True):
            function = self.model.compile_fn(
                self.row_log_likelihood_graph(broadcast), inputs=self.model.value_vars, on_unused_input="ignore",
                point_fn=True,
            )
            try:
                function(point)
            except (ValueError, AssertionError):
                if broadcast:
                    raise
                continue
            return function

    def draw_rows(self, point, rng):
        """A prior draw of every row variable given the other values at ``point``: ``{value name: array}``, in the
        value space of PyMC's point (transformed as PyMC transforms the variable).  ``rng`` (a numpy
        ``Generator``) seeds it, so a step's ``random_seed`` fixes it."""
        if self._draw is None:
            self._draw = self._compile_prior_draw()
        function, generators = self._draw
        for shared, seed in zip(generators, rng.integers(2**63, size=len(generators))):
            shared.set_value(np.random.default_rng(seed), borrow=True)
        return dict(zip(self.row_names, function(point)))

    def permute_rows(self, point, order):
        """``point`` with row ``k`` of every row variable replaced by its row ``order[k]`` (a new dict)."""
        new = dict(point)
        for name in self.row_names:
            new[name] = np.asarray(point[name])[order]
        return new

    # -- graphs --------------------------------------------------------------------------------

    def item_log_likelihood_graph(self, labels=None):
        """The log likelihood of each item (length ``n``): the observed variables' log densities summed over all
        axes but the first, in terms of the model's value variables (``labels``: a graph to use for ``z``)."""
        terms = self.model.logp(vars=list(self.observed), sum=False)
        total = sum(_per_item(term) for term in terms)
        if labels is not None:
            total = clone_replace(total, {self.model.rvs_to_values[self.partition]: labels})
        return total

    def row_log_likelihood_graph(self, broadcast=False):
        """``(K_max, n)``: each item's log likelihood with every ``T[z]`` replaced by row ``r`` of ``T`` for all items
        (``vectorize_graph`` over a new leading axis of rows; the rows at shape ``(K_max, 1, ...)``, or broadcast to
        ``(K_max, n, ...)``)."""
        terms = self.model.logp(vars=list(self.observed), sum=False)
        total = sum(_per_item(term) for term in terms)
        replacements = {
            node.outputs[0]: _rows_of(node, self.k_max, self.n, broadcast) for node in self._index_nodes_of(total)
        }
        return vectorize_graph(total, replacements)

    def _index_nodes_of(self, graph):
        z_value = self.model.rvs_to_values[self.partition]
        return [node for node in io_toposort(self.model.value_vars, [graph]) if z_value in node.inputs]

    def _compile_prior_draw(self):
        """A function of the point to fresh prior draws of the row variables (value space), and its generators."""
        model = self.model
        generators, outputs = [], []
        for rv in self.rows:
            node = rv.owner
            inputs = model.replace_rvs_by_values(list(node.inputs))
            fresh = []
            for var in inputs:
                if isinstance(var, SharedVariable) and isinstance(var.get_value(borrow=True), np.random.Generator):
                    shared = pytensor.shared(np.random.default_rng(0))
                    generators.append(shared)
                    fresh.append(shared)
                else:
                    fresh.append(var)
            draw = node.clone_with_new_inputs(fresh).outputs[node.outputs.index(rv)]
            transform = model.rvs_to_transforms.get(rv)
            outputs.append(draw if transform is None else transform.forward(draw, *fresh))
        function = model.compile_fn(outputs, inputs=model.value_vars, on_unused_input="ignore", point_fn=True)
        return function, generators


def _per_item(term):
    """A log density term summed over every axis but the first (items)."""
    return term.sum(axis=tuple(range(1, term.ndim))) if term.ndim > 1 else term


def _is_row_index(node, z_value):
    """Whether ``node`` is ``T[z]`` or ``T[z, j, ...]``: advanced indexing of ``T``'s first axis by the partition's
    value, any further indices scalars or slices that do not depend on it."""
    if not isinstance(node.op, (AdvancedSubtensor, AdvancedSubtensor1)) or len(node.inputs) < 2:
        return False
    rows, index, *rest = node.inputs
    return (
        index is z_value
        and not depends_on([rows], [z_value])
        and all(getattr(var.type, "ndim", 0) == 0 and not depends_on([var], [z_value]) for var in rest)
    )


def _rows_of(node, k_max, n, broadcast):
    """``T[z, ...]``'s value for every item in every row: ``T[r, ...]`` at shape ``(K_max, 1, ...)``, or broadcast to
    ``(K_max, n, ...)``."""
    rows, _, *rest = node.inputs
    selected = pt.expand_dims(node.op(rows, pt.arange(k_max), *rest), 1)
    if not broadcast:
        return selected
    return pt.broadcast_to(selected, (k_max, n, *(selected.shape[i] for i in range(2, selected.ndim))))


FOUND_KEPT = 8
"""Component models remembered by :func:`find_component_model` (the oldest is forgotten first)."""
_found = {}


def find_component_model(model, partition, observed):
    """The :class:`ComponentModel` of ``observed`` (the observed variables that depend on ``partition``), after
    checking that it has the form of the module docstring; a ``ValueError`` naming what is not allowed otherwise.

    Its checks compile PyTensor functions (about a second), so it is found once for a model and its variables:
    ``pm.sample``'s step assignment, the steps, the calibration and the summaries of one model share it (the
    last :data:`FOUND_KEPT` models are remembered; a variable added to a model makes it a new one)."""
    key = (model, partition, tuple(observed), tuple(model.basic_RVs), tuple(model.potentials))
    if key not in _found:
        if len(_found) >= FOUND_KEPT:
            _found.pop(next(iter(_found)))
        _found[key] = _checked_component_model(model, partition, observed)
    return _found[key]


def _checked_component_model(model, partition, observed):
    """:func:`find_component_model` without the memory."""
    z_name = partition.name
    z_value = model.rvs_to_values[partition]
    n = int(partition.type.shape[0])
    for obs in observed:
        _check_no_missing_values(model, obs, z_name)
        _check_finite_data(model, obs, n)
        if obs.type.ndim - getattr(obs.owner.op, "ndim_supp", 0) < 1:
            raise ValueError(
                f"the observed variable {obs.name!r} depends on the partition {z_name!r} but is one multivariate "
                f"draw over the items ({type(obs.owner.op).__name__} with support over its first axis): the "
                "likelihood must factor over items, with the items along a batch axis"
            )
        length = obs.type.shape[0] if obs.type.ndim else 1
        if obs.type.ndim == 0 or (length is not None and length != n):
            raise ValueError(
                f"the observed variable {obs.name!r} depends on the partition {z_name!r} but has shape "
                f"{obs.type.shape}: it must have one entry per item along its first axis (n = {n}), so that item i "
                f"takes its cluster's parameters by {z_name}[i]"
            )
    terms = model.logp(vars=list(observed), sum=False)
    total = sum(_per_item(term) for term in terms)
    nodes = [node for node in io_toposort(model.value_vars, [total]) if z_value in node.inputs]
    for node in nodes:
        if not _is_row_index(node, z_value):
            raise ValueError(
                f"the partition {z_name!r} enters the likelihood of {_names(observed)} through "
                f"{type(node.op).__name__} ({node.op}); a partition may only index the rows of cluster parameters, "
                f"e.g. beta[{z_name}] or sigma[{z_name}] (cluster parameters with K_max rows along the first axis)"
            )
    indexed = [node.inputs[0] for node in nodes]
    shapes = {var.type.shape[0] if var.type.ndim else None for var in indexed}
    if None in shapes or len(shapes) != 1:
        raise ValueError(
            f"the tensors {_names(observed)} index by {z_name!r} must all have the same static number of rows "
            f"K_max along their first axis (give the cluster parameters shape=(K_max, ...)); got first dimensions "
            f"{sorted(str(s) for s in shapes)}"
        )
    (k_max,) = shapes
    dummies = {node.outputs[0]: node.outputs[0].type() for node in nodes}
    rest = clone_replace(total, dummies)
    if depends_on([rest], [z_value]):
        raise ValueError(
            f"the partition {z_name!r} is used in the likelihood of {_names(observed)} other than as an index of "
            f"cluster parameter rows ({z_name} used arithmetically or as a shape); only beta[{z_name}]-style "
            "indexing is allowed"
        )
    row_values = [
        value for value in depends_on(indexed, [v for v in model.value_vars if v is not z_value])
        if model.values_to_rvs[value].type.ndim >= 1 and model.values_to_rvs[value].type.shape[0] == k_max
    ]
    if not row_values:
        raise ValueError(
            f"{_names(observed)} index tensors of {k_max} rows by {z_name!r}, but no free variable with {k_max} rows "
            "feeds them: cluster parameters must be PyMC random variables whose first axis has K_max rows"
        )
    rows = [model.values_to_rvs[value] for value in row_values]
    leaked = depends_on([rest], row_values)
    if leaked:
        raise ValueError(
            f"the cluster parameters {_names(model.values_to_rvs[v] for v in leaked)} enter the likelihood of "
            f"{_names(observed)} other than through their rows indexed by {z_name!r}; use them only as "
            f"param[{z_name}]"
        )
    _check_row_priors(model, rows, row_values, z_value)
    _check_other_terms(model, partition, observed, rows, row_values, z_value)
    component = ComponentModel(model, partition, observed, rows, k_max)
    _check_numerically(component)
    return component


def _names(variables):
    return ", ".join(repr(v.name) for v in variables)


def _check_no_missing_values(model, obs, z_name):
    """Refuse an observed variable with missing values: PyMC splits a masked (or NaN-holding) ``observed`` array
    into ``{name}_observed`` and a free ``{name}_unobserved`` that it imputes, which a component model does not
    support (each item's likelihood must be known to move its label; docs/design.md, §2.3)."""
    name = obs.name or ""
    if not name.endswith("_observed"):
        return
    base = name[: -len("_observed")]
    if f"{base}_unobserved" not in {v.name for v in model.free_RVs}:
        return
    missing = int(model[f"{base}_unobserved"].type.shape[0] or 0)
    raise ValueError(
        f"the observed variable {base!r}, which depends on the partition {z_name!r}, has missing values "
        f"({missing} of them: a masked array or NaN, which PyMC imputes as {base + '_unobserved'!r}); a component "
        f"model needs every item's observation.  Drop the items whose {base} is missing (their entries of every "
        f"covariate too, and n of {z_name!r}) before building the model; their clusters can then be predicted "
        "from the point partition's cluster parameters (pmp.cluster_parameters)"
    )


def _check_finite_data(model, obs, n):
    """Every constant array with one entry per item in ``obs``'s graph (the covariates, ``pm.Data`` or numpy) and
    its observed values are finite; a ``ValueError`` naming the variable and the first bad items otherwise."""
    arrays = [(model.rvs_to_values[obs], f"the observed values of {obs.name!r}")]
    for var in ancestors(obs.owner.inputs):
        if isinstance(var, (pt.TensorConstant, SharedVariable)) and getattr(var.type, "ndim", 0) >= 1:
            label = f"the data {var.name!r}" if var.name else "a covariate (a numpy array)"
            arrays.append((var, f"{label} in the likelihood of {obs.name!r}"))
    for var, label in arrays:
        values = var.get_value() if isinstance(var, SharedVariable) else getattr(var, "data", None)
        if values is None or values.ndim == 0 or values.shape[0] != n or values.dtype.kind not in "fc":
            continue
        bad = np.flatnonzero(~np.isfinite(values.reshape(n, -1)).all(axis=1))
        if bad.size:
            raise ValueError(
                f"{label} has NaN or infinite values at {bad.size} item(s), first {bad[:5].tolist()}: the "
                "likelihood of those items is undefined.  Drop or impute those items before building the model"
            )


def _check_row_priors(model, rows, row_values, z_value):
    """Each row variable's prior is the same for every row and depends on neither ``z`` nor another row variable."""
    for rv in rows:
        op = rv.owner.op
        batch_ndim = rv.type.ndim - getattr(op, "ndim_supp", 0)
        if batch_ndim < 1:
            raise ValueError(
                f"the cluster parameter {rv.name!r} is one multivariate draw over its rows ({type(op).__name__} with "
                "support over the first axis): the rows must be i.i.d., e.g. shape=(K_max, p) with a "
                "distribution per row"
            )
        inputs = op.dist_params(rv.owner) if isinstance(op, RandomVariable) else rv.owner.inputs
        others = [v for v in row_values if v is not model.rvs_to_values[rv]] + [z_value]
        dependent = depends_on(model.replace_rvs_by_values(list(inputs)), others)
        if dependent:
            raise ValueError(
                f"the prior of the cluster parameter {rv.name!r} depends on {_names(model.values_to_rvs[v] for v in dependent)}: "
                "the rows of cluster parameters must be i.i.d. given variables that depend neither on the partition "
                "nor on other cluster parameters"
            )
        if isinstance(op, RandomVariable):
            for param, core in zip(op.dist_params(rv.owner), op.ndims_params):
                batch = param.type.broadcastable[: param.type.ndim - core]
                if len(batch) == batch_ndim and not batch[0]:
                    raise ValueError(
                        f"the prior of the cluster parameter {rv.name!r} differs between rows (a parameter varies "
                        "along the first axis): its rows must be i.i.d., with parameters that are scalars or "
                        "broadcast along the rows"
                    )


def _check_other_terms(model, partition, observed, rows, row_values, z_value):
    """No term of the model but the row variables' own priors and the component likelihood depends on the rows or ``z``."""
    for rv in model.free_RVs + model.observed_RVs:
        if rv in observed or rv is partition:
            continue
        (term,) = model.logp(vars=[rv], sum=False)
        own = [model.rvs_to_values[rv]] if rv in rows else []
        dependent = [v for v in depends_on([term], [*row_values, z_value]) if v not in own]
        if dependent:
            raise ValueError(
                f"{rv.name!r} depends on {_names(model.values_to_rvs[v] for v in dependent)}: only the component "
                "likelihood may use the partition and the cluster parameters (their rows by z); priors of other "
                "variables may not"
            )
    for potential, graph in zip(model.potentials, model.replace_rvs_by_values(model.potentials)):
        if depends_on([graph], [*row_values, z_value]):
            raise ValueError(
                f"the potential {potential.name!r} depends on the partition or the cluster parameters; a component "
                "model allows them only in observed variables' likelihoods"
            )


def _check_numerically(component, tolerance=1e-8):
    """The vectorised log likelihoods agree with the model's, factor over items, and follow the rows when the row
    variables are permuted (module docstring); at a prior draw of the rows and random labels."""
    model = component.model
    n, k_max = component.n, component.k_max
    rng = np.random.default_rng(20261129)
    point = model.initial_point()
    point.update(component.draw_rows(point, rng))
    labels = model.rvs_to_values[component.partition].type("labels")
    per_item = pytensor.function(
        [labels, *model.value_vars], component.item_log_likelihood_graph(labels), on_unused_input="ignore",
        mode="FAST_COMPILE",
    )
    values = [point[v.name] for v in model.value_vars]
    z = rng.integers(min(k_max, 3), size=n).astype(labels.dtype)
    reference = per_item(z, *values)
    table = component.log_likelihoods(point)
    z_name = component.partition.name
    if not np.allclose(table[np.arange(n), z], reference, rtol=tolerance, atol=tolerance):
        raise ValueError(
            f"the likelihood of {_names(component.observed)} is not a function of each item's own row "
            f"{z_name}[i] (evaluated row by row it differs): it must factor over items"
        )
    item = int(rng.integers(n))
    moved = z.copy()
    moved[item] = (z[item] + 1) % k_max
    changed = per_item(moved, *values)
    others = np.arange(n) != item
    if not np.allclose(changed[others], reference[others], rtol=tolerance, atol=tolerance):
        raise ValueError(
            f"the likelihood of {_names(component.observed)} does not factor over items: changing the label of item "
            f"{item} changed the log likelihood of other items"
        )
    order = rng.permutation(k_max)
    permuted = component.log_likelihoods(component.permute_rows(point, order))
    if not np.allclose(permuted, table[:, order], rtol=tolerance, atol=tolerance):
        raise ValueError(
            f"permuting the rows of {_names(component.rows)} does not permute the clusters' likelihoods: the tensors "
            f"indexed by {z_name!r} must be row-wise functions of the cluster parameters (row r from row r only)"
        )
    prior = model.compile_logp(vars=list(component.rows), mode="FAST_COMPILE")
    if not np.isclose(prior(point), prior(component.permute_rows(point, order)), rtol=tolerance, atol=tolerance):
        raise ValueError(
            f"the prior of {_names(component.rows)} changes when their rows are permuted: the rows of cluster "
            "parameters must be i.i.d."
        )
