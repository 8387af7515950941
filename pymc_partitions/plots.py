"""Plots of partition posteriors (matplotlib, ArviZ-style).

Every function takes the result of ``pm.sample`` (``InferenceData`` or
``DataTree``) or plain arrays, draws into ``ax`` (a new figure when ``ax`` is
``None``) and returns the axes.  None of them reads a label's value: clusters
are shown in order of decreasing size, which is a function of the partition.

- :func:`plot_similarity` -- the co-clustering matrix ``Pr(z_i = z_j | data)``,
  items grouped by a point partition, cluster boundaries marked;
- :func:`plot_n_clusters` -- the posterior of the number of clusters (bars per
  chain) and its trace;
- :func:`plot_partition` -- data coloured by a partition (2-D data, or the
  first two principal components), optionally shaded by each item's
  posterior probability of sitting with its cluster;
- :func:`plot_adjacency` -- a network's adjacency matrix reordered by a
  partition (the IRM view);
- :func:`plot_acceptance` -- acceptance of split and merge proposals over the
  draws, from the sample stats;
- :func:`plot_ppc` -- a posterior predictive check: each feature's marginal
  distribution and each pair's correlation in data replicated from the
  posterior, against the observed data's.

What needs only sample stats works with ``z`` left out of the trace
(``pm.sample(var_names=[...])``): :func:`plot_n_clusters` and
:func:`plot_acceptance` read ``partition_n_clusters``, ``partition_move`` and
``partition_accepted``; :func:`plot_similarity` uses the labels a step
recorded with ``keep_items``.  The others need the partition draws, or a
partition passed as an array; :func:`plot_ppc` also needs the model.
"""

from __future__ import annotations

import warnings

import numpy as np

from pymc_partitions import families
from pymc_partitions.families.spec import CODES
from pymc_partitions._validation import (
    check_adjacency,
    check_axes,
    check_chain_values,
    check_count,
    check_data_matrix,
    check_flag,
    check_idata,
    check_item_indices,
    check_label_vector,
    check_names,
    check_positive_int,
    check_random_seed,
    check_similarity_matrix,
    check_var_name,
    check_window,
)
from pymc_partitions.kernels.info import MOVE_NAMES, PROPOSALS
from pymc_partitions.labels import cluster_sizes, relabel
from pymc_partitions.summary import point_partition, posterior_similarity
from pymc_partitions.summary._idata import partition_draws, recorded_labels, scalar_stat
from pymc_partitions.summary.predictive import (
    DISCRETE_FAMILIES,
    choose_draws,
    draw_replicates,
    posterior_values,
    predictive_model,
)
from pymc_partitions.summary.similarity import _recorded_draws

__all__ = [
    "allocation_probability",
    "cluster_colors",
    "partition_order",
    "plot_acceptance",
    "plot_adjacency",
    "plot_n_clusters",
    "plot_partition",
    "plot_ppc",
    "plot_similarity",
]

MIN_ALPHA = 0.15
"""Opacity of an item whose probability of sitting with its cluster is 0 (:func:`plot_partition`)."""

DEFAULT_FEATURES = 6
"""Number of features :func:`plot_ppc` shows when ``features`` is not given (the first ones)."""

PPC_DRAWS = 50
"""Replicated data sets drawn by :func:`plot_ppc` when ``n_draws`` is not given (fewer if the posterior has fewer draws)."""

PPC_INTERVAL = 0.9
"""Probability of the central posterior predictive intervals drawn by :func:`plot_ppc`."""

MIN_BINS, MAX_BINS = 10, 40
"""Bounds on the number of histogram bins of a real-valued feature in :func:`plot_ppc` (and on discrete bins)."""


# --------------------------------------------------------------------------- helpers


def partition_order(partition, within=None):
    """The item order that lists a partition's clusters one after another, and their sizes.

    Clusters come by decreasing size (ties: the cluster whose first item comes
    first), items inside a cluster by decreasing ``within`` score (ties, and
    ``within=None``: by index).  Plots use it so that a cluster is a
    contiguous block of rows.

    Parameters
    ----------
    partition : array_like of int, shape (n,)
    within : array_like of float, shape (n,), optional
        A score per item, e.g. its degree in a network.

    Returns
    -------
    order : ndarray of int64, shape (n,)
        Item indices, cluster by cluster.
    sizes : ndarray of int64
        Cluster sizes in the order the clusters appear in ``order``.

    Examples
    --------
    >>> order, sizes = partition_order([1, 0, 1, 2, 0, 0])
    >>> order.tolist(), sizes.tolist()
    ([1, 4, 5, 0, 2, 3], [3, 2, 1])
    """
    labels = relabel(np.asarray(partition))
    n = labels.shape[0]
    sizes = cluster_sizes(labels, int(labels.max()) + 1).astype(np.int64)
    rank = np.empty_like(sizes)
    rank[np.argsort(-sizes, kind="stable")] = np.arange(sizes.shape[0])
    score = np.zeros(n) if within is None else -np.asarray(within, dtype=float)
    order = np.lexsort((np.arange(n), score, rank[labels]))
    return order.astype(np.int64), np.sort(sizes)[::-1]


