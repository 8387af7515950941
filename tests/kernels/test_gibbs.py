"""The additive Gibbs sweep when it runs out of free cluster slots part-way through."""

import numpy as np
import pymc as pm
import pytest

import pymc_partitions as pmp
from pymc_partitions.kernels import gibbs
from pymc_partitions.state import build_state, canonical_labels


def test_sweep_grows_capacity_mid_sweep_and_keeps_cluster_summaries_exact():
    """40 items 100 noise scales apart, all starting in one cluster (capacity 4): the sweep opens
    new clusters past the capacity several times.  Afterwards every cluster's size, statistics,
    predictive cache and prior weight equal those of a state built afresh from the labels, and the
    claimed log joint change equals the PyTensor model's."""
    n = 40
    x = 100.0 * np.arange(n, dtype=float)[:, None] + np.random.default_rng(0).normal(0.0, 0.1, (n, 1))
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=50.0, n=n)
        pmp.NormalGammaMixture("x", partition=z, mu0=2000.0, kappa0=1e-8, a0=2.0, b0=0.5, observed=x)
    point = model.initial_point()
    kernel_model = pmp.GibbsStep(z, model=model).kernel_model(point)
    logp = model.compile_logp(jacobian=False)

    start = build_state(kernel_model, np.zeros(n, dtype=np.int64))
    assert start.sizes.shape[0] == 4
    state, change = gibbs.sweep(kernel_model, start, np.random.default_rng(1))

    labels = canonical_labels(state)
    assert state.n_clusters[0] > 8  # the capacity grew at least twice during the sweep
    rebuilt = build_state(kernel_model, labels.astype(np.int64))
    for slot in state.slots[: state.n_clusters[0]]:
        item = np.flatnonzero(state.labels == slot)[0]
        fresh = rebuilt.labels[item]
        assert state.sizes[slot] == rebuilt.sizes[fresh]
        np.testing.assert_allclose(state.stats[slot], rebuilt.stats[fresh], rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(state.cache[slot], rebuilt.cache[fresh], rtol=1e-9)
        assert state.log_weight[slot] == rebuilt.log_weight[fresh]
    before = logp({**point, "z": np.zeros(n, dtype=np.int32)})
    assert change == pytest.approx(logp({**point, "z": labels}) - before, abs=1e-7)
