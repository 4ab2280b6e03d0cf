"""X w and Xᵀd for the problems' scores and joint features (kernel ``svmrank._linalg_fast``,
on every core for a large X)."""
import numpy as np

from .. import _linalg_fast


def _int32(X):
    return X.indptr.dtype == np.int32 and X.indices.dtype == np.int32


def matrix_product(X, w):
    """X w for a CSR matrix X from ``check_matrix`` and a float64 vector w (len = columns)."""
    if not _int32(X):  # (≥ 2³¹ stored values)
        return np.asarray(X @ w).ravel()
    out = np.empty(X.shape[0])
    _linalg_fast.csr_matvec(X.indptr, X.indices, X.data, np.ascontiguousarray(w, np.float64), out)
    return out


def transpose_product(X, d):
    """Xᵀ d for a CSR matrix X from ``check_matrix`` and a float64 vector d, reading only
    the rows where d is non-zero (most of them, once w is good, for rank losses)."""
    out = np.zeros(X.shape[1])
    if not _int32(X):
        return np.asarray(X.T @ d).ravel()
    _linalg_fast.csr_rmatvec(X.indptr, X.indices, X.data, np.ascontiguousarray(d, np.float64), out)
    return out
