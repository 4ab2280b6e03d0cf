"""svmrank: structural SVMs trained directly on AP, NDCG, ROC area and top-k accuracy."""
__version__ = "0.1.0"

from .exceptions import ConvergenceWarning, InputFormatError  # noqa: F401
from .estimators.ranking import APSVM, BinarySVM, RankSVM  # noqa: F401
from .estimators.latent import LatentAPSVM, LatentSSVM, LatentSVM  # noqa: F401
from .estimators.topk import TopKSVM  # noqa: F401
from .estimators.high_order import HOAPSVM, HOBSVM  # noqa: F401
