"""Exact prior draws of the partition priors, in numba (no PyMC, no PyTensor).

:func:`dirichlet_process_partition`, :func:`pitman_yor_partition`,
:func:`mixture_of_finite_mixtures_partition` and :func:`ngg_partition` each draw
a partition of ``n`` items as a canonical int32 label vector (labels in order of
first appearance, ``z[0] = 0``), with the parameterisations of
``pymc_partitions.priors`` and ``pymc_partitions.distributions.partitions``.

Seat the items in index order: item ``i+1`` *opens* a cluster or *joins* one.
Every partition has exactly one such sequence, and given that it joins, item
``i+1`` picks cluster ``c`` with probability ``(m_c + s)/(i + k s)`` (``k``
clusters so far; size shift ``s = 0`` DP, ``-sigma`` PY and NGG, ``gamma`` MFM).
A draw is the open/join *path*, then the joins seated by that rule
(:func:`_seat`, O(n K)).  The path:

* DP, PY: ``P(open | i, k) = (alpha + k sigma)/(i + alpha)``;
* MFM (Miller & Harrison 2018, Sec. 3.2): ``P(open | i, t) = w/(i + t gamma + w)``,
  ``w = gamma V_{i+1}(t+1)/V_{i+1}(t)``, O(k_max) per item (:func:`_mfm_v_ratio`);
* NGG given ``u``: ``p(Pi | u) ∝ theta^K prod_c (1 - sigma)_{m_c - 1}``,
  ``theta = alpha sigma (u + tau)^sigma`` (``papers/003_...``, eq. (4)), is not
  projective in ``n``, so the path is drawn by forward filtering
  ``F(i+1, k) = (i - k sigma) F(i, k) + theta F(i, k-1)``, ``F(1, 1) = theta``,
  and backward sampling (:func:`_ngg_openings`), truncated at an adaptive
  ``k_cap`` with ``P(K > k_cap) <= 2^-64``.  O(n k_cap) work, O(sqrt(n) k_cap) memory.

Derivations (path weights, the truncation bound, the rows held as ``exp(r) G``
without underflow, checkpointing; the constants below) and costs:
``docs/exactness.md``, "Prior draws".

References
----------
Miller, J. W. & Harrison, M. T. (2018). Mixture models with a prior on the
number of components. JASA 113(521), 340-356.
Lee, J. & Choi, S. (2015). Tree-guided MCMC inference for normalized random
measure mixture models. NIPS 2015 (``papers/003_...``), eq. (4).
"""

from __future__ import annotations

import math

import numpy as np

from pymc_partitions._jit import jit

FIRST_K_CAP = 64
"""First truncation level of the NGG forward filter."""

TRUNCATION_TOLERANCE = 2.0**-64
"""Largest accepted bound on ``P(K > k_cap)`` for the NGG draw."""

BAND = 64
"""Number of ``k`` values per row kept by the NGG backward pass."""

MIN_RATIO = 2.0**-1000
"""Smallest guaranteed ratio ``G[k]`` of the NGG forward filter (above the smallest normal float64, ``2^-1022``)."""


# --- checks at the boundary ----------------------------------------------------------------


@jit
def _check_n(n):
    """``ValueError`` unless ``n >= 1``."""
    if n < 1:
        raise ValueError("n must be a positive integer (the number of items)")


# --- seating the joins, shared by every prior ------------------------------------------------


@jit
def _pick_cluster(sizes, k, target, shift):
    """First ``c`` with ``sum_{c' <= c} (m_c' + shift) > target``, ``target`` uniform on ``[0, i + k shift)``."""
    for c in range(k - 1):
        target -= sizes[c] + shift
        if target < 0.0:
            return c
    return k - 1


@jit
def _seat(opened, shift, rng):
    """Canonical labels from an open/join path: a joining item ``i+1`` picks ``c`` w.p. ``(m_c + shift)/(i + k shift)``."""
    n = len(opened)
    z = np.empty(n, dtype=np.int32)
    sizes = np.zeros(n, dtype=np.int64)
    k = 0
    for i in range(n):
        if opened[i]:
            c = k
            k += 1
        else:
            c = _pick_cluster(sizes, k, rng.random() * (i + k * shift), shift)
        z[i] = c
        sizes[c] += 1
    return z


# --- DP and PY -----------------------------------------------------------------------------


