"""Exceptions and warnings raised by svmrank."""


class ConvergenceWarning(UserWarning):
    """A solver stopped at its iteration cap before reaching its tolerance."""


class InputFormatError(ValueError):
    """A file is malformed; the message names the file and the 1-based line."""


class NotFittedError(ValueError, AttributeError):
    """An estimator was used before ``fit``. When scikit-learn is installed, the
    exception raised is also an instance of ``sklearn.exceptions.NotFittedError``."""


_both = []


def not_fitted_error(message):
    """The not-fitted exception to raise: a :class:`NotFittedError` that, when
    scikit-learn is importable, also subclasses its NotFittedError, so that both
    ``except`` clauses and scikit-learn's tools recognise it."""
    try:
        from sklearn.exceptions import NotFittedError as sklearn_error
    except ImportError:
        return NotFittedError(message)
    if not _both:
        _both.append(type("NotFittedError", (NotFittedError, sklearn_error),
                          {"__module__": __name__, "__doc__": NotFittedError.__doc__}))
    return _both[0](message)
