"""The contract between the step methods and the kernels: :class:`Kernel` and its declarations, and :class:`Executor`.

Every sampler is a kernel: a pair of functions

* ``init(model, labels, options, rng) -> sampler`` (:class:`Init`): the
  *sampler state* of a chain starting at the canonical labels ``labels``
  (int64, one per item) for the kernel model ``model`` (``state.Model``):
  what the algorithm keeps besides the partition -- its options, a guide
  tree, hash tables, shard bounds and an executor, or the options alone;
* ``transition(model, state, sampler, rng) -> (state, sampler, info)``
  (:class:`Transition`): one iteration from the partition ``state``
  (``state.State``), returning the new partition, the new sampler state and
  an ``info.Info`` (the move, its log ratio pieces, and the partition's
  summaries and canonical labels).

A sampler state is valid for any partition, so a step keeps it across
partitions written by other steps; ``rng`` is a ``numpy.random.Generator``,
the only source of randomness.  The sampler state has one name everywhere
(``sampler``); a module whose kernel keeps more than its options calls that
type ``Sampler``, and a *population* kernel (ARM, past-state split-merge)
takes a ``background.Population`` (the window of every chain's past states
and this chain's index), which the loop builds before each transition.

A kernel also declares

* what it samples (:class:`Support`): the model kinds, the partition priors
  and the minimum number of items; the steps refuse anything else before
  sampling (``steps.support``), and every cell these declarations imply is
  enumerated by a test or listed with the reason it is not, in one table the
  suite checks against them (``tests/enumeration_matrix.py``);
* its options type (``options``), the named tuple its ``init`` takes;
* the loop around its transition (``kernels.chain``): ``population`` (the
  transition takes a ``Population``), ``rebuild_period`` (the state is
  rebuilt from its labels every so many transitions) and the tuning
  schedule (:class:`Schedule`: hooks that run only while PyMC tunes).

Each kernel module exposes its kernels as :class:`Kernel` values
(``gibbs.KERNEL``, ...); a step method names one and builds its options;
the test runners and benchmarks take the same value and run the same loop
(``kernels.chain.advance``), so what they run is what ``pm.sample`` runs.

What is not a kernel: the split-merge moves of a component model written in
PyMC (``steps.component_split_merge``) change the cluster parameters, which
are PyMC's values and PyTensor functions of the model, not the partition;
``NonconjugateSplitMergeStep`` composes them with the Gibbs kernel on PyMC's
point (docs/design.md §3.6).

The sharded samplers (``kernels.hybrid``, ``kernels.subcluster``) are
drivers run two ways (``kernels.twofold``): their ``transition`` is Python,
run compiled (``twofold.compiled(kernel.transition)``, what numba callers
such as the test runners use) or interpreted, with the items' work done by
``sampler.executor``: ``None`` (this process, on numba threads for large
problems) or an :class:`Executor` such as ``distributed.cluster.DaskShards``.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol

from pymc_partitions import priors
from pymc_partitions._dispatch import ADDITIVE, PARAMETRIC, RELATIONAL

COMPONENT = "component"
"""The model kind of a component model written in PyMC (its numba kind is ``PARAMETRIC``, with the family
``families.COMPONENT``); ``PARAMETRIC`` in a :class:`Support` means ``NormalMixture``."""

MODEL_KINDS = (ADDITIVE, RELATIONAL, PARAMETRIC, COMPONENT)
"""Every model kind a kernel may declare, in the order of the documentation's tables."""

ALL_PRIORS = (priors.DP, priors.PY, priors.NGGP, priors.MFM)
"""Every partition prior (``priors`` codes)."""

REBUILD_PERIOD = 1000
"""A kept state is rebuilt from its labels every this many transitions (``Kernel.rebuild_period``).

Moves update the statistics incrementally (``stats[c] ± item``), so their
rounding errors add up over a run; rebuilding bounds that drift to what
``REBUILD_PERIOD`` transitions can accumulate, at an amortised cost of
``O(n s) / REBUILD_PERIOD`` per transition."""


class Init(Protocol):
    """``init(model, labels, options, rng) -> sampler``: the sampler state of a chain starting at ``labels``."""

    def __call__(self, model: Any, labels: Any, options: Any, rng: Any) -> Any: ...


class Transition(Protocol):
    """``transition(model, state, sampler, rng) -> (state, sampler, info)``: one iteration."""

    def __call__(self, model: Any, state: Any, sampler: Any, rng: Any) -> tuple[Any, Any, Any]: ...


class Restart(Protocol):
    """``restart(tuning_step) -> bool``: whether the sampler state is made afresh by ``init`` (from the chain's
    current labels) before tuning transition ``tuning_step`` (0, 1, ...)."""

    def __call__(self, tuning_step: int) -> bool: ...


