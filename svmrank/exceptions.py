"""Exceptions and warnings raised by svmrank."""
import sys


class ConvergenceWarning(UserWarning):
    """A solver stopped at its iteration cap before reaching its tolerance. When
    scikit-learn has been imported, the warning issued is also an instance of
    ``sklearn.exceptions.ConvergenceWarning``, so filters on either class apply."""

    def __reduce__(self):  # (the class made with scikit-learn's has no module name)
        return _rebuild, ("convergence", self.args)


_combined = {}


def _also_sklearns(ours, theirs):
    """A subclass of both ``ours`` and scikit-learn's ``theirs``, made once."""
    if ours not in _combined:
        _combined[ours] = type(ours.__name__, (ours, theirs),
                               {"__module__": __name__, "__doc__": ours.__doc__})
    return _combined[ours]


def convergence_warning():
    """The category to warn with: :class:`ConvergenceWarning`, also subclassing
    scikit-learn's when the program has imported it (never importing it here: that
    would cost about a second)."""
    sklearn_exceptions = sys.modules.get("sklearn.exceptions")
    if sklearn_exceptions is None:
        return ConvergenceWarning
    return _also_sklearns(ConvergenceWarning, sklearn_exceptions.ConvergenceWarning)


class InputFormatError(ValueError):
    """A file is malformed; the message names the file and the 1-based line."""


class NotFittedError(ValueError, AttributeError):
    """An estimator was used before ``fit``. When scikit-learn is installed, the
    exception raised is also an instance of ``sklearn.exceptions.NotFittedError``."""

    def __reduce__(self):
        return _rebuild, ("not fitted", self.args)


def _rebuild(kind, args):
    """Unpickle one of the classes above as the factory below would make it."""
    if kind == "convergence":
        return convergence_warning()(*args)
    return not_fitted_error(*args)


def not_fitted_error(message):
    """The not-fitted exception to raise: a :class:`NotFittedError` that, when
    scikit-learn is importable, also subclasses its NotFittedError, so that both
    ``except`` clauses and scikit-learn's tools recognise it."""
    try:
        from sklearn.exceptions import NotFittedError as sklearn_error
    except ImportError:
        return NotFittedError(message)
    return _also_sklearns(NotFittedError, sklearn_error)(message)
