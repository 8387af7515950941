"""``HybridDPStep`` on a real Dask ``LocalCluster`` (two worker processes, shared by the module's tests).

* the Dask backend's chains equal the local backend's under the same seed,
  inside ``pm.sample``: alone with ``alpha`` moved by NUTS, interleaved with
  ``GibbsStep``, and with a warm start while tuning (DP and PY, two
  families, 1 to 3 shards, two chains one after the other), and on data at
  offset 1e6 (the hosts' rows relative to the driver's origin);
* they match the enumerated posterior (n = 5);
* the workers never import PyMC;
* a worker process killed mid-run (by its pid) costs nothing: the chain is
  the one of a run without the failure;
* bad input: a closed client, a cluster without workers, and copying the step
  to another process (``pm.sample(cores > 1)``) get clear errors before sampling.
"""

import os
import signal

import cloudpickle
import numpy as np
import pymc as pm
import pytest
from chains import assert_same_chains, local_and_dask, model_of, sample_chains
from distributed import Client, LocalCluster
from exact import exact_posterior
from test_exactness import DATA, N_ITEMS, check_against_exact

import pymc_partitions as pmp


def sample(model, backend, *, n_shards, gibbs=False, warm_start=0, draws=40, tune=10, callback=None, seed=11):
    with model:
        hybrid = pmp.HybridDPStep(model["z"], n_shards=n_shards, backend=backend, warm_start=warm_start)
    return sample_chains(model, hybrid, gibbs=gibbs, draws=draws, tune=tune, callback=callback, seed=seed), hybrid


CASES = {
    "alone, alpha by NUTS": dict(family="normal_gamma", prior="dp", alpha=True, n_shards=3),
    "interleaved with Gibbs": dict(family="beta_bernoulli", prior="py", n_shards=2, gibbs=True),
    "warm start, one shard": dict(family="normal_gamma", prior="py", n_shards=1, warm_start=6),
    "warm start": dict(family="beta_bernoulli", prior="dp", n_shards=3, warm_start=6),
}


@pytest.mark.parametrize("case", list(CASES))
def test_dask_chains_equal_local_chains(client, case):
    (local, _), (dask, step) = local_and_dask(sample, CASES[case], client)
    assert_same_chains(local, dask, ("partition_log_joint", "partition_hot_shards", "partition_log_target_ratio"))
    assert step.executor.volume["received"] > 0


def test_dask_chains_equal_local_chains_far_from_zero(client):
    """Data at offset 1e6: the hosts hold their rows relative to the driver's origin (the data's mean), so their
    statistics add up with the driver's and the chain is the local one."""
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.3, n=N_ITEMS)
        pmp.NormalGammaMixture("x", partition=z, mu0=1e6, kappa0=0.5, a0=2.0, b0=2.0, observed=1e6 + DATA["normal_gamma"])
    local, _ = sample(model, "local", n_shards=2)
    dask, _ = sample(model, client, n_shards=2)
    np.testing.assert_array_equal(local["posterior"]["z"].values, dask["posterior"]["z"].values)
    np.testing.assert_array_equal(local["sample_stats"]["partition_log_joint"].values, dask["sample_stats"]["partition_log_joint"].values)
    logp = model.compile_logp()
    z = local["posterior"]["z"].values[0, -1]
    assert local["sample_stats"]["partition_log_joint"].values[0, -1] == pytest.approx(float(logp({"z": z})), rel=1e-9)


def test_workers_never_import_pymc(client):
    model = model_of("normal_gamma", "dp")
    sample(model, client, n_shards=2, draws=5, tune=0)
    assert client.run(eval, "'pymc' in __import__('sys').modules") == {w: False for w in client.scheduler_info()["workers"]}
    assert all(client.run(eval, "'pymc_partitions.kernels.hybrid' in __import__('sys').modules").values())


@pytest.mark.slow
def test_dask_chain_matches_enumeration(client):
    """Two shards, the step alone, on the Dask backend; ESS-justified TV bound.

    A Dask iteration costs about 30 ms on the shared 2-core test machine and
    the two-shard step alone makes about 0.25 effective draws per iteration
    here (a Gibbs sweep 0.85), so this run is smaller than the local ones:
    about 650 effective draws, a TV tolerance near 0.15 (the paper's
    Algorithm 4 is off by 0.19 at 2 shards on a 4-item problem).
    """
    model = model_of("normal_gamma", "dp")
    partitions, exact = exact_posterior(model)
    with model:
        step = pmp.HybridDPStep(model["z"], n_shards=2, backend=client)
        idata = pm.sample(
            step=step, draws=1300, tune=100, chains=2, cores=1, progressbar=False, random_seed=21,
            compute_convergence_checks=False,
        )
    check_against_exact(idata["posterior"]["z"].values, exact, partitions, min_ess=500)


def test_bad_clients_are_refused_before_sampling(client):
    model = model_of("normal_gamma", "dp")
    closed = Client(client.scheduler.address)
    closed.close()
    with model, pytest.raises(ValueError, match="backend: the Dask client is closed"):
        pmp.HybridDPStep(model["z"], backend=closed)
    with LocalCluster(n_workers=0, processes=False, dashboard_address=None) as empty, Client(empty) as no_workers:
        with model, pytest.raises(ValueError, match="backend: the Dask cluster .* has no workers"):
            pmp.HybridDPStep(model["z"], backend=no_workers)
    with model:
        step = pmp.HybridDPStep(model["z"], n_shards=2, backend=client)
    with pytest.raises(TypeError, match=r"cores=1"):  # what pm.sample(cores=2) does to send a step to a process
        cloudpickle.dumps(step)


def test_worker_killed_mid_run_changes_nothing(client):
    """Kill the worker process holding the first shards at the 15th draw: the chains are the local backend's."""
    model = model_of("normal_gamma", "py")
    expected, _ = sample(model, "local", n_shards=3, draws=30)
    killed = []

    def kill_a_worker(trace, draw):
        if len(trace) == 15 and not killed:
            victim = step_holder[0].executor._host_workers[0]
            os.kill(client.run(os.getpid)[victim], signal.SIGKILL)
            killed.append(victim)

    step_holder = []
    with model:
        step = pmp.HybridDPStep(model["z"], n_shards=3, backend=client)
        step_holder.append(step)
        idata = pm.sample(
            step=step, draws=30, tune=10, chains=2, cores=1, progressbar=False, random_seed=11,
            compute_convergence_checks=False, discard_tuned_samples=False, callback=kill_a_worker,
        )
    assert killed and killed[0] not in step.executor._host_workers
    np.testing.assert_array_equal(expected["posterior"]["z"].values, idata["posterior"]["z"].values)
    np.testing.assert_array_equal(expected["warmup_posterior"]["z"].values, idata["warmup_posterior"]["z"].values)
