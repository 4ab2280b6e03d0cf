"""Bags of candidates (latent ranking, behl2014): validation of the bag index, of bag
labels and of known candidates, and loading multiple-instance (MIL) SVMlight files.

Layout. Candidates are the rows of X; ``bags`` gives each row's bag id (any hashable
scalars: ints, strings), or lists each bag's rows. **In a file and for**
:func:`check_bags` **a bag's rows must be consecutive**: a bag id that reappears after
another bag is rejected, since in a file it almost always means two files were
concatenated with clashing ids. Sort rows by bag with a stable sort
(``np.argsort(bags, kind="stable")``) to fix it. The estimators take scattered rows
(scikit-learn's splitters shuffle them) and regroup them with :func:`group_bags`. Bags
are numbered in order of first appearance; per-bag outputs follow that order.

Files. One candidate per line, ``qid`` = bag id, every line carrying its bag's label
(the layout of the MIL sets musk1, elephant, fox, tiger)::

    1 qid:7 1:0.5 2:-1.2 # known
    1 qid:7 1:0.1 2:0.3
    -1 qid:8 1:0.9 2:0.0

The comment key ``known`` (a whitespace-separated word of the line's comment, see
:data:`KNOWN_KEY`) marks the bag's known candidate (the paper's supervision level S:
that bag's latent variable is given, at most one per bag).
"""
import numbers
from dataclasses import dataclass

import numpy as np

from . import _latent_fast
from ._validation import check_vector
from .io.svmlight import load_svmlight_with_lines
from .parallel import current_threads

#: Comment word marking a bag's known candidate in an SVMlight file (``# known``).
KNOWN_KEY = "known"


