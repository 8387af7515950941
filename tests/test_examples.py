"""Every notebook in ``examples/`` runs from top to bottom without an error, and so does the README's main job.

Each notebook is executed once per test run with nbclient, in a fresh
Jupyter kernel of this Python, and the executed copy (outputs included) is
written to ``build/notebooks/`` (or ``$PMP_EXECUTED_NOTEBOOKS``); the
documentation build renders those copies without executing anything again
(``docs/conf.py``).  New notebooks are picked up by the glob, with no change
here.  Each notebook asserts its headline result in a code cell.  The README's
main job, ``examples/flea_beetles.py``, runs on a shorter chain
(``FLEA_BEETLES_SHORT``) and asserts that its point partition recovers the
species.  ``conftest.py`` runs these tests last, so that the notebooks find the
kernels the other tests compiled in the numba cache (the kernel inherits
``NUMBA_CACHE_DIR`` and imports the package from the same source tree).
"""

import os
import pathlib
import runpy
import time

import nbclient
import nbformat
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "examples").glob("*.ipynb"))
OUTPUT = pathlib.Path(os.environ.get("PMP_EXECUTED_NOTEBOOKS", ROOT / "build" / "notebooks"))
TIMEOUT = 600
"""Seconds one cell may run (a notebook should take well under two minutes)."""
FLEA_BEETLES_SHORT = {"draws": 300, "tune": 300, "chains": 2}
"""``examples/flea_beetles.py``'s ``main`` arguments in the suite (the script's own run: 4 chains, 1,000 + 1,000)."""


def test_examples_has_notebooks():
    assert NOTEBOOKS, "no notebooks found in examples/"


@pytest.mark.notebook
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs(path):
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook, timeout=TIMEOUT, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    )
    # Figures inline, whatever MPLBACKEND the test run uses; pymc_partitions imported from this source
    # tree, as in the tests: numba keys its cache by the source file's path, so a kernel importing an
    # installed copy would compile every kernel again.
    path_entries = [str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {
        **os.environ,
        "MPLBACKEND": "module://matplotlib_inline.backend_inline",
        "PYTHONPATH": os.pathsep.join(path_entries),
    }
    start = time.perf_counter()
    client.execute(env=env)  # raises CellExecutionError, with the failing cell and traceback
    notebook.metadata["pymc_partitions"] = {"execution_seconds": round(time.perf_counter() - start, 1)}
    OUTPUT.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, OUTPUT / path.name)


@pytest.mark.notebook
def test_flea_beetles_script_recovers_the_species():
    """The README's main job on a shorter chain: its ``main`` asserts the point partition's ARI to the species > 0.9."""
    script = runpy.run_path(str(ROOT / "examples" / "flea_beetles.py"), run_name="flea_beetles")  # defines main only
    _, ari = script["main"](**FLEA_BEETLES_SHORT)
    assert ari > 0.9
