"""``SubClusterSplitMergeStep`` (and ``HybridDPStep(n_proposals=...)``) on a real Dask ``LocalCluster`` of two
worker processes, shared by the module's tests.

* the Dask backend's chains equal the local backend's under the same seed,
  inside ``pm.sample`` (the local step runs the compiled transition, the Dask
  step the driver from Python with the hosts doing the passes): ``alpha``
  moved by NUTS, DP and PY, Normal-Gamma, Beta-Bernoulli and Gamma-Poisson
  data, 1 to 3 shards, proposals alone (labels fetched at the end of every
  step) and with the hybrid iteration, interleaved with ``GibbsStep`` (the
  hosts take the labels another step wrote), two chains one after the other;
* a worker process killed by its pid in the middle of a step -- after a
  split or restricted sweep was decided and before the hosts applied it --
  changes nothing: the rebuilt host replays the step's label operations,
  re-deriving the sides from their seeds;
* the workers never import PyMC;
* what crosses the network per step is O(K s) plus the labels: the labels
  once per step (4 bytes an item), and everything else bounded independently
  of n (measured at n = 3,000 and 30,000 with the same clusters, printed);
* bad input: a Dask step cannot be copied to another process (``cores > 1``).
"""

import os
import signal

import cloudpickle
import numpy as np
import pymc as pm
import pytest
from chains import assert_same_chains, local_and_dask, model_of, sample_chains

import pymc_partitions as pmp
from pymc_partitions import families, priors
from pymc_partitions.distributed.cluster import DaskShards
from pymc_partitions.kernels import subcluster, twofold
from pymc_partitions.state import build_state, canonical_labels, make_model


def sample(model, backend, *, step="subcluster", gibbs=False, draws=12, tune=4, callback=None, seed=11, **options):
    with model:
        if step == "subcluster":
            main = pmp.SubClusterSplitMergeStep(model["z"], backend=backend, n_proposals=3, **options)
        else:
            main = pmp.HybridDPStep(model["z"], backend=backend, n_proposals=2, **options)
    return sample_chains(model, main, gibbs=gibbs, draws=draws, tune=tune, callback=callback, seed=seed), main


