"""Test support: entry points into kernel internals that the package itself never
calls, so that tests/ can check each piece against its reference. Not part of the API.

Projections (_projection_fast): the knapsack roots by each route, the sort and the
cone walk. Sparse products (_linalg_fast): the thread count of its OpenMP loops.
"""
from libc.math cimport INFINITY, NAN

import numpy as np

from . cimport _linalg_fast as linalg
from . cimport _projection_fast as proj


def max_threads():
    """Threads an OpenMP loop of _linalg_fast would use (1 when built without OpenMP)."""
    return linalg.max_threads()


cdef double[::1] scratch(Py_ssize_t m):
    """3 m doubles (at least 3) of work space."""
    return np.empty(3 * (m if m > 0 else 1))


def clip_root(const double[::1] a, double lo, double hi, double r, double alpha,
              Py_ssize_t maxit):
    """Largest root t of sum clip(a - t, lo, hi) = r + alpha*t by variable fixing
    (maxit = 0: the sort-based fallback at once)."""
    cdef Py_ssize_t m = a.shape[0]
    cdef double[::1] w = scratch(m)
    cdef Py_ssize_t i
    cdef double t
    for i in range(m):  # (fix_root overwrites its values)
        w[i] = a[i]
    with nogil:
        t = proj.fix_root(&w[0], m, lo, hi, r, alpha, maxit)
    return t


def sort_desc(const double[::1] a):
    """A copy of a sorted in descending order by the projections' introsort."""
    out = np.array(a, dtype=np.float64, copy=True)
    cdef double[::1] x = out
    cdef Py_ssize_t m = x.shape[0]
    if m:
        with nogil:
            proj.sort_desc(&x[0], m)
    return out


def cone_thresholds(const double[::1] a, Py_ssize_t k, double rho):
    """(t, u) of the top-k cone projection from the partition walk."""
    cdef Py_ssize_t m = a.shape[0]
    cdef double[::1] w = scratch(m)
    cdef double t = 0.0, u = 0.0, vmax = np.max(a), vmin = np.min(a)
    cdef proj.Stream st
    with nogil:
        proj.stream_build(&st, &a[0], m, vmax, vmin, &w[0], <Py_ssize_t*> &w[m])
        proj.cone_walk(&st, k, rho, INFINITY, -INFINITY, &t, &u)
    return t, u


def clip_root_filtered(const double[::1] a, double lo, double hi, double r, double alpha):
    """Largest root of sum clip(a - t, lo, hi) = r + alpha*t via the sample bracket."""
    cdef Py_ssize_t m = a.shape[0]
    cdef double[::1] w = scratch(m)
    cdef double t
    with nogil:
        t = proj.clip_root(&a[0], m, lo, hi, r, alpha, &w[0], NULL)
    return t


def filter_root(const double[::1] a, double lo, double hi, double r):
    """(t, kept) from the sampled filter root alone; t is NaN when its guess fails or
    the filter declines."""
    cdef Py_ssize_t m = a.shape[0], nv = -1
    cdef double[::1] w = scratch(m)
    cdef double t
    with nogil:
        t = proj.filter_root(&a[0], m, lo, hi, r, &w[0], <Py_ssize_t*> &w[2 * m], &nv, NULL)
    return t, nv


def bucket_root(const double[::1] a, double tl, double lo, double hi, double r):
    """(status, t, p) of the bucketed kept-set root: the values above tl + lo are kept,
    the others taken at lo; status 0: t is the root and p = sum (a - t - hi)_+,
    1: F(tl) < 0, 2: declined."""
    cdef Py_ssize_t m = a.shape[0], nv = 0, i
    cdef double[::1] w = scratch(m)
    cdef double t = NAN, p = NAN, vmax = -INFINITY
    cdef int status
    for i in range(m):
        if a[i] > tl + lo:
            w[nv] = a[i]
            vmax = a[i] if a[i] > vmax else vmax
            nv += 1
    if nv == 0:
        return 2, t, p
    with nogil:
        status = proj.bucket_root(&w[0], nv, m, tl, vmax, lo, hi, r, proj.max_fix_iters(m),
                                  &w[m], &t, &p)
    return status, t, p
