r"""Split-merge moves for a component model written in PyMC: whole clusters, exact, proposal densities computed.

Jain & Neal's (2007) nonconjugate split-merge (``papers/001_...``, Sec. 4;
``kernels.nonconjugate_split_merge`` for ``NormalMixture``) with the
conditionally conjugate Gibbs draws of the cluster parameters replaced by
draws from Laplace approximations of their conditional posterior
(``distributions.component_fits``), which any component model has.  The
moves act on the row labels ``c`` and the ``K_max`` rows ``phi`` (value space)
of the row-labelled target of ``docs/exactness.md``, "Your own component
model",

.. math::

    p_a(c, \phi) \propto p(\Pi(c)) \frac{(K_{\max} - K)!}{K_{\max}!} \prod_r g(\phi_r) \prod_i f(y_i \mid \phi_{c_i}).

One move, for a uniformly chosen pair of items ``i != j`` and ``S`` the other
items of their clusters (in increasing order):

1. **Launch** (drawn alike in both directions: it depends on ``i, j, S`` and
   fresh randomness only): each item of ``S`` joins ``i``'s side ``A`` or
   ``j``'s side ``B`` with probability 1/2; then ``n_launch_scans`` times the
   two sides' posterior modes are fitted and every item of ``S`` reallocated
   with probability ``f_A / (f_A + f_B)`` under them.  The Laplace
   approximations ``q_A``, ``q_B`` of the launch's two sides, and ``q_M`` of
   ``{i, j} ∪ S`` together, are deterministic functions of the launch.
2. **Split** (``c_i = c_j``, row ``r``; only if ``K < K_max``): draw
   ``phi_A ~ q_A``, ``phi_B ~ q_B``, allocate each item of ``S``
   independently with ``P(A) = f(y_h | phi_A) / (f(y_h | phi_A) + f(y_h | phi_B))``;
   ``A`` keeps row ``r``, ``B`` takes an empty row ``e`` chosen uniformly.  The
   reverse merge proposes the current ``phi_r`` from ``q_M`` and the freed
   row's value from ``g``.
3. **Merge** (``c_i != c_j``, rows ``r_A``, ``r_B``): draw ``phi_M ~ q_M`` for
   the merged cluster in ``i``'s row ``r_A``; ``r_B`` empties and gets a fresh
   draw from ``g``.  The reverse split draws the current ``phi_{r_A}``,
   ``phi_{r_B}`` from ``q_A``, ``q_B`` and allocates ``S`` as it is now, with
   ``r_B`` among the ``K_max - K + 1`` empty rows.

The acceptance probability of a split is

.. math::

    \min\Big(1, \frac{p(\Pi')\, g(\phi_A) g(\phi_B) \prod_{h} f(y_h \mid \phi'_{c'_h})}
                     {p(\Pi)\, g(\phi_r) \prod_h f(y_h \mid \phi_r)}
                \cdot \frac{q_M(\phi_r)}{q_A(\phi_A)\, q_B(\phi_B)\, \prod_{h \in S} P(\text{side}_h)}\Big),

(the products over ``{i, j} ∪ S``) and a merge's is the reciprocal form: the
emptied or filled row's ``g`` and the factor ``(K_max - K)!/K_max!`` cancel
against the uniform choice of that row and its prior draw.  The moves are
equivariant under relabelling the rows, so composed with the step's
relabelling they leave the model's posterior invariant (``docs/exactness.md``).

The work of a move is a few Laplace fits (Newton's method on PyTensor's
gradient, each evaluation O(n)) and the log likelihoods of two candidate rows.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np

from pymc_partitions import priors
from pymc_partitions._validation import check_label_vector
from pymc_partitions.distributions.component_fits import RowFits
from pymc_partitions.kernels.info import MOVE_MERGE, MOVE_SPLIT, Move
from pymc_partitions.kernels.protocol import COMPONENT, Support
from pymc_partitions.labels import relabel
from pymc_partitions.state import state_of

SUPPORT = Support((COMPONENT,), min_items=2)
"""What the moves sample: a component model written in PyMC, every partition prior, at least two items."""

Options = namedtuple("Options", ["n_moves", "n_launch_scans"])
Options.__doc__ = """Options of the split-merge moves of a component model.

