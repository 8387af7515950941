"""One source run two ways: the sharded samplers' drivers, interpreted (work on threads or an executor) or compiled.

The sharded samplers (``kernels.hybrid``, ``kernels.subcluster``) write an
iteration once, as a *driver*: plain Python that draws the seeds,
parameters and decisions from the step's generator and calls numba loops
for the per-item work.  The driver runs two ways:

* **interpreted** -- Python calls it as written: its per-item loops over
  shards (decorated with :func:`threaded`) run on numba threads from
  :data:`PARALLEL_MIN_ITEMS` items on, serially below; its *executor
  operations* (decorated with :func:`executed`) go to
  ``sampler.executor``, an object of the ``kernels.protocol.Executor``
  protocol, e.g. ``distributed.cluster.DaskShards``, or run in this process
  when it is ``None``;
* **compiled** -- :func:`compiled` gives its numba twin: a copy of the
  driver's code compiled with ``_jit.jit``, with globals in which every
  driver is its twin, every executor operation its work in this process
  and every threaded loop its serial form.  A twin is inlined into the
  numba code that calls it (``inline="always"``), so a compiled transition
  is one function: numba optimises each compiled function's module again
  with everything it calls linked in, so a chain of twins had the
  sub-cluster step's first draw optimise the same code once per level
  (``docs/benchmarks.md``, "Fewer compiled levels").  The twins are built from each
  driver's own module globals (``function.__globals__``, passed
  explicitly), so the drivers may live in several modules, and numba
  resolves a twin's globals when it compiles it: no numba internals.

numba's threaded loops are only ever called from Python: a cached compiled
function that calls a ``parallel=True`` one can crash when it is loaded
from the cache (numba issue #8578; ``docs/exactness.md``, "Parallel work,
one driver run two ways").  Both ways draw the same random numbers in the
same order, so a chain does not depend on which runs (tested bit for bit).

A threaded loop is written once, with ``prange``: its serial form is the
same function compiled without ``parallel=True`` (where numba runs
``prange`` as ``range``).  Each form is compiled when it is first called,
so a run compiles only the forms it uses: a small local problem the serial
loops, a large one or a Dask run the threaded ones.

A kernel's ``transition`` is :func:`entry` of its driver: the compiled
twin for a problem in this process under :data:`PARALLEL_MIN_ITEMS` items
(one numba call per iteration), the driver interpreted otherwise.

Drivers call each other (and operations and threaded loops) by bare
imported names, never as module attributes: a twin's globals replace
names, not attributes.
"""

from __future__ import annotations

import types

from pymc_partitions._jit import jit

PARALLEL_MIN_ITEMS = 20_000
"""Below this many items a threaded loop runs serially: starting numba's threads takes 0.1-60 ms on a busy machine
(OpenMP threads spin while waiting), a sweep of 20,000 items about 2 ms."""

_DRIVERS = {}
"""The registered drivers (plain functions) and their compiled twins (``None`` until :func:`compiled` builds them)."""
_FORMS = {}
"""What a compiled twin calls in place of an executor operation (its driver) or a threaded loop (its serial form)."""
_TWIN_GLOBALS = {}
"""The twins' globals: ``(module globals, twin globals)`` for each module holding drivers, by the id of its globals."""


def driver(function):
    """Register ``function`` as a driver: Python calls it as written; :func:`compiled` gives its compiled twin."""
    _DRIVERS[function] = None
    return function


def executed(function):
    """The driver ``function`` as an *executor operation* (``kernels.protocol.Executor``), its first argument the
    sampler state.

    Python calls ``sampler.executor``'s method of the same name with the
    same arguments, or ``function`` itself (the work in this process) when
    the executor is ``None``; a compiled driver calls ``function``'s twin.
    """
    driver(function)
    name = function.__name__

    def python(sampler, *args):
        executor = sampler.executor
        if executor is None:
            return function(sampler, *args)
        return getattr(executor, name)(sampler, *args)

    python.__name__ = python.__qualname__ = name
    python.__doc__ = function.__doc__
    python.__wrapped__ = function
    _FORMS[python] = function
    return python


def threaded(size):
    """Decorate a loop over shards written with ``prange``: Python runs it on numba threads when the argument named
    ``size`` has :data:`PARALLEL_MIN_ITEMS` rows or more and serially below (the same result); compiled drivers and
    numba code call the serial form (the attribute ``serial``)."""

    def decorate(function):
        code = function.__code__
        position = code.co_varnames[: code.co_argcount].index(size)
        serial = jit(function)
        threads = jit(parallel=True)(_copy(function, function.__globals__, "threads"))

        def python(*args):
            return (threads if args[position].shape[0] >= PARALLEL_MIN_ITEMS else serial)(*args)

        python.__name__ = python.__qualname__ = function.__name__
        python.__doc__ = function.__doc__
        python.serial = serial
        python.threads = threads
        _FORMS[python] = serial
        return python

    return decorate


def entry(function):
    """The driver ``function`` (a transition) as Python callers run it: its compiled twin for a problem in this
    process under :data:`PARALLEL_MIN_ITEMS` items (one numba call), else interpreted (threads or executor).
    The chain is the same either way; :func:`compiled` of the result is the twin."""

    def python(model, state, sampler, rng):
        run = function if interpreted(state, sampler) else compiled(function)
        return run(model, state, sampler, rng)

    python.__name__ = python.__qualname__ = function.__name__
    python.__doc__ = function.__doc__
    python.__wrapped__ = function
    _FORMS[python] = function
    return python


def interpreted(state, sampler):
    """Whether :func:`entry` runs the driver interpreted: an executor, or :data:`PARALLEL_MIN_ITEMS` items or more."""
    return sampler.executor is not None or state.labels.shape[0] >= PARALLEL_MIN_ITEMS


def compiled(function):
    """The compiled twin of the driver (or executor operation) ``function``; every registered driver's twin is built
    on first use.  A numba function is its own twin."""
    function = _FORMS.get(function, function) if _hashable(function) else function
    if not _hashable(function) or function not in _DRIVERS:
        return function
    for fn, twin in _DRIVERS.items():
        if twin is None:
            _DRIVERS[fn] = jit(inline="always")(_copy(fn, _twin_globals(fn.__globals__), "compiled"))
    for module_globals, twin_globals in _TWIN_GLOBALS.values():
        for name, value in module_globals.items():
            if _hashable(value) and (value in _DRIVERS or value in _FORMS):
                form = _FORMS.get(value, value)
                twin_globals[name] = _DRIVERS.get(form, form) if _hashable(form) else form
    return _DRIVERS[function]


def _hashable(value):
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _twin_globals(module_globals):
    """The globals of the twins of a module's drivers: a copy of the module's, names replaced by :func:`compiled`."""
    key = id(module_globals)
    if key not in _TWIN_GLOBALS:
        _TWIN_GLOBALS[key] = (module_globals, dict(module_globals))
    return _TWIN_GLOBALS[key][1]


def _copy(function, globals_, suffix):
    """A copy of ``function`` with ``globals_``, under its own qualified name (numba caches each under it)."""
    copy = types.FunctionType(function.__code__, globals_, function.__name__, function.__defaults__, function.__closure__)
    copy.__kwdefaults__ = function.__kwdefaults__
    copy.__qualname__ = f"{function.__qualname__}.{suffix}"
    copy.__doc__ = function.__doc__
    return copy
