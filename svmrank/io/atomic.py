"""Atomic file writes: write to a temporary file beside the target, then rename."""
import contextlib
import errno
import os
import re
import signal
import stat
import sys
import tempfile
import threading


def _current_umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _cannot_write(path, reason):
    return OSError(f"{path}: cannot write ({reason})")


# errors of writing itself (a full disk, a file size limit, a closed pipe): named here,
# since the caller's write or the close that raises them does not know the path
_WRITE_ERRNOS = {errno.EFBIG, errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EPIPE}


@contextlib.contextmanager
def _naming(path):
    try:
        yield
    except OSError as exc:
        if exc.errno in _WRITE_ERRNOS:
            raise _cannot_write(path, exc.strerror or exc) from None
        raise


class _Named:
    """A file object whose ``write`` errors name ``path``."""

    def __init__(self, fh, path):
        self._fh, self._path = fh, path

    def write(self, data):
        with _naming(self._path):
            return self._fh.write(data)

    def __getattr__(self, name):
        return getattr(self._fh, name)


@contextlib.contextmanager
def _written(fh, path, sync=False):
    """``fh`` for the caller's with-block; its own write and close errors name
    ``path``, the caller's other errors pass unchanged. ``sync``: on disk before
    closing (so a rename that follows cannot expose an empty file after a crash)."""
    try:
        yield _Named(fh, path)
    except BaseException:
        with contextlib.suppress(OSError):
            fh.close()
        raise
    with _naming(path):
        try:
            if sync:
                fh.flush()
                _sync(fh.fileno())
        finally:
            fh.close()


def _sync(fd):
    """fsync, where the file system offers it (some refuse with EINVAL or ENOTSUP:
    the data are then as safe as the file system makes them)."""
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
            raise


_FD_PATH = re.compile(r"^/(?:proc/(self|\d+)/fd|dev/fd)/(\d+)$")


def _own_descriptor(path):
    """The file descriptor of this process that ``path`` names through its symlinks
    (/dev/stdout -> /proc/self/fd/1), or None."""
    hop = os.path.abspath(path)
    for _ in range(40):  # the symlink chain, hop by hop
        match = _FD_PATH.match(hop)
        if match and match.group(1) in (None, "self", str(os.getpid())):
            return int(match.group(2))
        if not os.path.islink(hop):
            return None
        hop = os.path.normpath(os.path.join(os.path.dirname(hop), os.readlink(hop)))
    return None


