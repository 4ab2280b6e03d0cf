"""Xᵀd for the problems' joint features (kernel ``svmrank._linalg_fast``)."""
import numpy as np

from .. import _linalg_fast


def transpose_product(X, d):
    """Xᵀ d for a CSR matrix X from ``check_matrix`` and a float64 vector d, reading only
    the rows where d is non-zero (most of them, once w is good, for rank losses)."""
    out = np.zeros(X.shape[1])
    if X.indptr.dtype != np.int32 or X.indices.dtype != np.int32:  # (≥ 2³¹ stored values)
        return np.asarray(X.T @ d).ravel()
    _linalg_fast.csr_rmatvec(X.indptr, X.indices, X.data, np.ascontiguousarray(d, np.float64), out)
    return out