def cluster_colors(n_clusters):
    """``n_clusters`` RGBA colours, one per cluster in order of decreasing size.

    Matplotlib's ``tab10`` for up to 10 clusters, ``tab20`` beyond; colours
    repeat after 20 clusters.

    Examples
    --------
    >>> cluster_colors(3).shape
    (3, 4)
    """
    import matplotlib.pyplot as plt

    cmap = plt.get_cmap("tab10" if n_clusters <= 10 else "tab20")
    return np.array([cmap(k % cmap.N) for k in range(n_clusters)])


def _new_axes(ax, count=1, figsize=None):
    """``ax`` checked, or the axes of a new figure (a list of ``count`` axes)."""
    axes = check_axes("ax", ax, count)
    if axes is not None:
        return axes
    import matplotlib.pyplot as plt

    _, new = plt.subplots(1, count, figsize=figsize, squeeze=False)
    return list(new[0])


def _point(idata, loss, var_name, random_seed, items=None):
    """The point partition of ``idata``, from ``z`` or, when ``z`` is out of the trace, from the recorded labels."""
    recorded = recorded_labels(idata, var_name)
    if recorded is None:
        return point_partition(idata, loss=loss, var_name=var_name, random_seed=random_seed, items=items)
    import arviz as az

    draws = _recorded_draws(*recorded, items, var_name)
    return point_partition(az.from_dict(posterior={var_name: draws[None]}), loss=loss, random_seed=random_seed)


def _draw_boundaries(ax, sizes, color="tab:red"):
    """Lines between consecutive blocks of ``sizes`` rows and columns of an image."""
    for edge in np.cumsum(sizes)[:-1] - 0.5:
        ax.axhline(edge, color=color, lw=0.8)
        ax.axvline(edge, color=color, lw=0.8)


def _label_items(ax, order, max_labels=40):
    """Tick labels with the original item indices when there are few items, none otherwise."""
    if len(order) <= max_labels:
        ticks = np.arange(len(order))
        ax.set_xticks(ticks, [str(i) for i in order], rotation=90, fontsize=7)
        ax.set_yticks(ticks, [str(i) for i in order], fontsize=7)
    else:
        ax.set_xticks([])
        ax.set_yticks([])


def _is_idata(value):
    return hasattr(value, "groups")


# --------------------------------------------------------------------------- plots


