"""Tests for pymc_partitions.summary.point: posterior expected loss and the SALSO-style point estimate."""

import itertools

import numpy as np
import pytest
from exact import brute_loss, make_idata, salso_by_definition, set_partitions

from pymc_partitions.labels import relabel
from pymc_partitions.summary import expected_loss, point, point_partition, posterior_similarity


def one_move_draws(truth):
    """Every partition obtained from `truth` by moving one item into another existing cluster."""
    k = truth.max() + 1
    draws = []
    for i in range(len(truth)):
        for target in range(k):
            if target != truth[i]:
                d = truth.copy()
                d[i] = target
                draws.append(relabel(d))
    return np.array(draws)


def fuzzy_draws(rng, n, k, n_draws, concentration):
    """Canonical draws in which each item's cluster is drawn anew from its own Dirichlet(concentration) preferences
    over ``k`` clusters: a posterior with many local minima of the expected loss."""
    preferences = rng.dirichlet(np.full(k, concentration), size=n)
    u = rng.random((n_draws, n, 1))
    return relabel((u > preferences.cumsum(axis=1)[None]).sum(axis=2))


@pytest.mark.parametrize("loss", ["VI", "Binder"])
def test_point_partition_recovers_planted_partition(loss):
    rng = np.random.default_rng(3)
    truth = np.repeat(np.arange(3), 10)
    draws = np.tile(truth, (200, 1))
    noise = rng.random(draws.shape) < 0.1
    draws[noise] = rng.integers(0, 5, noise.sum())  # moves to other clusters and to new ones
    idata = make_idata(draws, chains=2)
    estimate = point_partition(idata, loss=loss, random_seed=0)
    assert estimate.tolist() == truth.tolist()
    assert estimate.dtype.kind == "i"


@pytest.mark.parametrize("loss", ["VI", "Binder"])
def test_point_partition_beats_best_draw(loss):
    # every draw misplaces exactly one item; the planted partition is not a draw but is optimal
    truth = np.repeat(np.arange(3), 4)
    draws = one_move_draws(truth)
    assert not any(np.array_equal(d, truth) for d in draws)
    idata = make_idata(draws)
    estimate = point_partition(idata, loss=loss, random_seed=1)
    best_draw = min(brute_loss(draws, d, loss) for d in draws)
    value = brute_loss(draws, estimate, loss)
    assert value < best_draw - 1e-9
    assert estimate.tolist() == truth.tolist()
    assert expected_loss(idata, estimate, loss=loss) == pytest.approx(value)


@pytest.mark.parametrize("seed", range(4))
def test_point_partition_is_the_enumerated_minimum(seed):
    rng = np.random.default_rng(10 + seed)
    n = 6
    partitions = set_partitions(n)
    assert len(partitions) == 203
    support = partitions[rng.choice(len(partitions), size=6, replace=False)]
    draws = support[rng.choice(6, size=40, p=rng.dirichlet(np.ones(6)))]
    idata = make_idata(draws)
    for loss in ("VI", "Binder"):
        values = np.array([brute_loss(draws, p, loss) for p in partitions])
        estimate = point_partition(idata, loss=loss, random_seed=seed)
        assert brute_loss(draws, estimate, loss) == pytest.approx(values.min(), abs=1e-9)
        assert expected_loss(idata, estimate, loss=loss) == pytest.approx(values.min(), abs=1e-9)


def test_expected_loss_matches_definition_for_every_partition():
    rng = np.random.default_rng(11)
    draws = rng.integers(0, 4, size=(30, 5))  # non-canonical labels on purpose
    idata = make_idata(draws, chains=2)
    for candidate in set_partitions(5):
        for loss in ("VI", "Binder"):
            assert expected_loss(idata, candidate, loss=loss) == pytest.approx(brute_loss(relabel(draws), candidate, loss), abs=1e-12)
    items = [4, 0, 2]
    sub = relabel(draws[:, items])
    assert expected_loss(idata, [0, 1, 0], items=items) == pytest.approx(brute_loss(sub, [0, 1, 0], "VI"), abs=1e-12)


