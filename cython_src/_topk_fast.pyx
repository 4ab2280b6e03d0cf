"""Thin typed wrappers around the nogil projections in _topk_projection.pxi.

No validation here: svmrank.projections checks every argument first. Each wrapper
takes a contiguous float64 array, returns a new projected array.
"""
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy

import numpy as np

include "_topk_projection.pxi"


cdef inline object _copy(const double[::1] a):
    cdef Py_ssize_t m = a.shape[0]
    out = np.empty(m)
    cdef double[::1] x = out
    if m:
        memcpy(&x[0], &a[0], m * sizeof(double))
    return out


cdef double* _work(Py_ssize_t m) except NULL:
    cdef double* w = <double*> malloc(3 * (m if m > 0 else 1) * sizeof(double))
    if w == NULL:
        raise MemoryError()
    return w


def topk_simplex(const double[::1] a, Py_ssize_t k, double r, double rho):
    cdef Py_ssize_t m = a.shape[0]
    out = _copy(a)
    cdef double[::1] x = out
    cdef double* w = _work(m)
    with nogil:
        topk_simplex_project(&x[0], m, k, r, rho, w)
    free(w)
    return out


def topk_cone(const double[::1] a, Py_ssize_t k, double rho):
    cdef Py_ssize_t m = a.shape[0]
    out = _copy(a)
    cdef double[::1] x = out
    cdef double* w = _work(m)
    with nogil:
        topk_cone_project(&x[0], m, k, rho, w)
    free(w)
    return out


def topk_box(const double[::1] a, Py_ssize_t k, double r, double rho):
    cdef Py_ssize_t m = a.shape[0]
    out = _copy(a)
    cdef double[::1] x = out
    cdef double* w = _work(m)
    with nogil:
        topk_box_project(&x[0], m, k, r, rho, w)
    free(w)
    return out


def knapsack(const double[::1] a, double lo, double hi, double r):
    cdef Py_ssize_t m = a.shape[0]
    out = _copy(a)
    cdef double[::1] x = out
    cdef double* w = _work(m)
    with nogil:
        knapsack_project(&x[0], m, lo, hi, r, w)
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
