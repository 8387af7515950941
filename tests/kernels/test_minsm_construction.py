"""MinSM, LSH split-merge and SDDS proposals, enumerated: every probability the kernel claims, and what it draws.

A plain-Python reading of each move (``kernels/minsm.py``'s docstring,
derivations in ``docs/exactness.md``), independent of the kernels, enumerates
all the randomness of one move on n = 5 items: the item ``u`` (or the pair
``i, j``), the table, the item drawn from a bucket, every level interval of a
fresh MinHash cut on every feature (the cut depends on the level only through
which pair of sorted feature values it falls between), every coin of a random
split, every order and choice of a sequential allocation.  The hash tables
are the step's own (a fixed input of the kernel); features, anti-buckets and
weights are recomputed here (weights from ``compile_logp`` and, for the
partial partitions of a sequential allocation, from the families' marginals).

For every start partition (Bell(5) = 52) and every move of every variant:

* the kernel's claimed ``log q(forward)`` of what it proposed equals the
  enumerated probability of that proposal, and its claimed ``log q(reverse)``
  equals the enumerated probability of the paired reverse move (smart split
  <-> dumb merge, dumb split <-> smart merge) from the proposal back;
* on a few start partitions the kernel's proposals, drawn many times, follow
  the enumerated distribution (no-move included) within a TV bound.

Together with the delta tests (the target ratio) this is detailed balance of
every move, move by move.
"""

import functools
import itertools
import math
from collections import defaultdict

import numpy as np
import pymc as pm
import pytest
from exact import set_partitions, total_variation, tv_tolerance
from scipy.special import logsumexp

import pymc_partitions as pmp
from pymc_partitions import families, priors
from pymc_partitions.kernels import minsm
from pymc_partitions.state import build_state, canonical_labels

pytestmark = pytest.mark.pytensor_python  # PyTensor without C: conftest.py

N = 5
RNG = np.random.default_rng(11)
DATA = {
    "normal_gamma": RNG.normal(0.0, 1.5, (N, 2)),
    "beta_bernoulli": (RNG.random((N, 4)) < 0.5).astype(float),
}
# step options that make the tables' buckets populated on 5 items
OPTIONS = {"minsm": {"n_tables": 4}, "lsh": {"n_tables": 3, "n_bits": 2}, "sdds": {}}
CASES = [("minsm", "normal_gamma", "dp"), ("minsm", "beta_bernoulli", "dp"), ("lsh", "normal_gamma", "dp"),
         ("lsh", "beta_bernoulli", "dp"), ("sdds", "normal_gamma", "py"), ("sdds", "beta_bernoulli", "dp")]
REVERSE = {"smart_split": "dumb_merge", "dumb_merge": "smart_split", "dumb_split": "smart_merge", "smart_merge": "dumb_split"}


@functools.lru_cache(maxsize=None)
def setup(variant, family, prior):
    with pm.Model() as model:
        if prior == "dp":
            z = pmp.DirichletProcessPartition("z", alpha=1.1, n=N)
        else:
            z = pmp.PitmanYorPartition("z", alpha=0.8, sigma=0.35, n=N)
        if family == "normal_gamma":
            pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=0.5, a0=2.0, b0=2.0, observed=DATA[family])
        else:
            pmp.BetaBernoulliMixture("x", partition=z, a=0.7, b=1.3, observed=DATA[family])
        step = pmp.MinHashSplitMergeStep(z, variant=variant, **OPTIONS[variant])
    kernel_model = step.kernel_model(model.initial_point())
    sampler = minsm.init(kernel_model, build_state(kernel_model, np.zeros(N, dtype=np.int64)), step.options, None)
    return model, sampler, kernel_model, Reference(model, kernel_model, sampler, family, prior)


def canonical(labels):
    first = {}
    return tuple(first.setdefault(v, len(first)) for v in labels)


def split_of(z, movers):
    return canonical([max(z) + 1 if i in movers else z[i] for i in range(N)])


def merge_of(z, a, b):
    return canonical([a if v == b else v for v in z])


def members(z, label):
    return [i for i in range(N) if z[i] == label]


