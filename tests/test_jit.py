"""``_jit.jit``: numba callers compile a twin without wrappers; Python calls and pickling work as for ``numba.njit``."""

import json
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np

from pymc_partitions import labels

WRAPPERS = """
import json
import numpy as np
from pymc_partitions import labels

labels.canonical_rows(np.array([[4, 4, 1], [0, 2, 2]]), 5)  # calls labels._canonical_into in numba


def wrappers(dispatcher):
    (cres,) = dispatcher.overloads.values()
    code = cres.library.get_llvm_str()
    return [cres.fndesc.llvm_cpython_wrapper_name in code, cres.fndesc.llvm_cfunc_wrapper_name in code]


print(json.dumps({
    "callee compiled for Python": len(labels._canonical_into.signatures),
    "callee wrappers": wrappers(labels._canonical_into.in_numba),
    "caller wrappers": wrappers(labels.canonical_rows),
}))
"""


def _run(code, tmp_path, stdin=None):
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], input=stdin, capture_output=True, check=True,
        env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)},
    )
    return json.loads(result.stdout.decode().strip().splitlines()[-1])


def test_numba_callers_compile_a_twin_without_wrappers(tmp_path):
    """A fresh process (empty cache) calls a jit function from Python that calls another in numba.

    The callee is compiled once, as its twin, with neither the CPython nor the C
    wrapper; the Python-called function has the CPython wrapper only.
    """
    found = _run(WRAPPERS, tmp_path)
    assert found == {"callee compiled for Python": 0, "callee wrappers": [False, False], "caller wrappers": [True, False]}


def test_a_pickled_jit_function_works_in_another_process(tmp_path):
    """numba pickles a dispatcher by its function and options; the rebuilt one has its twin and runs."""
    code = """
    import json, pickle, sys
    import numpy as np
    rows = pickle.loads(sys.stdin.buffer.read())
    print(json.dumps([type(rows).__name__, type(rows.in_numba).__name__, rows(np.array([[4, 4, 1]]), 5).tolist()]))
    """
    found = _run(code, tmp_path, stdin=pickle.dumps(labels.canonical_rows))
    assert found == ["KernelDispatcher", "CPUDispatcher", [[0, 0, 1]]]


def test_python_calls_compile_the_function_itself():
    codes = np.array([7, 3, 7, 0])
    assert labels.canonical(codes, 8).tolist() == [0, 1, 0, 2]
    assert labels.canonical.signatures and labels.canonical.py_func is not labels.canonical.in_numba.py_func
