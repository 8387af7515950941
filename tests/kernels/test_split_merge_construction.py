"""Split-merge's proposal, enumerated: detailed balance of the construction and the kernel's scan probabilities.

The enumeration tests (``test_exactness.py``) check the stationary
distribution of whole chains; an error that global balance hides, or that
needs many steps to show, is caught here instead.  A plain-Python reading of
Jain & Neal (2004; ``papers/000_...``, Algorithm 1), independent of the
kernels and using the PyTensor model's ``compile_logp`` for every weight,
enumerates all the randomness of one proposal -- the pair ``(i, j)``, the
uniform launch sides, ``L`` intermediate restricted scans, the final scan --
and gives the exact transition probabilities ``P(z -> z')`` of one step.

* With the items of ``S`` scanned in increasing order (``clusters.pair_members``)
  ``pi(z) P(z -> z') = pi(z') P(z' -> z)`` holds for every pair of partitions.
* Scanned in the order the clusters' member lists had (what the kernel did
  before, with a freshly built state), detailed balance fails by tens of
  percent: the test has power against the construction error it guards.
* The kernel's restricted scan, forced towards each split from each launch
  state, returns exactly the enumerated probability of that scan.
"""

import itertools
import math

import numpy as np
import pymc as pm
import pytest
from exact import set_partitions

import pymc_partitions as pmp
from pymc_partitions.kernels import clusters
from pymc_partitions.state import build_state, canonical_labels

pytestmark = pytest.mark.pytensor_python  # PyTensor without C: conftest.py

N = 5
X = (np.random.default_rng(3).random((N, 6)) < 0.5).astype(float)


def model_and_logp():
    with pm.Model() as model:
        z = pmp.DirichletProcessPartition("z", alpha=1.0, n=N)
        pmp.BetaBernoulliMixture("x", partition=z, a=0.3, b=0.3, observed=X)
    logp = model.compile_logp()
    cache = {}

    def log_pi(labels):
        key = tuple(canonical(labels))
        if key not in cache:
            cache[key] = float(logp({"z": np.array(key, dtype=np.int32)}))
        return cache[key]

    return model, log_pi


def canonical(labels):
    first = {}
    return [first.setdefault(v, len(first)) for v in labels]


def with_sides(z, i, j, sides):
    """``z`` with ``i`` in component 0, ``j`` in component 1 and each item of ``sides`` in its component."""
    labels = list(z)
    labels[i], labels[j] = -1, -2
    for h, side in sides.items():
        labels[h] = -1 - side
    return labels


def scan(log_pi, z, i, j, sides, order):
    """All outcomes of one restricted scan in ``order`` from ``sides``: a list of (final sides, probability)."""
    outcomes = [(dict(sides), 1.0)]
    for h in order:
        grown = []
        for current, p in outcomes:
            weights = []
            for side in (0, 1):
                trial = dict(current)
                trial[h] = side
                weights.append(log_pi(with_sides(z, i, j, trial)))
            top = max(weights)
            probs = np.exp(np.array(weights) - top)
            probs /= probs.sum()
            for side in (0, 1):
                trial = dict(current)
                trial[h] = side
                grown.append((trial, p * probs[side]))
        outcomes = grown
    return outcomes


def transition_probabilities(log_pi, z, order_rule, n_intermediate):
    """``{z': P(z -> z')}`` for one split-merge proposal from canonical ``z`` (``z' != z``)."""
    moves = {}
    pairs = list(itertools.permutations(range(N), 2))
    for i, j in pairs:
        members = [h for h in range(N) if z[h] in (z[i], z[j]) and h not in (i, j)]
        order = order_rule(z, members, i, j)
        current = {h: 0 if z[h] == z[i] else 1 for h in members}
        for launch in itertools.product((0, 1), repeat=len(members)):
            weight = 0.5 ** len(members) / len(pairs)
            states = [(dict(zip(members, launch)), 1.0)]
            for _ in range(n_intermediate):
                states = [(after, p * q) for before, p in states for after, q in scan(log_pi, z, i, j, before, order)]
            for launch_state, p in states:
                if z[i] == z[j]:  # split: the final scan proposes z'
                    for final, q in scan(log_pi, z, i, j, launch_state, order):
                        proposal = tuple(canonical(with_sides(z, i, j, final)))
                        accept = min(1.0, math.exp(log_pi(proposal) - log_pi(z)) / q)
                        moves[proposal] = moves.get(proposal, 0.0) + weight * p * q * accept
                else:  # merge: q is the probability that the final scan restores the current split
                    q = sum(prob for final, prob in scan(log_pi, z, i, j, launch_state, order) if final == current)
                    merged = tuple(canonical([z[i] if v == z[j] else v for v in z]))
                    accept = min(1.0, math.exp(log_pi(merged) - log_pi(z)) * q)
                    moves[merged] = moves.get(merged, 0.0) + weight * p * accept
    return moves


