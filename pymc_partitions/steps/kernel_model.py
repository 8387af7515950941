"""The kernels' model at a point: the problem's data and the hyperparameters' current values, checked and packed.

A step reads the hyperparameters at every draw (other PyMC steps may have
moved them) through the problem's one compiled function
(``distributions.discovery.Hyperparameters``).  :class:`KernelModels`
memoises the kernel model (``state.Model``) on those values: unchanged
values give the same model object, which tells the kept numba state that its
caches are current (``steps.kept``), and only the part that changed -- the
prior's or the family's hyperparameters -- is validated and repacked; the
data are shared (``state.with_hyperparameters``).
"""

from __future__ import annotations

import numpy as np

from pymc_partitions import families, priors
from pymc_partitions.state import centred_model, with_hyperparameters


class KernelModels:
    """The kernel model of ``problem`` (``distributions.discovery.Problem``) at a point, memoised on the
    hyperparameters' values."""

    def __init__(self, problem):
        self.problem = problem
        self._memo = None
        self._mfm = (None, None)

    def at(self, point):
        """The kernels' ``Model`` at the hyperparameter values of ``point`` (module docstring)."""
        prior_values, family_values = self.problem.hyperparameters(point)
        memo = self._memo
        if memo is not None and _equal(prior_values, memo[0]) and _equal(family_values, memo[1]):
            return memo[2]
        if memo is None or not _equal(prior_values, memo[0]):
            prior = self._prior_parameters(prior_values)
        else:
            prior = (memo[2].prior_params, memo[2].log_v_table)
        if memo is None or not _equal(family_values, memo[1]):
            params = self._family_parameters(family_values)
        else:
            params = memo[3]
        problem = self.problem
        if memo is None:
            model = centred_model(problem.family, problem.data, problem.origin, params, problem.prior, *prior)
        else:
            model = with_hyperparameters(memo[2], params, problem.prior, *prior)
        self._memo = (prior_values, family_values, model, params)
        return model

    def _prior_parameters(self, values):
        """``(prior_params, log_v_table)`` of the partition prior at ``values``, validated (``priors.check_values``)."""
        prior = self.problem.prior
        priors.check_values(prior, values)
        if prior == priors.MFM:
            gamma, log_k_prior = float(values[0]), values[1]
            return np.array([gamma]), self._mfm_table(gamma, log_k_prior)
        return np.array([float(v) for v in values]), priors.empty_table()

    def _family_parameters(self, values):
        """The family's ``params`` (data units) at ``values``, validated against the family's spec.

        A value outside its support (a hyperprior whose initial value sits
        on the boundary, e.g. ``kappa0 = pm.Normal("kappa0", 0, 1)`` starting
        at 0, or a value another step proposed without the model's ``-inf``)
        raises a ``ValueError`` naming it and the fix, at the step's first
        call for an initial point: the kernels never compute with it.  (The
        partition prior's own hyperparameters are refused earlier, when PyMC
        computes the initial point: ``distributions.partitions``.)
        """
        problem = self.problem
        try:
            return families.pack_params(problem.family, problem.d, *values, zeta=problem.zeta)
        except ValueError as err:
            names = ""
            if problem.family == families.NORMAL:
                names = "; m and t = 1/sigma**2 are mu's pm.Normal parameters, a and b tau's pm.Gamma alpha and beta"
            raise ValueError(
                f"{err} (read from the sampler's current point{names}): "
                "give it a prior, or an initval, inside its support"
            ) from None

    def _mfm_table(self, gamma, log_k_prior):
        cached_gamma, table = self._mfm
        if cached_gamma != gamma:
            table = priors.mfm_log_v_table(gamma, log_k_prior, self.problem.n)
            self._mfm = (gamma, table)
        return table


def _equal(values, others):
    return all(np.array_equal(a, b) for a, b in zip(values, others))
