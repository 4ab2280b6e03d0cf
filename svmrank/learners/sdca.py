"""Prox-SDCA for the top-k multiclass SVM (Lapin, Hein & Schiele 2015, Alg. 1).

The problem, in the C form used throughout svmrank (the paper's lambda = 1 / (C n)),
is ::

    min_W  P(W) = 1/2 ||W||_F^2 + C sum_i phi(W^T x_i - <w_{y_i}, x_i> 1)

with phi the top-k hinge loss alpha (eq. 3) or beta (eq. 5); k = 1 is the multiclass
SVM of Crammer and Singer (scikit-learn's ``LinearSVC(multi_class="crammer_singer")``
with the same C). Its dual (Theorem 1, with A rescaled) is ::

    max_A  D(A) = sum_i a_{i,y_i} - 1/2 ||X^T A||_F^2

over rows a_i with -a_i (without y_i) in Delta_k(C) (alpha) or in
{<1,x> <= C, 0 <= x_j <= C/k} (beta), and a_{i,y_i} = -sum_{j != y_i} a_{i,j}.
P and D are the paper's objectives multiplied by 1/lambda = C n, so the relative gap
(P - D) / max(|P|, |D|) is the paper's.

About the alpha loss: the dual update of Prop. 4 works on the m-1 classes j != y_i,
so the loss it minimises is the top-k hinge over those classes,
``max(0, (1/k) sum_{j<=k} h_[j])`` with ``h_j = 1 + s_j - s_{y_i}`` (j != y_i). Eq. 3
read literally also sorts the ground-truth entry (a+c)_{y_i} = 0 among the top k, which
for k >= 2 gives a different, larger function whose dual is not Prop. 4's; the primal
here is the one consistent with the dual, and the duality gap closes on it. For the
beta loss and for k = 1 the two readings agree.
"""
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from .. import exceptions
from .._validation import check_random_state
from ..parallel import current_threads

LOSSES = ("alpha", "beta")

# Prox-SDCA keeps dense (n_samples, n_classes) arrays; a run that would need more
# bytes than this is refused before anything is allocated (raise it to train larger).
MAX_SDCA_BYTES = 4 * 2**30


def sdca_memory_bytes(n_samples, n_classes, n_features, kernel="linear"):
    """Bytes :func:`sdca_topk` allocates at its peak with dense X: the dual A and, at
    each gap check, the scores and three temporaries of the top-k loss (five (n, m)
    float64 arrays), plus W (d, m) or, with a precomputed kernel, a copy of the (n, n)
    Gram matrix. With CSR X the gap check runs over blocks of rows
    (:func:`score_blocks`), so that the (n, m) arrays are A alone: this bound is then
    about five times the need."""
    n, m = int(n_samples), int(n_classes)
    other = n * n if kernel == "precomputed" else int(n_features) * m
    return 8 * (5 * n * m + other)


def check_sdca_memory(n_samples, n_classes, n_features, kernel="linear"):
    """ValueError when :func:`sdca_memory_bytes` exceeds ``MAX_SDCA_BYTES``."""
    need = sdca_memory_bytes(n_samples, n_classes, n_features, kernel)
    if need > MAX_SDCA_BYTES:
        raise ValueError(f"Prox-SDCA would need about {need} bytes ({n_samples} samples x "
                         f"{n_classes} classes), above the limit of {MAX_SDCA_BYTES} bytes "
                         "(svmrank.learners.sdca.MAX_SDCA_BYTES): use fewer classes or samples")


def topk_hinge_losses(scores, y, k, loss="alpha"):
    """Per-sample top-k hinge loss of score rows.

    Parameters
    ----------
    scores : ndarray, shape (n, m)
        Class scores ``W^T x_i``.
    y : ndarray of int, shape (n,)
        True class index (0..m-1) of each row.
    k : int
        1 <= k <= m - 1.
    loss : {"alpha", "beta"}
        alpha: ``max(0, (1/k) sum_{j<=k} h_[j])`` (eq. 3); beta:
        ``(1/k) sum_{j<=k} max(0, h_[j])`` (eq. 5), where ``h_j = 1 + s_j - s_y`` over
        the classes j != y sorted decreasingly (see the module notes).

    Returns
    -------
    ndarray, shape (n,)
    """
    scores = np.asarray(scores, dtype=np.float64)
    n, m = scores.shape
    rows = np.arange(n)
    h = 1.0 + scores - scores[rows, y][:, None]
    h[rows, y] = -np.inf
    top = h.max(axis=1)[:, None] if k == 1 else -np.partition(-h, k - 1, axis=1)[:, :k]
    if loss == "alpha":
        return np.maximum(0.0, top.sum(axis=1) / k)
    if loss == "beta":
        return np.maximum(0.0, top).sum(axis=1) / k
    raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")


