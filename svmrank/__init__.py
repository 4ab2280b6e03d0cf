"""svmrank: structural SVMs trained directly on AP, NDCG, ROC area and top-k accuracy."""
__version__ = "0.1.0"

from .exceptions import ConvergenceWarning, InputFormatError, NotFittedError

_ESTIMATORS = ("APSVM", "RankSVM", "BinarySVM", "LatentAPSVM", "LatentSVM", "LatentSSVM",
               "HOBSVM", "HOAPSVM", "TopKSVM")
__all__ = [*_ESTIMATORS, "ConvergenceWarning", "InputFormatError", "NotFittedError"]


def __getattr__(name):
    # The estimators (and scikit-learn with them) load on first use, so that the console
    # scripts, which import svmrank.cli.*, start without them.
    if name in _ESTIMATORS:
        from . import estimators
        value = getattr(estimators, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted({*globals(), *_ESTIMATORS})
