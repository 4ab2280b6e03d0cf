"""Scikit-learn-style estimators."""
from .cv import APSVMCV, RankSVMCV
from .high_order import HOAPSVM, HOBSVM
from .latent import LatentAPSVM, LatentSSVM, LatentSVM
from .ranking import APSVM, BinarySVM, RankSVM
from .topk import TopKSVM

__all__ = ["APSVM", "RankSVM", "BinarySVM", "LatentAPSVM", "LatentSVM", "LatentSSVM",
           "HOBSVM", "HOAPSVM", "TopKSVM", "RankSVMCV", "APSVMCV"]
