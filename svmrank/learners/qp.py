"""The small dense QP of the cutting-plane learner, solved exactly by a primal
active-set method (Nocedal & Wright, Alg. 16.3) with warm starts (kernel
``svmrank._qp_fast``; its NumPy reference is ``tests/qp_reference.py``).

Dual of the working-set problem
    min_w ½‖w‖² + C ξ  s.t.  w·v_c ≥ b_c − ξ (planes),  w·v_k ≥ b_k (hard rows)
is
    max_z  b·z − ½ zᵀ G z   s.t.  z ≥ 0,  Σ_{c plane} z_c ≤ C,       G = V Vᵀ,
with w = Σ z v. Hard rows (APPX's easy samples) are variables without the cap.
"""
import numpy as np

from .. import _qp_fast
from .._validation import check_positive, check_vector
from ..exceptions import QPError  # noqa: F401  (also svmrank.QPError)


def solve_dual_qp(G, b, capped, C, z0=None, tol=1e-12, max_iter=None):
    """Maximise ``b·z − ½ zᵀGz`` over ``z ≥ 0``, ``Σ_{capped} z ≤ C``.

    Parameters
    ----------
    G : ndarray, shape (n, n)
        Symmetric positive semi-definite Gram matrix. One whose entries are all
        subnormal (below 2.2e-308) is read as 0, which moves the objective by less than
        C² n times that.
    b : ndarray, shape (n,)
    capped : ndarray of bool, shape (n,)
        Variables under the common cap (the cutting planes).
    C : float
        The cap.
    z0 : ndarray, shape (n,), optional
        Warm start (made feasible if it is not).
    tol : float
        Relative tolerance on stationarity and on the KKT multipliers.
    max_iter : int, optional
        Active-set iterations (default 20 n + 100).

    Returns
    -------
    z : ndarray, shape (n,)
    cap_multiplier : float
        The multiplier of the cap (the primal slack ξ when the cap is active).
    """
    b = check_vector(b, "b")
    n = len(b)
    C = check_positive(C, "C")
    tol = check_positive(tol, "tol")
    G = np.ascontiguousarray(G, dtype=np.float64)
    if G.shape != (n, n) or not np.isfinite(G).all():
        raise ValueError(f"G: expected a finite ({n}, {n}) matrix, got shape {G.shape}")
    capped = check_vector(capped, "capped", n=n, dtype=bool)
    z0 = None if z0 is None else check_vector(z0, "z0", n=n)
    if max_iter is not None and int(max_iter) < 1:
        raise ValueError(f"max_iter: expected a positive integer, got {max_iter!r}")
    return solve_dual_qp_unchecked(G, b, capped, C, z0, tol, max_iter)


def solve_dual_qp_unchecked(G, b, capped, C, z0=None, tol=1e-12, max_iter=None):
    """:func:`solve_dual_qp` trusting its input: the trusted inner entry that the
    cutting-plane learner calls every iteration.

    The caller guarantees what :func:`solve_dual_qp` would check: ``G`` a finite
    float64 (n, n) array, ``b`` and ``z0`` finite float64 vectors of length n,
    ``capped`` a bool vector of length n, ``C`` and ``tol`` finite and positive,
    ``max_iter`` None or a positive integer. Invalid input is not detected. Same
    parameters and results as :func:`solve_dual_qp`.
    """
    n = len(b)
    G = np.ascontiguousarray(G, dtype=np.float64)
    if 0 < np.abs(G).max(initial=0.0) < np.finfo(np.float64).tiny:
        # every plane near 1e-155 or shorter (the kernel's 1/sqrt(G_ii) would overflow):
        # the quadratic term is below C² n 2.2e-308, and the QP is the linear program
        G = np.zeros_like(G)
    if n == 0:
        return np.zeros(0), 0.0
    z = np.zeros(n) if z0 is None else np.maximum(z0, 0.0)
    total = z[capped].sum()
    if total > C:
        z[capped] *= C / total
    max_iter = 20 * n + 100 if max_iter is None else int(max_iter)
    status, cap_multiplier = _qp_fast.solve_dual_qp(
        G, b, capped.view(np.uint8), C, z, tol, max_iter)
    if status == _qp_fast.QP_MAX_ITER:
        raise QPError(f"active-set QP did not converge in {max_iter} iterations")
    if status == _qp_fast.QP_UNBOUNDED and capped.all():  # (the cap bounds every variable)
        raise QPError(f"the QP overflowed (unbounded dual without hard constraints): C = {C:g} "
                      f"times the planes' squared norms (up to {np.diag(G).max():.3g}) is "
                      "too large; lower C or scale the features down")
    if status == _qp_fast.QP_UNBOUNDED:
        raise QPError("the constraints cannot all be satisfied (unbounded dual): "
                      "check the hard constraints for infeasibility")
    return z, cap_multiplier
