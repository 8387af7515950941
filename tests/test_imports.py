"""The numba layers and the Dask executor load without PyMC or PyTensor (a Dask worker needs the kernels alone), and the public API on first use."""

import json
import subprocess
import sys
import textwrap

NUMBA_LAYERS = [
    "pymc_partitions",
    "pymc_partitions._validation",
    "pymc_partitions.labels",
    "pymc_partitions.families",
    "pymc_partitions.priors",
    "pymc_partitions.state",
    "pymc_partitions.kernels.clusters",
    "pymc_partitions.kernels.gibbs",
    "pymc_partitions.kernels.split_merge",
    "pymc_partitions.kernels.arm",
    "pymc_partitions.kernels.protocol",
    "pymc_partitions.kernels.twofold",
    "pymc_partitions.kernels.parameters",
    "pymc_partitions.kernels.auxiliary_gibbs",
    "pymc_partitions.kernels.incremental_metropolis",
    "pymc_partitions.kernels.nonconjugate_split_merge",
    "pymc_partitions.kernels.hybrid",
    "pymc_partitions.kernels.passes",
    "pymc_partitions.kernels.shards",
    "pymc_partitions.kernels.subcluster",
    "pymc_partitions.distributed.host",
    "pymc_partitions.distributed.cluster",
]


def run_fresh(code):
    """Run ``code`` in a fresh interpreter and return what it printed last, as JSON."""
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_numba_layers_import_without_pymc_or_pytensor():
    loaded = run_fresh(
        f"""
        import importlib, json, sys
        for module in {NUMBA_LAYERS!r}:
            importlib.import_module(module)
        print(json.dumps([name for name in ("pymc", "pytensor") if name in sys.modules]))
        """
    )
    assert loaded == []


def test_first_public_name_imports_the_pymc_layer_and_registers_the_steps():
    """``pmp.<name>`` loads distributions, steps and summaries at once, so ``pm.sample`` knows the steps."""
    found = run_fresh(
        """
        import json, sys
        import pymc_partitions as pmp
        before = "pymc" in sys.modules
        pmp.DirichletProcessPartition
        import pymc as pm
        print(json.dumps([before, pmp.GibbsStep in pm.STEP_METHODS, pmp.SplitMergeStep in pm.STEP_METHODS,
                          sorted(set(pmp.__all__) - set(dir(pmp))), pmp.HybridDPStep.__name__]))
        """
    )
    assert found == [False, True, True, [], "HybridDPStep"]
