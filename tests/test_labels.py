"""Tests for pymc_partitions.labels: canonical labels, cluster sizes, and the public relabel."""

import numpy as np
import pytest
from exact import canonical_by_definition
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from pymc_partitions.labels import (
    canonical, canonical_rows, cluster_sizes, is_canonical, label_sums, largest_fraction_rows, relabel,
)


@st.composite
def code_arrays(draw, ndim):
    """(codes, n_codes): int64 codes in 0 .. n_codes - 1, 1-D (n,) or 2-D (rows, n), n >= 1."""
    n_codes = draw(st.integers(1, 12))
    shape = (draw(st.integers(1, 20)),) if ndim == 1 else (draw(st.integers(1, 6)), draw(st.integers(1, 20)))
    codes = draw(arrays(np.int64, shape, elements=st.integers(0, n_codes - 1)))
    return codes, n_codes + draw(st.integers(0, 3))  # n_codes may exceed the codes used


# --------------------------------------------------------------------------- #
# numba kernels
# --------------------------------------------------------------------------- #


@settings(max_examples=200, deadline=None)
@given(code_arrays(ndim=1))
def test_canonical_is_order_of_first_appearance(case):
    codes, n_codes = case
    out = canonical(codes, n_codes)
    assert out.dtype == np.int32 and out.shape == codes.shape
    np.testing.assert_array_equal(out, canonical_by_definition(codes))
    # a restricted growth string: starts at 0, each label at most one above the running maximum
    assert out[0] == 0
    assert np.all(out[1:] <= np.maximum.accumulate(out)[:-1] + 1)
    # the same partition: equal co-clustering indicators
    np.testing.assert_array_equal(out[:, None] == out[None, :], codes[:, None] == codes[None, :])


@settings(max_examples=200, deadline=None)
@given(code_arrays(ndim=1))
def test_canonical_is_idempotent_and_label_invariant(case):
    codes, n_codes = case
    out = canonical(codes, n_codes)
    np.testing.assert_array_equal(canonical(out, n_codes), out)
    permuted = np.random.default_rng(0).permutation(n_codes)[codes]  # the same partition, relabelled
    np.testing.assert_array_equal(canonical(permuted, n_codes), out)


@settings(max_examples=200, deadline=None)
@given(code_arrays(ndim=2))
def test_canonical_rows_are_independent(case):
    codes, n_codes = case
    out = canonical_rows(codes, n_codes)
    assert out.dtype == np.int32 and out.shape == codes.shape
    for r in range(codes.shape[0]):
        np.testing.assert_array_equal(out[r], canonical_by_definition(codes[r]))
        np.testing.assert_array_equal(out[r], canonical(codes[r], n_codes))
    # the result of a row does not depend on the rows before it
    np.testing.assert_array_equal(canonical_rows(codes[::-1].copy(), n_codes), out[::-1])


def test_canonical_rows_reset_between_rows():
    codes = np.array([[3, 1, 3, 0], [0, 1, 3, 3], [1, 1, 1, 1]])
    assert canonical_rows(codes, 4).tolist() == [[0, 1, 0, 2], [0, 1, 2, 2], [0, 0, 0, 0]]


def test_canonical_accepts_int32_codes():
    codes = np.array([4, 4, 0, 2, 0], dtype=np.int32)
    assert canonical(codes, 5).tolist() == [0, 0, 1, 2, 1]
    assert canonical_rows(codes[None, :], 5).tolist() == [[0, 0, 1, 2, 1]]


@settings(max_examples=200, deadline=None)
@given(code_arrays(ndim=2))
def test_cluster_sizes_and_largest_fraction(case):
    codes, n_codes = case
    for row in codes:
        sizes = cluster_sizes(row, n_codes)
        assert sizes.dtype == np.int64
        np.testing.assert_array_equal(sizes, np.bincount(row, minlength=n_codes))
    expected = [np.bincount(row).max() / codes.shape[1] for row in codes]
    np.testing.assert_allclose(largest_fraction_rows(codes, n_codes), expected, rtol=0, atol=0)


# --------------------------------------------------------------------------- #
# relabel (public, validated, any integer labels)
# --------------------------------------------------------------------------- #


@settings(max_examples=100, deadline=None)
@given(arrays(np.int64, st.integers(0, 20), elements=st.integers(-2, 8)), st.integers(1, 3))
def test_label_sums_by_brute_force(labels, s):
    """Row ``k`` sums the values of the items labelled ``k``, for ``k <= max(labels)``; negative labels are skipped."""
    values = np.arange(labels.shape[0] * s, dtype=float).reshape(-1, s) ** 1.5
    sums = label_sums(labels, values)
    assert sums.shape == (max(labels.max(initial=-1), -1) + 1, s)
    for k in range(sums.shape[0]):
        np.testing.assert_allclose(sums[k], values[labels == k].sum(axis=0))


@settings(max_examples=100, deadline=None)
@given(arrays(np.int64, st.integers(0, 12), elements=st.integers(-1, 5)))
def test_is_canonical_by_definition(labels):
    expected = labels.size > 0 and bool(np.all(labels >= 0)) and np.array_equal(labels, canonical_by_definition(labels))
    assert is_canonical(labels) == expected


def test_relabel_order_of_first_appearance():
    assert relabel([3, 3, 1, 7, 1, 0]).tolist() == [0, 0, 1, 2, 1, 3]
    assert relabel([-5, 10**12, -5]).tolist() == [0, 1, 0]
    assert relabel(np.array([2.0, 2.0, 0.0])).tolist() == [0, 0, 1]
    assert relabel([4]).tolist() == [0]


def test_relabel_vectorised_and_idempotent():
    rng = np.random.default_rng(0)
    z = rng.integers(0, 6, size=(3, 4, 25))
    canon = relabel(z)
    assert canon.shape == z.shape
    for idx in np.ndindex(z.shape[:-1]):
        row, expected, seen = z[idx], [], {}
        for label in row:
            expected.append(seen.setdefault(label, len(seen)))
        assert canon[idx].tolist() == expected
        # same partition: equal co-clustering pattern
        assert np.array_equal(row[:, None] == row[None, :], canon[idx][:, None] == canon[idx][None, :])
    assert np.array_equal(relabel(canon), canon)


@settings(max_examples=100, deadline=None)
@given(arrays(np.int64, st.tuples(st.integers(1, 4), st.integers(1, 15)), elements=st.integers(-(2**40), 2**40)))
def test_relabel_of_arbitrary_integers(z):
    out = relabel(z)
    assert out.dtype == np.int32
    for r in range(z.shape[0]):
        np.testing.assert_array_equal(out[r], canonical_by_definition(z[r]))


def test_relabel_empty():
    assert relabel(np.zeros((2, 0), int)).shape == (2, 0)


def test_relabel_bad_input():
    with pytest.raises(ValueError, match="z"):
        relabel(3)
    with pytest.raises(ValueError, match="z"):
        relabel([0.5, 1.0])
    with pytest.raises(TypeError, match="z"):
        relabel(["a", "b"])
    with pytest.raises(TypeError, match="z must hold integer cluster labels, got dtype bool"):
        relabel([True, False])
    with pytest.raises(ValueError, match="z must hold integer cluster labels, got non-integer values"):
        relabel([0.0, np.nan])