def test_binder_and_vi_disagree_on_balanced_splits():
    # Posterior uniform over the 10 splits of 6 items into two triples: Pr(z_i = z_j) = 0.4 < 1/2,
    # so Binder's estimate is all singletons (expected loss = Σ_{i<j} P_ij = 6), while the VI
    # estimate is one cluster (expected VI = H(draw) = 1 bit): VI merges where Binder splits
    # (the tendencies discussed by Wade & Ghahramani 2018).
    draws = np.array([relabel([0 if i in triple else 1 for i in range(6)])
                      for triple in itertools.combinations(range(6), 3) if 0 in triple])
    assert len(draws) == 10
    idata = make_idata(draws)
    np.testing.assert_allclose(posterior_similarity(idata)[np.triu_indices(6, 1)], 0.4)
    binder = point_partition(idata, loss="Binder", random_seed=0)
    vi = point_partition(idata, loss="VI", random_seed=0)
    assert binder.tolist() == list(range(6))
    assert vi.tolist() == [0] * 6
    assert expected_loss(idata, binder, loss="Binder") == pytest.approx(6.0)
    assert expected_loss(idata, vi, loss="VI") == pytest.approx(1.0)
    partitions = set_partitions(6)
    assert min(brute_loss(draws, p, "VI") for p in partitions) == pytest.approx(1.0)
    assert min(brute_loss(draws, p, "Binder") for p in partitions) == pytest.approx(6.0)


def test_point_partition_reproducible_and_items():
    rng = np.random.default_rng(4)
    draws = rng.integers(0, 3, size=(50, 15))
    idata = make_idata(draws)
    a = point_partition(idata, random_seed=7, n_starts=3)
    b = point_partition(idata, random_seed=7, n_starts=3)
    assert np.array_equal(a, b)
    sub = point_partition(idata, items=[0, 3, 5, 9], random_seed=7)
    assert sub.shape == (4,)
    assert np.array_equal(relabel(sub), sub)


def test_loss_is_case_insensitive():
    idata = make_idata(np.array([[0, 0, 1], [0, 1, 1]]))
    assert expected_loss(idata, [0, 0, 1], loss="vi") == expected_loss(idata, [0, 0, 1], loss="VI")
    assert expected_loss(idata, [0, 0, 1], loss="BINDER") == expected_loss(idata, [0, 0, 1], loss="Binder")


def test_point_partition_bad_arguments():
    idata = make_idata(np.array([[0, 0, 1], [0, 1, 1]]))
    with pytest.raises(ValueError, match="loss must be one of 'VI', 'Binder', 'PEAR', got 'foo'"):
        point_partition(idata, loss="foo")
    with pytest.raises(ValueError, match="items"):
        point_partition(idata, items=[0, 3])
    with pytest.raises(ValueError, match="n_starts"):
        point_partition(idata, n_starts=0)
    with pytest.raises(TypeError, match="max_sweeps"):
        point_partition(idata, max_sweeps=2.5)
    with pytest.raises(TypeError, match="n_starts"):
        point_partition(idata, n_starts=True)
    with pytest.raises(ValueError, match="partition"):
        expected_loss(idata, [0, 1])
    with pytest.raises(ValueError, match="partition must be a 1-D label vector of length 2"):
        expected_loss(idata, [0, 1, 0], items=[0, 2])
    with pytest.raises(ValueError, match="loss"):
        expected_loss(idata, [0, 0, 1], loss=1)


@pytest.mark.parametrize(("loss", "problem"), [("VI", (30, 6, 0.1, 4)), ("Binder", (32, 4, 0.5, 4))])
def test_point_partition_is_as_good_as_the_search_by_definition(loss, problem):
    # Same draws, before and after: the original search, every move scored by the expected loss computed from
    # scratch (tests/exact.py), against the incremental one.  On these draws runs from different starts end in
    # different local minima (losses 1-2 % apart), so the comparison covers the starts and the choice among them.
    n, k, concentration, data_seed = problem
    draws = fuzzy_draws(np.random.default_rng(data_seed), n, k, 100, concentration)
    idata = make_idata(draws, chains=2)
    singles = {round(brute_loss(draws, point_partition(idata, loss=loss, n_starts=2, random_seed=s), loss), 9) for s in range(8)}
    assert len(singles) > 1
    for seed in (0, 1):
        estimate = point_partition(idata, loss=loss, random_seed=seed)
        reference = salso_by_definition(draws, loss, seed)
        assert brute_loss(draws, estimate, loss) <= brute_loss(draws, reference, loss) + 1e-9


