"""Compile-time dispatch on a model's family and kind (numba).

A model's family (Beta-Bernoulli, Normal-Gamma, ..., the Infinite Relational
Model) is carried by the *type* of a tag, an empty named tuple whose class
holds the family's integer code and its kind (``families.TAGS``), and a
partition state carries its kind the same way (``KIND_TAGS``).  numba
specialises every kernel on the types of its arguments, so a kernel is
compiled once per family and only with that family's code: a Normal-Gamma step
never compiles the Normal-inverse-Wishart Cholesky factors nor the relational
edge counts.  Choosing the code at compile time instead of with run-time
``if`` chains is what keeps a new user's first draw short
(``docs/benchmarks.md``, "First draw").  A process that runs one kernel on
many families (the test suite) can choose the other way, the family a value
and each family function an ``if`` chain over its kind's families
(:data:`FAMILY_DISPATCH`): every kernel is then compiled once per kind.

Kinds -- how the likelihood of a partition is built from its clusters:

* ``"additive"``: conjugate families with additive sufficient statistics, the
  likelihood a sum of per-cluster log marginals (``families.MODULES``);
* ``"relational"``: the Infinite Relational Model, one term per pair of
  clusters (``families.infinite_relational``);
* ``"parametric"``: clusters carry explicit parameters (a per-cluster
  parameter block in the state).

Two decorators turn a documented stub into a function that only numba code can
call and that resolves its implementation when the caller is compiled:

* :func:`family_function` -- ``f(family, *args)`` calls ``MODULES[code].f(*args)``;
* :func:`kind_function` -- ``f(model_or_state, *args)`` runs the implementation
  registered for the kind of its first argument (a kernel ``Model``, whose
  ``family`` tag knows the kind, or a ``State``, whose ``kind`` tag does).
"""

from __future__ import annotations

import functools
import inspect
import os
from collections import namedtuple

from numba.core.errors import TypingError
from numba.extending import overload

from pymc_partitions._jit import NO_C_WRAPPER

ADDITIVE = "additive"
RELATIONAL = "relational"
PARAMETRIC = "parametric"
KINDS = (ADDITIVE, RELATIONAL, PARAMETRIC)


FAMILY_DISPATCH_MODES = ("compile", "run")
FAMILY_DISPATCH = os.environ.get("PYMC_PARTITIONS_FAMILY_DISPATCH", "compile")
"""When a kernel's family code is chosen (environment variable ``PYMC_PARTITIONS_FAMILY_DISPATCH``, read once):

* ``"compile"`` (the default) -- each family's tag is a class of its own, so
  numba compiles a kernel once per family, with that family's code only: a
  step's first draw compiles what it runs (module docstring);
* ``"run"`` -- the tags of the families of one kind share a class and carry
  their code as a value; a family function is an ``if`` chain over the kind's
  families, so a kernel is compiled once per kind with every family of the
  kind in it.  A process that runs one kernel on many families (the test
  suite) compiles each kernel once instead of once per family.

The kernels' source is the same in both; only where the choice of family is
made differs.
"""
if FAMILY_DISPATCH not in FAMILY_DISPATCH_MODES:
    raise ValueError(
        f"PYMC_PARTITIONS_FAMILY_DISPATCH must be one of {FAMILY_DISPATCH_MODES}, got {FAMILY_DISPATCH!r}"
    )


def make_tag(name, module, fields=(), **attributes):
    """A named tuple class ``name``, defined in ``module``, with ``fields`` and the class attributes ``attributes``.

    An empty one costs nothing at run time; numba types each such class
    separately, so the attributes are known when a kernel is compiled.  The
    class must be a module attribute named ``name`` of ``module``: numba's
    cache pickles the types of a kernel's arguments by reference, and a tag
    that cannot be found again would make every process compile anew.
    """
    cls = namedtuple(name, list(fields), module=module)
    for key, value in attributes.items():
        setattr(cls, key, value)
    return cls


Additive = make_tag("Additive", __name__, kind=ADDITIVE)
Relational = make_tag("Relational", __name__, kind=RELATIONAL)
Parametric = make_tag("Parametric", __name__, kind=PARAMETRIC)
KIND_TAGS = {ADDITIVE: Additive(), RELATIONAL: Relational(), PARAMETRIC: Parametric()}
"""The tag a ``State`` carries for each kind."""


def kind_of_type(numba_type):
    """The kind of a numba ``Model`` type (from its ``family`` tag) or ``State`` type (its ``kind`` tag)."""
    fields = getattr(numba_type, "fields", ())
    field = "family" if "family" in fields else "kind"
    if field not in fields:
        raise TypingError(f"expected a kernel Model or State, got {numba_type}")
    return numba_type.types[fields.index(field)].instance_class.kind


