"""What the estimators share: scikit-learn's base classes with svmrank's metadata
requests and validation, the linear decision function, binary labels, and the
bookkeeping of the cutting-plane and CCCP families."""
import contextlib
import inspect
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils import InputTags, TargetTags
from sklearn.utils.metadata_routing import UNUSED
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from .._validation import (check_int, check_matrix, check_positive, check_vector, check_verbose,
                           qid_from_group, query_segments)
from ..learners.cccp import CCCPResult
from ..learners.cutting_plane import cutting_plane
from ..metrics import mean_over_ranked_queries, warn_without_queries
from ..parallel import threads
from ..progress import Monitor

# Metadata with one entry per sample: requested by default under scikit-learn's metadata
# routing, so that a search hands each fold its own rows of them. The others (edges)
# are requested only with set_<method>_request, since scikit-learn passes them whole;
# except LightGBM's group (query sizes), requested like qid, which it describes (a
# search hands it whole to every fold, which the size check then refuses).
PER_SAMPLE_METADATA = ("qid", "group", "bags", "known")
# fit options that are not metadata: never routed (a search would hand them on whole)
FIT_OPTIONS = ("eval_set", "early_stopping_rounds")
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
                requests.update({n: UNUSED for n in names if n in FIT_OPTIONS})
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
        features beyond the model's highest index before it calls this). X may be
        partitioned data (``svmrank.dask.read_svmlight``): scored on its workers, the
        scores returned in input order.
        """
        if is_partitioned(X):
            check_is_fitted(self)
            return X.decision_function(self.coef_, self.intercept_)
        X = self._validate_X(X, reset=False)
        return np.asarray(X @ self.coef_).ravel() + self.intercept_

    def _scores_and_labels(self, X, y, qid, group=None):
        """(scores, y, qid) that ``score`` ranks: X's scores, or for partitioned X (y, qid
        and group None) its scores with the shards' labels and queries."""
        if not is_partitioned(X):
            scores = self.decision_function(X)
            return scores, score_labels(y, len(scores)), qid
        if y is not None or qid is not None or group is not None:
            raise ValueError(f"y, qid: {type(self).__name__}.score on partitioned data reads "
                             "the labels and queries from the shards; pass them as None")
        check_is_fitted(self)
        return X.decision_function(self.coef_, self.intercept_, labels=True)


