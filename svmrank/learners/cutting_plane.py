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

from .. import exceptions
from .._validation import check_positive, check_verbose
from .cccp import RoundInterrupted
from .qp import solve_dual_qp_unchecked

_BLAS = []  # the process's ThreadpoolController, made on the first fit


def one_blas_thread():
    """Context limiting BLAS to one thread (threadpoolctl, scikit-learn's dependency).

    The learner's BLAS calls are sample-length dot products and small QPs. OpenBLAS
    splits a ddot longer than 10,000 over its threads; on a loaded machine, after the
    product kernels' OpenMP threads, each such call waited for a time slice (20 ms a dot
    on w8a: SVM-perf's losses fitted 2.2-2.5x slower, benchmarks/README.md, interop).
    Below that length OpenBLAS uses one thread anyway, so small fits are unchanged.
    """
    if not _BLAS:
        from threadpoolctl import ThreadpoolController
        _BLAS.append(ThreadpoolController())
    return _BLAS[0].limit(limits=1, user_api="blas")


# C times a cutting plane's squared norm above which float64 training cannot resolve the
# optimum (measured on heart_scale: AP and binary SVMs converge up to about 1e19, stall
# from 1e21, and overflow beyond 1e154). The problem with features scaled by s and C is
# that with features 1 and C s^2, so this bounds C and the feature scale together.
MAX_C_SQNORM = 1e18


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
        Cutting-plane iterations (QP solves). With the line search each makes up to
        three inference calls (two ``most_violated`` calls in weight space).
    n_constraints : int
        Planes in the working set at the end.
    primal_objective, dual_objective, duality_gap : float
        ½‖w‖² + C ξ, the working-set dual, and their difference (≥ 0; at most about
        C ε at convergence).
    converged : bool
        False when ``max_iter`` stopped the run (a ConvergenceWarning is issued), when
        the monitor asked to stop (early stopping) or when the run was interrupted.
    history : list of dict
        One entry per iteration: iteration, constraints, violation, objective, dual,
        gap, time (and what a monitor adds).
    interrupted : bool
        True when Ctrl-C ended the run; ``w`` is then the best point found.
    planes : WorkingSetPlanes or None
        With ``keep_planes``: the cutting planes in the working set at the end and
        their dual variables, which ``cutting_plane(..., warm_start=result)`` starts from.
    scores : ndarray or None
        The problem's scores at ``w`` (``problem.scores(w)``) when it has the score
        interface, else None.
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
    interrupted: bool = False
    planes: "WorkingSetPlanes" = None
    scores: np.ndarray = None


@dataclass
class WorkingSetPlanes:
    """Cutting planes w·g_k ≥ Δ_k − ξ of a working set, with their dual variables.

    A plane holds for every C (it does not depend on C), so the planes of a run at one C
    are a valid working set at another; the dual variables (rescaled under a smaller
    cap) are a feasible start for its QP.

    Attributes
    ----------
    vectors : CSR matrix of shape (n_planes, n_features)
        The g_k.
    losses : ndarray of shape (n_planes,)
        The Δ_k.
    z : ndarray of shape (n_planes,)
        Their dual variables at the end of the run.
    """

    vectors: sp.csr_matrix
    losses: np.ndarray
    z: np.ndarray


