"""How the package's numba functions are compiled: :func:`jit`.

numba compiles two wrappers with every function: a CPython wrapper, which
unboxes the arguments from Python objects and boxes the result, and a C
wrapper, for use as a first-class function value.  Neither is needed when
numba code calls the function, and for a kernel taking a ``Model`` and a
``State`` (20 fields, most of them arrays) the CPython wrapper is most of
the code compiled for a small function.  Dropping both from every function
that a kernel calls cut the compilation of a ``SplitMergeStep``'s first
draw by about a sixth (``docs/benchmarks.md``, "First draw").

So a function decorated with :func:`jit` is two numba dispatchers over the
same code, each compiled only when first used:

* Python calls it as usual (a function of ``kernels`` can be called and
  tested from Python), compiled with the CPython wrapper;
* numba code that calls it compiles and links its twin, compiled without
  either wrapper.

No compiled function is used as a first-class function value (the only
use of the C wrapper), and a numba caller never reaches the Python side's
compilation, so the package never compiles a wrapper it does not call.
"""

from __future__ import annotations

import types

from numba.core.registry import CPUDispatcher

NO_C_WRAPPER = {"no_cfunc_wrapper": True}
"""numba option of every compiled function of the package (``_dispatch``'s overloads have no CPython wrapper anyway)."""


class KernelDispatcher(CPUDispatcher):
    """numba's dispatcher for calls from Python; numba code calls :attr:`in_numba`, its twin without wrappers."""

    def __init__(self, py_func, locals=None, targetoptions=None, **kwargs):
        targetoptions = {"nopython": True, **NO_C_WRAPPER, **(targetoptions or {})}
        super().__init__(py_func, locals=locals, targetoptions=targetoptions, **kwargs)
        self.in_numba = CPUDispatcher(
            _twin(py_func), locals=locals, targetoptions={**targetoptions, "no_cpython_wrapper": True}, **kwargs
        )

    def enable_caching(self):
        super().enable_caching()
        self.in_numba.enable_caching()

    @property
    def _numba_type_(self):
        # how numba types this object wherever numba code refers to it
        return self.in_numba._numba_type_


def _twin(function):
    """A copy of ``function`` under its own qualified name (numba caches each dispatcher's code under that name)."""
    twin = types.FunctionType(
        function.__code__, function.__globals__, function.__name__, function.__defaults__, function.__closure__
    )
    twin.__kwdefaults__ = function.__kwdefaults__
    twin.__qualname__ = f"{function.__qualname__}.in_numba"
    return twin


def jit(function=None, **options):
    """``numba.njit(cache=True, **options)`` without the wrappers a numba caller does not need.

    Use as ``@jit`` or ``@jit(inline="always")``; ``options`` are numba's
    (``inline``, ``_nrt``, ``parallel``, ...).  The result is called from
    Python like any numba function, and numba code calling it compiles a twin
    without the CPython and C wrappers (module docstring).

    Examples
    --------
    ``labels.canonical`` is such a function, called here from Python; numba
    code that calls it compiles ``canonical.in_numba``:

    >>> import numpy as np
    >>> from pymc_partitions.labels import canonical
    >>> canonical(np.array([5, 5, 2, 5]), 6)
    array([0, 0, 1, 0], dtype=int32)
    >>> canonical.in_numba  # doctest: +ELLIPSIS
    CPUDispatcher(<function canonical.in_numba at ...>)
    """

    def decorate(function):
        dispatcher = KernelDispatcher(function, targetoptions=options)
        dispatcher.enable_caching()
        return dispatcher

    return decorate if function is None else decorate(function)
