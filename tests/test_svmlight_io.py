"""SVMlight reader/writer: the Cython parser against a plain-Python reference parser,
error messages, dump/load round trips and agreement with scikit-learn on real files."""
import math
import os
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from svmrank.exceptions import InputFormatError
from svmrank.io import dump_svmlight, load_svmlight
from svmrank.io.svmlight import parse_svmlight_bytes

from conftest import shared_file

# ---------------------------------------------------------------------------
# Reference parser: regular expressions and float(), one line at a time.
# ---------------------------------------------------------------------------

BLANKS = b" \t\r\v\f"
DECIMAL = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
INTEGER = re.compile(rb"[+-]?\d+")
INT64 = (-2**63, 2**63 - 1)


class RefParseError(Exception):
    def __init__(self, line):
        super().__init__(line)
        self.line = line


def _decimal(token):
    if not DECIMAL.fullmatch(token):
        return None
    value = float(token)
    return value if math.isfinite(value) else None


def reference_parse(buf, n_features=None, ignore_extra=False):
    """Return (dense rows as dicts, labels, qids, comments, max_index, example lines
    with 'qid:', example lines without) or raise RefParseError(line) for the first bad
    line."""
    rows, labels, qids, comments = [], [], [], []
    with_qid, without_qid = [], []
    max_index = 0
    for lineno, raw in enumerate(buf.split(b"\n"), 1):
        body, sharp, comment = raw.partition(b"#")
        body = body.strip(BLANKS)
        if not body:
            continue  # blank line or comment line
        tokens = re.split(rb"[ \t\r\v\f]+", body)
        label = _decimal(tokens[0])
        if label is None:
            raise RefParseError(lineno)
        row, qid, prev = {}, 0, 0
        seen_qid = False
        for tok in tokens[1:]:
            if tok.startswith(b"qid:"):
                text = tok[4:]
                if seen_qid or not INTEGER.fullmatch(text) or not INT64[0] <= int(text) <= INT64[1]:
                    raise RefParseError(lineno)
                qid, seen_qid = int(text), True
            elif tok.startswith(b"sid:"):
                text = tok[4:]
                if not INTEGER.fullmatch(text) or not 1 <= int(text) <= INT64[1]:
                    raise RefParseError(lineno)
            elif tok.startswith(b"cost:"):
                if _decimal(tok[5:]) is None:
                    raise RefParseError(lineno)
            elif tok[:1] in (b"+", b"-") or tok[:1].isdigit():
                idx, colon, val = tok.partition(b":")
                if not colon or not INTEGER.fullmatch(idx):
                    raise RefParseError(lineno)
                idx = int(idx)
                if not 1 <= idx <= 2**31 - 1 or idx <= prev:
                    raise RefParseError(lineno)
                value = _decimal(val)
                if value is None:
                    raise RefParseError(lineno)
                prev = idx
                if n_features is not None and idx > n_features:
                    if not ignore_extra:
                        raise RefParseError(lineno)
                    continue
                max_index = max(max_index, idx)
                if value != 0:
                    row[idx - 1] = value
            else:
                raise RefParseError(lineno)
        rows.append(row)
        labels.append(label)
        qids.append(qid)
        (with_qid if seen_qid else without_qid).append(lineno)
        comments.append(comment.decode("utf-8", errors="surrogateescape").strip() if sharp else "")
    if not rows:
        raise RefParseError(None)
    return rows, labels, qids, comments, max_index, with_qid, without_qid


def entries(rows):
    """(row, column, value) triples in row-major order."""
    return [(i, j, row[j]) for i, row in enumerate(rows) for j in sorted(row)]


def matrix_entries(X):
    coo = X.tocoo()
    return sorted(zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist()))


def assert_same_as_reference(buf, n_features=None, ignore_extra=False):
    try:
        ref = reference_parse(buf, n_features, ignore_extra)
    except RefParseError as exc:
        with pytest.raises(InputFormatError) as info:
            parse_svmlight_bytes(buf, "data.txt", n_features, ignore_extra)
        message = str(info.value)
        assert re.fullmatch(r"data\.txt:\d+: expected .+, got '.*'", message, re.S), message
        if exc.line is not None:
            assert message.startswith(f"data.txt:{exc.line}: "), (message, exc.line)
        return
    rows, labels, qids, comments, max_index, with_qid, without_qid = ref
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        X, y, qid, got_comments = parse_svmlight_bytes(buf, "data.txt", n_features, ignore_extra,
                                                       return_comments=True, warn_mixed_qid=True)
    messages = [str(w.message) for w in caught]
    if with_qid and without_qid:  # mixed: one warning naming the first line without
        assert len(messages) == 1 and messages[0].startswith(
            f"data.txt:{without_qid[0]}: no 'qid:' on this line"), messages
        assert f"while line {with_qid[0]} has one" in messages[0], messages
        others = len(without_qid) - 1
        assert (f"nor on {others} other" in messages[0]) == (others > 0), messages
    else:
        assert messages == []
    n_cols = max_index if n_features is None else n_features
    assert isinstance(X, sp.csr_matrix)
    assert X.shape == (len(rows), n_cols)
    assert X.dtype == np.float64 and X.indices.dtype == np.int32
    assert X.has_sorted_indices and np.all(X.data != 0)
    X.check_format(full_check=True)
    assert matrix_entries(X) == entries(rows)
    assert y.dtype == np.float64 and qid.dtype == np.int64
    np.testing.assert_array_equal(y, labels)
    np.testing.assert_array_equal(qid, qids)
    assert got_comments == comments


