"""Slow reference of the working-set dual QP kernel (svmrank._qp_fast): the same
primal active-set method (Nocedal & Wright, Alg. 16.3) in NumPy, step for step."""
import numpy as np

from svmrank.learners.qp import QPError


def reference_dual_qp(G, b, capped, C, z0=None, tol=1e-12, max_iter=None):
    """NumPy twin of :func:`svmrank.learners.qp.solve_dual_qp` (same contract)."""
    n = len(b)
    if n == 0:
        return np.zeros(0), 0.0
    capped = np.asarray(capped, dtype=bool)
    z = np.zeros(n) if z0 is None else np.maximum(np.asarray(z0, dtype=float), 0.0)
    total = z[capped].sum()
    if total > C:
        z[capped] *= C / total
    scale = float(np.abs(np.diag(G)).max()) or 1.0
    d = np.sqrt(np.abs(np.diag(G)))
    bmax = float(np.abs(b).max())
    free = z > 0
    stuck = np.zeros(n, dtype=bool)
    cap_active = bool(capped.any() and z[capped].sum() >= C * (1 - 1e-15))
    cap_stuck = False
    max_iter = 20 * n + 100 if max_iter is None else max_iter
    newton_steps = 0  # full Newton steps in a row on the same free set
    conjugate = None  # the last projected-gradient step, while the face stays the same
    for _ in range(max_iter):
        F = np.flatnonzero(free)
        grad = G @ z - b
        z_scale = float(np.abs(z).max())
        base = max(bmax, scale * z_scale)
        # tol relative to b_i, not below the rounding of (G z)_i (64 eps sqrt(G_ii)
        # sum_j sqrt(G_jj) z_j), nor above tol at the problem's scale
        rounding = 64 * np.finfo(float).eps * (d @ z)
        row_tol = np.minimum(tol * base, np.maximum(tol * np.abs(b), rounding * d))
        p_F, lam = _equality_step(G, grad, F, capped, cap_active, scale)
        stationary = F.size == 0 or newton_steps >= 3 or np.abs(p_F).max() <= 1e-13 * z_scale
        slope = curv = 0.0
        newton = True
        if not stationary:
            residual = grad[F] + (lam * capped[F] if cap_active else 0.0)
            stationary = bool((np.abs(residual) <= row_tol[F]).all())
        if not stationary:
            H_F = G[np.ix_(F, F)]
            slope, curv = float(grad[F] @ p_F), float(p_F @ H_F @ p_F)
            if not slope < 0:  # no descent from the solve: the projected gradient,
                newton = False  # made conjugate to the last such step on this face
                on_cap = capped[F] & cap_active
                p_F = -grad[F] + (grad[F][on_cap].mean() if on_cap.any() else 0.0) * on_cap
                if conjugate is not None:
                    Hd = H_F @ conjugate[F]
                    dHd = float(conjugate[F] @ Hd)
                    if dHd > 0:
                        candidate = p_F - float(p_F @ Hd) / dHd * conjugate[F]
                        if float(grad[F] @ candidate) < 0:
                            p_F = candidate
                slope, curv = float(grad[F] @ p_F), float(p_F @ H_F @ p_F)
            size = np.abs(z) @ (np.abs(grad + b) + np.abs(b))  # the objective's rounding scale
            stationary = not slope < 0 or (curv > 0 and slope * slope / (2 * curv) <= 1e-13 * size)
        if stationary:
            newton_steps, conjugate = 0, None
            # the multipliers of the active bounds; a bound released with no step
            # possible stays active until the objective moves again
            mu = grad + (lam * capped if cap_active else 0.0)
            mu[free | stuck] = np.inf
            violating = np.flatnonzero(mu < -row_tol)
            worst = int(violating[np.argmin(mu[violating])]) if violating.size else -1
            release_cap = cap_active and not cap_stuck and lam < -min(
                tol * base, max(tol * bmax, rounding * np.sqrt(scale)))
            if worst < 0 and not release_cap:
                if (z > 1e9 * np.maximum(max(1.0, C), bmax / np.maximum(d * d, 1e-300))).any():
                    break  # only the ridge keeps it finite: the dual is unbounded
                return z, (lam if cap_active else 0.0)
            released_cap = release_cap and (worst < 0 or lam < mu[worst])
            if released_cap:
                cap_active = False
            else:
                free[worst] = True
            continue
        # exact line search along the step (G without the ridge)
        t_star = -slope / curv if curv > 0 else np.inf
        step, block_var, block_cap = t_star, -1, False
        neg = p_F < 0
        if neg.any():
            ratios = z[F[neg]] / -p_F[neg]
            k = int(np.argmin(ratios))
            if ratios[k] < step:
                step, block_var = float(ratios[k]), int(F[neg][k])
        if not cap_active:
            rise = p_F[capped[F]].sum()
            if rise > 0:
                room = C - z[capped].sum()
                if room / rise < step:
                    step, block_var, block_cap = max(room / rise, 0.0), -1, True
        if step == np.inf:
            break
        if step == 0.0:  # a degenerate vertex: the blocker may not cycle back in
            if block_cap:
                cap_stuck = True
            else:
                stuck[block_var] = True
        else:
            if -(slope + 0.5 * curv * step) * step > 1e-13 * size:
                cap_stuck = False
                stuck[:] = False
        z[F] += step * p_F
        full = newton and block_var < 0 and not block_cap and abs(t_star - 1.0) <= 1e-6
        newton_steps = newton_steps + 1 if full else 0
        conjugate = None  # (kept only after a projected-gradient step within the face)
        if not newton and block_var < 0 and not block_cap:
            conjugate = np.zeros(n)
            conjugate[F] = p_F
        if block_var >= 0:
            z[block_var] = 0.0
            free[block_var] = False
        if block_cap:
            cap_active = True
        np.maximum(z, 0.0, out=z)
        total = z[capped].sum()
        if cap_active and 0.0 < total != C:  # rounding of the KKT solve, when |b| ≫ C
            z[capped] *= C / total
        if not np.isfinite(z).all():
            break
    else:
        raise QPError(f"active-set QP did not converge in {max_iter} iterations")
    raise QPError("the constraints cannot all be satisfied (unbounded dual): "
                  "check the hard constraints for infeasibility")


