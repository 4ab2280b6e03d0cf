# The top-k projections of cython_src/_projection_fast.pyx, for the kernels that
# cimport them (_topk_fast, _sdca_fast). Each works in place on x (the point to
# project on entry, length m) with a scratch `work` of 3*m doubles and returns 0; the
# caller guarantees 1 <= k <= m, r > 0, rho >= 0 (and lo <= hi, m*lo <= r <= m*hi for
# the knapsack). The file's comments give the algorithms.

cdef int knapsack_project(double* x, Py_ssize_t m, double lo, double hi, double r,
                          double* work) noexcept nogil
cdef int topk_box_project(double* x, Py_ssize_t m, Py_ssize_t k, double r, double rho,
                          double* work) noexcept nogil
cdef int topk_simplex_project(double* x, Py_ssize_t m, Py_ssize_t k, double r,
                              double rho, double* work) noexcept nogil
cdef int topk_simplex_into(const double* a, double* x, Py_ssize_t m, Py_ssize_t k,
                           double r, double rho, double* work) noexcept nogil
cdef int topk_cone_project(double* x, Py_ssize_t m, Py_ssize_t k, double rho,
                           double* work) noexcept nogil


# Internals, declared for the test module (_testing_fast.pyx) only.

cdef struct Stream:  # a lazily sorted stream of values (cone_walk)
    const double* src    # the n values, unordered
    double* v            # materialised values, bucket by bucket (0 = largest)
    Py_ssize_t* off      # off[j] = start of bucket j, off[nb] = n
    double* bsum         # per-bucket sum and minimum (NULL when nb == 1)
    double* bmin
    double vmax
    double scale
    Py_ssize_t nb
    Py_ssize_t n
    Py_ssize_t ns        # v[0:ns] is done: sorted, or absorbed by the walk
    Py_ssize_t nextb     # first bucket not done
    Py_ssize_t matb      # buckets [0, matb) are materialised
    Py_ssize_t width     # buckets per materialisation pass (doubles)
    int passes

cdef void sort_desc(double* v, Py_ssize_t n) noexcept nogil
cdef Py_ssize_t max_fix_iters(Py_ssize_t n) noexcept nogil
cdef double fix_root(double* w, Py_ssize_t n, double lo, double hi, double r, double alpha,
                     Py_ssize_t maxit) noexcept nogil
cdef double clip_root(const double* a, Py_ssize_t n, double lo, double hi, double r,
                      double alpha, double* w, double* p_out) noexcept nogil
cdef double filter_root(const double* a, Py_ssize_t n, double lo, double hi, double r,
                        double* w, Py_ssize_t* idx, Py_ssize_t* nv_out,
                        double* p_out) noexcept nogil
cdef int bucket_root(const double* v, Py_ssize_t nv, Py_ssize_t n, double tl, double vmax,
                     double lo, double hi, double r, Py_ssize_t maxit, double* cw,
                     double* t_out, double* p_out) noexcept nogil
cdef void stream_build(Stream* st, const double* src, Py_ssize_t n, double vmax,
                       double vmin, double* v, Py_ssize_t* cnt) noexcept nogil
cdef void cone_walk(Stream* st, Py_ssize_t k, double rho, double umax, double floor,
                    double* t_out, double* u_out) noexcept nogil
