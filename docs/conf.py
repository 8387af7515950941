"""Sphinx configuration of the pymc_partitions documentation.

Build:  python -m sphinx -W --keep-going -b html docs docs/_build/html

The example notebooks are rendered, never executed, here: each is taken from
``build/notebooks/`` (or ``$PMP_EXECUTED_NOTEBOOKS``), where
``tests/test_examples.py`` writes the copy it executed, when that copy's cells
are those of the notebook in ``examples/``; otherwise the notebook in
``examples/`` is rendered with the outputs stored in it.
``PMP_DOCS_REQUIRE_EXECUTED=1`` (set by ``.ci/run``) makes a missing or
outdated executed copy an error, so that CI's site shows the outputs of CI's
own run.
"""

import json
import os
import pathlib
import shutil

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
EXECUTED = pathlib.Path(os.environ.get("PMP_EXECUTED_NOTEBOOKS", ROOT / "build" / "notebooks"))
REQUIRE_EXECUTED = os.environ.get("PMP_DOCS_REQUIRE_EXECUTED") == "1"


def _cell_sources(path):
    """The sources of a notebook's cells (what an executed copy must share with its notebook)."""
    return [cell["source"] for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]]


def _collect_notebooks():
    """Copy every ``examples/*.ipynb`` (its executed copy where there is a current one) into ``docs/examples/``."""
    target = HERE / "examples"
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir()
    for source in sorted((ROOT / "examples").glob("*.ipynb")):
        executed = EXECUTED / source.name
        if executed.exists() and _cell_sources(executed) == _cell_sources(source):
            shutil.copyfile(executed, target / source.name)
        elif REQUIRE_EXECUTED:
            raise RuntimeError(
                f"no executed copy of the current examples/{source.name} in {EXECUTED}: run "
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
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}  # autosummary writes its stubs with the first
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]
suppress_warnings = ["mystnb.unknown_mime_type"]  # the widget views of PyMC's progress bars

# notebooks: rendered from their stored outputs, never executed here
nb_execution_mode = "off"
nb_output_stderr = "show"
nb_render_markdown_format = "myst"  # Markdown outputs (notebook 06's sampler table) with tables, as Jupyter shows them
nb_merge_streams = True
myst_enable_extensions = ["dollarmath", "amsmath"]
myst_heading_anchors = 3

templates_path = ["_templates"]
autosummary_generate = True
autodoc_default_options = {"members": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False

html_theme = "pydata_sphinx_theme"
html_title = "pymc_partitions"
html_theme_options = {"navigation_with_keys": False, "show_toc_level": 2}
