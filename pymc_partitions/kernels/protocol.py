"""The contract between the step methods and the kernels: :class:`Kernel`, and the sharded samplers' :class:`Executor`.

Every sampler is a kernel: a pair of functions

* ``init(model, labels, options, rng) -> algo_state`` (:class:`Init`): the
  sampler's own state for the kernel model ``model`` (``state.Model``) and
  the canonical labels ``labels`` (int64, one per item) of a chain's first
  partition: what the algorithm keeps besides the partition -- its options,
  a guide tree, hash tables, shard bounds and an executor;
* ``transition(model, state, algo_state, rng) -> (state, algo_state, info)``
  (:class:`Transition`): one iteration from the partition ``state``
  (``state.State``), returning the new partition, the new sampler state and
  an ``info.Info`` (the move, its log ratio pieces, and the partition's
  summaries and canonical labels).

``algo_state`` is valid for any partition, so a step keeps it across
partitions written by other steps; ``rng`` is a ``numpy.random.Generator``,
the only source of randomness.  Each kernel module exposes its kernels as
:class:`Kernel` values (``gibbs.KERNEL``, ...); a step method names one
(``PartitionStep.kernel``) and builds its ``options``; test runners and
benchmarks take the same value, so what they run is what ``pm.sample`` runs.

A *population* kernel (ARM, past-state split-merge) takes as ``algo_state``
a ``background.Population``: the window of every chain's past states and
this chain's index, which the population steps (and the test runners) build
before each transition.

What is not a kernel: the split-merge moves of a component model written in
PyMC (``steps.component_split_merge``) change the cluster parameters, which
are PyMC's values and PyTensor functions of the model, not the partition;
``NonconjugateSplitMergeStep`` runs them on PyMC's point before its kernel
(docs/design.md §3.6).

The sharded samplers (``kernels.hybrid``, ``kernels.subcluster``) are
drivers run two ways (``kernels.twofold``): their ``transition`` is Python,
run compiled (``twofold.compiled(kernel.transition)``, what numba callers
such as the test runners use) or interpreted, with the items' work done by
``algo_state.executor``: ``None`` (this process, on numba threads for large
problems) or an :class:`Executor` such as ``distributed.cluster.DaskShards``.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple, Protocol


class Init(Protocol):
    """``init(model, labels, options, rng) -> algo_state``: the sampler state of a chain starting at ``labels``."""

    def __call__(self, model: Any, labels: Any, options: Any, rng: Any) -> Any: ...


class Transition(Protocol):
    """``transition(model, state, algo_state, rng) -> (state, algo_state, info)``: one iteration."""

    def __call__(self, model: Any, state: Any, algo_state: Any, rng: Any) -> tuple[Any, Any, Any]: ...


class Kernel(NamedTuple):
    """A sampler's ``init`` and ``transition`` (module docstring) and whether its sampler state is a
    ``background.Population`` built from every chain's history (ARM, past-state split-merge)."""

    init: Callable
    transition: Callable
    population: bool = False


class Executor(Protocol):
    """Where the items' work of a sharded sampler runs: the operations its driver calls (``twofold.executed``).

    ``None`` in ``algo_state.executor`` means this process (the operations'
    own code in ``kernels.hybrid`` and ``kernels.shards``, and always when
    the driver is compiled); ``distributed.cluster.DaskShards`` runs them on
    Dask workers that keep their shards' rows and labels.  The driver keeps
    the clusters' sizes and statistics (its ``state``'s slots) and decides;
    an executor holding labels elsewhere keeps them in step.  Each method
    takes the driver's sampler state first.

    The hybrid iteration uses :meth:`begin`, :meth:`summarize`,
    :meth:`sweep` and :meth:`finish`; the sub-cluster split-merge all nine.
    """

    def begin(self, algo_state, model, state):
        """Start an iteration from ``state`` (an executor holding labels takes ``state.labels`` if they are not
        its own); returns the state."""

    def item_slots(self, algo_state, model, state, i, j):
        """The current slots of items ``i`` and ``j``."""

    def select(self, algo_state, model, state, i, j):
        """The *selection* of the pair ``i``, ``j``: what identifies the items of their clusters but ``i`` and
        ``j``, which a proposal's passes run over."""

    def pair_pass(self, algo_state, model, state, selection, predictive, densities, log_w, seed, forced_slot,
                  want_log_q):
        """One pass over the selection's items (sides drawn with the keyed uniforms of ``seed``, or forced):
        the two sides' ``(stats[2, s], sizes[2], log q)`` without the anchors, reduced in shard order."""

    def assign(self, algo_state, model, state, selection, slot_a, slot_b, i, j, theta, log_w, seed):
        """Give the selection's items the sides of the pass with ``seed``: side 0 ``slot_a``, side 1 ``slot_b``;
        ``i`` to ``slot_a``, ``j`` to ``slot_b``."""

    def merge_items(self, algo_state, model, state, keep, drop):
        """Give the items of slot ``drop`` the label ``keep``."""

    def summarize(self, algo_state, model, state):
        """Cluster numbers (each slot's position in ``state.slots``) and per-shard summaries:
        ``(labels or None, counts[P, K], stats[P, K, s])``."""

    def sweep(self, algo_state, model, labels, plan, n_sweeps, n_clusters):
        """Steps 3-5 of the hybrid iteration on every shard, then its merge: ``(z, shard_counts, shard_stats)``,
        canonical labels and their per-shard summaries."""

    def finish(self, algo_state, model, state):
        """End an iteration: ``state`` with the labels the iteration's moves gave."""
