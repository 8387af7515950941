"""The cluster operations (``kernels.clusters``) against a recomputation from the labels, for every kind of model.

Property-based (hypothesis): random partitions and random sequences of
operations -- move an item, move a block, split a cluster given the movers,
merge two clusters -- on every additive family and the relational IRM.  After
each operation the state must equal the state rebuilt from its labels (sizes,
statistics, caches, prior weights, member lists, free-slot bookkeeping), and
every log ratio an operation claims must equal the difference of the PyTensor
model's ``compile_logp`` (an independent implementation).
"""

import functools

import numpy as np
import pymc as pm
import pytest
from exact import exact_normal_gamma, exact_normal_inverse_wishart
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_deltas import DATA, N, setup

import pymc_partitions as pmp
from pymc_partitions import families, priors
from pymc_partitions.kernels import clusters
from pymc_partitions.state import build_state, canonical_labels, log_joint, log_likelihood, make_model, members_of

pytestmark = pytest.mark.pytensor_python  # PyTensor without C: conftest.py

FAMILIES = list(DATA)
PRIORS = ["dp", "py"]


def assert_state_matches_labels(kernel_model, state):
    """``state`` equals the state rebuilt from its labels, cluster by cluster."""
    labels = state.labels
    assert np.all(labels >= 0)
    k = state.n_clusters[0]
    occupied = state.slots[:k]
    assert sorted(np.unique(labels).tolist()) == sorted(occupied.tolist())
    assert np.array_equal(state.position[state.slots], np.arange(state.slots.shape[0]))
    assert np.all(state.sizes[state.slots[k:]] == 0) and np.all(state.head[state.slots[k:]] == -1)
    rebuilt = build_state(kernel_model, canonical_labels(state).astype(np.int64))
    relational = state.cache.shape[1] == 0
    for slot in occupied:
        members = np.empty(N, dtype=np.int64)
        end = members_of(state, slot, members, 0)
        np.testing.assert_array_equal(np.sort(members[:end]), np.flatnonzero(labels == slot))
        fresh = rebuilt.labels[np.flatnonzero(labels == slot)[0]]
        assert state.sizes[slot] == rebuilt.sizes[fresh] == end
        assert state.log_weight[slot] == pytest.approx(rebuilt.log_weight[fresh], abs=1e-12)
        if relational:  # edge counts are integers: exact, row by row through the slot correspondence
            for other in occupied:
                other_fresh = rebuilt.labels[np.flatnonzero(labels == other)[0]]
                assert state.stats[slot, other] == rebuilt.stats[fresh, other_fresh]
        else:
            np.testing.assert_allclose(state.stats[slot], rebuilt.stats[fresh], rtol=1e-12, atol=1e-9)
            np.testing.assert_allclose(state.cache[slot], rebuilt.cache[fresh], rtol=1e-9, atol=1e-9)


def move_item(kernel_model, state, i, slot):
    """Move item ``i`` to ``slot`` (``-1``: a new cluster): a one-item ``clusters.move_block`` unless it is there."""
    if state.labels[i] == slot:
        return state, slot
    return clusters.move_block(kernel_model, state, np.array([i], dtype=np.int64), 1, slot)


def item_of_cluster(state, item):
    """The slot of ``item``'s cluster."""
    return state.labels[item]


