"""Input validation at the Python boundary (kernels assume what is checked here)."""
import numbers

import numpy as np
import scipy.sparse as sp

# Largest feature index the console learners accept: they keep dense weight vectors and
# a working set of dense cutting planes of this length (2^24 doubles = 128 MiB each).
MAX_TRAIN_FEATURES = 1 << 24
# Largest weight vector a model file may declare (2^27 doubles = 1 GiB).
MAX_MODEL_WEIGHTS = 1 << 27


def is_missing(value):
    """True for a missing value: None, one unequal to itself (NaN of any type, NaT) or
    one whose comparison has no truth value (pandas' NA)."""
    if value is None:
        return True
    try:
        return bool(value != value)
    except TypeError:  # (pd.NA: "boolean value of NA is ambiguous")
        return True
    except ValueError:  # (an array: not a missing value; refused elsewhere)
        return False


def parse_small_int(text, digits=18):
    """The integer written in ``text`` (decimal digits with an optional sign, checked
    by the caller), or None when it has more than ``digits`` significant digits
    (Python's int() refuses more than 4300 digits, leading zeros included)."""
    sign = "-" if text[:1] == "-" else ""
    significant = text.lstrip("+-").lstrip("0") or "0"
    return None if len(significant) > digits else int(sign + significant)


def check_matrix(X, name="X", n_features=None, min_features=1):
    """Return X as a finite CSR float64 matrix with sorted, canonical indices.

    Parameters
    ----------
    X : array-like or scipy.sparse matrix, shape (n_samples, n_features)
    name : str
        Argument name used in error messages.
    n_features : int, optional
        If given, columns beyond it are dropped (as SVM-light ignores test features
        beyond the model's highest index) and missing columns are padded.
    min_features : {1, 0}
        0 accepts a matrix without columns (an SVMlight file of labels only).
    """
    if X is None:
        raise ValueError(f"{name}: expected an array, got None")
    if sp.issparse(X):
        if X.dtype.kind == "c":
            raise ValueError(f"{name}: Complex data not supported")
        X = sp.csr_matrix(X, dtype=np.float64, copy=False)
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
            X.sort_indices()
    else:
        try:  # (converted before its dtype is read: X may be any array-like)
            arr = np.asarray(X)
            complex_data = arr.dtype.kind == "c"
            arr = arr if complex_data else arr.astype(np.float64, copy=False)
        except TypeError as exc:  # (pandas' NA is a missing value: NaN's ValueError)
            if "NAType" in str(exc):
                raise ValueError(f"{name}: contains NaN or infinite values (pd.NA)") from None
            raise TypeError(f"{name}: cannot convert to a float64 array ({exc})") from None
        except ValueError as exc:
            raise ValueError(f"{name}: cannot convert to a float64 array ({exc})") from None
        if complex_data:
            raise ValueError(f"{name}: Complex data not supported")
        if arr.ndim != 2:
            raise ValueError(f"{name}: expected a 2-d array, got {arr.ndim}-d" + (
                "; Reshape your data with X.reshape(-1, 1) for one feature or X.reshape(1, -1) "
                "for one sample" if arr.ndim < 2 else ""))
        X = sp.csr_matrix(arr)
    for axis, what in ((0, "sample"), (1, "feature"))[:2 if min_features else 1]:
        if X.shape[axis] == 0:
            raise ValueError(f"{name}: Found array with 0 {what}(s) (shape={X.shape}) while a "
                             "minimum of 1 is required.")
    if not np.all(np.isfinite(X.data)):
        raise ValueError(f"{name}: contains NaN or infinite values")
    if n_features is not None and X.shape[1] != n_features:
        if X.shape[1] > n_features:
            X = X[:, :n_features]
        else:
            X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n_features))
    if X.shape[1] > 2**31 - 1:  # (the kernels and SVMlight files index features by int32)
        raise ValueError(f"{name}: {X.shape[1]} features; at most 2147483647 are supported")
    X.indices = X.indices.astype(np.int32, copy=False)
    X.indptr = X.indptr.astype(np.int32, copy=False) if X.nnz < 2**31 else X.indptr
    return X


def check_rows(rows, n, name="rows"):
    """Distinct row indices in [0, n) as a contiguous int32 array (what the product
    kernels read through); a one-line ValueError naming ``name`` otherwise."""
    rows = np.asarray(rows)
    if rows.ndim != 1 or (rows.size and rows.dtype.kind not in "iu"):
        raise ValueError(f"{name}: expected a 1-d array of integer row indices, got shape "
                         f"{rows.shape} and dtype {rows.dtype}")
    if rows.size and (rows.min() < 0 or rows.max() >= n):
        raise ValueError(f"{name}: row indices must lie in [0, {n})")
    seen = np.zeros(n, dtype=bool)
    seen[rows] = True
    if np.count_nonzero(seen) != rows.size:
        raise ValueError(f"{name}: repeated row indices")
    return np.ascontiguousarray(rows, dtype=np.int32)


