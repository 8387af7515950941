"""The tempering ladder's adaptation (``kernels.tempering.adapt``, ``equal_rejection_ladder``) and where the loop
calls it (``kernels.chain.sampler_for``: at the tuning schedule's restarts only)."""

import numpy as np
import pytest
from test_deltas import setup

from pymc_partitions.kernels import tempering
from pymc_partitions.kernels.chain import sampler_for
from pymc_partitions.state import build_state

LABELS = np.array([0, 1, 0, 2, 1, 0, 2, 2, 1], dtype=np.int32)


def barrier(zeta):
    """A communication barrier ``Λ(ζ)`` that grows fastest near ``ζ = 1``, as a posterior's does."""
    return 2.0 * np.sqrt(1.0 - zeta)


def test_repeated_updates_reach_the_ladder_of_equal_barrier_steps():
    # Fed the exact rejection rates of its own levels, the update is a fixed-point iteration whose fixed point is
    # the ladder with equal steps of Λ; from an equally spaced ladder (steps of Λ from 0.63 down to 0.13) it gets
    # there.
    ladder = np.linspace(1.0, 0.2, 6)
    for _ in range(40):
        ladder = tempering.equal_rejection_ladder(ladder, np.diff(barrier(ladder)))
    steps = np.diff(barrier(ladder))
    np.testing.assert_allclose(steps, steps.mean(), rtol=0.01)
    assert ladder[0] == 1.0 and ladder[-1] == 0.2 and np.all(np.diff(ladder) < 0.0)


def test_equal_rejection_rates_give_the_ladder_back():
    ladder = np.array([1.0, 0.8, 0.55, 0.3])
    np.testing.assert_allclose(tempering.equal_rejection_ladder(ladder, np.full(3, 0.4)), ladder, rtol=1e-12)
    np.testing.assert_allclose(tempering.equal_rejection_ladder(ladder, np.zeros(3)), ladder, rtol=1e-12)


def test_a_pair_never_rejected_keeps_the_levels_distinct():
    new = tempering.equal_rejection_ladder(np.array([1.0, 0.9, 0.8, 0.2]), np.array([0.0, 0.0, 1.0]))
    assert np.all(np.diff(new) < 0.0)
    assert new[2] < 0.8  # the rejected pair's interval gets the interior levels


def made_sampler(options, prob_sums, counts):
    _, kernel_model, _ = setup("normal_gamma", "dp")
    sampler = tempering.init(kernel_model, LABELS, options, np.random.default_rng(0))
    return kernel_model, sampler._replace(swap_prob_sums=np.asarray(prob_sums, float), swap_counts=np.asarray(counts))


def test_adapt_moves_the_ladder_only_with_enough_swaps_and_when_asked():
    options = tempering.Options((1.0, 0.9, 0.8, 0.2))
    probs = [20.0, 20.0, 0.0]  # pairs 0 and 1 always accepted, pair 2 never
    enough = tempering.ADAPT_MIN_PROPOSALS
    _, sampler = made_sampler(options, probs, [enough] * 3)
    adapted = tempering.adapt(options, sampler)
    expected = tempering.equal_rejection_ladder(sampler.ladder, 1.0 - np.array(probs) / enough)
    np.testing.assert_allclose(adapted.ladder, expected)
    assert adapted.ladder[0] == 1.0 and adapted.ladder[-1] == 0.2 and adapted.ladder[2] < 0.8
    _, few = made_sampler(options, probs, [enough, enough - 1, enough])
    assert tempering.adapt(options, few).ladder == options.ladder
    fixed = options._replace(adapt_ladder=False)
    assert tempering.adapt(fixed, sampler) is fixed


@pytest.mark.parametrize("tuning_step, restarts", [(1, True), (3, True), (2, False), (-1, False)])
def test_the_loop_adapts_at_restarts_only(tuning_step, restarts):
    options = tempering.Options((1.0, 0.9, 0.8, 0.2))
    enough = tempering.ADAPT_MIN_PROPOSALS
    kernel_model, sampler = made_sampler(options, [enough, enough, 0.0], [enough] * 3)
    state = build_state(kernel_model, LABELS)
    after = sampler_for(tempering.KERNEL, options, kernel_model, state, sampler, tuning_step, np.random.default_rng(1))
    if restarts:
        np.testing.assert_allclose(after.ladder, tempering.adapt(options, sampler).ladder)
        assert not np.allclose(after.ladder, sampler.ladder)
        np.testing.assert_array_equal(after.swap_counts, 0)  # the next window's statistics start afresh
    else:
        assert after is sampler
