"""Top-k multiclass SVM (Lapin, Hein & Schiele 2015) trained by Prox-SDCA."""

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from .._validation import check_int, check_matrix, check_positive, check_verbose, is_missing
from ..learners.sdca import LOSSES, score_blocks, sdca_topk
from ..metrics import top_k_accuracies
from ..parallel import threads
from ..progress import Monitor, sdca_line
from .base import (SvmrankEstimator, check_eval_X, drop_attributes, refuse_sample_weight,
                   warn_if_degenerate)

KERNELS = ("linear", "precomputed")


def _check_labels(y, n, owner):
    if y is None:
        raise ValueError(f"{owner} requires y to be passed, but the target y is None")
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"y: expected shape ({n},), got {y.shape}")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError("y: contains NaN or infinite labels")
    if y.dtype.kind == "O" and any(is_missing(v) for v in y.tolist()):
        raise ValueError("y: contains NaN or missing labels")
    try:
        classes, codes = np.unique(y, return_inverse=True)
    except TypeError as exc:
        raise ValueError(f"y: labels must be mutually comparable ({exc})") from None
    # np.unique sorts: labels without a total order (sets, say) come out repeated
    if y.dtype.kind == "O" and _repeated(classes.tolist()):
        raise ValueError("y: labels must be totally ordered by < (np.unique returned a "
                         "label twice)")
    return classes, codes.ravel().astype(np.intp)


def _repeated(labels):
    """Whether some label occurs twice (by ==; by hash when the labels have one)."""
    try:
        return len(set(labels)) != len(labels)
    except TypeError:  # (unhashable labels, lists say: compare pairwise)
        return any(a == b for i, a in enumerate(labels) for b in labels[i + 1:])


def _check_label_kind(y, classes, name):
    """Refuse labels of another kind (numbers, strings) than the classes: every sample
    would count as an error, silently (scikit-learn's metrics refuse the mix too)."""
    def kind(a):
        if a.dtype.kind == "O":  # (pandas: the kind of the elements, when they share one)
            kinds = {"number" if isinstance(v, numbers.Number) else
                     "string" if isinstance(v, (str, bytes)) else None for v in a.tolist()}
            return kinds.pop() if len(kinds) == 1 else None
        return "number" if a.dtype.kind in "biuf" else "string" if a.dtype.kind in "US" \
            else None
    got, want = kind(np.asarray(y)), kind(np.asarray(classes))
    if got and want and got != want:
        raise ValueError(f"{name}: {got} labels, but the classes (classes_) are {want}s: "
                         f"{np.asarray(classes)[:3].tolist()}...")


def _check_classes(classes, y_classes):
    """Sorted unique ``classes`` that include every label of y (``y_classes``)."""
    classes = np.asarray(classes)
    if classes.ndim != 1:
        raise ValueError("classes: expected a 1-d array of distinct labels")
    if any(is_missing(c) or c in (np.inf, -np.inf) for c in classes.tolist()):
        raise ValueError("classes: contains NaN, infinite or missing labels")
    try:
        if len(np.unique(classes)) != len(classes):
            raise ValueError("classes: expected a 1-d array of distinct labels")
    except TypeError as exc:
        raise ValueError(f"classes: labels must be mutually comparable ({exc})") from None
    classes = np.sort(classes)
    missing = y_classes[~np.isin(y_classes, classes)]
    if len(missing):
        raise ValueError(f"classes: label {missing[0].item()!r} of y is not among the classes")
    return classes