@dataclass(frozen=True)
class Bags:
    """Validated contiguous bag index.

    Attributes
    ----------
    offsets : ndarray of intp, shape (n_bags + 1,)
        Bag b is rows ``offsets[b]:offsets[b + 1]`` (never empty).
    ids : ndarray, shape (n_bags,)
        Bag ids in order of first appearance.
    """

    offsets: np.ndarray
    ids: np.ndarray

    def __post_init__(self):
        offsets = np.asarray(self.offsets)
        if offsets.ndim != 1 or offsets.size == 0 or offsets.dtype.kind not in "iu":
            raise ValueError(f"offsets: expected a 1-d integer array of n_bags + 1 bag "
                             f"boundaries, got shape {offsets.shape} and dtype {offsets.dtype}")
        # (compared, not differenced: np.diff of unsigned offsets wraps around)
        if (offsets[0] != 0 or (offsets[1:] <= offsets[:-1]).any()
                or offsets[-1] > np.iinfo(np.intp).max):
            raise ValueError("offsets: must start at 0 and increase strictly (every bag "
                             "needs at least one candidate)")
        if len(self.ids) != offsets.size - 1:
            raise ValueError(f"ids: expected one id per bag ({offsets.size - 1}), got "
                             f"{len(self.ids)}")
        object.__setattr__(self, "offsets", np.ascontiguousarray(offsets, dtype=np.intp))
        object.__setattr__(self, "ids", np.asarray(self.ids))

    @property
    def n_bags(self):
        return len(self.offsets) - 1

    @property
    def n_rows(self):
        return int(self.offsets[-1])

    @property
    def sizes(self):
        return np.diff(self.offsets)

    def bag_of_row(self):
        """Bag number (0-based, order of first appearance) of every row."""
        return np.repeat(np.arange(self.n_bags, dtype=np.intp), self.sizes)

    def _scores(self, scores):
        """One float64 score per row, none NaN (±inf order as numbers do)."""
        scores = check_vector(scores, "scores", n=self.n_rows, finite=False)
        if np.isnan(scores).any():
            raise ValueError("scores: contains NaN values")
        return scores

    def max(self, scores):
        """Highest score of every bag (eq. 6-7): the bag's prediction score."""
        out = np.empty(self.n_bags)
        _latent_fast.bag_max(self._scores(scores), self.offsets, out)
        return out

    def argmax(self, scores, known=None, minimise=None):
        """Row chosen in every bag: its first highest scoring candidate (Prop. 2-3), the
        first lowest where ``minimise`` (bool per bag) is set, and the known candidate
        where ``known`` gives one (as accepted by :func:`check_known`).

        Returns
        -------
        rows : ndarray of intp, shape (n_bags,)
        values : ndarray of float64, shape (n_bags,)
        """
        scores = self._scores(scores)
        known = None if known is None else check_known(known, self)
        if minimise is not None:
            minimise = check_vector(minimise, "minimise", n=self.n_bags, dtype=bool)
        return self._argmax(scores, known, minimise)

    def _argmax(self, scores, known=None, minimise=None):
        """:meth:`argmax` without validation (the learners' inner call): scores float64
        of n_rows, known intp per bag (-1 or a row of the bag), minimise bool per bag."""
        rows = np.empty(self.n_bags, dtype=np.intp)
        values = np.empty(self.n_bags)
        known = _EMPTY_INTP if known is None else known
        minimise = _EMPTY_U8 if minimise is None else minimise.view(np.uint8)
        _latent_fast.bag_argmax(scores, self.offsets, known, minimise, rows, values,
                                current_threads())
        return rows, values

    def take(self, bag_numbers):
        """Row indices and the new :class:`Bags` of a subset of bags (given by 0-based
        bag number, in the order given, or a boolean mask over bags), e.g. for
        cross-validation folds."""
        bag_numbers = np.asarray(bag_numbers)
        if bag_numbers.dtype == bool:
            if bag_numbers.shape != (self.n_bags,):
                raise ValueError(f"bag_numbers: a boolean mask needs one entry per bag "
                                 f"({self.n_bags}), got shape {bag_numbers.shape}")
            bag_numbers = np.flatnonzero(bag_numbers)
        if bag_numbers.ndim != 1 or (bag_numbers.size and bag_numbers.dtype.kind not in "iu"):
            raise ValueError(f"bag_numbers: expected a 1-d array of integer bag numbers, got "
                             f"shape {bag_numbers.shape} and dtype {bag_numbers.dtype}")
        if bag_numbers.size and (bag_numbers.min() < 0 or bag_numbers.max() >= self.n_bags):
            raise ValueError(f"bag_numbers: must lie in 0..{self.n_bags - 1}")
        bag_numbers = bag_numbers.astype(np.intp)
        sizes = self.sizes[bag_numbers]
        starts = self.offsets[bag_numbers]
        rows = (np.repeat(starts - np.r_[0, np.cumsum(sizes)[:-1]], sizes)
                + np.arange(sizes.sum(), dtype=np.intp))
        offsets = np.r_[0, np.cumsum(sizes)].astype(np.intp)
        return rows.astype(np.intp), Bags(offsets, self.ids[bag_numbers])


_EMPTY_INTP = np.empty(0, dtype=np.intp)
_EMPTY_U8 = np.empty(0, dtype=np.uint8)


def _row_name(row, lines):
    """'row 7' for arrays (0-based), 'line 12' for files (1-based, the file is named
    at the start of the message); ``lines`` may also be a function naming a row."""
    if lines is None:
        return f"row {row}"
    if callable(lines):
        return lines(row)
    return f"line {lines[row]}"


def check_bags(bags, n_rows, name="bags", lines=None):
    """Validate a bag index and return :class:`Bags`.

    Parameters
    ----------
    bags : None, array-like of shape (n_rows,), or sequence of sequences of int
        None makes every row its own bag. An array gives each row's bag id; a bag's rows
        must be consecutive. A sequence of sequences (or a 2-d integer array, for bags of
        equal size) lists each bag's row indices; the bags must list rows 0..n_rows-1 in
        order, each bag non-empty.
    n_rows : int
        Number of candidates (rows of X).
    name : str
        Argument name used in error messages.
    lines : ndarray, optional
        1-based file line of every row, to make errors name the line (pass the file
        name as ``name``).
    """
    if n_rows == 0:
        raise ValueError("X: no candidates (0 rows)")
    if bags is None:
        return Bags(np.arange(n_rows + 1, dtype=np.intp), np.arange(n_rows))
    row_lists = _row_lists(bags)
    if row_lists is not None:
        return _bags_from_row_lists(row_lists, n_rows, name)
    return _bags_from_ids(_row_ids(bags, n_rows, name), n_rows, name, lines)


