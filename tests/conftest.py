import os
import sys

sys.path.insert(0, os.path.dirname(__file__))


def pytest_collection_modifyitems(session, config, items):
    """Run the example notebooks last: they then load the kernels the tests compiled from the numba cache."""
    items.sort(key=lambda item: item.get_closest_marker("notebook") is not None)
