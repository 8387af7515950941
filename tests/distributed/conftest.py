"""The Dask tests' cluster: a real ``LocalCluster`` of two worker processes, one per test module."""

import pytest
from distributed import Client, LocalCluster


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, Client(cluster) as c:
        yield c
