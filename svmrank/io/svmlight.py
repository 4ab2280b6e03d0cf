"""Read and write SVMlight text files (``label [qid:N] idx:val ... [# comment]``).

Parsing runs in the Cython kernel ``svmrank._svmlight_fast``; this module reads the
bytes (decompressing gzip, bzip2 and xz files, recognised by their first bytes), validates
arguments and turns the kernel's error codes into one-line
:class:`~svmrank.exceptions.InputFormatError` messages naming the file and line.
:func:`iter_svmlight` reads a file in chunks of whole queries.
"""
import bz2
import gzip
import io
import lzma
import numbers
import os
import re
import stat
import warnings
import zlib

import numpy as np
import scipy.sparse as sp

from .._svmlight_fast import parse_svmlight
from .._validation import MAX_TRAIN_FEATURES, check_matrix, check_vector
from ..exceptions import InputFormatError
from .atomic import atomic_write

__all__ = ["load_svmlight", "iter_svmlight", "dump_svmlight", "parse_svmlight_bytes"]

# Kernel error code -> what was expected (the kernel's codes, cython_src/_svmlight_fast.pyx).
_EXPECTED = {
    2: "a decimal number as the {label}",
    3: "a finite {label}",
    4: "'idx:val', 'qid:N', 'sid:N', 'cost:F' or '# comment'",
    5: "'idx:val' with an integer index",
    6: "a feature index >= 1",
    7: "a feature index <= 2147483647",
    8: "feature indices in strictly increasing order (previous index {aux})",
    9: "'idx:val' with a decimal number as the value",
    10: "a finite feature value",
    11: "a feature index <= {aux}{extra_hint}",
    12: "'qid:N' with an integer N (64-bit)",
    13: "at most one 'qid:' per line",
    14: "'sid:N' with an integer N >= 1",
    15: "'cost:F' with a finite decimal number F",
}

_EXCERPT_CHARS = 40


def _excerpt(buf, offset):
    """The token starting at ``offset`` (up to the next blank), shortened for messages."""
    stop = offset
    limit = min(len(buf), offset + _EXCERPT_CHARS)
    while stop < limit and buf[stop] not in b" \t\r\n\v\f":
        stop += 1
    text = buf[offset:stop].decode("utf-8", errors="replace")
    if stop == limit and limit < len(buf) and buf[limit] not in b" \t\r\n\v\f":
        text += "..."
    return printable(text)


def printable(text):
    """``text`` with control characters and a BOM shown as escapes, so that a message
    stays one visible line."""
    return "".join(c if c.isprintable() and c != "\ufeff" else repr(c)[1:-1] for c in text)


MAX_INDEX = 2**31 - 1  # the largest feature index (X's indices are int32)


def _check_count(value, name, low):
    """None as -1, else an integer in [low, MAX_INDEX]."""
    if value is None:
        return -1
    if (isinstance(value, bool) or not isinstance(value, numbers.Integral)
            or not low <= value <= MAX_INDEX):
        raise ValueError(f"{name} must be None or an integer in [{low}, {MAX_INDEX}], got {value!r}")
    return int(value)


_BARE_CR = re.compile(rb"\r(?!\n)([^\r\n]*)")  # a CR not before LF, and the text after it


def cr_line_break(buf):
    """Byte offset of the first line ended by CR alone (old Mac text), or -1.

    Decided by the line ends: a CR before LF (CRLF) or opening a line (LF-CR text, whose
    lines all end with LF) ends no line. Another CR does when it is followed by what
    reads as a whole line: a comment, or a number and then only ``idx:val``-like tokens
    (up to a ``#``); in a file without LF, a CR in the data part of its first line is
    one too. A CR inside a comment followed by other text (``# note\\r2nd``,
    ``# measured\\r2 times``) is a character of the comment. Linear in the length of
    ``buf``."""
    if buf.count(b"\r") == buf.count(b"\r\n"):
        return -1
    if b"\n" not in buf:
        first = buf.rstrip(b" \t\r\v\f").split(b"#", 1)[0].find(b"\r")
        if first >= 0:
            return first
    for match in _BARE_CR.finditer(buf):
        at = match.start()
        if at == 0 or buf[at - 1] == 0x0A:  # (opens a line: LF-CR text)
            continue
        text = match.group(1).lstrip()
        if text.startswith(b"#") or _reads_as_example(text):
            return at
    return -1