def plot_similarity(
    data, partition=None, *, items=None, loss="PEAR", var_name="z", random_seed=None, ax=None, cmap="Greys", colorbar=True
):
    """Posterior co-clustering matrix, items grouped by a point partition, cluster boundaries marked.

    Shows ``P[i, j] = Pr(z_i = z_j | data)`` (:func:`~pymc_partitions.posterior_similarity`)
    as an image, 0 white to 1 black.  Rows and columns follow
    :func:`partition_order` of ``partition``: clusters by decreasing size,
    items inside a cluster by decreasing mean similarity to the cluster's
    members (its core first), with red lines between clusters.  A
    well-identified partition shows dark squares on the diagonal and white
    elsewhere; grey off-diagonal blocks are clusters that the posterior
    merges in some draws.

    Parameters
    ----------
    data : InferenceData, DataTree or array (m, m)
        The result of ``pm.sample``, or a similarity matrix.
    partition : array_like of int, optional
        The partition to order by (of the ``m`` items shown).  Default: the
        point partition minimising the posterior expected ``loss``
        (:func:`~pymc_partitions.point_partition`) for ``idata``; no
        reordering for a matrix.
    items : sequence of int, optional
        Show these items only (``idata`` only; default all items, or the items
        recorded with ``keep_items`` when ``z`` is not in the trace).
    loss : {"PEAR", "VI", "Binder"}
        Loss of the default point partition.
    var_name : str
        Name of the partition variable.
    random_seed : int or None
        Seed of the point partition's search.
    ax : matplotlib Axes, optional
    cmap : str
        Colormap of the image.
    colorbar : bool
        Add a colorbar.

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> import arviz as az, numpy as np
    >>> z = np.array([[[0, 0, 1, 1], [0, 0, 1, 0]]])          # 1 chain, 2 draws, 4 items
    >>> ax = plot_similarity(az.from_dict(posterior={"z": z}))
    >>> ax.images[0].get_array().tolist()
    [[1.0, 1.0, 0.5, 0.0], [1.0, 1.0, 0.5, 0.0], [0.5, 0.5, 1.0, 0.5], [0.0, 0.0, 0.5, 1.0]]
    """
    check_flag("colorbar", colorbar)
    if _is_idata(data):
        check_var_name(var_name)
        matrix = posterior_similarity(data, items=items, var_name=var_name)
        if partition is None:
            partition = _point(data, loss, var_name, random_seed, items)
            title = f"posterior similarity, items ordered by the {loss} point partition"
        else:
            title = "posterior similarity, items ordered by the given partition"
    else:
        if items is not None:
            raise ValueError("items applies to idata only; index the similarity matrix instead")
        matrix = check_similarity_matrix("data", data)
        title = "posterior similarity" + ("" if partition is None else ", items ordered by the given partition")
    m = matrix.shape[0]
    if partition is None:
        order, sizes = np.arange(m), np.array([m])
    else:
        labels = relabel(check_label_vector("partition", partition, m))
        sizes_by_label = np.bincount(labels)
        cohesion = np.array([matrix[i, labels == labels[i]].sum() / sizes_by_label[labels[i]] for i in range(m)])
        order, sizes = partition_order(labels, within=cohesion)
    (axes,) = _new_axes(ax, figsize=(5.5, 4.5))
    image = axes.imshow(matrix[np.ix_(order, order)], cmap=cmap, vmin=0.0, vmax=1.0, interpolation="nearest")
    if partition is not None:
        _draw_boundaries(axes, sizes)
        title += f" ({len(sizes)} clusters)"
    _label_items(axes, order)
    axes.set_xlabel("item")
    axes.set_ylabel("item")
    axes.set_title(title, fontsize=10)
    if colorbar:
        axes.figure.colorbar(image, ax=axes, label=r"$\Pr(z_i = z_j \mid \mathrm{data})$")
    return axes


def plot_n_clusters(data, *, var_name="z", ax=None):
    """Posterior of the number of clusters: bars per chain, and the trace.

    Left: for each chain, the fraction of its draws with ``K`` clusters, as
    side-by-side bars per ``K`` (chains that disagree point at poor mixing).
    Right: ``K`` against the draw, one line per chain.

    Parameters
    ----------
    data : InferenceData, DataTree or array (chain, draw)
        The result of ``pm.sample`` (reads the sample stat
        ``partition_n_clusters``, or counts the clusters of ``z``), or the
        numbers of clusters (one chain: shape (draw,)).
    var_name : str
        Name of the partition variable (used only when the stat is absent).
    ax : sequence of two matplotlib Axes, optional

    Returns
    -------
    ndarray of two matplotlib Axes
        The bars and the trace.

    Examples
    --------
    >>> import numpy as np
    >>> k = np.array([[3, 3, 4, 3], [4, 4, 4, 3]])     # 2 chains, 4 draws
    >>> bars, trace = plot_n_clusters(k)
    >>> [float(p.get_height()) for p in bars.patches]       # chain 0: K = 3, 4; chain 1: K = 3, 4
    [0.75, 0.25, 0.25, 0.75]
    """
    if _is_idata(data):
        check_var_name(var_name)
        values = scalar_stat(check_idata(data), "partition_n_clusters")
        if values is None:
            draws = partition_draws(data, var_name, "plot_n_clusters")
            n_chains = data["posterior"][var_name].shape[0]
            values = (draws.max(axis=1) + 1).reshape(n_chains, -1)
    else:
        values = data
    k = check_chain_values("n_clusters", values).astype(np.int64)
    bars, trace = _new_axes(ax, count=2, figsize=(10, 3.5))
    n_chains = k.shape[0]
    support = np.arange(k.min(), k.max() + 1)
    width = 0.8 / n_chains
    for c in range(n_chains):
        color = f"C{c % 10}"
        freq = np.array([(k[c] == value).mean() for value in support])
        bars.bar(support - 0.4 + width * (c + 0.5), freq, width=width, color=color, label=f"chain {c}")
        trace.plot(np.arange(k.shape[1]), k[c], color=color, lw=0.8, label=f"chain {c}")
    bars.set_xticks(support)
    bars.set_xlabel("number of clusters")
    bars.set_ylabel("fraction of the chain's draws")
    bars.set_title("posterior of the number of clusters", fontsize=10)
    if n_chains > 1:
        bars.legend(fontsize=8)
    trace.set_xlabel("draw")
    trace.set_ylabel("number of clusters")
    trace.set_title("trace", fontsize=10)
    return np.array([bars, trace], dtype=object)