class _WorkingSet:
    """Cutting planes and active hard rows with their cached Gram matrix.

    Sign bounds w_B ≤ 0 are not rows: their multipliers are eliminated in closed form,
    w(z) = Vᵀz with the coordinates of B clipped to min(0, ·), so the dual becomes
    D(z) = b·z − ½‖w(z)‖², concave and piecewise quadratic with gradient b − V w(z).
    On the set S of clipped coordinates it is the QP with Gram G − V_S V_Sᵀ; ``solve``
    alternates between that QP and S until S stays the same, which is then a KKT point
    of D. Should S cycle instead, one QP with the bounds' multipliers as variables
    maximises D exactly."""

    def __init__(self, n_features, nonpositive=None):
        self.n_features = n_features
        self.bounded = np.zeros(0, dtype=np.int64) if nonpositive is None else nonpositive
        self.clipped = np.zeros(0, dtype=np.int64)  # S, kept as the next warm start
        # the planes are kept on the columns where some plane is non-zero (``cols``):
        # hashed features make n_features large and the planes sparse
        self.cols = np.zeros(0, dtype=np.int64)
        self.used = np.zeros(n_features, dtype=bool)  # (cols as a mask)
        self.vectors = np.zeros((0, 0))
        self.b = np.zeros(0)
        self.capped = np.zeros(0, dtype=bool)
        self.ids = np.zeros(0, dtype=np.int64)   # hard-row index, -1 for planes
        self.idle = np.zeros(0, dtype=np.int64)  # iterations a plane has had z = 0
        self.G = np.zeros((0, 0))
        self.z = np.zeros(0)

    def add(self, vectors, b, capped, ids):
        """Add rows (dense, or a CSR matrix: hard rows stay sparse until cut to ``cols``)."""
        sparse = sp.issparse(vectors)
        vectors = vectors if sparse else np.atleast_2d(vectors)
        if self.cols.size < self.n_features:  # (once every column is in, nothing to do)
            present = (np.unique(vectors.indices[vectors.data != 0]) if sparse
                       else np.flatnonzero(vectors.any(axis=0)))
            new_cols = present[~self.used[present]]
            if new_cols.size:
                self.used[new_cols] = True
                cols = np.flatnonzero(self.used)
                grown = np.zeros((self.vectors.shape[0], cols.size))
                grown[:, np.searchsorted(cols, self.cols)] = self.vectors
                self.cols, self.vectors = cols, grown
            vectors = vectors[:, self.cols]
        if sparse:
            vectors = vectors.toarray()
        b = np.atleast_1d(np.asarray(b, dtype=np.float64))
        with np.errstate(over="ignore", invalid="ignore"):  # (checked just below)
            cross = self.vectors @ vectors.T
            gram = vectors @ vectors.T
        if not (np.isfinite(gram).all() and np.isfinite(cross).all()):
            raise ValueError("the constraints' feature vectors overflow (their inner products "
                             "are not finite): scale the features down")
        k0, k = self.G.shape[0], gram.shape[0]
        G = np.empty((k0 + k, k0 + k))  # (np.block's bookkeeping cost more than the copy)
        G[:k0, :k0], G[:k0, k0:], G[k0:, :k0], G[k0:, k0:] = self.G, cross, cross.T, gram
        self.G = G
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

    def w_and_dual(self):
        """w(z) and D(z) at the current z (D(z) is a lower bound for any z ≥ 0 under the cap)."""
        w_cols = self.z @ self.vectors
        if self.bounded.size:
            bounded = self._local(self._bounded_cols())
            w_cols[bounded] = np.minimum(w_cols[bounded], 0.0)
        if self.cols.size == self.n_features:
            w = w_cols
        else:
            w = np.zeros(self.n_features)
            w[self.cols] = w_cols
        return w, float(self.b @ self.z - 0.5 * (w_cols @ w_cols))

    def _local(self, coordinates):
        """Positions in ``cols`` of coordinates that are among them."""
        return np.searchsorted(self.cols, coordinates)

    def _bounded_cols(self):
        """The bounded coordinates on which some plane is non-zero (w is 0 elsewhere)."""
        return self.bounded[np.isin(self.bounded, self.cols)]

    def solve(self, C, max_rounds=20):
        seen = set()
        for _ in range(max_rounds):
            G = self.G
            if self.clipped.size:
                V_S = self.vectors[:, self._local(self.clipped)]
                G = G - V_S @ V_S.T
            self.z, _ = solve_dual_qp_unchecked(G, self.b, self.capped, C, z0=self.z)
            if not self.bounded.size:
                break
            bounded = self._bounded_cols()
            v = self.z @ self.vectors[:, self._local(bounded)]
            clipped = bounded[v > 0]
            if np.array_equal(clipped, self.clipped):  # (a KKT point of D)
                break
            key = clipped.tobytes()
            self.clipped = clipped
            if key in seen:  # (a cycle of S: its QPs' z need not maximise D)
                self._solve_with_multipliers(C)
                break
            seen.add(key)
        else:
            if self.bounded.size:
                self._solve_with_multipliers(C)
        return self.w_and_dual()

    def _solve_with_multipliers(self, C):
        """Maximise D exactly: the sign bounds w_j ≤ 0 as rows −e_j of their own
        multipliers μ_j ≥ 0 (uncapped, b = 0), so that w = Vᵀz − μ on B; one QP of
        k + |B| variables, warm-started at μ = max(0, (Vᵀz)_B), the clipping's."""
        local = self._local(self._bounded_cols())
        V_B = self.vectors[:, local]
        k, m = len(self.b), local.size
        G = np.empty((k + m, k + m))
        G[:k, :k], G[:k, k:], G[k:, :k], G[k:, k:] = self.G, -V_B, -V_B.T, np.eye(m)
        z0 = np.concatenate([self.z, np.maximum(self.z @ V_B, 0.0)])
        z, _ = solve_dual_qp_unchecked(G, np.concatenate([self.b, np.zeros(m)]),
                                       np.concatenate([self.capped, np.zeros(m, bool)]), C,
                                       z0=z0)
        self.z = z[:k]
        self.clipped = self._bounded_cols()[self.z @ V_B > 0]

    @property
    def n_planes(self):
        return int(self.capped.sum())

    def planes(self):
        """The cutting planes (hard rows left out) as :class:`WorkingSetPlanes`."""
        keep = self.capped
        cut = sp.csr_matrix(self.vectors[keep])
        vectors = sp.csr_matrix((cut.data, self.cols[cut.indices], cut.indptr),
                                shape=(int(keep.sum()), self.n_features))
        return WorkingSetPlanes(vectors, self.b[keep].copy(), self.z[keep].copy())