_TOKEN = re.compile(rb"(?:[0-9]+|qid|sid|cost):\S*")


def _reads_as_example(text):
    """True for text that reads as an example line: a number, then only tokens
    ``something:value`` up to an optional comment."""
    words = text.split(b"#", 1)[0].split()
    return bool(words) and _starts_number(words[0]) and all(map(_TOKEN.fullmatch, words[1:]))


_COMPRESSED = ((b"\x1f\x8b", "gzip"), (b"BZh", "bzip2"), (b"\xfd7zXZ\x00", "xz"),
               (b"PK\x03\x04", "zip"))


def refuse_compressed(buf, source):
    """Raise InputFormatError when ``buf`` starts like a compressed file (which would
    otherwise fail as text at some line, with a message about the wrong thing)."""
    for magic, kind in _COMPRESSED:
        if buf[:len(magic)] == magic:
            raise InputFormatError(f"{source}: a {kind}-compressed file; decompress it first")


def refuse_non_text(buf, source):
    """Raise InputFormatError when ``buf`` starts as UTF-16 text (its byte order mark)
    or its first line holds a NUL byte before any comment: not UTF-8 text, which would
    otherwise fail with a message about its label or its line ends."""
    if buf[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise InputFormatError(f"{source}:1: expected UTF-8 text (convert this UTF-16 file), "
                               f"got the UTF-16 byte order mark '{buf[:2].hex(' ')}'")
    if b"\x00" in buf[:4096].split(b"\n", 1)[0].split(b"#", 1)[0]:
        raise InputFormatError(f"{source}:1: expected text, not a binary file (a NUL byte), "
                               "got '\\x00'")


def refuse_cr_line_breaks(buf, source, first_line=1):
    """Raise InputFormatError, naming the line, when ``buf`` has lines ended by CR alone
    (a comment would silently take the lines after such a CR)."""
    at = cr_line_break(buf)
    if at >= 0:
        line = first_line + buf.count(b"\n", 0, at)
        found = ("CR-only ones (old Mac text)" if b"\n" not in buf else
                 "one of CR alone (old Mac text) among LF ones")
        raise InputFormatError(f"{source}:{line}: expected LF or CRLF line ends, got {found}: "
                               "convert them to LF")


def _starts_number(word):
    """True for a word that reads as a finite number ('2', '-0.5', '1e3'; not '2nd')."""
    if word[:1] not in b"+-.0123456789" or not word[:1]:
        return False
    try:
        return abs(float(word)) < float("inf")
    except ValueError:
        return False


def parse_svmlight_bytes(buf, source, n_features=None, ignore_extra_features=False,
                         return_comments=False, first_line=1, label_name="label",
                         extra_hint="", allow_empty=False, max_index=None,
                         warn_mixed_qid=False):
    """Parse SVMlight text held in ``buf`` (bytes); errors name ``source`` and the line.

    ``first_line`` is the file line number of ``buf``'s first line (for text cut
    out of a larger file, such as the support vectors of a model file). Returns
    ``(X, y, qid, comments)`` with ``comments`` None unless ``return_comments``.
    See :func:`load_svmlight` for the format and the other parameters (here
    ``warn_mixed_qid`` is off by default: model files and multiclass data ignore qid).
    """
    return _parse(buf, source, n_features, ignore_extra_features, return_comments, first_line,
                  label_name, extra_hint, allow_empty, max_index, warn_mixed_qid)[:4]


def _parse(buf, source, n_features, ignore_extra_features, return_comments, first_line,
           label_name, extra_hint, allow_empty, max_index, warn_mixed_qid):
    """:func:`parse_svmlight_bytes`, plus the byte offset of every example line in buf and
    the kernel's (no_qid_rows, first_no_qid_line, first_qid_line)."""
    limit = _check_count(n_features, "n_features", 0)
    cap = _check_count(max_index, "max_index", 1)
    if buf[:3] == b"\xef\xbb\xbf" and first_line == 1:  # a UTF-8 byte order mark
        buf = b"   " + buf[3:]  # (same length: error offsets stay valid)
    if first_line == 1:
        refuse_compressed(buf, source)
        refuse_non_text(buf, source)
    refuse_cr_line_breaks(buf, source, first_line)
    parse_limit = limit
    if limit < 0 and cap >= 0:  # a cap on the index, not a number of columns
        parse_limit = cap
        extra_hint = (" (the largest index svmrank trains on: it keeps dense weight vectors)"
                      if cap == MAX_TRAIN_FEATURES else " (max_index)")
    ignore = bool(ignore_extra_features) and limit >= 0
    code, line, offset, aux, arrays = parse_svmlight(bytes(buf), parse_limit, ignore)
    if code == 7 and parse_limit >= 0 and not ignore:  # (the caller's limit is the lower one)
        code, aux = 11, parse_limit
    if code != 0:
        what = _EXPECTED[code].format(label=label_name, aux=aux, extra_hint=extra_hint)
        raise InputFormatError(
            f"{source}:{line + first_line - 1}: expected {what}, got '{_excerpt(buf, offset)}'")
    data, indices, indptr, labels, qids, cstart, cend, max_index, qid_lines, lstart = arrays
    if warn_mixed_qid:
        _warn_mixed_qid(source, first_line, labels.shape[0], *qid_lines)
    if labels.shape[0] == 0 and not allow_empty:
        last_line = line - 1 if line > 1 and buf.endswith(b"\n") else line
        raise InputFormatError(
            f"{source}:{last_line + first_line - 1}: expected at least one example line "
            f"'label [qid:N] idx:val ...', got '<end of file>'")
    n_cols = max_index if limit < 0 else limit
    if indptr[-1] < np.iinfo(np.int32).max:
        indptr = indptr.astype(np.int32)
    X = sp.csr_matrix((data, indices, indptr), shape=(labels.shape[0], n_cols), copy=False)
    X.has_sorted_indices = True
    comments = None
    if return_comments:
        # (surrogateescape: bytes that are not UTF-8 stay distinct, so two --groups
        # values that differ in them are two groups; encode back the same way)
        comments = [buf[s:e].decode("utf-8", errors="surrogateescape").strip() if e > s else ""
                    for s, e in zip(cstart.tolist(), cend.tolist())]
    return X, labels, qids, comments, lstart, qid_lines


def _warn_mixed_qid(source, first_line, n_rows, no_qid_rows, no_qid_line, qid_line):
    """Warn when some example lines have ``qid:`` and others do not: SVM-light reads the
    latter as query 0, which is rarely what a file that names queries means."""
    if 0 < no_qid_rows < n_rows:
        others = no_qid_rows - 1
        warnings.warn(
            f"{source}:{no_qid_line + first_line - 1}: no 'qid:' on this line"
            + (f" nor on {others} other example line{'s' if others > 1 else ''}" if others else "")
            + f", while line {qid_line + first_line - 1} has one: read as query 0, "
            "as SVM-light does", stacklevel=2)


def load_svmlight(path, n_features=None, ignore_extra_features=False, return_comments=False,
                  max_index=None, warn_mixed_qid=True, allow_empty=False):
    """Load an SVMlight / SVM-rank data file.

    Each example line is ``label [qid:N] [sid:N] [cost:F] idx:val ... [# comment]``
    with 1-based, strictly increasing indices. Lines whose first non-blank
    character is ``#`` and blank lines are skipped; CRLF line ends, tabs and a
    missing final newline are accepted. ``sid:`` and ``cost:`` (SVM-light's slack id
    and cost factor) are checked and ignored. Numbers are decimal (no hex); NaN and
    infinity are rejected everywhere. Explicit zero values are not stored in X.

    Parameters
    ----------
    path : str, os.PathLike or binary file object
        A plain, gzip, bzip2 or xz file (recognised by its first bytes, whatever its
        name); a file object must be opened in binary mode and is read from where it is.
    n_features : int, optional
        Number of columns of X; default: the highest index in the file.
    ignore_extra_features : bool
        With ``n_features``, drop entries with a larger index (as SVM-light's
        classifier ignores test features beyond the model's) instead of failing.
        Without ``n_features`` it has no effect.
    return_comments : bool
        Also return the text after the first ``#`` of each example line, stripped.
    max_index : int, optional
        Without ``n_features``: a feature index above this is an error naming its line
        (the console learners pass ``svmrank._validation.MAX_TRAIN_FEATURES``).
    warn_mixed_qid : bool
        Warn, naming the first such line, when some example lines have no ``qid:``
        while others have one (they become query 0). Turn it off for data whose qid
        is not used, such as multiclass data.
    allow_empty : bool
        Return no rows for a file without example lines (empty, or comments only)
        instead of the error (the classifiers write no predictions for it, as
        SVM-light's do).

    Returns
    -------
    X : scipy.sparse.csr_matrix of float64, shape (n_examples, n_features)
        int32 indices, sorted within rows.
    y : ndarray of float64
        Labels (relevant means > 0 for the ranking losses).
    qid : ndarray of int64
        Query id per line, 0 where a line has none (SVM-light's convention; when other
        lines have one, a warning names the first line without).
    comments : list of str
        Only when ``return_comments``.

    Raises
    ------
    svmrank.exceptions.InputFormatError
        ``"{path}:{line}: expected ..., got '...'"`` for the first malformed token,
        or when the file holds no example.
    """
    X, y, qid, comments, _ = _load(path, n_features, ignore_extra_features, return_comments,
                                   max_index, warn_mixed_qid, allow_empty)
    return (X, y, qid, comments) if return_comments else (X, y, qid)


def load_svmlight_with_lines(path, n_features=None, ignore_extra_features=False, max_index=None,
                             warn_mixed_qid=True):
    """:func:`load_svmlight` with comments, plus the 1-based file line of every example
    (int64 array), for messages about rows. The file is read once (it may be a pipe)."""
    X, y, qid, comments, buf = _load(path, n_features, ignore_extra_features, True, max_index,
                                     warn_mixed_qid)
    return X, y, qid, comments, example_lines(buf)


def _load(path, n_features, ignore_extra_features, return_comments, max_index, warn_mixed_qid,
          allow_empty=False):
    with open_data(path) as (fh, source):
        buf = _read_chunk(fh, -1, source)
    X, y, qid, comments = parse_svmlight_bytes(buf, source, n_features, ignore_extra_features,
                                               return_comments,
                                               extra_hint=" (n_features; pass ignore_extra_features=True "
                                                          "to drop larger indices)",
                                               max_index=max_index,
                                               warn_mixed_qid=warn_mixed_qid,
                                               allow_empty=allow_empty)
    return X, y, qid, comments, buf


_DECOMPRESSORS = ((b"\x1f\x8b", lambda f: gzip.GzipFile(fileobj=f, mode="rb")),
                  (b"BZh", lambda f: bz2.BZ2File(f, "rb")),
                  (b"\xfd7zXZ\x00", lambda f: lzma.LZMAFile(f, "rb")))


class _Prefixed(io.RawIOBase):
    """A read-only stream: ``head`` (bytes already read from ``stream``), then the rest
    of ``stream``."""

    def __init__(self, head, stream):
        self._head = head
        self._stream = stream

    def readable(self):
        return True

    def readinto(self, target):
        if self._head:
            n = min(len(target), len(self._head))
            target[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._stream.read(len(target))
        target[:len(data)] = data
        return len(data)


def _source_name(obj):
    name = getattr(obj, "name", None)
    return os.fsdecode(name) if isinstance(name, (str, bytes, os.PathLike)) else "<file object>"


class open_data:
    """Context manager: ``with open_data(path_or_file) as (stream, source)`` gives a binary
    stream of the data, decompressed when it starts like a gzip, bzip2 or xz file (its
    first bytes decide, not its name), and the name that messages use. A file object given
    is read from its current position and left open."""

    def __init__(self, path):
        self._path = path
        self._opened = []

    def __enter__(self):
        path = self._path
        if isinstance(path, (str, bytes, os.PathLike)):
            source = os.fsdecode(os.fspath(path))
            raw = open(path, "rb")
            self._opened.append(raw)
        elif hasattr(path, "read"):
            source = _source_name(path)
            if isinstance(path, io.TextIOBase):
                raise ValueError(f"{source}: expected a binary file object (open it with 'rb'), "
                                 "got a text one")
            raw = path
        else:
            raise TypeError(f"path: expected a str, os.PathLike or binary file object, "
                            f"got {type(path).__name__}")
        head = raw.peek(6)[:6] if hasattr(raw, "peek") else raw.read(6)
        if not isinstance(head, bytes):
            raise ValueError(f"{source}: expected a binary file object, read {type(head).__name__}")
        stream = raw if hasattr(raw, "peek") else io.BufferedReader(_Prefixed(head, raw))
        for magic, opener in _DECOMPRESSORS:
            if head.startswith(magic):
                stream = opener(stream)
                self._opened.append(stream)
                break
        return stream, source

    def __exit__(self, *exc):
        for stream in reversed(self._opened):
            stream.close()
        return False


def _read_chunk(stream, size, source):
    """Up to ``size`` bytes (fewer only at the end; -1: all), read 16 MiB at a time: a
    chunk size beyond the file costs the file, not the chunk size."""
    pieces, got = [], 0
    try:
        if size < 0:
            return stream.read()
        while got < size:
            piece = stream.read(min(size - got, 1 << 24))
            if not piece:
                break
            pieces.append(piece)
            got += len(piece)
    except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:  # (a damaged stream)
        raise InputFormatError(f"{source}: cannot decompress: {exc}") from None
    return b"".join(pieces)


def iter_svmlight(path, chunk_bytes=1 << 24, n_features=None, ignore_extra_features=False,
                  max_index=None):
    """Read an SVMlight file in chunks of whole queries, in bounded memory.

    Each chunk holds the example lines of about ``chunk_bytes`` bytes of text, cut at a
    line start and never inside a query: when the last line read has a ``qid:``, the
    lines of that query wait for the next chunk. A query larger than ``chunk_bytes``
    makes one larger chunk (memory follows the largest query). Lines without ``qid:``
    (data without queries, such as a classification set) are cut anywhere; they are
    query 0, so in a file with queries they too must be consecutive.

    The lines of a query must be consecutive: a ``qid`` seen again after another query
    is an :class:`~svmrank.exceptions.InputFormatError` naming its line (sort the file by
    qid, or read it whole with :func:`load_svmlight`). To tell, the reader keeps the
    qids seen so far: 8 bytes a query, beside the chunk. Mixed qid/no-qid lines are not
    warned about (see ``load_svmlight(warn_mixed_qid=True)``).

    Parameters
    ----------
    path : str, os.PathLike or binary file object
        Plain, gzip, bzip2 or xz (recognised by the first bytes).
    chunk_bytes : int
        Bytes of text read at a time (>= 1). Peak memory is a small multiple of it.
    n_features : int, optional
        Number of columns of every chunk's X. Default: the highest index in the file,
        found by a first pass over it (so the file is read twice; a file object must
        then be seekable). Pass it to read the file once.
    ignore_extra_features, max_index :
        As in :func:`load_svmlight`.

    Yields
    ------
    X : scipy.sparse.csr_matrix, shape (n_chunk, n_features)
    y : ndarray of float64
    qid : ndarray of int64
    first_line : int
        The 1-based line number, in the file, of the chunk's first line.

    Raises
    ------
    svmrank.exceptions.InputFormatError
        ``"{path}:{line}: ..."`` with line numbers of the whole file.
    """
    if (isinstance(chunk_bytes, bool) or not isinstance(chunk_bytes, numbers.Integral)
            or chunk_bytes < 1):
        raise ValueError(f"chunk_bytes must be an integer >= 1, got {chunk_bytes!r}")
    _check_count(n_features, "n_features", 0)
    _check_count(max_index, "max_index", 1)
    if n_features is None:
        start = None
        if not isinstance(path, (str, bytes, os.PathLike)):
            if not (getattr(path, "seekable", lambda: False)()):
                raise ValueError("n_features: required when reading a file object that "
                                 "cannot seek (the default reads the file twice)")
            start = path.tell()
        elif os.path.exists(path) and not stat.S_ISREG(os.stat(path).st_mode):
            raise ValueError(f"n_features: required when reading {os.fsdecode(path)}, which "
                             "is not a regular file (a pipe cannot be read twice, as the "
                             "default does)")
        n_features = 0
        for X, _, _, _ in _iter_chunks(path, int(chunk_bytes), None, False, max_index):
            n_features = max(n_features, X.shape[1])
        if start is not None:
            path.seek(start)
    return _iter_chunks(path, int(chunk_bytes), n_features, ignore_extra_features, max_index)


def _iter_chunks(path, chunk_bytes, n_features, ignore_extra, max_index):
    hint = " (n_features; pass ignore_extra_features=True to drop larger indices)"
    with open_data(path) as (stream, source):
        carry = b""
        line0 = 1  # file line of carry's first line
        seen = np.empty(0, dtype=np.int64)  # qids of the queries already yielded, sorted
        last = None  # qid of the last query yielded, or None
        want = chunk_bytes
        eof = False
        total = 0
        while not eof:
            block = _read_chunk(stream, want, source)
            eof = not block
            buf = carry + block
            del block
            cut = len(buf) if eof else buf.rfind(b"\n") + 1
            if cut == 0:  # no whole line yet
                carry, want = buf, want * 2
                continue
            X, y, qid, _, lstart, has_qid = _parse_chunk(
                buf, cut, source, line0, n_features, ignore_extra, max_index, hint)
            n = y.shape[0]
            if n and has_qid and not eof:
                # hold back the lines of the last query (it may go on in the next block)
                r = n - 1
                while r > 0 and qid[r - 1] == qid[-1]:
                    r -= 1
                if r == 0:  # one query so far: read on, more at a time
                    carry, want = buf, want * 2
                    continue
                n, cut = r, int(lstart[r])
                X = _head_rows(X, n)
                y, qid = y[:n], qid[:n]
            want = chunk_bytes
            if n:  # (lines without qid: are query 0, checked alike whatever the chunks)
                seen, last = _check_queries(qid, lstart, buf, source, line0, seen, last)
            if n:
                total += n
                yield X, y, qid, line0 + buf.count(b"\n", 0, int(lstart[0]))
            line0 += buf.count(b"\n", 0, cut)
            carry = buf[cut:]
            del buf, X, y, qid, lstart
        if total == 0:
            raise InputFormatError(f"{source}:{max(line0 - 1, 1)}: expected at least one example "
                                   "line 'label [qid:N] idx:val ...', got '<end of file>'")


def _parse_chunk(buf, cut, source, line0, n_features, ignore_extra, max_index, hint):
    """Parse buf[:cut] (lines from file line ``line0``): X, y, qid, None, the example
    lines' byte offsets in buf, and whether a line has ``qid:``."""
    text = buf if cut == len(buf) else buf[:cut]
    X, y, qid, _, lstart, qid_lines = _parse(
        text, source, n_features, ignore_extra, False, line0, "label", hint, True, max_index,
        False)
    return X, y, qid, None, lstart, qid_lines[2] != 0


def _head_rows(X, n):
    """The first n rows of CSR X, sharing its arrays."""
    nnz = X.indptr[n]
    head = sp.csr_matrix((X.data[:nnz], X.indices[:nnz], X.indptr[:n + 1]),
                         shape=(n, X.shape[1]), copy=False)
    head.has_sorted_indices = True
    return head


def _check_queries(qid, lstart, buf, source, line0, seen, last):
    """Refuse a query whose lines are not consecutive (seen before, in an earlier chunk
    or earlier in this one). ``seen`` is the sorted array of the queries of the earlier
    chunks (8 bytes a query); returns it with this chunk's added, and the last qid."""
    starts = np.flatnonzero(np.concatenate([[True], qid[1:] != qid[:-1]]))
    runs = qid[starts]
    uniq, first = np.unique(runs, return_index=True)
    again = np.arange(runs.size) != first[np.searchsorted(uniq, runs)]
    at = np.minimum(np.searchsorted(seen, runs), max(seen.size - 1, 0))
    earlier = seen[at] == runs if seen.size else np.zeros(runs.size, dtype=bool)
    if last is not None and runs[0] == last:  # (the query the previous chunk ended with)
        earlier[0] = False
    bad = np.flatnonzero(again | earlier)
    if bad.size:
        row = int(starts[bad[0]])
        line = line0 + buf.count(b"\n", 0, int(lstart[row]))
        raise InputFormatError(
            f"{source}:{line}: expected the lines of a query to be consecutive, got "
            f"qid:{int(qid[row])} again after other queries"
            + (" (a line without qid: is in query 0)" if qid[row] == 0 else "")
            + " (sort the file by qid, or read it whole with load_svmlight)")
    return np.insert(seen, np.searchsorted(seen, uniq), uniq), int(qid[-1])


def example_lines(buf):
    """1-based line number of every example line (not blank, not a comment) of SVMlight
    text ``buf``."""
    if buf[:3] == b"\xef\xbb\xbf":
        buf = buf[3:]
    return np.array([number for number, text in enumerate(buf.split(b"\n"), start=1)
                     if text.strip() and not text.lstrip().startswith(b"#")], dtype=np.int64)


def _format_float(value):
    """Shortest round-trip text of a float; integral values without the '.0'."""
    text = repr(value)
    return text[:-2] if text.endswith(".0") else text


def _check_qid(qid, n):
    arr = np.asarray(qid)
    if arr.dtype.kind == "f":
        arr = check_vector(arr, "qid", n=n)
        if not np.all(arr == np.round(arr)) or np.any(np.abs(arr) >= 2.0 ** 63):
            raise ValueError("qid: expected integer values")
    elif arr.dtype.kind not in "iub":
        raise ValueError(f"qid: expected an integer array, got dtype {arr.dtype}")
    elif arr.dtype.kind == "u" and arr.size and arr.max() > np.iinfo(np.int64).max:
        raise ValueError("qid: expected integer values below 2**63")
    return check_vector(arr, "qid", n=n, dtype=np.int64)


def dump_svmlight(path, X, y, qid=None, comments=None):
    """Write X, y (and qid, comments) as an SVMlight file, atomically.

    Zeros are not written; floats are written in their shortest round-trip form
    (integral values without ``.0``), so :func:`load_svmlight` gives back the same
    arrays (pass ``n_features=X.shape[1]`` to keep trailing empty columns).

    Parameters
    ----------
    path : str or os.PathLike
    X : array-like or sparse matrix, shape (n_samples, n_features)
    y : array-like of float, shape (n_samples,)
    qid : array-like of int, optional
        Written as ``qid:N`` on every line when given.
    comments : sequence of str, optional
        Written as ``# comment`` when not blank; must not contain line breaks.
        Surrounding blanks are dropped (the reader strips them).
    """
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise ValueError(f"dump_svmlight(path, X, y): path must be a file name, got "
                         f"{type(path).__name__} (scikit-learn's dump_svmlight_file takes "
                         "X, y first)")
    X = check_matrix(X, "X", min_features=0)  # (lines of a label only are valid)
    n = X.shape[0]
    y = check_vector(y, "y", n=n)
    qid = None if qid is None else _check_qid(qid, n)
    if comments is not None:
        comments = list(comments)
        if len(comments) != n:
            raise ValueError(f"comments: expected length {n}, got {len(comments)}")
        for i, c in enumerate(comments):
            if c is not None and not isinstance(c, str):
                raise ValueError(f"comments[{i}]: expected a str, got {type(c).__name__}")
            if c and ("\n" in c or "\r" in c):
                raise ValueError(f"comments[{i}]: must not contain a line break")
            try:
                (c or "").encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError(f"comments[{i}]: not encodable as UTF-8 (a lone surrogate?)") from None
    labels = [_format_float(v) for v in y.tolist()]
    nonzero = X.data != 0
    values = [_format_float(v) for v in X.data[nonzero].tolist()]
    columns = (X.indices[nonzero].astype(np.int64) + 1).tolist()
    rows = np.repeat(np.arange(n), np.diff(X.indptr))
    row_counts = np.bincount(rows[nonzero], minlength=n)
    indptr = np.concatenate([[0], np.cumsum(row_counts)]).tolist()
    qids = None if qid is None else qid.tolist()
    with atomic_write(path) as fh:
        for i in range(n):
            parts = [labels[i]]
            if qids is not None:
                parts.append(f"qid:{qids[i]}")
            parts.extend(f"{columns[k]}:{values[k]}" for k in range(indptr[i], indptr[i + 1]))
            if comments is not None and comments[i] and comments[i].strip():
                parts.append("# " + comments[i].strip())
            fh.write(" ".join(parts) + "\n")
