"""SVMlight text parser: one pass over a byte buffer in a ``nogil`` loop.

The kernel only tokenises and converts numbers; it reports the first problem as an
error code, a 1-based line number (relative to the buffer), the byte offset of the
offending token and one auxiliary integer. ``svmrank.io.svmlight`` turns that into a
message naming the file and line.

Line grammar (see ``svmrank.io.svmlight.load_svmlight``)::

    label [qid:N] [sid:N] [cost:F] idx:val ... [# comment]

Numbers are read by a correctly rounded fast path for plain decimals, else by libc
strtod in the "C" locale (strtod_l), so the decimal point is '.' whatever
locale.setlocale has set (plain strtod only where no C locale object can be made).
"""
from libc.math cimport isfinite
from libc.stdint cimport INT32_MAX, int32_t, int64_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memchr, memcpy

cdef extern from *:
    """
    #include <locale.h>
    #include <stdlib.h>
    #if defined(_WIN32)
    static _locale_t svmrank_c_locale = NULL;
    static void svmrank_init_c_locale(void) { svmrank_c_locale = _create_locale(LC_NUMERIC, "C"); }
    static double svmrank_strtod_c(const char *p, char **stop) {
        return svmrank_c_locale ? _strtod_l(p, stop, svmrank_c_locale) : strtod(p, stop);
    }
    #else
    #if defined(__APPLE__)
    #include <xlocale.h>
    #endif
    static locale_t svmrank_c_locale = (locale_t) 0;
    static void svmrank_init_c_locale(void) {
        svmrank_c_locale = newlocale(LC_NUMERIC_MASK, "C", (locale_t) 0);
    }
    static double svmrank_strtod_c(const char *p, char **stop) {
        return svmrank_c_locale ? strtod_l(p, stop, svmrank_c_locale) : strtod(p, stop);
    }
    #endif
    """
    void svmrank_init_c_locale() noexcept nogil
    double svmrank_strtod_c(const char *p, char **stop) noexcept nogil

svmrank_init_c_locale()  # once, at import (before any parse can run)

import numpy as np

# Error codes (kept in sync with svmrank/io/svmlight.py).
cdef enum:
    OK = 0
    E_MEMORY = 1
    E_LABEL = 2             # label is not a decimal number
    E_LABEL_NONFINITE = 3
    E_TOKEN = 4             # token is none of idx:val, qid:, sid:, cost:
    E_PAIR = 5              # malformed idx:val (no ':' right after an integer)
    E_INDEX_ZERO = 6        # index < 1
    E_INDEX_HUGE = 7        # index > INT32_MAX
    E_INDEX_ORDER = 8       # index <= previous index (aux = previous index)
    E_VALUE = 9             # value is not a decimal number
    E_VALUE_NONFINITE = 10
    E_INDEX_EXTRA = 11      # index > n_features (aux = n_features)
    E_QID = 12              # qid not an int64
    E_QID_TWICE = 13
    E_SID = 14              # sid not an integer >= 1
    E_COST = 15             # cost not a finite decimal number


cdef struct Output:
    double *data
    int32_t *indices
    int64_t nnz
    int64_t cap_nnz
    int64_t *indptr
    double *labels
    int64_t *qids
    int64_t *cstart
    int64_t *cend
    int64_t *lstart             # byte offset of each example line's first character
    int64_t n_rows
    int64_t cap_rows
    int64_t max_index
    int64_t no_qid_rows         # example lines without 'qid:'
    int64_t first_no_qid_line   # the first of them (0: none)
    int64_t first_qid_line      # the first example line with 'qid:' (0: none)


cdef struct Error:
    int code
    int64_t line
    int64_t offset
    int64_t aux


cdef inline bint is_blank(char c) noexcept nogil:
    return c == c' ' or c == c'\t' or c == c'\r' or c == c'\v' or c == c'\f'


cdef inline bint ends_number(const char *q, const char *end) noexcept nogil:
    """True when a number may end at q: end of buffer, blank, newline or '#'."""
    return q == end or is_blank(q[0]) or q[0] == c'\n' or q[0] == c'#'


cdef inline bint starts_decimal(const char *p, const char *end) noexcept nogil:
    """Reject what strtod accepts beyond decimal notation: leading blanks (handled by
    callers) and hexadecimal; 'inf'/'nan' are rejected later as non-finite.
    The buffer is NUL-terminated, so reading one byte past a short token is safe."""
    if p == end or is_blank(p[0]) or p[0] == c'\n':
        return False
    if p[0] == c'+' or p[0] == c'-':
        p += 1
    return not (p[0] == c'0' and (p[1] == c'x' or p[1] == c'X'))


# Exact powers of ten as doubles (10**22 is the largest one a double holds exactly).
cdef double[23] POW10 = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
                         1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22]


