"""Tests for pymc_partitions.kernels.chain and the kernels' declarations: the loop the steps and the runners share."""

import numpy as np
import pytest
from test_deltas import setup

from pymc_partitions.kernels import arm, gibbs, hybrid, minsm, split_merge, subcluster, tempering, tgmcmc
from pymc_partitions.kernels.chain import sampler_for
from pymc_partitions.kernels.protocol import Kernel
from pymc_partitions.state import build_state

KERNELS = {
    "gibbs": gibbs.KERNEL, "split_merge": split_merge.KERNEL, "past_states": split_merge.PAST_STATES_KERNEL,
    "arm": arm.KERNEL, "minsm": minsm.KERNEL, "tgmcmc": tgmcmc.KERNEL, "hybrid": hybrid.KERNEL,
    "subcluster": subcluster.KERNEL, "tempering": tempering.KERNEL,
}
SCHEDULED = {name: kernel for name, kernel in KERNELS.items() if kernel.schedule.prepare is not None}
SCHEDULED_OPTIONS = {  # with a warm start, so that prepare has something to change while tuning
    "hybrid": hybrid.Options(n_shards=3, n_sweeps=1, warm_start=50),
    "subcluster": subcluster.Options(n_shards=3, warm_start=50),
}


def fields_equal(a, b):
    """Whether two sampler states (named tuples of arrays, scalars and objects) hold the same values."""
    assert type(a) is type(b)
    for name, x, y in zip(a._fields, a, b, strict=True):
        if hasattr(x, "_fields"):
            fields_equal(x, y)
        elif isinstance(x, np.ndarray):
            np.testing.assert_array_equal(x, y, err_msg=name)
        else:
            assert x is y or x == y, name


def test_every_kernel_declares_its_loop():
    for name, kernel in KERNELS.items():
        assert isinstance(kernel, Kernel), name
        assert kernel.support.kinds and kernel.support.priors, name
        assert kernel.rebuild_period > 0, name
    assert set(SCHEDULED) == {"hybrid", "subcluster"}  # the warm start; a new schedule needs its own test here


@pytest.mark.parametrize("name", sorted(SCHEDULED))
def test_prepare_after_tuning_leaves_inits_sampler_unchanged(name):
    # The runners never tune and never call prepare: what they certify is the loop after tuning only if prepare at
    # tuning_step -1 gives back init's sampler state as it was (kernels.protocol.Prepare).
    kernel = SCHEDULED[name]
    _, kernel_model, _ = setup("normal_gamma", "dp")
    labels = np.array([0, 1, 0, 2, 1, 0, 2, 2, 1], dtype=np.int32)
    options = SCHEDULED_OPTIONS[name]
    made = kernel.init(kernel_model, labels, options, np.random.default_rng(0))
    fields_equal(kernel.schedule.prepare(made, -1), made)
    state = build_state(kernel_model, labels)
    after = sampler_for(kernel, options, kernel_model, state, made, -1, np.random.default_rng(1))
    fields_equal(after, made)
    during = kernel.schedule.prepare(made, 0)  # while tuning it may change the state (the warm start's hot shards)
    assert type(during) is type(made)
