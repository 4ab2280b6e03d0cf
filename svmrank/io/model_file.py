"""The SVM-light "Version V6.20" linear model text file.

Layout (what Joachims' svm_rank_learn / svm_perf_learn write for a linear kernel;
SVM-light V6.02's svm_learn writes the same lines under "Version V6.02")::

    SVM-light Version V6.20
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
    1 1:0.73636848 2:-0.26855063 ... #

The score of x is ``w.x - b``. SVM-light keeps the text after the ``#`` of a support
vector line as an opaque comment and never interprets it, so our metadata
(``key=value`` tokens) is written there and read back by :func:`read_model`.
"""
import dataclasses
import math
import numbers
import os
import re

import numpy as np

from .._validation import MAX_MODEL_WEIGHTS, check_matrix, check_vector, parse_small_int
from ..exceptions import InputFormatError
from .atomic import atomic_write
from .svmlight import parse_svmlight_bytes, printable, refuse_compressed, refuse_cr_line_breaks

__all__ = ["LinearModel", "read_model", "write_model"]

VERSION = "V6.20"
# Older SVM-light releases whose model text has the same layout.
READABLE_VERSIONS = ("V6.20", "V6.01", "V6.02")
# What SVM-light V6.02's svm_learn / svm_classify write and accept (its reader refuses
# any other version line), hence what our svm_learn writes.
SVM_LIGHT_VERSION = "V6.02"
N_TRAIN_KEY = "n_train"

_INT = re.compile(r"[+-]?[0-9]+")
# (unambiguous, so refusing a long digit run takes linear time, not quadratic)
DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_FORBIDDEN = re.compile("[\\s#\x00-\x1f\x7f-\x9f\ud800-\udfff]")  # (control, lone surrogate)
_KERNELS = {1: "polynomial", 2: "RBF", 3: "sigmoid", 4: "custom"}

# (what the header line holds, how to parse its value); the -u line keeps its text.
_HEADER = (
    ("kernel type", "int"),
    ("kernel parameter -d", "int"),
    ("kernel parameter -g", "float"),
    ("kernel parameter -s", "float"),
    ("kernel parameter -r", "float"),
    ("kernel parameter -u", "text"),
    ("highest feature index", "count"),
    ("number of training documents", "count"),
    ("number of support vectors plus 1", "positive"),
    ("threshold b", "float"),
)


def _token(text):
    """A str that stays one token of one line, in UTF-8."""
    return isinstance(text, str) and not _FORBIDDEN.search(text)


def check_metadata(metadata):
    """Return a copy of ``metadata`` after checking it is writable as key=value tokens."""
    if not isinstance(metadata, dict):
        raise ValueError(f"metadata: expected a dict of str -> str, got {type(metadata).__name__}")
    for key, value in metadata.items():
        if not _token(key) or not key or "=" in key:
            raise ValueError(f"metadata: keys must be non-empty str without whitespace, control "
                             f"characters, '#' or '=', got {key!r}")
        if not _token(value):
            raise ValueError(f"metadata[{key!r}]: values must be str without whitespace, control "
                             f"characters or '#', got {value!r}")
    n_train = metadata.get(N_TRAIN_KEY, "0")
    if not re.fullmatch(r"[0-9]+", n_train) or parse_small_int(n_train) is None:
        raise ValueError(f"metadata[{N_TRAIN_KEY!r}]: expected an integer in [0, 10^18) (what "
                         f"the reader reads), got {n_train!r}")
    return dict(metadata)


@dataclasses.dataclass(eq=False)
class LinearModel:
    """A linear SVM-light model: the score of x is ``w.x - b``.

    Attributes
    ----------
    w : ndarray of float64, shape (n_features,)
        Weights; ``n_features`` is the highest feature index.
    b : float
        SVM-light's threshold.
    metadata : dict of str -> str
        Free-form ``key=value`` pairs (no whitespace or '#'); ``"n_train"`` fills
        the "number of training documents" header line.
    """

    w: np.ndarray
    b: float = 0.0
    metadata: dict = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        self.w = check_vector(self.w, "w")
        if isinstance(self.b, bool) or not isinstance(self.b, numbers.Real) or not math.isfinite(self.b):
            raise ValueError(f"b must be a finite number, got {self.b!r}")
        self.b = float(self.b)
        self.metadata = check_metadata(self.metadata)

    @property
    def n_features(self):
        """Highest feature index (length of ``w``)."""
        return self.w.shape[0]

    def decision_function(self, X):
        """Scores ``X @ w - b``; columns beyond ``n_features`` are ignored, as SVM-light does."""
        X = check_matrix(X, "X", n_features=self.n_features)
        return np.asarray(X @ self.w).ravel() - self.b


