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


cdef inline double row_tol(double tol, double b_i, double G_ii, double norm_z,
                           double base) noexcept nogil:
    # what a row's gradient (G z - b)_i may miss by: tol relative to its b_i, but not
    # below its rounding, eps sqrt(G_ii) sum_j sqrt(G_jj) z_j (Cauchy-Schwarz on
    # sum_j G_ij z_j; 64 eps for the sums and the solves), nor above tol at the
    # problem's scale: a hard row of norm 1 beside planes of norm 1e5 is judged at
    # its own scale, and a large C (z ~ C) does not excuse a gradient of order b
    return min(tol * base, max(tol * fabs(b_i), 1.4210854715202004e-14 * sqrt(fabs(G_ii)) * norm_z))


cdef void slope_and_curvature(const double* G, const double* grad, const double* p,
                              const Py_ssize_t* F, Py_ssize_t nf, Py_ssize_t n,
                              double* slope, double* curv) noexcept nogil:
    # the objective along z + t p on the free set: slope grad.p, curvature p'Gp
    cdef Py_ssize_t k, j
    slope[0], curv[0] = 0.0, 0.0
    for k in range(nf):
        slope[0] += grad[F[k]] * p[k]
        for j in range(nf):
            curv[0] += p[k] * G[F[k] * n + F[j]] * p[j]


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
    cdef double* dsc = p + n + 1                 # n: the free planes' lengths
    cdef double* cgd = dsc + n                   # n: the last projected-gradient step
    cdef Py_ssize_t* F = <Py_ssize_t*> (cgd + n)
    cdef Py_ssize_t* piv = F + n
    cdef unsigned char* is_free = <unsigned char*> (piv + n + 1)
    cdef unsigned char* stuck = is_free + n
    cdef Py_ssize_t i, j, k, it, nf, m, worst, block_var, k_capped, ir
    cdef Py_ssize_t newton_steps = 0  # full Newton steps in a row on this free set
    cdef double scale = 0.0, lam = 0.0, total, z_scale, pmax, thresh, bmax = 0.0
    cdef double step, ratio, rise, room, s, norm_z, base, slope, curv, t_star, size, dhd, phd
    cdef bint cap_active, release_cap, any_capped = False, block_cap
    cdef bint stationary, cap_stuck = False, released_cap, newton, conjugate = False
    for i in range(n):
        scale = max(scale, fabs(G[i * n + i]))
        bmax = max(bmax, fabs(b[i]))
        is_free[i] = z[i] > 0
        stuck[i] = False
        any_capped = any_capped or capped[i]
    # every tolerance is relative to the problem's own scale (no floor of 1): features
    # scaled by s scale G by s² and the solution z by 1/s², and the steps must follow
    if scale == 0.0:
        scale = 1.0
    total = 0.0
    for i in range(n):
        if capped[i]:
            total += z[i]
    cap_active = any_capped and total >= C * (1 - 1e-15)
    for it in range(max_iter):
        # the gradient G z - b afresh, O(n |F|) as z is zero off the free set (a running
        # update drifts after a large warm start); G is symmetric: column j is row j
        for i in range(n):
            grad[i] = -b[i]
        z_scale, norm_z, nf = 0.0, 0.0, 0
        for j in range(n):
            if z[j] != 0.0:
                axpy(z[j], &G[j * n], grad, n)
            z_scale = max(z_scale, fabs(z[j]))
            norm_z += sqrt(fabs(G[j * n + j])) * z[j]
            if is_free[j]:
                F[nf] = j
                nf += 1
        base = max(bmax, scale * z_scale)
        size = 0.0  # the objective's rounding scale, |z'Gz| + |b'z| bounded termwise
        for i in range(n):
            size += fabs(z[i]) * (fabs(grad[i] + b[i]) + fabs(b[i]))
        # Newton step on the free variables, Σ_{capped} z held fixed if the cap is active:
        # the capped free plane of least length, r, is eliminated (p_r = −Σ p_k over the
        # other capped ones), and the reduced system is solved with its planes scaled to
        # unit length (Jacobi; the ridge is 1e-13 of each one's own curvature, floored
        # for zero planes). Planes of norms 1e-12 and 1 side by side stay solvable.
        lam, ir = 0.0, -1
        for k in range(nf):
            if cap_active and capped[F[k]] and (
                    ir < 0 or fabs(G[F[k] * n + F[k]]) < fabs(G[F[ir] * n + F[ir]])):
                ir = k
        m = nf
        if ir >= 0:
            F[ir], F[nf - 1] = F[nf - 1], F[ir]
            ir, m = F[nf - 1], nf - 1
        for k in range(m):
            s = G[F[k] * n + F[k]]
            if ir >= 0 and capped[F[k]]:
                s += G[ir * n + ir] - 2.0 * G[F[k] * n + ir]
            dsc[k] = sqrt(max(fabs(s), 1e-26 * scale))
        for k in range(m):
            for j in range(m):
                s = G[F[k] * n + F[j]]
                if ir >= 0:
                    if capped[F[k]]:
                        s -= G[ir * n + F[j]]
                    if capped[F[j]]:
                        s -= G[F[k] * n + ir]
                    if capped[F[k]] and capped[F[j]]:
                        s += G[ir * n + ir]
                K[k * m + j] = s / (dsc[k] * dsc[j])
            K[k * m + k] += 1e-13
            p[k] = -(grad[F[k]] - (grad[ir] if (ir >= 0 and capped[F[k]]) else 0.0)) / dsc[k]
        if m:
            lu_solve(K, p, m, piv)
        for k in range(m):
            p[k] /= dsc[k]
        if ir >= 0:
            s = 0.0
            for k in range(m):
                if capped[F[k]]:
                    s += p[k]
            p[nf - 1] = -s
            lam = -grad[ir]
            for k in range(nf):
                lam -= G[ir * n + F[k]] * p[k]
        # stationary on the free set: a negligible step, every free row's gradient (plus
        # the cap's multiplier) within row_tol, or three full Newton steps in a row
        # (refinement; a large first step, from a far warm start, leaves eps times it)
        pmax = 0.0
        for k in range(nf):
            pmax = max(pmax, fabs(p[k]))
        stationary = nf == 0 or newton_steps >= 3 or pmax <= 1e-13 * z_scale
        slope, curv, newton = 0.0, 0.0, True
        if not stationary:
            stationary = True
            for k in range(nf):
                i = F[k]
                s = grad[i] + (lam if (ir >= 0 and capped[i]) else 0.0)
                if fabs(s) > row_tol(tol, b[i], G[i * n + i], norm_z, base):
                    stationary = False
        if not stationary:
            slope_and_curvature(G, grad, p, F, nf, n, &slope, &curv)
            if not slope < 0:
                # the solve gave no descent (its rounding, in a system of planes whose
                # lengths differ by many orders): step along the projected gradient,
                # which descends wherever a row is not stationary
                newton, s, k_capped = False, 0.0, 0
                for k in range(nf):
                    if ir >= 0 and capped[F[k]]:
                        s += grad[F[k]]
                        k_capped += 1
                for k in range(nf):
                    p[k] = -grad[F[k]] + (s / k_capped if (ir >= 0 and capped[F[k]]) else 0.0)
                if conjugate:  # made conjugate to the last such step on this face
                    dhd, phd = 0.0, 0.0
                    for k in range(nf):
                        s = 0.0
                        for j in range(nf):
                            s += G[F[k] * n + F[j]] * cgd[F[j]]
                        dhd += cgd[F[k]] * s
                        phd += p[k] * s
                    if dhd > 0:
                        s = 0.0
                        for k in range(nf):
                            s += grad[F[k]] * (p[k] - phd / dhd * cgd[F[k]])
                        if s < 0:
                            for k in range(nf):
                                p[k] -= phd / dhd * cgd[F[k]]
                slope_and_curvature(G, grad, p, F, nf, n, &slope, &curv)
            # no descent left, or none above the objective's rounding
            stationary = not slope < 0 or (curv > 0 and slope * slope / (2 * curv) <= 1e-13 * size)
        if stationary:
            newton_steps, conjugate = 0, False
            # check the multipliers of the active bounds (row_tol). A bound released
            # with no step possible (a duplicate plane, its multiplier negative by
            # rounding only) stays active until the objective moves again.
            thresh = -row_tol(tol, bmax, scale, norm_z, base)
            worst = -1
            for i in range(n):
                mu[i] = INFINITY if (is_free[i] or stuck[i]) else \
                    grad[i] + (lam if (cap_active and capped[i]) else 0.0)
                s = -row_tol(tol, b[i], G[i * n + i], norm_z, base)
                if mu[i] < s and (worst < 0 or mu[i] < mu[worst]):
                    worst = i
            release_cap = cap_active and lam < thresh and not cap_stuck
            if worst < 0 and not release_cap:
                for i in range(n):
                    # (at each row's own curvature: a short hard row may need a large z)
                    if z[i] > 1e9 * max(1.0, C, bmax / max(fabs(G[i * n + i]), 1e-300)):
                        return UNBOUNDED  # only the ridge keeps it finite
                lam_out[0] = lam if cap_active else 0.0
                return OK
            released_cap = release_cap and (worst < 0 or lam < mu[worst])
            if released_cap:
                cap_active = False
            else:
                is_free[worst] = True
            continue
        # exact line search along the step (G without the ridge): a full Newton step
        # when the ridge is negligible, farther along a direction the ridge held back
        # (a rank-deficient free block: the objective is linear there)
        t_star = -slope / curv if curv > 0 else INFINITY
        step, block_var, block_cap = t_star, -1, False
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
        if step == INFINITY:
            return UNBOUNDED
        # the blocker of a step of length 0 (a degenerate vertex: a duplicate plane, or a
        # release undone at once) is marked stuck, so that the same releases cannot
        # cycle; any step that moves the objective beyond rounding clears the marks
        if step == 0.0:
            if block_cap:
                cap_stuck = True
            else:
                stuck[block_var] = True
        else:
            if -(slope + 0.5 * curv * step) * step > 1e-13 * size:
                cap_stuck = False
                for i in range(n):
                    stuck[i] = False
        for k in range(nf):
            z[F[k]] += step * p[k]
        if newton and block_var < 0 and not block_cap and fabs(t_star - 1.0) <= 1e-6:
            newton_steps += 1
        else:
            newton_steps = 0
        # a projected-gradient step within the face is kept for the next one's conjugation
        conjugate = not newton and block_var < 0 and not block_cap
        if conjugate:
            for k in range(nf):
                cgd[F[k]] = p[k]
        if block_var >= 0:
            z[block_var] = 0.0
            is_free[block_var] = False
        if block_cap:
            cap_active = True
        total = 0.0
        for i in range(n):
            if z[i] < 0:
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
                    z[i] *= C / total
    return MAX_ITER


def solve_dual_qp(const double[:, ::1] G, const double[::1] b,
                  const unsigned char[::1] capped, double C, double[::1] z,
                  double tol, Py_ssize_t max_iter):
    """Solve in place from the feasible warm start z; returns (status, cap multiplier)."""
    cdef Py_ssize_t n = b.shape[0]
    cdef double lam = 0.0
    cdef int status
    cdef size_t nbytes = (sizeof(double) * (5 * n + 1 + (n + 1) * (n + 1))
                          + sizeof(Py_ssize_t) * (2 * n + 1) + 2 * n + 8)
    cdef char* work = <char*> malloc(nbytes)
    if work == NULL:
        raise MemoryError()
    with nogil:
        status = active_set(&G[0, 0], &b[0], &capped[0], n, C, &z[0], tol, max_iter,
                            &lam, work)
    free(work)
    return status, lam
