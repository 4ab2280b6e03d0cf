"""Structural SVM problem for graded relevance: SVM-rank's pairwise loss and graded NDCG@k
over one or many queries (svmrank.graded; docs/algorithms.md)."""
import threading
import warnings

import numpy as np

from .._validation import check_matrix, check_rows, query_segments
from ..graded import (NDCGQueries, QueryTooLarge, graded_levels, pairs_inference, query_levels,
                      too_large_message)
from ..losses import GradedNDCG, PairwiseLoss
from .linear import LinearScoreProblem


def check_graded_loss(loss):
    """``loss`` if it is a PairwiseLoss or GradedNDCG; a one-line ValueError otherwise."""
    if not isinstance(loss, (PairwiseLoss, GradedNDCG)):
        raise ValueError(f"loss: expected a PairwiseLoss or GradedNDCG, got {loss!r}")
    return loss


class GradedQueries:
    """The loss-augmented inference of a graded loss over queries of two levels or more,
    from their scores alone (no X): what :class:`GradedRankingProblem` runs, and what the
    Dask driver runs on the queries that span partitions.

    Parameters
    ----------
    labels : ndarray of int
        Relevance levels (from :func:`svmrank.graded.graded_levels`), grouped by query.
    offsets : ndarray of int
        Query boundaries in ``labels``; every query has two levels or more.
    loss : PairwiseLoss or GradedNDCG
    """

    def __init__(self, labels, offsets, loss):
        self.loss, self.labels, self.offsets = check_graded_loss(loss), labels, offsets
        self.levels, self.n_levels, self.n_pairs = query_levels(labels, offsets)
        self.n_queries = len(offsets) - 1
        if isinstance(loss, GradedNDCG):  # (refuses a query too large for it)
            self._ndcg = NDCGQueries(labels, offsets, loss.k, loss.gains)
            return
        self.weights = 1.0 / self.n_pairs if loss.pair_loss == "fraction" else \
            np.ones(self.n_queries)
        # (per row, made once; None for the unit weights of "count")
        self._row_weights = np.repeat(self.weights, np.diff(offsets)) \
            if loss.pair_loss == "fraction" else None
        # each query's rows by the last call's scores: the next call's sort starts there
        # (the learner's scores change little between calls); one caller at a time uses
        # it, the others start from the row order
        self._pair_order = np.arange(len(labels), dtype=np.int64)
        self._pair_order_lock = threading.Lock()

    def __call__(self, scores):
        """Per-query losses of the most violated outputs for these scores, and their
        coefficients Ψ(R*) − Ψ(R̄) per row, not yet averaged over queries."""
        scores = np.ascontiguousarray(scores, dtype=np.float64)
        if isinstance(self.loss, GradedNDCG):
            d, losses, _ = self._ndcg(scores)
            return losses, d
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
        return losses, d


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
    rows : array of int, optional
        Distinct rows of X to rank (y and qid are theirs): the problem of X[rows], read
        from X through ``rows`` without the copy.
    """

    def __init__(self, X, y, qid=None, loss=None, rows=None):
        check_graded_loss(loss)
        X = check_matrix(X)
        rows = None if rows is None else check_rows(rows, X.shape[0])
        n = X.shape[0] if rows is None else len(rows)
        levels = graded_levels(y)
        if len(levels) != n:
            raise ValueError(f"y: expected length {n}, got {len(levels)}")
        order, offsets = query_segments(qid, n)
        sizes = np.diff(offsets)
        labels = levels[order]
        usable = query_levels(labels, offsets)[1] > 1
        self.n_queries_total = len(sizes)
        self.n_skipped = int(len(sizes) - np.count_nonzero(usable))
        if self.n_skipped == len(sizes):
            raise ValueError("y: no query has two relevance levels, so the rank loss is "
                             "undefined everywhere")
        if self.n_skipped:
            warnings.warn(f"{self.n_skipped} of {self.n_queries_total} queries have a single "
                          "relevance level and are skipped", UserWarning, stacklevel=3)
            kept_rows = np.repeat(usable, sizes)
            order, labels, sizes = order[kept_rows], labels[kept_rows], sizes[usable]
            offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        keep = order if rows is None else rows[order]
        self.rows = keep
        # (X's ranked rows read through ``keep``, never copied as X[keep])
        in_place = keep.size == X.shape[0] and bool(np.all(keep == np.arange(keep.size)))
        super().__init__(X, rows=None if in_place else keep)
        self.loss = loss
        try:
            self.queries = GradedQueries(labels, offsets, loss)
        except QueryTooLarge as exc:  # (say which query, or that qid may be missing)
            where = ("all rows are one query: pass qid if they hold several" if qid is None
                     else f"qid {np.asarray(qid)[order[offsets[exc.query]]].tolist()!r}")
            raise ValueError(too_large_message(exc.counts, exc.k, exc.n_states, where)) from None
        self.labels, self.offsets = labels, offsets
        self.n_queries = len(sizes)

    def query_violations(self, scores):
        """Per-query losses of the most violated outputs for these scores and their
        coefficients per row, not yet averaged over queries (a partition of a larger set
        averages by the whole set's count)."""
        return self.queries(scores)

    def violation_at_scores(self, scores):
        """Averaged loss Δ̄ and coefficients d = (Ψ(R*) − Ψ(R̄)) / |Q| per row of the most
        violated outputs for these scores: g = Xᵀ d, violation Δ̄ − scores·d."""
        losses, d = self.queries(scores)
        if self.n_queries > 1:
            d /= self.n_queries
        return float(losses.mean()), d
