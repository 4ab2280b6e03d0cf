"""The SVM-multiclass "Version V2.20" linear model text file.

Layout (what Joachims' svm_multiclass_learn writes for a linear kernel)::

    SVM-multiclass Version V2.20
    3 # number of classes
    2 # number of base features
    0 # loss function
    0 # kernel type
    3 # kernel parameter -d
    1 # kernel parameter -g
    1 # kernel parameter -s
    1 # kernel parameter -r
    empty# kernel parameter -u
    6 # highest feature index
    10 # number of training documents
    2 # number of support vectors plus 1
    0 # threshold b, each following line is a SV (starting with alpha*y)
    1 qid:0 1:0.5 2:-0.25 3:0.1 4:0.2 5:-0.6 6:0.05 #

All class weight vectors sit in one vector: weight j (1-based) of class c (1..m) has
index (c - 1) * d + j, d the number of base features; the score of class c is
``w_c . x - b`` (svm_multiclass_classify subtracts the threshold b from every class's
score; svm_multiclass_learn and svm_topk_learn write b = 0). Classes are the labels
1..m. SVM-multiclass keeps the text after the ``#`` of a support vector line as an opaque comment, so our
metadata (``key=value`` tokens, among them ``classes=`` with the original label of
each class: numbers, or ``s:`` and percent-encoded texts) is written there; their tools
ignore it.
"""
import dataclasses
import numbers
import re
from urllib.parse import quote, unquote

import numpy as np

from .._validation import MAX_MODEL_WEIGHTS
from .atomic import atomic_write
from .model_file import (BYTES_PER_LINE, BYTES_PER_WEIGHT, DECIMAL, check_metadata,
                         check_sv_lines, check_weight_count, fail_at_line, model_lines,
                         parse_header, parse_metadata)
from .svmlight import parse_svmlight_bytes

__all__ = ["MulticlassModel", "read_multiclass_model", "write_multiclass_model"]

VERSION = "V2.20"
# Most classes a model file may declare (what svm_topk_learn trains at most): the reader
# and classifiers keep arrays of this length whatever the number of features.
MAX_MODEL_CLASSES = 100_000
CLASSES_KEY = "classes"

# (what the header line holds, how to parse its value) after the version line.
_HEADER = (
    ("number of classes", "int"),
    ("number of base features", "int"),
    ("loss function", "int"),
    ("kernel type", "int"),
    ("kernel parameter -d", "int"),
    ("kernel parameter -g", "float"),
    ("kernel parameter -s", "float"),
    ("kernel parameter -r", "float"),
    ("kernel parameter -u", "text"),
    ("highest feature index", "int"),
    ("number of training documents", "int"),
    ("number of support vectors plus 1", "int"),
    ("threshold b", "float"),
)


@dataclasses.dataclass(eq=False)
class MulticlassModel:
    """A linear multiclass model: class c scores ``coef[c] @ x - b``.

    Attributes
    ----------
    coef : ndarray (n_classes, n_features)
    b : float
        The threshold of the header, subtracted from every class's score.
    classes : ndarray (n_classes,)
        The label of each class: numbers (1..m for a plain SVM-multiclass file) or
        strings.
    n_train : int
        Number of training documents (header).
    metadata : dict of str -> str
        Our ``key=value`` tokens (empty for files written by other tools).
    """
    coef: np.ndarray
    classes: np.ndarray
    n_train: int = 0
    metadata: dict = dataclasses.field(default_factory=dict)
    b: float = 0.0

    def scores(self, X):
        """Class scores ``X @ coef.T - b``, shape (n_samples, n_classes)."""
        return np.asarray(X @ np.asarray(self.coef).T) - self.b


def format_label(value):
    """A class label as text: integers without a decimal point, other numbers as repr,
    strings percent-encoded (no space, comma, ``=`` or ``#`` in a metadata token or a
    prediction line's first field)."""
    if isinstance(value, str):
        return quote(value, safe="")
    value = float(value)
    if value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return repr(value)


def _is_number(label):
    return isinstance(label, numbers.Real) and not isinstance(label, (bool, np.bool_))


def labels_text(labels):
    """Class labels as one metadata value: numbers as :func:`format_label` writes them,
    other labels as ``s:`` and their percent-encoded texts, comma-separated."""
    labels = np.asarray(labels).tolist()
    if all(_is_number(c) for c in labels):
        return ",".join(format_label(c) for c in labels)
    return "s:" + ",".join(format_label(str(c)) for c in labels)