def _special_file(path):
    """True when ``path`` must be written in place: it exists and (symlinks followed) is
    not a regular file or a folder (a device, a FIFO, a socket: /dev/null, a named
    pipe), or it names one of this process's descriptors (/dev/stdout redirected to a
    file: renaming over that file would unlink the one the shell keeps open)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)) or _own_descriptor(path) is not None


def _check_file_name(path):
    """Refuse what fopen would: an empty name, a name ending with a separator (realpath
    would drop it and create a file where a folder was meant)."""
    if not path:
        raise _cannot_write("''", "empty file name")
    if path.endswith(os.sep) or (os.altsep and path.endswith(os.altsep)):
        raise _cannot_write(path, "not a file name: it ends with a path separator")


# SIGTERM and SIGHUP (what batch schedulers, `timeout` and a closed terminal send) end
# the process without unwinding Python, so they would leave the temporary files behind.
# While temporary files exist, a signal whose action was the default one removes them
# and then takes the default action (the process ends by the signal: status 128 + n).
_CLEANUP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP")
                         if hasattr(signal, name))
_pending = {}  # temporary file -> pid of the process that created it
_previous = {}  # signal -> the handler ours replaced
_lock = threading.Lock()


def _remove_and_die(signum, frame):
    for tmp, pid in list(_pending.items()):
        if pid == os.getpid():  # (not a forked child's copy of the parent's list)
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)  # (only if the default action did not end the process)


@contextlib.contextmanager
def _signals_blocked():
    if not _CLEANUP_SIGNALS or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _CLEANUP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def _register(tmp):
    """Called with the signals blocked: remove ``tmp`` on SIGTERM/SIGHUP (handlers are
    set from the main thread only, and only over the default action: a handler of the
    caller's or an ignored signal is left alone)."""
    with _lock:
        if not _pending and threading.current_thread() is threading.main_thread():
            for signum in _CLEANUP_SIGNALS:
                if signal.getsignal(signum) is signal.SIG_DFL:
                    _previous[signum] = signal.signal(signum, _remove_and_die)
        _pending[tmp] = os.getpid()


def _unregister(tmp):
    with _lock:
        _pending.pop(tmp, None)
        if not _pending and threading.current_thread() is threading.main_thread():
            for signum, handler in _previous.items():
                signal.signal(signum, handler)
            _previous.clear()


@contextlib.contextmanager
def atomic_write(path, mode="w", encoding="utf-8"):
    """Open a temporary file next to ``path``; on success rename it over ``path``.

    On any exception the temporary file is removed and ``path`` is left untouched, so
    no half-written output is ever visible. Like ``fopen(path, "w")`` in the SVM-light
    tools, a symbolic link is written through (the file it points to is replaced) and a
    device or named pipe (/dev/null, /dev/stdout) is written directly. The new file
    keeps the mode of the file it replaces, or gets 0666 minus the umask. Errors are
    raised as ``OSError`` naming ``path``. SIGTERM or SIGHUP during the write (when
    their action is the default one) removes the temporary file before the process
    ends by the signal; the previous handlers are restored afterwards.
    """
    path = os.fspath(path)
    _check_file_name(path)
    kwargs = {} if "b" in mode else {"encoding": encoding, "newline": "\n"}
    if _special_file(path):
        fd = _own_descriptor(path)
        try:
            if fd is None:
                fh = open(path, mode, **kwargs)
            else:  # share the descriptor's offset, so output keeps its order (as >> would)
                for stream in (sys.stdout, sys.stderr):
                    with contextlib.suppress(Exception):
                        stream.flush()
                fh = os.fdopen(os.dup(fd), mode, **kwargs)
        except OSError as exc:
            raise _cannot_write(path, exc.strerror or exc) from None
        with _written(fh, path) as named:
            yield named
        return
    target = _target(path)  # a symlink's file, created if it does not exist
    _refuse_write_protected(path, target)
    try:
        file_mode = stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        file_mode = 0o666 & ~_current_umask()
    folder = os.path.dirname(target)
    with _signals_blocked():  # (no moment where the file exists unregistered)
        try:
            # (the name's last 100 bytes: a temporary name stays within NAME_MAX)
            suffix = os.fsdecode(os.fsencode(os.path.basename(target))[-100:])
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix="-" + suffix, dir=folder)
        except OSError as exc:
            raise _cannot_write(path, exc.strerror or exc) from None
        _register(tmp)
    try:
        with _written(os.fdopen(fd, mode, **kwargs), path, sync=True) as fh:
            yield fh
        os.chmod(tmp, file_mode)
        try:
            os.replace(tmp, target)
        except OSError as exc:
            raise _cannot_write(path, exc.strerror or exc) from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    finally:
        _unregister(tmp)


def _target(path):
    """The file ``path`` names, through symbolic links (a dangling link's target is
    created, as fopen does); a link loop is refused as fopen refuses it."""
    if os.path.islink(path):
        try:
            os.stat(path)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _cannot_write(path, exc.strerror) from None
    return os.path.realpath(path)


def _refuse_write_protected(path, target):
    """A file we may not write is not replaced either (fopen(path, "w") would fail;
    the rename only needs the folder's permission)."""
    if os.path.exists(target) and not os.access(target, os.W_OK):
        raise _cannot_write(path, "permission denied")


def check_writable(path, inputs=()):
    """Raise ``OSError`` naming ``path`` unless a file can be written there (its folder
    exists and is writable, it is not a folder, nor one of the ``inputs`` files):
    checked before long work starts."""
    path = os.fspath(path)
    _check_file_name(path)
    for source in inputs:
        if os.path.exists(path) and os.path.exists(source) and os.path.samefile(path, source):
            raise _cannot_write(path, f"it is the input file {source}")
    if os.path.isdir(path):
        raise _cannot_write(path, "it is a directory")
    if _special_file(path):
        if not os.access(path, os.W_OK):
            raise _cannot_write(path, "permission denied")
        return
    target = _target(path)
    _refuse_write_protected(path, target)
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise _cannot_write(path, f"no such directory: {folder}")
    if not os.access(folder, os.W_OK):
        raise _cannot_write(path, f"permission denied: {folder}")
