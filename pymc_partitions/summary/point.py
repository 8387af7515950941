"""Point estimate of a partition: posterior expected loss or PEAR and their SALSO-style optimisation.

:func:`expected_loss` evaluates and :func:`point_partition` minimises the
posterior expected loss ``mean_s L(z^(s), ĉ)`` over partitions ``ĉ``, with ``L``
the Variation of Information (Meilă 2007; Wade & Ghahramani 2018) or Binder's
loss with equal unit costs (Binder 1978: the number of item pairs on which the
two disagree about co-clustering).  Both are functions of the contingency table
``n_kl`` between a draw ``c`` (clusters ``k``, sizes ``n_k``) and ``ĉ`` (clusters
``l``, sizes ``m_l``) of ``N`` items::

    VI(c, ĉ)     = (1/N) [ Σ_k f(n_k) + Σ_l f(m_l) - 2 Σ_kl f(n_kl) ],  f(x) = x log2 x
    Binder(c, ĉ) = (1/2) [ Σ_k n_k² + Σ_l m_l² - 2 Σ_kl n_kl² ]

So ``mean_s L = scale · (D + T(ĉ))`` with ``scale`` = ``1/N`` (VI) or ``1/2``
(Binder), ``D = Σ_s w_s Σ_k f(n^s_k)`` (:func:`_draw_term`) and
``T(ĉ) = Σ_l f(m_l) - 2 Σ_s w_s Σ_kl f(n^s_kl)`` (:func:`_candidate_term`), over
the distinct draws ``s`` with their posterior frequencies ``w_s``: the exact
expected VI, not a lower bound.  Moving item ``i`` of ``ĉ`` into cluster ``l``
changes ``T`` by (counts without ``i``; Dahl, Johnson & Müller 2022)::

    f(m_l + 1) - f(m_l) - 2 Σ_s w_s [f(n^s_{k_s(i) l} + 1) - f(n^s_{k_s(i) l})]

Generalised losses (Dahl, Johnson & Müller 2022, Sect. 3): with a weight
``a > 0``, ``L_a = scale · [Σ_k f(n_k) + a Σ_l f(m_l) - (1 + a) Σ_kl f(n_kl)]``,
which is ``H(ĉ | c) + a H(c | ĉ)`` for VI (in bits) and, for Binder, the
pairs ``ĉ`` separates that ``c`` joins plus ``a`` times the pairs ``ĉ`` joins
that ``c`` separates.  ``a = 1`` is the plain loss; ``a > 1`` makes merging
costlier, so the estimate has more clusters.  The expected loss is
``scale · (D + ((1 + a) / 2) T)`` with the size term of ``T`` weighted by
``κ = 2a / (1 + a)``, so the same search serves every ``a``.

PEAR (Fritsch & Ickstadt 2009, eq. (11)) is no expected loss: it is the
adjusted Rand index with the co-clustering indicators of the draw replaced by
the posterior similarity ``π_ij = Σ_s w_s 1(z^s_i = z^s_j)``.  With
``I = Σ_l C(m_l)`` the pairs ``ĉ`` joins, ``S = Σ_s w_s Σ_kl C(n^s_kl)`` their
similarity, ``Π = Σ_s w_s Σ_k C(n^s_k)`` and ``P = C(N)`` (``C(x) = x (x-1)/2``)::

    PEAR(ĉ) = (S - I Π / P) / ((I + Π) / 2 - I Π / P)

Moving item ``i`` into cluster ``l`` adds ``m_l`` to ``I`` and
``Σ_s w_s n^s_{k_s(i) l}`` to ``S`` (counts without ``i``): Binder's overlap
over 4, so the search maximises PEAR with Binder's tables and scores each move
exactly by the new ratio.

The search (:func:`point_partition`) follows SALSO: greedy sweeps from several
starts, each a posterior draw or a sequential allocation.  The sparse tables
and overlaps that make a move cheap, and Binder's loss through the similarity
matrix: ``docs/exactness.md``, "Point estimates".

References
----------
Binder, D. A. (1978). Bayesian cluster analysis. *Biometrika* 65(1):31-38.
Fritsch, A. & Ickstadt, K. (2009). Improved criteria for clustering based on
the posterior similarity matrix. *Bayesian Analysis* 4(2):367-391.
Meilă, M. (2007). Comparing clusterings -- an information based distance.
*J. Multivariate Anal.* 98(5):873-895.
Wade, S. & Ghahramani, Z. (2018). Bayesian cluster analysis: point estimation
and credible balls. *Bayesian Analysis* 13(2):559-626.
Dahl, D. B., Johnson, D. J. & Müller, P. (2022). Search algorithms and loss
functions for Bayesian clustering. *J. Comput. Graph. Stat.* 31(4):1189-1201.
"""