cdef inline double read_decimal(const char *p, char **stop) noexcept nogil:
    """strtod, with a fast path for plain ``[+-]digits[.digits]`` text.

    When the digits form an integer m < 2**53 and there are k <= 22 fraction digits,
    m and 10**k are exact doubles, so the one IEEE division m / 10**k is correctly
    rounded: the same result strtod gives (Clinger's fast path). Anything else
    (exponents, long mantissas, inf/nan) goes to strtod.
    """
    cdef const char *q = p
    cdef bint negative = False
    cdef uint64_t m = 0
    cdef int n_digits = 0, n_fraction = 0
    cdef double value
    if q[0] == c'-':
        negative = True
        q += 1
    elif q[0] == c'+':
        q += 1
    while c'0' <= q[0] <= c'9':
        m = m * 10 + <uint64_t> (q[0] - c'0')
        n_digits += 1
        q += 1
    if q[0] == c'.':
        q += 1
        while c'0' <= q[0] <= c'9':
            m = m * 10 + <uint64_t> (q[0] - c'0')
            n_digits += 1
            n_fraction += 1
            q += 1
    if (n_digits == 0 or n_digits > 19 or n_fraction > 22 or m > (<uint64_t> 1) << 53
            or q[0] == c'e' or q[0] == c'E'):
        return svmrank_strtod_c(p, stop)
    value = <double> m
    if n_fraction > 0:
        value = value / POW10[n_fraction]
    stop[0] = <char *> q
    return -value if negative else value


cdef inline const char *read_int64(const char *p, int64_t *value, bint *ok) noexcept nogil:
    """Parse ``[+-]digits`` as an int64 at p; ``ok`` is False when there are no digits
    or the value overflows. Returns the end of the digits."""
    cdef const char *q = p
    cdef bint negative = False
    cdef uint64_t acc = 0, digit
    cdef uint64_t limit = <uint64_t> 9223372036854775807
    cdef int n_digits = 0
    ok[0] = True
    if q[0] == c'-':
        negative = True
        limit += 1
        q += 1
    elif q[0] == c'+':
        q += 1
    while c'0' <= q[0] <= c'9':
        digit = <uint64_t> (q[0] - c'0')
        if acc > (limit - digit) // 10:
            ok[0] = False
        else:
            acc = acc * 10 + digit
        n_digits += 1
        q += 1
    if n_digits == 0:
        ok[0] = False
    value[0] = <int64_t> (0 - acc) if negative else <int64_t> acc
    return q


cdef inline bint is_prefix(const char *p, const char *end, const char *word, int n) noexcept nogil:
    cdef int k
    if end - p < n:
        return False
    for k in range(n):
        if p[k] != word[k]:
            return False
    return True


cdef int grow_rows(Output *out) noexcept nogil:
    cdef int64_t cap = out.cap_rows * 2
    cdef void *tmp
    tmp = realloc(out.indptr, (cap + 1) * sizeof(int64_t))
    if tmp == NULL:
        return E_MEMORY
    out.indptr = <int64_t *> tmp
    tmp = realloc(out.labels, cap * sizeof(double))
    if tmp == NULL:
        return E_MEMORY
    out.labels = <double *> tmp
    tmp = realloc(out.qids, cap * sizeof(int64_t))
    if tmp == NULL:
        return E_MEMORY
    out.qids = <int64_t *> tmp
    tmp = realloc(out.cstart, cap * sizeof(int64_t))
    if tmp == NULL:
        return E_MEMORY
    out.cstart = <int64_t *> tmp
    tmp = realloc(out.cend, cap * sizeof(int64_t))
    if tmp == NULL:
        return E_MEMORY
    out.cend = <int64_t *> tmp
    tmp = realloc(out.lstart, cap * sizeof(int64_t))
    if tmp == NULL:
        return E_MEMORY
    out.lstart = <int64_t *> tmp
    out.cap_rows = cap
    return OK


cdef int grow_nnz(Output *out) noexcept nogil:
    cdef int64_t cap = out.cap_nnz * 2
    cdef void *tmp
    tmp = realloc(out.data, cap * sizeof(double))
    if tmp == NULL:
        return E_MEMORY
    out.data = <double *> tmp
    tmp = realloc(out.indices, cap * sizeof(int32_t))
    if tmp == NULL:
        return E_MEMORY
    out.indices = <int32_t *> tmp
    out.cap_nnz = cap
    return OK


