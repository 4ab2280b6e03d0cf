# Prox-SDCA epochs for the top-k multiclass SVM (Lapin, Hein & Schiele 2015, Alg. 1).
#
# Scaling (the C form of the paper's problem, C = 1 / (lambda n)): W = X^T A with one
# row a_i of A (length m) per example, a_{i,y_i} = <1, x> and a_{i,j} = -x_j (j != y_i)
# for x in the top-k simplex Delta_k(C) (alpha loss) or the box set
# {<1,x> <= C, 0 <= x_j <= C/k} (beta loss, Prop. 5).
#
# Per-example update (Prop. 4): with K_ii = <x_i, x_i> and q = W^T x_i - K_ii a_i (the
# scores without example i's own contribution),
#   b_j = (q_j + 1 - q_{y_i}) / K_ii  for the m-1 classes j != y_i,
#   x*  = argmin ||b - x||^2 + rho <1,x>^2 over the set above, rho = 1,
# then a_i is rebuilt from x* and W += x_i (a_i - a_i^old)^T (rank-1 update).
# Examples with K_ii = 0 are skipped: their optimal a_i is set once by the driver.
#
# Validation happens in svmrank.learners.sdca; these loops assume valid input.
from libc.math cimport INFINITY
from libc.stdlib cimport malloc, free

from ._projection_fast cimport topk_box_project, topk_simplex_project

ctypedef fused index_t:  # CSR indices and indptr: scipy's int32, or intp (>= 2**31 values)
    int
    Py_ssize_t


cpdef enum:  # the loss of an epoch (Python ints too: svmrank.learners.sdca passes them)
    LOSS_ALPHA = 0  # top-k simplex (alpha loss)
    LOSS_BETA = 1   # the box set (beta loss, Prop. 5)


cdef int dual_update(double* scores, double* a, Py_ssize_t m, Py_ssize_t y, double kii,
                     Py_ssize_t k, double r, int loss, double* b, double* work,
                     double* delta) noexcept nogil:
    """Replace a (row a_i of A) by its exact maximiser given scores = W^T x_i.

    On return delta = a_new - a_old. Returns the projection's status code.
    """
    cdef Py_ssize_t j, p = 0
    cdef double qy = scores[y] - kii * a[y]
    cdef double total = 0.0, bmax = -INFINITY
    cdef int status = 0
    for j in range(m):
        if j != y:
            b[p] = (scores[j] - kii * a[j] + 1.0 - qy) / kii
            if b[p] > bmax:
                bmax = b[p]
            p += 1
    if bmax <= 0.0:
        # every margin is met: the projection is 0 for both sets (Lemma 4, as the sum
        # of the k largest b_j is <= 0), no need to call it
        for j in range(m - 1):
            b[j] = 0.0
    elif loss == LOSS_ALPHA:
        status = topk_simplex_project(b, m - 1, k, r, 1.0, work)
    else:
        status = topk_box_project(b, m - 1, k, r, 1.0, work)
    if bmax > 0.0:
        # back into the set: when b is far larger than r (K_ii C tiny) the projection's
        # rounding (about m eps max|b|) can leave <1,x> above r, and a dual point outside
        # the set would certify a negative duality gap (<x_j <= <1,x>/k> is invariant
        # under the scaling)
        for j in range(m - 1):
            b[j] = b[j] if b[j] > 0.0 else 0.0
            if loss == LOSS_BETA and b[j] > r / k:
                b[j] = r / k
            total += b[j]
        if total > r:
            for j in range(m - 1):
                b[j] *= r / total
        total = 0.0
    p = 0
    for j in range(m):
        if j != y:
            delta[j] = -b[p] - a[j]
            a[j] = -b[p]
            total += b[p]
            p += 1
    delta[y] = total - a[y]
    a[y] = total
    return status


cdef inline void axpy(double* y, const double* x, double a, Py_ssize_t m) noexcept nogil:
    """y += a * x over m entries."""
    cdef Py_ssize_t c
    for c in range(m):
        y[c] += a * x[c]


cdef inline bint any_nonzero(const double* x, Py_ssize_t m) noexcept nogil:
    cdef Py_ssize_t c
    for c in range(m):
        if x[c] != 0.0:
            return True
    return False


cdef class _Buffers:
    """Scratch memory for one epoch (scores, b, delta: m doubles each; work: 3m)."""
    cdef double* scores
    cdef double* b
    cdef double* delta
    cdef double* work

    def __cinit__(self, Py_ssize_t m):
        self.scores = <double*> malloc(m * sizeof(double))
        self.b = <double*> malloc(m * sizeof(double))
        self.delta = <double*> malloc(m * sizeof(double))
        self.work = <double*> malloc(3 * m * sizeof(double))
        if not (self.scores and self.b and self.delta and self.work):
            raise MemoryError()

    def __dealloc__(self):
        free(self.scores)
        free(self.b)
        free(self.delta)
        free(self.work)