@pytest.mark.parametrize("loss", ["VI", "Binder"])
def test_search_keeps_its_table_and_overlaps_exact(loss):
    # One sweep from a poor start moves many items; the sparse tables, the overlaps and T kept up to date move by
    # move must equal those computed afresh from the labels reached (labels of the search's item positions).
    rng = np.random.default_rng(8)
    draw_set = point._Draws(fuzzy_draws(rng, 40, 4, 60, 0.5))
    items, rows, draw_of_row, members, member_start = draw_set.search_index()
    ftab, _ = point._loss_table(loss, 40)
    gain = ftab[1:] - ftab[:-1] - (ftab[1] - ftab[0])
    double_weights = 2.0 * draw_set.weights
    order = rng.permutation(40)
    labels, entries, n_entries, sizes, n_used = point._start(
        rows, len(draw_of_row), double_weights, gain, ftab, rng.integers(0, 3, 40), order, False
    )
    overlap = np.zeros((41, 40))
    point._all_overlaps(draw_of_row, double_weights, entries, n_entries, members, member_start, gain, labels, overlap)
    before = labels.copy()
    entries, overlap, n_used, moved = point._sweep(
        order, rows, double_weights, gain, (ftab, np.zeros(4)), members, member_start, labels, entries, n_entries, sizes,
        overlap, n_used,
    )
    assert moved and (labels != before).sum() >= 5
    for r in range(len(draw_of_row)):
        pairs = {int(l): int(c) for l, c in entries[r, : n_entries[r]]}
        in_row = members[member_start[r] : member_start[r + 1]]
        assert pairs == dict(zip(*np.unique(labels[in_row], return_counts=True), strict=True))
    assert sizes[: n_used + 1].tolist() == np.bincount(labels, minlength=n_used + 1).tolist()
    fresh = np.zeros_like(overlap)
    point._all_overlaps(draw_of_row, double_weights, entries, n_entries, members, member_start, gain, labels, fresh)
    np.testing.assert_allclose(overlap, fresh, rtol=0, atol=1e-9)
    canonical = relabel(labels)
    expected_term = point._candidate_term(
        np.ascontiguousarray(draw_set.draws[:, items]), draw_set.weights, draw_set.n_clusters, canonical,
        canonical.max() + 1, ftab, ftab,
    )
    assert point._table_term(draw_of_row, draw_set.weights, entries, n_entries, sizes, ftab, ftab) == pytest.approx(
        expected_term
    )


def pear_by_definition(draws, candidate):
    """Fritsch & Ickstadt's PEAR from the similarity matrix of ``draws`` (every draw weighted equally)."""
    draws, candidate = np.asarray(draws), np.asarray(candidate)
    iu = np.triu_indices(draws.shape[1], 1)
    similarity = np.mean([(d[:, None] == d[None, :])[iu] for d in draws], axis=0)
    joined = (candidate[:, None] == candidate[None, :])[iu]
    pairs, total, n_pairs = joined.sum(), similarity.sum(), len(similarity)
    chance = pairs * total / n_pairs
    return (similarity[joined].sum() - chance) / (0.5 * (pairs + total) - chance)


def test_pear_search_finds_the_maximum_over_all_partitions():
    # 7 items, 877 partitions: the search's estimate has the largest PEAR of all of them, and the PEAR it kept up to
    # date move by move (its running pairs and similarity) is the one computed afresh from its labels
    rng = np.random.default_rng(11)
    draws = fuzzy_draws(rng, 7, 3, 80, 0.4)
    idata = make_idata(draws)
    best = max(pear_by_definition(draws, c) for c in set_partitions(7))
    estimate = point_partition(idata, loss="PEAR", random_seed=0)
    assert pear_by_definition(draws, estimate) == pytest.approx(best, abs=1e-12)
    draw_set = point._Draws(draws)
    items, *rows = draw_set.search_index()
    ftab, _ = point._loss_table("Binder", 7)
    pairs = 0.5 * np.arange(9) * (np.arange(9) - 1.0)
    pear = np.array([point._draw_term(draw_set.draws, draw_set.weights, draw_set.n_clusters, pairs), pairs[7]])
    position = np.empty(7, dtype=np.int64)
    position[items] = np.arange(7)
    found, term = point._salso_search(
        *rows, draw_set.weights, np.zeros(7, dtype=np.int64), rng.permutation(7), (ftab, ftab, pear), True, 50
    )
    assert -term / pairs[7] == pytest.approx(pear_by_definition(draws, found[position]), abs=1e-12)