class TopKSVM(ClassifierMixin, SvmrankEstimator):
    """Top-k multiclass SVM: one linear scorer per class, trained on the top-k hinge loss.

    Solves ::

        min_W  1/2 ||W||_F^2 + C sum_i phi(W^T x_i - <w_{y_i}, x_i> 1)

    where phi is the top-k hinge loss: ``loss="alpha"`` (eq. 3 of the paper,
    ``max(0, mean of the k largest h_j)``) or ``loss="beta"`` (eq. 5, Usunier et al.,
    ``mean of the k largest max(0, h_j)``), with ``h_j = 1 + s_j - s_{y_i}`` over the
    classes j != y_i. alpha <= beta pointwise; k = 1 is Crammer and Singer's
    multiclass SVM for both. The solver is Prox-SDCA (Alg. 1), stopped when the
    relative duality gap (P - D) / max(|P|, |D|) falls to ``epsilon``.

    C and the other conventions:

    - the paper's regulariser is lambda = 1 / (C n) (n training samples); its
      objective is the one above divided by C n.
    - scikit-learn: ``LinearSVC(C=C, multi_class="crammer_singer", fit_intercept=False)``
      minimises exactly the objective above with k = 1 and the same C.
    - SVM-multiclass (``svm_multiclass_learn -c c``) scales the loss by 100 and divides
      C by n: its optimum is ``100 * W`` for this estimator's C = c / (100 n).

    There is no intercept (add a constant feature if one is needed). Memory grows as
    n_samples x n_classes: a fit needing more than
    ``svmrank.learners.sdca.MAX_SDCA_BYTES`` (4 GiB) is refused before allocating.

    Parameters
    ----------
    k : int
        The k of the top-k loss, 1 <= k < number of classes.
    loss : {"alpha", "beta"}
    C : float
        Regularisation constant (> 0), see above.
    epsilon : float
        Stop when the relative duality gap is <= epsilon.
    max_epoch : int
        Cap on passes over the data; reaching it warns with ConvergenceWarning.
    check_gap_every : int
        Compute the duality gap every this many epochs (it costs about one epoch).
    random_state : None, int, numpy Generator or RandomState
        Seeds the order in which each epoch visits the samples.
    kernel : {"linear", "precomputed"}
        "precomputed": X in ``fit`` is the (n, n) Gram matrix of the training samples
        and X in ``decision_function`` the (n_test, n) kernel between test and training
        samples (scores ``X @ dual_coef_``, Theorem 1); ``coef_`` is then undefined.
    verbose : int
        1 shows the objectives at every gap check (a live line on a terminal, see
        :mod:`svmrank.progress`).
    n_jobs : int or None, default None
        Threads of the duality-gap checks on CSR X, which run over blocks of rows (None
        or -1: every core; see :func:`svmrank.parallel.effective_n_jobs`). The epochs
        themselves are sequential (each step reads the W the previous one left). The
        result does not depend on it.

    Attributes
    ----------
    classes_ : ndarray (n_classes,)
        Sorted class labels (as ``np.unique``); score column j belongs to classes_[j].
    coef_ : ndarray (n_classes, n_features)
        One weight vector per class (linear kernel only).
    intercept_ : ndarray (n_classes,), zeros
    dual_coef_ : ndarray (n_samples, n_classes)
        Dual variables A with ``coef_ = (X^T A)^T``; row i sums to zero.
    k_, kernel_ : int, str
        The k and kernel of the fit (predictions and scores use them, whatever
        set_params changed since).
    n_iter_ : int
        Epochs run.
    duality_gap_, primal_objective_, dual_objective_ : float
        At the last gap check, in the C form above.
    history_ : list of (epoch, primal, dual, gap, seconds)
        One entry per gap check.
    trace_ : list of dict
        The gap checks as records (iteration = epoch, objective, dual, gap, time;
        ``valid_top<k>`` with an ``eval_set``).
    best_iteration_, best_score_ : int, float
        With an ``eval_set``: the gap check (1-based) of the best validation score, and
        that score.
    converged_, interrupted_ : bool
        Whether the gap reached ε; whether Ctrl-C ended the fit (after a whole epoch).
    n_features_in_ : int
    """

    def __init__(self, k=1, loss="alpha", C=1.0, epsilon=1e-3, max_epoch=1000,
                 check_gap_every=5, random_state=None, kernel="linear", verbose=0,
                 n_jobs=None):
        self.k = k
        self.loss = loss
        self.C = C
        self.epsilon = epsilon
        self.max_epoch = max_epoch
        self.check_gap_every = check_gap_every
        self.random_state = random_state
        self.kernel = kernel
        self.verbose = verbose
        self.n_jobs = n_jobs

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"  # (CV slices rows and columns)
        return tags

    def _fitted(self, name):
        """The value of parameter ``name`` at fit time (``k_``, ``kernel_``; a model
        fitted before these were kept has only the parameter itself)."""
        return getattr(self, name + "_", getattr(self, name))

    def _check_params(self):
        k = check_int(self.k, "k")
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {self.loss!r}")
        if self.kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {KERNELS}, got {self.kernel!r}")
        check_positive(self.C, "C")
        check_positive(self.epsilon, "epsilon")
        check_int(self.max_epoch, "max_epoch")
        check_int(self.check_gap_every, "check_gap_every")
        return k

    def _check_X(self, X_in, fitting):
        """Validate X once (check_matrix); dense input stays dense for the dense kernel.
        Fitting records ``n_features_in_`` (``feature_names_in_`` for a DataFrame)."""
        if not fitting:
            check_is_fitted(self)
        checked = check_matrix(X_in, "X")
        if (self.kernel if fitting else self._fitted("kernel")) == "precomputed":
            X = checked.toarray()
            if fitting and X.shape[1] != X.shape[0]:
                raise ValueError(f"X: a precomputed kernel needs {X.shape[0]} columns "
                                 f"(one per training sample), got shape {X.shape}")
            if not fitting and X.shape[1] != self.dual_coef_.shape[0]:  # (scikit-learn's wording)
                raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is "
                                 f"expecting {self.dual_coef_.shape[0]} features as input (a "
                                 "precomputed kernel: one column per training sample)")
        else:
            X = checked if sp.issparse(X_in) else checked.toarray()
        validate_data(self, X_in, reset=fitting, skip_check_array=True)
        return X

    def fit(self, X, y, classes=None, eval_set=None, early_stopping_rounds=None):
        """Fit on X (dense or CSR; the Gram matrix if kernel="precomputed") and labels y
        (any sortable hashable values). ``classes``, optional: every class label,
        including those without a training example (SVM-multiclass's classes
        1..max label); by default the labels of y.

        ``eval_set=(X_val, y_val)`` (X_val: the kernel between validation and training
        samples if kernel="precomputed") records the top-k accuracy at this k (as
        :meth:`score`) at every gap check, as ``valid_top<k>`` in ``trace_``; with
        ``early_stopping_rounds`` the fit stops when it has not improved for that many
        gap checks and keeps the weights of the best one."""
        k = self._check_params()
        X = self._check_X(X, fitting=True)
        classes_y, codes = _check_labels(y, X.shape[0], type(self).__name__)
        classes = classes_y if classes is None else _check_classes(classes, classes_y)
        codes = np.searchsorted(classes, classes_y)[codes]
        if len(classes) < 2:
            raise ValueError(f"y: needs at least 2 classes, got {len(classes)} class")
        if k >= len(classes):
            raise ValueError(f"k must be smaller than the number of classes "
                             f"({len(classes)}), got k={k}")
        monitor = Monitor(verbose=check_verbose(self.verbose), line=sdca_line, unit="epoch",
                          show_dual=True, **self._eval_options(eval_set, early_stopping_rounds,
                                                               X.shape[1], classes, k))
        try:
            with threads(self.n_jobs):  # (the gap checks' blocks of rows)
                result = sdca_topk(X, codes, len(classes), k=k, C=float(self.C),
                                   loss=self.loss, epsilon=float(self.epsilon),
                                   max_epoch=int(self.max_epoch),
                                   check_gap_every=int(self.check_gap_every),
                                   random_state=self.random_state, kernel=self.kernel,
                                   monitor=monitor)
        finally:
            monitor.close()
        self.trace_ = monitor.records
        if monitor.evaluate is not None:
            self.best_iteration_, self.best_score_ = monitor.best_iteration, monitor.best_score
        else:  # (not an earlier fit's)
            drop_attributes(self, "best_iteration_", "best_score_")
        if monitor.stopped_early:  # (the best gap check's weights and objectives)
            result.W, result.A = monitor.best_w
            best = monitor.records[monitor.best_iteration - 1]
            result.primal, result.dual, result.gap = best["objective"], best["dual"], best["gap"]
        self.converged_, self.interrupted_ = result.converged, result.interrupted
        self.classes_ = classes
        self.k_, self.kernel_ = k, self.kernel
        self.dual_coef_ = result.A
        if result.converged:  # (a stopped run has its ConvergenceWarning)
            warn_if_degenerate(result.A if result.W is None else result.W,
                               _training_scores(X, result), type(self).__name__, self.C)
        if result.W is not None:
            self.coef_ = np.ascontiguousarray(result.W.T)
        elif hasattr(self, "coef_"):
            del self.coef_
        self.intercept_ = np.zeros(len(classes))
        self.n_iter_ = result.n_epochs
        self.duality_gap_ = result.gap
        self.primal_objective_ = result.primal
        self.dual_objective_ = result.dual
        self.history_ = result.history
        return self

    def _eval_options(self, eval_set, early_stopping_rounds, n_columns, classes, k):
        """Monitor options scoring ``eval_set`` at every gap check (see :meth:`fit`)."""
        if eval_set is None:
            if early_stopping_rounds is not None:
                raise ValueError("early_stopping_rounds: needs an eval_set to score")
            return {}
        X_val = check_eval_X(eval_set, n_columns, owner=self)
        X_val = X_val.toarray() if self.kernel == "precomputed" else sp.csr_matrix(X_val)
        y_val = np.asarray(eval_set[1])
        if y_val.shape != (X_val.shape[0],):
            raise ValueError(f"eval_set y_val: expected shape ({X_val.shape[0]},), got "
                             f"{y_val.shape}")
        _check_label_kind(y_val, classes, "eval_set y_val")
        if early_stopping_rounds is not None:
            check_int(early_stopping_rounds, "early_stopping_rounds")

        def evaluate(params):
            W, A = params
            return _top_k_accuracy(np.asarray(X_val @ (A if W is None else W)), y_val,
                                   classes, k)

        return {"evaluate": evaluate, "eval_name": f"valid_top{k}",
                "early_stopping_rounds": early_stopping_rounds}

    def decision_function(self, X):
        """Class scores, shape (n_samples, n_classes), columns in ``classes_`` order."""
        X = self._check_X(X, fitting=False)
        weights = self.dual_coef_ if self._fitted("kernel") == "precomputed" else self.coef_.T
        # A CSR product sums each row in the same order whatever the batch (BLAS does
        # not), so classes tied at a margin sample are broken alike in every batch.
        return np.asarray(sp.csr_matrix(X) @ weights)

    def predict(self, X):
        """The highest scored class of each sample (ties: the first in ``classes_``)."""
        scores = self.decision_function(X)
        return self.classes_[np.argmax(scores, axis=1)]

    def predict_topk(self, X, k=None):
        """The k highest scored classes of each sample, best first, shape (n, k).

        ``k`` defaults to the training k; ties go to the class earlier in ``classes_``.
        """
        k = self._fitted("k") if k is None else k
        k = check_int(k, "k")
        scores = self.decision_function(X)
        if k > scores.shape[1]:
            raise ValueError(f"k must be at most the number of classes ({scores.shape[1]}), got {k}")
        return self.classes_[np.argsort(-scores, axis=1, kind="stable")[:, :k]]

    def score(self, X, y, sample_weight=None):
        """Top-k accuracy at the training k (samples whose label is not in ``classes_``
        count as errors; ``sample_weight`` must be None)."""
        refuse_sample_weight(sample_weight, type(self).__name__)
        scores = self.decision_function(X)
        y = np.asarray(y)
        if y.shape != (scores.shape[0],):
            raise ValueError(f"y: expected shape ({scores.shape[0]},), got {y.shape}")
        _check_label_kind(y, self.classes_, "y")
        return _top_k_accuracy(scores, y, self.classes_, int(self._fitted("k")))


def _training_scores(X, result):
    """The training scores for warn_if_degenerate: with CSR X and W, only each class's
    lowest and highest score (2 rows, computed over blocks of rows), which give the
    same spread and magnitude as the (n, m) scores without holding them."""
    if result.W is None or not sp.issparse(X) or X.shape[0] < 2:
        return np.asarray(X @ (result.A if result.W is None else result.W))
    low = np.full(result.W.shape[1], np.inf)
    high = -low
    for _, _, S in score_blocks(X, result.W):
        np.minimum(low, S.min(axis=0), out=low)
        np.maximum(high, S.max(axis=0), out=high)
    return np.vstack([low, high])


def _top_k_accuracy(scores, y, classes, k):
    """Top-k accuracy of class ``scores`` (columns in ``classes`` order) on labels ``y``;
    labels outside ``classes`` count as errors."""
    known = np.isin(y, classes)
    if not known.any():
        return 0.0
    acc = top_k_accuracies(y[known], scores[known], [k], classes)[0]
    return float(acc * known.sum() / len(y))