@dataclass
class SDCAResult:
    """Outcome of :func:`sdca_topk`.

    Attributes
    ----------
    W : ndarray (d, m) or None
        Primal weights (one column per class); None in kernel mode.
    A : ndarray (n, m)
        Dual variables, one row per example (``W = X^T A``).
    primal, dual, gap : float
        P(W), D(A) in the C form and the relative gap (P - D) / max(|P|, |D|) at the
        last check.
    n_epochs : int
        Epochs run.
    converged : bool
        Whether gap <= epsilon was reached.
    history : list of (epoch, primal, dual, gap, seconds)
        One entry per gap check; seconds is the wall-clock time since the start.
    interrupted : bool
        True when Ctrl-C ended the run (after a complete epoch: W and A agree).
    """
    W: object
    A: np.ndarray
    primal: float
    dual: float
    gap: float
    n_epochs: int
    converged: bool
    history: list = field(default_factory=list)
    interrupted: bool = False


def objectives(scores, y, k, C, loss, A, sq_norm_w):
    """Primal P(W), dual D(A) (C form) and the relative duality gap.

    ``scores`` are ``W^T x_i`` for every example, ``sq_norm_w`` is ``||W||_F^2``.
    """
    return _objectives(topk_hinge_losses(scores, y, k, loss), y, C, A, sq_norm_w)


def _objectives(losses, y, C, A, sq_norm_w):
    """:func:`objectives` from the per-sample losses."""
    primal = 0.5 * sq_norm_w + C * float(losses.sum())
    dual = float(A[np.arange(len(y)), y].sum()) - 0.5 * sq_norm_w
    scale = max(abs(primal), abs(dual))
    gap = (primal - dual) / scale if scale > 0 else 0.0
    return primal, dual, gap


