r"""The Infinite Relational Model (IRM) for a symmetric network, as a PyMC distribution.

Kemp et al. (2006), in the symmetric form of the ARM paper (Herlau et al.,
``papers/000_…``, Sec. 3.2).  ``A`` is an ``n x n`` symmetric 0/1 adjacency
matrix with zero diagonal and ``z`` the cluster label of each vertex.  Every
unordered pair of occupied clusters :math:`k \le l` -- a cluster with itself
included -- has its own edge probability, integrated out:

.. math::

    \theta_{kl} \sim \operatorname{Beta}(a, b) \quad (k \le l), \qquad
    A_{ij} \mid z \sim \operatorname{Bernoulli}(\theta_{z_i z_j}) \quad (i < j),

    \log p(A \mid z) = \sum_{k \le l \text{ occupied}}
        \Big[\log B(a + N^+_{kl},\, b + N^-_{kl}) - \log B(a, b)\Big],

with :math:`N^+_{kl}` the edges between clusters ``k`` and ``l`` (each unordered
vertex pair once) and :math:`N^-_{kl} = P_{kl} - N^+_{kl}` the non-edges among
:math:`P_{kl} = m_k m_l` (:math:`k \ne l`) or :math:`m_k(m_k - 1)/2` vertex pairs; a
block without vertex pairs contributes 0.  The diagonal blocks belong to the
sum although the paper prints :math:`k < k'` (``docs/exactness.md``, "IRM: the
diagonal blocks").  The likelihood couples clusters (a term per pair of
clusters), unlike :mod:`~pymc_partitions.distributions.mixtures`; the graph
scatter-adds the edge list into block counts (:func:`_block_counts`), O(n +
edges + K^2) per evaluation, and reads only the entries ``i < j`` of the value.

Reading the model (for step methods)
------------------------------------
The op subclasses :class:`~pymc_partitions.distributions.mixtures.PartitionMixtureRV`,
so :func:`~pymc_partitions.distributions.mixtures.mixture_spec` and
:func:`~pymc_partitions.distributions.mixtures.observed_data` work unchanged:
``family == INFINITE_RELATIONAL``, ``hypers == (a, b)`` (float64 scalars),
``d == n`` and the observed data is the ``(n, n)`` float64 adjacency matrix.

References
----------
Kemp, C., Tenenbaum, J. B., Griffiths, T. L., Yamada, T. & Ueda, N. (2006).
Learning systems of concepts with an infinite relational model. *AAAI*, 381-388.
Herlau, T., Mørup, M., Schmidt, M. N. & Teh, Y. W. Adaptive reconfiguration
moves for Dirichlet process mixtures (``papers/000_…``, Sec. 3.2).
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
from pymc.distributions.dist_math import check_parameters
from pytensor.compile.sharedvalue import SharedVariable
from pytensor.graph.basic import Constant, Variable

from pymc_partitions._validation import check_adjacency
from pymc_partitions.distributions.cluster_sums import cluster_counts
from pymc_partitions.distributions.mixtures import PartitionMixture, PartitionMixtureRV, _as_float, hyper_graph
# the family code and spec (the identifiers and supports shared with the numba layer); the math here is independent
from pymc_partitions.families import INFINITE_RELATIONAL, infinite_relational
from pymc_partitions.families._common import betaln

__all__ = ["INFINITE_RELATIONAL", "InfiniteRelationalModelRV", "InfiniteRelationalModel"]


def _block_counts(partition, adjacency):
    r"""Edge counts, pair counts and sizes of the occupied clusters.

    Returns ``(positive, pairs, sizes)``: ``K x K`` matrices of :math:`N^+_{kl}`
    and :math:`P_{kl}` (symmetric) and the ``K`` cluster sizes, for the occupied
    labels in increasing order.  No loops in the graph: occupied labels are
    ranked ``0 .. K-1`` by a cumulative sum over the label counts, the edge list
    ``i < j`` of ``adjacency`` (only its strict upper triangle is read;
    constant-folded when the adjacency is observed data) is scatter-added
    (``inc_subtensor``) into the directed block counts
    :math:`E_{kl} = \#\{i < j: z_i = k, z_j = l, A_{ij} = 1\}`, then
    :math:`N^+ = E + E^T - \operatorname{diag}(E)` and the pair counts follow
    from the sizes.  O(n + edges + K^2) per evaluation.
    """
    all_sizes = cluster_counts(partition)
    occupied = pt.gt(all_sizes, 0)
    rank = pt.cumsum(pt.cast(occupied, "int64")) - 1  # label -> 0..K-1, in increasing label order (int cumsum)
    sizes = all_sizes[pt.nonzero(occupied)[0]]
    n_clusters = sizes.shape[0]
    block = rank[partition]
    rows, cols = pt.nonzero(pt.triu(adjacency, 1))  # the edges i < j
    directed = pt.inc_subtensor(  # E_kl = #{i < j : z_i = k, z_j = l, A_ij = 1}
        pt.zeros((n_clusters, n_clusters), dtype="float64")[block[rows], block[cols]], 1.0
    )
    positive = directed + directed.T - pt.diag(pt.diag(directed))
    pairs = pt.outer(sizes, sizes) - pt.diag(0.5 * sizes * (sizes + 1.0))  # m_k m_l, and m_k(m_k-1)/2 on the diagonal
    return positive, pairs, sizes


class InfiniteRelationalModelRV(PartitionMixtureRV):
    """Op of :class:`InfiniteRelationalModel`: parameters ``(partition, a, b, zeta, d)`` with ``d = n``."""

    name = "infinite_relational_model"
    signature = "(n),(),(),(),()->(n,n)"
    _print_name = ("InfiniteRelationalModel", "\\operatorname{InfiniteRelationalModel}")
    family = INFINITE_RELATIONAL
    spec = infinite_relational.SPEC

    def logp_graph(self, value, partition, a, b, zeta, d):
        """Exact log marginal likelihood of the adjacency matrix ``value`` given ``partition``; coarsened, every
        vertex pair's likelihood raised to ``zeta`` (the block counts weighted by it)."""
        positive, pairs, sizes = _block_counts(partition, _as_float(value))
        terms = betaln(a + zeta * positive, b + zeta * (pairs - positive)) - betaln(a, b)
        n_clusters = sizes.shape[0]
        upper = pt.le(pt.arange(n_clusters)[:, None], pt.arange(n_clusters)[None, :])  # k <= l
        total = pt.switch(upper, terms, 0.0).sum()
        return check_parameters(total, *self.support_conditions(d, (a, b)), msg=self.spec.support_message())

    def draw(self, rng, inverse, n_clusters, d, a, b):
        """theta_kl ~ Beta(a, b) for k <= l, then A_ij ~ Bernoulli(theta_{z_i z_j}) for i < j, mirrored."""
        theta = rng.beta(a, b, size=(n_clusters, n_clusters))
        theta = np.triu(theta) + np.triu(theta, 1).T
        n = inverse.shape[0]
        upper = np.triu(rng.random((n, n)) < theta[inverse][:, inverse], 1)
        return (upper | upper.T).astype(float)

    def support_point_graph(self, partition, a, b, zeta, d):
        n = partition.shape[0]
        return pt.zeros((n, n), dtype="float64")