from __future__ import annotations

import warnings

import numpy as np
from numba import prange

from pymc_partitions._jit import announced, jit
from pymc_partitions._validation import (
    check_choice,
    check_idata,
    check_label_vector,
    check_positive_int,
    check_positive_number,
    check_random_seed,
)
from pymc_partitions.labels import cluster_sizes, large_cluster_counts, large_cluster_size, relabel
from pymc_partitions.summary._idata import draws_of_items, partition_draws

__all__ = ["CRITERIA", "LOSSES", "expected_loss", "point_partition"]

LOSSES = ("VI", "Binder")
"""The losses of :func:`expected_loss` (case-insensitive)."""

WARN_MIN_ITEMS = 100
"""From this many items, :func:`point_partition` warns when its estimate's number of large clusters is atypical."""

CRITERIA = (*LOSSES, "PEAR")
"""What :func:`point_partition` optimises: an expected loss, or PEAR (maximised; case-insensitive)."""


def _loss_table(loss, n):
    """``f(x)`` for ``x = 0 .. n + 1`` and the ``scale`` of the loss (see the module docstring)."""
    x = np.arange(n + 2, dtype=np.float64)
    if loss == "VI":
        return x * np.log2(np.maximum(x, 1.0)), 1.0 / n
    return x * x, 0.5


