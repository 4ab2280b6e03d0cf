# Sparse products of the cutting-plane problems, on every core when the matrix is large
# (OpenMP; without it the loops run serially). X w gives each row to one thread, so its
# result does not depend on the thread count; it also takes a matrix stored with its
# rows in another order (rows sorted by length, whose loops the CPU predicts) and a 0/1
# matrix without its values. X^T d reads only the rows whose d_i is non-zero and sums
# them in CHUNKS fixed blocks of rows, each into its own copy of the output, added in
# block order at the end: the same result on any number of threads (for a dense d the
# problems multiply X^T, stored by rows, instead: svmrank/problems/linear.py).
# Reference: scipy's X @ w, X.T @ d and X[rows] (tests/test_linalg_kernel.py).
import os

from cython.parallel cimport prange
from libc.stdlib cimport calloc, free, malloc

cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static int svmrank_max_threads(void) { return omp_get_max_threads(); }
    #else
    static int svmrank_max_threads(void) { return 1; }
    #endif
    """
    int svmrank_max_threads() noexcept nogil

# libgomp's thread pool does not survive fork(): a child that enters a parallel region
# the parent has used hangs. Children (multiprocessing's default on Linux) run serial.
cdef bint forked_child = False


def _after_fork_in_child():
    global forked_child
    forked_child = True


os.register_at_fork(after_in_child=_after_fork_in_child)

cdef enum:
    CHUNKS = 8
    PARALLEL_MIN_NNZ = 1 << 16  # below this a product takes a few microseconds: one thread


cdef int max_threads() noexcept nogil:
    """Threads an OpenMP loop would use here (1 when built without OpenMP)."""
    return svmrank_max_threads()


cdef int threads_for(Py_ssize_t nnz, int n_threads) noexcept nogil:
    if forked_child:
        return 1
    if n_threads > 0:
        return n_threads
    return svmrank_max_threads() if nnz >= PARALLEL_MIN_NNZ else 1


def csr_matvec(const int[::1] indptr, const int[::1] indices, const double[::1] data,
               const double[::1] w, double[::1] out, int n_threads=0,
               const int[::1] rows=None):
    """out = X w for CSR X; ``data`` None means every stored value is 1 (a 0/1 matrix,
    read from its indices alone). With ``rows`` (one per row of X, distinct, in
    [0, len(out))), row i of X is row rows[i] of the product: out[rows[i]] = X_i w, the
    layout of a matrix stored with its rows sorted by length (see
    svmrank.problems.linear). n_threads = 0: all cores for a large X, one for a
    small one."""
    cdef Py_ssize_t i, k, end, n = indptr.shape[0] - 1
    cdef double s0, s1
    cdef int t = threads_for(indices.shape[0], n_threads)
    cdef bint permuted = rows is not None, ones = data is None
    with nogil:
        for i in prange(n, num_threads=t, schedule="static"):
            s0 = 0.0
            s1 = 0.0
            k = indptr[i]
            end = indptr[i + 1]
            if ones:
                while k + 1 < end:  # two sums: the additions of a row overlap
                    s0 = s0 + w[indices[k]]
                    s1 = s1 + w[indices[k + 1]]
                    k = k + 2
                if k < end:
                    s0 = s0 + w[indices[k]]
            else:
                while k + 1 < end:
                    s0 = s0 + data[k] * w[indices[k]]
                    s1 = s1 + data[k + 1] * w[indices[k + 1]]
                    k = k + 2
                if k < end:
                    s0 = s0 + data[k] * w[indices[k]]
            if permuted:
                out[rows[i]] = s0 + s1
            else:
                out[i] = s0 + s1


cdef void rmatvec_rows(const int* indptr, const int* indices, const double* data,
                       const double* d, Py_ssize_t lo, Py_ssize_t hi,
                       double* out) noexcept nogil:
    cdef Py_ssize_t i, k
    cdef double di
    for i in range(lo, hi):
        di = d[i]
        if di != 0.0:
            for k in range(indptr[i], indptr[i + 1]):
                out[indices[k]] += data[k] * di


def csr_rmatvec(const int[::1] indptr, const int[::1] indices, const double[::1] data,
                const double[::1] d, double[::1] out, int n_threads=0):
    """out += X^T d for CSR X (n rows; ``out`` has one entry per column). The blocks when
    X is large and has few columns (at most nnz / CHUNKS), else one plain pass;
    n_threads > 1 forces the blocks. n_threads = 0: all cores for a large X."""
    cdef Py_ssize_t n = d.shape[0], m = out.shape[0], nnz = indices.shape[0], c, f, size
    cdef int t = threads_for(nnz, n_threads)
    cdef bint blocks = n_threads > 1 or (nnz >= PARALLEL_MIN_NNZ and m * CHUNKS <= nnz)
    cdef double* acc
    if n == 0 or m == 0:
        return
    if not blocks:
        with nogil:
            rmatvec_rows(&indptr[0], &indices[0] if nnz else NULL, &data[0] if nnz else NULL,
                         &d[0], 0, n, &out[0])
        return
    acc = <double*> calloc(CHUNKS * m, sizeof(double))
    if acc == NULL:
        raise MemoryError()
    size = (n + CHUNKS - 1) // CHUNKS
    with nogil:
        for c in prange(CHUNKS, num_threads=t, schedule="static"):
            rmatvec_rows(&indptr[0], &indices[0] if nnz else NULL, &data[0] if nnz else NULL,
                         &d[0], min(n, c * size), min(n, (c + 1) * size), acc + c * m)
        for c in range(CHUNKS):
            for f in range(m):
                out[f] += acc[c * m + f]
    free(acc)


def csr_take_rows(const int[::1] indptr, const int[::1] indices, const double[::1] data,
                  const int[::1] rows, int[::1] out_indptr, int[::1] out_indices,
                  double[::1] out_data):
    """The rows ``rows`` (a permutation of X's rows) of CSR X, as CSR (out_indptr has
    len(rows) + 1 entries; out_data may be None to copy the pattern only). X is read in
    its own order and each row written to its place: a handful of sequential write
    streams when rows are sorted by length, where reading X in the new order would wait
    on memory at every row."""
    cdef Py_ssize_t i, r, k, n = rows.shape[0], dst
    cdef bint values = out_data is not None
    cdef int* start = <int*> malloc(max(n, 1) * sizeof(int))
    if start == NULL:
        raise MemoryError()
    with nogil:
        out_indptr[0] = 0
        for i in range(n):
            r = rows[i]
            out_indptr[i + 1] = out_indptr[i] + (indptr[r + 1] - indptr[r])
            start[r] = out_indptr[i]
        for r in range(n):
            dst = start[r]
            for k in range(indptr[r], indptr[r + 1]):
                out_indices[dst] = indices[k]
                if values:
                    out_data[dst] = data[k]
                dst += 1
    free(start)
