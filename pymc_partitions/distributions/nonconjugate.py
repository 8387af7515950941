r"""A mixture whose clusters keep explicit parameters: the conditionally conjugate Normal model.

Jain & Neal (2007, ``papers/001_...``, Sec. 5.1).  Unlike the models of
:mod:`~pymc_partitions.distributions.mixtures`, the cluster parameters are
not integrated out: they are ordinary PyMC random variables declared by the
user, one row per possible cluster,

.. math::

    \mu_{kj} \sim N(m_j, t_j^{-1}), \quad \tau_{kj} \sim \operatorname{Gamma}(a_j, \text{rate } b_j)
    \qquad (k = 0 .. K_{\max} - 1,\ j = 1 .. d),

    x_{ij} \mid z, \mu, \tau \sim N(\mu_{z_i j}, \tau_{z_i j}^{-1}),

and :class:`NormalMixture` is the law of the data given the partition and
those rows.  Labels are canonical (``0 .. K-1`` in order of first
appearance), so row ``k`` belongs to the ``k``-th cluster to appear and rows
``K .. K_max - 1`` are used by no item: their posterior is their prior.  The
model allows at most ``K_max`` clusters: the log density is ``-inf`` for a
partition with more (a label ``>= K_max``), so the partition prior is
restricted to ``K <= K_max``.  ``K_max >= n`` removes the restriction.

The log density is vectorised: the per-item terms are segment sums,

.. math::

    \log p(X \mid z, \mu, \tau) = \sum_{k} \sum_j \Big[ \tfrac{m_k}{2} \log\tfrac{\tau_{kj}}{2\pi}
        - \tfrac{\tau_{kj}}{2} \big(S^{(2)}_{kj} - 2 \mu_{kj} S^{(1)}_{kj} + m_k \mu_{kj}^2\big) \Big],

with :math:`m_k`, :math:`S^{(1)}_{kj}`, :math:`S^{(2)}_{kj}` the size, sum and
sum of squares of cluster ``k`` (``cluster_sums``: one pass over the items; data
and ``mu`` shifted by the data mean first, which changes nothing but
rounding).  It is differentiable in ``mu`` and ``tau``.

Reading the model (for step methods): the op subclasses
:class:`~pymc_partitions.distributions.mixtures.PartitionMixtureRV`;
:func:`~pymc_partitions.distributions.mixtures.mixture_spec` gives
``family == NORMAL``, ``parameters == (mu, tau)`` and ``hypers == (m, t, a, b,
K_max)`` read from the priors of ``mu`` (a ``pm.Normal``) and ``tau`` (a
``pm.Gamma``), which must be the same for every row.
"""

from __future__ import annotations

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from pymc.distributions.dist_math import check_parameters

from pymc_partitions._validation import check_parameter_block, check_parameter_variable, check_positive_int
from pymc_partitions.distributions.cluster_sums import cluster_sums
from pymc_partitions.distributions.observed import check_forward_draw
from pymc_partitions.distributions.mixtures import (
    PartitionMixture, PartitionMixtureRV, _as_float, _static_int, _with_default_priors,
)
# the family code and spec (the identifiers and supports shared with the numba layer); the math here is independent
from pymc_partitions.families import NORMAL, normal

__all__ = ["NORMAL", "NormalMixtureRV", "NormalMixture"]

_LOG_2PI = float(np.log(2.0 * np.pi))


