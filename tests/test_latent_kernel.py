"""The per-bag selection kernel (svmrank._latent_fast) against a plain NumPy reference."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from svmrank import _latent_fast
from svmrank.bags import Bags


def reference_bag_argmax(scores, offsets, known=None, minimise=None):
    """Obviously correct selection: np.argmax / np.argmin return the FIRST extremum."""
    rows, values = [], []
    for b in range(len(offsets) - 1):
        seg = scores[offsets[b]:offsets[b + 1]]
        if known is not None and known[b] >= 0:
            r = known[b]
        elif minimise is not None and minimise[b]:
            r = offsets[b] + int(np.argmin(seg))
        else:
            r = offsets[b] + int(np.argmax(seg))
        rows.append(r)
        values.append(scores[r])
    return np.array(rows, dtype=np.intp), np.array(values)


TIED = st.sampled_from([-1.0, 0.0, 0.5, 1.0])
WIDE = st.floats(-1e300, 1e300, allow_nan=False, allow_infinity=False)
TINY = st.floats(-1e-300, 1e-300, allow_nan=False)
WITH_INF = st.sampled_from([-np.inf, -1.0, 0.0, 2.0])  # -inf marks masked candidates


@st.composite
def bag_problems(draw, values):
    sizes = draw(st.lists(st.integers(1, 6), min_size=1, max_size=8))
    offsets = np.r_[0, np.cumsum(sizes)].astype(np.intp)
    n = int(offsets[-1])
    scores = np.array(draw(st.lists(values, min_size=n, max_size=n)))
    known = np.array([draw(st.one_of(st.just(-1), st.integers(int(offsets[b]),
                                                               int(offsets[b + 1]) - 1)))
                      for b in range(len(sizes))], dtype=np.intp)
    minimise = np.array(draw(st.lists(st.booleans(), min_size=len(sizes), max_size=len(sizes))))
    return scores, offsets, known, minimise


@settings(max_examples=300, deadline=None)
@given(problem=st.one_of(bag_problems(TIED), bag_problems(WIDE), bag_problems(TINY),
                         bag_problems(WITH_INF), bag_problems(st.floats(-3, 3))))
def test_bag_argmax_matches_reference(problem):
    scores, offsets, known, minimise = problem
    bags = Bags(offsets, np.arange(len(offsets) - 1))
    for kn, mn in [(None, None), (known, None), (None, minimise), (known, minimise)]:
        rows, values = bags.argmax(scores, known=kn, minimise=mn)
        ref_rows, ref_values = reference_bag_argmax(scores, offsets, kn, mn)
        np.testing.assert_array_equal(rows, ref_rows)
        np.testing.assert_array_equal(values, ref_values)
    np.testing.assert_array_equal(bags.max(scores), reference_bag_argmax(scores, offsets)[1])


def test_ties_take_the_first_row():
    scores = np.array([3.0, 3.0, 1.0, 1.0, 1.0, 7.0])
    bags = Bags(np.array([0, 2, 5, 6], dtype=np.intp), np.arange(3))
    rows, values = bags.argmax(scores)
    np.testing.assert_array_equal(rows, [0, 2, 5])
    rows, _ = bags.argmax(scores, minimise=[True, True, True])
    np.testing.assert_array_equal(rows, [0, 2, 5])
    np.testing.assert_array_equal(values, [3.0, 1.0, 7.0])


def test_raw_kernel_with_empty_optional_arrays():
    scores = np.array([0.0, 2.0, -1.0])
    offsets = np.array([0, 2, 3], dtype=np.intp)
    rows = np.empty(2, dtype=np.intp)
    vals = np.empty(2)
    _latent_fast.bag_argmax(scores, offsets, np.empty(0, np.intp), np.empty(0, np.uint8), rows, vals)
    np.testing.assert_array_equal(rows, [1, 2])
    out = np.empty(2)
    _latent_fast.bag_max(scores, offsets, out)
    np.testing.assert_array_equal(out, [2.0, -1.0])


def test_kernel_rejects_wrong_dtypes():
    rows = np.empty(1, dtype=np.intp)
    with pytest.raises((ValueError, TypeError)):
        _latent_fast.bag_argmax(np.zeros(2, dtype=np.float32), np.array([0, 2], dtype=np.intp),
                                np.empty(0, np.intp), np.empty(0, np.uint8), rows, np.empty(1))