def check_vector(v, name, n=None, dtype=np.float64, finite=True, ndim=1):
    """Return v as a contiguous ``ndim``-d array of ``dtype`` (and length ``n``)."""
    if v is None:
        raise ValueError(f"{name}: requires y to be passed, but the target y is None"
                         if name == "y" else f"{name}: expected an array, got None")
    try:  # (converted before its dtype is read: v may be any array-like)
        arr = np.asarray(v)
        complex_data = dtype is not None and np.dtype(dtype).kind == "f" and arr.dtype.kind == "c"
        shape = arr.shape  # (ascontiguousarray makes a 0-d array 1-d)
        arr = arr if complex_data else np.ascontiguousarray(arr, dtype=dtype)
    except (TypeError, ValueError, OverflowError) as exc:
        raise ValueError(f"{name}: cannot convert to a {np.dtype(dtype).name} array ({exc})") from None
    if complex_data:
        raise ValueError(f"{name}: complex data not supported")
    if len(shape) != ndim:
        raise ValueError(f"{name}: expected a {ndim}-d array, got shape {shape}")
    if n is not None and arr.shape[0] != n:
        raise ValueError(f"{name}: expected length {n}, got {arr.shape[0]}")
    if finite and arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise ValueError(f"{name}: contains NaN or infinite values")
    return arr


def check_int(value, name, minimum=1):
    """Return value as an int, refusing booleans, non-integers and values below ``minimum``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral) \
            or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_verbose(value):
    """Return a ``verbose`` setting (None, a bool or an integer >= 0) as an int."""
    if value is None or isinstance(value, (bool, np.bool_)):
        return int(bool(value))
    return check_int(value, "verbose", minimum=0)


def check_positive(value, name, allow_zero=False):
    """Return ``value`` as a float after checking it is a finite positive number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if value < 0 or (value == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'non-negative' if allow_zero else 'positive'}, got {value!r}")
    return float(value)


def check_random_state(seed):
    """Return a ``numpy.random.Generator`` from None, an int, a Generator or a legacy
    ``RandomState`` (which seeds a new Generator, advancing its own state)."""
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.RandomState):
        return np.random.default_rng(seed.randint(2**63, dtype=np.int64))
    if seed is None or (isinstance(seed, (numbers.Integral, np.integer))
                        and not isinstance(seed, (bool, np.bool_)) and seed >= 0):
        return np.random.default_rng(seed)
    raise ValueError(f"random_state must be None, an int >= 0, a numpy Generator or RandomState, "
                     f"got {seed!r}")


def query_segments(qid, n):
    """Group samples by query.

    Returns
    -------
    order : ndarray of int64
        A stable permutation that makes each query contiguous (queries in order of
        first appearance).
    offsets : ndarray of int64, shape (n_queries + 1,)
        Query q occupies ``order[offsets[q]:offsets[q + 1]]``.
    """
    if qid is None:
        return np.arange(n, dtype=np.int64), np.array([0, n], dtype=np.int64)
    qid = check_vector(qid, "qid", n=n, dtype=None, finite=False)
    if qid.dtype.kind in "fc" and not np.all(np.isfinite(qid)):
        raise ValueError("qid: contains NaN or infinite values")
    try:
        _, first, inverse = np.unique(qid, return_index=True, return_inverse=True)
    except TypeError:  # e.g. None among numbers in an object array
        raise ValueError("qid: query ids must be mutually comparable (numbers or strings), "
                         "got mixed types") from None
    rank_of_first = np.empty(len(first), dtype=np.int64)
    rank_of_first[np.argsort(first, kind="stable")] = np.arange(len(first))
    group = rank_of_first[inverse.ravel()]
    order = np.argsort(group, kind="stable").astype(np.int64)
    counts = np.bincount(group, minlength=len(first))
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    return order, offsets


def qid_from_group(group, n, qid=None):
    """Query ids from LightGBM's ``group`` (query sizes, consecutive rows): query q is
    the next ``group[q]`` rows. Returns ``qid`` when ``group`` is None; both given is an
    error; the sizes must be positive integers summing to ``n`` (the number of rows)."""
    if group is None:
        return qid
    if qid is not None:
        raise ValueError("qid and group: give one of them (group is the query sizes, qid "
                         "a query id per sample)")
    sizes = np.asarray(group)
    if sizes.ndim != 1 or sizes.dtype.kind not in "iuf" or sizes.dtype.kind == "b":
        raise ValueError(f"group: expected a 1-d array of query sizes (positive integers), "
                         f"got {'shape ' + str(sizes.shape) if sizes.ndim != 1 else sizes.dtype}")
    if not len(sizes) or not np.all(np.isfinite(sizes)) or np.any(sizes < 1) \
            or np.any(sizes != np.floor(sizes)):
        bad = sizes[~np.isfinite(sizes) | (sizes < 1) | (sizes != np.floor(sizes))]
        raise ValueError("group: query sizes must be positive integers, got "
                         + (repr(bad[0].item()) if len(bad) else "none"))
    total = sum(int(size) for size in sizes.tolist())  # (Python ints: no int64 wrap-around)
    if total != n:
        raise ValueError(f"group: query sizes sum to {total}, expected the number of rows "
                         f"({n}); in a cross-validation, pass qid (one id per row) instead, "
                         "which scikit-learn splits with the rows")
    return np.repeat(np.arange(len(sizes), dtype=np.int64), sizes.astype(np.int64))
