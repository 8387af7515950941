"""Shared exactness machinery (DESIGN.md §4), independent of the numba kernels.

* ``set_partitions(n)``: every set partition of ``n`` items as canonical label
  vectors (restricted growth strings), Bell(n) rows.
* ``exact_posterior``: normalised posterior over those partitions computed from
  ``model.compile_logp()`` -- the PyTensor model, not the kernels -- optionally
  integrating continuous hyperparameters out numerically on a grid in their
  transformed (unconstrained) space, where ``compile_logp`` includes the Jacobian.
* ``tv_tolerance``: a total-variation bound for pooled sampler frequencies.
* Partition summaries by their definitions, for ``tests/summary``:
  ``make_idata`` and ``step_stats`` (traces), ``canonical_by_definition``,
  ``vi_by_entropies``, ``brute_loss`` (posterior expected VI / Binder loss).
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.special import logsumexp


def set_partitions(n):
    """All set partitions of ``range(n)`` as canonical int32 label vectors, shape (Bell(n), n)."""
    rows = [[0]]
    for _ in range(1, n):
        rows = [r + [c] for r in rows for c in range(max(r) + 2)]
    return np.asarray(rows, dtype=np.int32)


def partition_index(partitions):
    """Map from a canonical label tuple to its row in ``partitions``."""
    return {tuple(p): i for i, p in enumerate(partitions)}


def exact_posterior(model, z_name="z", fixed=None, grids=None):
    """Exact posterior pmf of ``z`` over ``set_partitions(n)``.

    Parameters
    ----------
    model : pm.Model
    fixed : dict
        Values (in the value-variable space) of every other free variable that is
        held fixed.
    grids : dict name -> 1-D array
        Value variables integrated out by the trapezoid rule on the given grid
        (in their transformed space, e.g. ``"alpha_log__"``).
    """
    fixed = dict(fixed or {})
    grids = dict(grids or {})
    logp = model.compile_logp()
    n = model[z_name].type.shape[0]
    partitions = set_partitions(n)
    names = list(grids)
    log_mass = np.empty(len(partitions))
    for row, z in enumerate(partitions):
        if not names:
            log_mass[row] = logp({**fixed, z_name: z})
            continue
        values = []
        for combo in itertools.product(*(grids[name] for name in names)):
            values.append(logp({**fixed, z_name: z, **dict(zip(names, combo))}))
        shape = tuple(len(grids[name]) for name in names)
        log_mass[row] = _log_trapezoid(np.asarray(values).reshape(shape), [grids[name] for name in names])
    return partitions, np.exp(log_mass - logsumexp(log_mass))


def _log_trapezoid(log_values, axes):
    """log of the trapezoid-rule integral of exp(log_values) over a product grid."""
    result = log_values
    for axis_grid in reversed(axes):
        weights = np.zeros(len(axis_grid))
        steps = np.diff(axis_grid)
        weights[:-1] += steps / 2
        weights[1:] += steps / 2
        result = logsumexp(result + np.log(weights), axis=-1)
    return float(result)


def pooled_frequencies(samples, partitions):
    """Empirical pmf over ``partitions`` of canonical label vectors ``samples`` (draws x n)."""
    index = partition_index(partitions)
    counts = np.zeros(len(partitions))
    for z in samples:
        counts[index[tuple(int(v) for v in z)]] += 1
    return counts / counts.sum()


def tv_tolerance(exact, n_eff, z_score=4.0):
    """Bound on the total-variation distance of an empirical pmf with effective sample size ``n_eff``.

    E[TV] <= 0.5 * sum_k sqrt(p_k (1 - p_k) / n_eff) (Jensen), and the
    fluctuations of TV around its mean are O(1/sqrt(n_eff)) (bounded-differences:
    changing one of n_eff independent draws moves TV by at most 1/n_eff, so
    sd <= 0.5/sqrt(n_eff)).  The bound is the mean bound plus ``z_score`` such sds.
    """
    mean_bound = 0.5 * np.sum(np.sqrt(exact * (1 - exact) / n_eff))
    return mean_bound + z_score * 0.5 / np.sqrt(n_eff)


def total_variation(p, q):
    return 0.5 * float(np.abs(np.asarray(p) - np.asarray(q)).sum())


# --------------------------------------------------------------------------- #
# Partition summaries by their definitions
# --------------------------------------------------------------------------- #


def make_idata(draws, chains=1, **stats):
    """InferenceData with posterior z of shape (chains, draws/chains, n) and optional sample stats."""
    import arviz as az

    draws = np.asarray(draws)
    posterior = {"z": draws.reshape(chains, -1, draws.shape[-1])}
    return az.from_dict(posterior=posterior, sample_stats=stats or None)


def step_stats(rng, chains, draws):
    """The scalar sample stats of a partition step (``draws`` a multiple of 4; moves gibbs, split, merge, split)."""
    k = rng.integers(2, 6, size=(chains, draws))
    return {
        "partition_n_clusters": k,
        "partition_log_joint": -100.0 - 3.0 * k + rng.normal(size=(chains, draws)),
        "partition_largest_fraction": rng.uniform(0.3, 0.6, size=(chains, draws)),
        "partition_move": np.tile([0, 1, 2, 1], (chains, draws // 4)),
        "partition_accepted": np.tile([True, True, False, False], (chains, draws // 4)),
        "partition_accept": np.tile([1.0, 0.8, 0.1, 0.2], (chains, draws // 4)),
    }


def canonical_by_definition(labels):
    """Labels numbered 0, 1, ... in order of first appearance, through ``np.unique`` (no loop over items)."""
    labels = np.asarray(labels)
    values, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(len(values), dtype=np.int64)
    rank[np.argsort(first)] = np.arange(len(values))
    return rank[inverse.reshape(labels.shape)]


def vi_by_entropies(a, b):
    """VI = 2 H(a, b) - H(a) - H(b) in bits, from empirical distributions (not the contingency-table formula)."""

    def entropy(labels):
        _, counts = np.unique(labels, axis=0, return_counts=True)
        p = counts / counts.sum()
        return -np.sum(p * np.log2(p))

    return 2 * entropy(np.stack([a, b], axis=1)) - entropy(a) - entropy(b)


def brute_loss(draws, candidate, loss):
    """Posterior expected loss by direct definitions (repeated draws counted once, weighted)."""
    candidate = np.asarray(candidate)
    unique, counts = np.unique(np.asarray(draws), axis=0, return_counts=True)
    if loss == "VI":
        values = [vi_by_entropies(d, candidate) for d in unique]
    else:
        same_c = candidate[:, None] == candidate[None, :]
        iu = np.triu_indices(len(candidate), 1)
        values = [(same_c != (d[:, None] == d[None, :]))[iu].sum() for d in unique]
    return float(np.dot(values, counts) / counts.sum())

