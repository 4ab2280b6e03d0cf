"""Estimators trained on rank losses (AP, NDCG, ROC area) and the binary (error-rate)
structural SVM baseline."""
import numpy as np
from sklearn.base import ClassifierMixin

from .._validation import check_positive, check_vector
from ..losses import get_loss
from ..metrics import average_precision, is_ranked, mean_over_ranked_queries, ndcg, roc_auc
from ..problems.appx import APPX_BIAS, APPXProblem, check_appx_data
from ..problems.binary import BinaryProblem
from ..problems.ranking import RankingProblem
from .base import (BinaryLabelsMixin, CuttingPlaneEstimator, LinearScorerMixin,
                   check_partitioned_fit, is_partitioned, refuse_sample_weight)

_SCORERS = {"ap": average_precision, "ndcg": ndcg, "roc": roc_auc}


class RankSVM(ClassifierMixin, BinaryLabelsMixin, LinearScorerMixin, CuttingPlaneEstimator):
    """Structural SVM trained on a rank loss by the 1-slack cutting-plane algorithm.

    Solves min_w ½‖w‖² + C ξ s.t. w·(Ψ(R*) − Ψ(R)) ≥ Δ(R*, R) − ξ for every ranking R of
    every query (averaged over queries), as SVM^map does; C is on SVM^map's scale (loss
    in [0, 1]). Scores are ``X @ coef_ + intercept_``; ``intercept_`` is 0 (a rank loss
    has no threshold) except with ``approx``, which trains a bias feature.

    Parameters
    ----------
    loss : {"ap", "ndcg", "roc"} or svmrank.losses.QSLoss
        1 − AP, 1 − NDCG (binary relevance), 1 − ROC area, or a user's QS-suitable
        loss (checked for C1-C3 on each query size before training).
    C : float
        Regularisation constant (> 0).
    epsilon : float
        Stopping tolerance on the constraint violation (SVM-struct's ``-e``).
    max_iter : int
        Cap on cutting-plane iterations.
    lai : {"qs", "greedy", "search", "select", "search+select"}
        Loss-augmented inference method (svmrank.inference; "search" and
        "search+select" for AP and ROC area only).
    verbose : int
        1 prints one line per cutting-plane iteration.
    approx : float in [0, 100], optional
        AP-SVM-APPX (2014 paper, §3.3): train a binary SVM first, keep the top
        ``approx`` % (by margin) of the samples it classifies with margin ≥ 1 as easy
        (hard constraints y·(w·x + b) ≥ 1) and optimise the rank loss on the rest.
        None (default): the exact problem.

    n_jobs : int or None, default None
        Threads of the per-query inference (None or -1: every core; see
        :func:`svmrank.parallel.effective_n_jobs`). The result does not depend on it.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float (0, or with ``approx`` the bias of the easy-sample constraints)
    n_iter_, n_constraints_, objective_, duality_gap_ : learner report
    n_features_in_ : int
    loss_ : svmrank.losses.QSLoss
        The loss fitted (``score`` measures by it).
    n_easy_ : int
        With ``approx``: the number of easy samples (hard constraints).
    """

    def __init__(self, loss="ap", C=1.0, epsilon=1e-3, max_iter=10000, lai="qs", verbose=0,
                 approx=None, n_jobs=None):
        self.loss = loss
        self.C = C
        self.epsilon = epsilon
        self.max_iter = max_iter
        self.lai = lai
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.approx = approx

    def fit(self, X, y=None, qid=None):
        """Fit on X (dense or CSR), labels y (relevant: > 0, or the second of two
        non-numeric classes) and optional queries; or on X from
        ``svmrank.dask.read_svmlight`` (y and qid None), trained on its Dask cluster."""
        return self._fit(X, y, qid)

    def _fit(self, X, y, qid, w0=None):
        """:meth:`fit`, the learner started from ``w0`` (default 0) on data in memory."""
        self._check_common()
        if is_partitioned(X):
            return self._fit_partitioned(X, y, qid)
        X = self._validate_X(X, reset=True)
        y = self._fit_labels(y, X.shape[0])
        if getattr(self, "approx", None) is not None:
            return self._fit_approx(X, y, qid)
        problem = RankingProblem(X, y, qid=qid, loss=self.loss, lai=self.lai)
        result = self._run(problem, w0=w0)
        self.loss_ = get_loss(self.loss)
        self.coef_ = result.w
        self.intercept_ = 0.0
        self.n_queries_skipped_ = problem.n_skipped
        if hasattr(self, "n_easy_"):  # (from an earlier fit with approx)
            del self.n_easy_
        return self

    def _fit_partitioned(self, X, y, qid):
        if getattr(self, "approx", None) is not None:
            raise ValueError("approx: not supported on partitioned (Dask) data")
        check_partitioned_fit(self, X, y, qid)
        problem = X.problem("ranking", loss=self.loss, lai=self.lai)
        result = self._run(problem)
        self.loss_ = get_loss(self.loss)
        self.coef_ = result.w
        self.intercept_ = 0.0
        self.n_queries_skipped_ = problem.n_skipped
        if hasattr(self, "n_easy_"):
            del self.n_easy_
        return self

    def _fit_approx(self, X, y, qid):
        X, y, qid, approx = check_appx_data(X, y, qid, self.approx, self.loss, self.lai)
        # stage 1: the binary SVM whose margins split the easy from the difficult samples
        stage1 = self._solve(BinaryProblem(X, y, bias=APPX_BIAS))
        appx = APPXProblem(X, y, stage1.w, qid=qid, approx=approx, loss=self.loss, lai=self.lai)
        result = self._run(appx.stage2, hard_constraints=appx.hard_constraints)
        d = X.shape[1]
        self.loss_ = get_loss(self.loss)
        self.coef_ = result.w[:d]
        self.intercept_ = float(result.w[d] * APPX_BIAS)
        self.n_queries_skipped_ = appx.stage2.n_skipped
        self.n_easy_ = int(appx.easy.sum())
        return self

    def score(self, X, y, qid=None, sample_weight=None):
        """Mean of the measure the loss targets (AP, NDCG or ROC area, with binary
        relevance y > 0 as in training; 1 − Δ for a user's QSLoss, whose ties keep the
        input order) over the queries with a relevant and a non-relevant sample, as in
        training; the loss is the one fitted (``loss_``), whatever ``loss`` is now.
        ``sample_weight`` must be None."""
        refuse_sample_weight(sample_weight, type(self).__name__)
        scores = self.decision_function(X)
        loss = self.loss_
        if loss.name not in _SCORERS or get_loss(loss.name) is not loss:  # a user's QSLoss
            measure = lambda y_q, s_q: 1.0 - loss.ranking_loss(y_q > 0, s_q)
        else:  # a built-in loss, by name or as svmrank.losses.AP / NDCG / ROC
            scorer = _SCORERS[loss.name]
            # binary relevance, as the loss has it (svmrank.metrics.ndcg for graded gains)
            measure = lambda y_q, s_q: scorer((y_q > 0).astype(np.float64), s_q)
            measure.__name__ = scorer.__name__
        return mean_over_ranked_queries(measure, self._relevance(y), scores, qid)


