"""Kernels compiled without numba's reference counting (``_nrt=False``).

numba compiles a callee that does not choose its own setting with its first
caller's, so every function such a kernel reaches must compile without
reference counting too: it must not allocate (nor return an array: a
counted caller would later release a reference it was never given), or must
ask for reference counting itself (the Normal-inverse-Wishart functions).  Whether that holds depends on
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
from pymc_partitions import families
from pymc_partitions._dispatch import KIND_TAGS
from pymc_partitions.state import Model, State

rows, vector, index, flags = np.zeros((3, 2)), np.zeros(3), np.zeros(3, dtype=np.int64), np.zeros(3, dtype=np.bool_)
family = families.TAGS[FAMILY]
model = numba.typeof(Model(family, rows, vector, 0, vector, vector, vector, vector))
state = numba.typeof(State(KIND_TAGS[family.kind], index, index, rows, rows, vector, index, index, index, index, index, index, rows))
rng = numba.typeof(np.random.default_rng(0))
floats, ints, bools, table = numba.typeof(vector), numba.typeof(index), numba.typeof(flags), numba.typeof(rows)
"""

KERNELS = {
    "clusters.update_items": """
from pymc_partitions.kernels import clusters
clusters.update_items.compile((model, state, ints, types.int64, ints, ints, types.float64, floats, floats, floats, floats, rng))
""",
    "clusters.set_log_weights": """
from pymc_partitions.kernels import clusters

@numba.njit(_nrt=False)
def call(model, state, members, count, candidates, n_candidates, out, work):
    clusters.set_log_weights(model, state, members, count, candidates, n_candidates, out, work)

call.compile((model, state, ints, types.int64, ints, types.int64, floats, table))
""",
    "arm._construct": """
from pymc_partitions.kernels import arm
i = np.int64(0)
construction = numba.typeof(arm.Construction(i, i, True, index, flags, index, index, index, index, i, index, index, index, flags))
scratch = numba.typeof(arm.Scratch(index, flags, index, index, vector, vector, vector, rows, vector))
arm._construct.compile((model, state, construction, scratch, rng))
""",
}
CASES = [
    pytest.param(kernel, family, id=f"{kernel}-{name}")
    for kernel, (family, name) in [
        ("clusters.update_items", (2, "normal_inverse_wishart")),
        ("clusters.set_log_weights", (2, "normal_inverse_wishart")),
        ("clusters.set_log_weights", (5, "infinite_relational")),
        ("arm._construct", (2, "normal_inverse_wishart")),
        ("arm._construct", (5, "infinite_relational")),
    ]
]
"""Each kernel with the family that allocates in its helpers (Normal-inverse-Wishart) and, where it
applies, the relational model: numba compiles only the code of the family in use."""


@pytest.mark.slow
@pytest.mark.parametrize("kernel, family", CASES)
def test_kernel_compiles_before_anything_else(kernel, family, tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)}
    script = SETUP.replace("FAMILY", str(family)) + KERNELS[kernel]
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