def _format_model(model, version):
    w = model.w
    meta = " ".join(f"{k}={v}" for k, v in model.metadata.items() if k != N_TRAIN_KEY)
    features = "".join(f"{j + 1}:{w[j]:.8g} " for j in np.flatnonzero(w).tolist())
    return (
        f"SVM-light Version {version}\n"
        "0 # kernel type\n"
        "3 # kernel parameter -d \n"
        "1 # kernel parameter -g \n"
        "1 # kernel parameter -s \n"
        "1 # kernel parameter -r \n"
        "empty# kernel parameter -u \n"
        f"{w.shape[0]} # highest feature index \n"
        f"{model.metadata.get(N_TRAIN_KEY, '0')} # number of training documents \n"
        "2 # number of support vectors plus 1 \n"
        f"{model.b:.8g} # threshold b, each following line is a SV (starting with alpha*y)\n"
        f"1 {features}#{meta}\n"
    )


def write_model(path, model, version=VERSION):
    """Write ``model`` as an SVM-light V6.20 linear model file, atomically.

    The text is what svm_rank_learn / svm_perf_learn write for a linear model
    (weights and threshold as ``%.8g``, zero weights omitted, one support vector
    with alpha*y = 1), so svm_classify-family tools read it unchanged. The metadata
    (except ``n_train``, which goes to its header line) follows the ``#`` that ends
    the support vector line.

    Parameters
    ----------
    path : str or path-like
    model : LinearModel
    version : {"V6.20", "V6.02", "V6.01"}
        The version line: "V6.20" (default) as SVM-struct's tools write; "V6.02" for
        SVM-light V6.02's ``svm_classify``, which reads no other (same layout).
    """
    if not isinstance(model, LinearModel):
        raise ValueError(f"model: expected a LinearModel, got {type(model).__name__}")
    if version not in READABLE_VERSIONS:
        raise ValueError(f"version: expected one of {', '.join(READABLE_VERSIONS)}, got "
                         f"{version!r}")
    # Re-check: the attributes may have been changed since construction.
    model = LinearModel(model.w, model.b, model.metadata)
    if model.n_features == 0:  # (the reader refuses it)
        raise ValueError("w: a model file holds at least one weight, got none")
    text = _format_model(model, version)
    with atomic_write(path) as fh:
        fh.write(text)


def fail_at_line(source, line, expected, got):
    got = got if len(got) <= 60 else got[:60] + "..."
    got = printable(got)
    raise InputFormatError(f"{source}:{line}: expected {expected}, got '{got}'")


def _check_version(source, first):
    match = re.fullmatch(r"SVM-light Version (\S+)", first)
    if match:
        if match.group(1) not in READABLE_VERSIONS:
            fail_at_line(source, 1, f"an SVM-light model of version "
                         f"{' / '.join(READABLE_VERSIONS)} (other versions have another layout)",
                         first)
        return
    if first.startswith("SVM-multiclass"):
        fail_at_line(source, 1, "an SVM-light linear model (this is an SVM-multiclass model, "
                         "which is not supported)", first)
    if re.match(r"SVM-\S+ Version", first):
        fail_at_line(source, 1, "an SVM-light linear model (this is a model of another SVM-struct "
                         "application, which is not supported)", first)
    fail_at_line(source, 1, f"'SVM-light Version {VERSION}' (not an SVM-light model file?)", first)


def parse_header(source, lines, header=None):
    """Values of the header lines 2.. described by ``header`` ((what, kind) pairs, kind
    one of int, count, positive, float, text; this format's by default)."""
    values = []
    for k, (what, kind) in enumerate(_HEADER if header is None else header):
        lineno = k + 2
        if lineno > len(lines):
            fail_at_line(source, lineno, f"the header line '... # {what}' (truncated model file)",
                         "<end of file>")
        text = lines[lineno - 1].decode("utf-8", errors="replace").rstrip("\r")
        value = text.split("#", 1)[0]
        if kind == "text":
            values.append(value)
            continue
        value = value.strip()
        if kind == "float":
            if not DECIMAL.fullmatch(value) or not math.isfinite(float(value)):
                fail_at_line(source, lineno, f"a finite decimal number ({what})", text)
            values.append(float(value))
            continue
        if not _INT.fullmatch(value):
            fail_at_line(source, lineno, f"an integer ({what})", text)
        number = parse_small_int(value)
        if number is None:
            fail_at_line(source, lineno, f"an integer below 10^18 ({what})", text)
        if (kind == "count" and number < 0) or (kind == "positive" and number < 1):
            fail_at_line(source, lineno, f"an integer >= {0 if kind == 'count' else 1} ({what})",
                         text)
        values.append(number)
    return values