def labels_value(text):
    """The labels of :func:`labels_text`'s ``text``: a str array for ``s:``, else
    float64 (ValueError if a number does not parse)."""
    if text.startswith("s:"):
        return np.array([unquote(c) for c in text[2:].split(",")])
    parts = text.split(",")
    if not all(DECIMAL.fullmatch(p) for p in parts):
        raise ValueError(f"{CLASSES_KEY}: expected comma-separated numbers, got {text!r}")
    return np.array([float(p) for p in parts])


def check_model_size(n_classes, n_features, source):
    """Refuse a model the model readers refuse: more than MAX_MODEL_CLASSES classes or
    MAX_MODEL_WEIGHTS weights."""
    if n_classes > MAX_MODEL_CLASSES:
        raise ValueError(f"{source}: {n_classes} classes; a model file holds at most "
                         f"{MAX_MODEL_CLASSES}")
    if n_classes * n_features > MAX_MODEL_WEIGHTS:
        raise ValueError(f"{source}: {n_classes} classes x {n_features} features make "
                         f"{n_classes * n_features} weights; a model file holds at most "
                         f"{MAX_MODEL_WEIGHTS}")


def write_multiclass_model(path, model):
    """Write ``model`` (a :class:`MulticlassModel`) atomically in SVM-multiclass V2.20
    layout; ``classes`` (numbers) and ``metadata`` go into the support vector comment."""
    coef = np.asarray(model.coef, dtype=np.float64)
    if coef.ndim != 2 or coef.shape[0] < 2:
        raise ValueError(f"coef: expected shape (n_classes >= 2, n_features), got {coef.shape}")
    m, d = coef.shape
    check_model_size(m, d, "coef")
    if not np.all(np.isfinite(coef)):
        raise ValueError("coef: contains NaN or infinite values")
    classes = np.asarray(model.classes)
    if classes.shape != (m,):
        raise ValueError(f"classes: expected {m} labels, got {model.classes!r}")
    text = labels_text(classes)
    try:
        classes = labels_value(text)  # (what a reader gets back)
    except ValueError:  # (nan and inf are not DECIMAL)
        raise ValueError(f"classes: expected {m} finite numbers or texts, got "
                         f"{model.classes!r}") from None
    if len(np.unique(classes)) != m:  # (as float64: 2**53 and 2**53 + 1 coincide)
        raise ValueError(f"classes: expected {m} distinct labels (numbers as float64, "
                         f"others as text), got {model.classes!r}")
    n_train = model.n_train
    b = model.b
    if isinstance(b, bool) or not isinstance(b, numbers.Real) or not np.isfinite(b):
        raise ValueError(f"b: expected a finite number, got {b!r}")
    b = float(b)
    if (isinstance(n_train, bool) or not isinstance(n_train, numbers.Integral)
            or not 0 <= n_train < 10**18):  # what the reader (and SVM-light's %ld) reads
        raise ValueError(f"n_train: expected an integer in [0, 10^18), got {n_train!r}")
    extra = check_metadata({} if model.metadata is None else model.metadata)
    if CLASSES_KEY in extra:
        raise ValueError(f"metadata: the key {CLASSES_KEY!r} holds the class labels")
    metadata = {CLASSES_KEY: text, **extra}
    flat = coef.ravel()  # weight j of class c has index (c - 1) * d + j, 1-based
    nz = np.flatnonzero(flat)
    weights = zip((nz + 1).tolist(), flat[nz].tolist())
    values = [
        f"SVM-multiclass Version {VERSION}",
        f"{m} # number of classes",
        f"{d} # number of base features",
        "0 # loss function",
        "0 # kernel type",
        "3 # kernel parameter -d ",
        "1 # kernel parameter -g ",
        "1 # kernel parameter -s ",
        "1 # kernel parameter -r ",
        "empty# kernel parameter -u ",
        f"{m * d} # highest feature index ",
        f"{int(n_train)} # number of training documents ",
        "2 # number of support vectors plus 1 ",
        f"{b!r} # threshold b, each following line is a SV (starting with alpha*y)",
        " ".join(["1 qid:0"] + [f"{i}:{v!r}" for i, v in weights]
                 + ["#" + " ".join(f"{k}={v}" for k, v in metadata.items())]),
    ]
    with atomic_write(path) as fh:
        fh.write("\n".join(values) + "\n")


def _check_version(source, first):
    match = re.fullmatch(r"SVM-multiclass Version (\S+)", first)
    if match:
        if match.group(1) != VERSION:
            fail_at_line(source, 1, f"an SVM-multiclass model of version {VERSION} (other versions "
                             f"have another layout)", first)
        return
    if first.startswith("SVM-light Version"):
        fail_at_line(source, 1, "an SVM-multiclass model (this is an SVM-light model of a "
                         "binary or ranking SVM; use svm_ap_classify / svm_classify)", first)
    fail_at_line(source, 1, f"'SVM-multiclass Version {VERSION}' (not an SVM-multiclass model "
                 "file?)", first)


