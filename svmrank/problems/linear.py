"""Problems linear in the scores s = X w, whose joint feature is Xᵀd.

:class:`LinearScoreProblem` is their common base: it owns the sparse products X w and
Xᵀd (kernel ``svmrank._linalg_fast``, on every core for a large X) and answers the
cutting-plane learner's ``scores``, ``joint_feature`` and ``most_violated``; a family
adds only ``violation_at_scores``.
"""
from abc import ABC, abstractmethod

import numpy as np

from .. import _linalg_fast

# SparseProducts.rmatvec reads only the rows where d is non-zero while at most this
# fraction of d is non-zero; above it the gather over Xᵀ is faster (the two break even
# between 0.2 and 0.35 on w8a and MQ2008: benchmarks/bench_products.py)
SPARSE_D_FRACTION = 0.3
# _RowsByLength keeps the rows as they are when the longest is at most this many times
# the shortest (sorting them by length would not pay for its copy of X)
UNIFORM_LENGTHS = 1.25
# SparseProducts copies X twice (12 bytes a stored value each, 8 for a 0/1 matrix) up to
# this many stored values: 0.8 GB a copy
COPY_MAX_NNZ = 1 << 26


def _int32(X):
    return X.indptr.dtype == np.int32 and X.indices.dtype == np.int32


def matrix_product(X, w, rows=None):
    """X w (X[rows] w when ``rows`` is given) for a CSR matrix X from ``check_matrix`` and
    a float64 vector w (len = columns)."""
    if not _int32(X):  # (≥ 2³¹ stored values)
        out = np.asarray(X @ w).ravel()
        return out if rows is None else out[rows]
    out = np.empty(X.shape[0])
    _linalg_fast.csr_matvec(X.indptr, X.indices, X.data, np.ascontiguousarray(w, np.float64), out)
    return out if rows is None else out[rows]


def transpose_product(X, d, rows=None):
    """Xᵀ d for a CSR matrix X from ``check_matrix`` and a float64 vector d, reading only
    the rows where d is non-zero; with ``rows`` (distinct rows of X, one per entry of d),
    X[rows]ᵀ d read from X through them, without the copy X[rows]."""
    d = np.ascontiguousarray(d, np.float64)
    if not _int32(X):
        if rows is not None:
            full = np.zeros(X.shape[0])
            full[rows] = d
            d = full
        return np.asarray(X.T @ d).ravel()
    out = np.zeros(X.shape[1])
    if rows is None:
        _linalg_fast.csr_rmatvec(X.indptr, X.indices, X.data, d, out)
    else:
        rows = np.asarray(rows, dtype=np.int32)
        # (the blocks as over the copy X[rows], whose stored values these are)
        nnz = int(np.diff(X.indptr)[rows].sum())
        _linalg_fast.csr_rmatvec(X.indptr, X.indices, X.data, d, out, rows=rows, nnz=nnz)
    return out


def _same_arrays(A, B):
    """Whether CSR matrices A and B are views of the same data, indices and indptr."""
    return A.shape == B.shape and all(
        a is b or (a.shape == b.shape and a.__array_interface__["data"] == b.__array_interface__["data"]
                   and a.strides == b.strides and a.dtype == b.dtype)
        for a, b in ((A.data, B.data), (A.indices, B.indices), (A.indptr, B.indptr)))


def _by_length(lengths):
    """The order that stores rows of these lengths by length (stable), or None when they
    are of about one length (``UNIFORM_LENGTHS``)."""
    if not lengths.size or lengths.max() <= UNIFORM_LENGTHS * lengths.min():
        return None
    if lengths.max() < 1 << 16:
        lengths = lengths.astype(np.uint16)  # (numpy's stable sort is a radix sort)
    return np.argsort(lengths, kind="stable").astype(np.int32)