def epoch_csr(const double[::1] data, const index_t[::1] indices,
              const index_t[::1] indptr, const Py_ssize_t[::1] y,
              const double[::1] sqnorm, const Py_ssize_t[::1] order,
              double[:, ::1] W, double[:, ::1] A, Py_ssize_t k, double r, int loss):
    """One pass of SDCA over ``order`` for CSR X (its own index arrays, int32 or intp:
    no copy); W (d, m) and A (n, m) in place.

    Returns the number of projections that reported a non-zero status.
    """
    cdef Py_ssize_t m = W.shape[1]
    cdef Py_ssize_t t, i, p, c
    cdef int failures = 0
    cdef _Buffers buf = _Buffers(m)
    cdef double* scores = buf.scores
    cdef double* delta = buf.delta
    with nogil:
        for t in range(order.shape[0]):
            i = order[t]
            if sqnorm[i] <= 0.0:
                continue
            for c in range(m):
                scores[c] = 0.0
            for p in range(indptr[i], indptr[i + 1]):
                axpy(scores, &W[indices[p], 0], data[p], m)
            if dual_update(scores, &A[i, 0], m, y[i], sqnorm[i], k, r, loss,
                           buf.b, buf.work, delta) != 0:
                failures += 1
            if not any_nonzero(delta, m):
                continue
            for p in range(indptr[i], indptr[i + 1]):
                axpy(&W[indices[p], 0], delta, data[p], m)
    return failures


def epoch_dense(const double[:, ::1] X, const Py_ssize_t[::1] y,
                const double[::1] sqnorm, const Py_ssize_t[::1] order,
                double[:, ::1] W, double[:, ::1] A, Py_ssize_t k, double r, int loss):
    """One pass of SDCA over ``order`` for dense X (n, d); W (d, m), A (n, m) in place.

    Same arithmetic as :func:`epoch_csr` (zero entries only add +-0.0), so both give
    identical iterates. Returns the number of failed projections.
    """
    cdef Py_ssize_t m = W.shape[1], d = X.shape[1]
    cdef Py_ssize_t t, i, j, c
    cdef double v
    cdef int failures = 0
    cdef _Buffers buf = _Buffers(m)
    cdef double* scores = buf.scores
    cdef double* delta = buf.delta
    with nogil:
        for t in range(order.shape[0]):
            i = order[t]
            if sqnorm[i] <= 0.0:
                continue
            for c in range(m):
                scores[c] = 0.0
            for j in range(d):
                v = X[i, j]
                if v != 0.0:
                    axpy(scores, &W[j, 0], v, m)
            if dual_update(scores, &A[i, 0], m, y[i], sqnorm[i], k, r, loss,
                           buf.b, buf.work, delta) != 0:
                failures += 1
            if not any_nonzero(delta, m):
                continue
            for j in range(d):
                v = X[i, j]
                if v != 0.0:
                    axpy(&W[j, 0], delta, v, m)
    return failures


def epoch_kernel(const double[:, ::1] K, const Py_ssize_t[::1] y,
                 const Py_ssize_t[::1] order, double[:, ::1] A, Py_ssize_t k, double r,
                 int loss):
    """One pass of kernel SDCA: scores W^T x_i = A^T K_i (Theorem 1); A (n, m) in place.

    K is the (n, n) Gram matrix. Returns the number of failed projections.
    """
    cdef Py_ssize_t n = K.shape[0], m = A.shape[1]
    cdef Py_ssize_t t, i, l, c
    cdef double v
    cdef int failures = 0
    cdef _Buffers buf = _Buffers(m)
    cdef double* scores = buf.scores
    with nogil:
        for t in range(order.shape[0]):
            i = order[t]
            if K[i, i] <= 0.0:
                continue
            for c in range(m):
                scores[c] = 0.0
            for l in range(n):
                v = K[i, l]
                if v != 0.0:
                    axpy(scores, &A[l, 0], v, m)
            if dual_update(scores, &A[i, 0], m, y[i], K[i, i], k, r, loss,
                           buf.b, buf.work, buf.delta) != 0:
                failures += 1
    return failures


def sqnorms_csr(const double[::1] data, const index_t[::1] indptr, double[::1] out):
    """K_ii = <x_i, x_i> of CSR rows, summed left to right (as :func:`sqnorms_dense`)."""
    cdef Py_ssize_t i, p
    cdef double s
    with nogil:
        for i in range(out.shape[0]):
            s = 0.0
            for p in range(indptr[i], indptr[i + 1]):
                s += data[p] * data[p]
            out[i] = s


def sqnorms_dense(const double[:, ::1] X, double[::1] out):
    """K_ii = <x_i, x_i> of dense rows, skipping zeros, summed left to right."""
    cdef Py_ssize_t i, j
    cdef double s
    with nogil:
        for i in range(X.shape[0]):
            s = 0.0
            for j in range(X.shape[1]):
                if X[i, j] != 0.0:
                    s += X[i, j] * X[i, j]
            out[i] = s