infinite_relational_model = InfiniteRelationalModelRV()


def _vertex_count(partition, shape):
    """``n`` from the partition's static length or from ``shape``, for ``.dist`` without data (else ``None``)."""
    if isinstance(partition, Constant):
        return int(np.shape(partition.data)[0]) if np.ndim(partition.data) == 1 else None
    if isinstance(partition, SharedVariable):
        value = partition.get_value()
        return int(value.shape[0]) if np.ndim(value) == 1 else None
    if isinstance(partition, Variable):
        if partition.type.ndim == 1 and partition.type.shape[0] is not None:
            return int(partition.type.shape[0])
    elif np.ndim(partition) == 1:
        return int(np.shape(partition)[0])
    if shape is not None and len(shape) >= 1 and isinstance(shape[0], (int, np.integer)):
        return int(shape[0])
    return None


class InfiniteRelationalModel(PartitionMixture):
    r"""Symmetric 0/1 network given a vertex partition: the Infinite Relational Model (Kemp et al. 2006).

    .. math::

        \theta_{kl} \sim \operatorname{Beta}(a, b) \ (k \le l), \qquad
        A_{ij} \mid z \sim \operatorname{Bernoulli}(\theta_{z_i z_j}) \ (i < j),

        \log p(A \mid z) = \sum_{k \le l \text{ occupied}}
            \log \frac{B(a + N^+_{kl},\, b + N^-_{kl})}{B(a, b)},

    with :math:`N^+_{kl}` the number of edges between clusters ``k`` and ``l``
    (within cluster ``k`` if ``k = l``), each unordered vertex pair counted once,
    and :math:`N^-_{kl}` the number of vertex pairs without an edge
    (``papers/000_…``, Sec. 3.2; the diagonal blocks ``k = l`` are included).

    ``default_hyperparameters(A)`` centres the Beta prior on the network's
    edge density with the weight of two observations.

    Parameters
    ----------
    name : str
    partition : integer vector of length n
        Cluster label of each vertex (a partition prior variable, or fixed labels).
    a, b : scalar, > 0
        Beta prior parameters of every block's edge probability (constants or
        PyMC variables; the log density is differentiable in both).
    observed : array (n, n)
        Symmetric adjacency matrix of 0/1 with zero diagonal (``pm.Data`` allowed); required.
        With ``.dist``, ``n`` is taken from the partition's length or ``shape=(n, n)``.

    Notes
    -----
    ``coarsening=c`` raises every vertex pair's likelihood to
    ``zeta = c / (c + n (n - 1) / 2)`` (the block counts weighted by ``zeta``;
    :class:`~pymc_partitions.distributions.mixtures.PartitionMixture`).

    Op parameters: ``(partition, a (), b (), zeta (), d)`` with ``d = n``;
    ``family = INFINITE_RELATIONAL``.  The log density reads only the entries
    above the diagonal of its value.  Draws (prior predictive) are symmetric
    0/1 matrices with zero diagonal.

    Examples
    --------
    >>> import numpy as np, pymc as pm, pytensor.tensor as pt
    >>> import pymc_partitions as pmp
    >>> A = np.zeros((4, 4), dtype=int)
    >>> for i, j in [(0, 1), (0, 2), (0, 3), (2, 3)]:
    ...     A[i, j] = A[j, i] = 1
    >>> with pm.Model() as model:
    ...     z = pt.as_tensor(np.array([0, 0, 1, 1]))
    ...     x = pmp.InfiniteRelationalModel("x", partition=z, a=1.0, b=1.0, observed=A)
    >>> # blocks {0,1}: 1 edge of 1 pair, B(2,1) = 1/2; {2,3}: 1/2; between: 2 edges of 4 pairs, B(3,3) = 1/30
    >>> round(float(model.compile_logp()({})), 4)  # log(1/120)
    -4.7875
    """

    rv_op = infinite_relational_model
    spec = infinite_relational.SPEC

    @classmethod
    def observation_count(cls, n_items):
        """The observations ``coarsening`` weighs are the ``n (n - 1) / 2`` vertex pairs: ``zeta = c / (c + n (n - 1) / 2)``."""
        return n_items * (n_items - 1) // 2

    @classmethod
    def _check_data(cls, data):
        return check_adjacency("observed", data)

    @classmethod
    def default_hyperparameters(cls, observed):
        """Data-based ``a``, ``b``: a Beta prior with mean the network's edge density, weight two edges.

        ``a = 2 ρ``, ``b = 2 (1 - ρ)`` with ``ρ = (edges + 1) / (pairs + 2)``
        (``families.infinite_relational.default_hyperparameters``).

        Examples
        --------
        >>> import numpy as np
        >>> import pymc_partitions as pmp
        >>> A = np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]])
        >>> {k: round(v, 3) for k, v in pmp.InfiniteRelationalModel.default_hyperparameters(A).items()}
        {'a': 0.8, 'b': 1.2}
        """
        return cls.spec.defaults(check_adjacency("observed", observed))

    def __new__(cls, name, *args, observed=None, **kwargs):
        if observed is None:
            raise ValueError(f"observed is required for {cls.__name__} (an n x n symmetric 0/1 adjacency matrix)")
        if isinstance(observed, SharedVariable):
            check_adjacency("observed", observed.get_value())
        else:
            observed = check_adjacency("observed", observed)
        return super().__new__(cls, name, *args, observed=observed, **kwargs)

    @classmethod
    def dist(cls, partition, a=1.0, b=1.0, **kwargs):
        data, shape = kwargs.get("_data"), kwargs.get("shape")
        n = kwargs.pop("d", None)  # d = n; _build checks a given d against the data
        if n is None and data is not None:
            n = data.shape[0]
        elif n is None:
            n = _vertex_count(partition, shape)
            if n is None:
                raise ValueError(
                    f"{cls.__name__}.dist without observed data needs n: give a partition of known length "
                    "or shape=(n, n)"
                )
        if data is None and shape is None and isinstance(n, (int, np.integer)):
            kwargs["shape"] = (int(n), int(n))  # so that _build checks the partition's length against n

        def hypers(d, data, n_items):
            return [hyper_graph(hyper, value, d) for hyper, value in zip(cls.spec.hypers, (a, b))]

        return cls._build(partition, hypers, d=n, **kwargs)
