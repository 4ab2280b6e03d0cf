"""Seeded mutation fuzzing of what reads untrusted text: the SVMlight parser (against the
reference parser of test_svmlight_io), both model readers and the console scripts'
option parsers. Every input parses, or raises the documented error (InputFormatError
naming the source and line, CLIError naming the option): no other exception, no hang.

The suite runs about 22,000 inputs; ``pytest tests/test_fuzz.py --fuzz-long`` runs 50
times as many (see benchmarks/README.md for the last long run).
"""
import contextlib
import io
import os
import random
import re
import time
from pathlib import Path

import pytest

from svmrank.cli import ap_learn, topk_learn
from svmrank.cli.common import CLIError
from svmrank.exceptions import InputFormatError
from svmrank.io import read_model, read_multiclass_model
from svmrank.io.svmlight import parse_svmlight_bytes

from test_svmlight_io import BAD_TOKENS, assert_same_as_reference

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "golden"
LONG_FACTOR = 50
SLOWEST = 2.0  # seconds one input may take (a hang or a quadratic blow-up fails)

NUMBERS = [b"0", b"-0", b"1", b"-1", b"2", b"+3", b"0.5", b".5", b"1.", b"1e5", b"-1e-5",
           b"2147483647", b"2147483648", b"-2147483649", b"4294967296", b"16777216",
           b"134217728", b"9223372036854775807", b"9223372036854775808", b"9" * 40,
           b"1e308", b"1e309", b"1e-400", b"nan", b"inf", b"-inf", b"1_0", b"0x10", b"\xd9\xa1"]
PIECES = BAD_TOKENS + NUMBERS + [b"\n", b"\r\n", b"\r", b"\n\n", b" ", b"\t", b"#", b"# c\n",
                                 b":", b"qid:", b"sid:1", b"cost:2", b"\xef\xbb\xbf", b"\x00",
                                 b"\x1f\x8b", b"\xff\xfe", b"=", b"key=val", b"1:1 2:2"]
DIGITS = re.compile(rb"[+-]?\d+(?:\.\d*)?(?:[eE][+-]?\d+)?")


def mutate(rng, buf, seeds):
    """1 to 4 random edits of ``buf``: byte changes, inserted pieces, deleted, repeated
    or spliced runs, numbers replaced by edge values, a cut."""
    for _ in range(rng.randint(1, 4)):
        n = len(buf)
        kind = rng.randrange(8)
        at = rng.randint(0, n)
        if kind == 0 and n:
            at = min(at, n - 1)
            buf = buf[:at] + bytes([rng.choice(b"\n\r\t :#.-+e019\x00\xff" + bytes([rng.randrange(256)]))]) + buf[at + 1:]
        elif kind == 1:
            buf = buf[:at] + rng.choice(PIECES) + buf[at:]
        elif kind == 2:
            buf = buf[:at] + buf[at + rng.randint(1, 12):]
        elif kind == 3:
            end = min(n, at + rng.randint(1, 40))
            buf = buf[:end] + buf[at:end] * rng.randint(1, 3) + buf[end:]
        elif kind in (4, 5):
            m = DIGITS.search(buf, at) or DIGITS.search(buf)
            if m:
                buf = buf[:m.start()] + rng.choice(NUMBERS) + buf[m.end():]
        elif kind == 6:
            other = rng.choice(seeds).split(b"\n")
            line = rng.choice(other) + b"\n"
            lines = buf.split(b"\n")
            lines.insert(rng.randint(0, len(lines)), line.rstrip(b"\n"))
            buf = b"\n".join(lines)
        else:
            buf = buf[:at]
    return buf


@pytest.fixture
def fuzz_count(request):
    """Inputs per target: the in-suite number, times LONG_FACTOR with --fuzz-long."""
    factor = LONG_FACTOR if request.config.getoption("--fuzz-long") else 1
    return lambda n: n * factor


def run_inputs(count, seed, make, check):
    """``check(make(rng))`` for ``count`` seeded inputs, each within SLOWEST seconds;
    failures report the input."""
    rng = random.Random(seed)
    for i in range(count):
        data = make(rng)
        start = time.perf_counter()
        try:
            check(data)
        except BaseException as exc:
            raise AssertionError(f"input {i} of seed {seed}: {data!r}") from exc
        took = time.perf_counter() - start
        assert took < SLOWEST, f"input {i} of seed {seed} took {took:.1f} s: {data!r}"


# --------------------------------------------------------------------- SVMlight
def svmlight_seeds():
    seeds = []
    for name in ("rank_train.dat", "rank_test.dat"):
        lines = (ROOT / "data_examples" / name).read_bytes().split(b"\n")
        seeds += [b"\n".join(lines[i:i + 4]) + b"\n" for i in range(0, 60, 4)]
    seeds += [b"1 1:1 3:0.5 # a comment\n-1 qid:2 2:1e-3\n", b"+1 sid:4 cost:0.5 7:2\r\n",
              b"# only a comment\n\n0.5 2:0 5:-1\n", b"-1 qid:9223372036854775807 2147483647:1"]
    return seeds


def lenient(buf):
    """Inputs the reference parser does not model (a byte order mark, compressed-file
    magic, CR without LF): only the kind of outcome is checked."""
    return (buf.startswith((b"\xef\xbb\xbf", b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"PK\x03\x04"))
            or buf.count(b"\r") != buf.count(b"\r\n"))