class _Draws:
    """Distinct canonical draws with their posterior weights, in the layout the numba kernels use.

    ``offsets[s] .. offsets[s] + n_clusters[s] - 1`` number the clusters of
    draw ``s`` as the rows of a contingency table stacked over draws.
    """

    def __init__(self, draws):
        unique, counts = np.unique(draws, axis=0, return_counts=True)
        self.draws = np.ascontiguousarray(unique.astype(np.int32))
        self.weights = counts.astype(np.float64) / counts.sum()
        self.n_clusters = self.draws.max(axis=1).astype(np.int64) + 1
        self.offsets = np.concatenate([[0], np.cumsum(self.n_clusters)[:-1]]).astype(np.int64)
        self.total_clusters = int(self.n_clusters.sum())
        self.n = self.draws.shape[1]

    def search_index(self):
        """``(items, rows, draw_of_row, members, member_start)``: the table's rows from both sides, for the search.

        The search numbers the items by their cluster in the most frequent
        draw (position ``p`` holds item ``items[p]``).  ``rows[p, s]``
        (n, draws) is the row of item ``items[p]``'s cluster in draw ``s``
        (item-major: one item's rows are contiguous), row ``r`` is a cluster
        of draw ``draw_of_row[r]``, and
        ``members[member_start[r] : member_start[r + 1]]`` are its items'
        positions, ascending.  The rows are numbered by the position of their
        middle item, then by draw.  So the rows an item reads (one per draw,
        mostly of the same items) and the items a row holds lie close together
        in memory, which halves the time of the search.
        """
        items = np.argsort(self.draws[np.argmax(self.weights)], kind="stable")
        draws = np.ascontiguousarray(self.draws[:, items])
        members, member_start = _row_members(draws, self.offsets, np.arange(self.total_clusters))
        order = np.argsort(members[(member_start[:-1] + member_start[1:]) // 2], kind="stable")
        row_id = np.empty(self.total_clusters, dtype=np.int64)
        row_id[order] = np.arange(self.total_clusters)
        draw_of_row = np.repeat(np.arange(draws.shape[0]), self.n_clusters)[order]
        members, member_start = _row_members(draws, self.offsets, row_id)
        return items, _rows_of_items(draws, self.offsets, row_id), draw_of_row, members, member_start


@jit
def _rows_of_items(draws, offsets, row_id):
    """``rows[i, s] = row_id[offsets[s] + draws[s, i]]``, transposed 64 draws at a time (both sides stay in cache)."""
    n_draws, n = draws.shape
    rows = np.empty((n, n_draws), dtype=np.int64)
    for first in range(0, n_draws, 64):
        last = min(first + 64, n_draws)
        for i in range(n):
            for s in range(first, last):
                rows[i, s] = row_id[offsets[s] + draws[s, i]]
    return rows


@jit
def _row_members(draws, offsets, row_id):
    """The items of each row ``r = row_id[offsets[s] + k]``: ``members[member_start[r] : member_start[r + 1]]``."""
    n_draws, n = draws.shape
    n_rows = row_id.shape[0]
    member_start = np.zeros(n_rows + 1, dtype=np.int64)
    for s in range(n_draws):
        for i in range(n):
            member_start[row_id[offsets[s] + draws[s, i]] + 1] += 1
    for r in range(n_rows):
        member_start[r + 1] += member_start[r]
    fill = member_start[:n_rows].copy()
    members = np.empty(n_draws * n, dtype=np.int32)
    for s in range(n_draws):
        for i in range(n):
            r = row_id[offsets[s] + draws[s, i]]
            members[fill[r]] = i
            fill[r] += 1
    return members, member_start


@jit
def _draw_term(draws, weights, n_clusters, ftab):
    """``Σ_s w_s Σ_k f(n^s_k)``: the constant part of the expected loss."""
    total = 0.0
    for s in range(draws.shape[0]):
        acc = 0.0
        for size in cluster_sizes(draws[s], n_clusters[s]):
            acc += ftab[size]
        total += weights[s] * acc
    return total


@jit
def _candidate_term(draws, weights, n_clusters, labels, n_labels, ftab, size_tab):
    """``T = κ Σ_l f(m_l) - 2 Σ_s w_s Σ_kl f(n^s_kl)``: the part of the expected loss that depends on ``labels``."""
    n_draws, n = draws.shape
    total = 0.0
    for size in cluster_sizes(labels, n_labels):
        total += size_tab[size]
    k_max = 0
    for s in range(n_draws):
        if n_clusters[s] > k_max:
            k_max = n_clusters[s]
    table = np.zeros(k_max * n_labels, dtype=np.int64)
    for s in range(n_draws):
        for i in range(n):
            table[draws[s, i] * n_labels + labels[i]] += 1
        acc = 0.0
        for t in range(n_clusters[s] * n_labels):
            acc += ftab[table[t]]
            table[t] = 0
        total -= 2.0 * weights[s] * acc
    return total


@jit
def _add(i, l, rows, entries, n_entries):
    """Item ``i`` joins candidate cluster ``l``: ``n^s_{k_s(i) l} += 1`` in every draw ``s``.

    The contingency table is sparse: row ``r`` (one cluster of one draw)
    holds its ``n_entries[r]`` nonzero counts as pairs
    ``entries[r, j] = (candidate cluster l, n_rl)``, in no particular order.
    Returns the largest number of entries of a row it touched.
    """
    longest = 0
    for s in range(rows.shape[1]):
        r = rows[i, s]
        used = n_entries[r]
        j = 0
        while j < used and entries[r, j, 0] != l:
            j += 1
        if j == used:
            entries[r, j, 0] = l
            entries[r, j, 1] = 0
            used += 1
            n_entries[r] = used
        entries[r, j, 1] += 1
        if used > longest:
            longest = used
    return longest


@jit
def _remove(i, l, rows, entries, n_entries):
    """Item ``i`` leaves candidate cluster ``l``: ``n^s_{k_s(i) l} -= 1`` in every draw ``s`` (zeros are dropped)."""
    for s in range(rows.shape[1]):
        r = rows[i, s]
        j = 0
        while entries[r, j, 0] != l:
            j += 1
        entries[r, j, 1] -= 1
        if entries[r, j, 1] == 0:
            last = n_entries[r] - 1
            entries[r, j, 0] = entries[r, last, 0]
            entries[r, j, 1] = entries[r, last, 1]
            n_entries[r] = last


@jit
def _place(i, l, rows, entries, n_entries, sizes):
    """Put the unplaced item ``i`` in slot ``l``; returns ``entries``, with twice the pairs per row once one is full."""
    sizes[l] += 1
    width = entries.shape[1]
    if _add(i, l, rows, entries, n_entries) < width:
        return entries
    wider = np.empty((entries.shape[0], 2 * width, 2), dtype=entries.dtype)
    wider[:, :width] = entries
    return wider


@jit
def _overlaps(i, current, rows, double_weights, entries, n_entries, gain, n_slots, out):
    """``out[l] = 2 Σ_s w_s gain(n^s_{k_s(i) l})`` for ``l < n_slots``, the counts taken without item ``i``.

    ``i`` is in slot ``current`` (in none for ``current = -1``) and
    ``gain(c) = f(c + 1) - f(c) - f(1) + f(0)``.  As ``gain(0) = 0``, only
    the nonzero entries of the rows of ``i``'s clusters contribute:
    ``O(draws × entries per row)``.  ``double_weights`` holds ``2 w_s``.
    """
    out[:n_slots] = 0.0
    for s in range(rows.shape[1]):
        r = rows[i, s]
        w2 = double_weights[s]
        for j in range(n_entries[r]):
            l = entries[r, j, 0]
            c = entries[r, j, 1] - 1 if l == current else entries[r, j, 1]
            out[l] += w2 * gain[c]


@jit
def _all_overlaps(draw_of_row, double_weights, entries, n_entries, members, member_start, gain, labels, overlap):
    """:func:`_overlaps` of every item at once: ``overlap[l, h]`` for the items ``h`` in slots ``labels[h]``.

    Row by row: an entry ``(l, c)`` of row ``r`` adds ``2 w_s gain(c - 1)``
    to the members of ``r`` in slot ``l`` and ``2 w_s gain(c)`` to the
    others, ``O(Σ_r |r| × entries of r)``; ``overlap`` starts at zero.
    """
    for r in range(member_start.shape[0] - 1):
        w2 = double_weights[draw_of_row[r]]
        for j in range(n_entries[r]):
            l = entries[r, j, 0]
            own = w2 * gain[entries[r, j, 1] - 1]
            other = w2 * gain[entries[r, j, 1]]
            for t in range(member_start[r], member_start[r + 1]):
                h = members[t]
                overlap[l, h] += own if labels[h] == l else other


@jit
def _count(r, l, entries, n_entries):
    """``n_rl``: the count of candidate cluster ``l`` in row ``r`` of the table (:func:`_add`)."""
    for j in range(n_entries[r]):
        if entries[r, j, 0] == l:
            return entries[r, j, 1]
    return 0


@jit
def _shift_overlaps(i, a, b, rows, double_weights, gain, entries, n_entries, members, member_start, labels, overlap):
    """Update ``overlap[l, h]`` (:func:`_overlaps` of every other item ``h``) for item ``i`` moving from ``a`` to ``b``.

    In each draw ``s`` the move changes ``n_ra -> n_ra - 1`` and
    ``n_rb -> n_rb + 1`` in the row ``r`` of ``i``'s cluster, so only the
    members ``h ≠ i`` of that row see ``overlap[a, h]`` and ``overlap[b, h]``
    change, by ``2 w_s`` times a difference of ``gain`` at their counts
    without ``h`` (one less in ``h``'s own slot): ``O(Σ_s |k_s(i)|)``.
    Call it before the table changes.
    """
    for s in range(rows.shape[1]):
        r = rows[i, s]
        w2 = double_weights[s]
        ca = _count(r, a, entries, n_entries)
        cb = _count(r, b, entries, n_entries)
        a_own = w2 * (gain[ca - 2] - gain[ca - 1]) if ca >= 2 else 0.0
        a_other = w2 * (gain[ca - 1] - gain[ca])
        b_own = w2 * (gain[cb] - gain[cb - 1]) if cb >= 1 else 0.0
        b_other = w2 * (gain[cb + 1] - gain[cb])
        for t in range(member_start[r], member_start[r + 1]):
            h = members[t]
            if h != i:
                overlap[a, h] += a_own if labels[h] == a else a_other
                overlap[b, h] += b_own if labels[h] == b else b_other


@jit
def _table_term(draw_of_row, weights, entries, n_entries, sizes, ftab, size_tab):
    """``T = κ Σ_l f(m_l) - 2 Σ_s w_s Σ_kl f(n^s_kl)`` (:func:`_candidate_term`) from the sparse table and the sizes."""
    total = 0.0
    for size in sizes:
        total += size_tab[size]
    for r in range(n_entries.shape[0]):
        acc = 0.0
        for j in range(n_entries[r]):
            acc += ftab[entries[r, j, 1]]
        total -= 2.0 * weights[draw_of_row[r]] * acc
    return total


@jit
def _best_slot(cost, sizes, current, n_slots, tol):
    """Where item ``i``, now in slot ``current``, goes: the lowest ``cost``, if it beats ``current``'s by ``tol``.

    Every empty slot is the same "new cluster": if that wins and ``i`` is
    alone in ``current``, ``i`` stays; otherwise the first empty slot is taken.
    """
    best = current
    for l in range(n_slots):
        if cost[l] < cost[best] - tol:
            best = l
    if best != current and sizes[best] == 0:
        if sizes[current] == 1:
            return current
        for l in range(n_slots):
            if sizes[l] == 0:
                return l
    return best


@jit
def _start(rows, n_rows, double_weights, gain, size_tab, labels, order, sequential):
    """The start of a run and its table: ``(labels, entries, n_entries, sizes, n_used)``.

    ``sequential``: the items join one at a time in ``order``, each the slot
    (existing or new) that minimises the loss of the items placed so far,
    ``argmin_l κ [f(m_l + 1) - f(m_l)] - overlap_l`` with :func:`_overlaps`
    (``size_tab = κ f``, :func:`_size_table`);
    otherwise they take their ``labels`` (slots).  Slots ``0 .. n_used - 1`` are in use.
    """
    n = rows.shape[0]
    sizes = np.zeros(n + 1, dtype=np.int64)
    entries = np.empty((n_rows, 8, 2), dtype=np.int32)
    n_entries = np.zeros(n_rows, dtype=np.int64)
    cost = np.empty(n + 1)
    out = labels.astype(np.int64)
    n_used = 0
    for t in range(n):
        i = order[t]
        if sequential:
            _overlaps(i, -1, rows, double_weights, entries, n_entries, gain, n_used + 1, cost)
            for l in range(n_used + 1):
                cost[l] = size_tab[sizes[l] + 1] - size_tab[sizes[l]] - cost[l]
            out[i] = np.argmin(cost[: n_used + 1])
        entries = _place(i, out[i], rows, entries, n_entries, sizes)
        n_used = max(n_used, out[i] + 1)
    return out, entries, n_entries, sizes, n_used


@jit
def _pear(pear, pairs, shared):
    """Fritsch & Ickstadt's (2009) PEAR of a candidate with ``pairs`` co-clustered pairs sharing similarity ``shared``.

    ``pear = (Π, P, ...)`` with ``Π = Σ_{i<j} π_ij`` and ``P = n (n - 1) / 2``:
    ``PEAR = (shared - pairs Π / P) / ((pairs + Π) / 2 - pairs Π / P)``, the
    adjusted Rand index with the co-clustering indicators of the draws replaced
    by their posterior means ``π_ij`` (0 when the denominator is).
    """
    chance = pairs * pear[0] / pear[1]
    denominator = 0.5 * (pairs + pear[0]) - chance
    return (shared - chance) / denominator if denominator > 0.0 else 0.0


@jit
def _slot_costs(i, current, sizes, overlap, size_tab, pear, n_slots, cost):
    """``cost[l]`` of item ``i`` (now in slot ``current``) joining slot ``l``, for ``l < n_slots``.

    Expected loss (``pear[1] = 0``): ``κ [f(m_l + 1) - f(m_l)] - overlap[l, i]``
    (``m_l`` without ``i``; ``size_tab = κ f``).  PEAR (``pear = (Π, P, I, S)``,
    the candidate's co-clustered pairs ``I`` and their similarity ``S``, with
    Binder's table, so that ``overlap[l, i] = 4 Σ_{j in l, j ≠ i} π_ij``):
    ``-P · PEAR`` of the partition after the move (:func:`_pear`), in units of
    pairs so that the search's tolerance means the same for every ``n``.
    """
    if pear[1] == 0.0:
        for l in range(n_slots):
            m = sizes[l] - 1 if l == current else sizes[l]
            cost[l] = size_tab[m + 1] - size_tab[m] - overlap[l, i]
        return
    pairs = pear[2] - (sizes[current] - 1)
    shared = pear[3] - 0.25 * overlap[current, i]
    for l in range(n_slots):
        m = sizes[l] - 1 if l == current else sizes[l]
        cost[l] = -pear[1] * _pear(pear, pairs + m, shared + 0.25 * overlap[l, i])


@jit
def _sweep(
    order, rows, double_weights, gain, criterion, members, member_start, labels, entries, n_entries, sizes, overlap, n_used
):
    """One sweep: each item in ``order`` moves to its best slot (:func:`_best_slot`), and the state follows.

    The cost of moving item ``i`` to slot ``l`` is :func:`_slot_costs`'s
    (``criterion = (size_tab, pear)``).
    Returns ``(entries, overlap, n_used, moved)``, the arrays reallocated when they grow.
    """
    size_tab, pear = criterion
    cost = np.empty(rows.shape[0] + 1)
    moved = False
    for t in range(order.shape[0]):
        i = order[t]
        current = labels[i]
        _slot_costs(i, current, sizes, overlap, size_tab, pear, n_used + 1, cost)
        best = _best_slot(cost, sizes, current, n_used + 1, 1e-9)
        if best == current:
            continue
        if pear[1] > 0.0:  # the pairs and shared similarity of the partition after the move
            pear[2] += sizes[best] - (sizes[current] - 1)
            pear[3] += 0.25 * (overlap[best, i] - overlap[current, i])
        _shift_overlaps(
            i, current, best, rows, double_weights, gain, entries, n_entries, members, member_start, labels, overlap
        )
        _remove(i, current, rows, entries, n_entries)
        sizes[current] -= 1
        if sizes[current] == 0:
            overlap[current] = 0.0  # exactly: no counts left in the slot
        entries = _place(i, best, rows, entries, n_entries, sizes)
        labels[i] = best
        moved = True
        if best == n_used:
            n_used += 1
            if n_used == overlap.shape[0]:
                grown = np.zeros((min(2 * n_used, rows.shape[0] + 1), rows.shape[0]))
                grown[:n_used] = overlap
                overlap = grown
    return entries, overlap, n_used, moved


@jit
def _salso_search(
    rows, draw_of_row, members, member_start, weights, labels, order, tables, sequential, max_sweeps
):
    """Greedy minimisation of the expected loss from one start (SALSO, Dahl et al. 2022).

    ``sequential``: build the start by adding the items one at a time in
    ``order``, each to the cluster (existing or new) that minimises the loss of
    the items placed so far; otherwise start from ``labels`` (slots).  Then
    sweep the items in ``order``, moving each to its best cluster (existing or
    new), until a sweep changes nothing or ``max_sweeps`` sweeps are done.
    A move is made only if it lowers the loss, so the search terminates.

    Moving item ``i`` to slot ``l`` changes the expected loss by ``scale``
    times ``cost[l] = f(m_l + 1) - f(m_l) - overlap[l, i]`` plus a constant,
    with ``m_l`` counted without ``i`` and ``overlap`` from :func:`_overlaps`
    (the module docstring's change of ``T`` minus ``2 (f(1) - f(0))``, the
    same for every ``l`` as ``Σ_s w_s = 1``).  The sparse contingency table
    of each draw with the candidate (:meth:`_Draws.search_index`) is kept up
    to date; the sequential start computes each item's overlaps from it.  The
    sweeps read them from the ``(slots, n)`` matrix ``overlap``, built once
    (:func:`_all_overlaps`) and kept up to date (:func:`_shift_overlaps`), so a
    sweep costs ``O(n × clusters)`` plus ``O(draws × cluster size)`` per
    move -- and few items move after the first sweep.
    ``tables = (f, κ f, pear)``: with ``pear = (Π, P)`` (:func:`_pear`) the
    sweeps maximise PEAR instead, from Binder's sequential allocation.
    Returns the labels (slot numbers, not canonical) and their ``T``
    (:func:`_table_term`), or ``-P · PEAR``.
    """
    ftab, size_tab, pear_constants = tables
    double_weights = 2.0 * weights
    gain = ftab[1:] - ftab[:-1] - (ftab[1] - ftab[0])
    out, entries, n_entries, sizes, n_used = _start(
        rows, member_start.shape[0] - 1, double_weights, gain, size_tab, labels, order, sequential
    )
    overlap = np.zeros((min(max(2 * n_used, 16), rows.shape[0] + 1), rows.shape[0]))
    _all_overlaps(draw_of_row, double_weights, entries, n_entries, members, member_start, gain, out, overlap)
    pear = np.zeros(4)
    if pear_constants.shape[0] > 0:  # I and S of the start: Binder's T is 2 I - 4 S - n
        pear[:2] = pear_constants
        for size in sizes:
            pear[2] += 0.5 * size * (size - 1)
        binder_term = _table_term(draw_of_row, weights, entries, n_entries, sizes, ftab, ftab)
        pear[3] = 0.25 * (2.0 * pear[2] - rows.shape[0] - binder_term)
    for _ in range(max_sweeps):
        entries, overlap, n_used, moved = _sweep(
            order, rows, double_weights, gain, (size_tab, pear), members, member_start, out, entries, n_entries, sizes,
            overlap, n_used,
        )
        if not moved:
            break
    if pear[1] > 0.0:
        return out, -pear[1] * _pear(pear, pear[2], pear[3])
    return out, _table_term(draw_of_row, weights, entries, n_entries, sizes, ftab, size_tab)


@jit(parallel=True)
def _salso_runs(rows, draw_of_row, members, member_start, weights, starts, orders, sequential, tables, max_sweeps):
    """:func:`_salso_search` from each start ``q`` (``starts[q]``, ``orders[q]``, ``sequential[q]``) on numba threads.

    ``tables = (f, κ f, pear)`` (:func:`_salso_search`).  Returns the labels found and their ``T``; the runs are independent, so
    the result does not depend on the number of threads.
    """
    found = np.empty_like(starts)
    terms = np.empty(starts.shape[0])
    for q in prange(starts.shape[0]):
        found[q], terms[q] = _salso_search(
            rows, draw_of_row, members, member_start, weights, starts[q], orders[q], tables, sequential[q], max_sweeps
        )
    return found, terms


def _size_table(ftab, a):
    """``κ f`` with ``κ = 2a / (1 + a)``: the candidate's size term, rescaled so that the table term keeps weight 2.

    ``D + a Σ_l f(m_l) - (1 + a) Σ_s w_s Σ_kl f(n^s_kl) = D + ((1 + a) / 2) T`` with
    ``T = κ Σ_l f(m_l) - 2 Σ_s w_s Σ_kl f(n^s_kl)``, so the search minimises ``T``
    with the kernels of ``a = 1`` and only the size term's table changed.
    """
    return ftab * (2.0 * a / (1.0 + a))


def _expected_loss_of(draw_set, labels, loss, a):
    """``mean_s L_a(z^(s), labels)`` over ``draw_set``: ``scale · (D + ((1 + a) / 2) T)`` (module docstring)."""
    ftab, scale = _loss_table(loss, draw_set.n)
    const = _draw_term(draw_set.draws, draw_set.weights, draw_set.n_clusters, ftab)
    canon = relabel(labels)
    term = _candidate_term(
        draw_set.draws, draw_set.weights, draw_set.n_clusters, canon, int(canon.max()) + 1, ftab, _size_table(ftab, a)
    )
    return max(scale * (const + 0.5 * (1.0 + a) * term), 0.0)


@announced("expected_loss")
def expected_loss(idata, partition, loss="VI", var_name="z", items=None, a=1.0):
    """Posterior expected loss ``mean_s L_a(z^(s), partition)`` of a candidate partition.

    ``loss="VI"``: Variation of Information in bits (see :func:`~pymc_partitions.summary.vi_distance`);
    ``loss="Binder"``: number of item pairs on which the two partitions disagree
    (Binder's loss with equal unit costs, ``Σ_{i<j} |1(z_i = z_j) - 1(ĉ_i = ĉ_j)|``).
    ``a`` weighs the two kinds of error (module docstring, "generalised
    losses"): ``a = 1`` is the plain loss.  The mean runs over all posterior
    draws (chains pooled).

    Parameters
    ----------
    idata : arviz.InferenceData or xarray.DataTree
    partition : array_like of int, shape (m,)
        Candidate labels for the ``m`` items (``m = n`` or ``len(items)``).
    loss : {"VI", "Binder"}
    var_name : str
    items : sequence of int, optional
        Evaluate on the partitions restricted to these items.
    a : float
        Weight (> 0) of joining what the draws separate, against 1 for
        separating what they join.

    Returns
    -------
    float
    """
    check_idata(idata)
    loss = check_choice("loss", loss, LOSSES)
    a = check_positive_number("a", a, "the weight of joining what the draws separate")
    draws = draws_of_items(partition_draws(idata, var_name, "expected_loss"), items)
    candidate = check_label_vector("partition", partition, draws.shape[1])
    return float(_expected_loss_of(_Draws(draws), candidate, loss, a))


@announced("point_partition")
def point_partition(
    idata, loss="PEAR", var_name="z", n_starts=10, max_sweeps=50, random_seed=None, items=None, a=1.0
):
    """Point estimate of the partition: PEAR's maximiser, or the minimiser of a posterior expected loss.

    ``loss="PEAR"`` (the default) maximises the posterior expected adjusted
    Rand index of Fritsch & Ickstadt (2009) (:func:`_pear`: the adjusted Rand
    index with the draws' co-clustering indicators replaced by the similarity
    ``π_ij``); ``"VI"`` and ``"Binder"`` minimise ``mean_s L_a(z^(s), ĉ)`` over
    partitions ``ĉ`` with ``L`` the Variation of Information (Meilă 2007; the
    exact expected VI over the draws, not Wade & Ghahramani's 2018 lower
    bound) or Binder's loss (Binder 1978), with the weight ``a`` of the two
    kinds of error.  See :func:`expected_loss` and the module docstring.

    Why PEAR by default (``docs/benchmarks.md``, "Which point partition"): where
    the draws agree the three coincide; where they disagree about which items
    go together (overlapping clusters), VI's minimiser merges -- on an
    overlapping Poisson regression with three groups it is the single cluster,
    which it really is (``expected_loss`` of one cluster is below that of the
    true groups) -- and Binder's splits the uncertain items into hundreds of
    singletons, while PEAR keeps the large groups (ARI to the truth above
    that of classifying each item with the true parameters).  PEAR corrects
    for chance, so a partition gains nothing from being coarse or fine.

    The estimate is checked against the draws: with at least ``WARN_MIN_ITEMS``
    items, if its number of clusters of at least 1 % of the items (``labels.large_cluster_size``) lies
    outside the draws' 90 % interval of that count, a ``UserWarning`` says so.
    :func:`~pymc_partitions.summary.partition_uncertainty` gives its credible
    ball and each cluster's certainty.

    The search follows SALSO (Dahl, Johnson & Müller 2022): each of
    ``n_starts`` runs starts either from a posterior draw (the most frequent
    distinct draw first, then draws chosen at random) or from a sequential
    allocation of the items in random order (each item joins the cluster,
    existing or new, that minimises the loss of the items placed so far); the
    runs alternate between the two; one more run starts from the partition
    with a single cluster (where a loss that merges under uncertainty, such as
    VI, often has its minimum).  Each run then sweeps the items in random
    order, moving each to the cluster (existing or new) that lowers the
    expected loss most, until a sweep changes nothing.  The best run wins.  The
    runs are independent and run on numba's threads.  Deciding an item's move
    costs ``O(clusters)`` and making it ``O(Σ_s |cluster of the item in draw s|)``
    (``docs/exactness.md``, "Point estimates"); a sequential allocation costs
    ``O(n × distinct draws × clusters sharing items)``.

    Parameters
    ----------
    idata : arviz.InferenceData or xarray.DataTree
        ``idata["posterior"][var_name]`` with dims (chain, draw, n).
    loss : {"PEAR", "VI", "Binder"}
    var_name : str
    n_starts : int
        Number of greedy runs (>= 1).
    max_sweeps : int
        Maximum number of sweeps per run (>= 1).
    random_seed : int, numpy Generator or None
        Makes the search reproducible.
    items : sequence of int, optional
        Estimate the partition of these items only (the draws restricted to them).
    a : float
        Weight (> 0) of joining item pairs the draws separate, against 1 for
        separating pairs they join (module docstring, "generalised losses"):
        ``a > 1`` gives more clusters.

    Returns
    -------
    ndarray of int32, shape (m,)
        Canonical labels of the estimate.

    Examples
    --------
    >>> import arviz as az, numpy as np
    >>> rng = np.random.default_rng(0)
    >>> truth = np.repeat([0, 1, 2], 5)
    >>> draws = np.tile(truth, (1, 40, 1))
    >>> moved = rng.integers(0, 15, size=40)           # each draw misplaces one item
    >>> draws[0, np.arange(40), moved] = (truth[moved] + 1) % 3
    >>> idata = az.from_dict(posterior={"z": draws})
    >>> point_partition(idata, random_seed=1).tolist() == truth.tolist()
    True
    """
    check_idata(idata)
    loss = check_choice("loss", loss, CRITERIA)
    n_starts = check_positive_int("n_starts", n_starts)
    max_sweeps = check_positive_int("max_sweeps", max_sweeps)
    rng = check_random_seed("random_seed", random_seed)
    a = check_positive_number("a", a, "the weight of joining what the draws separate")
    draws = draws_of_items(partition_draws(idata, var_name, "point_partition"), items)
    draw_set = _Draws(draws)
    n = draw_set.n
    if loss == "PEAR" and a != 1.0:
        raise ValueError(f"a weighs the errors of an expected loss (VI or Binder); PEAR has no weight, got a = {a}")
    ftab, _ = _loss_table("Binder" if loss == "PEAR" else loss, n)
    pear = np.zeros(0)
    if loss == "PEAR":  # Π = Σ_{i<j} π_ij and P = n (n - 1) / 2 (_pear)
        pairs = 0.5 * np.arange(n + 2) * (np.arange(n + 2) - 1.0)
        pear = np.array([_draw_term(draw_set.draws, draw_set.weights, draw_set.n_clusters, pairs), pairs[n]])
    most_frequent = int(np.argmax(draw_set.weights))
    orders = np.empty((n_starts + 1, n), dtype=np.int64)
    starts = np.zeros((n_starts + 1, n), dtype=np.int64)  # the last run starts from one cluster
    sequential = np.arange(n_starts + 1) % 2 == 1
    sequential[n_starts] = False
    for start in range(n_starts):
        orders[start] = rng.permutation(n)
        if not sequential[start]:
            pick = most_frequent if start == 0 else int(rng.choice(draw_set.draws.shape[0], p=draw_set.weights))
            starts[start] = draw_set.draws[pick]
    orders[n_starts] = rng.permutation(n)
    items, *rows = draw_set.search_index()
    position = np.empty(n, dtype=np.int64)
    position[items] = np.arange(n)
    found, terms = _salso_runs(
        *rows, draw_set.weights, starts[:, items], position[orders], sequential, (ftab, _size_table(ftab, a), pear),
        max_sweeps,
    )
    estimate = relabel(found[np.argmin(terms)][position])  # the expected loss is scale * (constant + T)
    _warn_if_atypical(draws, estimate, loss)
    return estimate


def _warn_if_atypical(draws, estimate, loss):
    """Warn if ``estimate``'s number of large clusters lies outside the draws' 90 % interval of that count.

    Only from ``WARN_MIN_ITEMS`` items: on fewer, a cluster of 1 % is one or two items and the count says nothing.
    """
    if draws.shape[1] < WARN_MIN_ITEMS:
        return
    large = large_cluster_counts(np.ascontiguousarray(draws))
    low, high = (int(q) for q in np.quantile(large, [0.05, 0.95]))
    size = large_cluster_size(draws.shape[1])
    k = int(np.sum(np.bincount(estimate) >= size))
    if low <= k <= high:
        return
    warnings.warn(
        f"point_partition(loss={loss!r}) has {k} cluster(s) of at least {size} items, but 90 % of the posterior "
        f"draws have {low}-{high}: the estimate lies far from typical draws, which disagree about which items go "
        f"together.  Look at partition_uncertainty(idata, estimate) (each cluster's co-clustering certainty, the "
        f"credible ball) and plot_similarity(idata), and compare the criteria {', '.join(CRITERIA)}",
        UserWarning,
        stacklevel=3,
    )
