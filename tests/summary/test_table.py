"""Tests for pymc_partitions.summary.table: the diagnostics table of summarize."""

import warnings

import arviz as az
import numpy as np
import pytest
from exact import make_idata, step_stats

from pymc_partitions.summary import adjusted_rand_index, summarize, vi_distance

warnings.filterwarnings("ignore", category=FutureWarning, module="arviz")


def test_summarize_columns_and_rows():
    rng = np.random.default_rng(5)
    chains, draws, n = 2, 100, 8
    z = rng.integers(0, 3, size=(chains, draws, n))
    idata = az.from_dict(posterior={"z": z}, sample_stats=step_stats(rng, chains, draws))
    table = summarize(idata, reference=np.repeat([0, 1], 4))
    assert list(table.columns) == ["mean", "sd", "5%", "50%", "95%", "ess_bulk", "ess_tail", "r_hat"]
    assert list(table.index) == [
        "n_clusters", "n_large_clusters", "log_joint", "largest_fraction", "vi_reference", "ari_reference",
        "accept_rate_split", "accept_rate_merge",
    ]
    k = idata["sample_stats"]["partition_n_clusters"].values
    assert table.loc["n_clusters", "mean"] == pytest.approx(k.mean())
    assert table.loc["n_clusters", "ess_bulk"] == pytest.approx(float(az.ess(k.astype(float), method="bulk")))
    sizes = [np.bincount(d) for d in z.reshape(-1, n)]  # a large cluster of 8 items: at least 2 of them
    assert table.loc["n_large_clusters", "mean"] == pytest.approx(np.mean([np.sum(s >= 2) for s in sizes]))
    assert table.loc["log_joint", "r_hat"] == pytest.approx(
        float(az.rhat(idata["sample_stats"]["partition_log_joint"].values))
    )
    # split proposals are draws 1 and 3 of each block of 4: accepted, not accepted
    assert table.loc["accept_rate_split", "mean"] == pytest.approx(0.5)
    assert table.loc["accept_rate_merge", "mean"] == pytest.approx(0.0)
    assert table.attrs["moves"]["split"]["proposed"] == chains * draws // 2
    assert table.attrs["moves"]["split"]["mean_accept_prob"] == pytest.approx(0.5)
    flat = z.reshape(-1, n)
    ref = np.repeat([0, 1], 4)
    assert table.loc["vi_reference", "mean"] == pytest.approx(np.mean([vi_distance(d, ref) for d in flat]))
    assert table.loc["ari_reference", "mean"] == pytest.approx(np.mean([adjusted_rand_index(d, ref) for d in flat]))
    assert summarize(idata.to_datatree()).loc["log_joint", "mean"] == pytest.approx(table.loc["log_joint", "mean"])


def test_moves_attribute():
    rng = np.random.default_rng(12)
    table = summarize(az.from_dict(sample_stats=step_stats(rng, 2, 40)))
    assert set(table.attrs["moves"]) == {"gibbs", "split", "merge"}
    gibbs = table.attrs["moves"]["gibbs"]
    assert gibbs == {"proposed": 20, "accepted": 20, "accept_rate": 1.0, "mean_accept_prob": 1.0}
    assert table.attrs["moves"]["merge"]["accepted"] == 0
    assert "accept_rate_gibbs" not in table.index


def test_summarize_falls_back_on_z():
    z = np.array([[[0, 0, 1, 1], [0, 1, 2, 2], [0, 0, 0, 0], [0, 1, 0, 1]]])
    table = summarize(make_idata(z.reshape(-1, 4)))
    assert table.loc["n_clusters", "mean"] == pytest.approx(np.mean([2, 3, 1, 2]))
    assert table.loc["n_large_clusters", "mean"] == pytest.approx(np.mean([2, 1, 1, 2]))
    assert table.loc["largest_fraction", "mean"] == pytest.approx(np.mean([0.5, 0.5, 1.0, 0.5]))
    # constant quantities and one chain: no ESS / R-hat
    assert np.isnan(summarize(make_idata(np.zeros((6, 3), int))).loc["n_clusters", "ess_bulk"])


def test_summarize_without_z():
    rng = np.random.default_rng(6)
    stats = step_stats(rng, 2, 40)
    idata = az.from_dict(posterior={"alpha": rng.gamma(1.0, size=(2, 40))}, sample_stats=stats)
    table = summarize(idata)  # stats only: works
    assert {"n_clusters", "log_joint", "largest_fraction"} <= set(table.index)
    with pytest.raises(ValueError, match="keep 'z' in the trace"):
        summarize(idata, reference=np.zeros(5, int))
    stats_only = az.from_dict(sample_stats=stats)
    assert "n_clusters" in summarize(stats_only).index
    with pytest.raises(ValueError, match="nothing to summarize"):
        summarize(az.from_dict(posterior={"alpha": rng.random((2, 40))}))


def test_summarize_bad_reference():
    idata = make_idata(np.array([[0, 0, 1], [0, 1, 1]]))
    with pytest.raises(ValueError, match="reference"):
        summarize(idata, reference=[0, 1])
    with pytest.raises(ValueError, match="reference must be a 1-D label vector of length 3"):
        summarize(idata, reference=[[0, 1, 1]])
    with pytest.raises(TypeError, match="reference"):
        summarize(idata, reference=["a", "b", "c"])
    with pytest.raises(TypeError, match="var_name"):
        summarize(idata, var_name=0)


@pytest.mark.parametrize("chains, draws", [(1, 100), (2, 3), (3, 40)])
def test_summarize_warns_about_nothing_for_rows_without_r_hat(chains, draws):
    """Acceptance rows, constant rows, one chain, too few draws: NaN in the table, no warning printed."""
    rng = np.random.default_rng(9)
    stats = step_stats(rng, chains, 4 * ((draws + 3) // 4))
    stats = {name: value[:, :draws] for name, value in stats.items()}
    stats["partition_largest_fraction"] = np.full((chains, draws), 0.5)  # constant: no ESS, no R-hat
    idata = az.from_dict(sample_stats=stats)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = summarize(idata)
        text = table.to_string()
    assert "accept_rate_split" in text
    assert np.isnan(table.loc["accept_rate_split", "r_hat"]) and np.isnan(table.loc["largest_fraction", "r_hat"])
    assert np.isnan(table.loc["n_clusters", "r_hat"]) == (chains == 1 or draws < 4)
