"""The kernel tests again with numba's bounds checking on (``NUMBA_BOUNDSCHECK=1``) and the other ``_jit`` mode.

numba does not check array indices by default: an index out of range in a
kernel reads or writes memory it does not own, which can corrupt a run
silently or crash the interpreter.  Here a subset of the kernel tests runs
in a fresh process with bounds checking on and its own numba cache (cached
code compiled without checks must not be reused): every cluster operation,
the Gibbs sweep (with capacity growth), split-merge and ARM, on the
Normal-inverse-Wishart family (the one with d x d blocks), and the cluster
operations and the Gibbs sweep on the relational IRM (its split-merge and ARM
moves run the same family-generic code as the Normal-inverse-Wishart's over
the IRM's cluster operations, checked here; Beta-Bernoulli dropped: its
kernels index as the others do; both for CI time), so that an out-of-range
index fails a test with an ``IndexError``.

The rerun also compiles the kernels in the ``_jit`` mode the suite does not
run in (``PYMC_PARTITIONS_JIT``: plain ``numba.njit`` when the default is the
wrapper-free twins) and with the other choice of family dispatch
(``PYMC_PARTITIONS_FAMILY_DISPATCH``: the suite compiles each kernel once per
kind, ``tests/conftest.py``; a user's process, and this rerun, once per
family), so CI runs the kernel tests under both modes of each.
"""

import os
import subprocess
import sys

import pytest

import pymc_partitions
from pymc_partitions import _dispatch, _jit

OTHER_MODE = next(mode for mode in _jit.MODES if mode != _jit.MODE)
OTHER_DISPATCH = next(mode for mode in _dispatch.FAMILY_DISPATCH_MODES if mode != _dispatch.FAMILY_DISPATCH)
TESTS = os.path.dirname(__file__)
PACKAGE_ROOT = os.path.dirname(os.path.dirname(pymc_partitions.__file__))
"""Where this process imported the package from: the subprocess must test the same code (from the ``tests``
directory an installed copy elsewhere, e.g. another worktree's editable install, would come first)."""
SELECTION = (
    "dp and normal_inverse_wishart or dp and infinite_relational and not claimed_target_ratio "
    "or capacity or scan_probabilities"
)

CANARY = """
import numpy as np
from numba import njit

@njit
def read(a, i):
    return a[i]

try:
    read(np.zeros(3), 5)
except IndexError:
    print("bounds checked")
"""


@pytest.mark.slow
def test_kernel_tests_pass_with_bounds_checking(tmp_path):
    path = os.pathsep.join(p for p in (PACKAGE_ROOT, os.environ.get("PYTHONPATH")) if p)
    env = {
        **os.environ, "NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": str(tmp_path), "PYTHONPATH": path,
        "PYMC_PARTITIONS_JIT": OTHER_MODE, "PYMC_PARTITIONS_FAMILY_DISPATCH": OTHER_DISPATCH,
    }
    canary = subprocess.run([sys.executable, "-c", CANARY], env=env, capture_output=True, text=True, check=True)
    assert canary.stdout.strip() == "bounds checked"
    files = ["test_clusters.py", "test_deltas.py", "test_gibbs.py", "test_split_merge_construction.py"]
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "-k", SELECTION,
         *(os.path.join(TESTS, name) for name in files)],
        env=env, capture_output=True, text=True, cwd=os.path.dirname(TESTS),
    )
    assert result.returncode == 0, result.stdout[-4000:]
    assert " passed" in result.stdout.splitlines()[-1]
    modes = subprocess.run(
        [sys.executable, "-c", "from pymc_partitions import _dispatch, _jit; print(_jit.MODE, _dispatch.FAMILY_DISPATCH)"],
        env=env, capture_output=True, text=True, check=True,
    )
    assert modes.stdout.split() == [OTHER_MODE, OTHER_DISPATCH]
