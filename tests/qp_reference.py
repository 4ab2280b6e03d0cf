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
    ridge = 1e-13 * scale
    free = z > 0
    cap_active = bool(capped.any() and z[capped].sum() >= C * (1 - 1e-15))
    max_iter = 20 * n + 100 if max_iter is None else max_iter
    lam = 0.0
    at_optimum = False  # set after a full, unblocked Newton step
    for _ in range(max_iter):
        F = np.flatnonzero(free)
        grad = G @ z - b
        p_F, lam = _equality_step(G, grad, F, capped, cap_active, ridge)
        z_scale = float(np.abs(z).max())
        if F.size == 0 or at_optimum or np.abs(p_F).max() <= 1e-13 * z_scale:
            at_optimum = False
            # stationary on the working set: check the multipliers of the active bounds,
            # each against its own rounding scale where that is below the problem's:
            # |rounding of (G z)_i| <= eps sqrt(G_ii) sum_j sqrt(G_jj) z_j
            mu = grad + (lam * capped if cap_active else 0.0)
            mu[free] = np.inf
            base = max(float(np.abs(b).max()), scale * z_scale)
            thresh = -tol * base
            d = np.sqrt(np.abs(np.diag(G)))
            row_thresh = -tol * np.minimum(base, np.maximum(np.abs(b), d * (d @ z)))
            violating = np.flatnonzero(mu < row_thresh)
            worst = int(violating[np.argmin(mu[violating])]) if violating.size else -1
            release_cap = cap_active and lam < thresh
            if worst < 0 and not release_cap:
                if z.max() > 1e9 * max(1.0, C, float(np.abs(b).max()) / scale):
                    break  # only the ridge keeps it finite: the dual is unbounded
                return z, (lam if cap_active else 0.0)
            if release_cap and (worst < 0 or lam < mu[worst]):
                cap_active = False
            else:
                free[worst] = True
            continue
        # step towards the working-set optimum until a constraint blocks it
        step, block_var, block_cap = 1.0, -1, False
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
        z[F] += step * p_F
        at_optimum = block_var < 0 and not block_cap
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


def _equality_step(G, grad, F, capped, cap_active, ridge):
    """Newton step on the free variables F, keeping Σ_{capped} z fixed if the cap is
    active. Returns (step on F, cap multiplier)."""
    if F.size == 0:
        return np.zeros(0), 0.0
    H = G[np.ix_(F, F)] + ridge * np.eye(F.size)
    e = capped[F].astype(float)
    if cap_active and e.any():
        scale = float(np.abs(np.diag(G)).max()) or 1.0  # the cap's row at G's scale
        K = np.zeros((F.size + 1, F.size + 1))
        K[:-1, :-1] = H
        K[:-1, -1] = scale * e
        K[-1, :-1] = scale * e
        sol = _solve(K, np.append(-grad[F], 0.0))
        return sol[:-1], float(sol[-1]) * scale
    return _solve(H, -grad[F]), 0.0


def _solve(A, rhs):
    try:
        return np.linalg.solve(A, rhs)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(A, rhs, rcond=None)[0]