def _equality_step(G, grad, F, capped, cap_active, scale):
    """Newton step on the free variables F, keeping Σ_{capped} z fixed if the cap is
    active by eliminating the capped free plane of least length; the reduced system is
    solved with its planes scaled to unit length (ridge 1e-13 of each one's own
    curvature). Returns (step on F, cap multiplier)."""
    if F.size == 0:
        return np.zeros(0), 0.0
    on_cap = capped[F] & cap_active
    H = G[np.ix_(F, F)]
    if not on_cap.any():
        d = np.sqrt(np.maximum(np.abs(np.diag(H)), 1e-26 * scale))
        return _solve(H / np.outer(d, d) + 1e-13 * np.eye(F.size), -grad[F] / d) / d, 0.0
    r = np.flatnonzero(on_cap)[np.argmin(np.abs(np.diag(H))[on_cap])]
    keep = np.arange(F.size) != r
    Z = np.eye(F.size)[:, keep]  # p = Z q: the other variables free, p_r = −Σ capped q
    Z[r] = -on_cap[keep].astype(float)
    H_red = Z.T @ H @ Z
    d = np.sqrt(np.maximum(np.abs(np.diag(H_red)), 1e-26 * scale))
    q = _solve(H_red / np.outer(d, d) + 1e-13 * np.eye(d.size), -(Z.T @ grad[F]) / d) / d
    step = Z @ q
    return step, float(-grad[F][r] - H[r] @ step)


def _solve(A, rhs):
    try:
        return np.linalg.solve(A, rhs)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(A, rhs, rcond=None)[0]


def enumerate_dual_qp(G, b, capped, C):
    """Brute force over active sets (n ≤ 8): the best of the least-norm KKT points of
    every choice of free variables, with and without the cap active. That is the
    optimal dual value when some optimal face's least-norm point is feasible, and a
    lower bound on it otherwise."""
    n, best = len(b), 0.0
    for mask in range(1, 1 << n):
        F = np.flatnonzero([(mask >> i) & 1 for i in range(n)])
        for cap in (False, True):
            if cap and not capped[F].any():
                continue
            K, rhs = G[np.ix_(F, F)], b[F]
            if cap:  # stationarity on F plus the capped sum at C
                e = capped[F].astype(float)
                K = np.block([[K, e[:, None]], [e[None, :], np.zeros((1, 1))]])
                rhs = np.append(rhs, C)
            sol = np.linalg.lstsq(K, rhs, rcond=None)[0]
            if not np.allclose(K @ sol, rhs, rtol=1e-9, atol=1e-12 * np.abs(rhs).max()):
                continue
            z = np.zeros(n)
            z[F] = sol[:F.size]
            if z.min() < -1e-12 * max(1.0, z.max()) or z[capped].sum() > C * (1 + 1e-12):
                continue
            z = np.maximum(z, 0.0)
            best = max(best, float(b @ z - 0.5 * z @ G @ z))
    return best