class NormalMixtureRV(PartitionMixtureRV):
    """Op of :class:`NormalMixture`: parameters ``(partition, mu (K_max, d), tau (K_max, d), zeta, d)``."""

    name = "normal_mixture"
    signature = "(n),(k,d),(k,d),(),()->(n,d)"
    _print_name = ("NormalMixture", "\\operatorname{NormalMixture}")
    family = NORMAL
    spec = normal.SPEC

    def logp_graph(self, value, partition, mu, tau, zeta, d):
        """``zeta log p(X | z, mu, tau)`` (coarsened: every item's likelihood to the power ``zeta``); ``-inf`` if a
        label is outside ``0 .. K_max - 1`` (module docstring)."""
        value, mu, tau = _as_float(value), _as_float(mu), _as_float(tau)
        k_max = mu.shape[0]
        shift = value.mean(axis=0)  # data and means relative to the data's mean, as PartitionMixtureRV.center does
        centred, mu = value - shift, mu - shift
        inside = pt.all(pt.ge(partition, 0)) & pt.all(pt.lt(partition, k_max))
        labels = pt.clip(partition, 0, k_max - 1)
        width = centred.shape[1]
        stats = cluster_sums(labels, pt.concatenate([pt.ones((centred.shape[0], 1)), centred, centred**2], axis=1))
        rows = stats.shape[0]  # max(label) + 1 <= K_max: rows beyond hold no item and add nothing
        counts, sums, squares = stats[:, :1], stats[:, 1 : 1 + width], stats[:, 1 + width :]
        mu, tau = mu[:rows], tau[:rows]
        used = pt.gt(counts, 0)
        safe_tau = pt.switch(used, tau, 1.0)
        deviance = squares - 2.0 * mu * sums + counts * mu**2
        terms = 0.5 * counts * (pt.log(safe_tau) - _LOG_2PI) - 0.5 * safe_tau * deviance
        total = pt.switch(inside, zeta * pt.switch(used, terms, 0.0).sum(), -np.inf)
        return check_parameters(total, pt.all(pt.gt(tau, 0)), msg="tau > 0")

    def kernel_inputs(self, params):
        """The kernels read the priors of ``mu`` and ``tau``: hypers ``(m, t, a, b, K_max)``, parameters ``(mu, tau)``."""
        _, mu, tau, _, d = params
        k_max, d = mu.type.shape[0], int(_static_int(d))
        loc, scale = check_parameter_variable("mu", mu, "normal", "pm.Normal")
        shape, gamma_scale = check_parameter_variable("tau", tau, "gamma", "pm.Gamma")

        def per_feature(param):
            return pt.broadcast_to(_as_float(param), (1, d))[0]

        hypers = (
            per_feature(loc),
            per_feature(1.0 / _as_float(scale) ** 2),
            per_feature(shape),
            per_feature(1.0 / _as_float(gamma_scale)),
            pt.constant(k_max, dtype="int64"),
        )
        return hypers, (mu, tau)

    def rng_fn(self, rng, partition, mu, tau, zeta, d, size):
        """``x_i ~ N(mu[z_i], 1/tau[z_i])``; labels must lie in ``0 .. K_max - 1``.  (``mu`` and ``tau`` are in
        the trace, so ``pm.sample_posterior_predictive``'s draws are from the posterior: no warning.)"""
        check_forward_draw(self, integrates_out=False)
        if size not in (None, ()):
            raise ValueError(f"{type(self).__name__} does not support batched draws (size={size})")
        labels = np.asarray(partition)
        if labels.min() < 0 or labels.max() >= mu.shape[0]:
            raise ValueError(
                f"the partition has labels up to {labels.max()} but mu and tau have K_max = {mu.shape[0]} rows: "
                "NormalMixture allows at most K_max clusters (choose K_max >= n to remove the restriction)"
            )
        return rng.normal(mu[labels], 1.0 / np.sqrt(tau[labels]))

    def support_point_graph(self, partition, mu, tau, zeta, d):
        return mu[pt.clip(partition, 0, mu.shape[0] - 1)]


normal_mixture = NormalMixtureRV()


