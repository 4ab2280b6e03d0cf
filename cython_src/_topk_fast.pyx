"""Thin typed wrappers around the nogil projections of _projection_fast.pyx.

No validation here: svmrank.projections checks every argument first. Each wrapper
takes a contiguous float64 array, returns a new projected array. The wrappers take
and make ndarrays through the NumPy C API rather than typed memoryviews: at m ~ 1e3
acquiring two memoryviews costs about as much as the projection itself.
"""
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy

import numpy as np
cimport numpy as cnp

from ._projection_fast cimport (knapsack_project, topk_box_project, topk_cone_project,
                                topk_simplex_into)

cnp.import_array()


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
        topk_simplex_into(ap, x, m, k, r, rho, w)
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
