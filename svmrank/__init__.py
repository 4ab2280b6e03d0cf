"""svmrank: structural SVMs trained directly on AP, NDCG, ROC area and top-k accuracy."""
__version__ = "0.1.0"

from .estimators import (APSVM, HOAPSVM, HOBSVM, BinarySVM, LatentAPSVM, LatentSSVM,
                         LatentSVM, RankSVM, TopKSVM)
from .exceptions import ConvergenceWarning, InputFormatError, NotFittedError

__all__ = ["APSVM", "RankSVM", "BinarySVM", "LatentAPSVM", "LatentSVM", "LatentSSVM",
           "HOBSVM", "HOAPSVM", "TopKSVM", "ConvergenceWarning", "InputFormatError",
           "NotFittedError"]