def _projection(points):
    """2-D coordinates and axis labels: the data for d = 2, the first two principal components for d > 2."""
    d = points.shape[1]
    if d == 2:
        return points, ("x[0]", "x[1]")
    centred = points - points.mean(axis=0)
    _, singular, vt = np.linalg.svd(centred, full_matrices=False)
    share = singular**2 / max(np.sum(singular**2), np.finfo(float).tiny)
    coords = centred @ vt[:2].T
    if coords.shape[1] < 2:
        coords = np.column_stack([coords, np.zeros(len(coords))])
    return coords, tuple(f"PC {i + 1} ({100 * share[i]:.0f}% of variance)" for i in range(2))


def allocation_probability(similarity, partition):
    """Each item's mean co-clustering probability with the other members of its cluster.

    For item ``i`` in cluster ``c`` of ``partition``,
    ``p_i = mean_{j in c, j != i} P[i, j]``; for an item alone in its cluster,
    ``p_i = 1 - max_{j != i} P[i, j]`` (an upper bound on the probability that
    it is alone).  :func:`plot_partition` shades items by it.

    Examples
    --------
    >>> P = np.array([[1.0, 0.9, 0.1], [0.9, 1.0, 0.2], [0.1, 0.2, 1.0]])
    >>> allocation_probability(P, [0, 0, 1]).round(2).tolist()
    [0.9, 0.9, 0.8]
    """
    labels = relabel(np.asarray(partition))
    p = np.empty(labels.shape[0])
    for i in range(labels.shape[0]):
        others = labels == labels[i]
        others[i] = False
        if others.any():
            p[i] = similarity[i, others].mean()
        else:
            rest = np.delete(similarity[i], i)
            p[i] = 1.0 - rest.max() if rest.size else 1.0
    return p


def plot_partition(
    data, partition=None, *, idata=None, uncertainty=False, loss="PEAR", var_name="z", random_seed=None, ax=None, legend=True
):
    """Data coloured by a partition: a scatter plot of 2-D data or of its first two principal components.

    One colour per cluster, clusters by decreasing size (:func:`cluster_colors`).
    With ``uncertainty=True`` each item's opacity is its posterior probability
    of sitting with its cluster (:func:`allocation_probability`, at least
    ``MIN_ALPHA``): faint points are the items the posterior is unsure about.
    Data with more than two features are projected on their first two
    principal components (centred, not scaled); 1-D data are shown against
    the cluster.

    Parameters
    ----------
    data : array (n, d)
        The observed data.
    partition : array_like of int, shape (n,), optional
        Default: the point partition of ``idata`` minimising the expected ``loss``.
    idata : InferenceData or DataTree, optional
        Needed for the default partition and for ``uncertainty``.
    uncertainty : bool
        Shade items by :func:`allocation_probability`.
    loss : {"PEAR", "VI", "Binder"}
    var_name : str
    random_seed : int or None
        Seed of the point partition's search.
    ax : matplotlib Axes, optional
    legend : bool
        Label each cluster with its size.

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> X = np.array([[0.0, 0.1], [0.2, 0.0], [3.0, 3.1], [3.2, 2.9], [3.1, 3.0]])
    >>> ax = plot_partition(X, [1, 1, 0, 0, 0])
    >>> [c.get_label() for c in ax.collections]
    ['cluster 1 (3 items)', 'cluster 2 (2 items)']
    """
    points = check_data_matrix("data", data)
    n = points.shape[0]
    check_flag("uncertainty", uncertainty)
    check_flag("legend", legend)
    if idata is not None:
        check_idata(idata)
        check_var_name(var_name)
    if partition is None:
        if idata is None:
            raise ValueError("plot_partition needs a partition or idata (to compute the point partition)")
        partition = point_partition(idata, loss=loss, var_name=var_name, random_seed=random_seed)
    labels = relabel(check_label_vector("partition", partition, n))
    alpha = np.ones(n)
    if uncertainty:
        if idata is None:
            raise ValueError("uncertainty=True needs idata (the posterior draws of the partition)")
        similarity = posterior_similarity(idata, var_name=var_name)
        if similarity.shape[0] != n:
            raise ValueError(f"idata's partition has {similarity.shape[0]} items but data has {n} rows")
        alpha = np.maximum(allocation_probability(similarity, labels), MIN_ALPHA)
    order, sizes = partition_order(labels)
    colors = cluster_colors(len(sizes))
    (axes,) = _new_axes(ax, figsize=(5.5, 4.5))
    if points.shape[1] == 1:
        coords, names = None, ("x", "cluster")
    else:
        coords, names = _projection(points)
    start = 0
    for rank, size in enumerate(sizes):
        members = order[start : start + size]
        start += size
        face = np.tile(colors[rank], (size, 1))
        face[:, 3] = alpha[members]
        xy = coords[members] if coords is not None else np.column_stack([points[members, 0], np.full(size, rank + 1.0)])
        noun = "item" if size == 1 else "items"
        axes.scatter(xy[:, 0], xy[:, 1], c=face, s=18, edgecolors="none", label=f"cluster {rank + 1} ({size} {noun})")
    axes.set_xlabel(names[0])
    axes.set_ylabel(names[1])
    title = f"{len(sizes)} clusters"
    axes.set_title(title + (", opacity: Pr(item with its cluster)" if uncertainty else ""), fontsize=10)
    if legend:
        handles = axes.legend(fontsize=7, loc="best", markerscale=1.2)
        for handle in handles.legend_handles:
            handle.set_alpha(1.0)
    return axes


