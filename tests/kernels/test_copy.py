"""The kernels' range copies against numpy's slice assignment."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from citekit.kernels._copy import copy_range, copy_rows
from naive import naive_copy_range


@st.composite
def ranges(draw):
    """(target size, target start, source size, source start, n) with both ranges inside."""
    n = draw(st.integers(0, 40))
    target_size = draw(st.integers(n, n + 20))
    source_size = draw(st.integers(n, n + 20))
    return (
        target_size,
        draw(st.integers(0, target_size - n)),
        source_size,
        draw(st.integers(0, source_size - n)),
        n,
    )


@pytest.mark.parametrize("dtype", [np.int64, np.float64, np.float32, np.uint32])
@given(shape=ranges(), seed=st.integers(0, 2**32 - 1))
def test_copy_range_matches_slice_assignment(dtype, shape, seed):
    target_size, target_start, source_size, source_start, n = shape
    rng = np.random.default_rng(seed)
    source = (rng.integers(0, 1000, source_size)).astype(dtype)
    target = (rng.integers(0, 1000, target_size)).astype(dtype)
    expected = target.copy()
    naive_copy_range(expected, target_start, source, source_start, n)
    copy_range(target, target_start, source, source_start, n)
    assert np.array_equal(target, expected)


@given(shape=ranges(), columns=st.integers(1, 4), seed=st.integers(0, 2**32 - 1))
def test_copy_rows_matches_slice_assignment(shape, columns, seed):
    target_size, target_start, source_size, source_start, n = shape
    rng = np.random.default_rng(seed)
    source = rng.integers(-(2**40), 2**40, (source_size, columns))
    target = rng.integers(-(2**40), 2**40, (target_size, columns))
    expected = target.copy()
    naive_copy_range(expected, target_start, source, source_start, n)
    copy_rows(target, target_start, source, source_start, n)
    assert np.array_equal(target, expected)


def test_copy_of_nothing_leaves_the_target():
    target = np.arange(3)
    copy_range(target, 3, np.arange(2), 2, 0)
    copy_rows(np.zeros((0, 2), dtype=np.int64), 0, np.zeros((0, 2), dtype=np.int64), 0, 0)
    assert target.tolist() == [0, 1, 2]