def _check_hard_constraints(hard_constraints, n_features):
    """The hard constraints A w ≥ b as (CSR A, b), or (None, None)."""
    if hard_constraints is None:
        return None, None
    A, b = hard_constraints
    A = sp.csr_matrix(A, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64).ravel()
    if A.shape[1] != n_features or A.shape[0] != b.shape[0]:
        raise ValueError(f"hard_constraints: A must be (m, {n_features}) and b (m,); got "
                         f"{A.shape} and {b.shape}")
    if not (np.isfinite(A.data).all() and np.isfinite(b).all()):
        raise ValueError("hard_constraints: contain NaN or infinite values")
    return A, b


def _check_nonpositive(nonpositive, n_features):
    """Sorted unique coordinates of w bounded above by 0, or None."""
    if nonpositive is None:
        return None
    raw = np.asarray(nonpositive)
    if raw.size and raw.dtype.kind not in "iu":  # (a boolean mask would be read as 0/1)
        raise ValueError(f"nonpositive: expected integer coordinates, got dtype {raw.dtype}")
    idx = np.unique(raw.astype(np.int64).ravel())
    if idx.size and (idx.min() < 0 or idx.max() >= n_features):
        raise ValueError(f"nonpositive: indices must lie in [0, {n_features})")
    return idx


