"""The concave-convex procedure (CCCP; Yuille & Rangarajan 2003) as used for latent
structural SVMs (behl2014 Alg. 1): alternate imputing the latent variables at the
current parameters and solving the convex problem they define.

The loop knows nothing about bags, rankings or QP solvers: the caller supplies two
functions. ``impute(w)`` returns the latent state that minimises the objective at w
(step 3 of Alg. 1); ``solve(state, w)`` solves the convex problem with the latent
variables fixed to ``state`` (step 4), warm-started at w, and returns the new parameters
with the convex objective's value there. Since the convex problem at ``state_t`` upper
bounds the true objective and touches it at ``w_t``, the recorded objectives are
non-increasing when the convex solves are exact, or when each starts at ``w_t`` and
never returns a point worse than its start (the latent estimators' solves do both).
"""
import logging
import sys
import warnings
from dataclasses import dataclass, field

import numpy as np

from .. import exceptions
from .._validation import check_verbose


@dataclass
class CCCPResult:
    """Outcome of :func:`cccp`.

    Attributes
    ----------
    w : ndarray
        Parameters with the lowest objective seen.
    state : object
        The latent state ``w`` was solved with.
    objective : float
        Its convex objective value (an upper bound on the true objective at ``w``).
    n_iter : int
        Number of convex solves.
    converged : bool
        False when the loop stopped at ``max_iter``.
    history : list of float
        Convex objective after each solve.
    interrupted : bool
        True when Ctrl-C ended the loop (``w`` is then the best completed solve's).
    """

    w: np.ndarray
    state: object
    objective: float
    n_iter: int
    converged: bool
    history: list = field(default_factory=list)
    interrupted: bool = False


class RoundInterrupted(KeyboardInterrupt):
    """Ctrl-C during a CCCP round's convex solve that had reached a point: ``w`` and its
    convex ``objective`` (an upper bound on the true one), and the solve's ``result``,
    for :func:`cccp` to keep when no round has completed (``kept`` says what w is)."""

    def __init__(self, w, objective, result, kept="the point its convex solve had reached"):
        super().__init__()
        self.w, self.objective, self.result, self.kept = w, float(objective), result, kept


def same_state(a, b):
    """True when two latent states are equal (arrays, tuples/lists of them, scalars)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
                and a.shape == b.shape and bool(np.array_equal(a, b)))
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(same_state(x, y) for x, y in zip(a, b))
    return a == b


def cccp(impute, solve, w0=None, state0=None, tol=1e-3, max_iter=50, verbose=0, out=None,
         monitor=None, keep_first_round=True):
    """Run the CCCP outer loop.

    Parameters
    ----------
    impute : callable ``impute(w) -> state``
        Latent variables minimising the objective at w.
    solve : callable ``solve(state, w) -> (w_new, objective)``
        Solve the convex problem with the latent variables fixed; ``w`` (None at the
        first call unless ``w0`` is given) is a warm start.
    w0 : ndarray, optional
        Initial parameters; used to impute the first state unless ``state0`` is given.
    state0 : object, optional
        Initial latent state (e.g. a random imputation); takes precedence over ``w0``.
    tol : float
        Stop when a solve decreases the objective by less than ``tol``.
    max_iter : int
        Maximum number of convex solves; reaching it warns with
        :class:`~svmrank.exceptions.ConvergenceWarning`.
    verbose : int
        1 prints one line per outer iteration to ``out`` (default stdout), or through
        ``monitor.message`` when a monitor is given.
    monitor : svmrank.progress.Monitor, optional
        Told when each round starts (``start_round``), so that the records of the
        convex solves carry their round. With ``monitor.catch_interrupt``, Ctrl-C ends
        the loop at the best completed solve (``interrupted``, a UserWarning), or in the
        first round at the point its solve had reached (:class:`RoundInterrupted`; with
        ``keep_first_round=False`` it is raised, for a caller that has a better point);
        the convex solves should then let KeyboardInterrupt through.

    Returns
    -------
    CCCPResult

    The loop also stops when imputation returns the state just solved with (the next
    convex problem would be the same one). If a solve ends above the previous objective
    (possible when a solve is cold-started and only ε-accurate, or its inference is
    approximate, as latent SSVM's), the previous solution is kept and the loop stops.
    """
    if state0 is None and w0 is None:
        raise ValueError("cccp: give an initial state (state0) or initial parameters (w0)")
    if max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer, got {max_iter!r}")
    verbose = check_verbose(verbose)
    out = sys.stdout if out is None else out
    state = state0 if state0 is not None else impute(w0)
    box = {"best": None}
    try:
        return _loop(impute, solve, state, w0, tol, max_iter, verbose, out, monitor, box)
    except KeyboardInterrupt as exc:
        best = box["best"]
        if monitor is None or not monitor.catch_interrupt or (
                best is None and not (keep_first_round and isinstance(exc, RoundInterrupted))):
            raise
        if best is None:  # (round 1: its solve's point, at the starting state)
            best = CCCPResult(exc.w, state, exc.objective, 1, False, [exc.objective])
            where, kept = 1, exc.kept
        else:
            where, kept = len(best.history) + 1, "the best completed round's parameters"
        best.converged, best.interrupted = False, True
        warnings.warn(f"CCCP interrupted in round {where}: keeping {kept} (objective "
                      f"{best.objective:.6g}; not converged)", UserWarning, stacklevel=2)
        return best


def _loop(impute, solve, state, w, tol, max_iter, verbose, out, monitor, box):
    best = None
    history = []
    for it in range(1, max_iter + 1):
        if monitor is not None:
            monitor.start_round(it)
        w, objective = solve(state, w)
        objective = float(objective)
        history.append(objective)
        line = f"CCCP iteration {it}: objective {objective:.8g}"
        if monitor is not None and verbose:
            monitor.message(line)  # (ends the monitor's live line first; logs it)
        else:
            logging.getLogger("svmrank").debug(line)
            if verbose:
                print(line, file=out)
        if best is not None and objective > best.objective:
            # ε-accurate solve went uphill: keep the previous solution and stop
            best.n_iter, best.converged, best.history = it, True, history
            return best
        decrease = np.inf if best is None else best.objective - objective
        best = box["best"] = CCCPResult(w, state, objective, it, False, history)
        if decrease < tol:
            best.converged = True
            return best
        new_state = impute(w)
        if same_state(new_state, state):
            best.converged = True
            return best
        state = new_state
    warnings.warn(f"CCCP stopped at max_iter={max_iter} before the objective decrease fell "
                  f"below tol={tol}", exceptions.ConvergenceWarning, stacklevel=3)
    return best
