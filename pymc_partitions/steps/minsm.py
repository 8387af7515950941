"""``MinHashSplitMergeStep``: MinHash split-merge (MinSM), LSH split-merge and SDDS as a PyMC step."""

from __future__ import annotations

from pymc_partitions._validation import check_count, check_count_between, check_flag, check_option
from pymc_partitions.kernels import minsm
from pymc_partitions.steps.base import PartitionStep, problem_of

DEFAULT_TABLES = {"minsm": 1, "lsh": 10, "sdds": 1}
"""Hash tables by variant when ``n_tables`` is not given (the paper's ``L``; SDDS uses none)."""


class MinHashSplitMergeStep(PartitionStep):
    """Smart-split/dumb-merge and smart-merge/dumb-split moves guided by hashing (``papers/004_...``).

    Each proposal chooses one of the two move pairs of Wang & Russell (2015)
    with a fair coin, then one of its moves:

    * ``variant="minsm"`` (Luo & Shrivastava, Sec. 3.2): a smart split cuts
      a cluster by a freshly drawn weighted MinHash (a point uniform under
      the cluster's max envelope); a smart merge joins the clusters of an
      item and of a random item of its bucket in a weighted-MinHash table;
    * ``variant="lsh"`` (Sec. 3.1): sign-random-projection tables
      (``n_bits = 10`` bits, ``n_tables = 10`` tables by default); a smart
      split separates an item from an item of its opposite bucket, the
      others placed at random;
    * ``variant="sdds"`` (Wang & Russell 2015): a smart split sequentially
      allocates a cluster between two random items by their predictive
      probabilities, a smart merge picks a partner cluster by the posterior
      of the merge.

    Dumb merges join a random pair of clusters and dumb splits cut a random
    cluster with fair coins.  Every proposal probability is exact
    (``docs/exactness.md``): a MinSM or LSH move costs O(size of the
    clusters touched · D); an SDDS smart merge evaluates every other
    cluster.  The tables are built once, in O(n · D · n_tables), from
    ``hash_seed``: they are a fixed part of the kernel.  Real-valued data
    (Normal families) is hashed through the positive and negative parts of
    its standardised values, binary and count data as it is.

    Parameters
    ----------
    vars : the partition variable
    variant : {"minsm", "lsh", "sdds"}, default "minsm"
    n_moves : int, default 1
        Proposals per step.
    gibbs_sweep : bool, default False
        Follow the proposals with a full collapsed Gibbs sweep.
    n_tables : int, optional
        Hash tables for the smart merges: default 1 for MinSM (the paper's
        ``L = 1``), 10 for LSH; not used by SDDS.
    n_bits : int, default 10
        Bits per sign-projection code (LSH; the paper's ``K``).
    hash_seed : int, default 0
        Seed of the hash tables.
    keep_items : list of int, optional
        Record these items' labels as sample stats ``partition_label_{i}``.
    **kwargs
        ``model``, ``rng``, ``initial_point``, ``compile_kwargs``, as for PyMC's step methods.

    Examples
    --------
    >>> import numpy as np, pymc as pm, pymc_partitions as pmp
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(-4, 1, (30, 2)), rng.normal(4, 1, (30, 2))]
    >>> with pm.Model():
    ...     z = pmp.DirichletProcessPartition("z", alpha=1.0, n=60)
    ...     x = pmp.NormalGammaMixture("x", partition=z, mu0=0.0, kappa0=0.1, a0=2.0, b0=2.0, observed=X)
    ...     step = pmp.MinHashSplitMergeStep(z, n_moves=20)
    ...     idata = pm.sample(step=step, draws=100, tune=100, chains=2, progressbar=False, random_seed=1)
    >>> z = idata.posterior["z"].values[:, -1]
    >>> bool((z[:, 0] != z[:, 59]).all())  # the two groups end in different clusters
    True
    """

    name = "partition_minhash_split_merge"
    kernel = minsm.KERNEL

    def __init__(
        self, vars=None, *, variant="minsm", n_moves=1, gibbs_sweep=False, n_tables=None, n_bits=10, hash_seed=0,
        keep_items=None, rng=None, **kwargs,
    ):
        variant = check_option("variant", variant, tuple(minsm.VARIANTS))
        n_moves = check_count("n_moves", n_moves, 1)
        gibbs_sweep = check_flag("gibbs_sweep", gibbs_sweep)
        n_tables = check_count("n_tables", DEFAULT_TABLES[variant] if n_tables is None else n_tables, 1)
        n_bits = check_count_between("n_bits", n_bits, 1, 30)
        hash_seed = check_count("hash_seed", hash_seed, 0)
        options = minsm.Options(minsm.VARIANTS[variant], n_moves, gibbs_sweep, n_tables, n_bits, hash_seed)
        problem, others = problem_of(vars, **kwargs)
        super().__init__(problem, minsm.KERNEL, options, others=others, keep_items=keep_items, rng=rng)
