# Sparse products of the cutting-plane problems, on every core when the matrix is large
# (OpenMP; without it the loops run serially). X w gives each row to one thread, so its
# result does not depend on the thread count; it also takes a matrix stored with its
# rows in another order (rows sorted by length, whose loops the CPU predicts) and a 0/1
# matrix without its values. X^T d reads only the rows whose d_i is non-zero and sums
# them in CHUNKS fixed blocks of rows, each into its own copy of the output, added in
# block order at the end: the same result on any number of threads (for a dense d the
# problems multiply X^T, stored by rows, instead: svmrank/problems/linear.py).
# Reference: scipy's X @ w, X.T @ d, X[rows] and X[rows].T.tocsr() (tests/test_linalg_kernel.py).
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
                       const double* d, const int* rows, Py_ssize_t lo, Py_ssize_t hi,
                       double* out) noexcept nogil:
    cdef Py_ssize_t i, k, r
    cdef double di
    for i in range(lo, hi):
        di = d[i]
        if di != 0.0:
            r = rows[i] if rows != NULL else i
            for k in range(indptr[r], indptr[r + 1]):
                out[indices[k]] += data[k] * di


def csr_rmatvec(const int[::1] indptr, const int[::1] indices, const double[::1] data,
                const double[::1] d, double[::1] out, int n_threads=0,
                const int[::1] rows=None, Py_ssize_t nnz=-1):
    """out += X^T d for CSR X (n rows; ``out`` has one entry per column). The blocks when
    X is large and has few columns (at most nnz / CHUNKS), else one plain pass;
    n_threads > 1 forces the blocks. n_threads = 0: all cores for a large X. With
    ``rows`` (distinct rows of X, one per entry of d), the product is X[rows]^T d, read
    from X through the map, equal bitwise to the product over the copy X[rows] when
    ``nnz`` is that copy's count of stored values (default: X's)."""
    cdef Py_ssize_t n = d.shape[0], m = out.shape[0], c, f, size
    cdef const int* row_map = NULL
    if nnz < 0:
        nnz = indices.shape[0]
    if rows is not None:
        if rows.shape[0] != n:
            raise ValueError("rows: expected one per entry of d")
        if n:
            row_map = &rows[0]
    cdef int t = threads_for(nnz, n_threads)
    cdef bint blocks = n_threads > 1 or (nnz >= PARALLEL_MIN_NNZ and m * CHUNKS <= nnz)
    cdef double* acc
    cdef bint stored = indices.shape[0] > 0
    if n == 0 or m == 0:
        return
    if not blocks:
        with nogil:
            rmatvec_rows(&indptr[0], &indices[0] if stored else NULL,
                         &data[0] if stored else NULL, &d[0], row_map, 0, n, &out[0])
        return
    acc = <double*> calloc(CHUNKS * m, sizeof(double))
    if acc == NULL:
        raise MemoryError()
    size = (n + CHUNKS - 1) // CHUNKS
    with nogil:
        for c in prange(CHUNKS, num_threads=t, schedule="static"):
            rmatvec_rows(&indptr[0], &indices[0] if stored else NULL,
                         &data[0] if stored else NULL, &d[0], row_map, min(n, c * size),
                         min(n, (c + 1) * size), acc + c * m)
        for c in range(CHUNKS):
            for f in range(m):
                out[f] += acc[c * m + f]
    free(acc)


def csr_take_rows(const int[::1] indptr, const int[::1] indices, const double[::1] data,
                  const int[::1] rows, int[::1] out_indptr, int[::1] out_indices,
                  double[::1] out_data):
    """The rows ``rows`` (distinct rows of X: a permutation of them, or some) of CSR X,
    as CSR (out_indptr has len(rows) + 1 entries; out_data may be None to copy the
    pattern only). X is read in its own order and each row written to its place: a
    handful of sequential write streams when rows are sorted by length, where reading X
    in the new order would wait on memory at every row."""
    cdef Py_ssize_t i, r, k, n = rows.shape[0], n_x = indptr.shape[0] - 1, dst
    cdef bint values = out_data is not None
    cdef Py_ssize_t* start = <Py_ssize_t*> malloc(max(n_x, 1) * sizeof(Py_ssize_t))
    if start == NULL:
        raise MemoryError()
    with nogil:
        for r in range(n_x):
            start[r] = -1
        out_indptr[0] = 0
        for i in range(n):
            r = rows[i]
            out_indptr[i + 1] = out_indptr[i] + (indptr[r + 1] - indptr[r])
            start[r] = out_indptr[i]
        for r in range(n_x):
            dst = start[r]
            if dst < 0:
                continue
            for k in range(indptr[r], indptr[r + 1]):
                out_indices[dst] = indices[k]
                if values:
                    out_data[dst] = data[k]
                dst += 1
    free(start)


def csr_column_counts(const int[::1] indptr, const int[::1] indices, const int[::1] rows,
                      long long[::1] counts):
    """counts[j] += stored values of column j in the rows ``rows`` of CSR X (all rows
    when None)."""
    cdef Py_ssize_t i, r, k, n = indptr.shape[0] - 1 if rows is None else rows.shape[0]
    cdef bint mapped = rows is not None
    with nogil:
        for i in range(n):
            r = rows[i] if mapped else i
            for k in range(indptr[r], indptr[r + 1]):
                counts[indices[k]] += 1


def csr_transpose(const int[::1] indptr, const int[::1] indices, const double[::1] data,
                  const int[::1] rows, long long[::1] cursor, int[::1] out_indices,
                  double[::1] out_data):
    """The values of X[rows]^T (X^T when rows is None) in CSR, into arrays laid out by
    the caller: column j of X goes to out_*[cursor[j]:] (cursor is advanced), its
    entries in order of their row in X[rows], as scipy's X[rows].T.tocsr() stores them.
    out_data may be None to copy the pattern only."""
    cdef Py_ssize_t i, r, k, j, n = indptr.shape[0] - 1 if rows is None else rows.shape[0]
    cdef bint mapped = rows is not None, values = out_data is not None
    with nogil:
        for i in range(n):
            r = rows[i] if mapped else i
            for k in range(indptr[r], indptr[r + 1]):
                j = indices[k]
                out_indices[cursor[j]] = <int> i
                if values:
                    out_data[cursor[j]] = data[k]
                cursor[j] += 1
