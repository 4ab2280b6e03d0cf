"""Thin typed wrappers around the nogil projections in _topk_projection.pxi.

No validation here: svmrank.projections checks every argument first. Each wrapper
takes a contiguous float64 array, returns a new projected array. The wrappers take
and make ndarrays through the NumPy C API rather than typed memoryviews: at m ~ 1e3
acquiring two memoryviews costs about as much as the projection itself.
"""
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy

import numpy as np
cimport numpy as cnp

cnp.import_array()

include "_topk_projection.pxi"


cdef cnp.ndarray _vector(object a):
    # a itself when it already is a contiguous float64 vector, else a converted copy
    if (cnp.PyArray_Check(a) and cnp.PyArray_TYPE(<cnp.ndarray> a) == cnp.NPY_DOUBLE
            and cnp.PyArray_NDIM(<cnp.ndarray> a) == 1
            and cnp.PyArray_ISCARRAY_RO(<cnp.ndarray> a)):
        return <cnp.ndarray> a
    return np.ascontiguousarray(a, dtype=np.float64).reshape(-1)


cdef inline cnp.ndarray _empty(cnp.npy_intp m):
    return cnp.PyArray_EMPTY(1, &m, cnp.NPY_DOUBLE, 0)


cdef cnp.ndarray _copy(object a):
    cdef cnp.ndarray src = _vector(a)
    cdef cnp.ndarray out = _empty(cnp.PyArray_DIM(src, 0))
    if cnp.PyArray_DIM(src, 0):
        memcpy(cnp.PyArray_DATA(out), cnp.PyArray_DATA(src),
               cnp.PyArray_DIM(src, 0) * sizeof(double))
    return out


cdef enum:
    _SMALL_M = 1024  # scratch on the stack (24 KiB) up to this length


cdef double* _work(Py_ssize_t m) except NULL:
    cdef double* w = <double*> malloc(3 * (m if m > 0 else 1) * sizeof(double))
    if w == NULL:
        raise MemoryError()
    return w


def topk_simplex(a, Py_ssize_t k, double r, double rho):
    cdef cnp.ndarray src = _vector(a)
    cdef Py_ssize_t m = cnp.PyArray_DIM(src, 0)
    cdef cnp.ndarray out = _empty(m)
    cdef const double* ap = <const double*> cnp.PyArray_DATA(src)
    cdef double* x = <double*> cnp.PyArray_DATA(out)
    cdef double small[3 * _SMALL_M]
    cdef double* w = &small[0]
    if m > _SMALL_M:
        w = _work(m)
    with nogil:
        _tk_simplex_into(ap, x, m, k, r, rho, w)
    if m > _SMALL_M:
        free(w)
    return out


def topk_cone(a, Py_ssize_t k, double rho):
    cdef cnp.ndarray out = _copy(a)
    cdef Py_ssize_t m = cnp.PyArray_DIM(out, 0)
    cdef double* x = <double*> cnp.PyArray_DATA(out)
    cdef double* w = _work(m)
    with nogil:
        topk_cone_project(x, m, k, rho, w)
    free(w)
    return out


def topk_box(a, Py_ssize_t k, double r, double rho):
    cdef cnp.ndarray out = _copy(a)
    cdef Py_ssize_t m = cnp.PyArray_DIM(out, 0)
    cdef double* x = <double*> cnp.PyArray_DATA(out)
    cdef double* w = _work(m)
    with nogil:
        topk_box_project(x, m, k, r, rho, w)
    free(w)
    return out


def knapsack(a, double lo, double hi, double r):
    cdef cnp.ndarray out = _copy(a)
    cdef Py_ssize_t m = cnp.PyArray_DIM(out, 0)
    cdef double* x = <double*> cnp.PyArray_DATA(out)
    cdef double* w = _work(m)
    with nogil:
        knapsack_project(x, m, lo, hi, r, w)
    free(w)
    return out


# ------------------------------------------------------------- test hooks
def _clip_root(const double[::1] a, double lo, double hi, double r, double alpha,
               Py_ssize_t maxit):
    """Largest root t of sum clip(a - t, lo, hi) = r + alpha*t (maxit=0: sort-based)."""
    cdef Py_ssize_t m = a.shape[0]
    cdef double* w = _work(m)
    cdef Py_ssize_t i
    cdef double t
    for i in range(m):
        w[i] = a[i]
    with nogil:
        t = _tk_fix_root(w, m, lo, hi, r, alpha, maxit)
    free(w)
    return t


def _sort_desc(const double[::1] a):
    """Descending introsort of a copy (test hook for the .pxi sort)."""
    out = np.array(a, dtype=np.float64, copy=True)
    cdef double[::1] x = out
    cdef Py_ssize_t m = x.shape[0]
    if m:
        with nogil:
            _tk_sort_desc(&x[0], m)
    return out


def _cone_thresholds(const double[::1] a, Py_ssize_t k, double rho):
    """(t, u) of the top-k cone projection from the partition walk (test hook)."""
    cdef Py_ssize_t m = a.shape[0]
    cdef double* w = _work(m)
    cdef double t = 0.0, u = 0.0, vmax = np.max(a), vmin = np.min(a)
    cdef _tk_stream st
    with nogil:
        _tk_stream_build(&st, &a[0], m, vmax, vmin, w, <Py_ssize_t*> (w + m))
        _tk_cone_walk(&st, k, rho, INFINITY, -INFINITY, &t, &u)
    free(w)
    return t, u


def _clip_root_filtered(const double[::1] a, double lo, double hi, double r, double alpha):
    """Largest root of sum clip(a - t, lo, hi) = r + alpha*t via the sample bracket."""
    cdef Py_ssize_t m = a.shape[0]
    cdef double* w = _work(m)
    cdef double t
    with nogil:
        t = _tk_clip_root(&a[0], m, lo, hi, r, alpha, w, NULL)
    free(w)
    return t


def _filter_root(const double[::1] a, double lo, double hi, double r):
    """(t, kept) from the sampled filter root alone; t is NaN when its guess fails
    or the filter declines (test hook)."""
    cdef Py_ssize_t m = a.shape[0], nv = -1
    cdef double* w = _work(m)
    cdef double t
    with nogil:
        t = _tk_filter_root(&a[0], m, lo, hi, r, w, <Py_ssize_t*> (w + 2 * m), &nv, NULL)
    free(w)
    return t, nv


def _bucket_root(const double[::1] a, double tl, double lo, double hi, double r):
    """(status, t, p) of the bucketed kept-set root: the values above tl + lo are kept,
    the others taken at lo; status 0: t is the root and p = sum (a - t - hi)_+,
    1: F(tl) < 0, 2: declined (test hook)."""
    cdef Py_ssize_t m = a.shape[0], nv = 0, i
    cdef double* w = _work(m)
    cdef double t = NAN, p = NAN, vmax = -INFINITY
    cdef int status
    for i in range(m):
        if a[i] > tl + lo:
            w[nv] = a[i]
            vmax = a[i] if a[i] > vmax else vmax
            nv += 1
    if nv == 0:
        free(w)
        return 2, t, p
    with nogil:
        status = _tk_bucket_root(w, nv, m, tl, vmax, lo, hi, r, _tk_max_fix_iters(m), w + m,
                                 &t, &p)
    free(w)
    return status, t, p
