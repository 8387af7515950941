"""ARM's proposal is Algorithm 3 of the paper as written: every construction path enumerated.

The enumeration tests (``test_arm_exactness.py``, ``test_irm.py``) show that
the ARM kernels leave the posterior invariant; they would also pass for an
exact kernel that proposes differently from the paper (fewer candidates, a
different order, a stricter eq. (17)), which would change the acceptance
rates the benchmarks compare with the paper.  This test pins the proposal
itself.  A plain-Python reading of Algorithms 2-3 (``papers/000_...``,
Sec. 2.1-2.4), written from the paper and not from ``kernels/arm.py``,
follows *every* branch of one construction: the set moves of the blocks of
``c = za ∨ zb ∨ z`` (size descending, then earmark rank), then each item in
rank order except ``i``, ``j`` and the earmarks: an unrestricted move for the
items of ``z_i ∪ z_j``, "stay or join the block(s) of i/j" for the others,
unless eq. (17) holds them.  Each branch has probability ``π_k ∝ q(z^(k))``
(eq. (5)), ``q`` the collapsed posterior (CRP × marginal likelihood) of the
items placed so far.  For every start ``z``, background ``(i, j, za, zb)``,
ranking and variant:

* each reachable ``z*`` is reached by exactly one path (Sec. 2.3: the
  construction is unique, so ``T(z*|z)`` is the product of its choices);
* the kernel's forced construction towards every one of the Bell(n)
  partitions gives the enumerated probability, and fails for the others;
* sampled constructions return the enumerated probability of what they
  sampled, at the enumerated frequencies.

``variant="arm-past"`` (not in the paper; ``docs/exactness.md``) has its own
plain-Python reading, :func:`enumerate_past_construction`.  Its backgrounds
are drawn without a current state, and every start ``z`` and target ``z*``
is checked under the same background, so ``T(z*|z)`` and ``T(z|z*)`` are
both compared with the enumeration.
"""

import itertools
import math
import zlib

import numpy as np
import pymc as pm
import pytest
from exact import set_partitions, total_variation, tv_tolerance
from scipy.special import betaln, gammaln, logsumexp
from test_exactness import DATA, add_family, add_prior
from test_irm import NETWORK, network_model

import pymc_partitions as pmp
from pymc_partitions.kernels import arm
from pymc_partitions.state import build_state, canonical_labels, copy_state

ALGORITHM_3 = ["arm", "sarm", "srm"]


class MixtureTarget:
    """log q of a partial partition: DP(alpha) EPPF and Beta(a, b)-Bernoulli marginals of the placed items."""

    def __init__(self, x, alpha, a, b):
        self.x, self.alpha, self.a, self.b = x, alpha, a, b

    def __call__(self, clusters):
        total = 0.0
        for block in clusters:
            rows = self.x[sorted(block)]
            ones = rows.sum(axis=0)
            total += math.log(self.alpha) + gammaln(len(block))
            total += float(np.sum(betaln(self.a + ones, self.b + len(block) - ones) - betaln(self.a, self.b)))
        return total


class RelationalTarget:
    """log q of a partial partition: DP(alpha) EPPF and the IRM likelihood (Sec. 3.2) among the placed items."""

    def __init__(self, adjacency, alpha, a, b):
        self.adjacency, self.alpha, self.a, self.b = adjacency, alpha, a, b

    def __call__(self, clusters):
        blocks = [sorted(block) for block in clusters]
        total = sum(math.log(self.alpha) + gammaln(len(block)) for block in blocks)
        for p, q in itertools.combinations_with_replacement(range(len(blocks)), 2):
            if p == q:
                links = self.adjacency[np.ix_(blocks[p], blocks[p])].sum() / 2
                pairs = len(blocks[p]) * (len(blocks[p]) - 1) / 2
            else:
                links = self.adjacency[np.ix_(blocks[p], blocks[q])].sum()
                pairs = len(blocks[p]) * len(blocks[q])
            total += betaln(self.a + links, self.b + pairs - links) - betaln(self.a, self.b)
        return total


def canonical(clusters, n):
    labels = np.empty(n, dtype=np.int64)
    for label, block in enumerate(clusters):
        labels[list(block)] = label
    return tuple(canonical_labels_of(labels))


def canonical_labels_of(labels):
    first = {}
    return [first.setdefault(v, len(first)) for v in labels]


def set_move(clusters, members, candidates, log_q):
    """Each way of putting ``members`` into a candidate (an index into ``clusters``, or None: a new cluster),
    with its log probability ``log π_k``, ``π_k ∝ q(z^(k))`` (eq. (5))."""
    options = []
    for candidate in candidates:
        grown = list(clusters)
        if candidate is None:
            grown.append(frozenset(members))
        else:
            grown[candidate] = grown[candidate] | members
        options.append(grown)
    log_weights = np.array([log_q(option) for option in options])
    return zip(options, log_weights - logsumexp(log_weights))


