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
        try:
            os.replace(tmp, path)
        except OSError as exc:
            raise OSError(f"{path}: cannot write ({exc.strerror or exc})") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def check_writable(path, inputs=()):
    """Raise ``OSError`` naming ``path`` unless a file can be written there (its folder
    exists and is writable, it is not a folder, nor one of the ``inputs`` files):
    checked before long work starts."""
    path = os.fspath(path)
    for source in inputs:
        if os.path.exists(path) and os.path.exists(source) and os.path.samefile(path, source):
            raise OSError(f"{path}: cannot write (it is the input file {source})")
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise OSError(f"{path}: cannot write (it is a directory)")
    if not os.path.isdir(folder):
        raise OSError(f"{path}: cannot write (no such directory: {folder})")
    if not os.access(folder, os.W_OK):
        raise OSError(f"{path}: cannot write (permission denied: {folder})")
