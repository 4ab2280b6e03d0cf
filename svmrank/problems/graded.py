"""Structural SVM problem for graded relevance: SVM-rank's pairwise loss and graded
NDCG@k over one or many queries (svmrank.graded; docs/algorithms.md)."""
import warnings

import numpy as np

from .._validation import check_matrix, query_segments
from ..graded import NDCGQueries, graded_levels, pairs_inference
from ..losses import GradedNDCG, PairwiseLoss
from .linear import LinearScoreProblem


class GradedRankingProblem(LinearScoreProblem):
    """Most-violated-constraint oracle for :class:`~svmrank.losses.PairwiseLoss` and
    :class:`~svmrank.losses.GradedNDCG`; queries are averaged.

    Parameters
    ----------
    X : array-like or sparse matrix, shape (n_samples, n_features)
    y : array-like, shape (n_samples,)
        Non-negative integer relevance levels (two values the lower of which is <= 0:
        binary relevance y > 0).
    qid : array-like, shape (n_samples,), optional
        Query of each sample; queries of a single level are skipped with one warning.
    loss : PairwiseLoss or GradedNDCG
    """

    def __init__(self, X, y, qid=None, loss=None):
        if not isinstance(loss, (PairwiseLoss, GradedNDCG)):
            raise ValueError(f"loss: expected a PairwiseLoss or GradedNDCG, got {loss!r}")
        X = check_matrix(X)
        levels = graded_levels(y)
        if len(levels) != X.shape[0]:
            raise ValueError(f"y: expected length {X.shape[0]}, got {len(levels)}")
        order, offsets = query_segments(qid, X.shape[0])
        sizes = np.diff(offsets)
        query, lv = np.repeat(np.arange(len(sizes)), sizes), levels[order]
        # the (query, level) runs, in one sort rather than a np.unique per query
        by_level = np.lexsort((lv, query))
        q_sorted, l_sorted = query[by_level], lv[by_level]
        starts = np.ones(len(lv), dtype=bool)
        starts[1:] = (q_sorted[1:] != q_sorted[:-1]) | (l_sorted[1:] != l_sorted[:-1])
        n_levels = np.bincount(q_sorted[starts], minlength=len(sizes))
        run = np.cumsum(starts) - 1  # run of each sorted row
        first_run = np.concatenate([[0], np.cumsum(n_levels)[:-1]])
        dense = np.empty(len(lv), dtype=np.int64)
        dense[by_level] = run - first_run[q_sorted]  # level's rank within its query
        run_sizes = np.bincount(run).astype(np.int64)
        same = np.bincount(q_sorted[starts], weights=run_sizes ** 2, minlength=len(sizes))
        usable = n_levels > 1
        self.n_queries_total = len(sizes)
        self.n_skipped = int((~usable).sum())
        if not usable.any():
            raise ValueError("y: no query has two relevance levels, so the rank loss is "
                             "undefined everywhere")
        if self.n_skipped:
            warnings.warn(f"{self.n_skipped} of {self.n_queries_total} queries have a single "
                          "relevance level and are skipped", UserWarning, stacklevel=3)
        kept_rows = usable[query]
        keep = order[kept_rows]
        self.rows = keep
        super().__init__(X[keep])
        self.labels = levels[keep]
        self.offsets = np.concatenate([[0], np.cumsum(sizes[usable])]).astype(np.int64)
        self.n_queries = int(usable.sum())
        self.loss = loss
        self.levels = dense[kept_rows]
        self.n_levels = n_levels[usable].astype(np.int64)
        self.n_pairs = np.rint((sizes[usable].astype(np.float64) ** 2 - same[usable]) / 2)
        if isinstance(loss, GradedNDCG):  # (refuses a query too large for it)
            self._ndcg = NDCGQueries(self.labels, self.offsets, loss.k, loss.gains)
        if isinstance(loss, PairwiseLoss):
            self.weights = 1.0 / self.n_pairs if loss.pair_loss == "fraction" else \
                np.ones(self.n_queries)

    def violation_at_scores(self, scores):
        """Averaged loss Δ̄ and coefficients d = (Ψ(R*) − Ψ(R̄)) / |Q| per row of the most
        violated outputs for these scores: g = Xᵀ d, violation Δ̄ − scores·d."""
        scores = np.ascontiguousarray(scores, dtype=np.float64)
        if isinstance(self.loss, PairwiseLoss):
            coef, swapped = pairs_inference(scores, self.levels, self.offsets, self.n_levels)
            weight = np.repeat(self.weights, np.diff(self.offsets))
            d = coef * weight
            losses = swapped * self.weights
        else:
            d, losses, _ = self._ndcg(scores)
        if self.n_queries > 1:
            d /= self.n_queries
        return float(losses.mean()), d