def test_pear_keeps_groups_that_vi_merges():
    # Two groups of 60 that the draws split correctly only 40 % of the time, otherwise at random: VI's estimate is one
    # cluster (which warns: the draws have 2 large clusters), PEAR's the two groups.
    rng = np.random.default_rng(5)
    truth = np.repeat([0, 1], 60)
    draws = np.where(rng.random((300, 1)) < 0.4, truth, rng.integers(0, 2, (300, 120)))
    draws = np.array([relabel(d) for d in draws])
    idata = make_idata(draws)
    assert point_partition(idata, loss="PEAR", random_seed=0).tolist() == truth.tolist()
    one = np.zeros(120, dtype=np.int64)
    assert expected_loss(idata, one, loss="VI") < expected_loss(idata, truth, loss="VI")  # VI's minimum merges
    with pytest.warns(UserWarning, match=r"has 1 cluster\(s\) of at least 2 items, but 90 % of the posterior draws"):
        assert point_partition(idata, loss="VI", random_seed=0).tolist() == one.tolist()


@pytest.mark.parametrize("loss", ["VI", "Binder"])
@pytest.mark.parametrize("a", [0.5, 2.0])
def test_generalised_loss_is_its_definition(loss, a):
    # L_a = [Σ_k f(n_k) - Σ_kl f(n_kl)] + a [Σ_l f(m_l) - Σ_kl f(n_kl)] (scaled): for VI H(ĉ|c) + a H(c|ĉ) in bits,
    # for Binder the pairs ĉ separates that the draw joins plus a times the pairs ĉ joins that the draw separates
    rng = np.random.default_rng(2)
    draws = fuzzy_draws(rng, 7, 3, 50, 0.5)
    candidate = relabel(rng.integers(0, 3, 7))
    iu = np.triu_indices(7, 1)
    values = []
    for d in draws:
        if loss == "VI":
            joint = np.unique(np.stack([d, candidate]), axis=1, return_counts=True)[1] / 7
            entropy = lambda p: -np.sum(p * np.log2(p))  # noqa: E731
            h_joint = entropy(joint)
            h_d, h_c = (entropy(np.bincount(x)[np.bincount(x) > 0] / 7) for x in (d, candidate))
            values.append((h_joint - h_d) + a * (h_joint - h_c))
        else:
            same_d, same_c = ((x[:, None] == x[None, :])[iu] for x in (d, candidate))
            values.append(np.sum(same_d & ~same_c) + a * np.sum(same_c & ~same_d))
    assert expected_loss(make_idata(draws), candidate, loss=loss, a=a) == pytest.approx(np.mean(values), rel=1e-10)
    idata = make_idata(draws)
    estimate = point_partition(idata, loss=loss, a=a, random_seed=0)
    best = min(expected_loss(idata, c, loss=loss, a=a) for c in set_partitions(7))
    assert expected_loss(idata, estimate, loss=loss, a=a) == pytest.approx(best, abs=1e-9)


def test_point_partition_refuses_bad_criteria():
    idata = make_idata(np.zeros((4, 5), dtype=np.int64))
    with pytest.raises(ValueError, match="loss"):
        point_partition(idata, loss="ARI")
    with pytest.raises(ValueError, match="a must be a finite number > 0"):
        point_partition(idata, loss="VI", a=0.0)
    with pytest.raises(TypeError, match="a must be a positive number"):
        point_partition(idata, a="2")
    with pytest.raises(ValueError, match="PEAR has no weight"):
        point_partition(idata, loss="PEAR", a=2.0)
