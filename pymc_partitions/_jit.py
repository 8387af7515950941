"""How the package's numba functions are compiled: :func:`jit`, one of two modes chosen at import.

``PYMC_PARTITIONS_JIT`` (environment variable, read once when this module is
imported) chooses the mode:

* ``"njit"`` -- :func:`jit` is ``numba.njit(cache=True)``: numba's public
  API only, so a new numba release cannot break it through an internal;
* ``"twins"`` -- numba code calling a :func:`jit` function compiles a *twin*
  of it without the two wrappers numba builds with every function: the
  CPython wrapper (unbox each argument from a Python object, box the result)
  and the C wrapper (for use as a first-class function value).  Neither is
  needed when numba code calls the function, and for a kernel taking a
  ``Model`` and a ``State`` the CPython wrapper is most of the code of a
  small function.  The twin is also compiled once per argument *types*:
  numba's own dispatcher compiles a callee again for each literal constant
  a caller passes (``f(x, True)`` and ``f(x, False)`` are two
  specialisations), and the twin takes every argument as its plain type
  (``numba.core.types.unliteral``), so a kernel called with a few flags and
  constants is compiled once.  This uses numba internals (a
  ``CPUDispatcher`` subclass, its ``get_call_template``, the
  ``_numba_type_`` protocol and the options ``no_cpython_wrapper`` /
  ``no_cfunc_wrapper``), tested on the numba versions ``pyproject.toml``
  allows.

The default is the mode with the shorter first draw in
``benchmarks/first_draw.py`` (``docs/benchmarks.md``, "A new user's first draw").  CI runs
the suite in the default mode and the kernel tests again in the other
(``tests/kernels/test_boundscheck.py``).  Both compile the same kernels, so
they run equally fast once compiled.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import threading
import types

import numba
from numba.core import event

MODES = ("njit", "twins")
DEFAULT_MODE = "twins"
MODE = os.environ.get("PYMC_PARTITIONS_JIT", DEFAULT_MODE)
if MODE not in MODES:
    raise ValueError(f"PYMC_PARTITIONS_JIT must be one of {MODES}, got {MODE!r}")

NO_C_WRAPPER = {"no_cfunc_wrapper": True} if MODE == "twins" else {}
"""numba options of every compiled function of the package in ``"twins"`` mode (``_dispatch``'s overloads
have no CPython wrapper anyway); none in ``"njit"`` mode."""


def jit(function=None, **options):
    """``numba.njit(cache=True, **options)``; in ``"twins"`` mode without the wrappers a numba caller does not need.

    Use as ``@jit`` or ``@jit(inline="always")``; ``options`` are numba's
    (``inline``, ``_nrt``, ``parallel``, ...).  The result is called from
    Python like any numba function (module docstring for the modes).

    Examples
    --------
    ``labels.canonical`` is such a function, called here from Python:

    >>> import numpy as np
    >>> from pymc_partitions.labels import canonical
    >>> canonical(np.array([5, 5, 2, 5]), 6)
    array([0, 0, 1, 0], dtype=int32)
    """
    if MODE == "njit":
        return numba.njit(cache=True, **options) if function is None else numba.njit(cache=True, **options)(function)

    def decorate(function):
        dispatcher = KernelDispatcher(function, targetoptions=options)
        dispatcher.enable_caching()
        return dispatcher

    return decorate if function is None else decorate(function)


@contextlib.contextmanager
def announcing_compilation(announce):
    """While the block runs, call ``announce()`` once, when numba starts compiling for the first time (numba's
    ``numba:compile`` event, ``numba.core.event``): never when every function loads from the cache."""
    announced = []

    class Listener(event.Listener):
        def on_start(self, ev):
            if not announced:
                announced.append(True)
                announce()

        def on_end(self, ev):
            pass

    listener = Listener()
    event.register("numba:compile", listener)
    try:
        yield
    finally:
        event.unregister("numba:compile", listener)


_log = logging.getLogger("pymc")
"""PyMC's logger, which ``pm.sample`` shows: the compilation messages go where a user reads the sampler's."""


def announced(name):
    """Decorate a Python function that calls numba kernels: whenever a call makes numba compile, one line of PyMC's
    log says so before the wait (``compiling numba kernels for <name>, first use only``), since the kernels then
    load from numba's cache.  The summaries' first call compiles for seconds with nothing else on the screen."""

    def decorate(function):
        message = f"compiling numba kernels for {name}, first use only"

        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            with announcing_compilation(lambda: _log.info(message)):
                return function(*args, **kwargs)

        return wrapper

    return decorate


@contextlib.contextmanager
def announcing_if_slow(message, after=1.0):
    """Log ``message`` on PyMC's logger if the block is still running ``after`` seconds after it started (a
    PyTensor compilation, which has no event to listen to): a short block says nothing."""
    timer = threading.Timer(after, _log.info, args=(message,))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def _twin(function):
    """A copy of ``function`` under its own qualified name (numba caches each dispatcher's code under that name)."""
    twin = types.FunctionType(
        function.__code__, function.__globals__, function.__name__, function.__defaults__, function.__closure__
    )
    twin.__kwdefaults__ = function.__kwdefaults__
    twin.__qualname__ = f"{function.__qualname__}.in_numba"
    return twin


if MODE == "twins":  # "njit" mode does not import numba internals
    from numba.core import types as numba_types
    from numba.core.registry import CPUDispatcher

    class TwinDispatcher(CPUDispatcher):
        """numba's dispatcher, compiling for the plain types of the arguments numba code passes (no literals)."""

        def get_call_template(self, args, kws):
            args = [numba_types.unliteral(a) for a in args]
            kws = {k: numba_types.unliteral(v) for k, v in kws.items()}
            return super().get_call_template(args, kws)

    class KernelDispatcher(CPUDispatcher):
        """numba's dispatcher for calls from Python; numba code calls :attr:`in_numba`, its twin without wrappers."""

        def __init__(self, py_func, locals=None, targetoptions=None, **kwargs):
            targetoptions = {"nopython": True, **NO_C_WRAPPER, **(targetoptions or {})}
            super().__init__(py_func, locals=locals, targetoptions=targetoptions, **kwargs)
            self.in_numba = TwinDispatcher(
                _twin(py_func), locals=locals, targetoptions={**targetoptions, "no_cpython_wrapper": True}, **kwargs
            )

        def enable_caching(self):
            super().enable_caching()
            self.in_numba.enable_caching()

        @property
        def _numba_type_(self):
            # how numba types this object wherever numba code refers to it
            return self.in_numba._numba_type_
