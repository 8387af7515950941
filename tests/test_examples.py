"""Every notebook in ``examples/`` runs from top to bottom without an error.

Each notebook is executed once per test run with nbclient, in a fresh
Jupyter kernel of this Python, and the executed copy (outputs included) is
written to ``build/notebooks/`` (or ``$PMP_EXECUTED_NOTEBOOKS``); the
documentation build renders those copies without executing anything again
(``docs/conf.py``).  New notebooks are picked up by the glob, with no change
here.  ``conftest.py`` runs these tests last, so that the notebooks find the
kernels the other tests compiled in the numba cache (the kernel inherits
``NUMBA_CACHE_DIR`` and imports the package from the same source tree).
"""

import os
import pathlib
import time

import nbclient
import nbformat
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "examples").glob("*.ipynb"))
OUTPUT = pathlib.Path(os.environ.get("PMP_EXECUTED_NOTEBOOKS", ROOT / "build" / "notebooks"))
TIMEOUT = 600
"""Seconds one cell may run (a notebook should take well under two minutes)."""


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