# ---------------------------------------------------------------------------
# Random files (valid, then corrupted) compared with the reference.
# ---------------------------------------------------------------------------

decimal_text = st.one_of(
    st.from_regex(rb"[+-]?(?:\d{1,25}(?:\.\d{0,25})?|\.\d{1,25})(?:[eE][+-]?\d{1,3})?", fullmatch=True),
    st.floats(allow_nan=False, allow_infinity=False).map(lambda v: repr(v).encode()),
    st.floats(min_value=-1e6, max_value=1e6).map(lambda v: b"%.6f" % v),
    st.integers(-5, 5).map(lambda v: str(v).encode()),
    st.sampled_from([b"0", b"-0", b"0.000000", b"1", b"-1", b"1e-320", b"4.9e-324",
                     b"1.7976931348623157e308", b"9007199254740993", b"0.1", b"1.", b".5"]),
)
blank = st.sampled_from([b" ", b"\t", b"  ", b" \t", b"\v", b"\f"])
comment_text = st.text(st.characters(blacklist_characters="\n\r", blacklist_categories=("Cs",)),
                       max_size=12).map(lambda s: s.encode("utf-8"))


@st.composite
def example_line(draw):
    tokens = [draw(decimal_text)]
    extras = []
    if draw(st.booleans()):
        extras.append(b"qid:%d" % draw(st.integers(*INT64)))
    if draw(st.integers(0, 5)) == 0:
        extras.append(b"sid:%d" % draw(st.integers(1, 10**6)))
    if draw(st.integers(0, 5)) == 0:
        extras.append(b"cost:" + draw(decimal_text))
    indices = sorted(draw(st.sets(st.one_of(st.integers(1, 40), st.integers(1, 2**31 - 1)),
                                  max_size=8)))
    features = [b"%d:%s" % (j, draw(decimal_text)) for j in indices]
    if draw(st.booleans()):
        tokens += extras + features
    else:
        tokens += features + extras  # SVM-light accepts qid/sid/cost anywhere
    sep = draw(blank)
    line = draw(st.sampled_from([b"", b" ", b"\t"])) + sep.join(tokens)
    if draw(st.booleans()):
        line += draw(st.sampled_from([b" #", b"#", b"\t# "])) + draw(comment_text)
    elif draw(st.booleans()):
        line += draw(blank)
    return line


other_line = st.one_of(
    st.just(b""), blank, comment_text.map(lambda c: b"#" + c),
    comment_text.map(lambda c: b"  # " + c),
)


@st.composite
def svmlight_file(draw):
    lines = draw(st.lists(st.one_of(example_line(), example_line(), other_line), min_size=0, max_size=8))
    eol = draw(st.sampled_from([b"\n", b"\r\n"]))
    text = eol.join(lines)
    if lines and draw(st.booleans()):
        text += eol
    return text


BAD_TOKENS = [b"nan", b"inf", b"-inf", b"1:nan", b"1:inf", b"1:1e999", b"0:1", b"-3:1", b"a:1",
              b"1:", b":1", b"1:1x", b"1:2:3", b"1:0x1p3", b"0x10", b"3", b"1::2", b"qid:1.5",
              b"qid:", b"qid:x", b"qid:99999999999999999999", b"sid:0", b"sid:-1", b"cost:nan",
              b"cost:", b"2147483648:1", b"1:1,5", b"1:\x00", b"\xff", b"1:1e", b"1:+", b"1:.",
              b"qid:1 qid:2", b"5:1 5:1", b"6:1 2:1", b"1: 2", b"1 :2", b"foo"]


@st.composite
def corrupted_file(draw):
    lines = draw(st.lists(example_line(), min_size=1, max_size=6))
    k = draw(st.integers(0, len(lines) - 1))
    bad = draw(st.sampled_from(BAD_TOKENS))
    where = draw(st.sampled_from(["append", "label", "prefix"]))
    if where == "append":
        body, sharp, comment = lines[k].partition(b"#")
        lines[k] = body.rstrip(BLANKS) + b" " + bad + (b" #" + comment if sharp else b"")
    elif where == "label":
        lines[k] = bad + b" 1:1"
    else:
        lines[k] = b"1 " + bad + b" 1000000:1"
    return b"\n".join(lines)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(svmlight_file())