n_moves : int          split-merge proposals per step
n_launch_scans : int   launch reallocations after the random split (Jain & Neal's ``a``)
"""

Rows = namedtuple("Rows", ["labels", "phi", "table", "log_prior"])
Rows.__doc__ = """What the moves change: the row labels ``labels`` (n,), the rows ``phi`` (K_max, p) in value space,
``table`` (n, K_max) the items' log likelihoods under every row, ``log_prior`` (K_max,) every row's ``log g``."""


def log_partition_prior(model, sizes):
    """``log p(Pi) = log V(n, K) + sum_c log W(|c|)`` for cluster sizes ``sizes`` (kernel ``Model``'s prior)."""
    total = priors.log_v(model.prior, model.prior_params, model.log_v_table, int(sum(sizes)), len(sizes))
    return total + sum(priors.log_w(model.prior, model.prior_params, int(m)) for m in sizes)


def _gaussian_log_density(x, mean, cov):
    chol = np.linalg.cholesky(cov)
    solved = np.linalg.solve(chol, x - mean)
    return -0.5 * solved @ solved - np.log(np.diag(chol)).sum() - 0.5 * len(x) * math.log(2.0 * math.pi)


def _draw_gaussian(mean, cov, rng):
    return mean + np.linalg.cholesky(cov) @ rng.standard_normal(len(mean))


def _side_log_probabilities(table_a, table_b):
    """``log P(A)`` and ``log P(B)`` of each item from its log likelihoods under the two sides' rows."""
    difference = table_a - table_b
    log_a = -np.logaddexp(0.0, -difference)
    return log_a, -np.logaddexp(0.0, difference)


def _indicator(n, items):
    weights = np.zeros(n)
    weights[items] = 1.0
    return weights


def launch(fits, point, i, j, others, members, n_scans, rng):
    """The launch split (module docstring, step 1) and the Laplace approximations ``(q_A, q_B, q_M)``, each
    ``(mean, cov)``, of its two sides and of ``members`` (``{i, j} ∪ S``)."""
    n = fits.component.n
    in_a = rng.random(len(others)) < 0.5

    def sides():
        return [_indicator(n, np.r_[i, others[in_a]]), _indicator(n, np.r_[j, others[~in_a]])]

    for _ in range(n_scans):
        (mode_a, _), (mode_b, _) = fits.laplace(point, np.stack(sides()))
        table = fits.candidates(point, np.stack([mode_a, mode_b]))[0]
        log_a, _ = _side_log_probabilities(table[0, others], table[1, others])
        in_a = np.log(rng.random(len(others))) < log_a
    return fits.laplace(point, np.stack([*sides(), _indicator(n, members)]))


def propose(model, fits, point, rows, k_max, options, draw_prior_row, rng):
    """One split-merge proposal and its accept/reject step; returns ``(rows, Move)``.

    ``model`` is the step's kernel ``Model`` (the partition prior), ``fits`` a
    ``distributions.component_fits.RowFits``, ``point`` PyMC's point (the
    hyperparameters and shared parameters), ``rows`` the current :class:`Rows`;
    ``draw_prior_row(r)`` draws row ``r`` from ``g`` (value space, length p).
    """
    labels = rows.labels
    n = labels.shape[0]
    i, j = rng.choice(n, size=2, replace=False)
    c_i, c_j = labels[i], labels[j]
    members = np.flatnonzero((labels == c_i) | (labels == c_j))
    others = members[(members != i) & (members != j)]
    occupied = np.unique(labels)
    k = occupied.shape[0]
    if c_i == c_j and k >= k_max:  # a split would exceed K_max: its target is 0
        return rows, Move(MOVE_SPLIT, False, 0.0, -np.inf, 0.0, 0)
    q_a, q_b, q_m = launch(fits, point, i, j, others, members, options.n_launch_scans, rng)
    sizes = np.bincount(labels, minlength=k_max)[occupied]
    if c_i == c_j:
        return _split(model, fits, point, rows, i, j, others, members, sizes, q_a, q_b, q_m, k_max, rng)
    return _merge(model, fits, point, rows, i, j, others, members, sizes, q_a, q_b, q_m, draw_prior_row, rng)


def _split(model, fits, point, rows, i, j, others, members, sizes, q_a, q_b, q_m, k_max, rng):
    labels, r = rows.labels, rows.labels[i]
    phi_a, phi_b = _draw_gaussian(*q_a, rng), _draw_gaussian(*q_b, rng)
    table, log_prior = fits.candidates(point, np.stack([phi_a, phi_b]))
    log_a, log_b = _side_log_probabilities(table[0, others], table[1, others])
    in_a = np.log(rng.random(len(others))) < log_a
    side_a, side_b = np.r_[i, others[in_a]], np.r_[j, others[~in_a]]
    new_sizes = np.r_[sizes[np.unique(labels) != r], len(side_a), len(side_b)]
    log_target = (
        log_partition_prior(model, new_sizes) - log_partition_prior(model, sizes)
        + log_prior[0] + log_prior[1] - rows.log_prior[r]
        + table[0, side_a].sum() + table[1, side_b].sum() - rows.table[members, r].sum()
    )
    log_proposal = _gaussian_log_density(rows.phi[r], *q_m) - (
        _gaussian_log_density(phi_a, *q_a) + _gaussian_log_density(phi_b, *q_b)
        + np.where(in_a, log_a, log_b).sum()
    )
    log_ratio = log_target + log_proposal
    accept_prob = math.exp(min(0.0, log_ratio)) if np.isfinite(log_ratio) else 0.0
    if not rng.random() < accept_prob:
        return rows, Move(MOVE_SPLIT, False, accept_prob, log_target, log_proposal, 0)
    empty = np.setdiff1d(np.arange(k_max), np.unique(labels))
    e = empty[rng.integers(len(empty))]
    new = _with(rows, {r: (phi_a, table[0], log_prior[0]), e: (phi_b, table[1], log_prior[1])})
    new.labels[side_b] = e
    return new, Move(MOVE_SPLIT, True, accept_prob, log_target, log_proposal, 1)


def _merge(model, fits, point, rows, i, j, others, members, sizes, q_a, q_b, q_m, draw_prior_row, rng):
    labels = rows.labels
    r_a, r_b = labels[i], labels[j]
    phi_m = _draw_gaussian(*q_m, rng)
    table, log_prior = fits.candidates(point, phi_m[None, :])
    in_a = labels[others] == r_a
    log_a, log_b = _side_log_probabilities(rows.table[others, r_a], rows.table[others, r_b])
    occupied = np.unique(labels)
    new_sizes = np.r_[sizes[(occupied != r_a) & (occupied != r_b)], len(members)]
    log_target = (
        log_partition_prior(model, new_sizes) - log_partition_prior(model, sizes)
        + log_prior[0] - rows.log_prior[r_a] - rows.log_prior[r_b]
        + table[0, members].sum() - rows.table[members, labels[members]].sum()
    )
    log_proposal = (
        _gaussian_log_density(rows.phi[r_a], *q_a) + _gaussian_log_density(rows.phi[r_b], *q_b)
        + np.where(in_a, log_a, log_b).sum()
    ) - _gaussian_log_density(phi_m, *q_m)
    log_ratio = log_target + log_proposal
    accept_prob = math.exp(min(0.0, log_ratio)) if np.isfinite(log_ratio) else 0.0
    if not rng.random() < accept_prob:
        return rows, Move(MOVE_MERGE, False, accept_prob, log_target, log_proposal, 0)
    fresh = draw_prior_row(r_b)
    fresh_table, fresh_prior = fits.candidates(point, fresh[None, :])
    new = _with(rows, {r_a: (phi_m, table[0], log_prior[0]), r_b: (fresh, fresh_table[0], fresh_prior[0])})
    new.labels[members] = r_a
    return new, Move(MOVE_MERGE, True, accept_prob, log_target, log_proposal, -1)


def _with(rows, changed):
    """A copy of ``rows`` with the rows in ``changed`` (row -> (phi, table column, log g)) replaced."""
    labels, phi, table, log_prior = rows.labels.copy(), rows.phi.copy(), rows.table.copy(), rows.log_prior.copy()
    for r, (value, column, prior) in changed.items():
        phi[r], table[:, r], log_prior[r] = value, column, prior
    return Rows(labels, phi, table, log_prior)


class ComponentSplitMerge:
    """``options.n_moves`` proposals of :func:`propose` on PyMC's point, made by a step before its kernel's
    transition (``steps.base.PartitionStep``'s ``moves``): ``NonconjugateSplitMergeStep`` on a component model.

    :meth:`propose` returns the point with the moved labels and rows, and the
    last proposal's ``Move`` (the step's sample stats describe it).
    """

    support = SUPPORT

    def __init__(self, problem, options):
        self.problem = problem
        self.options = options
        self.fits = RowFits(problem.component)

    def propose(self, models, point, rng):
        """The moves from ``point`` (``models``: the step's ``steps.kernel_model.KernelModels``):
        ``(point, Move)``."""
        problem, fits = self.problem, self.fits
        component = problem.component
        z = check_label_vector(problem.name, point[problem.name], problem.n)
        kernel_model = models.at(point)
        problem.rows.load(kernel_model, state_of(kernel_model, relabel(z).astype(np.int64)), z, point)  # checks z
        phi = fits.rows_of(point)
        rows = Rows(z.astype(np.int64), phi, component.log_likelihoods(point), fits.candidates(point, phi)[1])

        def draw_prior_row(r):
            return fits.rows_of({**point, **component.draw_rows(point, rng)})[r]

        for _ in range(self.options.n_moves):
            rows, move = propose(kernel_model, fits, point, rows, component.k_max, self.options, draw_prior_row, rng)
        moved = fits.with_rows(point, rows.phi)
        moved[problem.name] = rows.labels.astype(point[problem.name].dtype)
        return moved, move
