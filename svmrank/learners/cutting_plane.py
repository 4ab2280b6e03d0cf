"""1-slack cutting-plane training of structural SVMs with margin rescaling
(Joachims, Finley & Yu 2009, Alg. 4; SVM-struct's ``-w 3``/``-w 4``).

    min_w ½‖w‖² + C ξ   s.t.  w·g ≥ Δ − ξ  for every (Δ, g) a problem can return,

where g = Ψ(truth) − Ψ(output) and Δ the loss, both averaged over examples. The learner
knows nothing about rankings: it asks ``problem.most_violated(w)`` for the pair (Δ, g)
of largest violation Δ − w·g, adds it to a working set, and re-solves the small dual QP.
"""
import sys
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..exceptions import ConvergenceWarning
from .qp import solve_dual_qp


@dataclass
class CuttingPlaneResult:
    """What a cutting-plane run reports.

    Attributes
    ----------
    w : ndarray
        The weight vector.
    xi : float
        The slack ξ = max(0, Δ − w·g) of the most violated constraint at ``w``.
    n_iter : int
        Cutting-plane iterations (calls of ``most_violated``).
    n_constraints : int
        Planes in the working set at the end.
    primal_objective, dual_objective, duality_gap : float
        ½‖w‖² + C ξ, the working-set dual, and their difference (≥ 0; at most about
        C ε at convergence).
    converged : bool
        False when ``max_iter`` stopped the run (a ConvergenceWarning is issued).
    history : list of dict
        One entry per iteration: iteration, constraints, violation, objective, time.
    """

    w: np.ndarray
    xi: float
    n_iter: int
    n_constraints: int
    primal_objective: float
    dual_objective: float
    duality_gap: float
    converged: bool
    history: list = field(default_factory=list)


class _WorkingSet:
    """Cutting planes and active hard rows with their cached Gram matrix."""

    def __init__(self, n_features):
        self.vectors = np.zeros((0, n_features))
        self.b = np.zeros(0)
        self.capped = np.zeros(0, dtype=bool)
        self.ids = np.zeros(0, dtype=np.int64)   # hard-row index, -1 for planes
        self.idle = np.zeros(0, dtype=np.int64)  # iterations a plane has had z = 0
        self.G = np.zeros((0, 0))
        self.z = np.zeros(0)

    def add(self, vectors, b, capped, ids):
        vectors = np.atleast_2d(vectors)
        b = np.atleast_1d(np.asarray(b, dtype=np.float64))
        cross = self.vectors @ vectors.T
        self.G = np.block([[self.G, cross], [cross.T, vectors @ vectors.T]])
        self.vectors = np.vstack([self.vectors, vectors])
        k = len(b)
        self.b = np.append(self.b, b)
        self.capped = np.append(self.capped, np.full(k, capped))
        self.ids = np.append(self.ids, ids)
        self.idle = np.append(self.idle, np.zeros(k, dtype=np.int64))
        self.z = np.append(self.z, np.zeros(k))

    def drop(self, keep):
        self.vectors, self.b, self.capped = self.vectors[keep], self.b[keep], self.capped[keep]
        self.ids, self.idle, self.z = self.ids[keep], self.idle[keep], self.z[keep]
        self.G = self.G[np.ix_(keep, keep)]

    def solve(self, C):
        self.z, _ = solve_dual_qp(self.G, self.b, self.capped, C, z0=self.z)
        w = self.z @ self.vectors
        dual = float(self.b @ self.z - 0.5 * (w @ w))
        return w, dual

    @property
    def n_planes(self):
        return int(self.capped.sum())


def _hard_rows(hard_constraints, nonpositive, n_features):
    """Stack the hard constraints A w ≥ b and the sign bounds −w_k ≥ 0 as one CSR A."""
    blocks, rhs = [], []
    if hard_constraints is not None:
        A, b = hard_constraints
        A = sp.csr_matrix(A, dtype=np.float64)
        b = np.asarray(b, dtype=np.float64).ravel()
        if A.shape[1] != n_features or A.shape[0] != b.shape[0]:
            raise ValueError(f"hard_constraints: A must be (m, {n_features}) and b (m,); got "
                             f"{A.shape} and {b.shape}")
        if not (np.isfinite(A.data).all() and np.isfinite(b).all()):
            raise ValueError("hard_constraints: contain NaN or infinite values")
        blocks.append(A)
        rhs.append(b)
    if nonpositive is not None:
        idx = np.unique(np.asarray(nonpositive, dtype=np.int64).ravel())
        if idx.size and (idx.min() < 0 or idx.max() >= n_features):
            raise ValueError(f"nonpositive: indices must lie in [0, {n_features})")
        blocks.append(sp.csr_matrix((-np.ones(idx.size), (np.arange(idx.size), idx)),
                                    shape=(idx.size, n_features)))
        rhs.append(np.zeros(idx.size))
    if not blocks:
        return None, None
    return sp.vstack(blocks, format="csr"), np.concatenate(rhs)