cdef int parse_buffer(const char *buf, int64_t n, int64_t n_features,
                      bint ignore_extra, Output *out, Error *err) noexcept nogil:
    """Parse ``buf[0:n]`` (NUL at ``buf[n]``) into ``out``; on failure fill ``err``.

    ``n_features < 0`` means no limit. Zero values are checked but not stored.
    """
    cdef const char *p = buf
    cdef const char *end = buf + n
    cdef const char *line_start = buf
    cdef const char *q
    cdef const char *tok
    cdef char *stop
    cdef int64_t line = 1
    cdef int64_t row, idx, prev, ival
    cdef double val
    cdef bint have_qid, ok
    cdef int code, n_digits

    while p < end:
        while p < end and is_blank(p[0]):
            p += 1
        if p == end:
            break
        if p[0] == c'\n':
            line += 1
            p += 1
            line_start = p
            continue
        if p[0] == c'#':
            q = <const char *> memchr(p, c'\n', end - p)
            p = end if q == NULL else q
            continue

        # An example line: the label first.
        if out.n_rows == out.cap_rows:
            code = grow_rows(out)
            if code != OK:
                err.code = code
                return code
        row = out.n_rows
        tok = p
        if not starts_decimal(p, end):
            err.code, err.line, err.offset = E_LABEL, line, tok - buf
            return err.code
        val = read_decimal(p, &stop)
        if <const char *> stop == p or not ends_number(stop, end):
            err.code, err.line, err.offset = E_LABEL, line, tok - buf
            return err.code
        if not isfinite(val):
            err.code, err.line, err.offset = E_LABEL_NONFINITE, line, tok - buf
            return err.code
        out.labels[row] = val
        out.qids[row] = 0
        out.cstart[row] = 0
        out.cend[row] = 0
        out.lstart[row] = line_start - buf
        p = stop
        prev = 0
        have_qid = False

        while True:
            while p < end and is_blank(p[0]):
                p += 1
            if p == end or p[0] == c'\n':
                break
            if p[0] == c'#':
                q = <const char *> memchr(p, c'\n', end - p)
                out.cstart[row] = p + 1 - buf
                p = end if q == NULL else q
                out.cend[row] = p - buf
                break
            tok = p
            if (c'0' <= p[0] <= c'9') or p[0] == c'+' or p[0] == c'-':
                q = p
                if q[0] == c'+' or q[0] == c'-':
                    q += 1
                idx = 0
                n_digits = 0
                while c'0' <= q[0] <= c'9':
                    if idx <= INT32_MAX:  # beyond that, only "too large" matters
                        idx = idx * 10 + (q[0] - c'0')
                    n_digits += 1
                    q += 1
                if p[0] == c'-':
                    idx = -idx
                if n_digits == 0 or q == end or q[0] != c':':
                    err.code, err.line, err.offset = E_PAIR, line, tok - buf
                    return err.code
                if idx < 1:
                    err.code, err.line, err.offset = E_INDEX_ZERO, line, tok - buf
                    return err.code
                if idx > INT32_MAX:
                    err.code, err.line, err.offset = E_INDEX_HUGE, line, tok - buf
                    return err.code
                if idx <= prev:
                    err.code, err.line, err.offset, err.aux = E_INDEX_ORDER, line, tok - buf, prev
                    return err.code
                p = q + 1
                if not starts_decimal(p, end):
                    err.code, err.line, err.offset = E_VALUE, line, tok - buf
                    return err.code
                val = read_decimal(p, &stop)
                if <const char *> stop == p or not ends_number(stop, end):
                    err.code, err.line, err.offset = E_VALUE, line, tok - buf
                    return err.code
                if not isfinite(val):
                    err.code, err.line, err.offset = E_VALUE_NONFINITE, line, tok - buf
                    return err.code
                p = stop
                prev = idx
                if 0 <= n_features < idx:
                    if not ignore_extra:
                        err.code, err.line, err.offset, err.aux = E_INDEX_EXTRA, line, tok - buf, n_features
                        return err.code
                    continue
                if idx > out.max_index:
                    out.max_index = idx
                if val != 0.0:
                    if out.nnz == out.cap_nnz:
                        code = grow_nnz(out)
                        if code != OK:
                            err.code = code
                            return code
                    out.data[out.nnz] = val
                    out.indices[out.nnz] = <int32_t> (idx - 1)
                    out.nnz += 1
            elif is_prefix(p, end, b"qid:", 4):
                if have_qid:
                    err.code, err.line, err.offset = E_QID_TWICE, line, tok - buf
                    return err.code
                q = read_int64(p + 4, &ival, &ok)
                if not ok or not ends_number(q, end):
                    err.code, err.line, err.offset = E_QID, line, tok - buf
                    return err.code
                out.qids[row] = ival
                have_qid = True
                if out.first_qid_line == 0:
                    out.first_qid_line = line
                p = q
            elif is_prefix(p, end, b"sid:", 4):
                q = read_int64(p + 4, &ival, &ok)
                if not ok or not ends_number(q, end) or ival < 1:
                    err.code, err.line, err.offset = E_SID, line, tok - buf
                    return err.code
                p = q
            elif is_prefix(p, end, b"cost:", 5):
                p += 5
                if not starts_decimal(p, end):
                    err.code, err.line, err.offset = E_COST, line, tok - buf
                    return err.code
                val = read_decimal(p, &stop)
                if (<const char *> stop == p or not ends_number(stop, end)
                        or not isfinite(val)):
                    err.code, err.line, err.offset = E_COST, line, tok - buf
                    return err.code
                p = stop
            else:
                err.code, err.line, err.offset = E_TOKEN, line, tok - buf
                return err.code
        if not have_qid:
            out.no_qid_rows += 1
            if out.first_no_qid_line == 0:
                out.first_no_qid_line = line
        out.indptr[row + 1] = out.nnz
        out.n_rows += 1
    err.line = line
    return OK


