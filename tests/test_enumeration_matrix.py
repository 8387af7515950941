"""The enumeration matrix (``tests/enumeration_matrix.py``) against the steps' declarations, the tests and the docs.

Every (step, kind, prior) cell a step class declares (``supports``) is in the matrix, enumerated by named tests or
listed as not enumerated with a reason; no cell outside the declarations is; every named test exists (its module
imported as pytest imports it, the function looked up: nothing is run) and, where it is parametrized over ``prior``
or ``family``, has a case for the cell's prior and families; one of a cell's tests reaches the row's step (names
its class or its kernel's module in its own code or the helpers it calls, or samples with ``pm.sample``'s default
assignment, which is that step); docs/exactness.md's coverage tables are the generated ones.  Synthetic cases show
that the checks of cells, of parametrisations and of steps flag what they should.
"""

import ast
import functools
import importlib
import pathlib
import pkgutil
import sys

import enumeration_matrix as matrix
import pytest
from enumeration_matrix import TABLES, TESTS, Enumerated, NotEnumerated

from pymc_partitions import kernels, priors
from pymc_partitions._dispatch import ADDITIVE, RELATIONAL
from pymc_partitions.kernels.protocol import COMPONENT, Support
from pymc_partitions.steps.default import DEFAULT_STEPS
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


@functools.cache
def _definitions(file):
    """The top-level definitions of the module ``file`` by name (functions, classes, assignments), and the names it
    imports from the tests' own modules (``name -> (file, name there)``)."""
    tree = ast.parse(file.read_text())
    definitions, imported = {}, {}
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.ClassDef)):
            definitions[statement.name] = statement
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            for target in targets:
                definitions.update((n.id, statement) for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(statement, ast.ImportFrom) and statement.level == 0 and statement.module:
            local = next((d / f"{statement.module}.py" for d in (file.parent, TESTS_DIR)
                          if (d / f"{statement.module}.py").exists()), None)
            if local is not None:
                imported.update((a.asname or a.name, (local, a.name)) for a in statement.names)
    return definitions, imported


@functools.cache
def _reached_words(node, root=TESTS_DIR):
    """Every name and attribute the test ``node`` reaches in the tests' own code: its function (decorators
    included) and, transitively, the top-level definitions of the tests' modules that it names."""
    path, name = node.split("::")
    todo, seen, words, modules = [(root / path, name)], set(), set(), {}
    while todo:
        file, name = todo.pop()
        if (file, name) in seen:
            continue
        seen.add((file, name))
        definitions, imported = modules.setdefault(file, _definitions(file))
        if name in imported:
            todo.append(imported[name])
        for sub in ast.walk(definitions[name]) if name in definitions else ():
            if isinstance(sub, ast.Name):
                words.add(sub.id)
                todo.append((file, sub.id))
            elif isinstance(sub, ast.Attribute):
                words.add(sub.attr)
    return words


@functools.cache
def _kernel_module(step_name):
    """The name of the ``kernels`` module that defines the kernel of the step class named ``step_name`` (the
    module holding the ``Kernel`` value, e.g. ``subcluster.KERNEL``; its functions may live in a shared module)."""
    kernel = next(cls.kernel for cls in STEP_CLASSES if cls.__name__ == step_name)
    for info in pkgutil.iter_modules(kernels.__path__):
        module = importlib.import_module(f"{kernels.__name__}.{info.name}")
        if any(value is kernel for value in vars(module).values()):
            return info.name
    raise LookupError(f"no kernels module holds the kernel of {step_name}")


def _reaches(key, step_name, kind):
    """Whether one of the tests of ``key`` reaches the step ``step_name``: names its class or its kernel's module,
    or samples with ``pm.sample``'s default assignment and that is ``step_name`` for ``kind``."""
    test = TESTS[key]
    if test.default_assignment and DEFAULT_STEPS.get(kind) == step_name:
        return True
    wanted = {step_name, _kernel_module(step_name)}
    return any(wanted & _reached_words(node) for node in test.nodes)


def test_every_cell_reaches_its_step():
    """A cell's tests run its row's step: one of a key's tests names the step class or its kernel's module (in
    its own code or the tests' helpers it calls), or samples with the default assignment, which is that step."""
    wrong = [
        (kind, row.label, PRIOR_NAMES[prior], key)
        for kind, rows in TABLES.items() for row in rows for prior, cell in row.cells.items()
        if not isinstance(cell, NotEnumerated) for part in cell for key in part.keys
        if not _reaches(key, row.step, kind)
    ]
    assert not wrong, f"cells whose tests do not run their step: {wrong}"


def test_the_step_check_flags_a_test_that_runs_another_step(tmp_path):
    (tmp_path / "helpers.py").write_text("import pymc_partitions as pmp\n\ndef make(z):\n    return pmp.GibbsStep(z)\n")
    (tmp_path / "test_case.py").write_text(
        "from helpers import make\n\nSTEPS = {'sm': lambda z: make(z)}\n\n"
        "def test_one(step_name):\n    STEPS[step_name]\n\ndef test_other():\n    pass\n"
    )
    assert "GibbsStep" in _reached_words("test_case.py::test_one", root=tmp_path)
    assert "GibbsStep" not in _reached_words("test_case.py::test_other", root=tmp_path)
    assert _kernel_module("SubClusterSplitMergeStep") == "subcluster"
    assert not _reaches("X1", "ARMStep", ADDITIVE) and _reaches("X1", "SplitMergeStep", ADDITIVE)
    assert _reaches("P2", "GibbsStep", COMPONENT) and not _reaches("P2", "NonconjugateSplitMergeStep", COMPONENT)


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
