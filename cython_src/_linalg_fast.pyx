# Sparse products of the cutting-plane problems. X^T d over the rows of a CSR matrix
# whose coefficient d_i is non-zero: once w is good most samples keep their ground-truth
# coefficient (d_i = 0), so the product touches only the rows that moved.
# Reference: scipy's X.T @ d (tests/test_linalg_kernel.py).


def csr_rmatvec(const int[::1] indptr, const int[::1] indices, const double[::1] data,
                const double[::1] d, double[::1] out):
    """out += X^T d for CSR X (n rows; ``out`` has one entry per column)."""
    cdef Py_ssize_t i, k, n = d.shape[0]
    cdef double di
    with nogil:
        for i in range(n):
            di = d[i]
            if di != 0.0:
                for k in range(indptr[i], indptr[i + 1]):
                    out[indices[k]] += data[k] * di