def cutting_plane(problem, C, epsilon=1e-3, max_iter=10000, w0=None, nonpositive=None,
                  hard_constraints=None, verbose=0, out=None, max_idle=50):
    """Train a structural SVM by the 1-slack cutting-plane algorithm.

    Parameters
    ----------
    problem : object
        Has ``n_features`` and ``most_violated(w) -> (loss, g)`` with the violation
        ``loss − w·g``.
    C : float
        Regularisation constant (> 0) of ½‖w‖² + C ξ.
    epsilon : float
        Stop when the most violated constraint exceeds the working-set slack by at most
        ``epsilon`` (SVM-struct's ``-e``).
    max_iter : int
        Cap on cutting-plane iterations (ConvergenceWarning when reached).
    w0 : ndarray, optional
        Where the first most-violated constraint is computed (default 0).
    nonpositive : array of int, optional
        Coordinates of w constrained to be ≤ 0.
    hard_constraints : tuple (A, b), optional
        Constraints A w ≥ b without slack (A sparse or dense, shape (m, n_features)).
        They enter the QP lazily, when violated.
    verbose : int
        1: one line per iteration (iteration, constraints, violation, objective, time).
    out : file, optional
        Where verbose lines go (default sys.stdout).
    max_idle : int
        A plane whose dual variable stays 0 this many iterations is dropped.

    Returns
    -------
    CuttingPlaneResult
    """
    out = sys.stdout if out is None else out
    d = int(problem.n_features)
    A_hard, b_hard = _hard_rows(hard_constraints, nonpositive, d)
    ws = _WorkingSet(d)
    w = np.zeros(d) if w0 is None else np.array(w0, dtype=np.float64)
    xi_ws, dual, history = 0.0, 0.0, []
    start = time.perf_counter()
    converged = False
    if A_hard is not None:
        w, dual = _activate_hard_rows(ws, A_hard, b_hard, C, w if w0 is not None else None)
    for it in range(1, max_iter + 1):
        loss, g = problem.most_violated(w)
        g = np.asarray(g, dtype=np.float64)
        violation = float(loss - w @ g)
        xi = max(0.0, violation)
        primal = 0.5 * float(w @ w) + C * xi
        history.append({"iteration": it, "constraints": ws.n_planes, "violation": violation,
                        "objective": primal, "time": time.perf_counter() - start})
        if verbose:
            print(f"iter {it:4d}  constraints {ws.n_planes:4d}  violation {violation:.6g}  "
                  f"objective {primal:.8g}  time {history[-1]['time']:.3f}s", file=out, flush=True)
        if violation <= xi_ws + epsilon:
            converged = True
            break
        if it == max_iter:
            break
        ws.add(g, loss, True, -1)
        w, dual = ws.solve(C)
        if A_hard is not None:
            w, dual = _activate_hard_rows(ws, A_hard, b_hard, C, w)
        planes = ws.capped
        ws.idle[planes & (ws.z > 0)] = 0
        ws.idle[planes & (ws.z == 0)] += 1
        if (ws.idle > max_idle).any():
            ws.drop(ws.idle <= max_idle)
            planes = ws.capped
        xi_ws = max(0.0, float((ws.b[planes] - ws.vectors[planes] @ w).max())) if planes.any() else 0.0
    if not converged:
        warnings.warn(f"cutting-plane training stopped at max_iter={max_iter} before reaching "
                      f"epsilon={epsilon} (last violation {violation:.3g} > slack "
                      f"{xi_ws:.3g} + epsilon)", ConvergenceWarning, stacklevel=2)
    return CuttingPlaneResult(w=w, xi=xi, n_iter=len(history), n_constraints=ws.n_planes,
                              primal_objective=primal, dual_objective=dual,
                              duality_gap=primal - dual, converged=converged, history=history)


def _activate_hard_rows(ws, A, b, C, w, tol=1e-9, batch=200):
    """Add the hard rows violated at w (the most violated ``batch`` at a time) and
    re-solve until none is violated by more than ``tol`` (relative)."""
    dual = float(ws.b @ ws.z - 0.5 * (ws.z @ ws.vectors) @ (ws.z @ ws.vectors)) if ws.z.size else 0.0
    if w is None:
        w = np.zeros(A.shape[1])
    active = set(ws.ids[ws.ids >= 0].tolist())
    while True:
        slack = A @ w - b
        violated = np.flatnonzero(slack < -tol * np.maximum(1.0, np.abs(b)))
        violated = np.array([k for k in violated if k not in active], dtype=np.int64)
        if violated.size == 0:
            return w, dual
        violated = violated[np.argsort(slack[violated])[:batch]]
        ws.add(A[violated].toarray(), b[violated], False, violated)
        active.update(violated.tolist())
        w, dual = ws.solve(C)