def everywhere(clusters):
    """The unrestricted candidates: every cluster and a new one."""
    return list(range(len(clusters))) + [None]


def record(result, clusters, log_prob):
    """Count one path ending at ``clusters`` in ``result`` ({canonical z*: [probability, number of paths]})."""
    entry = result.setdefault(canonical(clusters, sum(len(block) for block in clusters)), [0.0, 0])
    entry[0] += math.exp(log_prob)
    entry[1] += 1


def enumerate_construction(z, i, j, za, zb, order, variant, log_q):
    """Every path of Algorithm 3 (``arm``, ``sarm``) or 2 (``srm``), items ranked by ``order``.

    Returns {canonical z*: [probability, number of paths]}.
    """
    n = len(z)
    rank = {h: position for position, h in enumerate(order)}
    inside = {h for h in range(n) if z[h] in (z[i], z[j])}
    split = z[i] == z[j]
    key = {h: (za[h], zb[h], z[h]) for h in inside}
    if variant == "srm":
        c_i, c_j = {i}, {j}
    else:
        c_i = {h for h in inside if key[h] == key[i]}
        c_j = {h for h in inside if key[h] == key[j]}
    blocks = []
    if variant == "arm":
        groups = {}
        for h in sorted(inside - c_i - c_j):
            groups.setdefault(key[h], set()).add(h)
        blocks = sorted(groups.values(), key=lambda block: (-len(block), min(rank[h] for h in block)))
    earmarks = {min(block, key=lambda h: rank[h]) for block in blocks}
    items = sorted((h for h in range(n) if h not in (i, j) and h not in earmarks), key=lambda h: rank[h])
    steps = [("set", frozenset(block)) for block in blocks] + [("item", h) for h in items]

    outside_labels = sorted({z[h] for h in range(n) if h not in inside})
    start = [frozenset(h for h in range(n) if z[h] == label) for label in outside_labels]
    start += [frozenset(c_i), frozenset(c_j)] if split else [frozenset(c_i | c_j)]
    original = {h: frozenset(g for g in range(n) if z[g] == z[h]) for h in range(n)}
    result = {}

    def branch(clusters, members, candidates, step, log_prob):
        for option, lp in set_move(clusters, members, candidates, log_q):
            walk(option, step + 1, log_prob + lp)

    def walk(clusters, step, log_prob):
        if step == len(steps):
            record(result, clusters, log_prob)
            return
        kind, what = steps[step]
        if kind == "set":  # lines 6-8: an unrestricted move of the whole block
            branch(clusters, what, everywhere(clusters), step, log_prob)
            return
        h = what
        home = next((c for c, block in enumerate(clusters) if h in block), None)
        if h not in inside and clusters[home] & original[h] == {h} and len(clusters[home]) >= 2:
            walk(clusters, step + 1, log_prob)  # eq. (17): the last original member stays
            return
        clusters = list(clusters)
        stay = home
        if home is not None:
            clusters[home] = clusters[home] - {h}
            if not clusters[home]:
                del clusters[home]
                stay = None  # h was alone: staying is a new cluster
        if h in inside:  # lines 10-11: an unrestricted Gibbs move
            candidates = everywhere(clusters)
        else:  # line 16: stay, or join the block(s) of i and j
            with_i = next(c for c, block in enumerate(clusters) if i in block)
            with_j = next(c for c, block in enumerate(clusters) if j in block)
            candidates = ([with_i, with_j] if split else [with_i]) + [stay]
        branch(clusters, frozenset({h}), candidates, step, log_prob)

    walk(start, 0, 0.0)
    return result



