"""Structural SVM problem for graded relevance: SVM-rank's pairwise loss and graded
NDCG@k over one or many queries (svmrank.graded; docs/algorithms.md)."""
import threading
import warnings

import numpy as np

from .._validation import check_matrix, query_segments
from ..graded import NDCGQueries, graded_levels, pairs_inference, query_levels
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
        labels = levels[order]
        dense, n_levels, n_pairs = query_levels(labels, offsets)
        usable = n_levels > 1
        self.n_queries_total = len(sizes)
        self.n_skipped = int(len(sizes) - np.count_nonzero(usable))
        if self.n_skipped == len(sizes):
            raise ValueError("y: no query has two relevance levels, so the rank loss is "
                             "undefined everywhere")
        if self.n_skipped:
            warnings.warn(f"{self.n_skipped} of {self.n_queries_total} queries have a single "
                          "relevance level and are skipped", UserWarning, stacklevel=3)
            kept_rows = np.repeat(usable, sizes)
            keep, labels, dense = order[kept_rows], labels[kept_rows], dense[kept_rows]
            sizes, n_levels, n_pairs = sizes[usable], n_levels[usable], n_pairs[usable]
            offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        else:
            keep = order
        self.rows = keep
        # (X's ranked rows read through ``keep``, never copied as X[keep])
        in_place = keep.size == X.shape[0] and bool(np.all(keep == np.arange(keep.size)))
        super().__init__(X, rows=None if in_place else keep)
        self.labels = labels
        self.offsets = offsets
        self.n_queries = len(sizes)
        self.loss = loss
        self.levels = dense
        self.n_levels = n_levels
        self.n_pairs = n_pairs
        if isinstance(loss, GradedNDCG):  # (refuses a query too large for it)
            self._ndcg = NDCGQueries(self.labels, self.offsets, loss.k, loss.gains)
        if isinstance(loss, PairwiseLoss):
            self.weights = 1.0 / self.n_pairs if loss.pair_loss == "fraction" else \
                np.ones(self.n_queries)
            # (per row, made once; None for the unit weights of "count")
            self._row_weights = np.repeat(self.weights, np.diff(self.offsets)) \
                if loss.pair_loss == "fraction" else None
            # each query's rows by the last call's scores: the next call's sort starts
            # there (the learner's scores change little between calls); one caller at a
            # time uses it, the others start from the row order
            self._pair_order = np.arange(len(self.labels), dtype=np.int64)
            self._pair_order_lock = threading.Lock()

    def violation_at_scores(self, scores):
        """Averaged loss Δ̄ and coefficients d = (Ψ(R*) − Ψ(R̄)) / |Q| per row of the most
        violated outputs for these scores: g = Xᵀ d, violation Δ̄ − scores·d."""
        scores = np.ascontiguousarray(scores, dtype=np.float64)
        if isinstance(self.loss, PairwiseLoss):
            warm = self._pair_order_lock.acquire(False)
            try:
                d, losses = pairs_inference(scores, self.levels, self.offsets, self.n_levels,
                                            self._pair_order if warm else None)
            finally:
                if warm:
                    self._pair_order_lock.release()
            if self._row_weights is not None:
                d *= self._row_weights
                losses *= self.weights
        else:
            d, losses, _ = self._ndcg(scores)
        if self.n_queries > 1:
            d /= self.n_queries
        return float(losses.mean()), d