def kind_of_value(value):
    """The kind of a kernel ``Model`` or ``State`` value (Python callers)."""
    tag = getattr(value, "family", None)
    if tag is None:  # tags are empty tuples, which are falsy: compare with None
        tag = getattr(value, "kind", None)
    if getattr(tag, "kind", None) not in KINDS:
        raise TypeError(f"expected a kernel Model or State, got {type(value).__name__}")
    return tag.kind


KIND_FUNCTIONS = {}
"""Every kind function (what :func:`kind_function` returns) and its implementations, ``{kind: function}``: read by
``tests/kernels/test_twofold_rules.py``, which checks one numba implementation with the stub's arguments per kind."""
FAMILY_FUNCTIONS = {}
"""Every family function (what :func:`family_function` returns) and its ``(modules, module_of)``: read by
``tests/kernels/test_twofold_rules.py``, which checks that every family ``module_of`` accepts defines it once."""


def kind_function(jit_options=None, **implementations):
    """Decorate a stub ``f(model_or_state, ...)``: calls run ``implementations[kind]`` instead.

    Each implementation is a numba function with the stub's signature; the
    one for the first argument's kind is compiled for the numba caller (with
    ``jit_options``, e.g. ``{"_nrt": False}``), or called from Python.
    """
    unknown = set(implementations) - set(KINDS)
    if unknown:
        raise ValueError(f"unknown kinds {sorted(unknown)}; kinds are {KINDS}")

    def implementation(stub, kind):
        if kind not in implementations:
            raise TypingError(f"{stub.__qualname__} has no implementation for {kind} models")
        return implementations[kind]

    def decorate(stub):
        @functools.wraps(stub)
        def dispatch(first, *args):
            return implementation(stub, kind_of_value(first))(first, *args)

        @overload(dispatch, inline="never", jit_options={**NO_C_WRAPPER, **(jit_options or {})})
        @functools.wraps(stub)
        def select(first, *args):
            return implementation(stub, kind_of_type(first)).py_func

        KIND_FUNCTIONS[dispatch] = dict(implementations)
        return dispatch

    return decorate


_FORWARD = {
    2: lambda impl: lambda family, a: impl(a),
    3: lambda impl: lambda family, a, b: impl(a, b),
    4: lambda impl: lambda family, a, b, c: impl(a, b, c),
    5: lambda impl: lambda family, a, b, c, d: impl(a, b, c, d),
    6: lambda impl: lambda family, a, b, c, d, e: impl(a, b, c, d, e),
    7: lambda impl: lambda family, a, b, c, d, e, f: impl(a, b, c, d, e, f),
    8: lambda impl: lambda family, a, b, c, d, e, f, g: impl(a, b, c, d, e, f, g),
}


def family_function(modules, module_of):
    """Decorate a stub ``f(family, *args)``: calls run ``modules[family code].f(*args)``.

    In numba code ``family`` is a family tag (``families.TAGS``); from Python a
    tag or an integer code, resolved by ``module_of``.  The module function
    has the stub's signature without ``family``.
    """

    def decorate(stub):
        arity = len(inspect.signature(stub).parameters)
        forward = _FORWARD[arity]
        name = stub.__name__

        @functools.wraps(stub)
        def dispatch(family, *args):
            return getattr(module_of(family), name)(*args)

        @overload(dispatch, inline="never", strict=False, jit_options=NO_C_WRAPPER)
        @functools.wraps(stub)
        def select(family, *args):
            tag_class = getattr(family, "instance_class", None)
            codes = getattr(tag_class, "codes", None)
            if codes is not None:  # a kind's tag, the family a value: FAMILY_DISPATCH == "run"
                codes = tuple(c for c in codes if hasattr(modules[c], name))
                if codes:
                    return _switch(arity, codes, tuple(getattr(modules[c], name) for c in codes), name)
            code = getattr(tag_class, "code", None)
            if code is None or not 0 <= code < len(modules) or not hasattr(modules[code], name):
                raise TypingError(f"families.{name} needs the tag of a family that defines it, got {family}")
            return forward(getattr(modules[code], name))

        FAMILY_FUNCTIONS[dispatch] = (modules, module_of)
        return dispatch

    return decorate


@functools.lru_cache(maxsize=None)
def _switch(arity, codes, functions, name):
    """``f(family, *args)`` calling ``functions[j](*args)`` for the family whose ``family.code`` is ``codes[j]``: a
    family function when the family is a run-time value.  Another code raises ``TypeError`` (a family that does not
    define ``name``, which at compile time would not have compiled)."""
    args = ", ".join(f"a{i}" for i in range(arity - 1))
    lines = [f"def switch(family, {args}):", "    code = family.code"]
    for j, code in enumerate(codes):
        lines += [f"    if code == {code}:", f"        return f{j}({args})"]
    lines.append(f"    raise TypeError('families.{name} is not defined for this family')")
    namespace = {f"f{j}": function for j, function in enumerate(functions)}
    exec("\n".join(lines), namespace)
    return namespace["switch"]