def cutting_plane(problem, C, epsilon=1e-3, max_iter=10000, w0=None, nonpositive=None,
                  hard_constraints=None, verbose=0, out=None, max_idle=50, line_search="auto",
                  monitor=None, warm_start=None, keep_planes=False):
    """Train a structural SVM by the 1-slack cutting-plane algorithm.

    Parameters
    ----------
    problem : object
        Has ``n_features`` and ``most_violated(w) -> (loss, g)`` with the violation
        ``loss − w·g``. A problem that is linear in scores s = Xw may also offer
        ``scores(w)``, ``violation_at_scores(s) -> (loss, d)`` and ``joint_feature(d)``
        (g = joint_feature(d), violation = loss − s·d); then the line search is used.
    C : float
        Regularisation constant (> 0) of ½‖w‖² + C ξ.
    epsilon : float
        Tolerance: stop when the most violated constraint exceeds the working-set slack
        by at most ``epsilon`` (SVM-struct's ``-e``), or, with the line search, when
        the primal objective is within ``C * epsilon`` of the dual (which SVM-struct's
        rule implies).
    max_iter : int
        Cap on cutting-plane iterations (ConvergenceWarning when reached).
    w0 : ndarray, optional
        Starting point (default 0).
    nonpositive : array of int, optional
        Coordinates of w constrained to be ≤ 0 (eliminated from the dual in closed
        form, so any number of them costs little).
    hard_constraints : tuple (A, b), optional
        Constraints A w ≥ b without slack (A sparse or dense, shape (m, n_features)).
        They enter the QP lazily, when violated.
    verbose : int
        1: one line per iteration (iteration, constraints, violation, objective, time).
    out : file, optional
        Where verbose lines go (default sys.stdout).
    max_idle : int
        A plane whose dual variable stays 0 this many iterations is dropped.
    line_search : {"auto", True, False}
        Franc & Sonnenburg's optimized cutting plane (OCAS): keep the best point so far,
        search the segment towards each QP solution, and cut near the new best point.
        It reaches the same tolerance in far fewer iterations. With the score interface
        a point on the segment costs one inference on s_b + t (s_c − s_b); without it,
        one ``most_violated`` call. With hard constraints the search starts from the
        first feasible QP solution. "auto" and True use it, False runs Joachims' Alg. 4.
    monitor : svmrank.progress.Monitor, optional
        Called with each iteration's history entry, the current point and the target
        gap C ε; a True return stops the run. With ``monitor.catch_interrupt``, Ctrl-C
        ends the run at the best point found (``interrupted``, a UserWarning); in a
        CCCP round (``monitor.round`` set) it raises :class:`~.cccp.RoundInterrupted`
        with that point instead.
    warm_start : CuttingPlaneResult, optional
        A run on the same problem (at any C): start from its w (unless ``w0`` is given)
        and its working set's planes and dual variables, e.g. along an increasing path of
        C. Without it the run is exactly the cold one.
    keep_planes : bool
        Return the final working set's planes in the result (``planes``, what
        ``warm_start`` reads); off by default, as they take k × n_features floats.

    Returns
    -------
    CuttingPlaneResult

    Raises
    ------
    ValueError
        When C times a cutting plane's squared norm exceeds ``MAX_C_SQNORM`` (1e18),
        or the duality gap is not finite: float64 cannot train such a problem.
    """
    d = int(problem.n_features)
    check_positive(C, "C")  # (the QP, called unchecked every iteration, trusts it)
    verbose = check_verbose(verbose)
    A_hard, b_hard = _check_hard_constraints(hard_constraints, d)
    nonpositive = _check_nonpositive(nonpositive, d)
    if line_search not in ("auto", True, False):
        raise ValueError(f"line_search must be 'auto', True or False; got {line_search!r}")
    has_scores = all(hasattr(problem, a) for a in ("scores", "violation_at_scores", "joint_feature"))
    if warm_start is not None and w0 is None:
        w0 = warm_start.w
    w = np.zeros(d) if w0 is None else np.array(w0, dtype=np.float64)
    if nonpositive is not None:
        w[nonpositive] = np.minimum(w[nonpositive], 0.0)  # a feasible start
    run = _Run(problem, C, A_hard, b_hard, verbose, sys.stdout if out is None else out,
               max_idle, nonpositive, monitor, C * epsilon)
    if warm_start is not None and warm_start.planes is not None:
        run.restore(warm_start.planes, d)
    interrupted = False
    try:
        with one_blas_thread():
            if line_search:
                # in weight space every point searched costs a full oracle call: search less
                converged = run.optimized(w, epsilon, max_iter, problem, n_secant=2) \
                    if has_scores else \
                    run.optimized(w, epsilon, max_iter, _WeightSpace(problem), n_secant=1)
            else:
                converged = run.plain(w, epsilon, max_iter)
    except KeyboardInterrupt:
        if monitor is None or not monitor.catch_interrupt or run.best is None:
            raise
        converged, interrupted = False, True
        run.primal, run.w, run.xi = run.best
        if monitor.round is None:  # (in a CCCP round, the round's loop says what it keeps)
            warnings.warn(f"training interrupted after {len(run.history)} iterations: keeping "
                          f"the best point found (objective {run.primal:.6g}, duality gap "
                          f"{run.primal - run.dual:.3g}; not converged)", UserWarning,
                          stacklevel=2)
    if not np.isfinite(run.primal - run.dual):
        raise ValueError(f"the duality gap is not finite (C = {C:g}): lower C or scale the "
                         "features down")
    if not (converged or interrupted or run.stop):
        warnings.warn(f"cutting-plane training stopped at max_iter={max_iter} before reaching "
                      f"epsilon={epsilon} (duality gap {run.primal - run.dual:.3g})",
                      exceptions.ConvergenceWarning, stacklevel=2)
    scores = problem.scores(run.w) if has_scores else None
    if not isinstance(scores, np.ndarray):  # (a distributed problem keeps them on its workers)
        scores = None
    result = CuttingPlaneResult(w=run.w, xi=run.xi, n_iter=len(run.history),
                                n_constraints=run.ws.n_planes, primal_objective=run.primal,
                                dual_objective=run.dual, duality_gap=run.primal - run.dual,
                                converged=converged, history=run.history,
                                interrupted=interrupted,
                                planes=run.ws.planes() if keep_planes else None,
                                scores=scores)
    if interrupted and monitor.round is not None:
        raise RoundInterrupted(run.w, run.primal, result)
    return result


