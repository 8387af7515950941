"""First use is never silent: compilations that take long say so in PyMC's log (issue 51 item 7)."""

import logging
import time

import numba
import numpy as np
import pytest

from pymc_partitions import _jit
from pymc_partitions.distributions import sample_call


def test_a_call_that_makes_numba_compile_says_so_once(caplog):
    kernel = numba.njit(lambda x: x + 1)  # not cached: its first call compiles

    @_jit.announced("the example")
    def summary(x):
        return kernel(x)

    with caplog.at_level(logging.INFO, logger="pymc"):
        assert summary(np.int64(1)) == 2
        assert summary(np.int64(2)) == 3
    assert caplog.messages == ["compiling numba kernels for the example, first use only"]


def test_a_slow_block_is_announced_and_a_quick_one_is_not(caplog):
    with caplog.at_level(logging.INFO, logger="pymc"):
        with _jit.announcing_if_slow("slow", after=0.05):
            time.sleep(0.3)
        with _jit.announcing_if_slow("quick", after=0.5):
            pass
        time.sleep(0.6)
    assert caplog.messages == ["slow"]


def _within_pm_sample(body):
    """Run ``body`` inside a function that :mod:`sample_call` takes for ``pm.sample`` (same module and name)."""
    namespace = {"__name__": "pymc.sampling.mcmc"}
    exec("def sample(body):\n    return body()", namespace)
    return namespace["sample"](body)


def test_pymcs_set_up_is_announced_unless_pymc_logs_first(caplog, monkeypatch):
    monkeypatch.setattr(sample_call, "SETUP_SECONDS", 0.05)

    def slow_set_up():
        sample_call._announce_setup()
        time.sleep(0.3)
        logging.getLogger("pymc.sampling.mcmc").info("Sequential sampling")

    def quick_set_up():
        sample_call._announce_setup()
        logging.getLogger("pymc.sampling.mcmc").info("Sequential sampling")
        time.sleep(0.3)

    with caplog.at_level(logging.INFO, logger="pymc"):
        _within_pm_sample(slow_set_up)
        _within_pm_sample(quick_set_up)
    assert caplog.messages == [sample_call._SETUP_MESSAGE, "Sequential sampling", "Sequential sampling"]


def test_a_sample_call_that_ends_before_pymc_logs_is_not_announced_and_does_not_block_the_next(caplog, monkeypatch):
    monkeypatch.setattr(sample_call, "SETUP_SECONDS", 0.05)

    def failing_set_up():
        sample_call._announce_setup()
        raise ValueError("bad argument")

    def slow_set_up():
        sample_call._announce_setup()
        time.sleep(0.3)

    with caplog.at_level(logging.INFO, logger="pymc"):
        with pytest.raises(ValueError, match="bad argument"):
            _within_pm_sample(failing_set_up)
        time.sleep(0.3)  # the first timer fires now, outside pm.sample
        _within_pm_sample(slow_set_up)
    assert caplog.messages == [sample_call._SETUP_MESSAGE]