def score_labels(y, n):
    """``score``'s labels y as a 1-d array of ``n`` (a column vector is ravelled with
    scikit-learn's DataConversionWarning, as in ``fit``)."""
    labels = np.asarray(y) if y is not None else y
    if labels is not None and labels.ndim == 2 and labels.shape[1] == 1:
        labels = column_or_1d(labels, warn=True)
    return check_vector(labels, "y", n=n, dtype=None, finite=False)


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

    def _relevance(self, y, name="y"):
        """Labels y as relevance for ``score``: numbers as they are, other labels 1 for
        the fitted relevant class and 0 elsewhere (labels none of which is a class, as
        strings for a model of numbers, are refused: they would score NaN)."""
        labels = np.asarray(y)
        try:
            return labels.astype(np.float64)
        except (TypeError, ValueError):
            check_is_fitted(self)
            if labels.size and not np.isin(labels, self.classes_).any():
                raise ValueError(f"{name}: none of its labels is one of the model's classes "
                                 f"{self.classes_.tolist()}") from None
            return (labels == self.classes_[np.argmax(class_relevance(self.classes_))]).astype(
                np.float64)

    def predict(self, X):
        """The label of the score's side: the relevant class where the score is
        positive, the other elsewhere (0/1 relevance when the labels are not one
        relevant and one non-relevant class)."""
        return self._class_of(self.decision_function(X) > 0)

    def _class_of(self, positive):
        """The labels of a boolean ``positive`` (see :meth:`predict`)."""
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

    @contextlib.contextmanager
    def _monitoring(self, **monitor_options):
        """One :class:`~svmrank.progress.Monitor` for every solve of a fit (the CCCP
        rounds, say), showing progress at the estimator's ``verbose`` unless given."""
        options = {"verbose": check_verbose(self.verbose), **monitor_options}
        self._monitor = Monitor(**options)
        try:
            yield self._monitor
        finally:
            self._monitor.close()
            del self._monitor

    def _threads(self):
        """Context: the kernels run on ``n_jobs`` threads (estimators that have it)."""
        n_jobs = getattr(self, "n_jobs", "unset")
        return contextlib.nullcontext() if n_jobs == "unset" else threads(n_jobs)

    def _solve(self, problem, **learner_options):
        """The learner's result on ``problem`` at the estimator's C, ε and iteration cap,
        reporting to the fit's monitor (or to one of its own, which shows the
        estimator's ``verbose`` progress; the learner's own lines when ``verbose`` is
        given). Its iterations are kept as ``trace_``."""
        monitor = getattr(self, "_monitor", None)
        own = monitor is None
        if own:
            monitor = Monitor(verbose=0 if "verbose" in learner_options
                              else check_verbose(self.verbose))
        options = {"verbose": 0, **learner_options}
        try:
            with self._threads():
                return cutting_plane(problem, float(self.C), float(self.epsilon),
                                     max_iter=int(self.max_iter), monitor=monitor, **options)
        finally:
            if own:
                monitor.close()
            self.trace_ = monitor.records

    def _run(self, problem, monitor_options=None, **learner_options):
        """:meth:`_solve` (under a monitor with ``monitor_options`` when given: see
        :meth:`_eval_options`), keeping the learner's report as fitted attributes. With
        early stopping the result's w is that of the best validation score."""
        # (a fit replaces the fitted state: no earlier fit's validation result)
        drop_attributes(self, "best_iteration_", "best_score_")
        if monitor_options is None:
            result = self._solve(problem, **learner_options)
        else:
            with self._monitoring(**monitor_options) as monitor:
                result = self._solve(problem, **learner_options)
            if monitor.stopped_early:  # (the kept iterate's w, objective, dual and gap)
                best = result.history[monitor.best_iteration - 1]
                result.w, result.scores = monitor.best_w, None
                result.primal_objective, result.dual_objective, result.duality_gap = (
                    best["objective"], best["dual"], best["gap"])
                result.xi = (best["objective"] - 0.5 * float(result.w @ result.w)) / float(self.C)
            if monitor.evaluate is not None:
                self.best_iteration_ = monitor.best_iteration
                self.best_score_ = monitor.best_score
        self._keep_report(result)
        return result

    def _eval_options(self, eval_set, early_stopping_rounds, measure, name, n_features,
                      intercept=lambda w: 0.0):
        """Monitor options that score ``eval_set = (X_val, y_val[, qid_val])`` after every
        iteration: the mean of ``measure(y_q, s_q)`` over its ranked queries, recorded as
        ``"valid_" + name``, with scores ``X_val @ w[:n_features] + intercept(w)``; None
        without an eval_set."""
        if eval_set is None:
            if early_stopping_rounds is not None:
                raise ValueError("early_stopping_rounds: needs an eval_set to score")
            return None
        X_val = check_eval_X(eval_set, n_features, "qid_val", owner=self)
        y_val = check_vector(self._relevance(eval_set[1], "eval_set y_val"), "eval_set y_val",
                             n=X_val.shape[0])
        qid_val = eval_set[2] if len(eval_set) == 3 else None
        if qid_val is not None:  # (checked before the fit starts)
            query_segments(check_vector(qid_val, "eval_set qid_val", n=X_val.shape[0],
                                        dtype=None, finite=False), X_val.shape[0])
        if early_stopping_rounds is not None:
            check_int(early_stopping_rounds, "early_stopping_rounds")

        def evaluate(w):
            scores = np.asarray(X_val @ w[:n_features]).ravel() + intercept(w)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # (no ranked query: NaN)
                return mean_over_ranked_queries(measure, y_val, scores, qid_val)

        return {"evaluate": evaluate, "eval_name": f"valid_{name}",
                "early_stopping_rounds": early_stopping_rounds}

    def _no_early_stopping(self, early_stopping_rounds):
        """The CCCP models record ``eval_set`` scores but refuse early stopping."""
        if early_stopping_rounds is not None:
            raise ValueError(f"early_stopping_rounds: {type(self).__name__} does not stop early "
                             "(a CCCP round's convex solve must finish before the next "
                             "imputation, and its scores mid-round are not the round's "
                             "result); the eval_set score of every iteration is in trace_")

    def _stopped_at_start(self, start, problem, state, what):
        """CCCP's outcome when Ctrl-C stopped the starting fit ``what`` (its
        CuttingPlaneResult ``start``): no round run, w the start's best point, with its
        objective on the latent ``problem`` set to ``state`` (one inference call)."""
        w = start.w
        loss, g = problem.most_violated(w)
        xi = max(0.0, float(loss - w @ np.asarray(g, dtype=np.float64).ravel()))
        warnings.warn(f"{type(self).__name__}: interrupted during {what}: the fit stops at its "
                      "best point (no CCCP round run; not converged)", UserWarning,
                      stacklevel=3)
        return CCCPResult(w, state, 0.5 * float(w @ w) + float(self.C) * xi, 0, False, [],
                          interrupted=True)

    def _keep_report(self, result):
        if result.converged:  # (a stopped run has its ConvergenceWarning)
            warn_if_degenerate(result.w, result.scores, type(self).__name__, self.C,
                               getattr(self, "_degenerate_hint", ""))
        self.result_ = result
        self.converged_ = result.converged
        self.interrupted_ = result.interrupted
        self.n_iter_ = result.n_iter
        self.n_constraints_ = result.n_constraints
        self.objective_ = result.primal_objective
        self.duality_gap_ = result.duality_gap

    def _keep_cccp_report(self, outcome, solves):
        """CCCP's report (``outcome``) and that of the convex solve that produced its w
        (one of ``solves``); ``n_iter_`` counts the cutting-plane iterations of all.
        ``converged_`` needs that solve converged too: a solve stopped at ``max_iter``
        can end CCCP by making no progress."""
        kept = next(r for r in solves if r.w is outcome.w)
        self._keep_report(kept)
        self.objective_ = outcome.objective
        self.n_outer_iter_ = outcome.n_iter
        self.history_ = list(outcome.history)
        self.converged_ = outcome.converged and kept.converged
        self.interrupted_ = outcome.interrupted
        self.n_iter_ = sum(r.n_iter for r in solves)


