"""tgMCMC's global moves against a brute-force enumeration of their proposal (n = 5 items).

A plain-Python reading of the global move (Lee & Choi 2015, Sec. 3.2) with
each cluster's tree the subtree a fixed guide tree induces on it, independent
of ``kernels/tgmcmc.py``: it enumerates every random choice of one move from
every partition of 5 items (the first cluster, the merge set ``M``, the split
node drawn by SampleSub, every StocInsert choice) and sums the probabilities of
the choices that lead to each partition, giving the whole proposal matrix
``Q``.  Potentials come from the PyTensor model (``p(X_A)`` up to per-item
factors, which cancel in every ``d``) and plain formulas for ``W`` and ``nu``.
Then

* every merge ``Pi -> Pi*`` the enumeration allows: the kernel's forward
  merge probability equals ``Q[Pi, Pi*]`` and its reverse split probability
  equals ``Q[Pi*, Pi]`` (``-inf`` where the enumeration has no such split);
  every split is the reverse of a merge, so every entry of ``Q`` is checked;
* the kernel's sampled global moves, from every partition: each accepted move
  reports ``log Q[Pi*, Pi] - log Q[Pi, Pi*]`` and the model's log posterior
  change, and the outcomes (staying included) occur at the frequencies of the
  enumerated Metropolis-Hastings transition row.
"""

import functools
import itertools

import numpy as np
import pymc as pm
import pytest
from exact import set_partitions
from scipy.special import gammaln, logsumexp

import pymc_partitions as pmp
from pymc_partitions.kernels import ibhc, tgmcmc
from pymc_partitions.kernels.info import MOVE_MERGE, MOVE_NONE, MOVE_SPLIT
from pymc_partitions.state import build_state, canonical_labels

pytestmark = pytest.mark.pytensor_python  # PyTensor without C: conftest.py

N = 5
DATA = np.random.default_rng(41).normal(0.0, 2.0, (N, 1))
PRIORS = {"dp": (1.3, 0.0), "py": (0.7, 0.35)}
GUIDE_LABELS = [np.array([0, 0, 1, 1, 2]), np.array([0, 1, 0, 2, 1]), np.zeros(N, dtype=np.int64)]


@functools.lru_cache(maxsize=None)
def setup(prior):
    alpha, sigma = PRIORS[prior]
    with pm.Model() as model:
        if prior == "dp":
            z = pmp.DirichletProcessPartition("z", alpha=alpha, n=N)
        else:
            z = pmp.PitmanYorPartition("z", alpha=alpha, sigma=sigma, n=N)
        pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=0.3, a0=2.0, b0=3.0, observed=DATA)
    step = pmp.TreeGuidedStep(model["z"], model=model)
    kernel_model = step.kernel_model(model.initial_point())
    return model, kernel_model


def canonical(blocks):
    z = np.empty(N, dtype=np.int64)
    for label, block in enumerate(sorted(blocks, key=min)):
        z[list(block)] = label
    return tuple(z.tolist())