class APSVM(RankSVM):
    """AP-SVM (Yue et al. 2007): :class:`RankSVM` with the AP loss.

    Parameters are those of :class:`RankSVM` except ``loss``, which is always "ap".
    """

    def __init__(self, C=1.0, epsilon=1e-3, max_iter=10000, lai="qs", verbose=0,
                 approx=None, n_jobs=None):
        super().__init__(loss="ap", C=C, epsilon=epsilon, max_iter=max_iter, lai=lai,
                         verbose=verbose, approx=approx, n_jobs=n_jobs)


class BinarySVM(ClassifierMixin, BinaryLabelsMixin, LinearScorerMixin, CuttingPlaneEstimator):
    """Binary SVM with the error-rate loss, trained by the same cutting-plane learner.

    Equivalent to the hinge-loss SVM ½‖w‖² + (C/n) Σ max(0, 1 − y_i (w·x_i + b)) with
    the bias b = ``bias`` · w_bias regularised like a feature (SVM-perf's ``--b``).

    Parameters
    ----------
    C : float
        Regularisation constant (> 0) on the error-rate scale (loss in [0, 1]).
    epsilon : float
        Stopping tolerance on the constraint violation.
    bias : float
        Value of the constant bias feature (0: no bias).
    max_iter : int
    verbose : int

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    n_iter_, n_constraints_, objective_, duality_gap_ : learner report
    classes_ : ndarray of shape (2,) or None
        The two training labels (non-relevant first), which :meth:`predict` returns;
        None for graded labels (then it returns 0/1 relevance).
    """

    def __init__(self, C=1.0, epsilon=1e-3, bias=1.0, max_iter=10000, verbose=0):
        self.C = C
        self.epsilon = epsilon
        self.bias = bias
        self.max_iter = max_iter
        self.verbose = verbose

    def fit(self, X, y=None, qid=None):
        """Fit on X and labels y (relevant: > 0, or the second of two non-numeric
        classes); ``qid`` is accepted and ignored. X may come from
        ``svmrank.dask.read_svmlight`` (y and qid None): trained on its Dask cluster."""
        self._check_common()
        bias = check_positive(self.bias, "bias", allow_zero=True)
        if is_partitioned(X):
            check_partitioned_fit(self, X, y, None)
            result = self._run(X.problem("binary", bias=bias))
            d = X.n_features
            self.coef_ = result.w[:d]
            self.intercept_ = float(result.w[d] * bias) if bias else 0.0
            return self
        X = self._validate_X(X, reset=True)
        y = check_vector(self._fit_labels(y, X.shape[0]), "y", n=X.shape[0])
        if not is_ranked(y > 0):
            raise ValueError(f"y: needs relevant (y > 0) and non-relevant (y <= 0) samples; got "
                             f"{int((y > 0).sum())} relevant of {len(y)} (labels such as 1 and "
                             "2 are all relevant)")
        result = self._run(BinaryProblem(X, y, bias=bias))
        d = X.shape[1]
        self.coef_ = result.w[:d]
        self.intercept_ = float(result.w[d] * bias) if bias else 0.0
        return self

    def score(self, X, y, qid=None, sample_weight=None):
        """Mean AP of the scores over the queries with a relevant and a non-relevant
        sample (``sample_weight`` must be None)."""
        refuse_sample_weight(sample_weight, type(self).__name__)
        return mean_over_ranked_queries(average_precision, self._relevance(y),
                                        self.decision_function(X), qid)
