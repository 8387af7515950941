"""The package's import graph: no circle, and a module of the package imported inside a function only for a reason.

Read from the source (``ast``), not by importing: the module-level imports of
``pymc_partitions`` modules form a graph that must have no cycle (the layers
of docs/design.md §3 import only the ones above them), and an import of a
package module inside a function is allowed only where :data:`DEFERRED` says
why -- never to break a circle.
"""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1] / "pymc_partitions"

DEFERRED = {
    ("pymc_partitions.datasets", "pymc_partitions.prior_draws"):
        "one generator draws its labels with numba: loading the data sets does not compile it",
    ("pymc_partitions.steps.subcluster", "pymc_partitions.distributed.cluster"): "Dask is an optional dependency",
    ("pymc_partitions.families.normal_inverse_wishart", "pymc_partitions.families._cluster_moments"):
        "a PyTensor graph: the numba layers load without PyTensor",
    ("pymc_partitions.families.normal_inverse_wishart", "pymc_partitions.families._multigamma"):
        "a PyTensor graph: the numba layers load without PyTensor",
    ("pymc_partitions.families.normal_inverse_wishart", "pymc_partitions.families._log_det"):
        "a PyTensor graph: the numba layers load without PyTensor",
    ("pymc_partitions.families.normal_linear_regression", "pymc_partitions.families._cluster_moments"):
        "a PyTensor graph: the numba layers load without PyTensor",
    ("pymc_partitions.families.normal_linear_regression", "pymc_partitions.families.normal_inverse_wishart"):
        "the Normal-inverse-Wishart's PyTensor log determinant, used in a graph only",
}
"""Package imports made inside a function, ``(importer, imported)``, and why they are not at the top."""


def _modules():
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def _imported(node, importer, is_package):
    """The package modules an import statement names (a ``from m import x`` names ``m.x`` if that is a module)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name.startswith("pymc_partitions")]
    base = node.module or ""
    if node.level:
        parent = importer.split(".")[: len(importer.split(".")) - node.level + (1 if is_package else 0)]
        base = ".".join([*parent, *([base] if base else [])])
    if not base.startswith("pymc_partitions"):
        return []
    return [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base for alias in node.names]


def _imports():
    """``(top, deferred)``: each module's module-level package imports, and its imports inside functions."""
    top, deferred = {}, set()
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text())
        is_package = path.name == "__init__.py"
        top[name] = {m for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
                     for m in _imported(node, name, is_package)}
        for function in ast.walk(tree):
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(function):
                    if isinstance(node, (ast.Import, ast.ImportFrom)):
                        deferred.update((name, m) for m in _imported(node, name, is_package))
    return top, deferred


def _cycle(graph):
    """A cycle of ``graph`` (a list of modules), or ``None``."""
    state, path = {}, []

    def visit(node):
        state[node] = "open"
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        state[node] = "done"
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_the_module_level_imports_have_no_cycle():
    top, _ = _imports()
    assert _cycle(top) is None


def test_a_package_module_is_imported_inside_a_function_only_for_a_stated_reason():
    _, deferred = _imports()
    assert sorted(deferred - set(DEFERRED)) == []
    assert sorted(set(DEFERRED) - deferred) == []  # no stale entry


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_the_graph_is_read():
    """Imports of every form are found: absolute, ``from package import module``, relative."""
    top, _ = _imports()
    assert "pymc_partitions.distributions.discovery" in top["pymc_partitions.steps.base"]
    assert "pymc_partitions.families" in top["pymc_partitions.state"]
    assert "pymc_partitions.families.normal_inverse_wishart" in top["pymc_partitions.families.normal_linear_regression"]