@jit
def _crp_openings(n, alpha, sigma, rng):
    """Open/join path of the Chinese restaurant process: ``P(open | i, k) = (alpha + k sigma)/(i + alpha)``."""
    opened = np.zeros(n, dtype=np.bool_)
    opened[0] = True
    k = 1
    for i in range(1, n):
        if rng.random() * (i + alpha) < alpha + k * sigma:
            opened[i] = True
            k += 1
    return opened


@jit
def dirichlet_process_partition(n, alpha, rng):
    """Partition of ``n`` items from a Dirichlet process (Ewens distribution).

    ``p(Pi) = alpha^K Gamma(alpha)/Gamma(alpha + n) prod_c Gamma(m_c)``, drawn by the
    Chinese restaurant process: item ``i+1`` joins cluster ``c`` with weight
    ``m_c`` and opens a new one with weight ``alpha``.  O(n K).
    """
    _check_n(n)
    if not 0.0 < alpha < math.inf:
        raise ValueError("alpha must be a finite number > 0")
    return _seat(_crp_openings(n, alpha, 0.0, rng), 0.0, rng)


@jit
def pitman_yor_partition(n, alpha, sigma, rng):
    """Partition of ``n`` items from a Pitman-Yor process.

    ``p(Pi) = prod_{k<K}(alpha + k sigma)/(alpha + 1)_{n-1} prod_c (1 - sigma)_{m_c - 1}``,
    drawn sequentially: item ``i+1`` joins cluster ``c`` with weight
    ``m_c - sigma`` and opens a new one with weight ``alpha + K sigma``.  O(n K).
    """
    _check_n(n)
    if not 0.0 <= sigma < 1.0:
        raise ValueError("sigma must be in [0, 1)")
    if not -sigma < alpha < math.inf:
        raise ValueError("alpha must be a finite number > -sigma")
    return _seat(_crp_openings(n, alpha, sigma, rng), -sigma, rng)


# --- mixture of finite mixtures ------------------------------------------------------------


@jit
def _mfm_base(gamma, log_k_prior):
    """``log[k! Gamma(gamma k) p(k)]`` for ``k = 1..k_max`` (the ``t``- and ``i``-free part of ``log b_k``)."""
    base = np.empty(len(log_k_prior))
    for j in range(len(log_k_prior)):
        k = j + 1
        base[j] = math.lgamma(k + 1.0) + math.lgamma(gamma * k) + log_k_prior[j]
    return base


@jit
def _mfm_v_ratio(m, t, gamma, base):
    """``V_m(t+1)/V_m(t) = sum_{k>=t} (k-t) b_k / sum_{k>=t} b_k``.

    ``b_k = k!/(k-t)! Gamma(gamma k)/Gamma(gamma k + m) p(k)`` are the terms of
    ``V_m(t)`` (Miller & Harrison 2018, eq. (3.2); ``priors.mfm_log_v_table``).
    One pass over ``k`` with a running maximum of ``log b_k``.
    """
    peak = -math.inf
    total = 0.0
    weighted = 0.0
    for k in range(t, len(base) + 1):
        log_b = base[k - 1] - math.lgamma(k - t + 1.0) - math.lgamma(gamma * k + m)
        if log_b == -math.inf:
            continue
        if log_b > peak:
            rescale = math.exp(peak - log_b)
            total *= rescale
            weighted *= rescale
            peak = log_b
        b = math.exp(log_b - peak)
        total += b
        weighted += (k - t) * b
    return weighted / total


@jit
def _mfm_openings(n, gamma, log_k_prior, rng):
    """Open/join path of the MFM: ``P(open | i, t) = w / (i + t gamma + w)``, ``w = gamma V_{i+1}(t+1)/V_{i+1}(t)``."""
    base = _mfm_base(gamma, log_k_prior)
    opened = np.zeros(n, dtype=np.bool_)
    opened[0] = True
    t = 1
    for i in range(1, n):
        w = gamma * _mfm_v_ratio(i + 1, t, gamma, base)
        if rng.random() * (i + t * gamma + w) < w:
            opened[i] = True
            t += 1
    return opened