def plot_adjacency(
    adjacency, partition=None, *, idata=None, loss="PEAR", var_name="z", random_seed=None, ax=None, cmap="Greys"
):
    """A network's adjacency matrix with its vertices grouped by a partition (the IRM view).

    Rows and columns follow :func:`partition_order`: blocks by decreasing
    size, vertices inside a block by decreasing degree, red lines between
    blocks.  Under the Infinite Relational Model every rectangle between two
    lines has its own edge density.

    Parameters
    ----------
    adjacency : array (n, n)
        Symmetric 0/1 matrix with zero diagonal.
    partition : array_like of int, shape (n,), optional
        Default: the point partition of ``idata`` minimising the expected ``loss``.
    idata : InferenceData or DataTree, optional
    loss : {"PEAR", "VI", "Binder"}
    var_name : str
    random_seed : int or None
    ax : matplotlib Axes, optional
    cmap : str

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> A = np.array([[0, 0, 1, 0], [0, 0, 0, 1], [1, 0, 0, 0], [0, 1, 0, 0]])
    >>> ax = plot_adjacency(A, [0, 1, 0, 1])
    >>> ax.images[0].get_array().astype(int).tolist()
    [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]]
    """
    matrix = check_adjacency("adjacency", adjacency)
    if partition is None:
        if idata is None:
            raise ValueError("plot_adjacency needs a partition or idata (to compute the point partition)")
        check_idata(idata)
        check_var_name(var_name)
        partition = point_partition(idata, loss=loss, var_name=var_name, random_seed=random_seed)
    labels = check_label_vector("partition", partition, matrix.shape[0])
    order, sizes = partition_order(labels, within=matrix.sum(axis=1))
    (axes,) = _new_axes(ax, figsize=(5.5, 5.5))
    axes.imshow(matrix[np.ix_(order, order)], cmap=cmap, vmin=0.0, vmax=1.0, interpolation="nearest")
    _draw_boundaries(axes, sizes)
    _label_items(axes, order)
    axes.set_xlabel("vertex")
    axes.set_ylabel("vertex")
    axes.set_title(f"adjacency matrix by partition ({len(sizes)} blocks)", fontsize=10)
    return axes


