"""Shared exactness machinery (docs/design.md §4.1), independent of the numba kernels.

* ``set_partitions(n)``: every set partition of ``n`` items as canonical label
  vectors (restricted growth strings), Bell(n) rows.
* ``exact_posterior``: normalised posterior over those partitions computed from
  ``model.compile_logp()`` -- the PyTensor model, not the kernels -- optionally
  integrating continuous hyperparameters out numerically on a grid in their
  transformed (unconstrained) space, where ``compile_logp`` includes the Jacobian.
* ``normal_mixture_posterior``: the same for ``NormalMixture`` (explicit cluster
  parameters): each cluster's means integrated out analytically and its
  precisions by quadrature, the partition prior from the PyMC model.
* ``partition_ids``: the enumerated row of every sampled labelling, failing on
  any sample that is not an enumerated canonical partition.
* ``tv_tolerance``: a total-variation bound for pooled sampler frequencies.
* High-precision log densities of the continuous observation models
  (``exact_normal_gamma``, ``exact_normal_inverse_wishart``,
  ``exact_normal_mixture``, with ``exact_dp_log_prior``): every sum over the
  data in exact rational arithmetic (``fractions.Fraction`` of the float64
  values, centred exactly), then one float64 transcendental per term, summed
  with ``math.fsum``: the reference for data far from zero (issue 33).
* Partition summaries by their definitions, for ``tests/summary``:
  ``make_idata`` and ``step_stats`` (traces), ``canonical_by_definition``,
  ``vi_by_entropies``, ``brute_loss`` (posterior expected VI / Binder loss),
  ``salso_by_definition`` (``point_partition``'s search with every step taken
  from the expected loss computed from its definition).
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
from scipy.special import gammaln, logsumexp


def set_partitions(n):
    """All set partitions of ``range(n)`` as canonical int32 label vectors, shape (Bell(n), n)."""
    rows = [[0]]
    for _ in range(1, n):
        rows = [r + [c] for r in rows for c in range(max(r) + 2)]
    return np.asarray(rows, dtype=np.int32)


def partition_ids(samples, partitions):
    """Row in ``partitions`` of every labelling in ``samples`` (shape ``(..., n)``), as an int array of shape ``(...)``.

    Every sample must be one of the enumerated partitions in canonical form
    (labels numbered in order of first appearance): an unmatched sample fails
    with the first such labelling and how many there are, never a silent
    nearest row.
    """
    samples = np.asarray(samples)
    n = partitions.shape[1]
    assert samples.shape[-1] == n, f"samples have {samples.shape[-1]} items, the enumeration {n}"
    weights = n ** np.arange(n)  # one code per vector of labels in 0..n-1 (others are caught by the range check)
    codes = partitions.astype(np.int64) @ weights
    order = np.argsort(codes)
    sample_codes = samples.astype(np.int64) @ weights
    found = np.minimum(np.searchsorted(codes[order], sample_codes), len(codes) - 1)
    missing = (codes[order][found] != sample_codes) | (samples.min(axis=-1) < 0) | (samples.max(axis=-1) >= n)
    if missing.any():
        first = samples[np.unravel_index(np.flatnonzero(missing)[0], missing.shape)]
        raise AssertionError(
            f"{int(missing.sum())} of {missing.size} samples are not enumerated canonical partitions, e.g. {first.tolist()}"
        )
    return order[found]


def initial_values(model, z_name="z"):
    """The model's initial values of its free variables other than ``z_name`` (e.g. the NGG's ``u_log__``): the
    ``fixed`` of :func:`exact_posterior` for a kernel run at the model's initial hyperparameters."""
    return {name: value for name, value in model.initial_point().items() if name != z_name}


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


LOG_TAU_GRID = np.linspace(-30.0, 15.0, 4501)
"""Quadrature nodes in ``u = log tau`` for :func:`normal_cluster_log_marginal` (spacing 0.01)."""


