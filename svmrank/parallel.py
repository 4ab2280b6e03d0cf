"""How many threads the kernels use: ``n_jobs`` of the estimators, ``--threads`` of the
console scripts.

The per-query loss-augmented inference and the per-bag argmax run on
:func:`current_threads` OpenMP threads (when the kernels were built with OpenMP; see
setup.py). The setting lives in a context variable, so that a fit in one Python thread
does not change another's. Every query (bag) is computed by one thread from its own data
alone, so results are bitwise the same for any thread count.
"""
import contextlib
import contextvars
import numbers
import os

__all__ = ["effective_n_jobs", "threads", "set_threads", "current_threads"]

_THREADS = contextvars.ContextVar("svmrank_threads", default=1)


def _cpu_count():
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # (not on Linux)
        return max(1, os.cpu_count() or 1)


def effective_n_jobs(n_jobs):
    """The number of threads ``n_jobs`` asks for, scikit-learn style.

    Parameters
    ----------
    n_jobs : int or None
        None or -1: every core this process may run on; k >= 1: k threads; -k: all
        cores but k - 1 (at least one).

    Returns
    -------
    int
    """
    if n_jobs is None:
        return _cpu_count()
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, numbers.Integral) or n_jobs == 0:
        raise ValueError(f"n_jobs: expected None or a non-zero integer, got {n_jobs!r}")
    if n_jobs < 0:
        return max(1, _cpu_count() + 1 + int(n_jobs))
    return int(n_jobs)


@contextlib.contextmanager
def threads(n_jobs):
    """Context manager: the kernels called inside use ``effective_n_jobs(n_jobs)`` threads."""
    token = _THREADS.set(effective_n_jobs(n_jobs))
    try:
        yield
    finally:
        _THREADS.reset(token)


def current_threads():
    """Threads the kernels use here: 1 outside :func:`threads`."""
    return _THREADS.get()


def set_threads(n_jobs):
    """Set the kernels' threads for the rest of the current context (the console scripts
    run each command in a context of its own); prefer :func:`threads` elsewhere."""
    _THREADS.set(effective_n_jobs(n_jobs))
