"""Dispatch on family and kind (``_dispatch``): tags pickle by reference, so numba's cache serves a second process;
the family chosen at compile time (the default) and at run time (``PYMC_PARTITIONS_FAMILY_DISPATCH=run``, the suite's)
give the same chains."""

import json
import os
import pickle
import subprocess
import sys
import textwrap

import pytest

from pymc_partitions import families
from pymc_partitions._dispatch import KIND_TAGS


def _child(code, cache, check=True, **env):
    """Run ``code`` in a fresh Python process with the numba cache ``cache`` and the environment variables ``env``."""
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=check,
        env={**os.environ, "NUMBA_CACHE_DIR": str(cache), **env},
    )


def _last_line(result):
    return result.stdout.strip().splitlines()[-1]


ALL_TAGS = [
    *(cls() for cls in families._FAMILY_CLASSES),
    *(cls(cls.codes[0]) for cls in families._KIND_CLASSES.values()),
    *KIND_TAGS.values(),
]
"""Every tag class of both dispatch modes (``families``), and the states' kind tags."""


@pytest.mark.parametrize("tag", ALL_TAGS, ids=lambda tag: type(tag).__name__)
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
        runs.append(json.loads(_last_line(_child(CHILD, tmp_path))))
    assert runs == [[0, 0], [1, 1]]


MODES = """
import json
import numpy as np
from pymc_partitions import _dispatch, families, priors
from pymc_partitions.kernels import gibbs
from pymc_partitions.state import build_state, make_model

rng = np.random.default_rng(0)
models = [
    make_model(families.NORMAL_GAMMA, rng.normal(size=(12, 2)), families.pack_params(families.NORMAL_GAMMA, 2, 0.0, 0.5, 2.0, 2.0),
               priors.DP, np.array([1.0]), priors.empty_table()),
    make_model(families.BETA_BERNOULLI, (rng.random((12, 3)) < 0.5).astype(float),
               families.pack_params(families.BETA_BERNOULLI, 3, 0.7, 1.3), priors.DP, np.array([1.0]), priors.empty_table()),
]
chains = []
for model in models:
    state, options, chain_rng = build_state(model, np.zeros(12, dtype=np.int64)), gibbs.Options(2), np.random.default_rng(1)
    labels = []
    for _ in range(30):
        state, options, info = gibbs.transition(model, state, options, chain_rng)
        labels.append(info.labels.tolist())
    chains.append(labels)
print(json.dumps({"mode": _dispatch.FAMILY_DISPATCH, "compiled": len(gibbs.transition.signatures), "chains": chains}))
"""


def test_both_dispatch_modes_give_the_same_chains(tmp_path):
    """Gibbs on a Normal-Gamma and a Beta-Bernoulli model, from one seed, in a fresh process per mode: the family
    chosen at compile time compiles the transition once per family, at run time once for both, and the chains agree
    label for label (the kernels' source and arithmetic are the same; only where the family is chosen differs)."""
    found = {
        mode: json.loads(_last_line(_child(MODES, tmp_path / mode, PYMC_PARTITIONS_FAMILY_DISPATCH=mode)))
        for mode in ("compile", "run")
    }
    assert [found[mode]["mode"] for mode in ("compile", "run")] == ["compile", "run"]
    assert found["compile"]["compiled"] == 2 and found["run"]["compiled"] == 1
    assert found["compile"]["chains"] == found["run"]["chains"]
    assert all(len({tuple(labels) for labels in chain}) > 3 for chain in found["run"]["chains"])  # the chains move


def test_an_unknown_dispatch_mode_is_an_error(tmp_path):
    result = _child("import pymc_partitions.families", tmp_path, check=False, PYMC_PARTITIONS_FAMILY_DISPATCH="late")
    assert result.returncode != 0
    assert "PYMC_PARTITIONS_FAMILY_DISPATCH must be one of ('compile', 'run'), got 'late'" in result.stderr


UNDEFINED = """
import numpy as np
from numba import njit
from pymc_partitions import families

@njit
def draw(family, params, rng, theta):
    families.draw_prior(family, params, rng, theta)

try:  # the component family has no draw_prior (NormalMixture, the other parametric family, has)
    draw(families.TAGS[families.COMPONENT], np.zeros(4), np.random.default_rng(0), np.zeros(2))
except TypeError as error:
    print(error)
"""


def test_a_family_function_the_family_lacks_raises_when_chosen_at_run_time(tmp_path):
    """At compile time a family without the function does not compile (``TypingError``); at run time the ``if`` chain
    raises ``TypeError`` rather than run another family's code."""
    result = _child(UNDEFINED, tmp_path, PYMC_PARTITIONS_FAMILY_DISPATCH="run")
    assert _last_line(result) == "families.draw_prior is not defined for this family"
