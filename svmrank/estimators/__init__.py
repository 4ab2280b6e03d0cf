"""Scikit-learn-style estimators."""
from .ranking import APSVM, BinarySVM, RankSVM  # noqa: F401