class NormalMixture(PartitionMixture):
    r"""Real features, Normal clusters with explicit means ``mu`` and precisions ``tau`` (Jain & Neal 2007).

    .. math::

        x_{ij} \mid z, \mu, \tau \sim N(\mu_{z_i j}, \tau_{z_i j}^{-1}),

    where ``mu`` and ``tau`` are ``(K_max, d)`` PyMC random variables: row
    ``k`` holds the parameters of the cluster labelled ``k`` (module
    docstring).  Unlike :class:`NormalGammaMixture`, the prior of the means
    does not depend on the precisions, and no marginal likelihood exists in
    closed form: the parameters stay in the model, and the partition steps
    (``GibbsStep``, ``IncrementalMetropolisStep``,
    ``NonconjugateSplitMergeStep``) move ``z``, ``mu`` and ``tau`` together.

    The partition is restricted to at most ``K_max`` clusters: the log
    density is ``-inf`` beyond, and no step proposes more.  Choose ``K_max``
    well above the number of clusters the posterior supports (check that the
    trace of ``partition_n_clusters`` stays clear of it); ``K_max = n``
    removes the restriction at the cost of ``2 n d`` parameters in the trace.
    If hyperparameters of the partition prior are random, the restriction is
    the factor ``1[K <= K_max]`` of the joint density, not a renormalised
    prior.  Forward draws of the partition prior (``pm.sample_prior_predictive``)
    know nothing of the restriction: a draw with more than ``K_max`` clusters
    has no rows for its data, which is a ``ValueError``.

    PyMC starts ``mu`` and ``tau`` at their priors' means; with a vague prior
    that is far from the data, give them an ``initval`` near it (e.g. the
    sample mean and precision in every row), or the first scans spend their
    time on clusters drawn from the prior.

    Parameters
    ----------
    name : str
    partition : integer vector of length n
        Canonical cluster labels (a partition prior variable, or fixed labels).
    mu : PyMC variable of shape (K_max, d)
        Cluster means; for the step methods a ``pm.Normal`` whose parameters
        are scalars or per feature (the same for every row).
    tau : PyMC variable of shape (K_max, d)
        Cluster precisions; for the step methods a ``pm.Gamma`` with
        parameters that are the same for every row.
    observed : array (n, d) or (n,)

    Notes
    -----
    Op parameters: ``(partition, mu (K_max, d), tau (K_max, d), d)``; ``family = NORMAL``.

    Examples
    --------
    >>> import numpy as np, pymc as pm, pymc_partitions as pmp
    >>> X = np.r_[np.random.default_rng(0).normal(-3, 1, (15, 1)), np.random.default_rng(1).normal(3, 1, (15, 1))]
    >>> with pm.Model() as model:
    ...     z = pmp.DirichletProcessPartition("z", alpha=1.0, n=30)
    ...     mu = pm.Normal("mu", 0.0, 5.0, shape=(10, 1))
    ...     tau = pm.Gamma("tau", 2.0, 2.0, shape=(10, 1))
    ...     x = pmp.NormalMixture("x", partition=z, mu=mu, tau=tau, observed=X)
    ...     step = pmp.NonconjugateSplitMergeStep([z, mu, tau])
    ...     idata = pm.sample(step=step, draws=100, tune=50, chains=2, progressbar=False, random_seed=1)
    >>> z = idata.posterior["z"].values
    >>> float((z[..., 0] == z[..., 29]).mean())  # the two groups never share a cluster
    0.0
    """

    rv_op = normal_mixture
    spec = normal.SPEC

    @classmethod
    def with_default_priors(cls, name, partition, observed, k_max=None, **kwargs):
        r"""The model with its learned default: ``mu`` and ``tau`` with priors centred on the data, whose
        hyperparameters ``kappa0``, ``a`` and ``scale`` are learned (``families.normal.default_hyperpriors``).

        Call it inside a model context.  It creates the hyperprior variables
        ``f"{name}_kappa0"``, ``f"{name}_a"``, ``f"{name}_scale"`` (log-normal,
        medians 0.1, 1.5 and 1), the cluster parameters ``f"{name}_mu"`` and
        ``f"{name}_tau"`` of shape ``(k_max, d)``,

        .. math::

            \mu_{kj} \sim N\big(m_j, S_{jj} / \kappa_0\big), \qquad
            \tau_{kj} \sim \operatorname{Gamma}\big(a, \text{rate } \text{scale} \cdot a \, S_{jj} / 3\big),

        (``m``, ``S_jj``: the data's column means and variances), and the
        observed variable, which it returns.  The partition steps move ``z``,
        ``mu`` and ``tau``; PyMC moves the three hyperparameters given them.

        Parameters
        ----------
        name : str
        partition : partition variable
        observed : array (n, d) or (n,)
        k_max : int
            The number of parameter rows, the most clusters the model allows
            (required: choose it well above the number of clusters you expect).
        **kwargs
            ``kappa0``, ``a`` or ``scale`` with a number fixes it (a PyMC
            variable gives it your own prior); others go to the distribution.
        """
        check_positive_int("k_max", k_max, "the number of rows of mu and tau, the most clusters the model allows")
        for key in ("mu", "tau"):
            if key in kwargs:
                raise TypeError(
                    f"NormalMixture.with_default_priors creates {key} itself ({name}_{key}); to give it your own "
                    "prior, build the model with NormalMixture(name, partition, mu=..., tau=..., observed=...)"
                )
        def build(hyper):
            d = len(hyper["m"])
            mu = pm.Normal(f"{name}_mu", hyper["m"], 1.0 / pt.sqrt(hyper["t"]), shape=(int(k_max), d))
            tau = pm.Gamma(f"{name}_tau", alpha=hyper["a"], beta=hyper["b"], shape=(int(k_max), d))
            return cls(name, partition=partition, mu=mu, tau=tau, observed=observed, **kwargs)

        return _with_default_priors(cls, name, partition, observed, kwargs, build=build)

    @classmethod
    def dist(cls, partition, mu, tau, **kwargs):
        def hypers(d, data, n_items):
            k_mu = check_parameter_block("mu", mu, d)
            k_tau = check_parameter_block("tau", tau, d)
            if k_mu != k_tau:
                raise ValueError(f"mu and tau must have the same number of rows (K_max), got {k_mu} and {k_tau}")
            return (_as_float(mu), _as_float(tau))

        return cls._build(partition, hypers, **kwargs)