cdef void free_output(Output *out) noexcept nogil:
    free(out.data)
    free(out.indices)
    free(out.indptr)
    free(out.labels)
    free(out.qids)
    free(out.cstart)
    free(out.cend)
    free(out.lstart)


cdef object to_numpy(void *src, int64_t count, object dtype):
    arr = np.empty(count, dtype=dtype)
    cdef unsigned char[::1] view = arr.view(np.uint8)
    if count > 0:
        memcpy(&view[0], src, count * arr.itemsize)
    return arr


def parse_svmlight(bytes buf, Py_ssize_t n_features=-1, bint ignore_extra=False):
    """Parse an SVMlight byte string.

    Parameters
    ----------
    buf : bytes
        The whole file. (CPython keeps a NUL after the last byte, which bounds strtod.)
    n_features : int
        Highest allowed feature index; -1 for no limit.
    ignore_extra : bool
        Drop entries with index > n_features instead of failing.

    Returns
    -------
    (code, line, offset, aux, arrays)
        ``code`` is 0 on success, then ``arrays`` is ``(data, indices, indptr, labels,
        qids, comment_start, comment_end, max_index, (no_qid_rows, first_no_qid_line,
        first_qid_line), line_start)`` (the first lines 0 when there is none; line_start
        the byte offset in ``buf`` of each example line) and ``line`` is the number of
        the last line; otherwise ``arrays`` is None and ``line``/``offset``/``aux``
        locate the error.
    """
    cdef const char *cbuf = buf
    cdef int64_t n = len(buf)
    cdef Output out
    cdef Error err
    cdef int code
    # Small initial capacities, doubled as rows and values are parsed: memory follows
    # what the file holds, not its size (a file of blank lines needs none).
    cdef int64_t rows0 = 1024, nnz0 = 8192

    out.nnz = 0
    out.n_rows = 0
    out.max_index = 0
    out.no_qid_rows = 0
    out.first_no_qid_line = 0
    out.first_qid_line = 0
    out.cap_rows = rows0
    out.cap_nnz = nnz0
    out.data = <double *> malloc(nnz0 * sizeof(double))
    out.indices = <int32_t *> malloc(nnz0 * sizeof(int32_t))
    out.indptr = <int64_t *> malloc((rows0 + 1) * sizeof(int64_t))
    out.labels = <double *> malloc(rows0 * sizeof(double))
    out.qids = <int64_t *> malloc(rows0 * sizeof(int64_t))
    out.cstart = <int64_t *> malloc(rows0 * sizeof(int64_t))
    out.cend = <int64_t *> malloc(rows0 * sizeof(int64_t))
    out.lstart = <int64_t *> malloc(rows0 * sizeof(int64_t))
    err.code = OK
    err.line = 0
    err.offset = 0
    err.aux = 0
    try:
        if (out.data == NULL or out.indices == NULL or out.indptr == NULL
                or out.labels == NULL or out.qids == NULL or out.cstart == NULL
                or out.cend == NULL or out.lstart == NULL):
            raise MemoryError("cannot allocate buffers for the SVMlight parser")
        out.indptr[0] = 0
        with nogil:
            code = parse_buffer(cbuf, n, n_features, ignore_extra, &out, &err)
        if code == E_MEMORY:
            raise MemoryError("out of memory while parsing an SVMlight file")
        if code != OK:
            return code, err.line, err.offset, err.aux, None
        arrays = (
            to_numpy(out.data, out.nnz, np.float64),
            to_numpy(out.indices, out.nnz, np.int32),
            to_numpy(out.indptr, out.n_rows + 1, np.int64),
            to_numpy(out.labels, out.n_rows, np.float64),
            to_numpy(out.qids, out.n_rows, np.int64),
            to_numpy(out.cstart, out.n_rows, np.int64),
            to_numpy(out.cend, out.n_rows, np.int64),
            out.max_index,
            (out.no_qid_rows, out.first_no_qid_line, out.first_qid_line),
            to_numpy(out.lstart, out.n_rows, np.int64),
        )
        return OK, err.line, 0, 0, arrays
    finally:
        free_output(&out)
