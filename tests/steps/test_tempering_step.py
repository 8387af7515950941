"""``TemperedGibbsStep`` inside ``pm.sample``: stats, recovery, ``alpha`` moved by NUTS, the ladder's checks."""

import numpy as np
import pymc as pm
import pytest

import pymc_partitions as pmp
from pymc_partitions.kernels.info import MOVE_TEMPERING, SAMPLE_STATS

RNG = np.random.default_rng(11)
X = np.r_[RNG.normal(-4.0, 1.0, (12, 2)), RNG.normal(4.0, 1.0, (12, 2))]


def model_with_alpha():
    with pm.Model() as model:
        alpha = pm.Gamma("alpha", 2.0, 1.0)
        z = pmp.DirichletProcessPartition("z", alpha=alpha, n=len(X))
        pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=0.1, a0=2.0, b0=2.0, observed=X)
    return model


def test_pm_sample_with_alpha_moved_by_nuts():
    """A real run: the step with NUTS on ``alpha``; every partition stat and the swap stats, the two groups found."""
    model = model_with_alpha()
    with model:
        step = pmp.TemperedGibbsStep(model["z"], ladder=(1.0, 0.6, 0.3))
        idata = pm.sample(
            step=[step, pm.NUTS([model["alpha"]])], draws=60, tune=20, chains=2, cores=1, progressbar=False,
            random_seed=3, compute_convergence_checks=False,
        )
    stats = idata["sample_stats"]
    for name in [*SAMPLE_STATS, "partition_swap_accept", "partition_swaps_accepted"]:
        assert name in stats, name
    assert set(np.unique(stats["partition_move"].values)) == {MOVE_TEMPERING}
    accept = stats["partition_swap_accept"].values
    assert np.all((accept >= 0.0) & (accept <= 1.0))
    np.testing.assert_array_equal(accept, stats["partition_accept"].values)
    swaps = stats["partition_swaps_accepted"].values
    assert set(np.unique(swaps)) <= {0, 1}  # three levels: one pair per draw (either parity has one)
    assert swaps.sum() > 0
    np.testing.assert_array_equal(swaps > 0, stats["partition_accepted"].values)
    z = idata["posterior"]["z"].values
    assert (z[..., 0] != z[..., -1]).all()  # the two groups never share a cluster
    assert np.unique(idata["posterior"]["alpha"].values).size > 10  # NUTS moved alpha


def test_same_seed_same_chain():
    def run():
        model = model_with_alpha()
        with model:
            step = pmp.TemperedGibbsStep(model["z"], ladder=(1.0, 0.5), n_sweeps=2)
            return pm.sample(
                step=[step, pm.Slice([model["alpha"]])], draws=15, tune=5, chains=1, cores=1, progressbar=False,
                random_seed=9, compute_convergence_checks=False,
            )

    a, b = run(), run()
    np.testing.assert_array_equal(a["posterior"]["z"].values, b["posterior"]["z"].values)
    np.testing.assert_array_equal(
        a["sample_stats"]["partition_swaps_accepted"].values, b["sample_stats"]["partition_swaps_accepted"].values
    )


@pytest.mark.parametrize(
    "ladder, match",
    [
        ((1.0,), "ladder must hold at least two levels"),
        ((0.8, 0.5), "ladder must start at 1.0"),
        ((1.0, 0.5, 0.5), "ladder must be strictly decreasing"),
        ((1.0, 1.5), r"ladder must hold numbers in \(0, 1\]"),
        ((1.0, -0.2), r"ladder must hold numbers in \(0, 1\]"),
        ((1.0, float("nan")), r"ladder must hold numbers in \(0, 1\]"),
        ([[1.0, 0.5]], "ladder must hold at least two levels"),
        (("a", "b"), "ladder must be a sequence of numbers"),
    ],
)
def test_bad_ladder_is_a_value_error_naming_ladder(ladder, match):
    model = model_with_alpha()
    with model, pytest.raises(ValueError, match=match):
        pmp.TemperedGibbsStep(model["z"], ladder=ladder)