def check_eval_X(eval_set, n_features, third=None, owner=None):
    """The validated X_val of ``eval_set = (X_val, y_val[, third])`` (without
    ``third``: a pair only); with ``owner`` (an estimator whose fit has validated X),
    a DataFrame's columns must be X's (:func:`check_eval_names`)."""
    lengths = (2,) if third is None else (2, 3)
    if not isinstance(eval_set, (tuple, list)) or len(eval_set) not in lengths:
        raise ValueError("eval_set: expected a tuple (X_val, y_val)"
                         + (f" or (X_val, y_val, {third})" if third else ""))
    if owner is not None:
        check_eval_names(owner, eval_set)
    X_val = check_matrix(eval_set[0], "eval_set X_val")
    if X_val.shape[1] != n_features:
        raise ValueError(f"eval_set X_val: has {X_val.shape[1]} features, but the training "
                         f"X has {n_features}")
    return X_val


def check_eval_names(owner, eval_set):
    """Refuse an ``eval_set`` X_val DataFrame whose columns are not the feature names
    ``owner`` was fitted with (validation scores of misaligned columns would choose
    the kept w); X_val without names is used by position, as at predict time."""
    names = getattr(owner, "feature_names_in_", None)
    columns = getattr(eval_set[0], "columns", None) if isinstance(eval_set, (tuple, list)) \
        and eval_set else None
    if names is None or columns is None:
        return
    columns = np.asarray(columns, dtype=object)
    if columns.shape != names.shape or not np.array_equal(columns, names):
        raise ValueError("eval_set X_val: its columns are not the feature names of X (the "
                         "same names in the same order); select them with X_val[X.columns]")


def drop_attributes(estimator, *names):
    """Delete the fitted attributes ``names`` that ``estimator`` has (an earlier fit's)."""
    for name in names:
        if hasattr(estimator, name):
            delattr(estimator, name)


def is_partitioned(X):
    """Whether X is a partitioned data set (``svmrank.dask.SvmlightPartitions``), told
    apart without importing dask."""
    return hasattr(X, "partitions") and callable(getattr(X, "problem", None))


