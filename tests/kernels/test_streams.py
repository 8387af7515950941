"""The shards' random streams (``kernels.streams``): SplitMix64 exactly, uniform, and independent across shards."""

import numpy as np
from numba import njit
from scipy import stats

from pymc_partitions.kernels import streams

MASK = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15


def mix64_reference(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def splitmix64_reference(state, count):
    """SplitMix64 (Steele, Lea & Flood 2014) in Python integers: ``count`` outputs after ``state``."""
    out = []
    for _ in range(count):
        state = (state + GAMMA) & MASK
        out.append(mix64_reference(state))
    return out


@njit
def draw(seed, shard, count):
    state = streams.stream(seed, shard)
    out = np.empty(count, dtype=np.uint64)
    for k in range(count):
        out[k] = streams.next_uint64(state)
    return out


@njit
def uniforms(seed, shard, count):
    state = streams.stream(seed, shard)
    out = np.empty(count)
    for k in range(count):
        out[k] = streams.uniform(state)
    return out


def test_reference_reproduces_the_published_splitmix64_sequence():
    """The first outputs of SplitMix64 from state 1234567, as printed by the xoshiro authors' reference code."""
    assert splitmix64_reference(1234567, 5) == [
        6457827717110365317, 3203168211198807973, 9817491932198370423, 4593380528125082431, 16408922859458223821,
    ]


def test_stream_of_a_shard_is_splitmix64_from_its_documented_start():
    for seed, shard in [(0, 0), (123456789, 4), (2**53 - 1, 63)]:
        start = mix64_reference((seed + GAMMA * (shard + 1)) & MASK)
        assert draw(seed, shard, 40).tolist() == splitmix64_reference(start, 40)


def test_uniforms_are_uniform_on_the_53_bit_grid():
    u = uniforms(7, 3, 200_000)
    assert u.min() >= 0.0 and u.max() < 1.0
    assert np.all(u * 2.0**53 == np.floor(u * 2.0**53))
    assert stats.kstest(u, "uniform").pvalue > 1e-4


def test_shards_draw_independent_streams():
    """Neighbouring shards and seeds: no correlation between their uniforms (|r| < 4 standard errors) and no shared values."""
    m = 50_000
    draws = np.array([uniforms(seed, shard, m) for seed, shard in [(11, 0), (11, 1), (11, 2), (12, 0)]])
    r = np.corrcoef(draws)[np.triu_indices(4, 1)]
    assert np.all(np.abs(r) < 4.0 / np.sqrt(m)), r
    assert len(np.unique(draws)) == draws.size