CASES = {
    "alpha by NUTS, DP, Normal-Gamma, 3 shards": dict(family="normal_gamma", prior="dp", alpha=True, n_shards=3),
    "PY, Beta-Bernoulli, 2 shards, proposals alone": dict(family="beta_bernoulli", prior="py", n_shards=2, n_global_sweeps=0),
    "PY, Gamma-Poisson, 1 shard, with Gibbs": dict(family="gamma_poisson", prior="py", n_shards=1, gibbs=True),
    "HybridDPStep with proposals and warm start, DP, Beta-Bernoulli": dict(
        family="beta_bernoulli", prior="dp", n_shards=3, step="hybrid", warm_start=3
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_dask_chains_equal_local_chains(client, case):
    (local, local_step), (dask, step) = local_and_dask(sample, CASES[case], client)
    assert local_step.options.executor is None and not twofold.interpreted(local_step.chain.state, local_step.chain.sampler)  # compiled
    assert_same_chains(local, dask, ("partition_log_joint", "partition_accept", "partition_log_target_ratio", "partition_n_clusters"))
    assert step.options.executor.volume["received"] > 0


def test_worker_killed_mid_step_changes_nothing(client):
    """Kill the worker of the first hosts by its pid right after the first split or restricted sweep of the 6th
    draw is decided, before any host applied it: the next call finds the host lost, rebuilds it from the labels
    of the last synchronisation and replays the step's operations; the chains are the local backend's."""
    model = model_of("normal_gamma", "py")
    expected, _ = sample(model, "local", n_shards=3, draws=10)
    killed = []
    draws = []

    with model:
        step = pmp.SubClusterSplitMergeStep(model["z"], backend=client, n_proposals=3, n_shards=3)
    record = step.options.executor.assign

    def assign_then_kill(*args):
        record(*args)
        if len(draws) == 5 and not killed:
            victim = step.options.executor._host_workers[0]
            os.kill(client.run(os.getpid)[victim], signal.SIGKILL)
            killed.append(victim)

    step.options.executor.assign = assign_then_kill
    with model:
        idata = pm.sample(
            step=[step], draws=10, tune=4, chains=2, cores=1, progressbar=False, random_seed=11,
            compute_convergence_checks=False, discard_tuned_samples=False, callback=lambda trace, draw: draws.append(1),
        )
    assert killed and killed[0] not in step.options.executor._host_workers
    np.testing.assert_array_equal(expected["posterior"]["z"].values, idata["posterior"]["z"].values)
    np.testing.assert_array_equal(expected["warmup_posterior"]["z"].values, idata["warmup_posterior"]["z"].values)


def test_workers_never_import_pymc(client):
    sample(model_of("normal_gamma", "dp"), client, n_shards=2, draws=3, tune=0)
    assert client.run(eval, "'pymc' in __import__('sys').modules") == {w: False for w in client.scheduler_info()["workers"]}
    assert all(client.run(eval, "'pymc_partitions.kernels.passes' in __import__('sys').modules").values())  # the passes


def planted(n, seed=3):
    """Four Gaussian clusters 20 standard deviations apart in D = 2, the same proportions at every n."""
    rng = np.random.default_rng(seed)
    truth = np.arange(n) % 4
    centres = 20.0 * np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    return centres[truth] + rng.normal(0.0, 1.0, (n, 2)), truth


def volumes(client, n, n_iterations=6, n_shards=4):
    """Bytes per iteration of the driver on the cluster, from the planted partition: rows (labels, other)."""
    x, truth = planted(n)
    params = families.pack_params(families.NORMAL_GAMMA, 2, 10.0, 0.01, 2.0, 2.0)
    model = make_model(families.NORMAL_GAMMA, x, params, priors.DP, np.array([1.0]), np.zeros(0))
    state = build_state(model, truth.astype(np.int64))
    executor = DaskShards(client, families.NORMAL_GAMMA, model.data, n_shards)
    rng = np.random.default_rng(5)
    algo = subcluster.init(model, state.labels, subcluster.Options(n_shards=n_shards), rng)._replace(executor=executor)
    rows = []
    for _ in range(n_iterations):
        state, algo, _ = subcluster.transition(model, state, algo, rng)
        rows.append((executor.volume["labels"], executor.volume["sent"] + executor.volume["received"]))
    assert canonical_labels(state).max() == 3  # the planted clusters, kept
    return np.array(rows)


def test_bytes_per_step_are_o_k_s_plus_the_labels(client):
    """Labels: 4 bytes an item sent at the first step (the hosts take the initial labels) and 4 bytes an item
    received per step (the global move's labels, for ``z``).  Everything else -- each pass's parameters (O(p))
    and per-shard sums (O(s) per shard), the label operations of accepted splits and restricted sweeps
    (O(p + s) each), the global move's per-shard summaries and plan (O(K s) per shard) -- depends on K, s, the
    shards and the proposals made, not on n: about 20 KB per step here (10 proposals, K = 4, s = 5, 4 shards on
    2 hosts), at ten times the items as much (within 50 %: the steps draw different pairs), where one int32
    label vector of the larger n alone is 120 KB."""
    small, large = volumes(client, 3_000), volumes(client, 30_000)
    for n, rows in ((3_000, small), (30_000, large)):
        print(f"\nn = {n}: bytes per step (labels, other): {rows.tolist()}")
        assert rows[0, 0] == 8 * n and np.all(rows[1:, 0] == 4 * n)
    assert large[:, 1].max() < 1.5 * small[:, 1].max() and small[:, 1].max() < 1.5 * large[:, 1].max()
    assert large[:, 1].max() < 4 * 30_000 / 3


def test_dask_step_cannot_go_to_another_process(client):
    model = model_of("normal_gamma", "dp")
    with model:
        step = pmp.SubClusterSplitMergeStep(model["z"], n_shards=2, backend=client)
        hybrid = pmp.HybridDPStep(model["z"], n_shards=2, backend=client, n_proposals=1)
    for s in (step, hybrid):
        with pytest.raises(TypeError, match=r"cores=1"):  # what pm.sample(cores=2) does to send a step to a process
            cloudpickle.dumps(s)
