"""What the estimators share: scikit-learn's base classes with svmrank's metadata
requests and validation, the linear decision function, binary labels, and the
bookkeeping of the cutting-plane and CCCP families."""
import contextlib
import inspect
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import InputTags, TargetTags
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from .._validation import check_int, check_matrix, check_positive, check_vector, check_verbose
from ..learners.cutting_plane import cutting_plane
from ..parallel import threads

# Metadata with one entry per sample: requested by default under scikit-learn's metadata
# routing, so that a search hands each fold its own rows of them. The others (edges)
# are requested only with set_<method>_request, since scikit-learn passes them whole.
PER_SAMPLE_METADATA = ("qid", "bags", "known")
ROUTED_METHODS = ("fit", "score", "predict", "decision_function")


class SvmrankEstimator(BaseEstimator):
    """scikit-learn's BaseEstimator with per-sample metadata requested by default,
    sparse input, and X validated once (:meth:`_validate_X`)."""

    def __init_subclass__(cls, **kwargs):
        # scikit-learn reads __metadata_request__<method> class attributes (under any
        # name mangling) when it builds the set_<method>_request methods, below
        for method in ROUTED_METHODS:
            if callable(getattr(cls, method, None)):
                names = inspect.signature(getattr(cls, method)).parameters
                requests = {n: True for n in names if n in PER_SAMPLE_METADATA}
                setattr(cls, f"_{cls.__name__}__metadata_request__{method}", requests)
        super().__init_subclass__(**kwargs)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags = TargetTags(required=True)
        tags.input_tags = InputTags(sparse=True)
        return tags

    def _validate_X(self, X, reset):
        """X as a finite CSR float64 matrix (``check_matrix``); ``reset`` records
        ``n_features_in_`` (and ``feature_names_in_`` for a DataFrame), otherwise X
        must match them."""
        if not reset:
            check_is_fitted(self)
        checked = check_matrix(X, "X")
        validate_data(self, X, reset=reset, skip_check_array=True)
        return checked


class LinearScorerMixin:
    """``decision_function`` of a fitted linear model with ``coef_`` and ``intercept_``."""

    def decision_function(self, X):
        """Return the scores ``X @ coef_ + intercept_``, one per row of X.

        X must have ``n_features_in_`` columns (the CLI, like SVM-light, drops test
        features beyond the model's highest index before it calls this).
        """
        X = self._validate_X(X, reset=False)
        return np.asarray(X @ self.coef_).ravel() + self.intercept_


def class_relevance(classes):
    """Which of the sorted class labels are relevant: numbers > 0 (strings of numbers
    such as '+1' by their value, as SVM-light reads labels), or the second of two
    labels that are not numbers."""
    try:
        return np.asarray(classes).astype(np.float64) > 0
    except (TypeError, ValueError):
        return np.arange(len(classes)) == 1


class BinaryLabelsMixin:
    """Labels of a binary ranker or classifier: relevance y > 0 as SVM-light has it
    (graded relevance for more than two levels), the second of two classes for labels
    that are not numbers; ``classes_`` as scikit-learn has it, which ``predict``
    returns."""

    def _fit_labels(self, y, n_samples):
        """Relevance of y as float64 (what the problems take) after setting
        ``classes_``: numeric labels as they are; labels that are not numbers, 1 for
        the relevant and 0 for the other of two classes."""
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target "
                             "y is None")
        labels = np.asarray(y)
        if labels.ndim == 2 and labels.shape[1] == 1:
            labels = column_or_1d(labels, warn=True)
        if labels.dtype.kind == "c":
            raise ValueError("y: complex data not supported")
        labels = check_vector(labels, "y", n=n_samples, dtype=None, finite=False)
        if labels.dtype.kind == "f" and not np.isfinite(labels).all():
            raise ValueError("y: contains NaN or infinite values")
        try:
            self.classes_, codes = np.unique(labels, return_inverse=True)
        except TypeError as exc:
            raise ValueError(f"y: labels must be mutually comparable ({exc})") from None
        if len(self.classes_) == 1:
            raise ValueError(f"y: needs a relevant and a non-relevant sample; got one class "
                             f"({self.classes_.tolist()[0]!r})")
        try:
            return labels.astype(np.float64)
        except (TypeError, ValueError):
            if len(self.classes_) != 2:
                raise ValueError(f"y: labels that are not numbers must form two classes (the "
                                 f"second in sorted order is relevant); got "
                                 f"{len(self.classes_)}") from None
            return class_relevance(self.classes_)[codes].astype(np.float64)

    def _relevance(self, y):
        """Labels y as relevance for ``score``: numbers as they are, other labels 1 for
        the fitted relevant class and 0 elsewhere."""
        labels = np.asarray(y)
        try:
            return labels.astype(np.float64)
        except (TypeError, ValueError):
            check_is_fitted(self)
            return (labels == self.classes_[np.argmax(class_relevance(self.classes_))]).astype(
                np.float64)

    def predict(self, X):
        """The label of the score's side: the relevant class where the score is
        positive, the other elsewhere (0/1 relevance when the labels are not one
        relevant and one non-relevant class)."""
        positive = self.decision_function(X) > 0
        relevant = class_relevance(self.classes_)
        if len(self.classes_) != 2 or relevant.sum() != 1:
            return positive.astype(np.int64)
        return self.classes_[np.where(positive, np.argmax(relevant), np.argmin(relevant))]