class _Run:
    """State of one training run: working set, best point, report."""

    def __init__(self, problem, C, A_hard, b_hard, verbose, out, max_idle, nonpositive=None,
                 monitor=None, target=None):
        self.problem, self.C = problem, C
        self.monitor, self.target, self.stop = monitor, target, False
        self.best = None  # (objective, w, slack) of the best point logged
        self.A_hard, self.b_hard = A_hard, b_hard
        self.verbose, self.out, self.max_idle = verbose, out, max_idle
        self.ws = _WorkingSet(int(problem.n_features), nonpositive)
        self.history, self.start = [], time.perf_counter()
        self.w, self.xi, self.primal, self.dual = None, 0.0, np.inf, 0.0

    def restore(self, planes, n_features):
        """Start from another run's active planes (z > 0) and their dual variables
        (scaled under the cap C); D(z) is then already a lower bound on the optimum."""
        if planes.vectors.shape != (planes.losses.size, n_features):
            raise ValueError(f"warm_start: its planes have {planes.vectors.shape[1]} features; "
                             f"the problem has {n_features}")
        active = planes.z > 0  # (the inactive planes would only grow the QP)
        if not active.any():
            return
        self.ws.add(planes.vectors[active].tocsr(), planes.losses[active], True,
                    np.full(int(active.sum()), -1))
        z = planes.z[active]
        if z.sum() > self.C:
            z *= self.C / z.sum()
        self.ws.z = z
        self.dual = self.ws.w_and_dual()[1]

    def log(self, violation):
        if not (np.isfinite(self.primal) and np.isfinite(violation)):
            raise ValueError(
                "the training objective is not finite (the scores X w or the slack "
                "overflowed): scale the features down or lower C")
        self.history.append({"iteration": len(self.history) + 1, "constraints": self.ws.n_planes,
                             "violation": violation, "objective": self.primal,
                             "dual": self.dual, "gap": self.primal - self.dual,
                             "time": time.perf_counter() - self.start})
        if self.best is None or self.primal < self.best[0]:
            self.best = (self.primal, self.w, self.xi)
        if self.monitor is not None:
            self.stop = bool(self.monitor(self.history[-1], self.w, self.target))
        if self.verbose:
            h = self.history[-1]
            print(f"iter {h['iteration']:4d}  constraints {h['constraints']:4d}  violation "
                  f"{violation:.6g}  objective {self.primal:.8g}  time {h['time']:.3f}s",
                  file=self.out, flush=True)

    def add_and_solve(self, losses, gs):
        """Add planes (Δ_k, g_k), re-solve the QP once (activating violated hard rows),
        drop idle planes; returns the QP solution."""
        ws = self.ws
        planes = np.vstack(gs)
        with np.errstate(over="ignore"):
            reach = self.C * float(np.max(np.einsum("ij,ij->i", planes, planes)))
        if MAX_C_SQNORM < reach < np.inf:  # (an overflowing plane: ws.add says so)
            raise ValueError(
                f"C = {self.C:g} times a cutting plane's squared norm is {reach:.3g}, beyond "
                f"the {MAX_C_SQNORM:g} that float64 training resolves: lower C (below "
                f"{self.C * MAX_C_SQNORM / reach:.3g} for this plane) or scale the features down")
        ws.add(planes, losses, True, np.full(len(losses), -1))
        w, self.dual = ws.solve(self.C)
        if self.A_hard is not None:
            w, self.dual = _activate_hard_rows(ws, self.A_hard, self.b_hard, self.C, w)
        planes = ws.capped
        ws.idle[planes & (ws.z > 0)] = 0
        ws.idle[planes & (ws.z == 0)] += 1
        if (ws.idle > self.max_idle).any():
            ws.drop(ws.idle <= self.max_idle)
        return w

    def plain(self, w, epsilon, max_iter):
        """Joachims, Finley & Yu (2009), Alg. 4, stopped by the duality gap
        P(w) − D(z) ≤ Cε: at an exact QP solution that is their rule ξ(w) ≤ ξ_ws + ε,
        and it stays a certificate where the QP's rounding leaves D(z) below the
        working set's primal (and from a warm start, before any QP solve)."""
        if self.A_hard is not None:
            w, self.dual = _activate_hard_rows(self.ws, self.A_hard, self.b_hard, self.C, w)
        for it in range(1, max_iter + 1):
            loss, g = self.problem.most_violated(w)
            violation = float(loss - w @ np.asarray(g, dtype=np.float64))
            self.w, self.xi = w, max(0.0, violation)
            self.primal = 0.5 * float(w @ w) + self.C * self.xi
            self.log(violation)
            if self.primal - self.dual <= self.C * epsilon:
                return True
            if it == max_iter or self.stop:
                return False
            w = self.add_and_solve([loss], [np.asarray(g, dtype=np.float64).ravel()])
        return False

    def optimized(self, w, epsilon, max_iter, P, n_secant=2):
        """OCAS (Franc & Sonnenburg 2009, Alg. 1) over the score interface of P.

        Each iteration solves the QP (giving w_c), searches the segment from the best
        point w_b towards w_c by regula falsi (Anderson & Björck's variant) on the
        derivative of the piecewise-quadratic objective, moves w_b to the best point
        seen, and adds the cutting planes found at w_c and at the new w_b (both are
        valid; no extra inference call is needed)."""
        C = self.C
        if self.A_hard is not None:  # start feasible, so that every segment stays feasible
            w, self.dual = _activate_hard_rows(self.ws, self.A_hard, self.b_hard, C, w)
        s_b = P.scores(w)
        loss_b, d_b = P.violation_at_scores(s_b)
        risk = lambda loss_t, d_t, s_t: max(0.0, loss_t - float(s_t @ d_t))
        self.w, self.xi = w, risk(loss_b, d_b, s_b)
        self.primal = 0.5 * float(w @ w) + C * self.xi
        self.log(self.xi)
        new_planes = [(loss_b, d_b)]
        for it in range(2, max_iter + 1):
            w_c = self.add_and_solve([loss_t for loss_t, _ in new_planes],
                                     [P.joint_feature(d_t) for _, d_t in new_planes])
            # no gap test before searching towards w_c: at small C the start w = 0 can
            # already be ε-optimal while w_c is better and ranks (w = 0 ties everything)
            s_c = P.scores(w_c)
            w_b, dw, ds = self.w, w_c - self.w, s_c - s_b
            a, b0, wb2 = float(dw @ dw), float(w_b @ dw), float(w_b @ w_b)
            objective = lambda t, r: 0.5 * (wb2 + 2 * t * b0 + t * t * a) + C * r
            slope = lambda t, d_t: t * a + b0 - C * float(d_t @ ds)
            best = (self.primal, 0.0, self.xi, loss_b, d_b)
            lo, g_lo = 0.0, slope(0.0, d_b)
            loss_c, d_c = P.violation_at_scores(s_c)
            violation = risk(loss_c, d_c, s_c)
            new_planes = [(loss_c, d_c)]
            hi, g_hi = 1.0, slope(1.0, d_c)
            if objective(1.0, violation) < best[0]:
                best = (objective(1.0, violation), 1.0, violation, loss_c, d_c)
            for _ in range(n_secant if g_lo < 0 < g_hi else 0):
                t = lo - g_lo * (hi - lo) / (g_hi - g_lo)
                s_t = s_b + t * ds
                loss_t, d_t = P.violation_at_scores(s_t)
                r_t = risk(loss_t, d_t, s_t)
                if objective(t, r_t) < best[0]:
                    best = (objective(t, r_t), t, r_t, loss_t, d_t)
                g_t = slope(t, d_t)
                if g_t == 0:
                    break  # t minimises the segment
                # Anderson & Björck (1973): scale down the slope at the end that stays,
                # or regula falsi creeps towards the root from one side (in the tail the
                # slope at w_c is steep and plain steps reach half the decrease or less).
                # Scaled from the first step on (the segment's ends count as earlier
                # iterates): with two steps the textbook rule would never act.
                if g_t > 0:
                    m = 1.0 - g_t / g_hi
                    g_lo *= m if m > 0 else 0.5
                    hi, g_hi = t, g_t
                else:
                    m = 1.0 - g_t / g_lo
                    g_hi *= m if m > 0 else 0.5
                    lo, g_lo = t, g_t
            self.primal, t_best, self.xi, loss_b, d_b = best
            self.w, s_b = w_b + t_best * dw, s_b + t_best * ds
            if 0.0 < t_best < 1.0:
                new_planes.append((loss_b, d_b))
            self.log(violation)
            if self.primal - self.dual <= C * epsilon:
                return True
            if it == max_iter or self.stop:
                return False
        return False


