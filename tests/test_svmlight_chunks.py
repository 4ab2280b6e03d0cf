"""Out-of-core SVMlight reading: compressed files and file objects, iter_svmlight's
chunks (cut at line starts, queries whole, global line numbers in errors) against
load_svmlight, and the chunked reader under an address-space limit (issue 28 part 1,
issue 29 item 11)."""
import bz2
import gzip
import io
import lzma
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from svmrank.exceptions import InputFormatError
from svmrank.io import iter_svmlight, load_svmlight

TEXT = (b"# header\n3 qid:1 1:1 4:0.5\n2 qid:1 2:1\n\n1 qid:2 3:-1 # note\n0 qid:2 1:2\n"
        b"1 qid:3 5:1\n0 qid:7 2:3\n1 qid:7 1:1\n")


def joined(chunks):
    """The chunks stacked, with each chunk's first line."""
    chunks = list(chunks)
    X = sp.vstack([c[0] for c in chunks], format="csr")
    return (X, np.concatenate([c[1] for c in chunks]), np.concatenate([c[2] for c in chunks]),
            [c[3] for c in chunks])


@pytest.mark.parametrize("pack", [lambda b: b, gzip.compress, bz2.compress, lzma.compress])
def test_compressed_files_and_file_objects_read_like_plain(tmp_path, pack):
    path = tmp_path / "data.bin"  # (no suffix: the first bytes decide)
    path.write_bytes(pack(TEXT))
    plain = tmp_path / "plain.txt"
    plain.write_bytes(TEXT)
    X0, y0, q0 = load_svmlight(plain)
    for source in (path, str(path), io.BytesIO(pack(TEXT)), open(path, "rb")):
        X, y, q = load_svmlight(source)
        assert (X != X0).nnz == 0 and X.shape == X0.shape
        assert np.array_equal(y, y0) and np.array_equal(q, q0)


def test_file_object_errors():
    with pytest.raises(ValueError, match="binary file object"):
        load_svmlight(io.StringIO("1 1:1\n"))
    with pytest.raises(TypeError, match="path"):
        load_svmlight(3)
    with pytest.raises(InputFormatError, match=r"^data\.gz: cannot decompress"):
        stream = io.BytesIO(gzip.compress(TEXT)[:-12])
        stream.name = "data.gz"
        list(iter_svmlight(stream, n_features=5))
    for pack in (gzip.compress, bz2.compress, lzma.compress):  # truncated
        with pytest.raises(InputFormatError, match=r"^<file object>: cannot decompress"):
            load_svmlight(io.BytesIO(pack(TEXT)[:-12]))
    # (review 22b: damaged deflate data raised zlib.error, a traceback in the CLI)
    with pytest.raises(InputFormatError, match=r"^<file object>: cannot decompress: Error -3"):
        load_svmlight(io.BytesIO(b"\x1f\x8b\x08\x00garbagegarbage"))
    zipped = io.BytesIO(b"PK\x03\x04rest")
    with pytest.raises(InputFormatError, match="zip-compressed"):
        load_svmlight(zipped)


@pytest.mark.parametrize("chunk", [1, 7, 30, 10**6])
def test_chunks_keep_queries_whole_and_lines_global(tmp_path, chunk):
    path = tmp_path / "d.txt"
    path.write_bytes(TEXT)
    X0, y0, q0 = load_svmlight(path)
    chunks = list(iter_svmlight(path, chunk_bytes=chunk))
    X, y, q, lines = joined(chunks)
    assert (X != X0).nnz == 0 and np.array_equal(y, y0) and np.array_equal(q, q0)
    assert all(c[0].shape[1] == 5 for c in chunks)
    seen = [set(c[2].tolist()) for c in chunks]
    assert sum(map(len, seen)) == len(set(q0.tolist()))  # no query in two chunks
    file_lines = TEXT.split(b"\n")
    for Xc, yc, qc, first in chunks:  # first_line is the line of the chunk's first example
        assert file_lines[first - 1].split()[1] == b"qid:%d" % qc[0]
    if chunk == 1:
        assert lines == [2, 5, 7, 8]