class Reference:
    """Each move's proposal distribution ``{partition or None (no move): probability}``, by enumeration."""

    def __init__(self, model, kernel_model, sampler, family, prior):
        logp = model.compile_logp()
        self.log_pi = functools.lru_cache(maxsize=None)(lambda z: float(logp({"z": np.array(z, dtype=np.int32)})))
        self.kernel_model = kernel_model
        self.x = kernel_model.data  # DATA[family] relative to the model's origin, the kernels' coordinates
        self.signed = family == "normal_gamma"
        self.hashing = sampler.hashing
        self.sdds_paths = functools.lru_cache(maxsize=None)(self.sdds_paths)
        self.distribution = functools.lru_cache(maxsize=None)(self.distribution)

    # -- features and tables, recomputed
    def features(self):
        if not self.signed:
            return np.maximum(self.x, 0.0)
        sd = self.x.std(axis=0)
        u = (self.x - self.x.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
        return np.concatenate([np.maximum(u, 0.0), np.maximum(-u, 0.0)], axis=1)

    def same_bucket(self, table, u):
        return [v for v in range(N) if v != u and self.hashing.bucket[table, v] == self.hashing.bucket[table, u]]

    def opposite_bucket(self, table, u):
        mask = self.hashing.anti.shape[1] - 1  # 2**bits - 1: bucket ids are the codes
        return [v for v in range(N) if self.hashing.bucket[table, v] == self.hashing.bucket[table, u] ^ mask]

    # -- MinSM / LSH
    def minsm_smart_split(self, z):
        out = defaultdict(float)
        f = self.features()
        for u in range(N):
            cluster = members(z, z[u])
            total = f[cluster].max(axis=0).sum()
            if len(cluster) < 2 or total == 0:
                out[None] += 1 / N
                continue
            for k in range(f.shape[1]):
                levels = sorted({0.0, *f[cluster, k]})
                for low, high in zip(levels[:-1], levels[1:]):  # a level in [low, high) keeps the items with f >= high
                    outside = [i for i in cluster if f[i, k] < high]
                    out[split_of(z, outside) if outside else None] += (high - low) / total / N
        return out

    def lsh_smart_split(self, z):
        out = defaultdict(float)
        n_tables = self.hashing.bucket.shape[0]
        for u, table in itertools.product(range(N), range(n_tables)):
            opposite = self.opposite_bucket(table, u)
            if not opposite:
                out[None] += 1 / (N * n_tables)
            for v in opposite:
                p = 1 / (N * n_tables * len(opposite))
                if z[v] != z[u]:
                    out[None] += p
                    continue
                others = [i for i in members(z, z[u]) if i not in (u, v)]
                for coins in itertools.product((0, 1), repeat=len(others)):
                    out[split_of(z, {v} | {i for i, c in zip(others, coins) if c})] += p / 2 ** len(others)
        return out

    def dumb_merge(self, z):
        labels = sorted(set(z))
        if len(labels) < 2:
            return {None: 1.0}
        pairs = list(itertools.combinations(labels, 2))
        return {merge_of(z, a, b): 1 / len(pairs) for a, b in pairs}

    def table_smart_merge(self, z):
        out = defaultdict(float)
        n_tables = self.hashing.bucket.shape[0]
        for u, table in itertools.product(range(N), range(n_tables)):
            bucket = self.same_bucket(table, u)
            if not bucket:
                out[None] += 1 / (N * n_tables)
            for v in bucket:
                out[None if z[v] == z[u] else merge_of(z, z[u], z[v])] += 1 / (N * n_tables * len(bucket))
        return out

    def dumb_split(self, z):
        out = defaultdict(float)
        labels = sorted(set(z))
        for label in labels:
            cluster = members(z, label)
            for coins in itertools.product((0, 1), repeat=len(cluster)):
                movers = {i for i, c in zip(cluster, coins) if c}
                key = split_of(z, movers) if 0 < len(movers) < len(cluster) else None
                out[key] += 2.0 ** -len(cluster) / len(labels)
        return out

    # -- SDDS
    def log_weight(self, placed, h):
        """log W(m + 1) - log W(m) + log p(x_h | x_placed): placing ``h`` with ``placed`` (families' marginals)."""
        km = self.kernel_model
        return (priors.log_w(km.prior, km.prior_params, len(placed) + 1) - priors.log_w(km.prior, km.prior_params, len(placed))
                + self.log_marginal(placed + [h]) - self.log_marginal(placed))

    def log_marginal(self, items):
        km = self.kernel_model
        stats = np.zeros(families.stat_size(km.family.code, self.x.shape[1]))
        row = np.empty_like(stats)
        for i in items:
            families.item_stats(km.family.code, self.x[i], row)
            stats += row
        return families.log_marginal(km.family.code, stats, km.params)

    def allocations(self, sides, order, p):
        """Every outcome of allocating ``order`` to ``sides`` (two lists) in turn: ``[(side 1 items, probability)]``."""
        if not order:
            return [(set(sides[1]), p)]
        h, rest = order[0], order[1:]
        w = np.array([self.log_weight(sides[0], h), self.log_weight(sides[1], h)])
        probs = np.exp(w - logsumexp(w))
        out = self.allocations([sides[0] + [h], sides[1]], rest, p * probs[0])
        return out + self.allocations([sides[0], sides[1] + [h]], rest, p * probs[1])

    def sdds_paths(self, z):
        """SDDS smart split: ``[(pair and order probability, proposal or None, conditional probability)]``.

        The pair ``i, j`` and the order are auxiliary: the dumb merge that
        reverses the split draws the same pair and order, so the kernel's ratio
        uses the conditional probability of the allocation alone.
        """
        out = []
        for i, j in itertools.permutations(range(N), 2):
            p = 1 / (N * (N - 1))
            if z[i] != z[j]:
                out.append((p, None, 1.0))
                continue
            others = [h for h in members(z, z[i]) if h not in (i, j)]
            orders = list(itertools.permutations(others))
            for order in orders:
                for movers, q in self.allocations([[i], [j]], list(order), 1.0):
                    out.append((p / len(orders), split_of(z, movers), q))
        return out

    def sdds_smart_split(self, z):
        out = defaultdict(float)
        for p, proposal, q in self.sdds_paths(z):
            out[proposal] += p * q
        return out

    def sdds_dumb_merge(self, z):
        out = defaultdict(float)
        for i, j in itertools.permutations(range(N), 2):
            out[None if z[i] == z[j] else merge_of(z, z[i], z[j])] += 1 / (N * (N - 1))
        return out

    def sdds_smart_merge(self, z):
        labels = sorted(set(z))
        if len(labels) < 2:
            return {None: 1.0}
        out = defaultdict(float)
        for u in range(N):
            partners = [c for c in labels if c != z[u]]
            w = np.array([self.log_pi(merge_of(z, z[u], c)) for c in partners])
            for c, p in zip(partners, np.exp(w - logsumexp(w))):
                out[merge_of(z, z[u], c)] += p / N
        return out

    def distribution(self, variant, move, z):
        if variant == "sdds" and move in ("smart_split", "dumb_merge", "smart_merge"):
            return getattr(self, f"sdds_{move}")(z)
        if move == "smart_split":
            return getattr(self, f"{variant}_smart_split")(z)
        if move == "smart_merge":
            return self.table_smart_merge(z)
        return getattr(self, move)(z)


def kernel_proposal(kernel_model, sampler, move, z, rng):
    """``(proposed partition or None, claimed log q forward, claimed log q reverse)`` from the kernel's ``move``."""
    state = build_state(kernel_model, np.array(z, dtype=np.int64))
    kind = getattr(minsm, move.upper())
    state, found, a, b, log_forward, log_reverse = minsm.move(kernel_model, state, sampler, kind, rng)
    if not found:
        return None, log_forward, log_reverse
    if move in ("smart_split", "dumb_split"):
        return tuple(canonical_labels(state)), log_forward, log_reverse
    labels = state.labels.copy()
    labels[labels == b] = a
    return canonical(labels), log_forward, log_reverse


def allocation_log_probs(ref, split, merged):
    """The conditional log probabilities of SDDS's allocation paths from ``merged`` that produce ``split``."""
    return [math.log(q) for _, proposal, q in ref.sdds_paths(merged) if proposal == split]


def check_claims(ref, variant, move, z, proposal, log_forward, log_reverse):
    if variant == "sdds" and move in ("smart_split", "dumb_merge"):
        # the pair and the order are auxiliary; the claim is one path's conditional probability
        split, merged, claimed = (proposal, z, log_forward) if move == "smart_split" else (z, proposal, log_reverse)
        assert (log_reverse if move == "smart_split" else log_forward) == 0.0
        assert any(abs(claimed - lq) < 1e-9 for lq in allocation_log_probs(ref, split, merged)), f"{move} {z} -> {proposal}"
        return
    assert log_forward == pytest.approx(math.log(ref.distribution(variant, move, z)[proposal]), abs=1e-9)
    back = ref.distribution(variant, REVERSE[move], proposal).get(z, 0.0)
    assert log_reverse == pytest.approx(math.log(back) if back > 0 else -np.inf, abs=1e-9)


@pytest.mark.parametrize("variant, family, prior", CASES)
@pytest.mark.parametrize("move", list(REVERSE))
def test_claimed_probabilities_equal_enumeration(variant, family, prior, move):
    """For every start partition, the forward and reverse log proposal probabilities the kernel claims are exact."""
    model, sampler, kernel_model, ref = setup(variant, family, prior)
    rng = np.random.default_rng(1)
    checked = 0
    for z in map(tuple, set_partitions(N)):
        forward = ref.distribution(variant, move, z)
        for _ in range(10):
            proposal, log_forward, log_reverse = kernel_proposal(kernel_model, sampler, move, z, rng)
            if proposal is None:
                continue
            assert forward.get(proposal, 0.0) > 0, f"{move} from {z} proposed {proposal}, impossible by enumeration"
            check_claims(ref, variant, move, z, proposal, log_forward, log_reverse)
            checked += 1
    assert checked > 30, f"only {checked} proposals made: the test has no power"


def sdds_split_merge_transitions(ref, z):
    """One step of SDDS's smart-split/dumb-merge pair from ``z`` (split or merge, each with probability 1/2), enumerated."""
    out = defaultdict(float)
    for p, proposal, q in ref.sdds_paths(z):
        if proposal is not None:
            accept = min(1.0, math.exp(ref.log_pi(proposal) - ref.log_pi(z)) / q)
            out[proposal] += 0.5 * p * q * accept
    for i, j in itertools.permutations(range(N), 2):
        if z[i] != z[j]:
            merged = merge_of(z, z[i], z[j])
            others = [h for h in members(merged, merged[i]) if h not in (i, j)]
            orders = list(itertools.permutations(others))
            for order in orders:  # the forced allocation back to z along this order
                outcomes = {frozenset(side): qq for side, qq in ref.allocations([[i], [j]], list(order), 1.0)}
                q = outcomes[frozenset(h for h in members(z, z[j]))]
                accept = min(1.0, math.exp(ref.log_pi(merged) - ref.log_pi(z)) * q)
                out[merged] += 0.5 / (N * (N - 1)) / len(orders) * accept
    return out


def test_sdds_smart_split_dumb_merge_detailed_balance():
    """With the pair and order auxiliary, SDDS's split/merge pair satisfies detailed balance, enumerated exactly."""
    model, sampler, kernel_model, ref = setup("sdds", "normal_gamma", "py")
    partitions = [tuple(z) for z in set_partitions(N)]
    moves = {z: sdds_split_merge_transitions(ref, z) for z in partitions}
    checked = 0
    for z in partitions:
        for y, p in moves[z].items():
            back = moves[y].get(z, 0.0)
            assert math.exp(ref.log_pi(z)) * p == pytest.approx(math.exp(ref.log_pi(y)) * back, rel=1e-9)
            checked += 1
    assert checked > 100


@pytest.mark.parametrize("variant, family, prior", CASES)
def test_kernel_draws_follow_enumeration(variant, family, prior):
    """Each move's proposals, drawn 3000 times from three start partitions, follow the enumerated distribution."""
    model, sampler, kernel_model, ref = setup(variant, family, prior)
    rng = np.random.default_rng(2)
    draws = 3000
    for z in [(0, 0, 0, 0, 0), (0, 0, 1, 1, 1), (0, 1, 0, 2, 1)]:
        for move in REVERSE:
            exact = ref.distribution(variant, move, z)
            keys = sorted(exact, key=str)
            counts = defaultdict(int)
            for _ in range(draws):
                counts[kernel_proposal(kernel_model, sampler, move, z, rng)[0]] += 1
            assert set(counts) <= set(keys), f"{move} from {z} drew outside the enumerated support"
            p = np.clip([exact[k] for k in keys], 0.0, 1.0)
            freq = np.array([counts[k] for k in keys]) / draws
            assert p.sum() == pytest.approx(1.0)
            assert total_variation(freq, p) < tv_tolerance(p, draws), f"{move} from {z}"
