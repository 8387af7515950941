"""The hash tables of ``kernels.hashing``: collision frequencies over many independent tables match the hash
families' collision probabilities, and the bucket layout is consistent.

* Weighted MinHash (ICWS, Ioffe 2010): ``P(h(x) = h(y)) = Σ_k min(x_k, y_k) / Σ_k max(x_k, y_k)``, the generalised
  Jaccard similarity of the features (the data itself for non-negative data; the positive and negative parts of
  the standardised data for real data).
* Sign random projections with ``K`` bits: ``P(code(x) = code(y)) = (1 - θ(x, y)/π)^K`` for the angle ``θ``
  between the standardised vectors.

Tolerance: 4.5 binomial standard deviations over 4,000 tables.
"""

import numpy as np
import pytest

from pymc_partitions.kernels import hashing

N_TABLES = 4000


def collision_rate(tables):
    return float(np.mean(tables.bucket[:, 0] == tables.bucket[:, 1]))


def within(rate, p):
    return abs(rate - p) < 4.5 * np.sqrt(p * (1 - p) / N_TABLES) + 1e-9


def test_weighted_minhash_collision_is_generalised_jaccard():
    x = np.array([[3.0, 1.0, 0.0, 2.0, 0.5], [1.0, 1.0, 2.0, 2.0, 0.0], [0.0, 4.0, 1.0, 0.0, 1.0]])
    jaccard = np.minimum(x[0], x[1]).sum() / np.maximum(x[0], x[1]).sum()
    tables = hashing.minhash_tables(x, False, N_TABLES, 3)
    assert within(collision_rate(tables), jaccard)


def test_weighted_minhash_of_real_data_uses_positive_and_negative_parts():
    x = np.random.default_rng(0).normal(size=(6, 3))
    u = (x - x.mean(axis=0)) / x.std(axis=0)
    f = np.concatenate([np.maximum(u, 0), np.maximum(-u, 0)], axis=1)
    jaccard = np.minimum(f[0], f[1]).sum() / np.maximum(f[0], f[1]).sum()
    tables = hashing.minhash_tables(x, True, N_TABLES, 4)
    assert within(collision_rate(tables), jaccard)


@pytest.mark.parametrize("n_bits", [1, 3])
def test_sign_projection_collision(n_bits):
    x = np.random.default_rng(1).normal(size=(5, 4))
    u = (x - x.mean(axis=0)) / x.std(axis=0)
    theta = np.arccos(u[0] @ u[1] / np.linalg.norm(u[0]) / np.linalg.norm(u[1]))
    tables = hashing.sign_projection_tables(x, True, N_TABLES, n_bits, 5)
    assert within(collision_rate(tables), (1 - theta / np.pi) ** n_bits)
    assert np.array_equal(tables.anti[0], np.arange(2**n_bits) ^ (2**n_bits - 1))


def test_bucket_layout():
    """``items[start[b]:start[b + 1]]`` are exactly the items with ``bucket = b``, in every table."""
    x = np.random.default_rng(2).poisson(2.0, (50, 4)).astype(float)
    for tables in (hashing.minhash_tables(x, False, 3, 0), hashing.sign_projection_tables(x, False, 3, 4, 0)):
        for table in range(3):
            for b in range(tables.start.shape[1] - 1):
                members = tables.items[table, tables.start[table, b] : tables.start[table, b + 1]]
                assert sorted(members.tolist()) == np.flatnonzero(tables.bucket[table] == b).tolist()
