"""``state.state_of``, the state a step builds from Python, is ``build_state``'s, field by field."""

import numpy as np
import pytest
from test_deltas import DATA, N, setup

from pymc_partitions import families, priors
from pymc_partitions.labels import relabel
from pymc_partitions.state import build_state, make_model, state_of


@pytest.mark.parametrize("family", list(DATA))
def test_state_of_is_build_state(family):
    _, kernel_model, _ = setup(family, "py")
    rng = np.random.default_rng(3)
    for z in (np.zeros(N, dtype=np.int64), np.arange(N), *(relabel(rng.integers(0, 4, N)) for _ in range(5))):
        built, assembled = build_state(kernel_model, np.asarray(z, dtype=np.int64)), state_of(kernel_model, z)
        assert type(built.kind) is type(assembled.kind)
        for field in built._fields[1:]:
            np.testing.assert_array_equal(getattr(assembled, field), getattr(built, field), err_msg=field)
            assert getattr(assembled, field).dtype == getattr(built, field).dtype, field


def test_state_of_is_build_state_for_explicit_cluster_parameters():
    x = np.random.default_rng(4).normal(1e8, 1.0, (N, 2))  # far from zero: the model's origin applies
    params = families.pack_params(families.NORMAL, 2, 1e8, 1.0, 2.0, 2.0, N)
    kernel_model = make_model(families.NORMAL, x, params, priors.DP, np.array([1.0]), priors.empty_table())
    z = relabel(np.random.default_rng(5).integers(0, 3, N))
    built, assembled = build_state(kernel_model, np.asarray(z, dtype=np.int64)), state_of(kernel_model, z)
    for field in built._fields[1:]:
        np.testing.assert_array_equal(getattr(assembled, field), getattr(built, field), err_msg=field)