def group_bags(bags, n_rows, name="bags"):
    """:func:`check_bags` for bag ids whose rows need not be consecutive (the Python
    API, where scikit-learn's splitters shuffle rows).

    Returns
    -------
    bags : Bags
        The bag index of the rows taken in ``order``.
    order : ndarray of intp or None
        The stable permutation of the rows that makes each bag's rows consecutive
        (bags in order of first appearance), or None when they already are.
    """
    if n_rows and bags is not None and _row_lists(bags) is None:
        ids = _row_ids(bags, n_rows, name)
        _, first, inverse = np.unique(ids, return_index=True, return_inverse=True)
        order = np.argsort(first[inverse.ravel()], kind="stable").astype(np.intp)
        if (order != np.arange(n_rows)).any():
            return _bags_from_ids(ids[order], n_rows, name, None), order
    return check_bags(bags, n_rows, name), None


def _row_lists(bags):
    """The bags as a list of row lists, or None when ``bags`` gives one id per row."""
    if _is_list_of_rows(bags):
        return bags
    if (isinstance(bags, np.ndarray) and bags.ndim == 2 and bags.shape[1] > 1
            and bags.dtype.kind in "iu"):  # (one column: bag ids or singletons, refused below)
        return list(bags)  # bags of equal size
    return None


def _row_ids(bags, n_rows, name):
    """One bag id per row, as an array of one kind (numbers, str or bytes)."""
    try:
        ids = np.asarray(bags)
    except ValueError:  # ragged: a mix of row lists and scalars
        raise ValueError(f"{name}: expected a 1-d array of bag ids (one per row) or a list of "
                         "row lists (one per bag)") from None
    if ids.ndim != 1:
        raise ValueError(f"{name}: expected a 1-d array of bag ids (one per row), got shape {ids.shape}")
    if ids.shape[0] != n_rows:
        raise ValueError(f"{name}: expected {n_rows} bag ids (one per row of X), got {ids.shape[0]}")
    if ids.dtype.kind == "f" and not np.all(np.isfinite(ids)):
        raise ValueError(f"{name}: contains NaN or infinite bag ids")
    if ids.dtype.kind == "b":  # (a mask passed by mistake would make two bags)
        raise ValueError(f"{name}: boolean bag ids (two bags); expected one id per row")
    if ids.dtype.kind == "O" or (ids.dtype.kind in "US" and not isinstance(bags, np.ndarray)):
        # (strings from pandas come as objects; NumPy would merge 1 and '1', 'a' and b'a')
        ids = _uniform_ids(ids.tolist() if ids.dtype.kind == "O" else list(bags), name)
    return ids


def _bags_from_ids(ids, n_rows, name, lines):
    """Bags of consecutive rows with the same id; a bag that reappears is an error."""
    starts = np.r_[0, np.flatnonzero(ids[1:] != ids[:-1]) + 1].astype(np.intp)
    run_ids = ids[starts]
    uniq, counts = np.unique(run_ids, return_counts=True)
    if np.any(counts > 1):
        # the earliest row that re-opens a bag already closed
        repeated = np.isin(run_ids, uniq[counts > 1])
        seen = {}
        for k in np.flatnonzero(repeated):
            key = run_ids[k].item()
            if key in seen:
                prev = seen[key]
                raise ValueError(
                    f"{name}: bag {key!r} is not contiguous: it reappears at "
                    f"{_row_name(starts[k], lines)} after ending at "
                    f"{_row_name(starts[prev + 1] - 1, lines)}; a bag's candidates must "
                    "be consecutive rows (sort rows by bag id with a stable sort)")
            seen[key] = k
    offsets = np.r_[starts, n_rows].astype(np.intp)
    return Bags(offsets, run_ids)


