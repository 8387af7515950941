"""The Infinite Relational Model: exact log marginal likelihood, gradient, enumeration, draws, validation.

The reference likelihood is computed independently by brute force: a Python
loop over vertex pairs ``i < j`` accumulating edge and pair counts per
unordered pair of cluster labels, then ``scipy.special.betaln``.  Its
derivatives in ``a`` and ``b`` are the analytic digamma sums.
"""

import functools

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import pytest
from scipy.special import betaln, digamma, gammaln, logsumexp

import pymc_partitions as pmp
from exact import exact_posterior, set_partitions
from pymc_partitions.distributions import InfiniteRelationalModel, InfiniteRelationalModelRV
from pymc_partitions.families import INFINITE_RELATIONAL
from pymc_partitions.distributions.mixtures import PartitionMixtureRV, mixture_spec, observed_data

pytestmark = pytest.mark.pytensor_python  # PyTensor without C: conftest.py

# --------------------------------------------------------------------------- references


def _block_tallies(A, z):
    """{(k, l), k <= l: [edges, vertex pairs]} by a loop over vertex pairs i < j."""
    tallies = {}
    for i in range(len(z)):
        for j in range(i + 1, len(z)):
            key = (min(z[i], z[j]), max(z[i], z[j]))
            edges, pairs = tallies.get(key, (0, 0))
            tallies[key] = (edges + A[i, j], pairs + 1)
    return tallies


def ref_irm(A, z, a, b):
    """log p(A | z) = sum over blocks with vertex pairs of log B(a + N+, b + N-) - log B(a, b)."""
    return sum(betaln(a + e, b + p - e) - betaln(a, b) for e, p in _block_tallies(A, z).values())


def ref_irm_grad(A, z, a, b):
    """(d/da, d/db) of :func:`ref_irm`."""
    da = db = 0.0
    for e, p in _block_tallies(A, z).values():
        da += digamma(a + e) - digamma(a + b + p) - digamma(a) + digamma(a + b)
        db += digamma(b + p - e) - digamma(a + b + p) - digamma(b) + digamma(a + b)
    return da, db


def ref_ewens_logp(z, alpha):
    sizes = np.unique(z, return_counts=True)[1]
    n = len(z)
    return len(sizes) * np.log(alpha) + gammaln(alpha) - gammaln(alpha + n) + gammaln(sizes).sum()


def _term(model, rvs):
    """Compiled sum of the log densities of ``rvs`` only, called with a full point."""
    return model.compile_fn(
        model.logp(vars=rvs, sum=True), inputs=model.value_vars, on_unused_input="ignore", point_fn=True
    )


def random_graph(n, density, rng):
    upper = np.triu(rng.random((n, n)) < density, 1)
    return (upper | upper.T).astype(float)


@functools.lru_cache(maxsize=None)
def _compiled(n):
    """logp and its gradient in (a, b), with labels, adjacency and hyperparameters as inputs (one compile per n)."""
    z = pt.vector("z", dtype="int64", shape=(n,))
    A = pt.matrix("A")
    a, b = pt.dscalar("a"), pt.dscalar("b")
    logp = pm.logp(InfiniteRelationalModel.dist(z, a=a, b=b), A)
    return pytensor.function([z, A, a, b], [logp, *pytensor.grad(logp, [a, b])])


def _logp(A, z, a, b):
    return float(_compiled(len(z))(np.asarray(z, dtype="int64"), A, a, b)[0])


def _labels(n, rng):
    """Random labels: k random distinct values in 0..n-1 (gaps, non-canonical order), often singletons."""
    k = int(rng.integers(1, n + 1))
    return rng.choice(rng.choice(n, size=k, replace=False), size=n)


def _canonical(z):
    """Labels 0, 1, ... in order of first appearance (how a partition variable stores z)."""
    _, first, inverse = np.unique(z, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=int)
    rank[np.argsort(first)] = np.arange(len(first))
    return rank[inverse]


# Edges (1-based) 1-2, 1-3, 1-4, 3-4: the 4-vertex network of the ARM paper's exactness check (Sec. 3)
A4 = np.zeros((4, 4))
for _i, _j in [(0, 1), (0, 2), (0, 3), (2, 3)]:
    A4[_i, _j] = A4[_j, _i] = 1.0


