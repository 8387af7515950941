"""Checks of the ``pm.sample`` arguments that concern a partition variable, made before PyMC sets up sampling.

PyMC 5.28.5 gives a distribution no hook between the call of ``pm.sample``
and its first uses of the arguments: it computes the initial points
(``initvals``) and prints its set-up messages before it makes any step method
of ours (the automatically assigned ones) or calls one.  The first code of
this package it runs is the partition prior's log density: ``pm.sample``'s
``assign_step_methods`` builds ``model.logp()`` first thing.  The graph
builder of every partition prior (``partitions._partition_logp``) therefore
calls :func:`check_sample_call`, which finds the ``pm.sample`` call up the
stack (if any) and checks, for the partition variable it builds:

* ``initvals``: an entry for the variable (by name or variable, in the dict
  or in each chain's dict) must be one integer label per item.  PyMC itself
  casts floats to int32 without a word (``[0.5, 1.7]`` would start at
  ``[0, 1]``) and reports a wrong length as a PyTensor ``TypeError`` about
  ``Vector(int32, shape=(m,))`` that names no variable; here either is a
  ``ValueError`` naming ``initvals['z']``, the length expected and the length
  given.
* ``nuts_sampler``: anything but ``"pymc"`` (nutpie, numpyro, blackjax)
  samples every variable with NUTS alone, which cannot move integer labels;
  PyMC would say "Model can not be sampled with NUTS alone" after this
  package has logged its step assignment.  Here it is a ``ValueError``
  naming the partition and the fix: PyMC's own sampler, whose NUTS still
  moves the continuous variables.
* ``step``: a population step (an object with ``min_chains``, the package's
  ``ARMStep`` and ``PastStatesSplitMergeStep``) with fewer ``chains`` than it
  needs is a ``ValueError`` now, before PyMC prints its set-up messages and
  starts the population sampler.

It also starts the one message of PyMC's set-up: before its first line of
log ("Sequential sampling ...") ``pm.sample`` compiles the model's functions
with PyTensor (the initial point, the log density and NUTS's gradient), 16 s
with nothing on the screen for the README's example on an empty PyTensor
cache.  If PyMC has logged nothing :data:`SETUP_SECONDS` after this check,
one line says what it is doing (:func:`_announce_setup`); PyMC's next message
on its sampling logger cancels it, and a ``pm.sample`` that has already
returned or raised by then gets no message.
"""

from __future__ import annotations

import logging
import sys
import threading

from pymc_partitions._validation import check_initial_partition

__all__ = ["check_sample_call"]

SETUP_SECONDS = 2.0
"""After this long with no message from ``pm.sample``, say that PyTensor is compiling (module docstring)."""
_SETUP_MESSAGE = (
    "PyTensor compiles the model's functions for pm.sample (initial point, log density, NUTS's gradient): first "
    "use of this model only, later runs load them from PyTensor's cache"
)
_PYMC_SAMPLE = ("pymc.sampling.mcmc", "sample")
"""Module and function name of ``pm.sample``, whose frame :func:`check_sample_call` looks for."""


_PENDING = []
"""The announcement waiting to be made (a ``threading.Timer``), if any."""


def _cancel_pending():
    while _PENDING:
        _PENDING.pop().cancel()


class _SamplingLogged(logging.Filter):
    """Cancels the pending announcement when PyMC's sampling logger logs (then PyMC speaks for itself)."""

    def filter(self, record):
        _cancel_pending()
        return True


logging.getLogger("pymc.sampling.mcmc").addFilter(_SamplingLogged())


def _sample_frame(frame):
    """The frame of ``pm.sample`` among ``frame`` and its callers, or ``None``."""
    module, name = _PYMC_SAMPLE
    while frame is not None:
        if frame.f_code.co_name == name and frame.f_globals.get("__name__") == module:
            return frame
        frame = frame.f_back
    return None


def _announce_if_setting_up(thread):
    """The timer's action: log :data:`_SETUP_MESSAGE` if ``thread`` is still inside ``pm.sample`` (it may have
    returned or raised without PyMC logging anything, then there is nothing to announce)."""
    if _sample_frame(sys._current_frames().get(thread)) is not None:
        logging.getLogger("pymc").info(_SETUP_MESSAGE)


def _announce_setup():
    """Log :data:`_SETUP_MESSAGE` on PyMC's logger in :data:`SETUP_SECONDS`, unless PyMC logs first or the
    calling thread has left ``pm.sample`` by then."""
    _cancel_pending()
    timer = threading.Timer(SETUP_SECONDS, _announce_if_setting_up, args=(threading.get_ident(),))
    timer.daemon = True
    _PENDING.append(timer)
    timer.start()


def _sample_arguments():
    """The local variables of the ``pm.sample`` call up the stack, or ``None`` if there is none."""
    frame = _sample_frame(sys._getframe(2))
    return None if frame is None else frame.f_locals


def _steps(step):
    """The step methods in ``pm.sample``'s ``step`` argument (a step, a list of them, a ``CompoundStep``, ``None``)."""
    if step is None:
        return []
    if isinstance(step, (list, tuple)):
        return [s for item in step for s in _steps(item)]
    methods = getattr(step, "methods", None)
    return _steps(list(methods)) if isinstance(methods, (list, tuple)) else [step]


def check_sample_call(name, n):
    """Check the arguments of the ``pm.sample`` call up the stack (module docstring) for partition variable ``name``
    of ``n`` items; nothing if ``pm.sample`` is not the caller."""
    arguments = _sample_arguments()
    if arguments is None:
        return
    initvals = arguments.get("initvals")
    for chain, entry in enumerate(initvals if isinstance(initvals, (list, tuple)) else [initvals]):
        if not isinstance(entry, dict):
            continue
        for key, value in entry.items():
            if key == name or getattr(key, "name", None) == name:
                where = f"initvals[{chain}][{name!r}]" if isinstance(initvals, (list, tuple)) else f"initvals[{name!r}]"
                check_initial_partition(where, value, n)
    nuts_sampler = arguments.get("nuts_sampler", "pymc")
    if nuts_sampler != "pymc":
        raise ValueError(
            f"pm.sample(nuts_sampler={nuts_sampler!r}) samples every variable with NUTS, which cannot move the "
            f"partition {name!r} (integer labels): use nuts_sampler='pymc' (the default), where the package's step "
            f"samples {name!r} and PyMC's NUTS the continuous variables"
        )
    chains = arguments.get("chains")
    for step in _steps(arguments.get("step")):
        needed = getattr(step, "min_chains", None)
        if needed is not None and isinstance(chains, int) and chains < needed:
            raise ValueError(
                f"{type(step).__name__} is a population step and needs pm.sample(chains=...) >= {needed}, "
                f"got chains={chains}"
            )
    _announce_setup()
