"""Rank-loss structural SVM problem (AP, NDCG, ROC area) over one or many queries.

Joint feature of a ranking R of one query (2014 eq. 1): Ψ(X, R) = Xᵀ coef(R), with
coef(R) the per-sample coefficients of F(X, R; w) = w·Ψ(X, R). Queries are averaged.
"""
import warnings

import numpy as np

from .._validation import check_matrix, check_rows, check_vector, query_segments
from ..inference import check_method, lai_queries_unchecked, true_coef
from ..losses import get_loss
from ..metrics import ranked_queries
from .linear import LinearScoreProblem


class RankingProblem(LinearScoreProblem):
    """Most-violated-constraint oracle for rank losses (scores, joint feature and
    ``most_violated`` from :class:`~svmrank.problems.linear.LinearScoreProblem`).

    Parameters
    ----------
    X : array-like or sparse matrix, shape (n_samples, n_features)
    y : array-like, shape (n_samples,)
        Relevant means y > 0.
    qid : array-like, shape (n_samples,), optional
        Query of each sample (one ranking per query). Queries without a relevant or
        without a non-relevant sample are skipped with one warning that counts them.
    loss : {"ap", "ndcg", "roc"} or svmrank.losses.QSLoss
    lai : {"qs", "greedy", "search", "select", "search+select"}
        Loss-augmented inference method (see svmrank.inference).
    products : SparseProducts, optional
        Another problem's ``products`` over X, shared when the ranked rows are X's rows
        in place (every query usable, rows grouped by query); otherwise ignored.
    rows : array of int, optional
        Distinct rows of X to rank (y and qid are theirs): the problem of X[rows], read
        from X through ``rows`` without the copy.
    """

    def __init__(self, X, y, qid=None, loss="ap", lai="qs", products=None, rows=None):
        check_method(lai, get_loss(loss), name="lai")
        X = check_matrix(X)
        rows = None if rows is None else check_rows(rows, X.shape[0])
        n = X.shape[0] if rows is None else len(rows)
        y = check_vector(y, "y", n=n)
        order, offsets = query_segments(qid, n)
        relevant = y[order] > 0
        sizes = np.diff(offsets)
        usable = ranked_queries(relevant, offsets)
        self.n_queries_total = len(sizes)
        self.n_skipped = int((~usable).sum())
        if not usable.any():
            raise ValueError("y: no query has both a relevant (y > 0) and a non-relevant "
                             "sample, so the rank loss is undefined everywhere")
        if self.n_skipped:
            warnings.warn(f"{self.n_skipped} of {self.n_queries_total} queries have no relevant "
                          "or no non-relevant sample and are skipped", UserWarning, stacklevel=3)
        keep = np.concatenate([order[a:b] for a, b, u in zip(offsets[:-1], offsets[1:], usable) if u])
        self.relevant = y[keep] > 0
        if rows is not None:
            keep = rows[keep]
        self.rows = keep
        in_place = keep.size == X.shape[0] and bool(np.all(keep == np.arange(keep.size)))
        # (X's ranked rows read through ``keep``, never copied as X[keep]; the products
        # are shared when given and the rows stay put)
        super().__init__(X, products if in_place else None, None if in_place else keep)
        self.offsets = np.concatenate([[0], np.cumsum(sizes[usable])]).astype(np.int64)
        self.n_queries = int(usable.sum())
        self.loss, self.lai = loss, lai
        self._coef_true = np.concatenate([
            true_coef(self.relevant[a:b]) for a, b in zip(self.offsets[:-1], self.offsets[1:])])

    def query_violations(self, scores):
        """Per-query losses of the most violated rankings for these scores and their
        coefficient difference coef(R*) − coef(R̄), not yet averaged over queries (a
        partition of a larger set averages by the whole set's count)."""
        coef, losses, _ = lai_queries_unchecked(scores, self.relevant, None, self.offsets,
                                                self.loss, self.lai)
        return losses, np.subtract(self._coef_true, coef, out=coef)  # (in place)

    def violation_at_scores(self, scores):
        """Averaged loss Δ̄ and coefficient difference d = (coef(R*) − coef(R̄)) / |Q| of
        the most violated rankings for these scores: g = Xᵀ d, violation Δ̄ − scores·d."""
        losses, d = self.query_violations(scores)
        if self.n_queries > 1:
            d /= self.n_queries
        return float(losses.mean()), d