operations = st.lists(
    st.tuples(
        st.sampled_from(["move_item", "move_block", "split", "merge"]),
        st.integers(0, N - 1),
        st.integers(0, N - 1),
        st.lists(st.integers(0, N - 1), min_size=1, max_size=4, unique=True),
        st.booleans(),
    ),
    min_size=1,
    max_size=6,
)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("prior", PRIORS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(start=st.lists(st.integers(0, 3), min_size=N, max_size=N), ops=operations)
def test_operations_keep_the_state_equal_to_its_labels(family, prior, start, ops):
    point, kernel_model, logp = setup(family, prior)

    def model_logp(state):
        return float(logp({**point, "z": canonical_labels(state)}))

    state = build_state(kernel_model, np.asarray(start, dtype=np.int64))
    assert_state_matches_labels(kernel_model, state)
    assert log_joint(kernel_model, state) == pytest.approx(model_logp(state), abs=1e-8)
    for name, i, j, items, to_new in ops:
        if name == "move_item":
            target = -1 if to_new else item_of_cluster(state, j)
            state, slot = move_item(kernel_model, state, i, target)
            assert state.labels[i] == slot
        elif name == "move_block":
            target = -1 if to_new else item_of_cluster(state, j)
            block = np.array(items, dtype=np.int64)
            state, slot = clusters.move_block(kernel_model, state, block, len(block), target)
            assert np.all(state.labels[block] == slot)
        elif name == "split":
            slot = item_of_cluster(state, i)
            movers = np.array([h for h in items if state.labels[h] == slot and h != i], dtype=np.int64)
            if movers.size == 0:
                continue
            state, new_slot = clusters.split_cluster(kernel_model, state, slot, movers, len(movers))
            assert np.all(state.labels[movers] == new_slot) and state.labels[i] == slot
        else:
            a, b = item_of_cluster(state, i), item_of_cluster(state, j)
            if a == b:
                continue
            before = model_logp(state)
            claimed = clusters.log_merge_ratio(kernel_model, state, a, b)
            members_b = np.flatnonzero(state.labels == b)
            clusters.merge_clusters(kernel_model, state, a, b)
            assert np.all(state.labels[members_b] == a)
            assert claimed == pytest.approx(model_logp(state) - before, abs=1e-8)
        assert_state_matches_labels(kernel_model, state)
        assert log_joint(kernel_model, state) == pytest.approx(model_logp(state), abs=1e-8)


@pytest.mark.parametrize("family", FAMILIES)
def test_split_ratio_is_minus_the_merge_ratio_of_its_parts(family):
    """A split's log ratio (``-log_merge_ratio`` of the two parts, as split-merge uses it) equals the model's."""
    point, kernel_model, logp = setup(family, "dp")
    rng = np.random.default_rng(4)
    for _ in range(20):
        z = rng.integers(0, 3, N)
        state = build_state(kernel_model, z)
        slot = state.labels[0]
        movers = np.array([h for h in range(1, N) if state.labels[h] == slot and rng.random() < 0.5], dtype=np.int64)
        if movers.size == 0:
            continue
        before = float(logp({**point, "z": canonical_labels(state)}))
        state, new_slot = clusters.split_cluster(kernel_model, state, slot, movers, len(movers))
        after = float(logp({**point, "z": canonical_labels(state)}))
        assert -clusters.log_merge_ratio(kernel_model, state, slot, new_slot) == pytest.approx(after - before, abs=1e-8)


ADDITIVE = [f for f in FAMILIES if f != "infinite_relational"]


@pytest.mark.parametrize("prior", ["dp", "py", "mfm", "ngg"])
@pytest.mark.parametrize("family", ADDITIVE)
def test_log_merge_many_ratio_is_the_model_change(family, prior):
    """Merging any set of 2 or more clusters (tgMCMC's global merge, and minus its split): the model's logp change."""
    point, kernel_model, logp = setup(family, prior)
    rng = np.random.default_rng(9)
    for _ in range(12):
        z = rng.integers(0, 5, N)
        state = build_state(kernel_model, z)
        k = state.n_clusters[0]
        if k < 2:
            continue
        chosen = rng.choice(state.slots[:k], size=rng.integers(2, k + 1), replace=False)
        ratio = clusters.log_merge_many_ratio(kernel_model, k, state.stats[chosen], state.sizes[chosen], len(chosen))
        merged = np.where(np.isin(state.labels, chosen), chosen[0], state.labels)
        before = float(logp({**point, "z": canonical_labels(state)}))
        after = float(logp({**point, "z": canonical_labels(build_state(kernel_model, merged))}))
        assert ratio == pytest.approx(after - before, abs=1e-8)


def test_cluster_parameters_follow_their_clusters():
    """The per-cluster parameter block ``theta``: kept by growth, cleared when a cluster closes, and read in
    canonical order through ``cluster_order``."""
    from pymc_partitions.state import cluster_order, ensure_capacity

    point, kernel_model, _ = setup("normal_gamma", "dp")
    state = build_state(kernel_model, np.array([2, 2, 0, 1, 1, 0, 2, 3, 3]))
    cap = state.sizes.shape[0]
    state = state._replace(theta=np.repeat(np.arange(cap, dtype=float)[:, None], 2, axis=1))  # row = its slot id
    z = canonical_labels(state)
    order = cluster_order(state, z)
    np.testing.assert_array_equal(state.theta[order][:, 0], [state.labels[np.flatnonzero(z == k)[0]] for k in range(4)])
    grown = ensure_capacity(state, cap)
    np.testing.assert_array_equal(grown.theta[:cap], state.theta)
    assert np.all(grown.theta[cap:] == 0.0)
    closing = grown.labels[7]
    clusters.merge_clusters(kernel_model, grown, grown.labels[0], closing)
    assert np.all(grown.theta[closing] == 0.0)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=-5, max_value=40), max_size=30))
