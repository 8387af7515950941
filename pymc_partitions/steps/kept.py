"""What a step keeps of its chain between draws, and one draw from a PyMC point: the loop of ``kernels.chain``.

The numba state is kept between draws while ``z`` (and the cluster rows the
step owns) are the values the step wrote last: a draw then costs what its
moves touch plus O(n) to copy ``z`` out.  Other hyperparameter values only
refresh the cluster caches (O(K c)); a ``z`` from elsewhere (the initial
point, another step) is validated and the state rebuilt from it, and so is
every state of a model whose kernel data change with the rows (a component
model's log likelihoods, ``distributions.cluster_rows``).  Every
``kernel.rebuild_period`` transitions the state is rebuilt from its labels
(``kernels.chain.advance``).
"""

from __future__ import annotations

import numpy as np

from pymc_partitions._validation import check_label_vector
from pymc_partitions.kernels.chain import advance, population_sampler, sampler_for
from pymc_partitions.labels import relabel
from pymc_partitions.state import refresh_all, state_of


class KeptChain:
    """What a step keeps of one chain between draws: the values it wrote, the kernel model and numba state of its
    last transition, its sampler state and its counts.  Values only (PyMC deep-copies a step's per-chain state): the
    problem, kernel and options are the step's, passed to :meth:`draw`."""

    def __init__(self):
        self.written = None
        self.model = None
        self.state = None
        self.sampler = None
        self.transitions = 0
        self.tuning_steps = 0

    def draw(self, problem, kernel, options, models, point, rng, tuning, population=None):
        """One transition of ``kernel`` with ``options`` on ``problem`` from ``point`` (a PyMC point), the kernel
        model read by ``models`` (``steps.kernel_model.KernelModels``): ``(new_point, info, sampler)``.
        ``tuning``: whether PyMC tunes; ``population``: a population kernel's history, ``(history, first, own)``
        (``kernels.chain.population_sampler``)."""
        kernel_model, state = self.state_at(problem, models, point)
        tuning_step = self.tuning_steps if tuning else -1
        if kernel.population:
            sampler = population_sampler(options, *population)
        else:
            sampler = sampler_for(kernel, options, kernel_model, state, self.sampler, tuning_step, rng)
        period = kernel.rebuild_period
        state, sampler, info = advance(kernel.transition, kernel_model, state, sampler, self.transitions, period, rng)
        new_point = dict(point)
        new_point[problem.name] = info.labels
        rows = problem.rows
        if rows is not None:
            rows.write(kernel_model, state, info.labels, new_point, rng)
        self.written = tuple(new_point[name] for name in _written_names(problem))
        self.model, self.state, self.sampler = kernel_model, state, sampler
        self.transitions += 1
        self.tuning_steps += bool(tuning)
        return new_point, info, sampler

    def state_at(self, problem, models, point):
        """The kernel model at ``point`` and the numba state for its labels: the kept one (refreshed if the kernel
        model changed), or one built from ``z`` after validating it (integer, length n; labels are relabelled
        canonically, so negative or sparse ones are fine) before PyTensor reads the point, its clusters given their
        rows in ``point``."""
        state = self._kept(problem, point)
        if state is None:
            z = point[problem.name]
            labels = relabel(check_label_vector(problem.name, z, problem.n)).astype(np.int64)
        kernel_model = models.at(point)
        rows = problem.rows
        if rows is not None and rows.dynamic:
            kernel_model = kernel_model._replace(data=rows.data(point))
        if state is None:
            state = state_of(kernel_model, labels)
            if rows is not None:
                rows.load(kernel_model, state, z, point)
        elif self.model is not kernel_model:
            refresh_all(kernel_model, state)
        return kernel_model, state

    def _kept(self, problem, point):
        """The kept state if ``point`` holds the values this chain wrote last (and its data do not change with
        the rows), else ``None``."""
        rows = problem.rows
        if self.state is None or (rows is not None and rows.dynamic):
            return None
        for name, written in zip(_written_names(problem), self.written):
            value = point[name]
            if value is not written and not np.array_equal(value, written):
                return None
        return self.state


def _written_names(problem):
    """The names of the values a step writes: ``z`` and the cluster rows it owns."""
    rows = problem.rows
    return (problem.name, *(() if rows is None else rows.names))
