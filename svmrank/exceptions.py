"""Exceptions and warnings raised by svmrank."""


class ConvergenceWarning(UserWarning):
    """A solver stopped at its iteration cap before reaching its tolerance."""


class InputFormatError(ValueError):
    """A file is malformed; the message names the file and the 1-based line."""


class NotFittedError(ValueError, AttributeError):
    """An estimator was used before ``fit`` (scikit-learn's exception of the same
    name is raised instead when scikit-learn is installed)."""


def not_fitted_error(message):
    """The not-fitted exception to raise: scikit-learn's when it is importable, so that
    its tools recognise it, else :class:`NotFittedError`."""
    try:
        from sklearn.exceptions import NotFittedError as sklearn_error
    except ImportError:
        return NotFittedError(message)
    return sklearn_error(message)