def test_random_files_match_reference(buf):
    assert_same_as_reference(buf)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corrupted_file())
def test_corrupted_files_fail_like_reference(buf):
    assert_same_as_reference(buf)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(svmlight_file(), st.integers(0, 45), st.booleans())
def test_n_features_matches_reference(buf, n_features, ignore_extra):
    assert_same_as_reference(buf, n_features, ignore_extra)


def random_decimal_strings(rng, n):
    """Decimal texts around the fast path's limits: 1-25 digits, 0-25 of them after
    the point, sometimes an exponent."""
    texts = []
    for _ in range(n):
        n_digits = int(rng.integers(1, 26))
        digits = "".join(map(str, rng.integers(0, 10, n_digits)))
        point = int(rng.integers(0, n_digits + 1))
        text = digits[:point] + "." + digits[point:] if point < n_digits else digits
        if rng.random() < 0.2:
            text += "e%d" % rng.integers(-30, 30)
        texts.append(("-" if rng.random() < 0.3 else "") + text)
    return texts


@pytest.mark.parametrize("seed", range(3))
def test_decimal_conversion_is_correctly_rounded(seed):
    # Python's float() rounds correctly; so must the kernel's fast path and strtod.
    texts = random_decimal_strings(np.random.default_rng(seed), 20000)
    buf = "".join(f"{t} 1:{t}\n" for t in texts).encode()
    X, y, _, _ = parse_svmlight_bytes(buf, "numbers.txt", n_features=1)
    expected = np.array([float(t) for t in texts])
    np.testing.assert_array_equal(y, expected)
    np.testing.assert_array_equal(X.toarray().ravel(), expected)


def comma_locale(tmp_path):
    """(name, environment) of a locale whose decimal point is ',', or None: one the
    system has, else one built by localedef into tmp_path."""
    import shutil
    import subprocess
    import sys
    probe = ("import locale, sys\n"
             "try:\n    locale.setlocale(locale.LC_ALL, sys.argv[1])\n"
             "except locale.Error:\n    sys.exit(1)\n"
             "sys.exit(locale.localeconv()['decimal_point'] != ',')\n")
    for env in ({}, {"LOCPATH": str(tmp_path)}):
        if env and shutil.which("localedef"):
            subprocess.run(["localedef", "-i", "de_DE", "-f", "ISO-8859-1",
                            str(tmp_path / "de_DE.ISO-8859-1")], capture_output=True)
        for name in ("de_DE.ISO-8859-1", "de_DE.UTF-8", "fr_FR.UTF-8", "de_DE", "fr_FR"):
            run_env = {**os.environ, **env}
            if subprocess.run([sys.executable, "-c", probe, name], env=run_env).returncode == 0:
                return name, run_env
    return None