def check_weight_count(source, lineno, count, raw):
    """Refuse a header that declares more weights than fit in memory (a corrupt file)."""
    if count > MAX_MODEL_WEIGHTS:
        fail_at_line(source, lineno, f"at most {MAX_MODEL_WEIGHTS} weights (a larger model would "
                              "not fit in memory: corrupt header?)",
                     raw.decode("utf-8", errors="replace").rstrip())


def check_sv_lines(source, lines, first_sv, n_sv):
    """The n_sv support vector lines from line ``first_sv`` exist, each ends its vector
    with the '#' that SVM-light writes (a line cut short has none), and nothing follows."""
    sv_lines = lines[first_sv - 1:first_sv - 1 + n_sv]
    for k, raw in enumerate(sv_lines):
        stripped = raw.strip()
        if not stripped or stripped.startswith(b"#") or b"#" not in stripped:
            fail_at_line(source, first_sv + k, "a support vector line 'alpha*y idx:val ... #' "
                         "(no '#': truncated model file?)" if stripped else
                         "a support vector line 'alpha*y idx:val ... #'",
                         raw.decode("utf-8", errors="replace").rstrip())
    if len(sv_lines) < n_sv:
        fail_at_line(source, first_sv + len(sv_lines),
                     f"{n_sv} support vector lines (truncated model file)", "<end of file>")
    for k, raw in enumerate(lines[first_sv - 1 + n_sv:]):
        if raw.strip():
            fail_at_line(source, first_sv + n_sv + k,
                         f"the end of the file after {n_sv} support vector lines",
                         raw.decode("utf-8", errors="replace").rstrip())
    return sv_lines


def parse_metadata(comment, source, line):
    """key=value tokens of our metadata comment; {} when the comment is something else
    (svm_learn copies training-file comments there). A comment of ours (it holds an
    ``svmrank=`` token) with another token, a repeated key or a value the estimators
    cannot take is refused at ``source:line``: read as no metadata, or with a default in
    its place, it would give another model (other class labels, loss or C)."""
    tokens = comment.split()
    ours = any(token.startswith("svmrank=") for token in tokens)
    metadata = {}
    for token in tokens:
        key, sep, value = token.partition("=")
        if not sep or not key or not _token(token):
            if ours:
                fail_at_line(source, line, "svmrank's metadata: key=value tokens after the "
                             "'#' (a hand-edited model file?)", token)
            return {}
        if ours and key in metadata:
            fail_at_line(source, line, f"each metadata key once ({key}= is repeated)", token)
        metadata[key] = value
    if ours:
        from .estimator_model import metadata_problem  # (it imports this module)
        problem = metadata_problem(metadata)
        if problem:
            key, expected = problem
            fail_at_line(source, line, f"{key}= {'' if expected.startswith('(') else 'as '}"
                         f"{expected}",
                         f"{key}={metadata[key]}" if key in metadata else f"no {key}=")
    return metadata


# Bounds of a model file's reads: a header line (SVM-light writes short ones; leading
# zeros and blanks are allowed), and what a support vector line may take per weight (its
# 'idx:val ' token: a 10-digit index and a value of 17 significant digits take 36 bytes)
# and per line (label, qid and comment, which holds our metadata).
MAX_HEADER_LINE = 1 << 20
BYTES_PER_WEIGHT = 64
BYTES_PER_LINE = 1 << 20


def model_lines(path, n_header, check_header):
    """(file name, its lines as bytes, ``check_header``'s value) of a model file, read in
    bounds: an endless or huge file fails at its header, not after filling memory.

    The first ``n_header`` lines are read (each at most ``MAX_HEADER_LINE`` bytes), then
    ``check_header(source, lines)`` refuses a bad header or returns ``(value, n_sv,
    line_bytes)``: at most ``n_sv`` support vector lines of ``line_bytes`` each (and
    1 MiB of blank lines after them) are read. A UTF-8 byte order mark is skipped, a
    stray CR opening a line (LF-CR text) dropped; CR-only line ends and a missing final
    line break are refused.
    """
    source = os.fspath(path)
    with open(path, "rb") as fh:
        head = []
        for lineno in range(1, n_header + 1):
            raw = fh.readline(MAX_HEADER_LINE + 1)
            cut = not raw.endswith(b"\n")  # (at the end of the file, or a line too long)
            eof = cut and len(raw) <= MAX_HEADER_LINE
            if lineno == 1:
                if raw.startswith(b"\xef\xbb\xbf"):  # a UTF-8 byte order mark
                    raw = raw[3:]
                refuse_compressed(raw, source)
            head.append(raw)
            if cut:
                break
        buf = b"".join(head)
        refuse_cr_line_breaks(buf, source)
        lines = _split_lines(source, buf, at_end=eof)
        if cut and not eof:
            fail_at_line(source, len(lines), f"a header line of at most {MAX_HEADER_LINE} bytes "
                         "(not a model file?)", lines[-1].decode("utf-8", errors="replace"))
        value, n_sv, line_bytes = check_header(source, lines)
        limit = n_sv * line_bytes + (1 << 20)
        body = _read_at_most(fh, limit + 1)
    if len(body) > limit:
        line = len(lines) + 1 + body.count(b"\n", 0, limit)
        raise InputFormatError(f"{source}:{line}: expected the end of the file within {limit} "
                               f"bytes after the header (what {n_sv} support vector lines can "
                               "take): corrupt header, or not a model file?")
    buf += body
    refuse_cr_line_breaks(buf, source)
    return source, _split_lines(source, buf, at_end=True), value