def normal_cluster_log_marginal(x, m, t, a, b):
    """``log ∫∫ prod_i N(x_i | mu, 1/tau) N(mu | m, 1/t) Gamma(tau | a, rate b) dmu dtau`` per feature, summed.

    ``x`` is ``(n_c, d)`` (the items of one cluster); ``m, t, a, b`` have length
    ``d``.  Given ``tau`` the mean integrates out in closed form,

        (tau/2π)^(n/2) sqrt(t/P) exp(-½ [tau SS + (n tau t/P)(x̄ - m)²]),   P = t + n tau,

    with ``SS = sum_i (x_i - x̄)²``; ``tau`` is integrated by the trapezoid rule
    in ``u = log tau`` on :data:`LOG_TAU_GRID` (the integrand is smooth and
    decays fast at both ends, so the rule converges geometrically).
    """
    x = np.asarray(x, dtype=float)
    n = x.shape[0]
    mean = x.mean(axis=0)
    ss = ((x - mean) ** 2).sum(axis=0)
    u = LOG_TAU_GRID[:, None]
    tau = np.exp(u)
    precision = t + n * tau
    log_given_tau = (
        0.5 * n * (u - np.log(2.0 * np.pi)) + 0.5 * (np.log(t) - np.log(precision))
        - 0.5 * (tau * ss + n * tau * t / precision * (mean - m) ** 2)
    )
    log_gamma = a * np.log(b) - gammaln(a) + (a - 1.0) * u - b * tau
    integrand = log_given_tau + log_gamma + u  # dtau = tau du
    step = np.diff(LOG_TAU_GRID)
    weights = np.zeros(len(LOG_TAU_GRID))
    weights[:-1] += step / 2
    weights[1:] += step / 2
    return float(logsumexp(integrand + np.log(weights)[:, None], axis=0).sum())


def normal_mixture_posterior(model, x, m, t, a, b, k_max, z_name="z", fixed=None, grids=None):
    """Exact posterior pmf of ``z`` over ``set_partitions(n)`` for a ``NormalMixture`` model.

    ``p(z | x) ∝ p(z) 1[K(z) <= k_max] prod_c M(x_c)`` with the cluster
    marginals of :func:`normal_cluster_log_marginal` (``x``, ``m, t, a, b`` and
    ``k_max`` as given to the model, not read from it or from the kernels).
    ``log p(z)`` comes from the PyMC model: the log density of ``z`` and of the
    variables in ``grids`` (integrated out by the trapezoid rule, as in
    :func:`exact_posterior`), at ``fixed`` values of any others they depend on.
    """
    fixed = {**model.initial_point(), **(fixed or {})}  # values of variables the prior terms do not read
    grids = dict(grids or {})
    names = list(grids)
    value_vars = {v.name: v for v in model.value_vars}
    prior_vars = [model[z_name], *(model.values_to_rvs[value_vars[name]] for name in names)]
    logp = model.compile_logp(vars=prior_vars)
    partitions = set_partitions(x.shape[0])
    cache = {}
    log_mass = np.full(len(partitions), -np.inf)
    for row, z in enumerate(partitions):
        if z.max() + 1 > k_max:
            continue
        total = 0.0
        for label in range(z.max() + 1):
            members = tuple(np.flatnonzero(z == label))
            if members not in cache:
                cache[members] = normal_cluster_log_marginal(x[list(members)], m, t, a, b)
            total += cache[members]
        if names:
            values = [logp({**fixed, z_name: z, **dict(zip(names, combo))}) for combo in itertools.product(*grids.values())]
            shape = tuple(len(grid) for grid in grids.values())
            total += _log_trapezoid(np.asarray(values).reshape(shape), list(grids.values()))
        else:
            total += logp({**fixed, z_name: z})
        log_mass[row] = total
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



def _loss_part(draws, weights, slots, placed, loss):
    """``Σ_l f(m_l) - 2 Σ_s w_s Σ_kl f(n^s_kl)`` over the ``placed`` items: the part of the expected loss
    (times ``n`` for VI, 2 for Binder) that depends on the candidate ``slots``, from the contingency tables."""
    f = (lambda x: x * np.log2(x)) if loss == "VI" else (lambda x: x * x)
    k, width = draws.max() + 1, slots.max() + 1
    codes = (np.arange(len(draws))[:, None] * k + draws[:, placed]) * width + slots[placed]
    table = np.bincount(codes.ravel(), minlength=len(draws) * k * width).reshape(len(draws), -1)
    sizes = np.bincount(slots[placed]).astype(float)
    nonzero = table > 0
    draw_weights = np.broadcast_to(weights[:, None], table.shape)[nonzero]
    return f(sizes[sizes > 0]).sum() - 2.0 * draw_weights @ f(table[nonzero].astype(float))


def salso_by_definition(draws, loss, random_seed, n_starts=10, max_sweeps=50, tol=1e-9):
    """The search of ``point_partition`` as first written (main at 3d7a424), every candidate move scored
    by :func:`_loss_part` from scratch.

    ``n_starts`` runs alternate between a start from a distinct draw (the most
    frequent, then draws picked with their frequencies) and a sequential
    allocation in a random order (each item to the first slot of least loss
    among the items placed so far); then sweeps in that order move each item
    to its slot of least loss if that beats staying by ``tol``, every empty
    slot being the same new cluster, until a sweep moves nothing.  Returns the
    canonical labels of the best run.
    """
    from pymc_partitions.labels import relabel

    rng = np.random.default_rng(random_seed)
    unique, counts = np.unique(relabel(np.asarray(draws)), axis=0, return_counts=True)
    weights = counts / counts.sum()
    n = unique.shape[1]
    runs = []
    for start in range(n_starts):
        order = rng.permutation(n)
        if start % 2:
            slots = _sequential_allocation(unique, weights, order, loss, tol)
        else:
            pick = int(np.argmax(weights)) if start == 0 else int(rng.choice(len(unique), p=weights))
            slots = unique[pick].astype(np.int64)
        runs.append(_sweeps(unique, weights, slots, order, loss, max_sweeps, tol))
    values = [_loss_part(unique, weights, s, np.ones(n, dtype=bool), loss) for s in runs]
    return relabel(runs[int(np.argmin(values))])