class Reference:
    """The global move of a tgMCMC step with a fixed guide tree, by enumeration."""

    def __init__(self, model, prior, guide):
        alpha, sigma = PRIORS[prior]
        self.left, self.right, self.root = guide.left.tolist(), guide.right.tolist(), int(guide.root[0])
        k_ref = int(guide.k_ref[0])
        self.log_nu = np.log(alpha) if prior == "dp" else np.log(alpha + k_ref * sigma)
        self.log_w = (lambda m: gammaln(m)) if prior == "dp" else (lambda m: gammaln(m - sigma) - gammaln(1 - sigma))
        loglik = model.compile_logp(vars=[model["x"]], jacobian=False)
        point = model.initial_point()
        singletons = loglik({**point, "z": np.arange(N, dtype=np.int32)})
        self.excess = {}
        for size in range(1, N + 1):
            for block in itertools.combinations(range(N), size):
                z = canonical([frozenset(block)] + [frozenset([i]) for i in range(N) if i not in block])
                self.excess[frozenset(block)] = loglik({**point, "z": np.array(z, dtype=np.int32)}) - singletons
        logp = model.compile_logp(jacobian=False)
        self.partitions = [tuple(p.tolist()) for p in set_partitions(N)]
        self.log_pi = {z: logp({**point, "z": np.array(z, dtype=np.int32)}) for z in self.partitions}

    # trees: an int leaf or a pair (left, right)
    def restrict(self, v, items):
        if self.left[v] < 0:
            return v if v in items else None
        a, b = self.restrict(self.left[v], items), self.restrict(self.right[v], items)
        return b if a is None else a if b is None else (a, b)

    def tree(self, block):
        return self.restrict(self.root, set(block))

    @staticmethod
    def leaves(t):
        return frozenset([t]) if isinstance(t, int) else Reference.leaves(t[0]) | Reference.leaves(t[1])

    def log_h(self, items):
        return self.log_nu + self.log_w(len(items)) + self.excess[frozenset(items)]

    def log_t(self, t):
        if isinstance(t, int):
            return self.log_h([t])
        return np.logaddexp(self.log_h(self.leaves(t)), self.log_t(t[0]) + self.log_t(t[1]))

    def log_d(self, a, b):
        """``d`` of the trees ``a`` and ``b`` joined under a new root."""
        return self.log_t(a) + self.log_t(b) - self.log_h(self.leaves(a) | self.leaves(b))

    def proposals(self, z):
        """``{z*: q(z* | z)}`` for one global move from the canonical labels ``z``."""
        blocks = [frozenset(np.flatnonzero(np.array(z) == k).tolist()) for k in range(max(z) + 1)]
        trees = {b: self.tree(b) for b in blocks}
        out = {}
        k = len(blocks)
        for c in blocks:
            others = [b for b in blocks if b != c]
            p_in = {b: 1.0 / (1.0 + np.exp(self.log_d(trees[c], trees[b]))) for b in others}
            for size in range(len(others) + 1):
                for merged in itertools.combinations(others, size):
                    p = 1.0 / k
                    for b in others:
                        p *= p_in[b] if b in merged else 1.0 - p_in[b]
                    if merged:
                        new = [b for b in blocks if b != c and b not in merged] + [c.union(*merged)]
                        self._add(out, canonical(new), p)
                    elif len(c) == 1:
                        self._add(out, z, p)
                    else:
                        for parts, p_split in self.splits(trees[c]):
                            self._add(out, canonical(others + parts), p * p_split)
        return out

    @staticmethod
    def _add(out, key, p):
        out[key] = out.get(key, 0.0) + p

    def splits(self, t):
        """``[(parts, probability)]``: every SampleSub node and StocInsert path of splitting tree ``t``."""
        internal = []

        def walk(node, path):
            if not isinstance(node, int):
                internal.append((node, path))
                walk(node[0], path + [(node, 1)])
                walk(node[1], path + [(node, 0)])

        walk(t, [])
        log_w = np.array([self._log_node_d(node) for node, _ in internal])
        log_w = np.logaddexp(log_w, log_w.max() + np.log(1e-3))  # eps: 10^-3 of the largest d
        p_node = np.exp(log_w - logsumexp(log_w))
        result = []
        for (node, path), p in zip(internal, p_node):
            atoms = [node[0], node[1]] + [parent[side] for parent, side in reversed(path)]
            for blocks, p_insert in self.insertions([atoms[0], atoms[1]], atoms[2:]):
                result.append(([self.leaves(b) for b in blocks], p * p_insert))
        return result

    def _log_node_d(self, node):
        return self.log_t(node[0]) + self.log_t(node[1]) - self.log_h(self.leaves(node))

    def insertions(self, blocks, atoms):
        """StocInsert of ``atoms`` in turn into the clusters ``blocks`` (trees; a joined atom goes on top)."""
        if not atoms:
            return [(blocks, 1.0)]
        atom, rest = atoms[0], atoms[1:]
        log_w = np.array([-self.log_d(b, atom) for b in blocks] + [0.0])
        p = np.exp(log_w - logsumexp(log_w))
        out = []
        for choice in range(len(blocks) + 1):
            new = blocks + [atom] if choice == len(blocks) else [(b, atom) if q == choice else b for q, b in enumerate(blocks)]
            out += [(final, p[choice] * p_rest) for final, p_rest in self.insertions(new, rest)]
        return out


@functools.lru_cache(maxsize=None)
def reference(prior, guide_index):
    model, kernel_model = setup(prior)
    guide = ibhc.build_guide(kernel_model, GUIDE_LABELS[guide_index], np.random.default_rng(guide_index))
    ref = Reference(model, prior, guide)
    q = {z: ref.proposals(z) for z in ref.partitions}
    return model, kernel_model, guide, ref, q


def nu_of(kernel_model, guide):
    return ibhc.log_nu(kernel_model.prior, kernel_model.prior_params, kernel_model.log_v_table, N, guide.k_ref[0])


CASES = [(prior, g) for prior in PRIORS for g in range(len(GUIDE_LABELS))]