def _read_at_most(fh, size):
    """Up to ``size`` bytes of ``fh``, read in chunks (``size`` may be far beyond the file)."""
    chunks = []
    while size > 0:
        chunk = fh.read(min(size, 1 << 24))
        if not chunk:
            break
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _split_lines(source, buf, at_end):
    """The lines of ``buf`` without their LF and a leading stray CR; at the end of the
    file, a last line without a line break is refused."""
    lines = [line[1:] if line[:1] == b"\r" else line for line in buf.split(b"\n")]
    if lines and lines[-1] == b"":
        lines.pop()
    elif lines and at_end:
        # every writer ends the file with a line break: a file without one was cut
        # short, and our metadata (class labels, pairwise weights) lives in the last
        # comment, where a cut would otherwise go unseen
        fail_at_line(source, len(lines), "a line break at the end of the line (truncated model "
                     "file?)", lines[-1].decode("utf-8", errors="replace"))
    return lines


def _check_header(source, lines):
    """The header values of an SVM-light linear model, the number of support vector
    lines and the bytes each may take (see :func:`model_lines`)."""
    first = lines[0].decode("utf-8", errors="replace").rstrip() if lines else "<end of file>"
    _check_version(source, first)
    header = parse_header(source, lines)
    kernel, n_features, sv_plus_1 = header[0], header[6], header[8]
    if kernel != 0:
        name = _KERNELS.get(kernel, "unknown")
        fail_at_line(source, 2, f"kernel type 0 (linear; {name} kernels are not supported)",
                     lines[1].decode("utf-8", errors="replace").rstrip())
    if n_features < 1:
        fail_at_line(source, 8, "a highest feature index >= 1 (a model without features "
                     "scores nothing)", lines[7].decode("utf-8", errors="replace").rstrip())
    check_weight_count(source, 8, n_features, lines[7])
    return header, sv_plus_1 - 1, BYTES_PER_LINE + BYTES_PER_WEIGHT * n_features


def read_model(path):
    """Read a linear SVM-light model file (ours, svm_learn's, svm_perf_learn's or
    svm_rank_learn's) as a :class:`LinearModel`.

    ``w`` is the sum over support vector lines of alpha*y times the vector; ``b`` is
    the threshold; ``metadata`` holds ``n_train`` (the number of training documents)
    and, for a single support vector line whose comment is ``key=value`` tokens,
    those pairs.

    Raises
    ------
    svmrank.exceptions.InputFormatError
        Naming the file and line: not a model file, an unsupported version or model
        kind, a non-linear kernel, a truncated file, non-finite numbers.
    """
    source, lines, header = model_lines(path, len(_HEADER) + 1, _check_header)
    (kernel, _, _, _, _, _, n_features, n_train, sv_plus_1, b) = header
    n_sv = sv_plus_1 - 1
    first_sv = len(_HEADER) + 2  # 1-based line number of the first support vector
    sv_lines = check_sv_lines(source, lines, first_sv, n_sv)
    metadata = {}
    w = np.zeros(n_features)
    if n_sv > 0:
        X, alpha, _, comments = parse_svmlight_bytes(
            b"\n".join(sv_lines), source, n_features=n_features, return_comments=True,
            first_line=first_sv, label_name="alpha*y", extra_hint=" (the highest feature index)")
        w = np.asarray(X.T @ alpha, dtype=np.float64).ravel()
        if not np.all(np.isfinite(w)):
            fail_at_line(source, first_sv, "finite weights (alpha*y times the support vectors)",
                         "overflow")
        if n_sv == 1:
            metadata = parse_metadata(comments[0], source, first_sv)
    metadata[N_TRAIN_KEY] = str(n_train)
    return LinearModel(w, b, metadata)