@jit
def mixture_of_finite_mixtures_partition(n, gamma, log_k_prior, rng):
    """Partition of ``n`` items from a mixture of finite mixtures (Miller & Harrison 2018).

    ``p(Pi) = V_n(K) prod_c gamma^(m_c)`` with
    ``V_n(t) = sum_{k>=t} k!/(k-t)! Gamma(gamma k)/Gamma(gamma k + n) p(k)`` and
    ``log_k_prior[j] = log p(k = j + 1)``.  Drawn by the MFM restaurant process
    (their Sec. 3.2): item ``i+1`` joins cluster ``c`` with weight ``m_c + gamma`` and
    opens a new one with weight ``gamma V_{i+1}(t+1)/V_{i+1}(t)``.  O(n k_max).
    """
    _check_n(n)
    if not 0.0 < gamma < math.inf:
        raise ValueError("gamma must be a finite number > 0")
    if len(log_k_prior) == 0 or np.max(log_k_prior) == -math.inf:
        raise ValueError("log_k_prior must hold log p(k) for k = 1..k_max with some p(k) > 0")
    return _seat(_mfm_openings(n, gamma, log_k_prior, rng), gamma, rng)


# --- NGG given u: forward filter, backward sampling ----------------------------------------


@jit
def _reset_ratios(r, ratios, theta_rho, top, theta):
    """Row held entirely in ``r``: ``G[k] = 1`` for ``k <= top``, 0 above; ``theta_rho[k] = theta exp(r[k-1] - r[k])``.

    Returns ``max_k theta_rho[k]``.
    """
    ratios[0] = 0.0
    theta_rho[0] = theta_rho[1] = 0.0
    ratios[1] = 1.0
    theta_rho_max = 0.0
    for k in range(2, len(r)):
        ratios[k] = 1.0 if k <= top else 0.0
        theta_rho[k] = theta * math.exp(r[k - 1] - r[k])
        theta_rho_max = max(theta_rho_max, theta_rho[k])
    return theta_rho_max


@jit
def _fold(r, ratios, theta_rho, top, theta):
    """Fold the ratios into the log reference: ``r[k] += log G[k]``, then ``G = 1``.

    ``r`` is shifted to ``max r = 0`` and set to ``r[top]`` above ``top``.
    Returns ``max_k theta_rho[k]`` of the new reference.
    """
    peak = -math.inf
    for k in range(1, top + 1):
        r[k] += math.log(ratios[k])
        peak = max(peak, r[k])
    for k in range(1, len(r)):
        r[k] = r[k] - peak if k <= top else r[top]
    return _reset_ratios(r, ratios, theta_rho, top, theta)


@jit
def _row_bounds(i, k_cap, sigma, theta, theta_rho_max):
    """``(growth, shrink)`` of the step from row ``i``, with ``G'`` the step divided by ``growth``.

    Then ``max G' <= max G`` and ``min G' >= shrink min G``: each new entry
    ``(i - k sigma) G[k] + theta_rho[k] G[k-1]`` is at most
    ``growth = i + max theta_rho`` times ``max G``, and at least
    ``i - min(i, k_cap) sigma`` (an entry with ``k <= i``) or ``theta`` (the new
    entry ``k = i + 1``, whose ``theta_rho`` is ``theta``) times ``min G``.
    """
    lowest = i - min(i, k_cap) * sigma
    if i < k_cap:
        lowest = min(lowest, theta)
    growth = i + theta_rho_max
    shrink = lowest / growth
    if not shrink >= MIN_RATIO:
        raise ValueError("ngg_partition: theta is too small or too large for float64 (one filter step spans 2^1000)")
    return growth, shrink


@jit
def _advance(ratios, ratios_next, theta_rho, i, sigma, scale):
    """Row ``i`` to ``i+1``: ``G'[k] = scale ((i - k sigma) G[k] + theta_rho[k] G[k-1])``.

    This is ``F(i+1, k) = (i - k sigma) F(i, k) + theta F(i, k-1)`` in the
    representation ``F ∝ exp(r) G``.  ``G[k] = 0`` for ``k > i``.
    """
    for k in range(1, min(i + 1, len(ratios) - 1) + 1):
        ratios_next[k] = scale * ((i - k * sigma) * ratios[k] + theta_rho[k] * ratios[k - 1])


@jit
def _join_probabilities(ratios, theta_rho, i, sigma, k_low, out):
    """``out[k - k_low] = P(item i+1 joins | k_{i+1} = k) = (i - k sigma) F(i, k) / F(i+1, k)``.

    For ``k_low <= k <= min(k_low + len(out) - 1, i + 1, k_cap)``.
    """
    for k in range(k_low, min(k_low + len(out) - 1, i + 1, len(ratios) - 1) + 1):
        join = (i - k * sigma) * ratios[k]
        out[k - k_low] = join / (join + theta_rho[k] * ratios[k - 1])