@pytest.mark.parametrize("prior, guide_index", CASES)
def test_enumerated_proposal_is_a_distribution(prior, guide_index):
    *_, q = reference(prior, guide_index)
    for z, row in q.items():
        assert sum(row.values()) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("prior, guide_index", CASES)
def test_kernel_proposal_probabilities_match_enumeration(prior, guide_index):
    """Every merge the enumeration proposes and the split that reverses it."""
    model, kernel_model, guide, ref, q = reference(prior, guide_index)
    nu = nu_of(kernel_model, guide)
    ibhc.refresh_guide(kernel_model, guide, nu)
    checked = impossible = 0
    for z in ref.partitions:
        state = build_state(kernel_model, np.array(z, dtype=np.int64))
        log_t = tgmcmc.cluster_log_t(kernel_model, state, guide, nu)
        k = state.n_clusters[0]
        slots = state.slots[:k]
        slot_of = {label: state.labels[z.index(label)] for label in range(k)}
        for size in range(2, k + 1):
            for labels in itertools.combinations(range(k), size):
                merged = tuple(np.where(np.isin(z, labels), labels[0], z).tolist())
                z_star = canonical([frozenset(np.flatnonzero(np.array(merged) == v).tolist()) for v in set(merged)])
                chosen = np.array([slot_of[v] for v in labels], dtype=np.int64)
                in_b = np.isin(slots, chosen)
                forward = tgmcmc.log_merge_probability(kernel_model, state.stats, state.sizes, log_t, slots.copy(), in_b, nu)
                assert forward == pytest.approx(np.log(q[z][z_star]), abs=1e-9)
                items = np.flatnonzero(np.isin(z, labels)).astype(np.int64)
                tree = ibhc.induced_tree(kernel_model, guide, items, len(items), nu)
                reverse = tgmcmc._log_split_probability(kernel_model, state, tree, chosen, log_t, nu, np.random.default_rng(0))
                if z in q[z_star]:
                    assert reverse == pytest.approx(np.log(q[z_star][z]), abs=1e-9)
                    checked += 1
                else:
                    assert reverse == -np.inf
                    impossible += 1
    n_splits = sum(max(z_star) > max(z) for z, row in q.items() for z_star in row)
    assert checked == n_splits, "every split of the enumeration is the reverse of a checked merge"
    assert checked > 0


@pytest.mark.parametrize("prior, guide_index", [("dp", 0), ("py", 1)])
def test_sampled_moves_match_enumeration(prior, guide_index):
    model, kernel_model, guide, ref, q = reference(prior, guide_index)
    nu = nu_of(kernel_model, guide)
    ibhc.refresh_guide(kernel_model, guide, nu)
    rng = np.random.default_rng(2)
    draws = 1500
    for z in ref.partitions[::4]:
        row = {}
        for z_star, q_forward in q[z].items():
            if z_star == z:
                continue
            q_reverse = q[z_star].get(z, 0.0)
            ratio = np.exp(ref.log_pi[z_star] - ref.log_pi[z]) * q_reverse / q_forward
            row[z_star] = q_forward * min(1.0, ratio)
        row[z] = 1.0 - sum(row.values())
        counts = {}
        for _ in range(draws):
            state = build_state(kernel_model, np.array(z, dtype=np.int64))
            log_t = tgmcmc.cluster_log_t(kernel_model, state, guide, nu)
            state, _, info = tgmcmc.global_move(kernel_model, state, guide, log_t, nu, rng)
            z_new = tuple(canonical_labels(state).tolist())
            counts[z_new] = counts.get(z_new, 0) + 1
            if info.accepted:
                assert z_new != z and info.move in (MOVE_SPLIT, MOVE_MERGE)
                assert info.log_proposal_ratio == pytest.approx(np.log(q[z_new][z]) - np.log(q[z][z_new]), abs=1e-9)
                assert info.log_target_ratio == pytest.approx(ref.log_pi[z_new] - ref.log_pi[z], abs=1e-9)
            else:
                assert z_new == z
                assert info.move in (MOVE_SPLIT, MOVE_MERGE, MOVE_NONE)
        freq = np.array([counts.get(key, 0) for key in row]) / draws
        p = np.array(list(row.values()))
        assert set(counts) <= set(row)
        # TV of a multinomial sample: mean <= sum sqrt(p(1-p)/N)/2, sd <= 1/(2 sqrt(N)) (exact.tv_tolerance)
        tol = 0.5 * np.sqrt(p * (1 - p) / draws).sum() + 4 * 0.5 / np.sqrt(draws)
        assert 0.5 * np.abs(freq - p).sum() < tol