# --------------------------------------------------------------------------- log density


def test_hand_computed_values():
    # one cluster: 4 edges among 6 pairs, B(5, 3) / B(1, 1) = 4! 2! / 7! = 1/105
    np.testing.assert_allclose(_logp(A4, [0, 0, 0, 0], 1.0, 1.0), -np.log(105.0), rtol=1e-12)
    # {0,1}, {2,3}: B(2,1) B(2,1) B(3,3) = 1/2 * 1/2 * 1/30
    np.testing.assert_allclose(_logp(A4, [3, 3, 0, 0], 1.0, 1.0), -np.log(120.0), rtol=1e-12)
    # all singletons: six 1-pair blocks, four with an edge: (1/2)^6
    np.testing.assert_allclose(_logp(A4, [0, 1, 2, 3], 1.0, 1.0), 6 * np.log(0.5), rtol=1e-12)
    # a single vertex has no pairs: log p = 0 exactly
    assert _logp(np.zeros((1, 1)), [0], 2.0, 3.0) == 0.0


@pytest.mark.parametrize("seed", range(6))
def test_logp_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 13))
    A = random_graph(n, rng.uniform(0.1, 0.8), rng)
    a, b = rng.uniform(0.2, 3.0, size=2)
    for z in (_labels(n, rng), _labels(n, rng), np.zeros(n, int), np.arange(n)[::-1], np.full(n, n - 1)):
        logp, da, db = _compiled(n)(z.astype("int64"), A, a, b)
        np.testing.assert_allclose(logp, ref_irm(A, z, a, b), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose([da, db], ref_irm_grad(A, z, a, b), rtol=1e-8, atol=1e-10)


def test_non_canonical_labels_and_singletons():
    rng = np.random.default_rng(11)
    A = random_graph(7, 0.5, rng)
    z = np.array([5, 5, 0, 6, 0, 2, 5])  # clusters {0,1,6}, {2,4}, singletons {3}, {5}
    expected = ref_irm(A, z, 0.7, 1.9)
    np.testing.assert_allclose(_logp(A, z, 0.7, 1.9), expected, rtol=1e-12)
    relabel = rng.permutation(7)  # a bijection of labels: the same partition
    np.testing.assert_allclose(_logp(A, relabel[z], 0.7, 1.9), expected, rtol=1e-12)
    canonical = np.unique(z, return_inverse=True)[1]
    np.testing.assert_allclose(_logp(A, canonical, 0.7, 1.9), expected, rtol=1e-12)


def test_permuting_vertices_and_labels_together():
    rng = np.random.default_rng(12)
    A, z = random_graph(9, 0.4, rng), rng.integers(0, 9, size=9)
    perm = rng.permutation(9)
    np.testing.assert_allclose(_logp(A[np.ix_(perm, perm)], z[perm], 1.3, 0.6), _logp(A, z, 1.3, 0.6), rtol=1e-12)


def test_model_logp_with_constant_and_random_hyperparameters():
    rng = np.random.default_rng(13)
    n = 8
    A = random_graph(n, 0.35, rng)
    with pm.Model() as model:
        a = pm.Gamma("a", 2.0, 2.0)
        b = pm.Gamma("b", 2.0, 1.0)
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=n)
        x = InfiniteRelationalModel("x", partition=z, a=a, b=b, observed=A)
        y = InfiniteRelationalModel("y", partition=z, a=0.8, b=2.5, observed=A)
    obs_x, obs_y = _term(model, [x]), _term(model, [y])
    prior, total = _term(model, [model["a"], model["b"], z]), model.compile_logp()
    for _ in range(5):
        labels = _canonical(_labels(n, rng))
        point = {"z": labels.astype("int32"), "a_log__": rng.normal(), "b_log__": rng.normal()}
        a_val, b_val = np.exp(point["a_log__"]), np.exp(point["b_log__"])
        np.testing.assert_allclose(obs_x(point), ref_irm(A, labels, a_val, b_val), rtol=1e-10)
        np.testing.assert_allclose(obs_y(point), ref_irm(A, labels, 0.8, 2.5), rtol=1e-10)
        np.testing.assert_allclose(total(point) - prior(point), obs_x(point) + obs_y(point), rtol=1e-10)


