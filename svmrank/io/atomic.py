"""Atomic file writes: write to a temporary file beside the target, then rename."""
import contextlib
import os
import tempfile


@contextlib.contextmanager
def atomic_write(path, mode="w", encoding="utf-8"):
    """Open a temporary file next to ``path``; on success rename it over ``path``.

    On any exception the temporary file is removed and ``path`` is left untouched, so
    no half-written output is ever visible. Errors opening the folder are raised as
    ``OSError`` naming ``path``.
    """
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix="-" + os.path.basename(path), dir=folder)
    except OSError as exc:
        raise OSError(f"{path}: cannot write ({exc.strerror or exc})") from None
    try:
        kwargs = {} if "b" in mode else {"encoding": encoding, "newline": "\n"}
        with os.fdopen(fd, mode, **kwargs) as fh:
            yield fh
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