def enumerate_past_construction(z, i, j, za, zb, order, log_q):
    """Every path of ``arm-past`` (``kernels/arm.py``), items ranked by ``order``.

    The inside set is ``U = za_i``; every other item keeps its cluster.  The
    blocks of ``za ∨ zb`` on ``U`` are placed by set moves: ``i``'s block
    (anywhere), then ``j``'s (into ``i``'s cluster for a merge, anywhere else
    for a split), then the others (size descending, then lowest rank); then
    each item of ``U`` other than ``i``, ``j`` and the blocks' lowest-ranked
    members, in rank order, is taken out and put anywhere.  Returns
    {canonical z*: [probability, number of paths]}.
    """
    n = len(z)
    rank = {h: position for position, h in enumerate(order)}
    inside = {h for h in range(n) if za[h] == za[i]}
    split = z[i] == z[j]
    groups = {}
    for h in sorted(inside):
        groups.setdefault((za[h], zb[h]), set()).add(h)
    block_i, block_j = groups.pop((za[i], zb[i])), groups.pop((za[j], zb[j]))
    blocks = sorted(groups.values(), key=lambda block: (-len(block), min(rank[h] for h in block)))
    earmarks = {i, j} | {min(block, key=lambda h: rank[h]) for block in blocks}
    steps = [("i", frozenset(block_i)), ("j", frozenset(block_j))] + [("set", frozenset(block)) for block in blocks]
    steps += [("item", h) for h in sorted(inside - earmarks, key=lambda h: rank[h])]
    start = [frozenset(h for h in range(n) if z[h] == label and h not in inside) for label in sorted(set(z))]
    result = {}

    def walk(clusters, step, log_prob):
        if step == len(steps):
            record(result, clusters, log_prob)
            return
        kind, what = steps[step]
        if kind == "item":
            home = next(c for c, block in enumerate(clusters) if what in block)
            clusters = [block - {what} if c == home else block for c, block in enumerate(clusters)]
            what = frozenset({what})
        clusters = [block for block in clusters if block]
        candidates = everywhere(clusters)
        if kind == "j":
            with_i = next(c for c, block in enumerate(clusters) if i in block)
            candidates = [c for c in candidates if c != with_i] if split else [with_i]
        for option, lp in set_move(clusters, what, candidates, log_q):
            walk(option, step + 1, log_prob + lp)

    walk(start, 0, 0.0)
    return result

def kernel_model_of(model):
    with model:
        return pmp.GibbsStep(model["z"]).kernel_model(model.initial_point())


def mixture_case():
    with pm.Model() as model:
        z = add_prior("dp")
        add_family("beta_bernoulli", z)
    return kernel_model_of(model), MixtureTarget(DATA["beta_bernoulli"], 1.3, 0.7, 1.3)


def network_case():
    return kernel_model_of(network_model()), RelationalTarget(NETWORK, 1.0, 1.0, 1.0)


def background(partitions, rng):
    """``(i, j, za, zb, order)``: random past states ``za != zb``, a pair they disagree on (``za_i = za_j``), a ranking (Sec. 2.4)."""
    n = partitions.shape[1]
    while True:
        za, zb = partitions[rng.choice(len(partitions), 2, replace=False)]
        pairs = [(a, b) for a in range(n) for b in range(n) if a != b and (za[a] == za[b]) != (zb[a] == zb[b])]
        if pairs:
            break
    i, j = pairs[rng.integers(len(pairs))]
    if za[i] != za[j]:
        za, zb = zb, za
    return i, j, za, zb, rng.permutation(n).astype(np.int64)


def backgrounds(partitions, n_per_start, rng):
    """``(z, i, j, za, zb, order)``: every start ``z``, each with ``n_per_start`` random backgrounds."""
    for z in partitions:
        for _ in range(n_per_start):
            yield (z.astype(np.int64), *background(partitions, rng))


def enumerate_any(variant, z, i, j, za, zb, order, log_q):
    """:func:`enumerate_past_construction` for ``arm-past``, else :func:`enumerate_construction`."""
    if variant == "arm-past":
        return enumerate_past_construction(z, i, j, za, zb, order, log_q)
    return enumerate_construction(z, i, j, za, zb, order, variant, log_q)


def kernel_forced_log_probability(kernel_model, z, i, j, za, zb, order, variant, target):
    state = build_state(kernel_model, z)
    _, log_prob, reached = arm.reconfigure(
        kernel_model, copy_state(state), i, j, za, zb, order, arm.VARIANTS[variant], target.astype(np.int64),
        np.random.default_rng(0),
    )
    return log_prob, reached


@pytest.mark.parametrize("case", [mixture_case, network_case], ids=["beta_bernoulli", "infinite_relational"])
@pytest.mark.parametrize("variant", ALGORITHM_3)
def test_forced_construction_matches_every_enumerated_path(case, variant):
    kernel_model, log_q = case()
    n = kernel_model.data.shape[0]
    partitions = set_partitions(n)
    rng = np.random.default_rng(zlib.crc32(f"{case.__name__}-{variant}".encode()))
    n_reachable = []
    for z, i, j, za, zb, order in backgrounds(partitions, 2, rng):
        paths = enumerate_construction(list(z), i, j, list(za), list(zb), list(order), variant, log_q)
        assert sum(p for p, _ in paths.values()) == pytest.approx(1.0, abs=1e-12)
        assert all(count == 1 for _, count in paths.values()), "a proposal reached by two paths (Sec. 2.3)"
        for target in partitions:
            log_prob, reached = kernel_forced_log_probability(kernel_model, z, i, j, za, zb, order, variant, target)
            expected = paths.get(tuple(int(v) for v in target))
            if expected is None:
                assert not reached, f"kernel reaches {target}, which Algorithm 3 cannot"
            else:
                assert reached, f"kernel cannot reach {target} (enumerated probability {expected[0]:.3g})"
                assert log_prob == pytest.approx(math.log(expected[0]), abs=1e-9)
        n_reachable.append(len(paths))
    assert max(n_reachable) >= 5, "the backgrounds should include constructions with many outcomes"


