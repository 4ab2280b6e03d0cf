"""Exceptions and warnings raised by svmrank."""


class ConvergenceWarning(UserWarning):
    """A solver stopped at its iteration cap before reaching its tolerance."""


class InputFormatError(ValueError):
    """A file is malformed; the message names the file and the 1-based line."""