def block_rows(n_classes):
    """Rows per block of :func:`score_blocks`: each (rows, n_classes) float64 array of a
    block (its scores and the top-k loss's temporaries) takes at most 64 KiB."""
    return max(64, (1 << 13) // max(1, int(n_classes)))


def score_blocks(X, W):
    """Class scores ``X @ W`` of CSR X, block of rows by block (:func:`block_rows`).

    Each block is scipy's ``X[a:b] @ W``, which sums every row in the order of its
    stored values whatever the block: the rows equal those of ``X @ W`` bitwise.

    Yields
    ------
    (a, b, S) : int, int, ndarray (b - a, m)
        Rows a..b-1 and their scores.
    """
    n, step = X.shape[0], block_rows(W.shape[1])
    for a in range(0, n, step):
        b = min(a + step, n)
        yield a, b, np.asarray(X[a:b] @ W)


def blockwise_losses(X, W, y, k, loss="alpha", n_threads=1):
    """Per-sample top-k hinge losses of CSR X at W (d, m), a block of rows at a time.

    Equal bitwise to ``topk_hinge_losses(X @ W, y, k, loss)`` for any ``n_threads``,
    with temporaries of O(threads x block) instead of five (n, m) arrays. With
    ``n_threads`` > 1 the blocks run on a thread pool (scipy's product and NumPy's
    partition release the GIL); each writes its own rows of the result.

    Returns
    -------
    ndarray, shape (n,)
    """
    n, step = X.shape[0], block_rows(W.shape[1])
    losses = np.empty(n)

    def block(a):
        b = min(a + step, n)
        losses[a:b] = topk_hinge_losses(np.asarray(X[a:b] @ W), y[a:b], k, loss)

    starts = range(0, n, step)
    if n_threads <= 1 or len(starts) < 2:
        for a in starts:
            block(a)
    else:
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(max_workers=n_threads) as pool:
            for _ in pool.map(block, starts):  # (re-raises a block's error)
                pass
    return losses


def _init_zero_norm(A, y, sqnorm, C, m):
    """Examples with x_i = 0 never move W; their dual optimum is any x with <1,x> = C in
    the feasible set: take x_j = C / (m - 1)."""
    zero = np.flatnonzero(sqnorm <= 0.0)
    if len(zero):
        A[zero] = -C / (m - 1)
        A[zero, y[zero]] = C


def sdca_topk(X, y, n_classes, k=1, C=1.0, loss="alpha", epsilon=1e-3, max_epoch=1000,
              check_gap_every=1, random_state=None, kernel="linear", verbose=False,
              monitor=None):
    """Train the top-k multiclass SVM by Prox-SDCA (Alg. 1 with the update of Prop. 4).

    Inputs are assumed validated (the estimator does it): X is a CSR or C-contiguous
    float64 array (n, d), or with ``kernel="precomputed"`` the (n, n) Gram matrix; y
    holds class indices 0..n_classes-1; 1 <= k < n_classes.

    Each epoch visits the examples in a fresh random order drawn from ``random_state``
    (``rng.permutation(n)``); every ``check_gap_every`` epochs (and at the last one) the
    primal, dual and relative gap are computed, and training stops at gap <= epsilon.
    Reaching ``max_epoch`` first raises a :class:`ConvergenceWarning`. A run needing
    more than ``MAX_SDCA_BYTES`` (see :func:`sdca_memory_bytes`) raises ValueError
    before allocating. A ``monitor`` (svmrank.progress.Monitor) receives each gap check
    as a record (iteration = epoch, objective, dual, gap, time) with the parameters
    ``(W, A)`` (W None for a precomputed kernel; a True return, early stopping, ends
    the run); with its ``catch_interrupt``, Ctrl-C ends the run after the epoch under
    way (``interrupted``).

    Returns
    -------
    SDCAResult
    """
    from .. import _sdca_fast

    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    rng = check_random_state(random_state)
    m = int(n_classes)
    y = np.ascontiguousarray(y, dtype=np.intp)
    n = y.shape[0]
    loss_code = {"alpha": _sdca_fast.LOSS_ALPHA, "beta": _sdca_fast.LOSS_BETA}[loss]
    check_sdca_memory(n, m, X.shape[1], kernel)
    A = np.zeros((n, m))

    if kernel == "precomputed":
        K = np.ascontiguousarray(X, dtype=np.float64)
        sqnorm = np.diag(K).copy()
        W = None

        def run_epoch(order):
            return _sdca_fast.epoch_kernel(K, y, order, A, k, C, loss_code)

        def objectives_now():
            S = K @ A
            return objectives(S, y, k, C, loss, A, float(np.sum(A * S)))
    else:
        d = X.shape[1]
        W = np.zeros((d, m))
        if sp.issparse(X):
            data = np.ascontiguousarray(X.data, dtype=np.float64)
            # (X's own index arrays when they are int32, as scipy makes them: no copy)
            index = np.int32 if X.indices.dtype == X.indptr.dtype == np.int32 else np.intp
            indices = np.ascontiguousarray(X.indices, dtype=index)
            indptr = np.ascontiguousarray(X.indptr, dtype=index)
            sqnorm = np.empty(n)
            _sdca_fast.sqnorms_csr(data, indptr, sqnorm)

            def run_epoch(order):
                return _sdca_fast.epoch_csr(data, indices, indptr, y, sqnorm, order, W, A,
                                            k, C, loss_code)

            def objectives_now():  # (blocks of rows: no (n, m) temporaries beside A)
                losses = blockwise_losses(X, W, y, k, loss, current_threads())
                return _objectives(losses, y, C, A, float(np.sum(W * W)))
        else:
            Xd = np.ascontiguousarray(X, dtype=np.float64)
            sqnorm = np.empty(n)
            _sdca_fast.sqnorms_dense(Xd, sqnorm)

            def run_epoch(order):
                return _sdca_fast.epoch_dense(Xd, y, sqnorm, order, W, A, k, C, loss_code)

            def objectives_now():  # (BLAS: a block's rows may differ from the whole's)
                return objectives(np.asarray(X @ W), y, k, C, loss, A, float(np.sum(W * W)))

    if not np.all(np.isfinite(sqnorm)):  # (the steps divide by it: such rows would stall)
        raise ValueError(f"X: the squared norm of row {int(np.argmin(np.isfinite(sqnorm)))} "
                         "overflows (values near 1e154 or beyond): scale the features down")

    _init_zero_norm(A, y, sqnorm, C, m)
    start = time.perf_counter()
    history = []
    primal = dual = gap = np.nan
    converged = False
    epoch = 0
    check_every = max(1, int(check_gap_every))
    interrupted = stopped = False

    def check():
        primal, dual, gap = objectives_now()
        history.append((epoch, primal, dual, gap, time.perf_counter() - start))
        return primal, dual, gap

    try:
        while epoch < max_epoch:
            order = rng.permutation(n).astype(np.intp, copy=False)
            failures = run_epoch(order)
            if failures:
                raise RuntimeError(f"top-k projection failed {failures} times in epoch "
                                   f"{epoch + 1}")
            epoch += 1
            if epoch % check_every == 0 or epoch == max_epoch:
                primal, dual, gap = check()
                if verbose:
                    print(f"epoch {epoch}: primal {primal:.10g} dual {dual:.10g} gap {gap:.3g}")
                if monitor is not None:
                    stopped = monitor({"iteration": epoch, "objective": primal, "dual": dual,
                                       "gap": gap, "time": history[-1][4]}, (W, A), epsilon)
                if gap <= epsilon:
                    converged = True
                    break
                if stopped:
                    break
    except KeyboardInterrupt:
        if monitor is None or not monitor.catch_interrupt or epoch == 0:
            raise
        interrupted = True
        if not history or history[-1][0] != epoch:
            primal, dual, gap = check()
        warnings.warn(f"training interrupted after {epoch} epochs: keeping the weights reached "
                      f"(relative duality gap {gap:.3g}; not converged)", UserWarning,
                      stacklevel=2)
    if not (converged or interrupted or stopped):
        warnings.warn(f"Prox-SDCA stopped at the epoch cap max_epoch={max_epoch} with relative "
                      f"duality gap {gap:.3g} > epsilon={epsilon:g}; increase max_epoch",
                      exceptions.ConvergenceWarning, stacklevel=2)
    return SDCAResult(W=W, A=A, primal=primal, dual=dual, gap=gap, n_epochs=epoch,
                      converged=converged, history=history, interrupted=interrupted)
