"""The large-n path of ``benchmarks/scale.py`` at a small n: ``z`` out of the trace, ``keep_items``, scalars only.

``pm.sample`` with ``GibbsStep`` and ``SplitMergeStep`` on a DP Normal-Gamma
mixture (D = 2, 10 clusters 20 standard deviations apart) started at the
planted partition (``initvals``, as the benchmark), ``alpha`` moved by NUTS,
``var_names`` leaving ``z`` out and ``keep_items`` recording 100 items: the
trace holds no ``z``, the kept items' co-clustering is the frequency of their
recorded labels agreeing, and the well-separated clusters stay apart.
"""

import numpy as np
import pymc as pm
import pytest

import pymc_partitions as pmp

N = 3000


@pytest.mark.parametrize("make_step", [pmp.GibbsStep, pmp.SplitMergeStep])
def test_sample_without_z_at_scale_path(make_step):
    rng = np.random.default_rng(0)
    centers = 20.0 * np.array([(a, b) for a in range(5) for b in range(2)], dtype=float)
    truth = rng.integers(0, 10, N)
    X = centers[truth] + rng.normal(0.0, 1.0, (N, 2))
    kept = list(range(0, N, N // 100))[:100]
    with pm.Model():
        alpha = pm.Gamma("alpha", 1.0, 1.0)
        z = pmp.DirichletProcessPartition("z", alpha=alpha, n=N)
        pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=0.01, a0=2.0, b0=2.0, observed=X)
        idata = pm.sample(
            step=make_step(z, keep_items=kept), tune=10, draws=20, chains=1, cores=1, progressbar=False,
            random_seed=1, var_names=["alpha"], compute_convergence_checks=False, initvals={"z": truth},
        )
    assert "z" not in idata["posterior"]
    assert all(f"partition_label_{i}" in idata["sample_stats"] for i in kept)
    labels = np.stack([idata["sample_stats"][f"partition_label_{i}"].values.ravel() for i in kept], axis=1)
    similarity = pmp.posterior_similarity(idata)
    np.testing.assert_array_equal(similarity, (labels[:, :, None] == labels[:, None, :]).mean(axis=0))
    planted = truth[kept][:, None] == truth[kept][None, :]
    assert np.all(similarity[~planted] == 0.0)  # clusters 20 sd apart never share items
    assert similarity[planted].mean() > 0.95  # an outlying item may sit alone now and then
    table = pmp.summarize(idata)
    assert 10 <= table.loc["n_clusters", "50%"] <= 12  # the 10 planted clusters, and now and then an outlier alone