def test_gradient_matches_finite_differences():
    rng = np.random.default_rng(14)
    A, z = random_graph(10, 0.3, rng), np.array([2, 2, 2, 7, 7, 0, 0, 0, 0, 9])
    with pm.Model() as model:
        a = pm.Gamma("a", 2.0, 2.0)
        b = pm.Gamma("b", 2.0, 1.0)
        InfiniteRelationalModel("x", partition=pt.as_tensor(z), a=a, b=b, observed=A)
    logp, dlogp = model.compile_logp(), model.compile_dlogp()
    point = {"a_log__": np.array(0.3), "b_log__": np.array(-0.4)}
    grad, eps, fd = dlogp(point), 1e-5, []
    for name in point:
        up, down = dict(point), dict(point)
        up[name] = point[name] + eps
        down[name] = point[name] - eps
        fd.append((logp(up) - logp(down)) / (2 * eps))
    assert np.all(np.isfinite(grad))
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("step", ["nuts", "slice"])
def test_pymc_samplers_move_the_hyperparameters(step):
    rng = np.random.default_rng(15)
    A = random_graph(12, 0.3, rng)
    z = np.repeat([0, 1, 2], 4)
    with pm.Model():
        a = pm.Gamma("a", 2.0, 2.0)
        b = pm.Gamma("b", 2.0, 1.0)
        InfiniteRelationalModel("x", partition=z, a=a, b=b, observed=A)
        kwargs = {} if step == "nuts" else {"step": pm.Slice([a, b])}
        idata = pm.sample(
            draws=20, tune=20, chains=1, cores=1, random_seed=1, progressbar=False,
            compute_convergence_checks=False, **kwargs,
        )
    draws = idata.posterior["a"].values.ravel()
    assert draws.shape == (20,) and np.all(draws > 0) and np.unique(draws).size > 1


# --------------------------------------------------------------------------- exact posterior by enumeration


def test_four_vertex_network_exact_posterior():
    """The ARM paper's 4-vertex check: DP(alpha = 1) prior, a = b = 1, all 15 partitions."""
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=4)
        InfiniteRelationalModel("x", partition=z, a=1.0, b=1.0, observed=A4)
    partitions, posterior = exact_posterior(model)
    assert partitions.shape == (15, 4)
    np.testing.assert_allclose(posterior.sum(), 1.0, rtol=1e-12)
    log_joint = np.array([ref_ewens_logp(p, 1.0) + ref_irm(A4, p, 1.0, 1.0) for p in partitions])
    np.testing.assert_allclose(posterior, np.exp(log_joint - logsumexp(log_joint)), rtol=1e-10)
    # unnormalised: the model's joint is the brute force joint, and the prior alone is normalised
    logp = model.compile_logp()
    model_joint = np.array([logp({"z": p}) for p in partitions])
    np.testing.assert_allclose(model_joint, log_joint, rtol=1e-10)
    prior = _term(model, [z])
    np.testing.assert_allclose(np.exp([prior({"z": p}) for p in partitions]).sum(), 1.0, rtol=1e-12)
    # swapping vertices 2 and 3 (0-based) is a graph automorphism: {0,1,3},{2} and {0,1,2},{3} are equally likely
    index = {tuple(p): r for r, p in enumerate(partitions)}
    np.testing.assert_allclose(posterior[index[(0, 0, 1, 0)]], posterior[index[(0, 0, 0, 1)]], rtol=1e-12)


def test_enumeration_matches_brute_force_on_random_graph():
    rng = np.random.default_rng(16)
    A = random_graph(5, 0.5, rng)
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=0.7, n=5)
        InfiniteRelationalModel("x", partition=z, a=0.5, b=2.0, observed=A)
    partitions, posterior = exact_posterior(model)
    assert len(partitions) == 52 and np.array_equal(partitions, set_partitions(5))
    log_joint = np.array([ref_ewens_logp(p, 0.7) + ref_irm(A, p, 0.5, 2.0) for p in partitions])
    np.testing.assert_allclose(posterior, np.exp(log_joint - logsumexp(log_joint)), rtol=1e-10)


# --------------------------------------------------------------------------- draws


