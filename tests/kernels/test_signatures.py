"""Every numba function of the package takes at most :data:`MAX_PARAMETERS` parameters (``docs/design.md`` §5.4).

A longer list is what a named tuple of arrays carries instead: the model (``state.Model``, or its tag-free
``state.ModelArrays`` beside the family tag in a ``prange`` loop), a plan (``hybrid.Plan``, ``passes.PassPlan``), a
construction's inputs and buffers (``arm.Construction``, ``arm.Scratch``).  The functions checked are those numba
compiles: every ``_jit.jit`` function defined in a module of the package (the serial form of a threaded loop too) and
every driver (``kernels.twofold``), which numba compiles as a twin.  :data:`ALLOWED` names the few that keep a longer
list, each with its reason; an entry that no longer needs its place fails a test, so the list only shrinks.
"""

import inspect
import sys
import types

import numba
from numba.core.dispatcher import Dispatcher
from test_twofold_rules import _import_package  # imports every module of the package

from pymc_partitions.kernels import twofold

MAX_PARAMETERS = 11

ALLOWED = {
    "pymc_partitions.state._assemble": "the one constructor of a State, one parameter per field (13), by name",
    "pymc_partitions.kernels.clusters.update_items": "the single-item loop of every Gibbs sweep and restricted scan "
    "(12), the package's hottest code: grouping its four buffers is a change of its own, to be timed on the sweep "
    "(docs/benchmarks.md)",
    "pymc_partitions.summary.point._shift_overlaps": "the point estimate's search, not a sampler kernel (12): its "
    "sparse table (entries, n_entries, members, member_start) would be one named tuple for the whole search, with "
    "_sweep",
    "pymc_partitions.summary.point._sweep": "the point estimate's search (13), as _shift_overlaps; it returns the "
    "table arrays it reallocates as they grow, so a named tuple of them would be rebuilt on each growth",
}
"""The numba functions allowed more than :data:`MAX_PARAMETERS` parameters, by module and name, and why."""


def numba_functions(modules, drivers=()):
    """``{module.name: Python function}`` of the numba functions that ``modules`` define (dispatchers, and the
    serial form of ``twofold.threaded`` loops) and of ``drivers``; a function imported from another module is
    counted there."""
    found = {}
    for module in modules:
        for value in list(vars(module).values()):
            for candidate in (value, getattr(value, "serial", None)):
                if isinstance(candidate, Dispatcher) and candidate.py_func.__module__ == module.__name__:
                    found[f"{module.__name__}.{candidate.py_func.__qualname__}"] = candidate.py_func
    for function in drivers:
        found.setdefault(f"{function.__module__}.{function.__qualname__}", function)
    return found


def _parameters(function):
    return len(inspect.signature(function).parameters)


def too_long(functions, allowed):
    """The functions with more than :data:`MAX_PARAMETERS` parameters that ``allowed`` does not name."""
    return sorted(
        f"{name} takes {_parameters(function)} parameters"
        for name, function in functions.items()
        if _parameters(function) > MAX_PARAMETERS and name not in allowed
    )


_import_package()
FUNCTIONS = numba_functions(
    [module for name, module in sorted(sys.modules.items()) if name.split(".")[0] == "pymc_partitions"],
    twofold._DRIVERS,
)


def test_the_package_functions_are_found():
    """The walk reaches the kernels, the threaded loops and the drivers (an empty walk would pass vacuously)."""
    assert len(FUNCTIONS) >= 300
    for name in ("kernels.arm._construct", "kernels.passes.run_pass", "kernels.passes.shard_sums", "state._assemble"):
        assert f"pymc_partitions.{name}" in FUNCTIONS


def test_numba_functions_take_at_most_eleven_parameters():
    assert too_long(FUNCTIONS, ALLOWED) == []


def test_every_allowed_function_still_needs_its_place():
    """Each entry of :data:`ALLOWED` names a function of the package that takes more than the limit."""
    stale = [name for name in ALLOWED if name not in FUNCTIONS or _parameters(FUNCTIONS[name]) <= MAX_PARAMETERS]
    assert stale == []


def test_the_check_flags_a_long_signature():
    """A synthetic module: its 12-parameter numba function and driver are flagged, unless allowed; an imported
    function and an 11-parameter one are not."""
    module = types.ModuleType("fake_kernels")
    exec(
        "def long(a, b, c, d, e, f, g, h, i, j, k, l):\n    return a\n\n"
        "def short(a, b, c, d, e, f, g, h, i, j, k):\n    return a\n\n"
        "def driver(a, b, c, d, e, f, g, h, i, j, k, l):\n    return a\n",
        vars(module),
    )
    module.long, module.short = numba.njit(module.long), numba.njit(module.short)  # _jit.jit caches: it needs a file
    module.imported = numba.njit(types.FunctionType(module.driver.__code__, {"__name__": "elsewhere"}))
    functions = numba_functions([module], [module.driver])
    assert sorted(functions) == ["fake_kernels.driver", "fake_kernels.long", "fake_kernels.short"]
    assert too_long(functions, {}) == [
        "fake_kernels.driver takes 12 parameters", "fake_kernels.long takes 12 parameters"
    ]
    assert too_long(functions, {"fake_kernels.long": "a reason", "fake_kernels.driver": "another"}) == []