def _uniform_ids(values, name):
    """Bag ids given as Python objects, as an array of one kind: all str, all bytes or
    all real numbers (booleans excluded)."""
    for kind in (str, bytes):
        if all(isinstance(v, kind) for v in values):
            return np.array(values)
    if all(isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) for v in values):
        ids = np.array(values)
        if ids.dtype.kind == "f" and not np.all(np.isfinite(ids)):
            raise ValueError(f"{name}: contains NaN or infinite bag ids")
        return ids
    raise ValueError(f"{name}: bag ids must be all numbers, all strings or all bytes, got "
                     "other objects or a mix (NumPy would merge 1 and '1')")


def _is_list_of_rows(bags):
    if isinstance(bags, np.ndarray) and bags.dtype.kind != "O":
        return False
    if isinstance(bags, (str, bytes)) or not hasattr(bags, "__len__") or len(bags) == 0:
        return False
    first = next(iter(bags))  # (by position: a pandas Series' labels need not hold 0)
    return hasattr(first, "__len__") and not isinstance(first, (str, bytes))


def _bags_from_row_lists(bags, n_rows, name):
    sizes = np.empty(len(bags), dtype=np.intp)
    expected = 0
    for b, rows in enumerate(bags):
        rows = np.asarray(rows)
        if rows.ndim != 1 or (rows.size and rows.dtype.kind not in "iu"):
            raise ValueError(f"{name}: bag {b} must be a 1-d list of integer row indices")
        if rows.size == 0:
            raise ValueError(f"{name}: bag {b} is empty; every bag needs at least one candidate")
        want = np.arange(expected, expected + rows.size)
        if not np.array_equal(rows, want):
            bad = int(np.flatnonzero(rows != want)[0])
            raise ValueError(f"{name}: bag {b} lists row {rows[bad]} where row {want[bad]} was "
                             "expected; bags must list rows 0..n-1 in order, each bag's rows "
                             "consecutive")
        sizes[b] = rows.size
        expected += rows.size
    if expected != n_rows:
        raise ValueError(f"{name}: the bags cover {expected} rows but X has {n_rows}")
    return Bags(np.r_[0, np.cumsum(sizes)].astype(np.intp), np.arange(len(bags)))


def check_bag_labels(y, bags, name="y", lines=None):
    """Return one label per bag (float64, order of first appearance).

    ``y`` holds one label per row (every row of a bag must carry the same label) or one
    per bag. Positive means ``y > 0``.
    """
    y = check_vector(y, name)
    if y.shape[0] == bags.n_rows:
        first = y[bags.offsets[:-1]]
        bad = np.flatnonzero(y != np.repeat(first, bags.sizes))
        if bad.size:
            r = int(bad[0])
            b = int(np.searchsorted(bags.offsets, r, side="right") - 1)
            raise ValueError(
                f"{name}: bag {bags.ids[b].item()!r} mixes labels: {_row_name(r, lines)} "
                f"has {y[r]:g} but {_row_name(bags.offsets[b], lines)} of the same bag "
                f"has {first[b]:g}")
        return first
    if y.shape[0] == bags.n_bags:
        return y
    raise ValueError(f"{name}: expected one label per row ({bags.n_rows}) or per bag "
                     f"({bags.n_bags}), got {y.shape[0]}")


