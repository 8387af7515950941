"""The Infinite Relational Model under every sampler: the ARM paper's own check (Sec. 3, Fig. 3).

The 4-vertex network with edges A12 = A13 = A14 = A34 = 1 (1-based), DP prior
with alpha = 1 and Beta(1, 1) block probabilities: each sampler alone (no
Gibbs interleaving; the paper's figure) and the population samplers also
followed by Gibbs sweeps must reproduce the exact probabilities of all 15
partitions, computed from ``model.compile_logp()``; ``arm-past`` also
under a Pitman-Yor prior, alone and with Gibbs.  The tolerance is the
ESS-justified bound of ``exact.tv_tolerance``.
"""

import numpy as np
import pymc as pm
import pytest
from exact import exact_posterior
from test_arm_exactness import run_population_chains
from test_exactness import check_against_exact, run_step_chains

import pymc_partitions as pmp

NETWORK = np.zeros((4, 4))
for a, b in ((1, 2), (1, 3), (1, 4), (3, 4)):
    NETWORK[a - 1, b - 1] = NETWORK[b - 1, a - 1] = 1.0


def network_model(prior="dp"):
    """The network under a DP(1) prior, or a Pitman-Yor(1, 0.4) one with ``prior="py"``."""
    with pm.Model() as model:
        if prior == "dp":
            z = pmp.DirichletProcessPartition("z", alpha=1.0, n=4)
        else:
            z = pmp.PitmanYorPartition("z", alpha=1.0, sigma=0.4, n=4)
        pmp.InfiniteRelationalModel("A", partition=z, a=1.0, b=1.0, observed=NETWORK)
    return model


@pytest.mark.parametrize("prior", ["dp", "py"])
def test_exact_posterior_of_the_network(prior):
    """15 partitions, none negligible and none dominant: a meaningful target for the samplers.

    Negligible means below 1%, the mass under which ``check_against_exact``
    leaves a partition out of its effective sample size, so every partition
    here is one whose indicator the samplers must mix.  Dominant means 60% or
    more, the limit of ``test_exactness``: a chain stuck at the mode is then at
    least 0.4 from the target in TV, far outside any tolerance of these runs.
    (DP: masses 0.023-0.186; PY: 0.012-0.256.)
    """
    partitions, exact = exact_posterior(network_model(prior))
    assert len(partitions) == 15
    assert exact.sum() == pytest.approx(1.0)
    assert exact.min() > 0.01, f"a negligible partition: {partitions[exact.argmin()].tolist()} has mass {exact.min():.4f}"
    assert exact.max() < 0.6, f"a dominant partition: {partitions[exact.argmax()].tolist()} has mass {exact.max():.4f}"


@pytest.mark.slow
@pytest.mark.parametrize("prior", ["dp", "py"])
@pytest.mark.parametrize("schedule", ["gibbs", "split_merge"])
def test_single_chain_samplers_alone(schedule, prior):
    model = network_model(prior)
    partitions, exact = exact_posterior(model)
    with model:
        step = pmp.GibbsStep(model["z"]) if schedule == "gibbs" else pmp.SplitMergeStep(model["z"], gibbs_sweep=False)
    traces = run_step_chains(model, step, n_draws=20_000, seed=21 if prior == "dp" else 22)
    check_against_exact(traces, exact, partitions)


@pytest.mark.slow
@pytest.mark.parametrize(
    "variant, gibbs_sweep, prior",
    [(v, False, "dp") for v in ("arm", "sarm", "srm", "arm-past")]
    + [(v, True, "dp") for v in ("arm", "sarm", "srm", "bsm", "arm-past")]
    + [("arm-past", False, "py"), ("arm-past", True, "py")],
)
def test_population_samplers(variant, gibbs_sweep, prior):
    model = network_model(prior)
    partitions, exact = exact_posterior(model)
    traces = run_population_chains(model, variant, gibbs_sweep, n_draws=15_000, seed=len(variant) + 7 * gibbs_sweep)
    check_against_exact(traces, exact, partitions)


def test_irm_runs_in_pm_sample_with_every_step():
    """Gibbs, split-merge and ARM steps find the IRM observation model and keep the log joint stat exact."""
    model = network_model()
    logp = model.compile_logp()
    for make in (pmp.GibbsStep, pmp.SplitMergeStep, pmp.ARMStep):
        with model:
            idata = pm.sample(
                step=[make(model["z"])], draws=30, tune=5, chains=3, cores=1, progressbar=False, random_seed=2,
                compute_convergence_checks=False,
            )
        z = idata["posterior"]["z"].values.reshape(-1, 4)
        recorded = idata["sample_stats"]["partition_log_joint"].values.ravel()
        np.testing.assert_allclose(recorded, [logp({"z": row}) for row in z], atol=1e-8)