def at_doubling_steps(tuning_step):
    """A :class:`Restart` schedule: restart at tuning steps 1, 2, 4, 8, ... (``tuning_step + 1`` a power of two),
    so the last restart falls in the second half of tuning and the sampler state is fixed once PyMC stops tuning."""
    return (tuning_step + 1) & tuning_step == 0


class Adapt(Protocol):
    """``adapt(options, sampler) -> options``: the options :class:`Init` gets at a restart of the tuning schedule,
    given the sampler state the last transition returned (what it learnt since the last restart).  Called only at
    restarts, hence only while PyMC tunes: the kept draws run one fixed kernel."""

    def __call__(self, options: Any, sampler: Any) -> Any: ...


class Prepare(Protocol):
    """``prepare(sampler, tuning_step) -> sampler``: the sampler state for the next transition, given the number of
    tuning transitions before it (``-1`` once PyMC has stopped tuning).  At ``-1`` it must give back a sampler
    state that ``init`` made unchanged: the test runners, which never tune, do not call it."""

    def __call__(self, sampler: Any, tuning_step: int) -> Any: ...


class Support(NamedTuple):
    """What a kernel samples: every combination of these is a cell of the enumeration matrix.

    kinds : tuple of str    model kinds (:data:`MODEL_KINDS`)
    priors : tuple of int   partition priors (``priors`` codes)
    min_items : int         the fewest items it runs on
    """

    kinds: tuple
    priors: tuple = ALL_PRIORS
    min_items: int = 1


class Schedule(NamedTuple):
    """A kernel's tuning schedule: hooks the loop calls while PyMC tunes (and :class:`Prepare` once after).

    restart : Restart or None   when the sampler state is made afresh (tgMCMC's guide tree at tuning steps 1, 2, 4, ...)
    adapt : Adapt or None       the options of a restart's ``init``, from the last sampler state (tempering's ladder)
    prepare : Prepare or None   the sampler state of each transition (the hybrid's warm start)
    """

    restart: Restart | None = None
    adapt: Adapt | None = None
    prepare: Prepare | None = None


class Kernel(NamedTuple):
    """A sampler: its ``init`` and ``transition`` (module docstring), what it supports, its options type and the
    loop around its transition."""

    init: Init
    transition: Transition
    options: type
    support: Support
    population: bool = False
    rebuild_period: int = REBUILD_PERIOD
    schedule: Schedule = Schedule()


class Executor(Protocol):
    """Where the items' work of a sharded sampler runs: the operations its driver calls (``twofold.executed``).

    ``None`` in ``sampler.executor`` means this process (the operations'
    own code in ``kernels.hybrid`` and ``kernels.shards``, and always when
    the driver is compiled); ``distributed.cluster.DaskShards`` runs them on
    Dask workers that keep their shards' rows and labels.  The driver keeps
    the clusters' sizes and statistics (its ``state``'s slots) and decides;
    an executor holding labels elsewhere keeps them in step.  Each method
    takes the driver's sampler state first.

    The hybrid iteration uses :meth:`begin`, :meth:`summarize`,
    :meth:`sweep` and :meth:`finish`; the sub-cluster split-merge all nine.
    """

    def begin(self, sampler, model, state):
        """Start an iteration from ``state`` (an executor holding labels takes ``state.labels`` if they are not
        its own); returns the state."""

    def item_slots(self, sampler, model, state, i, j):
        """The current slots of items ``i`` and ``j``."""

    def select(self, sampler, model, state, i, j):
        """The *selection* of the pair ``i``, ``j``: what identifies the items of their clusters but ``i`` and
        ``j``, which a proposal's passes run over."""

    def pair_pass(self, sampler, model, state, selection, predictive, densities, log_w, seed, forced_slot,
                  want_log_q):
        """One pass over the selection's items (sides drawn with the keyed uniforms of ``seed``, or forced):
        the two sides' ``(stats[2, s], sizes[2], log q)`` without the anchors, reduced in shard order."""

    def assign(self, sampler, model, state, selection, slot_a, slot_b, i, j, theta, log_w, seed):
        """Give the selection's items the sides of the pass with ``seed``: side 0 ``slot_a``, side 1 ``slot_b``;
        ``i`` to ``slot_a``, ``j`` to ``slot_b``."""

    def merge_items(self, sampler, model, state, keep, drop):
        """Give the items of slot ``drop`` the label ``keep``."""

    def summarize(self, sampler, model, state):
        """Cluster numbers (each slot's position in ``state.slots``) and per-shard summaries:
        ``(labels or None, counts[P, K], stats[P, K, s])``."""

    def sweep(self, sampler, model, labels, plan, n_sweeps, n_clusters):
        """Steps 3-5 of the hybrid iteration on every shard, then its merge: ``(z, shard_counts, shard_stats)``,
        canonical labels and their per-shard summaries."""

    def finish(self, sampler, model, state):
        """End an iteration: ``state`` with the labels the iteration's moves gave."""
