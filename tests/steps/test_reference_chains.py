"""Every step method gives, on fixed seeds, the chains recorded before the step adapter was rebuilt (issue 52).

``reference_chains.py`` holds the cases (every step class, every model kind,
every partition prior, coarsening, learned hyperparameters, a population
step, pm.sample's default assignment) and wrote ``reference_chains.npz``
from the code before the change.  Labels must agree exactly; the continuous
variables and the log joint to 1e-9 relative (they go through the same
arithmetic; the tolerance leaves room only for a reordered sum).
"""

import numpy as np
import pytest
from reference_chains import CASES, REFERENCE, draws

from pymc_partitions.labels import large_cluster_counts

RECORDED = dict(np.load(REFERENCE))
ADDED_SINCE_RECORDING = {"z_n_large_clusters": lambda z: large_cluster_counts(z.reshape(-1, z.shape[-1])).reshape(z.shape[:-1])}
"""Deterministics the model gained after the recording (issue 51), checked against their definition from ``z``."""


@pytest.mark.parametrize("case", list(CASES))
def test_chain_is_the_recorded_one(case):
    found = draws(case)
    expected = {key.split("/", 1)[1]: value for key, value in RECORDED.items() if key.startswith(f"{case}/")}
    added = {name: found.pop(name) for name in ADDED_SINCE_RECORDING if name in found}
    assert sorted(found) == sorted(expected)
    for name, values in added.items():
        np.testing.assert_array_equal(values, ADDED_SINCE_RECORDING[name](found["z"]), err_msg=f"{case}: {name}")
    np.testing.assert_array_equal(found["z"], expected["z"])
    assert len({tuple(z) for z in found["z"].reshape(-1, found["z"].shape[-1])}) > 1  # the chain moves
    for name in found:
        if name != "z":
            np.testing.assert_allclose(found[name], expected[name], rtol=1e-9, atol=1e-12, err_msg=f"{case}: {name}")