def test_heap_sort_sorts(values):
    """The split-merge scan order: ``heap_sort`` agrees with ``sorted`` (duplicates and empty input included)."""
    array = np.array(values, dtype=np.int64)
    clusters.heap_sort(array)
    assert array.tolist() == sorted(values)


@pytest.mark.parametrize("family, prior", [("normal_gamma", "py"), ("beta_bernoulli", "dp")])
def test_sequential_allocation_is_a_product_of_conditionals(family, prior):
    """Forced towards each of the 2^|S| outcomes, ``sequential_allocation`` returns the product of the brute-force
    conditionals ``∝ W(m_t + 1)/W(m_t) · p(x_h | items placed on side t)`` (families' marginals of the placed items),
    the outcomes' probabilities sum to one, and the state afterwards equals the state rebuilt from its labels."""
    import itertools

    from pymc_partitions import families, priors

    point, kernel_model, _ = setup(family, prior)
    x = kernel_model.data  # DATA[family] relative to the model's origin, the coordinates of kernel_model.params
    z = np.array([0, 0, 0, 0, 0, 1, 1, 0, 2], dtype=np.int64)  # items 0 and 1 anchor the sides; S = 2, 3, 4, 7 (in this order)
    order = np.array([4, 2, 7, 3], dtype=np.int64)

    def log_marginal(items):
        stats = np.zeros(families.stat_size(kernel_model.family.code, x.shape[1]))
        row = np.empty_like(stats)
        for i in items:
            families.item_stats(kernel_model.family.code, x[i], row)
            stats += row
        return families.log_marginal(kernel_model.family.code, stats, kernel_model.params)

    def log_weight(placed, h):
        log_w = priors.log_w(kernel_model.prior, kernel_model.prior_params, len(placed) + 1) - priors.log_w(
            kernel_model.prior, kernel_model.prior_params, len(placed))
        return log_w + log_marginal(placed + [h]) - log_marginal(placed)

    total = 0.0
    for sides in itertools.product((0, 1), repeat=len(order)):
        state = build_state(kernel_model, z)
        state, new = clusters.split_cluster(kernel_model, state, state.labels[0], np.array([1]), 1)
        slots = np.array([state.labels[0], new])
        log_q = clusters.sequential_allocation(kernel_model, state, order, slots, np.array(sides), np.random.default_rng(0))
        placed, expected = [[0], [1]], 0.0
        for h, side in zip(order, sides):
            w = np.array([log_weight(placed[0], h), log_weight(placed[1], h)])
            expected += w[side] - np.logaddexp(w[0], w[1])
            placed[side].append(int(h))
        assert log_q == pytest.approx(expected, abs=1e-10)
        assert [int(state.labels[h] == slots[1]) for h in order] == list(sides)
        assert_state_matches_labels(kernel_model, state)
        total += np.exp(log_q)
    assert total == pytest.approx(1.0, abs=1e-12)


