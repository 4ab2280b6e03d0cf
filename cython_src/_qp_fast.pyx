# The working-set dual QP of the cutting-plane learner (svmrank/learners/qp.py):
#     max_z  b.z - 1/2 z'Gz   s.t.  z >= 0,  sum_{capped} z <= C,
# by a primal active-set method (Nocedal & Wright, Alg. 16.3) with warm starts. The
# slow reference is tests/qp_reference.py, which this kernel follows step for step; the
# working sets are small (tens of free variables), so every step is a dense solve.
from libc.math cimport fabs, isfinite, sqrt, INFINITY
from libc.stdlib cimport malloc, free

cdef enum:
    OK = 0
    MAX_ITER = 1
    UNBOUNDED = 2

QP_OK, QP_MAX_ITER, QP_UNBOUNDED = OK, MAX_ITER, UNBOUNDED


cdef void lu_solve(double* A, double* x, Py_ssize_t m, Py_ssize_t* piv) noexcept nogil:
    # Solve A x = rhs in place (x holds rhs) by Gaussian elimination with partial
    # pivoting; A (m x m, row-major) is overwritten. A zero pivot (a singular KKT
    # matrix, only possible when the ridge underflows) is replaced by the smallest
    # positive double, as a least-squares fallback would keep that component bounded.
    cdef Py_ssize_t i, j, k, p
    cdef double t, big
    for k in range(m):
        p, big = k, fabs(A[k * m + k])
        for i in range(k + 1, m):
            if fabs(A[i * m + k]) > big:
                p, big = i, fabs(A[i * m + k])
        piv[k] = p
        if p != k:
            for j in range(m):
                A[k * m + j], A[p * m + j] = A[p * m + j], A[k * m + j]
            x[k], x[p] = x[p], x[k]
        if A[k * m + k] == 0.0:
            A[k * m + k] = 2.2250738585072014e-308
        for i in range(k + 1, m):
            t = A[i * m + k] / A[k * m + k]
            if t != 0.0:
                for j in range(k + 1, m):
                    A[i * m + j] -= t * A[k * m + j]
                x[i] -= t * x[k]
    for k in range(m - 1, -1, -1):
        t = x[k]
        for j in range(k + 1, m):
            t -= A[k * m + j] * x[j]
        x[k] = t / A[k * m + k]