class _WeightSpace:
    """The score interface for a problem that only has ``most_violated``: the scores
    are w itself and d is g, so s·d = w·g and the line search runs in weight space."""

    def __init__(self, problem):
        self.problem = problem

    def scores(self, w):
        return np.array(w, dtype=np.float64)

    def violation_at_scores(self, w):
        loss, g = self.problem.most_violated(w)
        return float(loss), np.asarray(g, dtype=np.float64).ravel()

    def joint_feature(self, g):
        return g


def _activate_hard_rows(ws, A, b, C, w, tol=1e-9, batch=200):
    """Add the hard rows violated at w (the most violated ``batch`` at a time) and
    re-solve until none is violated by more than ``tol`` (relative)."""
    dual = ws.w_and_dual()[1] if ws.z.size else 0.0
    active = set(ws.ids[ws.ids >= 0].tolist())
    while True:
        slack = A @ w - b
        violated = np.flatnonzero(slack < -tol * np.maximum(1.0, np.abs(b)))
        violated = np.array([k for k in violated if k not in active], dtype=np.int64)
        if violated.size == 0:
            return w, dual
        violated = violated[np.argsort(slack[violated])[:batch]]
        ws.add(A[violated], b[violated], False, violated)
        active.update(violated.tolist())
        w, dual = ws.solve(C)