# --------------------------------------------------------------------------- data far from zero (issue 33)

D_FAR = 3


@functools.lru_cache(maxsize=None)
def far_model(family):
    """A model whose data and location and scale hyperparameters are ``pm.Data`` (set per example), and the compiled
    log density of its observation model alone (``log p(x | z)``)."""
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=N)
        x = pm.Data("x_data", np.zeros((N, D_FAR)))
        mu0 = pm.Data("mu0", np.zeros(D_FAR))
        if family == "normal_gamma":
            b0 = pm.Data("b0", np.ones(D_FAR))
            obs = pmp.NormalGammaMixture("x", partition=z, mu0=mu0, kappa0=0.2, a0=1.5, b0=b0, observed=x)
        else:
            psi0 = pm.Data("Psi0", np.eye(D_FAR))
            obs = pmp.NormalInverseWishartMixture("x", partition=z, mu0=mu0, kappa0=0.3, nu0=5.0, Psi0=psi0, observed=x)
    return model, model.compile_logp(vars=[obs])


@pytest.mark.parametrize("family", ["normal_gamma", "normal_inverse_wishart"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    exponent=st.integers(0, 8),
    sign=st.sampled_from([-1.0, 0.0, 1.0]),
    scale_exponent=st.integers(-8, 2),
    labels=st.lists(st.integers(0, 3), min_size=N, max_size=N),
    seed=st.integers(0, 2**32 - 1),
)
def test_log_likelihood_matches_a_high_precision_reference_at_any_offset_and_scale(
    family, exponent, sign, scale_exponent, labels, seed
):
    """``offset + scale * (cluster centre + N(0, 1))`` with |offset| up to 1e8 and scale down to 1e-8, the prior
    moved alike: the kernels' ``log p(x | z)`` (``make_model`` at the data's mean) and the PyTensor model's agree with
    exact rational statistics to 1e-9 relative."""
    rng = np.random.default_rng(seed)
    offset, scale = sign * 10.0**exponent, 10.0**scale_exponent
    z = canonical_labels(build_state(setup(family, "dp")[1], np.asarray(labels, dtype=np.int64))).astype(np.int32)
    centres = rng.normal(0.0, 3.0, (4, D_FAR))
    x = offset + scale * (centres[z] + rng.normal(0.0, 1.0, (N, D_FAR)))
    mu0 = offset + scale * rng.normal(0.0, 2.0, D_FAR)
    if family == "normal_gamma":
        spread = scale**2 * rng.uniform(0.5, 2.0, D_FAR)
        hyper = dict(mu0=mu0, kappa0=0.2, a0=1.5, b0=spread)
        params = families.pack_params(families.NORMAL_GAMMA, D_FAR, mu0, 0.2, 1.5, spread)
        expected = exact_normal_gamma(x, z, **hyper)
        code, data = families.NORMAL_GAMMA, {"x_data": x, "mu0": mu0, "b0": spread}
    else:
        factor = rng.normal(0.0, 0.3, (D_FAR, D_FAR)) + np.eye(D_FAR)
        psi0 = scale**2 * (factor @ factor.T)
        psi0 = 0.5 * (psi0 + psi0.T)
        params = families.pack_params(families.NORMAL_INVERSE_WISHART, D_FAR, mu0, 0.3, 5.0, psi0)
        expected = exact_normal_inverse_wishart(x, z, mu0=mu0, kappa0=0.3, nu0=5.0, Psi0=psi0)
        code, data = families.NORMAL_INVERSE_WISHART, {"x_data": x, "mu0": mu0, "Psi0": psi0}
    kernel_model = make_model(code, x, params, priors.DP, np.array([1.0]), priors.empty_table())
    assert log_likelihood(kernel_model, build_state(kernel_model, z.astype(np.int64))) == pytest.approx(expected, rel=1e-9)
    model, logp = far_model(family)
    with model:
        pm.set_data(data)
    assert float(logp({"z": z})) == pytest.approx(expected, rel=1e-9)
