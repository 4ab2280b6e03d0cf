"""AP-SVM-APPX (2014 paper, §3.3): optimise the rank loss on the difficult samples only.

Stage 1 trains the binary SVM w₀ (with a bias; :class:`svmrank.problems.binary.BinaryProblem`
with bias ``APPX_BIAS``, trained by the estimator). Samples with y_i (w₀·x_i + b₀) ≥ 1 are
easy; the top ``approx`` % of them by that margin stay easy, the rest join the difficult
set. Stage 2 (eq. 10) minimises ½‖w‖² + C ξ with the rank-loss constraints over the
difficult samples and the hard constraints y_i (w·x_i + b) ≥ 1 for the easy ones (A w ≥ b
rows of the cutting-plane learner). The bias b is a constant feature: rank-loss
constraints do not see it (coef sums to 0 in every query), the hard ones do. The stage-1
solution satisfies every hard constraint, so stage 2 is always feasible.
"""
import numpy as np
import scipy.sparse as sp

from .._validation import check_matrix, check_vector
from ..inference import check_method
from ..losses import get_loss
from ..metrics import is_ranked
from .binary import add_bias_column
from .ranking import RankingProblem

APPX_BIAS = 1.0  # value of the constant feature in both stages


def check_approx(approx):
    """``approx`` as a float in [0, 100] (the percentage of easy samples kept easy)."""
    if isinstance(approx, bool) or not isinstance(approx, (int, float, np.integer, np.floating)) \
            or not np.isfinite(approx) or not 0 <= approx <= 100:
        raise ValueError(f"approx must be a number in [0, 100] (percent of easy samples kept "
                         f"easy), got {approx!r}")
    return float(approx)


def split_easy(margins, approx):
    """Easy mask: of the samples with margin ≥ 1, the ``approx`` % with the largest
    margins (rounded down; ties by index); everything else is difficult."""
    margins = np.asarray(margins, dtype=np.float64)
    candidates = np.flatnonzero(margins >= 1.0)
    n_keep = int(np.floor(len(candidates) * check_approx(approx) / 100.0 + 1e-9))
    order = candidates[np.argsort(-margins[candidates], kind="stable")]
    easy = np.zeros(len(margins), dtype=bool)
    easy[order[:n_keep]] = True
    return easy


def check_appx_data(X, y, qid=None, approx=50, loss="ap", lai="qs"):
    """Validated ``(X, y, qid, approx)`` of AP-SVM-APPX, checked before stage 1 trains:
    ``approx`` in [0, 100], an inference method that suits the loss, and relevant
    (y > 0) and non-relevant samples."""
    approx = check_approx(approx)
    check_method(lai, get_loss(loss), name="lai")
    X = check_matrix(X)
    y = check_vector(y, "y", n=X.shape[0])
    if qid is not None:
        qid = check_vector(qid, "qid", n=X.shape[0], dtype=None, finite=False)
    if not is_ranked(y > 0):
        only = "relevant" if (y > 0).all() else "non-relevant"
        raise ValueError(f"y: AP-SVM-APPX needs relevant (y > 0) and non-relevant "
                         f"samples, got only {only} ones")
    return X, y, qid, approx


class APPXProblem:
    """Stage 2 of AP-SVM-APPX as data for the cutting-plane learner, from the stage-1
    binary SVM.

    Parameters
    ----------
    X, y, qid : as for :class:`svmrank.problems.ranking.RankingProblem`
    w0 : ndarray, shape (n_features + 1,)
        Stage-1 weights: the binary SVM of ``BinaryProblem(X, y, bias=APPX_BIAS)``
        (last entry: the bias weight).
    approx : float
        Percentage (0-100) of the easy samples kept easy.
    loss, lai : rank loss and inference method of stage 2.

    Attributes
    ----------
    w0 : ndarray
        Stage-1 weights.
    easy : ndarray of bool
        Easy samples (hard constraints in stage 2).
    stage2 : RankingProblem
        The rank-loss problem over the difficult samples, bias column appended.
    hard_constraints : tuple (A, b)
        Rows y_i [x_i, 1] and right-hand sides 1 of the easy samples.
    """

    def __init__(self, X, y, w0, qid=None, approx=50, loss="ap", lai="qs"):
        X, y, qid, approx = check_appx_data(X, y, qid, approx, loss, lai)
        Xb = add_bias_column(X, APPX_BIAS)
        self.w0 = check_vector(w0, "w0", n=Xb.shape[1])
        sign = np.where(y > 0, 1.0, -1.0)
        margins = sign * (Xb @ self.w0)
        self.easy = split_easy(margins, approx)
        hard = np.flatnonzero(self.easy)
        difficult = np.flatnonzero(~self.easy)
        relevant = y[difficult] > 0
        if not is_ranked(relevant):
            raise ValueError(
                f"approx={approx:g}: the difficult set ({len(difficult)} samples) has no "
                f"{'relevant' if not relevant.any() else 'non-relevant'} sample, so the rank "
                "loss is undefined on it; use a smaller approx")
        self.stage2 = RankingProblem(Xb, y[difficult],
                                     qid=None if qid is None else qid[difficult],
                                     loss=loss, lai=lai, rows=difficult)
        self.hard_constraints = (sp.diags(sign[hard]) @ Xb[hard], np.ones(len(hard)))
        self.n_features = Xb.shape[1]