def test_numbers_do_not_follow_the_locale(tmp_path):
    # strtod's slow path (exponents, long mantissas) must read '.' under any locale.
    import subprocess
    import sys
    found = comma_locale(tmp_path)
    if found is None:
        pytest.skip("no locale with a decimal comma is available or can be built")
    name, env = found
    code = ("import locale, sys\n"
            "locale.setlocale(locale.LC_ALL, sys.argv[1])\n"
            "from svmrank.io.svmlight import parse_svmlight_bytes\n"
            "X, y, _, _ = parse_svmlight_bytes(b'1.5e0 1:1.5e3 2:0.12345678901234567890123\\n'"
            ", 'f')\n"
            "print(float(y[0]), float(X[0, 0]), float(X[0, 1]))\n")
    out = subprocess.run([sys.executable, "-c", code, name], env=env, capture_output=True,
                         text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1.5", "1500.0", repr(0.12345678901234567890123)]


# ---------------------------------------------------------------------------
# Hand-written cases.
# ---------------------------------------------------------------------------

def write(tmp_path, data, name="data.txt"):
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return path


def test_basic_file_with_everything(tmp_path):
    text = ("# a header comment\n"
            "2 qid:7 1:0.5 3:-2 # first doc \r\n"
            "\n"
            "   \t\n"
            "0\tqid:7\tsid:3\tcost:0.5\t2:1e-3#second\n"
            "  # indented comment line\n"
            "-1 4:0 5:7")
    with pytest.warns(UserWarning, match=r"data\.txt:7: no 'qid:' on this line, while line 2"):
        X, y, qid, comments = load_svmlight(write(tmp_path, text), return_comments=True)
    np.testing.assert_array_equal(X.toarray(), [[0.5, 0, -2, 0, 0], [0, 1e-3, 0, 0, 0], [0, 0, 0, 0, 7]])
    np.testing.assert_array_equal(y, [2, 0, -1])
    np.testing.assert_array_equal(qid, [7, 7, 0])
    assert comments == ["first doc", "second", ""]
    assert X.nnz == 4  # the explicit zero 4:0 is not stored, but counts for n_features
    assert X.shape == (3, 5)


def test_returns_three_arrays_without_comments(tmp_path):
    result = load_svmlight(write(tmp_path, "1 1:1\n"))
    assert len(result) == 3


def test_qid_extremes(tmp_path):
    _, _, qid = load_svmlight(write(tmp_path, "1 qid:9223372036854775807\n1 qid:-9223372036854775808\n"
                                              "1 qid:+5\n1 qid:-0 sid:2\n"))
    np.testing.assert_array_equal(qid, [2**63 - 1, -2**63, 5, 0])


def test_lines_without_qid_among_lines_with_qid_warn(tmp_path):
    path = write(tmp_path, "# header\n1 qid:3 1:1\n0 qid:3 2:1\n\n1 1:1\n0 qid:0 2:1\n0 2:1\n")
    with pytest.warns(UserWarning) as caught:
        _, _, qid = load_svmlight(path)
    np.testing.assert_array_equal(qid, [3, 3, 0, 0, 0])
    assert [str(w.message) for w in caught] == [
        f"{path}:5: no 'qid:' on this line nor on 1 other example line, while line 2 has "
        "one: read as query 0, as SVM-light does"]


@pytest.mark.parametrize("text, warn", [("1 1:1\n0 2:1\n", True), ("1 qid:1 1:1\n0 qid:0 2:1\n", True),
                                        ("1 qid:1 1:1\n0 2:1\n", False)])
def test_consistent_qids_or_warn_mixed_qid_false_do_not_warn(tmp_path, text, warn):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_svmlight(write(tmp_path, text), warn_mixed_qid=warn)


def test_labels_any_real(tmp_path):
    _, y, _ = load_svmlight(write(tmp_path, "+1\n-1\n0\n4\n2.5\n-1e-3\n"))
    np.testing.assert_array_equal(y, [1, -1, 0, 4, 2.5, -1e-3])


def test_lines_without_features(tmp_path):
    X, y, _ = load_svmlight(write(tmp_path, "1\n-1 # no features\n"))
    assert X.shape == (2, 0)
    dump_svmlight(tmp_path / "out.txt", X, y, qid=[3, 3], comments=["", "no features"])
    assert (tmp_path / "out.txt").read_text() == "1 qid:3\n-1 qid:3 # no features\n"


def test_n_features_pads_and_rejects(tmp_path):
    path = write(tmp_path, "1 1:1 3:2\n-1 2:4 9:5 10:6\n")
    X, _, _ = load_svmlight(path, n_features=12)
    assert X.shape == (2, 12)
    with pytest.raises(InputFormatError, match=r"data\.txt:2: expected a feature index <= 5 .*got '9:5'"):
        load_svmlight(path, n_features=5)
    X, _, _ = load_svmlight(path, n_features=5, ignore_extra_features=True)
    np.testing.assert_array_equal(X.toarray(), [[1, 0, 2, 0, 0], [0, 4, 0, 0, 0]])
    # without n_features, ignore_extra_features has nothing to act on: max_index still holds
    with pytest.raises(InputFormatError, match=r"data\.txt:2: expected a feature index <= 5"):
        load_svmlight(path, max_index=5, ignore_extra_features=True)


def test_bad_n_features_argument(tmp_path):
    path = write(tmp_path, "1 1:1\n")
    for bad in (-1, 2.0, "3", True, 2**31, 2**70):
        with pytest.raises(ValueError, match=r"n_features must be None or an integer in \[0, 2147483647\]"):
            load_svmlight(path, n_features=bad)
    for bad in (0, -1, 3.7, 2**70):
        with pytest.raises(ValueError, match=r"max_index must be None or an integer in \[1, "):
            load_svmlight(path, max_index=bad)


@pytest.mark.parametrize("line, expected, got", [
    ("abc 1:1", "a decimal number as the label", "abc"),
    ("1:1 2:2", "a decimal number as the label", "1:1"),
    ("nan 1:1", "a finite label", "nan"),
    ("1e999 1:1", "a finite label", "1e999"),
    ("0x10 1:1", "a decimal number as the label", "0x10"),
    ("1 1:nan", "a finite feature value", "1:nan"),
    ("1 1:-inf", "a finite feature value", "1:-inf"),
    ("1 0:1", "a feature index >= 1", "0:1"),
    ("1 2:1 2:3", "strictly increasing order (previous index 2)", "2:3"),
    ("1 3:1 2:3", "strictly increasing order (previous index 3)", "2:3"),
    ("1 1:2:3", "'idx:val' with a decimal number as the value", "1:2:3"),
    ("1 1:", "'idx:val' with a decimal number as the value", "1:"),
    ("1 1: 2", "'idx:val' with a decimal number as the value", "1:"),
    ("1 1.5:2", "'idx:val' with an integer index", "1.5:2"),
    ("1 7", "'idx:val' with an integer index", "7"),
    ("1 2147483648:1", "a feature index <= 2147483647", "2147483648:1"),
    ("1 qid:1.5 1:1", "'qid:N' with an integer N", "qid:1.5"),
    ("1 qid:1 qid:2", "at most one 'qid:' per line", "qid:2"),
    ("1 qid:9223372036854775808", "'qid:N' with an integer N (64-bit)", "qid:9223372036854775808"),
    ("1 qid:-9223372036854775809", "'qid:N' with an integer N (64-bit)", "qid:-9223372036854775809"),
    ("1 qid: 3", "'qid:N' with an integer N (64-bit)", "qid:"),
    ("1 sid:0", "'sid:N' with an integer N >= 1", "sid:0"),
    ("1 cost:inf", "'cost:F' with a finite decimal number F", "cost:inf"),
    ("1 1:1 junk", "'idx:val', 'qid:N', 'sid:N', 'cost:F' or '# comment'", "junk"),
    ("1 1:1 2:3trailing", "'idx:val' with a decimal number as the value", "2:3trailing"),
])
def test_error_messages(tmp_path, line, expected, got):
    path = write(tmp_path, "# header\n1 1:1\n\n" + line + "\n2 1:1\n")
    with pytest.raises(InputFormatError) as info:
        load_svmlight(path)
    message = str(info.value)
    assert message.startswith(f"{path}:4: expected ")
    assert expected in message
    assert message.endswith(f", got '{got}'")


def test_long_token_is_shortened_in_message(tmp_path):
    path = write(tmp_path, "1 " + "x" * 500 + "\n")
    with pytest.raises(InputFormatError) as info:
        load_svmlight(path)
    assert len(str(info.value)) < len(str(path)) + 200
    assert str(info.value).endswith("...'")


def test_bom_control_characters_and_cr_only_line_ends(tmp_path):
    bom = tmp_path / "bom.dat"
    bom.write_bytes(b"\xef\xbb\xbf1 qid:3 1:1\n0 qid:3 2:1\n")
    np.testing.assert_array_equal(load_svmlight(bom)[2], [3, 3])  # a UTF-8 BOM is skipped
    for raw, expected in [(b"1 1:\x01\x7f\n", r"got '1:\x01\x7f'"),
                          (b"1 1:1\r0 2:1\r", "bad.dat:1: expected LF or CRLF line ends, got CR-only"),
                          # a comment on line 1 used to take the rest of the file silently
                          (b"1 1:1 # c\r0 2:1\r", "bad.dat:1: expected LF or CRLF line ends"),
                          (b"# header\r1 1:1\r", "bad.dat:1: expected LF or CRLF line ends"),
                          # with an LF somewhere (a final one, or files concatenated) the
                          # comment used to take the lines after its CR silently
                          (b"1 qid:1 1:1 # a\r0 qid:1 1:2\r1 qid:1 2:1\r\n",
                           "bad.dat:1: expected LF or CRLF line ends"),
                          (b"1 1:1\n0 2:1\n# c\r1 1:2\r", "bad.dat:3: expected LF or CRLF line ends"),
                          (b"1 1:1\r\n0 2:1 # c\r# d\r\n", "bad.dat:2: expected LF or CRLF line ends")]:
        path = tmp_path / "bad.dat"
        path.write_bytes(raw)
        with pytest.raises(InputFormatError) as info:
            load_svmlight(path)
        message = str(info.value)
        assert expected in message and message.isprintable(), message
    one_line = tmp_path / "one.dat"
    one_line.write_bytes(b"1 1:1\r")  # one line ended by CR is just a line
    assert load_svmlight(one_line)[0].shape == (1, 1)
    for text in (b"1 1:1 # a\rb", b"1 1:1 # note\r2nd pass"):  # a CR in a one-line comment
        one_line.write_bytes(text)
        _, y, _, comments = load_svmlight(one_line, return_comments=True)
        assert y.tolist() == [1.0] and comments[0].split("\r")[0] in ("a", "note")
    # a CR in a comment of a file with LF, and CRLF with stray CRs before the LF, are fine
    one_line.write_bytes(b"1 1:1 # note\r2nd pass\n0 2:1 # x\r\r\n1 1:2\r \n")
    assert load_svmlight(one_line)[1].tolist() == [1.0, 0.0, 1.0]
    one_line.write_bytes(b"1 1:1 # measured\r2 times\n0 2:1\n")  # SVM-light reads 2 lines
    assert load_svmlight(one_line)[1].tolist() == [1.0, 0.0]
    # linear time on long runs of CRs (a regular expression took 45 s on this one)
    from svmrank.io.svmlight import cr_line_break
    for tail in (b"", b"\n"):
        assert cr_line_break(b"# c" + b"\r" * 40000 + b"x" + tail) == -1
        assert cr_line_break(b"# c" + b"\r" * 40000 + b"1 1:1" + tail) == 40002


@pytest.mark.parametrize("text, last_line", [("", 1), ("\n\n", 2), ("# only a comment\n  # another\n", 2),
                                             ("   \r\n", 1), ("#a\n#b", 2)])
def test_file_without_examples_is_an_error(tmp_path, text, last_line):
    path = write(tmp_path, text)
    with pytest.raises(InputFormatError) as info:
        load_svmlight(path)
    assert str(info.value) == (f"{path}:{last_line}: expected at least one example line "
                               "'label [qid:N] idx:val ...', got '<end of file>'")


def test_missing_file_is_oserror(tmp_path):
    with pytest.raises(OSError):
        load_svmlight(tmp_path / "absent.txt")


def test_is_a_value_error(tmp_path):
    # InputFormatError is a ValueError, so callers catching ValueError still work.
    with pytest.raises(ValueError):
        load_svmlight(write(tmp_path, "x\n"))


def test_buffers_grow_beyond_the_sampled_estimate():
    # The first 256 KiB hold only comments: the initial capacities are tiny.
    head = b"#" * (1 << 18) + b"\n"
    body = b"".join(b"%d 1:%d 2:1 3:2.5\n" % (i % 3, i + 1) for i in range(20000))
    X, y, qid, _ = parse_svmlight_bytes(head + body, "big.txt")
    assert X.shape == (20000, 3) and X.nnz == 60000
    np.testing.assert_array_equal(X[:, 0].toarray().ravel(), np.arange(1, 20001))
    np.testing.assert_array_equal(y, np.arange(20000) % 3)


# ---------------------------------------------------------------------------
# dump_svmlight
# ---------------------------------------------------------------------------

finite = st.floats(allow_nan=False, allow_infinity=False)


@st.composite
def dataset(draw):
    n = draw(st.integers(1, 8))
    d = draw(st.integers(1, 10))
    dense = np.array(draw(st.lists(st.lists(st.one_of(st.just(0.0), finite), min_size=d, max_size=d),
                                   min_size=n, max_size=n)), dtype=np.float64).reshape(n, d)
    y = np.array(draw(st.lists(finite, min_size=n, max_size=n)))
    qid = draw(st.one_of(st.none(), st.lists(st.integers(*INT64), min_size=n, max_size=n)))
    comments = draw(st.one_of(st.none(), st.lists(
        st.text(st.characters(blacklist_characters="\n\r", blacklist_categories=("Cs",)),
                max_size=10).map(str.strip), min_size=n, max_size=n)))
    return dense, y, qid, comments


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(dataset(), st.booleans())
def test_dump_load_round_trip(tmp_path, data, sparse_input):
    dense, y, qid, comments = data
    path = tmp_path / "round.txt"
    dump_svmlight(path, sp.csr_matrix(dense) if sparse_input else dense, y, qid=qid, comments=comments)
    X, y2, qid2, comments2 = load_svmlight(path, n_features=dense.shape[1], return_comments=True)
    expected = sp.csr_matrix(dense)
    expected.eliminate_zeros()
    np.testing.assert_array_equal(X.indptr, expected.indptr)
    np.testing.assert_array_equal(X.indices, expected.indices)
    np.testing.assert_array_equal(X.data, expected.data)
    np.testing.assert_array_equal(y2, y)
    assert np.array_equal(np.signbit(y2), np.signbit(y))  # -0.0 stays -0.0
    np.testing.assert_array_equal(qid2, np.zeros(len(y), np.int64) if qid is None else qid)
    assert comments2 == (comments if comments is not None else [""] * len(y))


def test_dump_text_format(tmp_path):
    path = tmp_path / "out.txt"
    X = sp.csr_matrix((np.array([1.0, 0.1, 0.0]), np.array([0, 2, 1]), np.array([0, 2, 3])),
                      shape=(2, 3))  # row 1 holds an explicit zero: not written
    dump_svmlight(path, X, [1.0, -0.5], qid=[3, 3], comments=["doc a", ""])
    assert path.read_text() == "1 qid:3 1:1 3:0.1 # doc a\n-0.5 qid:3\n"


def test_dump_comments_round_trip_stripped(tmp_path):
    path = tmp_path / "c.dat"
    dump_svmlight(path, np.eye(3), [1, 2, 3], comments=["  lead", "   ", "trail  "])
    assert path.read_text().splitlines()[1] == "2 2:1"  # a blank comment is no comment
    assert load_svmlight(path, return_comments=True)[3] == ["lead", "", "trail"]


@pytest.mark.parametrize("name, reason", [("", "empty file name"),
                                          ("new/", "it ends with a path separator")])
def test_dump_refuses_what_fopen_would(tmp_path, name, reason):
    """realpath drops a trailing '/', which made 'new/' a file; '' was named as ''."""
    target = os.path.join(str(tmp_path), name) if name else name
    with pytest.raises(OSError, match=reason):
        dump_svmlight(target, np.eye(1), [1])
    assert os.listdir(tmp_path) == []


def test_dump_does_not_modify_input(tmp_path):
    X = sp.csr_matrix(np.array([[1.0, 2.0]]))
    X.data[0] = 0.0
    dump_svmlight(tmp_path / "a.txt", X, [1])
    assert X.nnz == 2


@pytest.mark.parametrize("kwargs, match", [
    ({"y": [1.0]}, "y: expected length 2"),
    ({"y": [1.0, np.nan]}, "y: contains NaN"),
    ({"X": [[1.0, np.inf], [0, 1]]}, "X: contains NaN"),
    ({"qid": [1, 2, 3]}, "qid: expected length 2"),
    ({"qid": [1.5, 2]}, "qid: expected integer values"),
    ({"qid": ["a", "b"]}, "qid: expected an integer array"),
    ({"qid": np.array([1, 2**63], dtype=np.uint64)}, r"qid: expected integer values below 2\*\*63"),
    ({"comments": ["a\ud800", "c"]}, r"comments\[0\]: not encodable as UTF-8"),
    ({"comments": ["a"]}, "comments: expected length 2"),
    ({"comments": ["a\nb", "c"]}, r"comments\[0\]: must not contain a line break"),
    ({"comments": ["a", 3]}, r"comments\[1\]: expected a str"),
    ({"X": np.zeros((0, 2)), "y": []}, "X: .*0 sample"),
    # an index of 2**31 or more was written as a negative number
    ({"X": sp.csr_matrix((np.ones(1), np.array([2**31 + 2], dtype=np.int64),
                          np.array([0, 1, 1], dtype=np.int64)), shape=(2, 2**31 + 5))},
     r"^X: 2147483653 features; at most 2147483647"),
])
def test_dump_validation_leaves_existing_file(tmp_path, kwargs, match):
    path = tmp_path / "keep.txt"
    path.write_text("old\n")
    args = {"X": [[1.0, 0.0], [0.0, 2.0]], "y": [1.0, -1.0]}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        dump_svmlight(path, **args)
    assert path.read_text() == "old\n"
    assert sorted(os.listdir(tmp_path)) == ["keep.txt"]


# ---------------------------------------------------------------------------
# Real files: the same arrays as scikit-learn's reader.
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("parts", [("w8a", "w8a.test"), ("mq2008", "S5.txt"), ("heart_scale", "heart_scale")])
def test_matches_sklearn_on_shared_data(parts):
    datasets = pytest.importorskip("sklearn.datasets")
    path = shared_file(*parts)
    X, y, qid = load_svmlight(path)
    X2, y2, qid2 = datasets.load_svmlight_file(str(path), query_id=True)
    X2 = sp.csr_matrix(X2)
    X2.eliminate_zeros()  # scikit-learn keeps explicit zeros; we do not store them
    assert X.shape == X2.shape
    np.testing.assert_array_equal(X.indptr, X2.indptr)
    np.testing.assert_array_equal(X.indices, X2.indices)
    np.testing.assert_array_equal(X.data, X2.data)
    np.testing.assert_array_equal(y, y2)
    if len(qid2) == 0:  # scikit-learn returns no qid array for files without qid
        qid2 = np.zeros(len(y2), dtype=np.int64)
    np.testing.assert_array_equal(qid, qid2)


def test_mq2008_comments():
    path = shared_file("mq2008", "S5.txt")
    _, _, qid, comments = load_svmlight(path, return_comments=True)
    assert len(comments) == len(qid)
    assert all(c.startswith("docid = ") for c in comments)


def _run_under_memory_limit(code, path, extra_mib):
    """Run ``code`` (reading sys.argv[1]) in a subprocess whose address space may grow by
    ``extra_mib`` MiB beyond what it holds once svmrank.io is imported."""
    import subprocess
    import sys
    prelude = ("import resource, sys\nimport svmrank.io.svmlight\n"
               "size = int(open('/proc/self/statm').read().split()[0]) * resource.getpagesize()\n"
               f"limit = size + {extra_mib} * 2**20\n"
               "resource.setrlimit(resource.RLIMIT_AS, (limit, limit))\n")
    return subprocess.run([sys.executable, "-c", prelude + code, str(path)], capture_output=True,
                          text=True, timeout=120)


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs Linux /proc")
def test_memory_follows_the_examples_not_the_file_size(tmp_path):
    """Issue 29: the parser reserved row buffers from the newlines of the first 256 KiB
    (about 42 bytes per input byte for a file of blank lines). 24 MiB of blank lines
    and 2 examples now need the file's bytes and little more: 200 MiB of headroom,
    where the old reservation took about 1 GiB."""
    path = tmp_path / "blank.dat"
    with open(path, "wb") as fh:
        fh.write(b"1 1:1\n")
        fh.write(b"\n" * (24 << 20))
        fh.write(b"0 2:1 # last\n")
    done = _run_under_memory_limit(
        "from svmrank.io import load_svmlight\n"
        "X, y, qid = load_svmlight(sys.argv[1])\n"
        "print(X.shape, y.tolist())\n", path, 200)
    assert done.returncode == 0, done.stderr[-300:]
    assert done.stdout.split("\n")[0] == "(2, 2) [1.0, 0.0]"


def test_lf_cr_line_ends_are_lf_line_ends(tmp_path):
    """Issue 29: lines that start with a stray CR (LF-CR text) all end with LF; they were
    refused as CR-only text (scikit-learn reads them). CR-only text stays refused,
    and a CR ending a line among LF ones is named as such."""
    path = tmp_path / "lfcr.dat"
    path.write_bytes(b"1 qid:1 1:1 # a\n\r0 qid:1 2:1\n\r# c\n\r1 qid:2 1:2\n\r")
    X, y, qid, comments = load_svmlight(path, return_comments=True)
    assert y.tolist() == [1.0, 0.0, 1.0] and qid.tolist() == [1, 1, 2]
    assert comments == ["a", "", ""] and X.shape == (3, 2)
    path.write_bytes(b"\r1 1:1\n\r0 2:1\n")  # a stray CR at the start of the file, too
    assert load_svmlight(path)[1].tolist() == [1.0, 0.0]
    path.write_bytes(b"1 1:1\r0 2:1\r")
    with pytest.raises(InputFormatError, match=r"lfcr\.dat:1: expected LF or CRLF line ends, "
                                               r"got CR-only ones \(old Mac text\)"):
        load_svmlight(path)
    path.write_bytes(b"1 1:1\n\r0 2:1\r1 1:2\n")
    with pytest.raises(InputFormatError, match=r"lfcr\.dat:2: expected LF or CRLF line ends, "
                                               r"got one of CR alone \(old Mac text\) among LF"):
        load_svmlight(path)


def test_an_index_beyond_int32_reports_the_learners_limit(tmp_path):
    """Issue 29: with max_index (what the learners pass), an index of 2^31 reported the
    2^31 - 1 limit of the file format instead of the learners' lower one."""
    from svmrank._validation import MAX_TRAIN_FEATURES
    path = tmp_path / "huge.dat"
    path.write_bytes(b"1 1:1\n0 2147483648:1\n")
    with pytest.raises(InputFormatError, match=rf"huge\.dat:2: expected a feature index <= "
                                               rf"{MAX_TRAIN_FEATURES} \(the largest index "):
        load_svmlight(path, max_index=MAX_TRAIN_FEATURES)
    with pytest.raises(InputFormatError, match=r"huge\.dat:2: expected a feature index <= 3 "):
        load_svmlight(path, n_features=3)
    with pytest.raises(InputFormatError, match=r"huge\.dat:2: expected a feature index <= "
                                               r"2147483647"):  # (dropped or not: refused)
        load_svmlight(path, n_features=3, ignore_extra_features=True)


def test_dump_svmlight_names_a_path_in_the_wrong_place(tmp_path):
    """Review 23: scikit-learn's argument order (X, y, f) failed on 'X: expected a 2-d
    array'."""
    import numpy as np
    from svmrank.io import dump_svmlight
    with pytest.raises(ValueError, match=r"^dump_svmlight\(path, X, y\): path must be a file "
                                         r"name, got ndarray \(scikit-learn's"):
        dump_svmlight(np.eye(3), np.array([1.0, 0.0, 0.0]), str(tmp_path / "o.dat"))
    assert not list(tmp_path.iterdir())


def test_files_that_are_not_utf8_text_say_so(tmp_path):
    """Review 23: a UTF-16 file failed on its label, a binary file on 'CR-only line
    ends', and a caller's max_index was called the learners' cap."""
    from svmrank.exceptions import InputFormatError
    from svmrank.io import load_svmlight
    utf16 = tmp_path / "u16.dat"
    utf16.write_bytes("1 qid:1 1:1\n".encode("utf-16"))
    with pytest.raises(InputFormatError, match=r"u16\.dat:1: expected UTF-8 text \(convert this "
                                               r"UTF-16 file\), got the UTF-16 byte order"):
        load_svmlight(utf16)
    binary = tmp_path / "bin.dat"
    binary.write_bytes(b"\x7fELF\x02\x01\x01\x00\x00\r\x00")
    with pytest.raises(InputFormatError, match=r"bin\.dat:1: expected text, not a binary file "
                                               r"\(a NUL byte\), got '\\x00'"):
        load_svmlight(binary)
    text = tmp_path / "t.dat"
    text.write_bytes(b"1 11:1\n")
    with pytest.raises(InputFormatError, match=r"expected a feature index <= 5 \(max_index\)"):
        load_svmlight(text, max_index=5)