def check_partitioned_fit(estimator, X, y, qid, graded=False, **unsupported):
    """The checks of a fit on partitioned X: y and qid come from the shards, with two
    labels or more (``graded`` False: relevant and non-relevant ones); the fit
    arguments in ``unsupported`` (group, eval_set, early_stopping_rounds) must be None.
    Records ``classes_``, ``n_features_in_`` and ``max_query_size_``."""
    if y is not None or qid is not None:
        raise ValueError(f"y, qid: {type(estimator).__name__}.fit on partitioned data reads "
                         "the labels and queries from the shards; pass them as None")
    given = [name for name, value in unsupported.items() if value is not None]
    if given:
        raise ValueError(f"{given[0]}: not supported by {type(estimator).__name__}.fit on "
                         "partitioned (Dask) data; pass None (the queries come from the "
                         "shards; a validation set is scored in memory only)")
    if len(X.labels) < 2:
        raise ValueError(f"y: needs a relevant and a non-relevant sample; got one class "
                         f"({X.labels.tolist()[0]!r})")
    if not graded and not ((X.labels > 0).any() and (X.labels <= 0).any()):
        raise ValueError("y: needs relevant (y > 0) and non-relevant (y <= 0) samples")
    estimator.classes_ = X.labels
    estimator.n_features_in_ = X.n_features
    sizes = X.query_sizes()  # (score without qid warns past the largest, as in memory)
    estimator.max_query_size_ = int(sizes.max()) if len(sizes) > 1 else None
    drop_attributes(estimator, "feature_names_in_")


def warn_if_degenerate(w, scores, owner, C, hint=""):
    """UserWarning when a fit ends where every training sample ties: at w = 0, or with
    training ``scores`` (optional; one column per class for several) that are all
    equal although w is not 0 (up to rounding: within 1e-12 of their magnitude);
    ``hint`` adds the owner's own cause of w = 0."""
    if not np.any(w):
        warnings.warn(f"{owner} ended at w = 0 (every sample scores the same): C={C:g} may be "
                      f"too small or the data may carry no signal{hint}",
                      UserWarning, stacklevel=4)
        return
    if scores is None or np.shape(scores)[0] < 2:
        return
    scores = np.asarray(scores, dtype=np.float64)
    spread = np.ptp(scores, axis=0)
    if np.all(spread <= 1e-12 * np.abs(scores).max(axis=0)):
        warnings.warn(f"{owner} ended with training scores that all tie (w is not 0, but "
                      "X w is the same for every sample): w weighs only features without "
                      f"variance (constant columns, the bias), C={C:g} may be too small, or "
                      "the labels may carry no signal the features separate",
                      UserWarning, stacklevel=4)


# losses that use graded labels as they are (no binarisation by label > 0)
GRADED_LOSSES = ("pairs", "ndcg")


def warn_binarised_labels(classes, loss, owner):
    """One UserWarning when a ranker is given more than two distinct labels for a loss
    that only sees relevance ``label > 0`` (none for a loss in ``GRADED_LOSSES``)."""
    name = getattr(loss, "name", loss)
    if len(classes) <= 2 or name in GRADED_LOSSES:
        return
    try:
        relevant = np.asarray(classes).astype(np.float64) > 0
    except (TypeError, ValueError):
        return  # (labels that are not numbers are refused elsewhere)
    warnings.warn(f"y: {len(classes)} distinct labels, but {owner}(loss={name!r}) uses binary "
                  f"relevance: labels > 0 ({int(relevant.sum())} of them) count as relevant "
                  "and the others as not; use a graded loss (loss='ndcg' or 'pairs') to "
                  "use the grades", UserWarning, stacklevel=3)


def refuse_sample_weight(sample_weight, owner):
    """``score`` takes ``sample_weight`` only as None (which scikit-learn's Pipeline
    passes under metadata routing); the measures here are per query, unweighted."""
    if sample_weight is not None:
        raise ValueError(f"sample_weight: {owner}.score does not weight samples (its measure "
                         "is not a sum over samples); pass None")


def fit_queries(estimator, qid, group, n_samples):
    """The queries of a fit as ``qid`` (from ``qid`` or LightGBM's ``group``, see
    ``qid_from_group``), recording ``max_query_size_``: the largest query's rows when
    there are several queries, else None (``score`` warns when it gets more rows than
    that without queries)."""
    qid = qid_from_group(group, n_samples, qid)
    sizes = np.diff(query_segments(qid, n_samples)[1])
    estimator.max_query_size_ = int(sizes.max()) if len(sizes) > 1 else None
    return qid


def score_queries(estimator, qid, group, n_samples):
    """The queries of a ``score`` call as ``qid``; without qid or group, warns (once)
    when the rows are more than one training query's worth."""
    qid = qid_from_group(group, n_samples, qid)
    if qid is None:
        warn_without_queries(estimator, n_samples, f"{type(estimator).__name__}.score")
    return qid
