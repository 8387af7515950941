"""Compile-time dispatch (``_dispatch``): tags pickle by reference, so numba's cache serves a second process."""

import json
import os
import pickle
import subprocess
import sys
import textwrap

import pytest

from pymc_partitions import families
from pymc_partitions._dispatch import KIND_TAGS


@pytest.mark.parametrize("tag", [*families.TAGS, *KIND_TAGS.values()], ids=lambda tag: type(tag).__name__)
def test_tags_are_module_attributes_and_pickle_by_reference(tag):
    cls = type(tag)
    module = sys.modules[cls.__module__]
    assert getattr(module, cls.__name__) is cls
    assert type(pickle.loads(pickle.dumps(tag))) is cls


CHILD = """
import json
import numpy as np
from pymc_partitions import families, priors
from pymc_partitions.state import build_state, log_joint, make_model

data = np.random.default_rng(0).normal(size=(10, 2))
model = make_model(families.NORMAL_GAMMA, data, families.pack_params(families.NORMAL_GAMMA, 2, 0.0, 1.0, 1.0, 1.0),
                   priors.DP, np.array([1.0]), priors.empty_table())
log_joint(model, build_state(model, np.arange(10) % 3))
print(json.dumps([sum(f.stats.cache_hits.values()) for f in (build_state, log_joint)]))
"""


def test_a_second_process_loads_the_compiled_kernels_from_the_cache(tmp_path):
    runs = []
    for _ in range(2):
        result = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(CHILD)], capture_output=True, text=True, check=True,
            env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)},
        )
        runs.append(json.loads(result.stdout.strip().splitlines()[-1]))
    assert runs == [[0, 0], [1, 1]]