def plot_acceptance(data, *, window=None, ax=None):
    """Acceptance of each proposal type over the draws, from the sample stats.

    For every proposal type in ``partition_move`` (``split``, ``merge``; see
    ``kernels.info``), the fraction of its proposals accepted
    (``partition_accepted``) among those made in the last ``window`` draws of
    all chains, plotted against the draw.  The legend gives each type's
    overall rate.  A rate that drifts over the draws means the chains had
    not settled.

    Parameters
    ----------
    data : InferenceData or DataTree
        The result of ``pm.sample`` with a partition step that makes proposals
        (``GibbsStep`` makes none).
    window : int, optional
        Moving-window length in draws (default: a twentieth of the draws, at
        least 10).  The first ``window - 1`` points use the draws so far.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes

    Examples
    --------
    >>> import arviz as az
    >>> idata = az.from_dict(sample_stats={
    ...     "partition_move": np.array([[1, 2, 1, 2]]),
    ...     "partition_accepted": np.array([[True, False, False, False]])})
    >>> ax = plot_acceptance(idata, window=2)
    >>> [(line.get_label(), line.get_ydata().tolist()) for line in ax.lines]
    [('split: 1 of 2 accepted (50.0%)', [1.0, 1.0, 0.0, 0.0]), ('merge: 0 of 2 accepted (0.0%)', [nan, 0.0, 0.0, 0.0])]
    """
    check_idata(data)
    move = scalar_stat(data, "partition_move")
    accepted = scalar_stat(data, "partition_accepted")
    if move is None or accepted is None:
        raise ValueError(
            "plot_acceptance needs the sample stats partition_move and partition_accepted "
            "(recorded by the partition step methods of pymc_partitions)"
        )
    move = move.astype(np.int64)
    accepted = accepted.astype(bool)
    n_draws = move.shape[1]
    window = check_window(window, n_draws)
    codes = [code for code in PROPOSALS if np.any(move == code)]
    if not codes:
        raise ValueError("the trace holds no split or merge proposals (GibbsStep makes none): nothing to plot")
    (axes,) = _new_axes(ax, figsize=(7, 3.5))
    kernel = np.ones(window)
    for code in codes:
        proposed = (move == code).sum(axis=0)
        taken = ((move == code) & accepted).sum(axis=0)
        made = np.convolve(proposed, kernel)[:n_draws]
        kept = np.convolve(taken, kernel)[:n_draws]
        with np.errstate(invalid="ignore", divide="ignore"):
            rate = np.where(made > 0, kept / np.maximum(made, 1), np.nan)
        total, total_taken = int(proposed.sum()), int(taken.sum())
        label = f"{MOVE_NAMES[code]}: {total_taken} of {total} accepted ({100 * total_taken / total:.1f}%)"
        axes.plot(np.arange(n_draws), rate, lw=1.0, label=label)
    axes.set_ylim(bottom=0.0)
    axes.set_xlabel("draw")
    axes.set_ylabel(f"accepted (last {window} draws)")
    axes.set_title("acceptance of proposals, chains pooled", fontsize=10)
    axes.legend(fontsize=8)
    return axes


def _bin_edges(observed, replicated, discrete):
    """Common histogram edges of one feature's observed (m,) and replicated (S, m) values.

    The range covers the observed values and the central 99% of the
    replicated ones (a rare far replicate does not squeeze the rest).  Real
    values: ``ceil(sqrt(m))`` equal bins, between ``MIN_BINS`` and
    ``MAX_BINS``.  Integers: bins centred on integers, ``w`` values wide, with
    ``w`` the smallest integer that needs at most ``MAX_BINS`` bins.
    """
    low = min(observed.min(), np.quantile(replicated, 0.005))
    high = max(observed.max(), np.quantile(replicated, 0.995))
    if discrete:
        low, high = np.floor(low), np.ceil(high)
        width = max(1.0, np.ceil((high - low + 1.0) / MAX_BINS))
        count = int(np.ceil((high - low + 1.0) / width))
        return low - 0.5 + width * np.arange(count + 1)
    if high <= low:
        low, high = low - 0.5, high + 0.5
    bins = int(np.clip(np.ceil(np.sqrt(observed.size)), MIN_BINS, MAX_BINS))
    return np.linspace(low, high, bins + 1)


def _heights(values, edges, density):
    """Histogram of the last axis of ``values`` on ``edges``: densities, or fractions of the values.

    Values outside the edges count in the total but in no bin.
    """
    counts = np.apply_along_axis(lambda row: np.histogram(row, edges)[0], -1, values)
    scale = values.shape[-1] * (np.diff(edges) if density else 1.0)
    return counts / scale


def _central_interval(values):
    """The central ``PPC_INTERVAL`` interval and the median of ``values`` over axis 0, ignoring NaN."""
    tail = 50.0 * (1.0 - PPC_INTERVAL)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns: a pair constant in every replicate
        return np.nanpercentile(values, [tail, 50.0, 100.0 - tail], axis=0)


def _pair_correlations(values):
    """Pearson correlation of each pair ``j < k`` of the columns of ``values`` (..., m, f), pairs in row order.

    A constant column has no correlation: NaN.
    """
    centred = values - values.mean(axis=-2, keepdims=True)
    scale = np.sqrt((centred**2).sum(axis=-2))
    with np.errstate(invalid="ignore", divide="ignore"):
        unit = centred / scale[..., None, :]
    j, k = np.triu_indices(values.shape[-1], 1)
    return np.einsum("...ij,...ij->...j", unit[..., j], unit[..., k])