@jit
def _forward_filter(n, k_cap, theta, sigma, block, checkpoints):
    """Rows ``F(1, .) .. F(n, .)`` for ``k <= k_cap``; returns ``(r, A)`` at row ``n``.

    ``r`` is row ``n`` folded (``F(n, k) ∝ exp(r[k])``) and ``A`` the bound on the
    weight above ``k_cap`` in units of ``exp(r[k_cap])``.  The folded ``r`` of
    rows ``1, 1 + block, 1 + 2 block, ...`` go to ``checkpoints``.  Between
    folds ``max G <= 1`` and ``min G >= headroom >= MIN_RATIO`` (:func:`_row_bounds`).
    """
    r = np.zeros(k_cap + 1)
    ratios, ratios_next, theta_rho = np.zeros(k_cap + 1), np.zeros(k_cap + 1), np.empty(k_cap + 1)
    theta_rho_max = _reset_ratios(r, ratios, theta_rho, 1, theta)
    headroom = 1.0
    tail = 0.0
    for i in range(1, n):
        top = min(i, k_cap)
        growth, shrink = _row_bounds(i, k_cap, sigma, theta, theta_rho_max)
        if (i - 1) % block == 0 or headroom * shrink < MIN_RATIO:
            if top == k_cap:
                tail /= ratios[k_cap]
            theta_rho_max = _fold(r, ratios, theta_rho, top, theta)
            growth, shrink = _row_bounds(i, k_cap, sigma, theta, theta_rho_max)
            headroom = 1.0
            if (i - 1) % block == 0:
                checkpoints[(i - 1) // block] = r
        if top == k_cap:
            tail = ((i - (k_cap + 1) * sigma + theta) * tail + theta * ratios[k_cap]) / growth
        _advance(ratios, ratios_next, theta_rho, i, sigma, 1.0 / growth)
        headroom *= shrink
        ratios, ratios_next = ratios_next, ratios
    top = min(n, k_cap)
    if top == k_cap:
        tail /= ratios[k_cap]
    _fold(r, ratios, theta_rho, top, theta)
    return r, tail


@jit
def _truncation_bound(r, tail):
    """``A(n) / sum_{k <= k_cap} F(n, k)``, an upper bound on ``P(K > k_cap)``."""
    total = 0.0
    for k in range(1, len(r)):
        total += math.exp(r[k])
    return tail * math.exp(r[-1]) / total


@jit
def _block_join_probabilities(checkpoint, i_start, n_rows, k_low, theta, sigma, out):
    """``out[j]``: :func:`_join_probabilities` of row ``i_start + j`` from ``k_low``, ``j < n_rows``.

    Recomputed from the folded row ``i_start`` with the same steps and folds as
    :func:`_forward_filter`.
    """
    r = checkpoint.copy()
    k_cap = len(r) - 1
    ratios, ratios_next, theta_rho = np.zeros(k_cap + 1), np.zeros(k_cap + 1), np.empty(k_cap + 1)
    theta_rho_max = _reset_ratios(r, ratios, theta_rho, min(i_start, k_cap), theta)
    headroom = 1.0
    for i in range(i_start, i_start + n_rows):
        growth, shrink = _row_bounds(i, k_cap, sigma, theta, theta_rho_max)
        if headroom * shrink < MIN_RATIO:
            theta_rho_max = _fold(r, ratios, theta_rho, min(i, k_cap), theta)
            growth, shrink = _row_bounds(i, k_cap, sigma, theta, theta_rho_max)
            headroom = 1.0
        _join_probabilities(ratios, theta_rho, i, sigma, k_low, out[i - i_start])
        _advance(ratios, ratios_next, theta_rho, i, sigma, 1.0 / growth)
        headroom *= shrink
        ratios, ratios_next = ratios_next, ratios


@jit
def _sample_block_backward(join_probability, i_start, n_rows, k, k_low, opened, rng):
    """Given ``k_{i_start + n_rows} = k``, draw whether items ``i_start + n_rows, i_start + n_rows - 1, ...`` opened.

    Item ``i+1`` opened with probability ``1 - join_probability[i - i_start, k_{i+1} - k_low]``,
    and then ``k_i = k_{i+1} - 1``.  Stops when ``k`` leaves the band (``k < k_low``);
    returns ``(k, rows left)``.
    """
    for j in range(n_rows - 1, -1, -1):
        if k < k_low:
            return k, j + 1
        if rng.random() >= join_probability[j, k - k_low]:
            opened[i_start + j] = True
            k -= 1
    return k, 0


@jit
def _draw_cluster_count(r, rng):
    """``K`` with probability ``∝ exp(r[K])``, ``K = 1..len(r)-1``."""
    total = 0.0
    for k in range(1, len(r)):
        total += math.exp(r[k])
    target = rng.random() * total
    for k in range(1, len(r) - 1):
        target -= math.exp(r[k])
        if target < 0.0:
            return k
    return len(r) - 1


@jit
def _filter_to_tolerance(n, theta, sigma, block):
    """Forward filter with ``k_cap = FIRST_K_CAP, 2 FIRST_K_CAP, ...`` (at most ``n``).

    Stops at the first ``k_cap`` whose bound on ``P(K > k_cap)`` is at most
    ``TRUNCATION_TOLERANCE``; returns that pass's checkpoints and folded last row ``r``.
    """
    n_blocks = (n - 1 + block - 1) // block
    k_cap = min(n, FIRST_K_CAP)
    while True:
        checkpoints = np.empty((n_blocks, k_cap + 1))
        r, tail = _forward_filter(n, k_cap, theta, sigma, block, checkpoints)
        if k_cap == n or _truncation_bound(r, tail) <= TRUNCATION_TOLERANCE:
            return checkpoints, r
        k_cap = min(2 * k_cap, n)


@jit
def _sample_openings_backward(checkpoints, r, n, theta, sigma, block, band, rng):
    """Draw ``K ∝ exp(r)``, then which items opened, block by block from the last.

    Going backwards ``k`` only decreases, so a block's join probabilities are
    kept for the ``band`` values of ``k`` at and below the current one; when
    the path leaves the band, the block's remaining rows are recomputed for the
    next band (the decisions already drawn stand).  The band changes which
    probabilities are kept, never their values: the draw does not depend on it.
    """
    opened = np.zeros(n, dtype=np.bool_)
    opened[0] = True
    k = _draw_cluster_count(r, rng)
    join_probability = np.empty((block, band))
    for b in range(len(checkpoints) - 1, -1, -1):
        i_start = 1 + b * block
        n_rows = min(n, i_start + block) - i_start
        while n_rows > 0:
            k_low = max(1, k - band + 1)
            _block_join_probabilities(checkpoints[b], i_start, n_rows, k_low, theta, sigma, join_probability)
            k, n_rows = _sample_block_backward(join_probability, i_start, n_rows, k, k_low, opened, rng)
    return opened


@jit
def _ngg_openings(n, theta, sigma, rng):
    """Open/join path of ``p(Pi | u)``: forward filter truncated at an adaptive ``k_cap``, backward sampling by blocks."""
    block = int(math.ceil(math.sqrt(n)))
    checkpoints, r = _filter_to_tolerance(n, theta, sigma, block)
    return _sample_openings_backward(checkpoints, r, n, theta, sigma, block, BAND, rng)


@jit
def ngg_partition(n, alpha, sigma, tau, u, rng):
    """Partition of ``n`` items from a normalized generalized gamma process given its auxiliary ``u``.

    ``p(Pi | u) ∝ theta^K prod_c (1 - sigma)_{m_c - 1}`` with
    ``theta = alpha sigma (u + tau)^sigma`` (``papers/003_...`` eq. (4) at fixed
    ``u``).  Not projective in ``n``: the open/join path is drawn by forward
    filtering ``F(i+1, k) = (i - k sigma) F(i, k) + theta F(i, k-1)`` and backward
    sampling (``docs/exactness.md``, "Prior draws"), the joins by ``m_c - sigma``.  O(n k_cap) work,
    O(sqrt(n) k_cap) memory, ``P(K > k_cap) <= 2^-64``.
    """
    _check_n(n)
    if not 0.0 < alpha < math.inf:
        raise ValueError("alpha must be a finite number > 0")
    if not 0.0 < sigma < 1.0:
        raise ValueError("sigma must be in (0, 1)")
    if not 0.0 <= tau < math.inf:
        raise ValueError("tau must be a finite number >= 0")
    if not 0.0 < u < math.inf:
        raise ValueError("u must be a finite number > 0")
    theta = alpha * sigma * (u + tau) ** sigma
    return _seat(_ngg_openings(n, theta, sigma, rng), -sigma, rng)
