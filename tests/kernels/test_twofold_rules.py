"""Guards for the metaprogramming: the dispatch stubs (``_dispatch``) and the twofold drivers (``kernels.twofold``).

Two rules that nothing else checks until a kernel that breaks them is compiled, for a kind or family a test may
never compile:

* every ``kind_function`` stub has one implementation per kind it dispatches on, a numba function taking the
  stub's arguments; every ``family_function`` stub is defined exactly once, as a numba function taking the stub's
  arguments but ``family``, in the module of every family its ``module_of`` accepts (``_dispatch.KIND_FUNCTIONS``,
  ``_dispatch.FAMILY_FUNCTIONS``);
* no driver (``twofold._DRIVERS``) reaches another driver, executor operation or threaded loop as a module
  attribute (``module.driver(...)``): a compiled twin's globals replace names, not attributes, so such a call
  would run the interpreted driver inside numba code (the rule ``kernels/twofold.py`` states in prose).

Each check is a function of what it inspects, so the last tests show it flags a deliberately bad synthetic case.
"""

import ast
import importlib
import inspect
import pkgutil
import textwrap
import types

import pytest

import pymc_partitions
from pymc_partitions import _dispatch
from pymc_partitions.kernels import twofold


OPTIONAL = ("matplotlib", "dask", "distributed")
"""Optional dependencies: a module needing one that is not installed is left out."""


def _import_package():
    """Import every module of the package, so that every stub and driver is registered (they register when their
    module is imported)."""
    for info in pkgutil.walk_packages(pymc_partitions.__path__, "pymc_partitions."):
        try:
            importlib.import_module(info.name)
        except ModuleNotFoundError as error:
            if (error.name or "").split(".")[0] not in OPTIONAL:
                raise


_import_package()


def _arity(function):
    return len(inspect.signature(function).parameters)


def _kind_function_problems(stub, implementations):
    """What is wrong with the kind function ``stub`` and its ``{kind: implementation}``: unknown kinds, an
    implementation that is not a numba function, or one whose arguments are not the stub's."""
    problems = [f"unknown kind {kind!r}" for kind in implementations if kind not in _dispatch.KINDS]
    if not implementations:
        problems.append("no implementation")
    for kind, function in implementations.items():
        if not hasattr(function, "py_func"):
            problems.append(f"{kind}: {function!r} is not a numba function")
        elif _arity(function.py_func) != _arity(stub):
            problems.append(f"{kind}: {function.py_func.__qualname__} takes {_arity(function.py_func)} arguments, "
                            f"the stub {_arity(stub)}")
    return problems


def _top_level_bindings(source, name):
    """How many top-level statements of the module ``source`` bind ``name`` (a definition, assignment or import)."""
    count = 0
    for statement in ast.parse(source).body:
        if isinstance(statement, (ast.FunctionDef, ast.ClassDef)):
            names = [statement.name]
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        elif isinstance(statement, (ast.Import, ast.ImportFrom)):
            names = [(alias.asname or alias.name).split(".")[0] for alias in statement.names]
        else:
            names = []
        count += names.count(name)
    return count


def _family_function_problems(stub, modules, module_of, source_of=inspect.getsource, absent=()):
    """What is wrong with the family function ``stub``: a family that ``module_of`` accepts whose module does not
    define it exactly once (``source_of(module)``, its source) as a numba function of the stub's arguments but
    ``family``; the modules named in ``absent`` must not define it at all (:data:`NOT_DEFINED`)."""
    name, problems, families = stub.__name__, [], []
    for code, module in enumerate(modules):
        try:
            module_of(code)
        except ValueError:
            continue
        families.append(code)
        bindings = _top_level_bindings(source_of(module), name)
        function = getattr(module, name, None)
        if module.__name__ in absent:
            if bindings:
                problems.append(f"{module.__name__} defines {name}, listed as not defining it")
        elif bindings != 1:
            problems.append(f"{module.__name__} defines {name} {bindings} times")
        elif not hasattr(function, "py_func"):
            problems.append(f"{module.__name__}.{name} is not a numba function")
        elif _arity(function.py_func) != _arity(stub) - 1:
            problems.append(f"{module.__name__}.{name} takes {_arity(function.py_func)} arguments, "
                            f"the stub {_arity(stub)} with family")
    if not families:
        problems.append("dispatches on no family")
    return problems


def _twofold_callables():
    """Everything a driver must call by a bare name: the drivers, and the executor operations and threaded loops as
    Python and as numba code call them (``twofold._FORMS``, both sides)."""
    return {*twofold._DRIVERS, *twofold._FORMS, *twofold._FORMS.values()}


def _resolve(node, namespace):
    """The object the name or dotted name ``node`` denotes in ``namespace`` (``LookupError`` if none)."""
    if isinstance(node, ast.Name):
        if node.id not in namespace:
            raise LookupError(node.id)
        return namespace[node.id]
    if isinstance(node, ast.Attribute):
        value = _resolve(node.value, namespace)
        if not hasattr(value, node.attr):
            raise LookupError(node.attr)
        return getattr(value, node.attr)
    raise LookupError(ast.dump(node))


