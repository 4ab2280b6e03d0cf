"""The sparse transpose product of the problems against scipy's."""
import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from svmrank._validation import check_matrix
from svmrank.problems._products import transpose_product


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 40), d=st.integers(1, 30),
       density=st.sampled_from([0.0, 0.1, 0.5, 1.0]), d_density=st.sampled_from([0.0, 0.2, 1.0]),
       scale=st.sampled_from([1e-300, 1.0, 1e150]))
def test_matches_scipy(seed, n, d, density, d_density, scale):
    """Random CSR matrices with empty rows and columns, zero or sparse d, tiny and huge
    values."""
    rng = np.random.default_rng(seed)
    X = check_matrix(sp.random(n, d, density=density, random_state=rng, format="csr") * scale
                     if density else sp.csr_matrix((n, d)))
    v = rng.normal(size=n) * (rng.random(n) < d_density)
    expected = np.asarray(X.T @ v).ravel()
    np.testing.assert_allclose(transpose_product(X, v), expected, rtol=1e-12,
                               atol=1e-12 * np.abs(X.data).max(initial=0) * np.abs(v).max(initial=0))


def test_int64_indices_fall_back_to_scipy():
    X = sp.csr_matrix(np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]))
    X.indices, X.indptr = X.indices.astype(np.int64), X.indptr.astype(np.int64)
    np.testing.assert_array_equal(transpose_product(X, np.array([2.0, -1.0])), [2.0, -3.0, 4.0])
