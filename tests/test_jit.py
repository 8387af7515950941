"""``_jit.jit`` in both modes: ``"twins"`` (numba callers compile a twin without wrappers) and ``"njit"``
(plain ``numba.njit(cache=True)``); Python calls and pickling work in each.

Each check runs in a fresh process with the mode set by ``PYMC_PARTITIONS_JIT``
and an empty numba cache, whatever mode this process runs in.
"""

import json
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from pymc_partitions import _jit, labels

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
    "twin is another function": labels.canonical_rows.py_func is not labels.canonical_rows.in_numba.py_func,
}))
"""

PLAIN = """
import json, sys
import numba
import numpy as np
from pymc_partitions import _jit, families, priors, labels
from pymc_partitions.kernels import gibbs
from pymc_partitions.state import build_state, make_model

x = np.random.default_rng(0).normal(size=(12, 2))
params = families.pack_params(families.NORMAL_GAMMA, 2, 0.0, 0.5, 2.0, 2.0)
model = make_model(families.NORMAL_GAMMA, x, params, priors.DP, np.array([1.0]), priors.empty_table())
state, options, info = gibbs.transition(model, build_state(model, np.zeros(12, dtype=np.int64)), gibbs.Options(2), np.random.default_rng(1))
print(json.dumps({
    "mode": _jit.MODE,
    "dispatcher": type(labels.canonical_rows).__name__,
    "private options": sorted(set(labels.canonical_rows.targetoptions) & {"no_cpython_wrapper", "no_cfunc_wrapper"}),
    "numba internals imported": "KernelDispatcher" in vars(_jit),
    "labels": info.labels.tolist() == labels.canonical(state.labels, state.sizes.shape[0]).tolist(),
}))
"""


def _run(code, tmp_path, mode, stdin=None):
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], input=stdin, capture_output=True, check=True,
        env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "PYMC_PARTITIONS_JIT": mode},
    )
    return json.loads(result.stdout.decode().strip().splitlines()[-1])


def test_twins_numba_callers_compile_a_twin_without_wrappers(tmp_path):
    """A fresh process (empty cache) calls a jit function from Python that calls another in numba.

    The callee is compiled once, as its twin, with neither the CPython nor the C
    wrapper; the Python-called function has the CPython wrapper only.
    """
    found = _run(WRAPPERS, tmp_path, "twins")
    assert found == {
        "callee compiled for Python": 0, "callee wrappers": [False, False], "caller wrappers": [True, False],
        "twin is another function": True,
    }


def test_njit_mode_is_plain_numba_and_runs_a_kernel(tmp_path):
    found = _run(PLAIN, tmp_path, "njit")
    assert found == {
        "mode": "njit", "dispatcher": "CPUDispatcher", "private options": [], "numba internals imported": False,
        "labels": True,
    }


@pytest.mark.parametrize("mode", _jit.MODES)
def test_a_pickled_jit_function_works_in_another_process(tmp_path, mode):
    """numba pickles a dispatcher by its class, function and options; the rebuilt one runs (and has its twin)."""
    code = f"""
    import json, pickle, subprocess, sys
    import numpy as np
    from pymc_partitions import labels
    data = pickle.dumps(labels.canonical_rows)
    reader = "import json, pickle, sys, numpy as np; rows = pickle.loads(sys.stdin.buffer.read()); " \\
        "print(json.dumps([type(rows).__name__, hasattr(rows, 'in_numba'), rows(np.array([[4, 4, 1]]), 5).tolist()]))"
    out = subprocess.run([sys.executable, "-c", reader], input=data, capture_output=True, check=True)
    print(out.stdout.decode().strip().splitlines()[-1])
    """
    found = _run(code, tmp_path, mode)
    expected = ["KernelDispatcher", True] if mode == "twins" else ["CPUDispatcher", False]
    assert found == [*expected, [[0, 0, 1]]]


def test_an_unknown_mode_is_an_error(tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", "import pymc_partitions.labels"], capture_output=True, text=True,
        env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "PYMC_PARTITIONS_JIT": "fast"},
    )
    assert result.returncode != 0 and "PYMC_PARTITIONS_JIT must be one of ('njit', 'twins'), got 'fast'" in result.stderr


def test_python_calls_work_in_this_process():
    codes = np.array([7, 3, 7, 0])
    assert labels.canonical(codes, 8).tolist() == [0, 1, 0, 2]
    assert pickle.loads(pickle.dumps(labels.canonical))(codes, 8).tolist() == [0, 1, 0, 2]


LITERALS = """
from pymc_partitions._jit import jit


@jit
def callee(x, flag, k):
    return x + (1.0 if flag else 0.0) + k


@jit
def caller(x, s):
    return callee(x, True, -1) + callee(x, False, -1) + callee(x, True, s)
"""


@pytest.mark.parametrize("mode", _jit.MODES)
def test_twins_compile_a_callee_once_for_the_constants_its_callers_pass(tmp_path, mode):
    """numba compiles a callee once per literal constant its callers pass (``f(x, True)``, ``f(x, False)``); a twin
    takes the arguments' plain types, so three calls with different constants compile it once (``"njit"``: 3)."""
    (tmp_path / "literals.py").write_text(LITERALS)
    code = f"""
    import json, sys
    sys.path.insert(0, {str(tmp_path)!r})
    import literals
    callee = getattr(literals.callee, "in_numba", literals.callee)
    print(json.dumps([literals.caller(1.0, 3), len(callee.signatures)]))
    """
    value, specialisations = _run(code, tmp_path, mode)
    assert value == 1.0 + 0.0 + 5.0 and specialisations == (1 if mode == "twins" else 3)


def test_announcing_compilation_speaks_once_and_only_when_numba_compiles():
    """The step's first-draw line (``steps.base``): said at the first compilation in the block, never when nothing
    compiles (a function already compiled, as one loaded from the cache)."""
    import numba

    said = []

    @numba.njit
    def add(a, b):
        return a + b

    with _jit.announcing_compilation(lambda: said.append("first")):
        assert add(1, 2) == 3 and add(1.5, 2.0) == 3.5  # two compilations, one line
    with _jit.announcing_compilation(lambda: said.append("again")):
        assert add(3, 4) == 7  # compiled already
    assert said == ["first"]