def _check_header(source, lines):
    """The header values, the number of support vector lines and the bytes each may
    take (see :func:`~svmrank.io.model_file.model_lines`); every count checked, and
    against the others, before anything of their size exists."""
    first = lines[0].decode("utf-8", errors="replace").rstrip() if lines else "<end of file>"
    _check_version(source, first)
    header = parse_header(source, lines, _HEADER)
    m, d, _, kernel, _, _, _, _, _, highest, n_train, sv_plus_1, _ = header
    line_text = lambda no: lines[no - 1].decode("utf-8", errors="replace").rstrip()
    if m < 2:
        fail_at_line(source, 2, "a number of classes >= 2", line_text(2))
    if d < 0:
        fail_at_line(source, 3, "a number of base features >= 0", line_text(3))
    if kernel != 0:
        fail_at_line(source, 5, "kernel type 0 (only linear SVM-multiclass models are supported)",
                     line_text(5))
    if n_train < 0:
        fail_at_line(source, 12, "a number of training documents >= 0", line_text(12))
    if sv_plus_1 < 1:
        fail_at_line(source, 13, "a number of support vectors plus 1 >= 1", line_text(13))
    check_weight_count(source, 2, m, lines[1])
    check_weight_count(source, 3, m * max(d, 1), lines[2])
    if m > MAX_MODEL_CLASSES:  # (arrays of m entries exist whatever d is)
        fail_at_line(source, 2, f"at most {MAX_MODEL_CLASSES} classes (corrupt header?)",
                     line_text(2))
    if highest != m * d:  # (SVM-multiclass's weight vector holds the classes one by one)
        fail_at_line(source, 3, f"the number of base features that, times the {m} classes "
                     f"(line 2), makes the highest feature index {highest} (line 11)",
                     line_text(3))
    per_line = BYTES_PER_LINE + BYTES_PER_WEIGHT * (m * d + m)  # (+ the class labels)
    return header, sv_plus_1 - 1, per_line


def read_multiclass_model(path):
    """Read a linear SVM-multiclass V2.20 model file (ours or svm_multiclass_learn's).

    Raises
    ------
    svmrank.exceptions.InputFormatError
        Naming the file and line: not a model file, another model kind or version, a
        non-linear kernel, a truncated file, malformed numbers or metadata.
    """
    source, lines, header = model_lines(path, len(_HEADER) + 1, _check_header)
    m, d, _, _, _, _, _, _, _, _, n_train, sv_plus_1, b = header
    n_sv = sv_plus_1 - 1
    first_sv = len(_HEADER) + 2
    sv_lines = check_sv_lines(source, lines, first_sv, n_sv)
    w = np.zeros(m * d)
    metadata = {}
    if n_sv > 0:
        X, alpha, _, comments = parse_svmlight_bytes(
            b"\n".join(sv_lines), source, n_features=m * d, return_comments=True,
            first_line=first_sv, label_name="alpha*y",
            extra_hint=" (number of classes x number of base features)")
        if X.shape[0] != n_sv:
            fail_at_line(source, first_sv, f"{n_sv} support vector lines 'alpha*y idx:val ... #'",
                         "a blank or comment line")
        w = np.asarray(X.T @ alpha, dtype=np.float64).ravel()
        if not np.all(np.isfinite(w)):
            fail_at_line(source, first_sv, "finite weights (alpha*y times the support vectors)",
                         "overflow")
        if n_sv == 1:
            metadata = parse_metadata(comments[0], source, first_sv)
    classes = np.arange(1, m + 1, dtype=np.float64)
    if CLASSES_KEY in metadata:
        text = metadata.pop(CLASSES_KEY)
        try:
            classes = labels_value(text)
        except ValueError:
            classes = np.array([])
        if len(classes) != m:
            fail_at_line(source, first_sv, f"'{CLASSES_KEY}=' followed by {m} comma-separated "
                         "numbers (or 's:' and texts)", f"{CLASSES_KEY}={text}")
        if (classes.dtype.kind == "f" and not np.all(np.isfinite(classes))) \
                or len(np.unique(classes)) != m:
            fail_at_line(source, first_sv, f"{m} distinct finite class labels",
                         f"{CLASSES_KEY}={text}")
    return MulticlassModel(coef=w.reshape(m, d), classes=classes, n_train=n_train,
                           metadata=metadata, b=b)