cdef inline void axpy(double a, const double* x, double* y, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(n):
        y[i] += a * x[i]


cdef int active_set(const double* G, const double* b, const unsigned char* capped,
                    Py_ssize_t n, double C, double* z, double tol, Py_ssize_t max_iter,
                    double* lam_out, char* work) noexcept nogil:
    cdef double* grad = <double*> work
    cdef double* mu = grad + n
    cdef double* K = mu + n                      # (n + 1)^2
    cdef double* p = K + (n + 1) * (n + 1)       # n + 1
    cdef Py_ssize_t* F = <Py_ssize_t*> (p + n + 1)
    cdef Py_ssize_t* piv = F + n
    cdef unsigned char* is_free = <unsigned char*> (piv + n + 1)
    cdef Py_ssize_t i, j, k, it, nf, m, worst, block_var
    cdef double scale = 0.0, ridge, lam = 0.0, total, z_scale, pmax, thresh, bmax = 0.0
    cdef double step, ratio, rise, room, s, norm_z, base
    cdef bint cap_active, at_optimum = False, release_cap, any_capped = False, block_cap, e_any
    for i in range(n):
        scale = max(scale, fabs(G[i * n + i]))
        bmax = max(bmax, fabs(b[i]))
        is_free[i] = z[i] > 0
        any_capped = any_capped or capped[i]
    # every tolerance is relative to the problem's own scale (no floor of 1): features
    # scaled by s scale G by s² and the solution z by 1/s², and the steps must follow
    if scale == 0.0:
        scale = 1.0
    ridge = 1e-13 * scale
    total = 0.0
    for i in range(n):
        if capped[i]:
            total += z[i]
    cap_active = any_capped and total >= C * (1 - 1e-15)
    # the gradient G z - b, then kept up to date as z changes: O(n |F|) a step, not
    # O(n^2) (G is symmetric, so its column j is its row j)
    for i in range(n):
        grad[i] = -b[i]
    for j in range(n):
        if z[j] != 0.0:
            axpy(z[j], &G[j * n], grad, n)
    for it in range(max_iter):
        nf = 0
        for i in range(n):
            if is_free[i]:
                F[nf] = i
                nf += 1
        # Newton step on the free variables, Σ_{capped} z held fixed if the cap is active
        lam = 0.0
        e_any = False
        for k in range(nf):
            e_any = e_any or capped[F[k]]
        m = nf + 1 if (cap_active and e_any) else nf
        for k in range(nf):
            for j in range(nf):
                K[k * m + j] = G[F[k] * n + F[j]]
            K[k * m + k] += ridge
            p[k] = -grad[F[k]]
        if m > nf:  # the cap's row and column at G's scale, or elimination loses the cap
            for k in range(nf):
                K[k * m + nf] = scale if capped[F[k]] else 0.0
                K[nf * m + k] = K[k * m + nf]
            K[nf * m + nf] = 0.0
            p[nf] = 0.0
        if m:
            lu_solve(K, p, m, piv)
        if m > nf:
            lam = p[nf] * scale
        z_scale, pmax = 0.0, 0.0
        for i in range(n):
            z_scale = max(z_scale, fabs(z[i]))
        for k in range(nf):
            pmax = max(pmax, fabs(p[k]))
        if nf == 0 or at_optimum or pmax <= 1e-13 * z_scale:
            at_optimum = False
            # stationary on the working set: check the multipliers of the active bounds,
            # each against its own rounding scale where that is below the problem's: a
            # row's (G z)_i rounds by at most eps sqrt(G_ii) sum_j sqrt(G_jj) z_j, so a
            # hard row of norm 1 beside planes of norm 1e5 is not excused 1e10 times
            # its own error (its violation b_i - (G z)_i would pass unseen)
            base = max(bmax, scale * z_scale)
            thresh = -tol * base
            norm_z = 0.0
            for i in range(n):
                norm_z += sqrt(fabs(G[i * n + i])) * z[i]
            worst = -1
            for i in range(n):
                mu[i] = INFINITY if is_free[i] else grad[i] + (lam if (cap_active and capped[i]) else 0.0)
                s = -tol * min(base, max(fabs(b[i]), sqrt(fabs(G[i * n + i])) * norm_z))
                if mu[i] < s and (worst < 0 or mu[i] < mu[worst]):
                    worst = i
            release_cap = cap_active and lam < thresh
            if worst < 0 and not release_cap:
                for i in range(n):
                    if z[i] > 1e9 * max(1.0, C, bmax / scale):
                        return UNBOUNDED  # only the ridge keeps it finite
                lam_out[0] = lam if cap_active else 0.0
                return OK
            if release_cap and (worst < 0 or lam < mu[worst]):
                cap_active = False
            else:
                is_free[worst] = True
            continue
        # step towards the working-set optimum until a constraint blocks it
        step, block_var, block_cap = 1.0, -1, False
        for k in range(nf):
            if p[k] < 0:
                ratio = z[F[k]] / -p[k]
                if ratio < step:
                    step, block_var = ratio, F[k]
        if not cap_active:
            rise, total = 0.0, 0.0
            for k in range(nf):
                if capped[F[k]]:
                    rise += p[k]
            if rise > 0:
                for i in range(n):
                    if capped[i]:
                        total += z[i]
                room = C - total
                if room / rise < step:
                    step, block_var, block_cap = max(room / rise, 0.0), -1, True
        for k in range(nf):
            z[F[k]] += step * p[k]
            axpy(step * p[k], &G[F[k] * n], grad, n)
        at_optimum = block_var < 0 and not block_cap
        if block_var >= 0:
            axpy(-z[block_var], &G[block_var * n], grad, n)
            z[block_var] = 0.0
            is_free[block_var] = False
        if block_cap:
            cap_active = True
        total = 0.0
        for i in range(n):
            if z[i] < 0:
                axpy(-z[i], &G[i * n], grad, n)
                z[i] = 0.0
            if not isfinite(z[i]):
                return UNBOUNDED
            if capped[i]:
                total += z[i]
        # with the cap active the capped sum is C: the KKT solve's rounding, when
        # |b| >> C, leaves it off C either way (below, the objective loses b times it)
        if cap_active and total > 0.0 and total != C:
            for i in range(n):
                if capped[i]:
                    axpy(z[i] * (C / total - 1.0), &G[i * n], grad, n)
                    z[i] *= C / total
    return MAX_ITER


def solve_dual_qp(const double[:, ::1] G, const double[::1] b,
                  const unsigned char[::1] capped, double C, double[::1] z,
                  double tol, Py_ssize_t max_iter):
    """Solve in place from the feasible warm start z; returns (status, cap multiplier)."""
    cdef Py_ssize_t n = b.shape[0]
    cdef double lam = 0.0
    cdef int status
    cdef size_t nbytes = (sizeof(double) * (3 * n + 1 + (n + 1) * (n + 1))
                          + sizeof(Py_ssize_t) * (2 * n + 1) + n + 8)
    cdef char* work = <char*> malloc(nbytes)
    if work == NULL:
        raise MemoryError()
    with nogil:
        status = active_set(&G[0, 0], &b[0], &capped[0], n, C, &z[0], tol, max_iter,
                            &lam, work)
    free(work)
    return status, lam