def test_prior_predictive_draws_are_networks():
    z = np.array([4, 4, 0, 0, 0, 2, 4])
    rv = InfiniteRelationalModel.dist(z, a=0.5, b=0.5)
    assert rv.type.shape == (7, 7)
    draws = pm.draw(rv, draws=30, random_seed=1)
    assert draws.shape == (30, 7, 7) and draws.dtype == np.float64
    assert set(np.unique(draws)) <= {0.0, 1.0}
    assert np.array_equal(draws, np.swapaxes(draws, 1, 2))
    assert np.all(np.diagonal(draws, axis1=1, axis2=2) == 0)
    with pm.Model():
        zz = pmp.DirichletProcessPartition("z", alpha=1.0, n=6)
        A = random_graph(6, 0.5, np.random.default_rng(0))
        InfiniteRelationalModel("x", partition=zz, a=pm.Gamma("a", 2.0, 2.0), b=1.0, observed=A)
        prior = pm.sample_prior_predictive(draws=10, random_seed=2)
    sims = prior.prior_predictive["x"].values[0]
    assert sims.shape == (10, 6, 6) and np.array_equal(sims, np.swapaxes(sims, 1, 2))
    assert set(np.unique(sims)) <= {0.0, 1.0} and np.all(np.diagonal(sims, axis1=1, axis2=2) == 0)


def test_draws_share_block_probabilities():
    """E[A_ij] = a/(a+b); two pairs in one block share theta: E[A_ij A_kl] = a(a+1)/((a+b)(a+b+1)), else (a/(a+b))^2."""
    a, b, n_draws = 2.0, 3.0, 4000
    z = np.array([0, 0, 0, 1, 1, 1])
    draws = pm.draw(InfiniteRelationalModel.dist(z, a=a, b=b), draws=n_draws, random_seed=3)
    mean, same, other = a / (a + b), a * (a + 1) / ((a + b) * (a + b + 1)), (a / (a + b)) ** 2
    tol = 4 * 0.5 / np.sqrt(n_draws)  # 4 sd of a mean of n_draws 0/1 values
    np.testing.assert_allclose(draws[:, 0, 1].mean(), mean, atol=tol)
    np.testing.assert_allclose(draws[:, 0, 4].mean(), mean, atol=tol)
    np.testing.assert_allclose((draws[:, 0, 1] * draws[:, 1, 2]).mean(), same, atol=tol)  # block (0, 0)
    np.testing.assert_allclose((draws[:, 0, 3] * draws[:, 1, 4]).mean(), same, atol=tol)  # block (0, 1)
    np.testing.assert_allclose((draws[:, 0, 1] * draws[:, 3, 4]).mean(), other, atol=tol)  # blocks (0,0), (1,1)
    np.testing.assert_allclose((draws[:, 0, 1] * draws[:, 0, 3]).mean(), other, atol=tol)  # blocks (0,0), (0,1)


# --------------------------------------------------------------------------- what step methods read


def test_spec_and_observed_data():
    n = 6
    A = random_graph(n, 0.5, np.random.default_rng(17))
    with pm.Model() as model:
        a = pm.Gamma("a", 2.0, 2.0)
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=n)
        x = InfiniteRelationalModel("x", partition=z, a=a, b=1.5, observed=A.astype(np.int8))
        data = pm.Data("A", A)
        y = InfiniteRelationalModel("y", partition=z, observed=data)
    spec = mixture_spec(x)
    assert spec.family == INFINITE_RELATIONAL == 5 and spec.d == n and spec.partition is z
    assert len(spec.hypers) == 2 and spec.hypers[0] is a
    assert all(h.type.ndim == 0 and h.dtype == "float64" for h in spec.hypers)
    assert float(spec.hypers[1].eval()) == 1.5
    got = observed_data(model, x)
    assert got.shape == (n, n) and got.dtype == np.float64 and np.array_equal(got, A)
    np.testing.assert_array_equal(observed_data(model, y), A)
    assert mixture_spec(y).d == n and [float(h.eval()) for h in mixture_spec(y).hypers] == [1.0, 1.0]
    labels = np.array([0, 1, 0, 2, 1, 0])
    point = {"z": labels.astype("int32"), "a_log__": 0.0}
    np.testing.assert_allclose(_term(model, [y])(point), ref_irm(A, labels, 1.0, 1.0), rtol=1e-12)
    op = x.owner.op
    assert isinstance(op, InfiniteRelationalModelRV) and isinstance(op, PartitionMixtureRV)
    assert op.family == INFINITE_RELATIONAL and [h.name for h in op.spec.hypers] == ["a", "b"]
    assert pmp.InfiniteRelationalModel is InfiniteRelationalModel and "InfiniteRelationalModel" in pmp.__all__


