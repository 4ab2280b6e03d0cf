"""svmrank.io.atomic.atomic_write under the signals that end a process: SIGINT,
SIGTERM and SIGHUP mid-write leave no temporary file and the target absent or intact."""
import os
import signal
import subprocess
import sys
import time

import pytest

from svmrank.io.atomic import atomic_write

WRITER = r"""
import sys, time
from svmrank.io.atomic import atomic_write
with atomic_write(sys.argv[1]) as fh:
    for i in range(100000):
        fh.write("x" * 10000 + "\n")
        if i == 200:
            fh.flush()
            print("writing", flush=True)
        if i >= 200:
            time.sleep(0.01)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")
@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP", "SIGINT"])
@pytest.mark.parametrize("existing", [False, True])
def test_signal_mid_write_leaves_no_temporary_file(tmp_path, signame, existing):
    target = tmp_path / "out.txt"
    if existing:
        target.write_text("old contents\n")
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(target)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == "writing\n"
        big = [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]
        assert big and big[0].stat().st_size > 2_000_000  # mid-write: a large temporary file
        signum = getattr(signal, signame)
        proc.send_signal(signum)
        proc.wait(timeout=30)
    finally:
        proc.kill()
        proc.wait()
    assert sorted(p.name for p in tmp_path.iterdir()) == (["out.txt"] if existing else [])
    if existing:
        assert target.read_text() == "old contents\n"
    if signame == "SIGINT":
        assert proc.returncode != 0
    else:  # ended by the signal's default action (a shell reports 128 + n)
        assert proc.returncode == -signum


def test_handlers_restored(tmp_path):
    before = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
    with atomic_write(tmp_path / "a.txt") as fh:
        fh.write("a\n")
        assert signal.getsignal(signal.SIGTERM) is not before[signal.SIGTERM]
        with atomic_write(tmp_path / "b.txt") as inner:  # nested writes share the handler
            inner.write("b\n")
        assert signal.getsignal(signal.SIGTERM) is not before[signal.SIGTERM]
    assert {s: signal.getsignal(s) for s in before} == before
    with pytest.raises(RuntimeError):
        with atomic_write(tmp_path / "c.txt") as fh:
            raise RuntimeError
    assert {s: signal.getsignal(s) for s in before} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]


def test_callers_handler_left_alone(tmp_path):
    seen = []

    def handler(signum, frame):
        seen.append(signum)

    old = signal.signal(signal.SIGTERM, handler)
    try:
        with atomic_write(tmp_path / "a.txt") as fh:
            assert signal.getsignal(signal.SIGTERM) is handler
            fh.write("a\n")
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)
        assert seen == [signal.SIGTERM] and (tmp_path / "a.txt").read_text() == "a\n"
    finally:
        signal.signal(signal.SIGTERM, old)