def test_parametric_models_are_refused():
    with pm.Model():
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(X))
        mu = pm.Normal("mu", 0.0, 1.0, shape=(len(X), 2))
        tau = pm.Gamma("tau", 2.0, 2.0, shape=(len(X), 2))
        pmp.NormalMixture("x", partition=z, mu=mu, tau=tau, observed=X)
        with pytest.raises(TypeError, match="TemperedGibbsStep samples conjugate mixtures"):
            pmp.TemperedGibbsStep(z)


def test_h_ref_is_taken_during_tuning_and_fixed_after():
    """The auxiliary levels' hyperparameters ``h_ref`` are those of the last restart of the tuning schedule
    (``protocol.at_doubling_steps``: tuning step 15 of 20), not the initial point's, and the kept draws leave them
    alone.  Tuning step 15 reads ``alpha`` as NUTS left it after tuning draw 14 (the steps run in the order given)."""
    model = model_with_alpha()
    with model:
        step = pmp.TemperedGibbsStep(model["z"], ladder=(1.0, 0.5))
        idata = pm.sample(
            step=[step, pm.NUTS([model["alpha"]])], draws=5, tune=20, chains=1, cores=1, progressbar=False,
            random_seed=3, compute_convergence_checks=False, discard_tuned_samples=False,
        )
    reference = step.chain.sampler.reference.prior_params
    point = model.initial_point()
    tuned = idata["warmup_posterior"]["alpha"].values[0]
    at_restart = step.kernel_model({**point, "alpha_log__": np.log(tuned[14])}).prior_params
    np.testing.assert_allclose(reference, at_restart)
    assert not np.allclose(reference, step.kernel_model(point).prior_params)  # not the initial point's alpha
    kept = idata["posterior"]["alpha"].values[0]
    assert not np.allclose(kept, tuned[14])  # NUTS kept moving alpha; h_ref did not follow


def sampled_ladder(adapt_ladder):
    """One chain on two overlapping groups with a ladder whose last pair is rarely swapped: the step, its run."""
    rng = np.random.default_rng(11)
    data = np.r_[rng.normal(-1.5, 1.0, (12, 2)), rng.normal(1.5, 1.0, (12, 2))]
    with pm.Model():
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=len(data))
        pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=0.1, a0=2.0, b0=2.0, observed=data)
        step = pmp.TemperedGibbsStep(z, ladder=(1.0, 0.95, 0.9, 0.2), adapt_ladder=adapt_ladder)
        idata = pm.sample(
            step=step, draws=300, tune=128, chains=1, cores=1, progressbar=False, random_seed=3,
            compute_convergence_checks=False, discard_tuned_samples=False,
        )
    return step, idata


def test_the_ladder_adapts_during_tuning_and_stays_fixed_after():
    """With the default ``adapt_ladder``, the interior levels move during tuning and the kept draws share one
    ladder with the given ends; the swaps after the last restart are then rejected more evenly across the pairs:
    the worst pair's rejection rate (about 150 swaps each, standard error at most 0.04) falls from about 1 with the
    given ladder (``adapt_ladder=False``, which keeps it throughout) to below 0.9."""
    rejection = {}
    for adapt in (False, True):
        step, idata = sampled_ladder(adapt)
        tuned, kept = idata["warmup_sample_stats"], idata["sample_stats"]
        ladders = np.stack([kept[f"partition_ladder_{level}"].values[0] for level in (1, 2, 3)], axis=1)
        assert (ladders == ladders[0]).all()  # one ladder for every kept draw
        np.testing.assert_array_equal(ladders[0], step.chain.sampler.ladder[1:])
        assert ladders[0, -1] == 0.2
        moved = tuned["partition_ladder_1"].values[0] != 0.95
        assert moved.any() == adapt
        sampler = step.chain.sampler
        rejection[adapt] = 1.0 - sampler.swap_prob_sums / sampler.swap_counts
    assert rejection[False].max() > 0.99
    assert rejection[True].max() < 0.9
