"""Kernels compiled without numba's reference counting (``_nrt=False``).

numba compiles a callee that does not choose its own setting with its first
caller's, so every function such a kernel reaches must compile without
reference counting too: it must not allocate (nor return an array: a
counted caller would later release a reference it was never given), or must
ask for reference counting itself (``families.log_marginal``).  Whether that holds depends on
which caller compiles a callee first, so each kernel is compiled here before
anything else, in a fresh process with an empty numba cache, for argument
types built without calling any compiled function.
"""

import os
import subprocess
import sys

import pytest

SETUP = """
import numba
import numpy as np
from numba import types
from pymc_partitions.state import Model, State

rows, vector, index, flags = np.zeros((3, 2)), np.zeros(3), np.zeros(3, dtype=np.int64), np.zeros(3, dtype=np.bool_)
model = numba.typeof(Model(0, rows, vector, 0, vector, vector, vector))
state = numba.typeof(State(index, index, rows, rows, vector, index, index, index, index, index, index))
rng = numba.typeof(np.random.default_rng(0))
floats, ints, bools, table = numba.typeof(vector), numba.typeof(index), numba.typeof(flags), numba.typeof(rows)
"""

KERNELS = {
    "gibbs.update_items": """
from pymc_partitions.kernels import gibbs
gibbs.update_items.compile((model, state, types.int64, types.float64, floats, floats, floats, floats, rng))
""",
    "moves.set_log_weights": """
from pymc_partitions.kernels import moves
moves.set_log_weights.compile((model, state, ints, types.int64, ints, types.int64, floats, table))
""",
    "arm._construct": """
from pymc_partitions.kernels import arm
i = types.int64
arm._construct.compile(
    (model, state, i, i, types.boolean, ints, bools, ints, ints, ints, ints, ints, ints, ints, ints, bools, bools, ints, ints,
     floats, floats, floats, table, floats, rng)
)
""",
}


@pytest.mark.slow
@pytest.mark.parametrize("kernel", list(KERNELS))
def test_kernel_compiles_before_anything_else(kernel, tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-c", SETUP + KERNELS[kernel]], env=env, capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, result.stderr[-3000:]