def test_chunks_without_qid_cut_anywhere_and_n_features(tmp_path):
    path = tmp_path / "d.txt"
    path.write_bytes(b"".join(b"%d 1:%d 3:1\n" % (i % 2, i) for i in range(1, 60)))
    chunks = list(iter_svmlight(path, chunk_bytes=40, n_features=8))
    assert len(chunks) > 5 and all(c[0].shape == (c[1].size, 8) for c in chunks)
    X, y, q, lines = joined(chunks)
    assert np.array_equal(X[:, 0].toarray().ravel(), np.arange(1, 60))
    assert lines[0] == 1 and lines == sorted(lines)
    with pytest.raises(InputFormatError, match=r"d\.txt:1: expected a feature index <= 2 "):
        list(iter_svmlight(path, chunk_bytes=40, n_features=2))
    assert joined(iter_svmlight(path, chunk_bytes=40, n_features=2,
                                ignore_extra_features=True))[0].shape == (59, 2)
    stream = io.BytesIO(path.read_bytes())
    stream.readline()  # a file object is read from where it is
    with pytest.raises(ValueError, match="cannot seek"):
        list(iter_svmlight(_NoSeek(path.read_bytes())))
    assert sum(c[1].size for c in iter_svmlight(stream, chunk_bytes=40)) == 58


class _NoSeek(io.RawIOBase):
    def __init__(self, data):
        self._data = io.BytesIO(data)

    def readable(self):
        return True

    def readinto(self, b):
        return self._data.readinto(b)


def test_chunk_errors_name_the_file_line(tmp_path):
    path = tmp_path / "bad.txt"
    body = b"".join(b"1 qid:%d 1:1\n" % (i // 3) for i in range(300))
    path.write_bytes(body + b"1 qid:500 2:x\n")
    with pytest.raises(InputFormatError, match=r"/bad\.txt:301: expected 'idx:val' with a decimal"):
        list(iter_svmlight(path, chunk_bytes=64, n_features=3))
    path.write_bytes(body + b"1 qid:5 1:1\n")  # query 5 again, after query 6 ...
    with pytest.raises(InputFormatError, match=r"/bad\.txt:301: expected the lines of a query "
                                               r"to be consecutive, got qid:5 again"):
        list(iter_svmlight(path, chunk_bytes=64, n_features=3))
    path.write_bytes(b"1 qid:1 1:1\n1 qid:2 1:1\n1 qid:1 1:1\n")  # ... and within a chunk
    with pytest.raises(InputFormatError, match=r"/bad\.txt:3: .* got qid:1 again"):
        list(iter_svmlight(path, n_features=3))
    path.write_bytes(b"# nothing\n\n")
    with pytest.raises(InputFormatError, match=r"/bad\.txt:2: expected at least one example"):
        list(iter_svmlight(path))
    for bad in (0, 1.5, True):
        with pytest.raises(ValueError, match="chunk_bytes"):
            iter_svmlight(path, chunk_bytes=bad)


def test_chunks_agree_whatever_their_size(tmp_path):
    """Review 23: lines without qid: (query 0) coming back after a query were refused
    or not depending on chunk_bytes; a pipe path was read twice (a false empty file, or
    a hang); a huge chunk_bytes was allocated whole (MemoryError on a tiny file)."""
    import os
    import threading
    path = tmp_path / "mix.dat"
    path.write_bytes(b"1 1:1\n1 qid:1 1:1\n0 1:1\n1 qid:2 1:1\n0 qid:2 1:2\n")
    for chunk in (1, 10, 20, 1000):
        with pytest.raises(InputFormatError, match=r"mix\.dat:3: .* got qid:0 again after "
                                                   r"other queries \(a line without qid: is"):
            list(iter_svmlight(path, chunk_bytes=chunk))
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="^n_features: required when reading .*fifo, which is "
                                         "not a regular file"):
        iter_svmlight(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(b"1 1:1\n0 2:1\n"), daemon=True)
    writer.start()
    assert joined(iter_svmlight(fifo, n_features=2))[0].shape == (2, 2)
    writer.join(timeout=30)
    tiny = tmp_path / "tiny.dat"
    tiny.write_bytes(b"1 1:1\n0 2:1\n")
    assert joined(iter_svmlight(tiny, chunk_bytes=2**70))[0].shape == (2, 2)


lines_st = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(1, 9),
                              st.sampled_from([b"", b" # c", b"\n# x", b"\n"])),
                    min_size=1, max_size=40)


