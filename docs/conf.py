"""Sphinx configuration of the pymc_partitions documentation.

Build:  python -m sphinx -W --keep-going -b html docs docs/_build/html

The example notebooks are rendered, never executed, here: each is taken from
``build/notebooks/`` (or ``$PMP_EXECUTED_NOTEBOOKS``), where
``tests/test_examples.py`` writes the copy it executed, when that copy is newer
than the notebook in ``examples/``; otherwise the notebook in ``examples/`` is
rendered with the outputs stored in it.  ``PMP_DOCS_REQUIRE_EXECUTED=1`` (set by
``.ci/run``) makes a missing executed copy an error, so that CI's site shows
the outputs of CI's own run.
"""

import os
import pathlib
import shutil

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
EXECUTED = pathlib.Path(os.environ.get("PMP_EXECUTED_NOTEBOOKS", ROOT / "build" / "notebooks"))
REQUIRE_EXECUTED = os.environ.get("PMP_DOCS_REQUIRE_EXECUTED") == "1"


def _collect_notebooks():
    """Copy every ``examples/*.ipynb`` (its executed copy where there is a fresh one) into ``docs/examples/``."""
    target = HERE / "examples"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir()
    for source in sorted((ROOT / "examples").glob("*.ipynb")):
        executed = EXECUTED / source.name
        if executed.exists() and executed.stat().st_mtime >= source.stat().st_mtime:
            shutil.copyfile(executed, target / source.name)
        elif REQUIRE_EXECUTED:
            raise RuntimeError(
                f"no executed copy of examples/{source.name} in {EXECUTED}: run "
                "`python -m pytest tests/test_examples.py` before building the documentation"
            )
        else:
            shutil.copyfile(source, target / source.name)


_collect_notebooks()

project = "pymc_partitions"
author = "the pymc_partitions developers"
copyright = "2026, the pymc_partitions developers"

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
]
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
suppress_warnings = ["mystnb.unknown_mime_type"]  # the widget views of PyMC's progress bars

# notebooks: rendered from their stored outputs, never executed here
nb_execution_mode = "off"
nb_output_stderr = "show"
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3

autosummary_generate = True
autodoc_default_options = {"members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

html_theme = "pydata_sphinx_theme"
html_title = "pymc_partitions"
html_theme_options = {"navigation_with_keys": False, "show_toc_level": 2}