def _module_attribute_calls(function, callables):
    """The dotted names in ``function``'s source that reach a member of ``callables`` through a module
    (``module.name``, ``package.module.name``), resolved in its globals; local variables are not modules."""
    code = function.__code__
    local = {*code.co_varnames, *code.co_cellvars, *code.co_freevars}
    namespace = {k: v for k, v in function.__globals__.items() if k not in local}
    found = []
    for node in ast.walk(ast.parse(textwrap.dedent(inspect.getsource(function)))):
        if not isinstance(node, ast.Attribute):
            continue
        try:
            base, target = _resolve(node.value, namespace), _resolve(node, namespace)
        except LookupError:
            continue
        if isinstance(base, types.ModuleType) and _hashable(target) and target in callables:
            found.append(ast.unparse(node))
    return found


def _hashable(value):
    try:
        hash(value)
    except TypeError:
        return False
    return True


NOT_DEFINED = {
    "draw_prior": {
        "pymc_partitions.families.component": "a component model's rows are PyMC's values, drawn by PyMC "
        "(steps.component_split_merge); the kernels that call draw_prior (kernels.nonconjugate_split_merge) "
        "declare NormalMixture only",
    },
}
"""The family functions that a family of their kind does not define, and why: a kernel that calls one declares
(``Kernel.support``) no model of that family, so numba never compiles the call for it."""

KIND_FUNCTIONS = sorted(_dispatch.KIND_FUNCTIONS.items(), key=lambda item: item[0].__qualname__)
FAMILY_FUNCTIONS = sorted(_dispatch.FAMILY_FUNCTIONS.items(), key=lambda item: item[0].__qualname__)
DRIVERS = sorted(twofold._DRIVERS, key=lambda f: f"{f.__module__}.{f.__qualname__}")


def test_the_registries_are_filled():
    """The package's stubs and drivers registered (an empty list would make the other tests vacuous)."""
    assert len(KIND_FUNCTIONS) >= 10 and len(FAMILY_FUNCTIONS) >= 10 and len(DRIVERS) >= 10


@pytest.mark.parametrize("stub, implementations", KIND_FUNCTIONS, ids=[f.__qualname__ for f, _ in KIND_FUNCTIONS])
def test_kind_function_has_one_numba_implementation_per_kind(stub, implementations):
    assert _kind_function_problems(stub, implementations) == []


@pytest.mark.parametrize("stub, registered", FAMILY_FUNCTIONS, ids=[f.__qualname__ for f, _ in FAMILY_FUNCTIONS])
def test_family_function_is_defined_once_by_every_family_it_dispatches_on(stub, registered):
    assert _family_function_problems(stub, *registered, absent=NOT_DEFINED.get(stub.__name__, {})) == []


def test_the_exceptions_name_family_functions():
    assert set(NOT_DEFINED) <= {f.__name__ for f, _ in FAMILY_FUNCTIONS}


@pytest.mark.parametrize("function", DRIVERS, ids=lambda f: f"{f.__module__.rsplit('.', 1)[-1]}.{f.__qualname__}")
def test_driver_calls_drivers_by_bare_names(function):
    assert _module_attribute_calls(function, _twofold_callables()) == []


# Deliberately bad synthetic cases: each check flags them.

def _helper(sampler):
    """Stands for a driver in the synthetic cases."""
    return sampler


_fake_kernels = types.ModuleType("fake_kernels")
_fake_kernels.helper = _helper


def _bad_driver(sampler):
    return _fake_kernels.helper(sampler)


def _good_driver(sampler):
    fake_kernels = sampler  # a local variable, not the module
    return _helper(fake_kernels.helper)


def test_the_driver_check_flags_a_module_attribute_call():
    assert _module_attribute_calls(_bad_driver, {_helper}) == ["_fake_kernels.helper"]
    assert _module_attribute_calls(_good_driver, {_helper}) == []


class _Numba:
    """Stands for a numba function: its ``py_func``."""

    def __init__(self, py_func):
        self.py_func = py_func


def test_the_kind_function_check_flags_bad_implementations():
    def stub(model, state):
        """A two-argument kind function."""

    good = _Numba(lambda model, state: 0)
    assert _kind_function_problems(stub, {"additive": good, "relational": good}) == []
    problems = _kind_function_problems(
        stub, {"additive": _Numba(lambda model: 0), "relational": lambda model, state: 0, "conjugate": good}
    )
    assert len(problems) == 3 and "unknown kind 'conjugate'" in problems
    assert _kind_function_problems(stub, {}) == ["no implementation"]


def test_the_family_function_check_flags_a_family_missing_or_redefining_it():
    def stat_size(family, d):
        """A family function."""

    defined = "@jit\ndef stat_size(d):\n    return d\n"
    sources = {
        "once": defined,
        "twice": defined + "\n\nstat_size = other\n",
        "missing": "def other(d):\n    return d\n",
        "ignored": "",  # a family of another kind: module_of refuses it, its module is not read
    }
    modules = []
    for name, source in sources.items():
        module = types.ModuleType(name)
        if "stat_size" in source:
            module.stat_size = _Numba(lambda d: d)
        modules.append(module)

    def module_of(code):
        if modules[code].__name__ == "ignored":
            raise ValueError("another kind")
        return modules[code]

    problems = _family_function_problems(stat_size, modules, module_of, source_of=lambda m: sources[m.__name__])
    assert problems == ["twice defines stat_size 2 times", "missing defines stat_size 0 times"]
    absent = _family_function_problems(stat_size, modules, module_of, source_of=lambda m: sources[m.__name__],
                                       absent={"missing", "once"})
    assert absent == ["once defines stat_size, listed as not defining it", "twice defines stat_size 2 times"]
    assert _family_function_problems(stat_size, modules[:1], module_of, source_of=lambda m: sources[m.__name__]) == []
