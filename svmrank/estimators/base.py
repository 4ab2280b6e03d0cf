"""Base class shared by the estimators: scikit-learn's parameter protocol without
depending on scikit-learn, and the linear decision function."""
import inspect

import numpy as np

from .._validation import check_matrix
from ..exceptions import not_fitted_error


class _Requests(dict):
    """Metadata requests {(method, name): True | False | None | alias}; scikit-learn's
    ``clone`` copies an estimator's ``_metadata_request`` through this hook."""

    def __sklearn_clone__(self):
        return _Requests(self)


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

    # scikit-learn's metadata routing (``sklearn.set_config(enable_metadata_routing=True)``):
    # the keyword arguments of these methods beyond X and y. Those with one entry per
    # sample (qid, bag ids, known) are requested by default, so a search passes each
    # fold its own rows of them; the others (edges) only on request, since scikit-learn
    # passes them to every fold whole. ``set_<method>_request`` changes either.
    _ROUTED = ("fit", "score", "predict", "decision_function")
    _PER_SAMPLE = ("qid", "bags", "known")

    def _routed_params(self, method):
        names = list(inspect.signature(getattr(self, method)).parameters)[1:]
        return [n for n in names if n != "y"]

    def get_metadata_routing(self):
        """The metadata each method takes (scikit-learn's ``MetadataRequest``)."""
        from sklearn.utils.metadata_routing import MetadataRequest
        request = MetadataRequest(owner=type(self).__name__)
        chosen = getattr(self, "_metadata_request", {})
        for method in self._ROUTED:
            if hasattr(self, method):
                for name in self._routed_params(method):
                    default = True if name in self._PER_SAMPLE else None
                    getattr(request, method).add_request(
                        param=name, alias=chosen.get((method, name), default))
        return request

    def _set_request(self, method, requests):
        from sklearn import get_config  # (routing is scikit-learn's)
        from sklearn.utils.metadata_routing import UNCHANGED
        if not get_config().get("enable_metadata_routing", False):
            raise RuntimeError(f"set_{method}_request is only available when metadata routing "
                               "is enabled: sklearn.set_config(enable_metadata_routing=True)")
        valid = self._routed_params(method)
        for name, alias in requests.items():
            if name not in valid:
                raise ValueError(f"set_{method}_request: {type(self).__name__}.{method} takes no "
                                 f"{name!r}; it takes {', '.join(valid) or 'no metadata'}")
            if not (alias is None or isinstance(alias, bool) or (isinstance(alias, str) and (
                    alias == UNCHANGED or alias.isidentifier()))):
                raise ValueError(f"set_{method}_request: {name} must be True, False, None or "
                                 f"an alias that is a Python identifier, got {alias!r}")
        changed = {(method, n): a for n, a in requests.items()
                   if not (isinstance(a, str) and a == UNCHANGED)}
        self._metadata_request = _Requests({**getattr(self, "_metadata_request", {}), **changed})
        return self

    def set_fit_request(self, **requests):
        """Which metadata ``fit`` takes under scikit-learn's metadata routing."""
        return self._set_request("fit", requests)

    def set_score_request(self, **requests):
        """Which metadata ``score`` takes under scikit-learn's metadata routing."""
        return self._set_request("score", requests)

    def set_predict_request(self, **requests):
        """Which metadata ``predict`` takes under scikit-learn's metadata routing."""
        return self._set_request("predict", requests)

    def set_decision_function_request(self, **requests):
        """Which metadata ``decision_function`` takes under scikit-learn's routing."""
        return self._set_request("decision_function", requests)

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


def refuse_sample_weight(sample_weight, owner):
    """``score`` takes ``sample_weight`` only as None (which scikit-learn's Pipeline
    passes under metadata routing); the measures here are per query, unweighted."""
    if sample_weight is not None:
        raise ValueError(f"sample_weight: {owner}.score does not weight samples (its measure "
                         "is computed per query); pass None")