def check_svmlight(case):
    buf, n_features, ignore_extra = case
    if not lenient(buf):
        assert_same_as_reference(buf, n_features, ignore_extra)
        return
    try:
        parse_svmlight_bytes(buf, "data.txt", n_features, ignore_extra)
    except InputFormatError as exc:
        assert re.match(r"data\.txt(:\d+)?: \S", str(exc)) and "\n" not in str(exc), str(exc)


def test_fuzz_svmlight_parser(fuzz_count):
    seeds = svmlight_seeds()

    def make(rng):
        buf = mutate(rng, rng.choice(seeds), seeds)
        n_features = rng.choice([None, None, None, 0, 3, rng.randint(1, 40)])
        return buf, n_features, n_features is not None and rng.random() < 0.5

    run_inputs(fuzz_count(12_000), 29, make, check_svmlight)


# --------------------------------------------------------------------- model files
def model_seeds(multiclass):
    names = sorted(GOLDEN.glob("*.model"))
    seeds = []
    for path in names:
        buf = path.read_bytes()
        if buf.startswith(b"SVM-multiclass") == multiclass:
            lines = buf.split(b"\n")
            if len(lines) > 40:  # (a long support vector line: keep the fuzzing fast)
                continue
            seeds.append(buf if len(buf) < 20_000 else buf[:20_000])
    assert seeds
    return seeds


def model_checker(path, reader):
    source = re.escape(str(path))
    path.write_bytes(b"")
    fd = os.open(path, os.O_WRONLY)  # (rewritten in place: truncating opens are slow on ext4)

    def check(buf):
        os.pwrite(fd, buf, 0)
        os.ftruncate(fd, len(buf))
        try:
            reader(path)
        except InputFormatError as exc:
            message = str(exc)
            assert re.match(source + r"(:\d+)?: \S", message) and "\n" not in message, message
    return check


@pytest.mark.parametrize("reader", [read_model, read_multiclass_model])
def test_fuzz_model_readers(tmp_path, fuzz_count, reader):
    seeds = model_seeds(reader is read_multiclass_model)
    for seed in seeds:  # the seeds themselves read
        (tmp_path / "seed.model").write_bytes(seed)
        reader(tmp_path / "seed.model")
    check = model_checker(tmp_path / "m.model", reader)
    run_inputs(fuzz_count(2_500), 7, lambda rng: mutate(rng, rng.choice(seeds), seeds), check)


# --------------------------------------------------------------------- options
OPTION_VALUES = ["1", "0", "-1", "0.1", "1e308", "1e999", "nan", "inf", "-inf", "1_000", "0x10",
                 "١", "", " ", "ap", "ndcg", "roc", "11", "10", "2", "error", "hob", "hoap", "qid",
                 "img", "qs", "greedy", "select", "--", "-", "=", "a\x00b", "é", "train.dat",
                 "model", "3,4", "1 2", "99999999999999999999999"]


def option_tokens(parser):
    tokens = sorted({s for a in parser._actions for s in a.option_strings} - {"-?", "-h", "--help"})
    return tokens


def make_argv(rng, tokens):
    argv = []
    for _ in range(rng.randint(0, 8)):
        r = rng.random()
        if r < 0.45:
            argv.append(rng.choice(tokens))
        elif r < 0.85:
            argv.append(rng.choice(OPTION_VALUES))
        elif r < 0.92:
            argv.append(rng.choice(tokens) + rng.choice(["=", ""]) + rng.choice(OPTION_VALUES))
        else:
            argv.append(rng.choice(["-h", "-x", "--nope", "-c-1", "-#", "--b", "-v0"]))
    if rng.random() < 0.5:
        argv += ["train.dat", "model"]
    if "-h" in argv:  # (SVM-light's shrinking option takes a number; bare -h is help)
        at = argv.index("-h")
        argv.insert(at + 1, rng.choice(["1", "0", "-1", "x"]))
    return argv


def parse_outcome(script, argv):
    """The options ``parse_options`` gives ``argv``, or its CLIError's message."""
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            return vars(script.parse_options(argv))
        except CLIError as exc:
            assert str(exc) and "\n" not in str(exc), str(exc)
            return str(exc)
        except SystemExit as exc:  # help, asked for by a bare -h
            assert exc.code in (0, None) and "-h" in argv, argv
            return "help"


@pytest.mark.parametrize("script", [ap_learn, topk_learn])
def test_fuzz_option_parsers(fuzz_count, script, monkeypatch):
    build = script.build_parser
    parser = build()
    tokens = option_tokens(parser)
    # one parser for all inputs (building one costs ten parses); every 50th input is
    # also parsed by a fresh one, which must agree
    monkeypatch.setattr(script, "build_parser", lambda: parser)
    seen = [0]

    def check(argv):
        outcome = parse_outcome(script, argv)
        seen[0] += 1
        if seen[0] % 50 == 0:
            with monkeypatch.context() as fresh:
                fresh.setattr(script, "build_parser", build)
                assert parse_outcome(script, argv) == outcome

    run_inputs(fuzz_count(2_500), 11, lambda rng: make_argv(rng, tokens), check)


def test_attached_double_dash_is_refused():
    # found by the fuzzing above: argparse made -l-- an empty list (a TypeError later)
    for argv in (["-l=--"], ["-l--"], ["-c=--"], ["--groups=--"]):
        with pytest.raises(CLIError, match=r"^argument (-l|-c|--groups): expected a value, got '--'$"):
            ap_learn.parse_options(argv + ["train.dat", "model"])
    with pytest.raises(CLIError, match=r"^argument -c: expected a value, got '--'$"):
        topk_learn.parse_options(["-c--", "train.dat", "model"])
