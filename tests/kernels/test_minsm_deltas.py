"""Delta tests (docs/design.md §4.2) for ``MinHashSplitMergeStep``'s kernels: the claimed log target ratio of every
accepted split and merge equals the PyTensor model's logp change, and the state kept between moves stays
equal to the state rebuilt from its labels, for every family (the IRM included) and prior."""

import functools

import numpy as np
import pytest
from test_deltas import CASES, DATA, N, assert_member_lists_match_labels, build, setup

import pymc_partitions as pmp
from pymc_partitions.kernels import minsm
from pymc_partitions.kernels.info import MOVE_MERGE, MOVE_SPLIT
from pymc_partitions.state import build_state, canonical_labels, log_joint

OPTIONS = {"minsm": {"n_tables": 4}, "lsh": {"n_tables": 4, "n_bits": 2}, "sdds": {}}
FAMILIES = ("beta_bernoulli", "gamma_poisson", "normal_gamma", "infinite_relational")
"""The families of the enumeration tests and the IRM (the relational kind): the kernel's family-specific code is the
shared cluster operations, checked for every family in ``test_clusters.py``; each family added here costs about
a minute of numba compilation in CI."""
DELTA_CASES = [(f, "dp", v) for f in (*FAMILIES, "categorical") for v in OPTIONS] + [
    ("normal_gamma", p, v) for f, p in CASES if f == "normal_gamma" and p != "dp" for v in OPTIONS
]




@functools.lru_cache(maxsize=None)
def minsm_config(family, prior, variant):
    """One proposal per transition, no Gibbs sweep: each transition's ``Info`` describes its only move."""
    model = build(family, prior)
    return pmp.MinHashSplitMergeStep(model["z"], model=model, variant=variant, **OPTIONS[variant]).options


@pytest.mark.parametrize("family, prior, variant", DELTA_CASES)
def test_minsm_claimed_target_ratio(family, prior, variant):
    point, kernel_model, logp = setup(family, prior)
    point = dict(point)
    rng = np.random.default_rng(17)
    state = build_state(kernel_model, np.array([0, 0, 0, 1, 1, 0, 1, 2, 2], dtype=np.int64))
    sampler = minsm.init(kernel_model, state, minsm_config(family, prior, variant), rng)
    before = logp({**point, "z": canonical_labels(state)})
    seen = set()
    for _ in range(400):
        state, sampler, info = minsm.transition(kernel_model, state, sampler, rng)
        z = canonical_labels(state)
        assert_member_lists_match_labels(state)
        after = logp({**point, "z": z})
        assert log_joint(kernel_model, state) == pytest.approx(after, abs=1e-8)  # the kept state is consistent
        if info.accepted:
            assert info.log_target_ratio == pytest.approx(after - before, abs=1e-8)
            assert info.cluster_change == (1 if info.move == MOVE_SPLIT else -1)
            seen.add(int(info.move))
        else:
            assert after == pytest.approx(before, abs=1e-10)
        before = after
    assert seen == {MOVE_SPLIT, MOVE_MERGE}
    rebuilt = build_state(kernel_model, z.astype(np.int64))
    assert log_joint(kernel_model, rebuilt) == pytest.approx(log_joint(kernel_model, state), abs=1e-8)