def test_support_point_is_a_valid_network():
    with pm.Model() as model:
        InfiniteRelationalModel("x", partition=np.array([0, 0, 1]), observed=np.zeros((3, 3)))
    from pymc.distributions.distribution import support_point

    value = support_point(model["x"]).eval()
    assert value.shape == (3, 3) and np.all(value == 0)


# --------------------------------------------------------------------------- bad input


def _build(A, z=None, **hypers):
    z = np.zeros(len(A), dtype=int) if z is None else z
    with pm.Model():
        return InfiniteRelationalModel("x", partition=z, observed=A, **hypers)


ASYM = A4.copy()
ASYM[1, 3] = 1.0
LOOP = A4.copy()
LOOP[2, 2] = 1.0
WEIGHTED = 2.0 * A4
NAN = A4.copy()
NAN[0, 1] = NAN[1, 0] = np.nan


@pytest.mark.parametrize(
    "A, z, hypers, match",
    [
        (None, np.zeros(4, int), {}, "observed"),
        (np.zeros((4, 3)), np.zeros(4, int), {}, "observed.*square"),
        (np.zeros(4), np.zeros(4, int), {}, "observed.*square"),
        (np.zeros((2, 2, 2)), np.zeros(2, int), {}, "observed.*square"),
        (ASYM, None, {}, "observed.*symmetric"),
        (LOOP, None, {}, "observed.*diagonal"),
        (WEIGHTED, None, {}, "observed.*0 and 1"),
        (A4 - 0.5 * np.eye(4), None, {}, "observed.*0 and 1"),
        (NAN, None, {}, "observed.*NaN"),
        (A4, np.zeros(5, int), {}, "partition.*observed"),
        (A4, np.zeros(3, int), {}, "partition.*observed"),
        (A4, None, dict(a=0.0), "a must be > 0"),
        (A4, None, dict(a=-1.0), "a must be > 0"),
        (A4, None, dict(b=0.0), "b must be > 0"),
        (A4, None, dict(b=np.inf), "b must be finite"),
        (A4, None, dict(a=[1.0, 2.0]), "a must have at most 0"),
    ],
)
def test_bad_input_raises_value_error(A, z, hypers, match):
    with pytest.raises(ValueError, match=match):
        _build(A, z, **hypers)


def test_bad_input_types_and_symbolic_values():
    with pytest.raises(TypeError, match="observed"):
        _build(pt.matrix("A"), np.zeros(4, int))
    with pytest.raises(TypeError, match="partition"):
        _build(A4, np.zeros(4))
    with pytest.raises(ValueError, match="partition.*observed"):
        with pm.Model():
            z = pmp.DirichletProcessPartition("z", alpha=1.0, n=5)
            InfiniteRelationalModel("x", partition=z, observed=A4)
    with pytest.raises(ValueError, match="observed.*symmetric"):
        with pm.Model():
            InfiniteRelationalModel("x", partition=np.zeros(4, int), observed=pm.Data("A", ASYM))
    with pytest.raises(ValueError, match="a must have at most 0"):
        with pm.Model():
            InfiniteRelationalModel("x", partition=np.zeros(4, int), a=pm.Gamma("a", 1, 1, shape=2), observed=A4)


def test_dist_needs_the_number_of_vertices():
    with pytest.raises(ValueError, match="n"):
        InfiniteRelationalModel.dist(pt.vector("z", dtype="int64"))
    rv = InfiniteRelationalModel.dist(pt.vector("z", dtype="int64"), shape=(5, 5))
    assert mixture_spec(rv).d == 5
    with pytest.raises(ValueError, match="shape"):
        InfiniteRelationalModel.dist(np.zeros(4, int), shape=(4, 5))
    with pytest.raises(ValueError, match="partition"):
        InfiniteRelationalModel.dist(np.zeros(4, int), d=5)
    assert InfiniteRelationalModel.dist(np.zeros(4, int), d=4).type.shape == (4, 4)
