"""The enumeration matrix (``tests/enumeration_matrix.py``) against the steps' declarations, the tests and the docs.

Every (step, kind, prior) cell a step class declares (``supports``) is in the matrix, enumerated by named tests or
listed as not enumerated with a reason; no cell outside the declarations is; every named test exists (its module
imported as pytest imports it, the function looked up: nothing is run); docs/exactness.md's coverage tables are the
generated ones.  The last test shows the cell checks flag a synthetic step whose declarations the matrix misses.
"""

import importlib
import pathlib
import sys

import enumeration_matrix as matrix
import pytest
from enumeration_matrix import TABLES, TESTS, Enumerated, NotEnumerated

from pymc_partitions import priors
from pymc_partitions._dispatch import ADDITIVE, RELATIONAL
from pymc_partitions.kernels.protocol import Support
from pymc_partitions.steps.support import STEP_CLASSES

TESTS_DIR = pathlib.Path(__file__).resolve().parent


def _declared_priors(step_name, kind, step_classes=STEP_CLASSES):
    """The priors the class named ``step_name`` declares for ``kind``."""
    return {
        p for cls in step_classes if cls.__name__ == step_name for s in cls.supports if kind in s.kinds for p in s.priors
    }


def test_every_declared_cell_is_in_the_matrix():
    missing = matrix.declared_cells(STEP_CLASSES) - matrix.table_cells()
    assert not missing, f"declared cells neither enumerated nor listed as not enumerated: {sorted(missing)}"


def test_no_cell_of_the_matrix_is_outside_the_declarations():
    extra = matrix.table_cells() - matrix.declared_cells(STEP_CLASSES)
    assert not extra, f"cells the steps do not declare: {sorted(extra)}"


def test_every_row_gives_every_declared_prior_a_cell():
    """A row covers its step's declared priors for its kind, each by named tests or a reason."""
    for kind, rows in TABLES.items():
        for row in rows:
            assert set(row.cells) == _declared_priors(row.step, kind), (kind, row.label)
            for prior, cell in row.cells.items():
                if isinstance(cell, NotEnumerated):
                    assert cell.reason, (kind, row.label, prior)
                else:
                    assert cell and all(isinstance(part, Enumerated) and part.keys for part in cell), (kind, row.label)


def test_every_cited_key_is_a_test_and_every_test_is_cited():
    cited = {
        key for rows in TABLES.values() for row in rows for cell in row.cells.values()
        if not isinstance(cell, NotEnumerated) for part in cell for key in part.keys
    }
    assert cited - set(TESTS) == set(), "keys the tables cite without a test"
    assert set(TESTS) - cited == set(), "tests no cell cites"


def _test_function(node):
    """The function of the test ``node`` (``file::function`` relative to ``tests/``), its module imported as pytest's
    default import mode imports it (its directory on ``sys.path``, its file's name)."""
    path, name = node.split("::")
    file = TESTS_DIR / path
    if str(file.parent) not in sys.path:
        sys.path.insert(0, str(file.parent))
    module = importlib.import_module(file.stem)
    assert pathlib.Path(module.__file__).resolve() == file, f"{file.stem} is imported from {module.__file__}"
    return getattr(module, name, None)


NODES = sorted({node for test in TESTS.values() for node in test.nodes})


@pytest.mark.parametrize("node", NODES)
def test_every_named_test_exists(node):
    function = _test_function(node)
    assert callable(function) and node.split("::")[1].startswith("test_"), f"{node} is not a test function"


def test_the_docs_coverage_tables_are_generated():
    """docs/exactness.md's tables are ``python tests/enumeration_matrix.py --write``'s (run it after a change)."""
    assert matrix.documented(matrix.DOCS.read_text()) == matrix.markdown(STEP_CLASSES)


class _Step:
    """A synthetic step class: additive models under DP and PY, and the IRM under DP."""

    supports = (Support((ADDITIVE,), priors=(priors.DP, priors.PY)), Support((RELATIONAL,), priors=(priors.DP,)))


def test_the_cell_checks_flag_a_step_the_matrix_misses():
    declared = matrix.declared_cells([_Step])
    assert declared == {
        ("_Step", ADDITIVE, priors.DP), ("_Step", ADDITIVE, priors.PY), ("_Step", RELATIONAL, priors.DP),
    }
    tables = {ADDITIVE: [matrix.Row("_Step", "`_Step`", {priors.DP: NotEnumerated("synthetic"),
                                                         priors.MFM: NotEnumerated("synthetic")})]}
    cells = matrix.table_cells(tables)
    assert declared - cells == {("_Step", ADDITIVE, priors.PY), ("_Step", RELATIONAL, priors.DP)}
    assert cells - declared == {("_Step", ADDITIVE, priors.MFM)}
    assert _declared_priors("_Step", ADDITIVE, [_Step]) == {priors.DP, priors.PY}