@pytest.mark.parametrize("case", [mixture_case, network_case], ids=["beta_bernoulli", "infinite_relational"])
@pytest.mark.parametrize("variant", ["arm", "arm-past"])
def test_sampled_construction_frequencies(case, variant):
    """Sampled constructions: each returns its enumerated log probability; frequencies within the TV bound."""
    kernel_model, log_q = case()
    n = kernel_model.data.shape[0]
    partitions = set_partitions(n)
    rng = np.random.default_rng(5)
    setups = list(backgrounds(partitions, 1, rng))
    enumerated = [enumerate_any(variant, list(z), i, j, list(za), list(zb), list(order), log_q) for z, i, j, za, zb, order in setups]
    widest = max(range(len(setups)), key=lambda s: len(enumerated[s]))
    (z, i, j, za, zb, order), paths = setups[widest], enumerated[widest]
    assert len(paths) >= 5, "a construction with several outcomes"
    keys = list(paths)
    exact = np.array([paths[k][0] for k in keys])
    draws = 4000
    counts = np.zeros(len(keys))
    sampler_rng = np.random.default_rng(11)
    state = build_state(kernel_model, z)
    for _ in range(draws):
        proposal, log_prob, _ = arm.reconfigure(
            kernel_model, copy_state(state), i, j, za, zb, order, arm.VARIANTS[variant], state.labels[:0], sampler_rng
        )
        k = keys.index(tuple(int(v) for v in canonical_labels(proposal)))
        assert log_prob == pytest.approx(math.log(exact[k]), abs=1e-9)
        counts[k] += 1
    assert total_variation(counts / draws, exact) < tv_tolerance(exact, draws)


@pytest.mark.parametrize("case", [mixture_case, network_case], ids=["beta_bernoulli", "infinite_relational"])
def test_past_construction_matches_every_enumerated_path_both_directions(case):
    """``arm-past``: for backgrounds drawn without a current state, every start and every target.

    Each outcome has one path, and the kernel's forced construction gives its
    enumerated probability (or fails where there is none).  Because the
    inside set and the blocks depend on the background alone, ``z*`` is
    reachable from ``z`` exactly when ``z`` is reachable from ``z*``, so the
    Metropolis-Hastings ratio never meets a one-way move; the kernel's
    ``T(z|z*)`` is the forced construction from ``z*``, checked here as a
    start in its own right.
    """
    kernel_model, log_q = case()
    n = kernel_model.data.shape[0]
    partitions = set_partitions(n)
    rng = np.random.default_rng(zlib.crc32(f"past-{case.__name__}".encode()))
    # all items inside, both leading blocks of two (their second members move again after them),
    # and two random backgrounds
    widest = (0, 1, np.zeros(n, dtype=np.int32), np.array([0, 1, 0, 1, 2][:n], dtype=np.int32), rng.permutation(n))
    n_reachable = []
    for i, j, za, zb, order in [widest, background(partitions, rng), background(partitions, rng)]:
        paths = {
            tuple(int(v) for v in z): enumerate_past_construction(list(z), i, j, list(za), list(zb), list(order), log_q)
            for z in partitions
        }
        for z in partitions:
            forward = paths[tuple(int(v) for v in z)]
            assert sum(p for p, _ in forward.values()) == pytest.approx(1.0, abs=1e-12)
            assert all(count == 1 for _, count in forward.values()), "a proposal reached by two paths"
            for target in partitions:
                key = tuple(int(v) for v in target)
                log_prob, reached = kernel_forced_log_probability(
                    kernel_model, z.astype(np.int64), i, j, za, zb, order, "arm-past", target
                )
                if key not in forward:
                    assert not reached, f"kernel reaches {target}, which the construction cannot"
                    continue
                assert reached, f"kernel cannot reach {target} (enumerated probability {forward[key][0]:.3g})"
                assert log_prob == pytest.approx(math.log(forward[key][0]), abs=1e-9)
                assert tuple(int(v) for v in z) in paths[key], "a move without its reverse"
            # the reachable z*: the outside items as in z, i and j in the other relation
            outside = [h for h in range(n) if za[h] != za[i]]
            assert set(forward) == {
                tuple(int(v) for v in t)
                for t in partitions
                if (t[i] == t[j]) != (z[i] == z[j])
                and canonical_labels_of([t[h] for h in outside]) == canonical_labels_of([z[h] for h in outside])
            }
            n_reachable.append(len(forward))
    assert max(n_reachable) >= 10, "the backgrounds should include constructions with many outcomes"