def increasing_order(z, members, i, j):
    return sorted(members)


def member_list_order(z, members, i, j):
    """The order of the member lists of a freshly built state (each item linked at the front): descending
    within the cluster of ``i``, then within that of ``j``."""
    return [h for h in sorted(members, reverse=True) if z[h] == z[i]] + [h for h in sorted(members, reverse=True) if z[h] == z[j]]


def worst_detailed_balance_error(log_pi, order_rule, n_intermediate):
    partitions = [tuple(int(v) for v in p) for p in set_partitions(N)]
    kernel = {z: transition_probabilities(log_pi, z, order_rule, n_intermediate) for z in partitions}
    worst = 0.0
    for z in partitions:
        for other, forward in kernel[z].items():
            if other != z:
                lhs = math.exp(log_pi(z)) * forward
                rhs = math.exp(log_pi(other)) * kernel[other].get(z, 0.0)
                worst = max(worst, abs(lhs - rhs) / max(lhs, rhs))
    return worst


@pytest.mark.parametrize("n_intermediate", [0, 1])
def test_detailed_balance_needs_an_order_that_depends_on_the_set_only(n_intermediate):
    _, log_pi = model_and_logp()
    assert worst_detailed_balance_error(log_pi, increasing_order, n_intermediate) < 1e-12
    assert worst_detailed_balance_error(log_pi, member_list_order, n_intermediate) > 0.05


def test_kernel_scan_probabilities_match_the_enumeration():
    """From every launch state of every pair, the kernel's forced scan towards each split has the enumerated probability."""
    model, log_pi = model_and_logp()
    with model:
        kernel_model = pmp.GibbsStep(model["z"]).kernel_model(model.initial_point())
    rng = np.random.default_rng(0)
    checked = 0
    for z in set_partitions(N)[::3]:
        z = [int(v) for v in z]
        for i, j in [(0, 4), (3, 1), (2, 0)]:
            members = [h for h in range(N) if z[h] in (z[i], z[j]) and h not in (i, j)]
            if not members:
                continue
            state = build_state(kernel_model, np.array(z, dtype=np.int64))
            assert clusters.pair_members(state, i, j).tolist() == sorted(members)
            if z[i] == z[j]:
                state, slot_j = clusters.split_cluster(kernel_model, state, state.labels[i], np.array([j]), 1)
            slots = np.array([state.labels[i], state.labels[j]])
            for launch in itertools.product((0, 1), repeat=len(members)):
                clusters.place_sides(kernel_model, state, np.array(members), np.array(launch), slots)
                enumerated = {tuple(final[h] for h in members): q for final, q in scan(log_pi, z, i, j, dict(zip(members, launch)), members)}
                for target, q in enumerated.items():
                    clusters.place_sides(kernel_model, state, np.array(members), np.array(launch), slots)
                    log_q = clusters.restricted_scan(kernel_model, state, np.array(members), slots, np.array(target), rng)
                    assert log_q == pytest.approx(math.log(q), abs=1e-10)
                    assert [0 if state.labels[h] == slots[0] else 1 for h in members] == list(target)
                    checked += 1
    assert checked > 100
    # the state is still a valid partition state: rebuilding it from its labels changes nothing
    rebuilt = build_state(kernel_model, canonical_labels(state).astype(np.int64))
    assert sorted(rebuilt.sizes[rebuilt.sizes > 0]) == sorted(state.sizes[state.sizes > 0])