class _RowsByLength:
    """A CSR matrix with its rows stored in order of length (``rows[i]`` is the row
    stored i-th): the CPU then predicts the end of each row's loop, which on rows of
    varying length (w8a: 1 to 114 values) makes X w about twice as fast. Rows of about
    one length (within ``UNIFORM_LENGTHS``: dense data, say) gain nothing from it and
    are kept as X stores them, without a copy. A 0/1 matrix keeps no values (the kernel
    reads its indices alone). The products are the same either way (each row is summed
    alone, in its own order).

    ``take`` (distinct rows of X) stores X[take] instead, copied from X through it;
    ``transpose`` stores Xᵀ (X[take]ᵀ), written from X in its stored order, as scipy's
    ``X[take].T.tocsr()`` holds it, with no intermediate copy."""

    def __init__(self, X, take=None, transpose=False, ones=None):
        ones = bool((X.data == 1.0).all()) if ones is None else ones
        if transpose:
            counts = np.zeros(X.shape[1], dtype=np.int64)
            _linalg_fast.csr_column_counts(X.indptr, X.indices, take, counts)
            self.n_rows = X.shape[1]
            self.rows = _by_length(counts)
            stored = counts if self.rows is None else counts[self.rows]
            self.indptr = np.zeros(self.n_rows + 1, dtype=np.int32)
            np.cumsum(stored, out=self.indptr[1:])
            cursor = np.empty(self.n_rows, dtype=np.int64)
            cursor[slice(None) if self.rows is None else self.rows] = self.indptr[:-1]
            nnz = int(self.indptr[-1])
            self.indices = np.empty(nnz, dtype=np.int32)
            self.data = None if ones else np.empty(nnz)
            _linalg_fast.csr_transpose(X.indptr, X.indices, X.data, take, cursor,
                                       self.indices, self.data)
            return
        lengths = np.diff(X.indptr)
        if take is not None:
            lengths = lengths[take]
        self.n_rows = lengths.size
        self.rows = _by_length(lengths)
        if self.rows is None and take is None:
            self.indptr, self.indices = X.indptr, X.indices
            self.data = None if ones else X.data
            return
        order = take if self.rows is None else self.rows if take is None else take[self.rows]
        self.indptr = np.empty(self.n_rows + 1, dtype=np.int32)
        nnz = int(lengths.sum())
        self.indices = np.empty(nnz, dtype=np.int32)
        self.data = None if ones else np.empty(nnz)
        _linalg_fast.csr_take_rows(X.indptr, X.indices, X.data, order, self.indptr,
                                   self.indices, self.data)

    def product(self, v):
        out = np.empty(self.n_rows)
        _linalg_fast.csr_matvec(self.indptr, self.indices, self.data,
                                np.ascontiguousarray(v, np.float64), out, rows=self.rows)
        return out


