import contextlib
import os
import sys

os.environ.setdefault("PYMC_PARTITIONS_FAMILY_DISPATCH", "run")
"""The suite runs every kernel on many families: each kernel is compiled once per kind with the family chosen at run
time (``pymc_partitions._dispatch.FAMILY_DISPATCH``), not once per family as in a user's process; the kernel tests
run again in the default mode (``tests/kernels/test_boundscheck.py``).  Set before the package is imported; the
processes the tests start (notebook kernels, Dask workers) inherit it."""

import pytensor  # noqa: E402
import pytest  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))

LONG_FIRST = (
    "test_component_exactness.py",
    "test_tgmcmc_exactness.py",
    "test_subcluster_exactness.py",
    "test_exactness.py",
    "test_learned_priors_exactness.py",
    "kernels/test_boundscheck.py",
    "kernels/test_deltas.py",
    "kernels/test_subcluster.py",
)
"""Test files that take 1.5 to 6 minutes with an empty numba cache, longest first.

pytest-xdist (``--dist loadfile --no-loadscope-reorder``, ``pyproject.toml``)
hands whole files to the workers in the order below: these first, so that none
of them starts near the end while the other worker has nothing left to run
(a full run that started the 213-s bounds-checked rerun last left the other
worker idle for its last 200 s); then the other files in collection order; then the
notebooks.  Measured with ``pytest --junitxml`` (per-file sums of the test
times) on an empty ``NUMBA_CACHE_DIR``.
"""


NOTEBOOKS_LONG_FIRST = (
    "13_coarsening_your_own_model", "10_coarsening_real_data", "04_priors_compared", "12_heavy_tailed_galaxies",
    "08_subcluster_million", "11_your_own_cluster_model", "minsm_large", "09_galaxies_old_faithful", "01_getting_started",
)
"""The notebooks of 30 to 110 s (CI, ``--junitxml``), longest first, before the others: the last unit of work to
start is then a short one and the two workers finish together."""


def _rank(item):
    if item.get_closest_marker("notebook") is not None:
        stem = item.nodeid.rsplit("[", 1)[-1].rstrip("]")
        return (2, NOTEBOOKS_LONG_FIRST.index(stem) if stem in NOTEBOOKS_LONG_FIRST else len(NOTEBOOKS_LONG_FIRST))
    path = item.nodeid.split("::")[0].removeprefix("tests/")
    return (0, LONG_FIRST.index(path)) if path in LONG_FIRST else (1, 0)


def pytest_collection_modifyitems(session, config, items):
    """Long files first (``LONG_FIRST``); the example notebooks last: they then load the kernels the tests compiled
    from the numba cache."""
    items.sort(key=_rank)


def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` with each example (a notebook, or the README's script) a unit of work of its own.

    A test file is one unit, so that one worker compiles a file's kernels
    once; each notebook and ``examples/flea_beetles.py`` (``tests/test_examples.py``,
    last) is a unit of its own, so that both workers execute examples at the end
    instead of one running all of them (5.5 minutes) while the other waits, and
    the script runs with the notebooks, not with the first test of its file.
    """
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class NotebooksApart(LoadFileScheduling):
        def _split_scope(self, nodeid):
            own = "::test_notebook_runs[" in nodeid or "::test_flea_beetles_script" in nodeid
            return nodeid if own else super()._split_scope(nodeid)

    return NotebooksApart(config, log)


@pytest.fixture(autouse=True)
def _pytensor_without_c(request):
    """Tests marked ``pytensor_python`` run PyTensor's Python implementations (``cxx=""``): no C compilation.

    Such tests compile many small PyTensor functions and evaluate each a few
    times; with an empty PyTensor cache, compiling their C code took most of
    their time (e.g. ``tests/distributions/test_mixtures.py``: 141 s with C,
    9 s without, one process).  Tests that sample with NUTS keep the C
    backend, which is then faster (``tests/test_learned_priors_exactness.py``:
    70 s with C, 440 s without).
    """
    marked = request.node.get_closest_marker("pytensor_python") is not None
    with pytensor.config.change_flags(cxx="") if marked else contextlib.nullcontext():
        yield
