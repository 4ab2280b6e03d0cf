"""Exceptions and warnings raised by svmrank.

``ConvergenceWarning`` and ``NotFittedError`` are scikit-learn's own classes, so filters
and ``except`` clauses on either name apply. They are imported from scikit-learn on
first use: importing it takes about a second, which the console scripts' start-up and
the file readers do without.
"""

__all__ = ["ConvergenceWarning", "InputFormatError", "NotFittedError", "QPError"]


class InputFormatError(ValueError):
    """A file is malformed; the message names the file and the 1-based line."""


class QPError(RuntimeError):
    """The cutting-plane learner's QP could not be solved (infeasible hard constraints,
    or no convergence)."""


def __getattr__(name):
    if name in ("ConvergenceWarning", "NotFittedError"):
        import sklearn.exceptions
        return getattr(sklearn.exceptions, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