class SparseProducts:
    """X w and Xᵀd for one CSR matrix that a learner multiplies many times.

    Keeps two copies beside X: its rows stored by length, and Xᵀ (CSR) stored the same
    way (X's rows, or Xᵀ's, of about one length are not copied again: see
    :class:`_RowsByLength`), so that Xᵀd is a gather of d per stored value; the scatter over X's rows
    (``transpose_product``) adds into a few columns whose additions wait on each other.
    A d with few non-zero entries takes that scatter over its non-zero rows only.
    Above ``COPY_MAX_NNZ`` stored values, or with ``copies=False``, no copy is made (the
    products read X: the same X w, Xᵀd up to the order of its sums). Results do not
    depend on the thread count.

    Parameters
    ----------
    X : CSR matrix from ``check_matrix``
    rows : array of int, optional
        Distinct rows of X, in range (unchecked: the problems check them with
        ``check_rows``): the products are then those of X[rows] (w's scores and d's
        entries follow ``rows``), equal bitwise to ``SparseProducts(X[rows])``'s, and the
        copies are made from X through ``rows`` (X[rows] itself is never built).
    copies : bool
        Whether to make the two copies (False: X w and Xᵀd read X, as above
        ``COPY_MAX_NNZ``; a partition of a large set on a Dask worker, say).
    """

    def __init__(self, X, rows=None, copies=True):
        self.X = X
        self.rows = None if rows is None else np.ascontiguousarray(rows, dtype=np.int32)
        lengths = np.diff(X.indptr) if rows is None else np.diff(X.indptr)[self.rows]
        self.n_rows = lengths.size
        self._nnz = int(lengths.sum())  # (of X[rows])
        self._fast = (bool(copies) and _int32(X) and self._nnz <= COPY_MAX_NNZ
                      and max(self.n_rows, X.shape[1]) < 1 << 31)
        if self._fast:
            ones = bool((X.data == 1.0).all())
            # Xᵀ is written straight into its stored layout: the two copies, never three
            self._by_cols = _RowsByLength(X, self.rows, transpose=True, ones=ones)
            self._by_rows = _RowsByLength(X, self.rows, ones=ones)

    def matvec(self, w):
        """X w."""
        return self._by_rows.product(w) if self._fast else matrix_product(self.X, w, self.rows)

    def scatter(self, d):
        """Xᵀ d by the scatter over X's rows where d is non-zero (no copy read)."""
        d = np.ascontiguousarray(d, np.float64)
        if self.rows is None or not _int32(self.X):
            return transpose_product(self.X, d, self.rows)
        out = np.zeros(self.X.shape[1])
        _linalg_fast.csr_rmatvec(self.X.indptr, self.X.indices, self.X.data, d, out,
                                 rows=self.rows, nnz=self._nnz)
        return out

    def rmatvec(self, d):
        """Xᵀ d."""
        d = np.ascontiguousarray(d, np.float64)
        if not self._fast or np.count_nonzero(d) <= SPARSE_D_FRACTION * d.shape[0]:
            return self.scatter(d)
        return self._by_cols.product(d)


class LinearScoreProblem(ABC):
    """Base of the problems whose joint feature is Xᵀd for per-row coefficients d.

    With Δ̄ and d the loss and coefficients of the most violated output at scores
    s = X w, the constraint is (Δ̄, g = Xᵀd) and its violation Δ̄ − s·d. These methods are the
    score interface of :func:`svmrank.learners.cutting_plane.cutting_plane` (its line
    search evaluates ``violation_at_scores`` on points s_b + t (s_c − s_b)).

    Parameters
    ----------
    X : CSR matrix from ``check_matrix``, shape (n_samples, n_features)
        The rows whose scores the family's inference reads (with ``rows``: X[rows]).
    products : SparseProducts, optional
        Another problem's ``products`` over the same arrays of X (and the same
        ``rows``), shared instead of copying X twice more (the latent models' instance
        start, say).
    rows : array of int, optional
        Distinct rows of X: the problem's rows are then X[rows], in that order, read
        through ``rows`` (no copy X[rows]; see :class:`SparseProducts`).

    Attributes
    ----------
    products : SparseProducts
        The products of X[rows] (read-only once built: problems may share them).
    product_copies : bool
        Class attribute: whether the products built here copy X (``SparseProducts``'s
        ``copies``); a subclass sets it False to keep X alone.
    """

    product_copies = True

    def __init__(self, X, products=None, rows=None):
        self.X = X
        self.n_features = X.shape[1]
        if products is not None and not (
                _same_arrays(products.X, X)
                and (products.rows is None if rows is None
                     else products.rows is not None and np.array_equal(products.rows, rows))):
            raise ValueError("products: built over another matrix than X")
        self.products = (SparseProducts(X, rows, copies=self.product_copies)
                         if products is None else products)

    def scores(self, w):
        """Scores X w of the rows."""
        return self.products.matvec(w)

    def joint_feature(self, d):
        """Xᵀd (over the rows where d is non-zero when few are)."""
        return self.products.rmatvec(d)

    @abstractmethod
    def violation_at_scores(self, scores):
        """Loss Δ̄ and coefficients d of the most violated output at these scores."""

    def most_violated(self, w):
        """Loss and joint-feature difference Xᵀd of the most violated output at w."""
        loss, d = self.violation_at_scores(self.scores(w))
        return loss, self.joint_feature(d)
