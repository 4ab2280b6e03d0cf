"""Base class shared by the estimators: scikit-learn's parameter protocol without
depending on scikit-learn, and the linear decision function."""
import inspect

import numpy as np

from .._validation import check_matrix
from ..exceptions import not_fitted_error


class BaseEstimator:
    """get_params / set_params / repr in the scikit-learn style.

    Subclasses list every hyper-parameter as an explicit keyword of ``__init__`` and
    store it unchanged under the same attribute name.
    """

    @classmethod
    def _param_names(cls):
        sig = inspect.signature(cls.__init__)
        return sorted(p.name for p in sig.parameters.values()
                      if p.name != "self" and p.kind != p.VAR_KEYWORD)

    def get_params(self, deep=True):
        """Return the estimator's hyper-parameters as a dict."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        """Set hyper-parameters; unknown names raise ``ValueError``."""
        valid = self._param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(f"invalid parameter {name!r} for {type(self).__name__}; "
                                 f"valid parameters: {', '.join(valid)}")
            setattr(self, name, value)
        return self

    def __repr__(self):
        defaults = {p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()}
        changed = [f"{k}={v!r}" for k, v in self.get_params().items()
                   if not (isinstance(defaults.get(k), type(v)) and defaults.get(k) == v)]
        return f"{type(self).__name__}({', '.join(changed)})"

    def __sklearn_tags__(self):
        # Only consulted when scikit-learn is installed; imported lazily so that it
        # stays an optional (test) dependency.
        from sklearn.utils import Tags, TargetTags, InputTags
        return Tags(estimator_type=getattr(self, "_estimator_type", None),
                    target_tags=TargetTags(required=True),
                    input_tags=InputTags(sparse=True))


class LinearScorerMixin:
    """``decision_function`` for a fitted linear model with ``coef_`` and ``intercept_``."""

    def _check_fitted(self):
        if not hasattr(self, "coef_"):
            raise not_fitted_error(f"This {type(self).__name__} instance is not fitted yet; call fit first")

    def decision_function(self, X):
        """Return the scores ``X @ coef_ + intercept_``, one per row of X.

        X must have ``n_features_in_`` columns (the CLI, like SVM-light, drops test
        features beyond the model's highest index before it calls this).
        """
        self._check_fitted()
        X = check_matrix(X, "X")
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} "
                             f"is expecting {self.n_features_in_} features as input")
        return np.asarray(X @ self.coef_).ravel() + self.intercept_
