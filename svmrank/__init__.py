"""svmrank: structural SVMs trained directly on AP, NDCG, ROC area and top-k accuracy.

The estimators are imported on first use (``svmrank.APSVM``, ``from svmrank import
APSVM``): they need scikit-learn, whose import the console scripts' start-up does
without.
"""
__version__ = "0.1.0"

__all__ = ["APSVM", "RankSVM", "BinarySVM", "LatentAPSVM", "LatentSVM", "LatentSSVM",
           "HOBSVM", "HOAPSVM", "TopKSVM", "RankSVMCV", "APSVMCV", "ConvergenceWarning",
           "InputFormatError", "NotFittedError", "QPError"]

_EXCEPTIONS = ("ConvergenceWarning", "InputFormatError", "NotFittedError", "QPError")


def __getattr__(name):
    if name in _EXCEPTIONS:
        from . import exceptions
        return getattr(exceptions, name)
    if name in __all__:
        from . import estimators
        return getattr(estimators, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
