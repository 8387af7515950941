import os
import sys

sys.path.insert(0, os.path.dirname(__file__))


def pytest_collection_modifyitems(session, config, items):
    """Run the example notebooks last: they then load the kernels the tests compiled from the numba cache."""
    items.sort(key=lambda item: item.get_closest_marker("notebook") is not None)


def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` (``pyproject.toml``) with each notebook a unit of its own.

    A test file is one unit of work, so that one worker compiles a file's
    kernels once; the notebooks (``tests/test_examples.py``, last) are units
    of their own, so that both workers execute notebooks at the end instead of
    one running all of them while the other waits.
    """
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class NotebooksApart(LoadFileScheduling):
        def _split_scope(self, nodeid):
            return nodeid if "::test_notebook_runs[" in nodeid else super()._split_scope(nodeid)

    return NotebooksApart(config, log)