def _ppc_axes(n_marginals, correlations):
    """A new figure: the marginal panels in rows of at most 3, the correlation panel in a row of its own."""
    import matplotlib.pyplot as plt

    columns = min(n_marginals, 3)
    rows = -(-n_marginals // columns)
    figure = plt.figure(figsize=(max(3.4 * columns, 7.0), 2.6 * rows + 3.0 * correlations), layout="constrained")
    grid = figure.add_gridspec(rows + correlations, columns)
    axes = [figure.add_subplot(grid[k // columns, k % columns]) for k in range(n_marginals)]
    if correlations:
        axes.append(figure.add_subplot(grid[rows, :]))
    return axes


def _plot_marginal(ax, observed, replicated, discrete):
    """One feature: the replicates' median histogram and central band, and the observed histogram."""
    edges = _bin_edges(observed, replicated, discrete)
    band_low, median, band_high = _central_interval(_heights(replicated, edges, not discrete))
    percent = f"{100 * PPC_INTERVAL:.0f}%"
    ax.stairs(band_high, edges, baseline=band_low, fill=True, color="C0", alpha=0.3, label=f"replicated, {percent} interval")
    ax.stairs(median, edges, color="C0", lw=1.0, label="replicated, median")
    ax.stairs(_heights(observed, edges, not discrete), edges, color="black", lw=1.5, label="observed")
    ax.set_ylabel("fraction of items" if discrete else "density")
    ax.set_xlabel("value")


def _plot_correlations(ax, observed, replicated, labels):
    """Each pair's observed correlation against the replicates' median and central interval (``labels``: the features')."""
    low, median, high = _central_interval(_pair_correlations(replicated))
    seen = _pair_correlations(observed)
    j, k = np.triu_indices(len(labels), 1)
    x = np.arange(j.size)
    outside = int(np.sum((seen < low) | (seen > high)))
    percent = f"{100 * PPC_INTERVAL:.0f}%"
    ax.axhline(0.0, color="0.8", lw=0.8)
    ax.vlines(x, low, high, color="C0", lw=5, alpha=0.35, label=f"replicated, {percent} interval")
    ax.scatter(x, median, marker="_", s=120, color="C0", label="replicated, median")
    ax.scatter(x, seen, s=20, color="black", zorder=3, label="observed")
    ax.set_xticks(x, [f"{labels[a]}\n{labels[b]}" for a, b in zip(j, k)], fontsize=8)
    ax.set_xlim(-0.6, j.size - 0.4)
    ax.set_ylim(-1.05, 1.05)
    ax.set_xlabel("pair of features")
    ax.set_ylabel("correlation")
    ax.set_title(f"correlation of each pair of features: observed outside the {percent} interval for {outside} of {j.size}", fontsize=10)
    ax.legend(fontsize=7, loc="best")


def plot_ppc(
    idata,
    model=None,
    *,
    var_name=None,
    features=None,
    feature_names=None,
    n_draws=None,
    max_items=2000,
    random_seed=None,
    ax=None,
):
    r"""Posterior predictive check: marginals and pairwise correlations of replicated data against the data.

    Draws ``n_draws`` data sets :math:`X^{\mathrm{rep}}` from the posterior
    predictive distribution of the observation model (one per posterior draw
    of the partition and hyperparameters, the cluster parameters drawn from
    their posterior given the data:
    :func:`~pymc_partitions.summary.posterior_predictive`), and compares
    them with the observed data ``X``:

    * one panel per feature ``j``: the histogram of :math:`x_{\cdot j}` (black)
      against the replicates' histograms on the same bins -- their median
      (blue line) and the central ``PPC_INTERVAL`` (90 %) band of each bin's
      height.  Real data (Normal families) show densities; integer data
      (Beta-Bernoulli, Gamma-Poisson, Dirichlet-multinomial, categorical
      codes: every family whose spec's data are integers) the fraction of
      items in each integer bin;
    * one panel for the pairs ``j < k`` of those features: the observed
      correlation :math:`r_{jk}(X)` (black dot) against the median and central
      90 % interval of :math:`r_{jk}(X^{\mathrm{rep}})` over the replicates;
      the title counts the pairs whose observed correlation falls outside (not
      for categorical codes, which are unordered: their correlation means nothing).

    A model that fits covers the black lines and dots with its bands.  A band
    that misses the data's shape (skew, heavy tails, a sharp bound) or its
    correlations says the clusters are not shaped like the data's groups.
    A mixture of enough clusters can cover any histogram, so the
    correlations are often the sharper test: clusters whose features are
    uncorrelated (``NormalGammaMixture``) reproduce a correlation within a
    group only by splitting the group into more clusters.  Unlike ``pm.sample_posterior_predictive`` (whose replicates draw the
    integrated-out cluster parameters of the conjugate models from their
    prior), the replicates here keep each cluster where the data put it.

    Parameters
    ----------
    idata : InferenceData or DataTree
        The result of ``pm.sample`` on ``model``; the posterior must hold the
        partition and every random hyperparameter of the observation model.
    model : pm.Model, optional
        Default: the model in context.
    var_name : str, optional
        Name of the observed variable (the observation model), as in ArviZ's
        ``plot_ppc``; default: the model's only observation model of a
        partition.  The Infinite Relational Model (a network) is not
        supported: use :func:`plot_adjacency`.
    features : sequence of int, optional
        Columns to show, in this order (default: the first
        ``DEFAULT_FEATURES`` = 6).
    feature_names : sequence of str, optional
        One name per column of the data, for the titles and the pairs
        (default: the column indices).
    n_draws : int, optional
        Number of replicated data sets (posterior draws chosen at random,
        chains pooled; at most the number of draws).  Default:
        ``PPC_DRAWS`` = 50, or every draw if there are fewer.
    max_items : int
        With more items than this, a random subset of ``max_items`` items
        (the same in the observed and the replicated data) is shown.
    random_seed : int, Generator or None
        Seeds the choice of draws and items and the replicates.
    ax : sequence of matplotlib Axes, optional
        One per feature, then one for the correlations (when two or more
        features are shown).

    Returns
    -------
    ndarray of matplotlib Axes
        The marginal panels, in the order of ``features``, then the
        correlation panel.

    Examples
    --------
    >>> import arviz as az, numpy as np, pymc as pm
    >>> import pymc_partitions as pmp
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(0.0, 1.0, (20, 2)), rng.normal(6.0, 1.0, (20, 2))]
    >>> with pm.Model() as model:
    ...     z = pmp.DirichletProcessPartition("z", alpha=1.0, n=40)
    ...     x = pmp.NormalGammaMixture("x", partition=z, observed=X, **pmp.NormalGammaMixture.default_hyperparameters(X))
    >>> z_draws = np.tile(np.repeat([0, 1], 20), (1, 30, 1))            # 1 chain, 30 draws, all at the truth
    >>> axes = plot_ppc(az.from_dict(posterior={"z": z_draws}), model, n_draws=20, random_seed=0)
    >>> [a.get_title() for a in axes[:2]], axes[2].get_ylabel()
    (['feature 0', 'feature 1'], 'correlation')
    """
    purpose = "plot_ppc"
    check_idata(idata)
    if n_draws is not None:
        check_positive_int("n_draws", n_draws, "the number of replicated data sets")
    max_items = check_count("max_items", max_items, 2)
    rng = check_random_seed("random_seed", random_seed)
    predictive = predictive_model(model, var_name, purpose)
    n, d = predictive.data.shape
    shown = np.arange(min(d, DEFAULT_FEATURES)) if features is None else check_item_indices(
        "features", features, d, allow_empty=False, noun="feature"
    )
    names = check_names("feature_names", feature_names, d, "column of the data") or tuple(str(j) for j in range(d))
    labels = [names[j] for j in shown]
    # category codes are unordered: their correlations mean nothing
    correlations = len(shown) >= 2 and families.SPECS[predictive.family].data != CODES
    given = check_axes("ax", ax, len(shown) + correlations)
    values, available = posterior_values(idata, predictive, purpose)
    draws = choose_draws(n_draws, available, rng, PPC_DRAWS)
    items = np.arange(n) if n <= max_items else np.sort(rng.choice(n, size=max_items, replace=False))
    replicated = draw_replicates(predictive, values, draws, items, rng)[:, :, shown]
    observed = predictive.data[np.ix_(items, shown)]
    axes = given if given is not None else _ppc_axes(len(shown), correlations)
    discrete = predictive.family in DISCRETE_FAMILIES
    for panel, column in zip(axes, range(len(shown))):
        _plot_marginal(panel, observed[:, column], replicated[:, :, column], discrete)
        panel.set_title(labels[column] if feature_names is not None else f"feature {labels[column]}", fontsize=10)
    if correlations:
        _plot_correlations(axes[-1], observed, replicated, labels)  # its legend serves every panel
    else:
        axes[0].legend(fontsize=7, loc="best")
    if given is None:
        notes = [f"observed '{predictive.name}' (black) and {len(draws)} data sets replicated from the posterior (blue)"]
        if features is None and d > len(shown):
            notes.append(f"features 0-{len(shown) - 1} of {d} (choose with features=)")
        if len(items) < n:
            notes.append(f"{len(items)} of {n} items, at random")
        axes[0].figure.suptitle("; ".join(notes), fontsize=10)
    return np.array(axes, dtype=object)