def check_known(known, bags, name="known", lines=None):
    """Return the known candidate row of every bag (intp, -1 where latent).

    ``known`` is None (every bag latent), a boolean mask over rows (True marks a bag's
    known candidate, at most one per bag), or one integer row index per bag (-1 for a
    latent bag; the row must belong to that bag).
    """
    if known is None:
        return np.full(bags.n_bags, -1, dtype=np.intp)
    arr = np.asarray(known)
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-d array, got shape {arr.shape}")
    if arr.dtype == bool:
        if arr.shape[0] != bags.n_rows:
            raise ValueError(f"{name}: a boolean mask needs one entry per row ({bags.n_rows}), "
                             f"got {arr.shape[0]}")
        rows = np.flatnonzero(arr)
        owner = np.searchsorted(bags.offsets, rows, side="right") - 1
        dup = np.flatnonzero(owner[1:] == owner[:-1])
        if dup.size:
            k = int(dup[0])
            raise ValueError(f"{name}: bag {bags.ids[owner[k]].item()!r} has more than one known "
                             f"candidate ({_row_name(rows[k], lines)} and "
                             f"{_row_name(rows[k + 1], lines)})")
        out = np.full(bags.n_bags, -1, dtype=np.intp)
        out[owner] = rows
        return out
    if arr.dtype.kind not in "iu":
        raise ValueError(f"{name}: expected a boolean mask over rows or integer row indices "
                         f"per bag, got dtype {arr.dtype}")
    if arr.dtype.kind == "u" and arr.size and arr.max() > np.iinfo(np.intp).max:
        raise ValueError(f"{name}: row index {arr.max()} is out of range (use -1, in a signed "
                         "integer array, for a bag without a known candidate)")
    if arr.shape[0] != bags.n_bags:
        raise ValueError(f"{name}: expected one row index per bag ({bags.n_bags}), got "
                         f"{arr.shape[0]} (pass a boolean array to mark rows instead)")
    arr = arr.astype(np.intp)
    lo, hi = bags.offsets[:-1], bags.offsets[1:]
    bad = np.flatnonzero((arr != -1) & ((arr < lo) | (arr >= hi)))
    if bad.size:
        b = int(bad[0])
        raise ValueError(f"{name}: bag {bags.ids[b].item()!r} marks row {arr[b]} as its known "
                         f"candidate, but the bag is rows {lo[b]}..{hi[b] - 1}; use -1 for a "
                         "bag without a known candidate"
                         + (" (pass a boolean array to mark rows instead)"
                            if np.isin(arr, (0, 1)).all() else ""))
    return np.ascontiguousarray(arr)


def known_from_comments(comments, key=KNOWN_KEY):
    """Boolean row mask: the comments (one string per row, '' or None for none) whose
    whitespace-separated words include ``key``."""
    return np.array([bool(c) and key in str(c).split() for c in comments], dtype=bool)


def load_bags(path, n_features=None, ignore_extra_features=False, max_index=None):
    """Load a multiple-instance SVMlight file (one candidate per line, ``qid`` = bag id).

    Parameters
    ----------
    path : str or path-like
    n_features, ignore_extra_features, max_index : optional
        Passed on to :func:`svmrank.io.svmlight.load_svmlight`.

    Returns
    -------
    X : scipy.sparse.csr_matrix, shape (n_rows, n_features)
    y : ndarray of float64, shape (n_rows,)
        Every row's label (checked consistent within each bag).
    bags : ndarray, shape (n_rows,)
        Bag id (the qid) of every row; bags are checked contiguous.
    known : ndarray of bool, shape (n_rows,)
        Rows whose comment carries the word :data:`KNOWN_KEY` (at most one per bag).

    Errors (mixed-label bag, non-contiguous bag, missing qid, two known candidates in a
    bag) are ``ValueError`` naming the file, the bag and the 1-based line.
    """
    X, y, qid, comments, lines = load_svmlight_with_lines(
        path, n_features=n_features, ignore_extra_features=ignore_extra_features,
        max_index=max_index, warn_mixed_qid=False)  # (a missing bag id is an error below)
    source = str(path)
    if qid is None:
        raise ValueError(f"{source}: a bag file needs qid:<bag id> on every line")
    qid = np.asarray(qid)
    if lines.shape[0] != X.shape[0]:
        lines = None  # unusual layout: fall back to row numbers
    missing = np.flatnonzero(qid == 0) if qid.dtype.kind in "iu" else np.empty(0, int)
    if missing.size:
        raise ValueError(f"{source}: {_row_name(int(missing[0]), lines)} has no qid or qid:0 "
                         "(a bag file needs qid:<bag id> on every line; as in SVM-light, "
                         "qid:0 means no query, so bag ids are non-zero)")
    bags = check_bags(qid, X.shape[0], name=source, lines=lines)
    check_bag_labels(y, bags, name=source, lines=lines)
    known = known_from_comments(comments)
    check_known(known, bags, name=source, lines=lines)
    return X, np.asarray(y, dtype=np.float64), qid, known
