"""The enumeration matrix (``tests/enumeration_matrix.py``) against the steps' declarations, the tests and the docs.

Every (step, kind, prior) cell a step class declares (``supports``) is in the matrix, enumerated by named tests or
listed as not enumerated with a reason; no cell outside the declarations is; every named test exists (its module
imported as pytest imports it, the function looked up: nothing is run) and, where it is parametrized over ``prior``
or ``family``, has a case for the cell's prior and families; docs/exactness.md's coverage tables are the generated
ones.  Synthetic cases show that the checks of cells and of parametrisations flag what they should.
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
        p for cls in step_classes if cls.__name__ == step_name
        for support in cls.supports if kind in support.kinds for p in support.priors
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


FAMILY_NAMES = {
    "BB": "beta_bernoulli", "NG": "normal_gamma", "NIW": "normal_inverse_wishart", "DM": "dirichlet_multinomial",
    "GP": "gamma_poisson", "Cat": "categorical",
}
"""The tables' family abbreviations, as the tests' ``family`` parameters name them ("six": all of these)."""
PRIOR_NAMES = {priors.DP: "dp", priors.PY: "py", priors.MFM: "mfm", priors.NGGP: "ngg"}
"""The priors as the tests' ``prior`` parameters name them."""


def _parameter_sets(function):
    """Every combination of parameters the ``parametrize`` marks of ``function`` give it, as dicts."""
    combinations = [{}]
    for mark in getattr(function, "pytestmark", []):
        if mark.name != "parametrize":
            continue
        names = mark.args[0].split(",") if isinstance(mark.args[0], str) else list(mark.args[0])
        names = [name.strip() for name in names]
        rows = []
        for value in mark.args[1]:
            if hasattr(value, "marks") and hasattr(value, "values"):  # pytest.param(...)
                values = value.values
            else:
                values = value if len(names) > 1 else (value,)
            rows.append(dict(zip(names, values)))
        combinations = [{**a, **b} for a in combinations for b in rows]
    return combinations


def _families(text):
    """The family parameters an abbreviation list names ("NG BB", "six"), or None for one the tests do not
    parametrize ("Reg", or "" for a kind with one model)."""
    if text == "six":
        return set(FAMILY_NAMES.values())
    tokens = text.split()
    return {FAMILY_NAMES[t] for t in tokens} if tokens and all(t in FAMILY_NAMES for t in tokens) else None


def _runs(function, prior, families):
    """Whether the parametrisation of ``function`` has a case under ``prior`` for each of ``families`` (None: no
    families to check), as far as it says: a parameter it does not have (``prior``, ``family``) is not checked."""
    combinations = _parameter_sets(function)
    wanted = {"prior": PRIOR_NAMES[prior]} if any("prior" in c for c in combinations) else {}
    checked = families if families is not None and any("family" in c for c in combinations) else [None]
    return all(
        any(all(c.get(k) == v for k, v in {**wanted, **({"family": f} if f else {})}.items()) for c in combinations)
        for f in checked
    )


def test_every_cell_is_in_its_tests_parametrisation():
    """A cell citing a test parametrized over ``prior`` or ``family`` is among its cases (one of the key's tests
    suffices; a key's test parametrized over neither is not checked: its module fixes them)."""
    wrong = []
    for kind, rows in TABLES.items():
        for row in rows:
            for prior, cell in row.cells.items():
                if isinstance(cell, NotEnumerated):
                    continue
                for part in cell:
                    families = _families(part.families)
                    for key in part.keys:
                        if not any(_runs(_test_function(node), prior, families) for node in TESTS[key].nodes):
                            wrong.append((kind, row.label, PRIOR_NAMES[prior], part.families, key))
    assert not wrong, f"cells their tests do not run: {wrong}"


def test_the_parametrisation_check_flags_a_case_the_test_does_not_run():
    @pytest.mark.parametrize("family, prior", [("normal_gamma", "dp"), ("beta_bernoulli", "py")])
    def case(family, prior):
        pass

    @pytest.mark.parametrize("prior", ["dp", pytest.param("py", id="pitman-yor")])
    def by_prior(prior):
        pass

    assert _runs(case, priors.DP, {"normal_gamma"}) and _runs(case, priors.PY, {"beta_bernoulli"})
    assert not _runs(case, priors.DP, {"normal_gamma", "beta_bernoulli"})
    assert not _runs(case, priors.MFM, None)
    assert _runs(by_prior, priors.PY, {"normal_gamma"}) and not _runs(by_prior, priors.NGGP, None)


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