def _first_least(values, start, tol):
    """Scanning ``values`` in order from best = ``start``: an index replaces the best so far if it beats it by ``tol``."""
    best = start
    for l, value in enumerate(values):
        if value < values[best] - tol:
            best = l
    return best


def _options(draws, weights, slots, i, placed, loss, n_slots):
    """The loss part of the placed items with item ``i`` in each of the slots ``0 .. n_slots - 1``."""
    values = []
    for l in range(n_slots):
        trial = slots.copy()
        trial[i] = l
        values.append(_loss_part(draws, weights, trial, placed, loss))
    return values


def _sequential_allocation(draws, weights, order, loss, tol):
    """Slots from adding the items in ``order``, each to the first slot (existing or new) of least loss so far."""
    slots, placed = np.zeros(draws.shape[1], dtype=np.int64), np.zeros(draws.shape[1], dtype=bool)
    n_used = 0
    for i in order:
        placed[i] = True
        slots[i] = _first_least(_options(draws, weights, slots, i, placed, loss, n_used + 1), 0, tol)
        n_used = max(n_used, slots[i] + 1)
    return slots


def _sweeps(draws, weights, slots, order, loss, max_sweeps, tol):
    """Greedy sweeps from ``slots`` in ``order`` until one moves nothing (or ``max_sweeps``)."""
    slots = slots.copy()
    everyone = np.ones(draws.shape[1], dtype=bool)
    n_used = slots.max() + 1
    for _ in range(max_sweeps):
        moved = False
        for i in order:
            current = slots[i]
            best = _first_least(_options(draws, weights, slots, i, everyone, loss, n_used + 1), current, tol)
            sizes = np.bincount(np.delete(slots, i), minlength=n_used + 1)
            if best != current and sizes[best] == 0:  # a new cluster: stay if alone, else the first empty slot
                best = current if sizes[current] == 0 else int(np.flatnonzero(sizes == 0)[0])
            if best != current:
                slots[i], moved = best, True
                n_used = max(n_used, best + 1)
        if not moved:
            break
    return slots


# --------------------------------------------------------------------------- high-precision references

_LOG_2PI = math.log(2.0 * math.pi)


def exact_log(q):
    """``log q`` of a positive rational to float64 accuracy (no overflow or underflow on the way)."""
    q = Fraction(q)
    if q <= 0:
        raise ValueError(f"log of a non-positive number {q}")
    value = float(q)  # correctly rounded
    if 1e-300 < value < 1e300:
        return math.log(value)
    return math.log(q.numerator) - math.log(q.denominator)


def _clusters(z):
    z = np.asarray(z)
    return [np.flatnonzero(z == label) for label in np.unique(z)]


def _exact_determinant(matrix):
    """Determinant of a square matrix of Fractions (Gaussian elimination, exact)."""
    a = [list(row) for row in matrix]
    n = len(a)
    det = Fraction(1)
    for j in range(n):
        pivot = next(i for i in range(j, n) if a[i][j] != 0)
        if pivot != j:
            a[j], a[pivot] = a[pivot], a[j]
            det = -det
        det *= a[j][j]
        for i in range(j + 1, n):
            factor = a[i][j] / a[j][j]
            for k in range(j, n):
                a[i][k] -= factor * a[j][k]
    return det


def exact_dp_log_prior(z, alpha):
    """``log p(z)`` of the Dirichlet process (Ewens): ``K log alpha + log Γ(alpha) - log Γ(alpha + n) + Σ_c log Γ(|c|)``."""
    sizes = [len(c) for c in _clusters(z)]
    terms = [len(sizes) * math.log(alpha), math.lgamma(alpha), -math.lgamma(alpha + len(z))]
    return math.fsum(terms + [math.lgamma(m) for m in sizes])