@settings(max_examples=150, deadline=None)
@given(lines_st, st.integers(1, 80), st.booleans())
def test_chunks_equal_whole_reading(rows, chunk, compress):
    """Any chunk size gives load_svmlight's arrays, each query in one chunk."""
    qids = np.cumsum([r[1] for r in rows])
    text = b"".join(b"%d qid:%d %d:1%s\n" % (r[0], q, r[2], r[3]) for r, q in zip(rows, qids))
    X0, y0, q0 = load_svmlight(io.BytesIO(text))
    data = io.BytesIO(gzip.compress(text) if compress else text)
    chunks = list(iter_svmlight(data, chunk_bytes=chunk))
    X, y, q, lines = joined(chunks)
    assert (X != X0).nnz == 0 and X.shape == X0.shape
    assert np.array_equal(y, y0) and np.array_equal(q, q0)
    assert len({c[0].shape[1] for c in chunks}) == 1
    owner = {}
    for k, c in enumerate(chunks):
        for value in set(c[2].tolist()):
            assert owner.setdefault(value, k) == k


AS_LIMIT_CHILD = textwrap.dedent("""
    import resource, sys
    import numpy as np
    from svmrank.io import iter_svmlight, load_svmlight
    path, headroom = sys.argv[1], int(sys.argv[2])
    def vm_bytes():
        with open("/proc/self/status") as fh:
            return next(int(l.split()[1]) * 1024 for l in fh if l.startswith("VmSize:"))
    limit = vm_bytes() + headroom
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    rows = nnz = 0
    total = np.zeros(3)
    for X, y, qid, line in iter_svmlight(path, chunk_bytes=1 << 16, n_features=3):
        rows += X.shape[0]
        nnz += X.nnz
        total += np.asarray(X.sum(axis=0)).ravel()
    print(rows, nnz, *total.tolist())
    try:
        load_svmlight(path)
    except MemoryError:
        print("whole: MemoryError")
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc: Linux")
def test_chunked_reading_under_an_address_space_limit(tmp_path):
    """A file 50 times the address space left to the reader is read through the chunked
    path, while reading it whole fails (issue 29 item 11)."""
    headroom = 2 << 20
    block = b"".join(b"%d qid:{R}%03d 1:0.5 2:%d 3:-1\n" % (k % 2, k // 64, k % 5)
                     for k in range(4096))
    path = tmp_path / "big.txt"
    repeats = 0
    with open(path, "wb") as fh:
        while fh.tell() < 50 * headroom:  # (query ids distinct across blocks)
            repeats += 1
            fh.write(block.replace(b"{R}", b"%d" % repeats))
    assert path.stat().st_size >= 50 * headroom
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", AS_LIMIT_CHILD, str(path), str(headroom)],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    first, second = out.stdout.splitlines()
    rows, nnz, s1, s2, s3 = first.split()
    assert int(rows) == 4096 * repeats and int(nnz) == (3 * 4096 - 820) * repeats
    assert float(s1) == 0.5 * 4096 * repeats and float(s3) == -4096 * repeats
    assert second == "whole: MemoryError"