class CuttingPlaneEstimator(SvmrankEstimator):
    """The families trained by the 1-slack cutting-plane learner: parameter checks and
    the learner's report (and CCCP's) as fitted attributes."""

    def _check_common(self):
        check_positive(self.C, "C")
        check_positive(self.epsilon, "epsilon")
        check_int(self.max_iter, "max_iter")
        check_verbose(self.verbose)

    def _solve(self, problem, **learner_options):
        """The learner's result on ``problem`` at the estimator's C, ε and iteration cap
        (``verbose`` too unless given)."""
        options = {"verbose": self.verbose, **learner_options}
        with self._threads():
            return cutting_plane(problem, float(self.C), float(self.epsilon),
                                 max_iter=int(self.max_iter), **options)

    def _threads(self):
        """Context: the kernels run on ``n_jobs`` threads (estimators that have it)."""
        n_jobs = getattr(self, "n_jobs", "unset")
        return contextlib.nullcontext() if n_jobs == "unset" else threads(n_jobs)

    def _run(self, problem, **learner_options):
        """:meth:`_solve`, keeping the learner's report as fitted attributes."""
        result = self._solve(problem, **learner_options)
        self._keep_report(result)
        return result

    def _keep_report(self, result):
        if result.converged:  # (a stopped run has its ConvergenceWarning)
            warn_if_zero(result.w, type(self).__name__, self.C)
        self.result_ = result
        self.n_iter_ = result.n_iter
        self.n_constraints_ = result.n_constraints
        self.objective_ = result.primal_objective
        self.duality_gap_ = result.duality_gap

    def _keep_cccp_report(self, outcome, solves):
        """CCCP's report (``outcome``) and that of the convex solve that produced its w
        (one of ``solves``); ``n_iter_`` counts the cutting-plane iterations of all."""
        self._keep_report(next(r for r in solves if r.w is outcome.w))
        self.objective_ = outcome.objective
        self.n_outer_iter_ = outcome.n_iter
        self.history_ = list(outcome.history)
        self.converged_ = outcome.converged
        self.n_iter_ = sum(r.n_iter for r in solves)


def is_partitioned(X):
    """Whether X is a partitioned data set (``svmrank.dask.SvmlightPartitions``), told
    apart without importing dask."""
    return hasattr(X, "partitions") and callable(getattr(X, "problem", None))


def check_partitioned_fit(estimator, X, y, qid):
    """The checks of a fit on partitioned X: y and qid come from the shards; records
    ``classes_`` and ``n_features_in_``."""
    if y is not None or qid is not None:
        raise ValueError(f"y, qid: {type(estimator).__name__}.fit on partitioned data reads "
                         "the labels and queries from the shards; pass them as None")
    if len(X.labels) < 2:
        raise ValueError(f"y: needs a relevant and a non-relevant sample; got one class "
                         f"({X.labels.tolist()[0]!r})")
    if not ((X.labels > 0).any() and (X.labels <= 0).any()):
        raise ValueError("y: needs relevant (y > 0) and non-relevant (y <= 0) samples")
    estimator.classes_ = X.labels
    estimator.n_features_in_ = X.n_features
    if hasattr(estimator, "feature_names_in_"):
        del estimator.feature_names_in_


def warn_if_zero(w, owner, C):
    """UserWarning when a fit ends at w = 0, where every sample ties."""
    if not np.any(w):
        warnings.warn(f"{owner} ended at w = 0 (every sample scores the same): C={C:g} may be "
                      "too small, the data may carry no signal, or (latent models) the "
                      "initialisation may be degenerate (try init='instances')",
                      UserWarning, stacklevel=4)


def refuse_sample_weight(sample_weight, owner):
    """``score`` takes ``sample_weight`` only as None (which scikit-learn's Pipeline
    passes under metadata routing); the measures here are per query, unweighted."""
    if sample_weight is not None:
        raise ValueError(f"sample_weight: {owner}.score does not weight samples (its measure "
                         "is computed per query); pass None")