def exact_normal_gamma(x, z, mu0, kappa0, a0, b0):
    """``log p(x | z)`` of ``NormalGammaMixture`` (Murphy 2007, sec. 3), each cluster's statistics exact.

    Per cluster and feature ``b_n = b0 + ½ Σ(x - x̄)² + κ0 m (x̄ - mu0)² / (2 κ_n)`` with the
    centring done in rationals; hyperparameters are scalars or length-d, as float64 values.
    """
    x = np.asarray(x, dtype=float)
    n, d = x.shape
    mu0, kappa0, a0, b0 = (np.broadcast_to(np.asarray(v, dtype=float), (d,)) for v in (mu0, kappa0, a0, b0))
    terms = []
    for members in _clusters(z):
        m = len(members)
        for j in range(d):
            values = [Fraction(float(v)) for v in x[members, j]]
            mean = sum(values) / m
            scatter = sum((v - mean) ** 2 for v in values)
            k0 = Fraction(float(kappa0[j]))
            k_n = k0 + m
            b_n = Fraction(float(b0[j])) + scatter / 2 + k0 * m * (mean - Fraction(float(mu0[j]))) ** 2 / (2 * k_n)
            a_n = float(a0[j]) + 0.5 * m
            terms += [
                math.lgamma(a_n), -math.lgamma(a0[j]), a0[j] * math.log(b0[j]), -a_n * exact_log(b_n),
                0.5 * exact_log(k0 / k_n), -0.5 * m * _LOG_2PI,
            ]
    return math.fsum(terms)


def exact_normal_inverse_wishart(x, z, mu0, kappa0, nu0, Psi0):
    """``log p(x | z)`` of ``NormalInverseWishartMixture`` (Murphy 2007, sec. 9), each cluster's statistics exact.

    ``Ψ_n = Psi0 + Σ(x - x̄)(x - x̄)ᵀ + κ0 m/κ_n (x̄ - mu0)(x̄ - mu0)ᵀ`` and both determinants in rationals.
    """
    x = np.asarray(x, dtype=float)
    n, d = x.shape
    mu0 = [Fraction(float(v)) for v in np.broadcast_to(np.asarray(mu0, dtype=float), (d,))]
    psi0 = [[Fraction(float(v)) for v in row] for row in np.asarray(Psi0, dtype=float)]
    k0, nu0 = Fraction(float(kappa0)), float(nu0)
    log_det0 = exact_log(_exact_determinant(psi0))
    terms = []
    for members in _clusters(z):
        m = len(members)
        rows = [[Fraction(float(v)) for v in x[i]] for i in members]
        mean = [sum(row[j] for row in rows) / m for j in range(d)]
        k_n, nu_n = k0 + m, nu0 + m
        psi_n = [
            [
                psi0[a][b]
                + sum((row[a] - mean[a]) * (row[b] - mean[b]) for row in rows)
                + k0 * m / k_n * (mean[a] - mu0[a]) * (mean[b] - mu0[b])
                for b in range(d)
            ]
            for a in range(d)
        ]
        terms += [-0.5 * m * d * math.log(math.pi), 0.5 * nu0 * log_det0, -0.5 * nu_n * exact_log(_exact_determinant(psi_n))]
        terms += [0.5 * d * exact_log(k0 / k_n)]
        terms += [math.lgamma(0.5 * (nu_n - j)) - math.lgamma(0.5 * (nu0 - j)) for j in range(d)]
    return math.fsum(terms)


def exact_normal_mixture(x, z, mu, tau, m, t, a, b):
    """``Σ_c [log g(θ_c) + Σ_{i∈c} log N(x_i | μ_c, 1/τ_c)]`` of ``NormalMixture`` for the occupied rows.

    Row ``k`` of ``mu`` and ``tau`` holds the parameters of the cluster labelled ``k`` in canonical ``z``;
    ``mu`` may hold Fractions (exact means, e.g. a kernel's ``theta`` plus its origin).  ``g`` is
    ``N(μ; m, 1/t) Gamma(τ; a, rate b)`` per feature; every square of a difference is exact.
    """
    x = np.asarray(x, dtype=float)
    d = x.shape[1]
    m, t, a, b = (np.broadcast_to(np.asarray(v, dtype=float), (d,)) for v in (m, t, a, b))
    terms = []
    for label, members in enumerate(_clusters(z)):
        for j in range(d):
            mean, precision = Fraction(mu[label][j]), float(tau[label][j])
            deviance = sum((Fraction(float(v)) - mean) ** 2 for v in x[members, j])
            prior_gap = (mean - Fraction(float(m[j]))) ** 2
            terms += [
                0.5 * len(members) * (math.log(precision) - _LOG_2PI), -0.5 * float(Fraction(precision) * deviance),
                0.5 * (math.log(t[j]) - _LOG_2PI), -0.5 * float(Fraction(float(t[j])) * prior_gap),
                a[j] * math.log(b[j]) - math.lgamma(a[j]), (a[j] - 1.0) * math.log(precision), -b[j] * precision,
            ]
    return math.fsum(terms)
