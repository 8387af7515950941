r"""A coarsened likelihood for any PyMC distribution: :class:`Coarsened` (Miller & Dunson 2019, the c-posterior).

The package's observation models take ``coarsening=c``; a likelihood written
in plain PyMC (a component model, ``distributions.components``) takes it by
wrapping its distribution::

    pmp.Coarsened("y", pm.Normal.dist(mu=a[z] + b[z] * x, sigma=sigma[z]), coarsening=c, observed=y)

is an observed variable whose log density is :math:`\zeta \log f(y \mid \ldots)`
per item, :math:`\zeta = c / (c + n)` with ``n`` the length of the first axis
(the items).  The model's posterior is then the c-posterior

.. math::

    \pi_c(\vartheta \mid y) \propto p(\vartheta) \prod_{i=1}^{n} f(y_i \mid \vartheta)^{\zeta},
    \qquad \zeta = \frac{c}{c + n},

(Miller & Dunson 2019, "Robust Bayesian inference via coarsening", JASA
114:1113, Sec. 4: the posterior given that the data lie within a
relative-entropy discrepancy, exponential with mean ``1/c``, of the model, for
large ``n``), with :math:`\vartheta` every other variable of the model.

How it is built.  ``Coarsened`` wraps an unnamed distribution as
``pm.Censored`` does: :class:`CoarsenedRV` is a ``SymbolicRandomVariable``
whose inputs are the distribution itself and ``c`` (``inf`` for no
coarsening), and whose draw is the distribution's draw, so
``pm.sample_prior_predictive`` and ``pm.sample_posterior_predictive`` draw
from the ordinary likelihood :math:`f` (the c-posterior is not a generative
model: its predictive draws come from :math:`f` at the c-posterior's
parameters).  Its log density, registered with PyMC's ``_logprob``, is
:math:`\zeta` times PyMC's own log density of the distribution at the value
(``pm.logp``), element by element, with ``n`` read from the value's shape
(the observed data's number of items, ``pm.Data`` included).  So the graph
of a component model keeps its form -- the partition still enters only by
row indexing -- and the component steps' log-likelihood matrix ``L``, read
from ``model.logp``, is :math:`\zeta \log f` without any code of theirs
knowing about :math:`\zeta` (``docs/exactness.md``, "Coarsened posteriors").
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
from pymc.distributions.distribution import Distribution, SymbolicRandomVariable
from pymc.distributions.shape_utils import change_dist_size, rv_size_is_none
from pymc.logprob.abstract import _logprob
from pymc.logprob.basic import logp
from pymc.util import check_dist_not_registered
from pytensor.graph.basic import Constant
from pytensor.tensor.random.op import RandomVariable
from pytensor.tensor.random.utils import normalize_size_param
from pytensor.tensor.variable import TensorVariable

from pymc_partitions._validation import check_coarsening, coarsening_power

__all__ = ["Coarsened", "CoarsenedRV"]


class CoarsenedRV(SymbolicRandomVariable):
    """Op of :class:`Coarsened`: inputs ``(dist, c)`` (``c = inf``: no coarsening), draws those of ``dist``; log
    density ``zeta = c / (c + n)`` times ``dist``'s, ``n`` the length of the value's first axis (module docstring)."""

    inline_logprob = False
    _print_name = ("Coarsened", "\\operatorname{Coarsened}")

    @classmethod
    def rv_op(cls, dist, *, coarsening, size=None):
        """The coarsened variable of ``dist`` (resized to ``size`` if given) for a checked ``coarsening``."""
        size = normalize_size_param(size)
        if not rv_size_is_none(size):
            dist = change_dist_size(dist, size)
        ndim_supp = dist.owner.op.ndim_supp
        if coarsening is not None and dist.type.ndim - ndim_supp < 1:
            raise ValueError(
                f"coarsening raises each item's likelihood to c / (c + n), the items along the first axis of the "
                f"distribution, which must be a batch axis; got a {type(dist.owner.op).__name__} of {dist.type.ndim} "
                f"dimension(s), {ndim_supp} of them its support: give observed= (or shape=(n, ...)) with one entry "
                "per item along the first axis"
            )
        c = pt.constant(np.inf if coarsening is None else coarsening, dtype="float64")
        core = ",".join(f"s{axis}" for axis in range(ndim_supp))
        inner, inner_c = dist.type(), c.type()
        op = cls(inputs=[inner, inner_c], outputs=[inner.copy()], extended_signature=f"({core}),()->({core})")
        return op(dist, c)


class Coarsened(Distribution):
    r"""An observed variable whose likelihood is ``dist``'s raised to ``zeta = c / (c + n)`` per item: the c-posterior.

    .. math::

        \log p_c(y \mid \vartheta) = \zeta \sum_{i=1}^{n} \log f(y_i \mid \vartheta),
        \qquad \zeta = \frac{c}{c + n},

    with ``f`` the law of ``dist`` and ``n`` the number of items, the length of
    the observed value's first axis (Miller & Dunson 2019, "Robust Bayesian
    inference via coarsening", JASA 114:1113, Sec. 4).  The model's
    posterior is the c-posterior
    :math:`\pi_c(\vartheta \mid y) \propto p(\vartheta) \prod_i f(y_i \mid \vartheta)^{\zeta}`,
    which no longer adds clusters to fit the data's departures from the
    cluster model once ``n`` exceeds about ``c`` (``docs/defaults.md``,
    "When to coarsen").  It is the ``coarsening=c`` of the package's
    observation models for a likelihood written in plain PyMC: a component
    model (README, "Your own cluster model") whose observed variable is
    ``Coarsened`` is found by the partition steps as any other, and every
    step targets its c-posterior (``docs/exactness.md``, "Coarsened
    posteriors").  Several observed variables of one model, one entry per
    item each, each take ``Coarsened`` with the same ``c``: every item's
    whole likelihood is then raised to ``zeta``.  Draws
    (``pm.sample_prior_predictive``, ``pm.sample_posterior_predictive``) are
    those of ``dist``: the ordinary likelihood at the parameters drawn.

    Parameters
    ----------
    name : str
        The variable's name.
    dist : unnamed distribution
        The likelihood ``f``, created with the ``.dist()`` API (e.g.
        ``pm.Normal.dist(mu=a[z], sigma=1.0)``), items along its first axis;
        any PyMC distribution, univariate or multivariate per item.  It is not
        added to the model itself.
    coarsening : float or None
        ``c > 0`` (finite); ``None`` (default): no coarsening, ``zeta = 1``.
    observed : array-like
        The data, ``n`` items along the first axis; required (a coarsened
        density is a likelihood, not a prior).  ``.dist()`` (forward draws
        only) takes no ``observed``.

    Examples
    --------
    Poisson clusters with coarsening ``c = 4`` on ``n = 4`` items, so
    ``zeta = 1/2``: the log density is half the Poisson's.

    >>> import numpy as np, pymc as pm, pymc_partitions as pmp
    >>> from scipy import stats
    >>> y = np.array([0, 2, 7, 9])
    >>> with pm.Model() as model:
    ...     z = pmp.DirichletProcessPartition("z", alpha=1.0, n=4)
    ...     lam = pm.LogNormal("lam", 1.0, 1.0, shape=4)      # K_max = 4 rows
    ...     counts = pmp.Coarsened("y", pm.Poisson.dist(lam[z]), coarsening=4.0, observed=y)
    >>> point = {"z": np.array([0, 0, 1, 1], dtype="int32"), "lam_log__": np.log([1.0, 8.0, 5.0, 5.0])}
    >>> logp = model.compile_logp(vars=[counts])(point)
    >>> bool(np.isclose(logp, 0.5 * stats.poisson.logpmf(y, [1.0, 1.0, 8.0, 8.0]).sum()))
    True

    ``pm.sample()`` on this model assigns ``GibbsStep`` (Neal's Algorithm 8)
    to ``z`` and NUTS to ``lam``, both targeting the c-posterior.
    """

    rv_type = CoarsenedRV
    rv_op = CoarsenedRV.rv_op

    def __new__(cls, name, dist, *, coarsening=None, observed=None, **kwargs):
        if observed is None:
            raise ValueError(
                f"Coarsened({name!r}) needs observed=: a coarsened density is a likelihood (each item's density "
                "raised to zeta), not a prior; use Coarsened.dist(...) for forward draws only"
            )
        return super().__new__(cls, name, dist, coarsening=coarsening, observed=observed, **kwargs)

    @classmethod
    def dist(cls, dist, *, coarsening=None, **kwargs):
        """The unnamed coarsened distribution of ``dist`` (class docstring), after checking both arguments."""
        coarsening = check_coarsening(coarsening)
        if not isinstance(dist, TensorVariable) or not isinstance(
            getattr(dist.owner, "op", None), (RandomVariable, SymbolicRandomVariable)
        ):
            raise TypeError(
                f"dist must be a distribution created with the .dist() API, e.g. pm.Normal.dist(mu=a[z], sigma=1.0), "
                f"got {dist!r} ({type(dist).__name__})"
            )
        check_dist_not_registered(dist)
        return super().dist([dist], coarsening=coarsening, **kwargs)


@_logprob.register(CoarsenedRV)
def coarsened_logprob(op, values, dist, c, **kwargs):
    """``zeta = c / (c + n)`` times PyMC's log density of ``dist`` at the value, element by element; ``n`` the length
    of the value's first axis (``c = inf``: ``zeta = 1``, the log density unchanged)."""
    (value,) = values
    if isinstance(c, Constant) and np.isinf(c.data):
        return logp(dist, value)
    return coarsening_power(c, value.shape[0]) * logp(dist, value)
