"""Estimators trained on rank losses (AP, NDCG, ROC area) and the binary (error-rate)
structural SVM baseline."""
import numpy as np
from sklearn.base import ClassifierMixin

from .._validation import check_positive, check_vector
from ..graded import graded_levels
from ..losses import GradedNDCG, PairwiseLoss, QSLoss, get_loss
from ..metrics import (average_precision, is_ranked, mean_over_queries, mean_over_ranked_queries,
                       ndcg, roc_auc)
from ..problems.appx import APPX_BIAS, APPXProblem, check_appx_data
from ..problems.binary import BinaryProblem
from ..problems.perf import PERF_LOSSES, PerfProblem
from ..problems.graded import GradedRankingProblem
from ..problems.ranking import RankingProblem
from .base import (BinaryLabelsMixin, CuttingPlaneEstimator, LinearScorerMixin,
                   check_partitioned_fit, fit_queries, is_partitioned, refuse_sample_weight,
                   score_queries, warn_binarised_labels)

_SCORERS = {"ap": average_precision, "ndcg": ndcg, "roc": roc_auc}


class RankSVM(ClassifierMixin, BinaryLabelsMixin, LinearScorerMixin, CuttingPlaneEstimator):
    """Structural SVM trained on a rank loss by the 1-slack cutting-plane algorithm.

    Solves min_w ½‖w‖² + C ξ s.t. w·(Ψ(R*) − Ψ(R)) ≥ Δ(R*, R) − ξ for every ranking R of
    every query (averaged over queries), as SVM^map does; C is on SVM^map's scale (loss
    in [0, 1]). Scores are ``X @ coef_ + intercept_``; ``intercept_`` is 0 (a rank loss
    has no threshold) except with ``approx``, which trains a bias feature.

    Parameters
    ----------
    loss : {"ap", "ndcg", "roc", "pairs"} or svmrank.losses.QSLoss
        1 − AP, 1 − NDCG, 1 − ROC area (binary relevance y > 0), SVM-rank's pairwise
        loss over the pairs of different relevance (graded labels), or a user's
        QS-suitable loss (checked for C1-C3 on each query size before training).
        "ndcg" is graded NDCG@k (svmrank.losses.GradedNDCG) when the labels have more
        than two values or ``k`` is set, binary NDCG otherwise (the same loss then).
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
    pair_loss : {"fraction", "count"}
        loss="pairs": the fraction of swapped pairs per query (svm_rank_learn ``-l 2``)
        or their number (``-l 1``), averaged over queries; see
        :func:`svmrank.losses.svm_rank_parameters` for svm_rank_learn's C and ε.
    gains : {"exp", "linear"}
        loss="ndcg": gain 2^l − 1 or l of relevance level l.
    k : int >= 1, optional
        loss="ndcg": NDCG@k (None: every place). Graded labels must be non-negative
        integers; a query too large for the exact inference is refused.

    n_jobs : int or None, default None
        Threads of the per-query inference (None or -1: every core; see
        :func:`svmrank.parallel.effective_n_jobs`). The result does not depend on it.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float (0, or with ``approx`` the bias of the easy-sample constraints)
    n_iter_, n_constraints_, objective_, duality_gap_ : learner report
    n_features_in_ : int
    loss_ : svmrank.losses.QSLoss, PairwiseLoss or GradedNDCG
        The loss fitted (``score`` measures by it).
    n_easy_ : int
        With ``approx``: the number of easy samples (hard constraints).
    converged_, interrupted_ : bool
        Whether the fit reached ε; whether Ctrl-C ended it (at the best point found).
    history_ : list of dict
        One record per cutting-plane iteration (iteration, constraints, violation,
        objective, dual, gap, time; ``valid_<loss>`` with an ``eval_set``).
    best_iteration_, best_score_ : int, float
        With an ``eval_set``: the iteration of the best validation score, and that score.
    max_query_size_ : int or None
        Rows of the largest training query (None for one query): ``score`` without
        ``qid`` warns on more rows than this.
    """

    def __init__(self, loss="ap", C=1.0, epsilon=1e-3, max_iter=10000, lai="qs", verbose=0,
                 approx=None, pair_loss="fraction", gains="exp", k=None, n_jobs=None):
        self.loss = loss
        self.C = C
        self.epsilon = epsilon
        self.max_iter = max_iter
        self.lai = lai
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.approx = approx
        self.pair_loss = pair_loss
        self.gains = gains
        self.k = k

    def _check_common(self):
        super()._check_common()
        if not isinstance(self.loss, QSLoss) and not (
                isinstance(self.loss, str) and self.loss in ("ap", "ndcg", "roc", "pairs")):
            raise ValueError("loss must be one of 'ap', 'ndcg', 'roc', 'pairs' or a "
                             f"svmrank.losses.QSLoss; got {self.loss!r}")

    def _graded_loss(self, y):
        """The PairwiseLoss or GradedNDCG that ``loss`` and labels y ask for, or None
        for a binary rank loss (checks pair_loss, gains and k)."""
        pair_loss = getattr(self, "pair_loss", "fraction")
        graded = GradedNDCG(getattr(self, "gains", "exp"), getattr(self, "k", None))
        if graded.k is not None and self.loss != "ndcg":
            raise ValueError(f"k: only loss='ndcg' takes k (NDCG@k), not loss={self.loss!r}")
        if graded.gains != "exp" and self.loss != "ndcg":
            raise ValueError(f"gains: only loss='ndcg' has gains, not loss={self.loss!r}")
        pairwise = PairwiseLoss(pair_loss)
        if pairwise.pair_loss != "fraction" and self.loss != "pairs":
            raise ValueError(f"pair_loss: only loss='pairs' takes pair_loss, not "
                             f"loss={self.loss!r}")
        if isinstance(self.loss, str) and self.loss == "pairs":
            return pairwise
        if isinstance(self.loss, str) and self.loss == "ndcg" and (
                graded.k is not None or len(np.unique(y)) > 2 or np.min(y) > 0):
            return graded
        return None

    def fit(self, X, y=None, qid=None, group=None, eval_set=None, early_stopping_rounds=None):
        """Fit on X (dense or CSR), labels y (relevant: > 0, or the second of two
        non-numeric classes) and optional queries: ``qid`` (an id per sample) or
        ``group`` (LightGBM's query sizes, consecutive rows); or on X from
        ``svmrank.dask.read_svmlight`` (y and qid None), trained on its Dask cluster.

        ``eval_set=(X_val, y_val[, qid_val])`` records the validation measure of the
        loss (AP, NDCG, ROC area) after every iteration in ``history_``; with
        ``early_stopping_rounds`` the fit stops when it has not improved for that many
        iterations and keeps the w of the best one (by default the fit runs to ε: the
        optimum of the objective is the answer)."""
        return self._fit(X, y, qid, group, eval_set, early_stopping_rounds)

    def _fit(self, X, y, qid, group=None, eval_set=None, early_stopping_rounds=None, w0=None):
        """:meth:`fit`, the learner started from ``w0`` (default 0) on data in memory."""
        self._check_common()
        if is_partitioned(X):
            return self._fit_partitioned(X, y, qid, group=group, eval_set=eval_set,
                                         early_stopping_rounds=early_stopping_rounds)
        X = self._validate_X(X, reset=True)
        y = self._fit_labels(y, X.shape[0])
        qid = fit_queries(self, qid, group, X.shape[0])
        warn_binarised_labels(self.classes_, self.loss, type(self).__name__)
        graded = self._graded_loss(y)
        loss = graded if graded is not None else get_loss(self.loss)
        d = X.shape[1]
        approx = getattr(self, "approx", None) is not None
        intercept = (lambda w: float(w[d] * APPX_BIAS)) if approx else (lambda w: 0.0)
        monitor_options = self._eval_options(eval_set, early_stopping_rounds,
                                             loss_measure(loss), loss.name, d, intercept)
        if graded is not None:
            if approx:
                raise ValueError(f"approx: AP-SVM-APPX trains the binary rank losses only, not "
                                 f"{graded!r}; pass approx=None")
            if self.lai != "qs":
                raise ValueError(f"lai: {graded!r} has one exact inference; leave lai='qs'")
            problem = GradedRankingProblem(X, y, qid=qid, loss=graded)
        elif approx:
            return self._fit_approx(X, y, qid, monitor_options)
        else:
            problem = RankingProblem(X, y, qid=qid, loss=self.loss, lai=self.lai)
        result = self._run(problem, monitor_options, w0=w0)
        self.history_ = result.history
        self.loss_ = loss
        self.coef_ = result.w
        self.intercept_ = 0.0
        self.n_queries_skipped_ = problem.n_skipped
        if hasattr(self, "n_easy_"):  # (from an earlier fit with approx)
            del self.n_easy_
        return self

    def _fit_partitioned(self, X, y, qid, **unsupported):
        if getattr(self, "approx", None) is not None:
            raise ValueError("approx: not supported on partitioned (Dask) data (its easy "
                             "samples are hard constraints of the QP on the driver)")
        if not isinstance(self.loss, str) or self.loss not in ("ap", "ndcg", "roc", "pairs"):
            raise ValueError(f"loss: {self.loss!r} is not supported on partitioned (Dask) "
                             "data: only 'ap', 'ndcg', 'roc' and 'pairs'")
        graded = self._graded_loss(X.labels)
        if graded is not None and self.lai != "qs":
            raise ValueError(f"lai: {graded!r} has one exact inference; leave lai='qs'")
        check_partitioned_fit(self, X, y, qid, graded=graded is not None, **unsupported)
        warn_binarised_labels(self.classes_, self.loss, type(self).__name__)
        problem = X.problem("ranking", loss=self.loss, lai=self.lai) if graded is None else \
            X.problem("graded", loss=graded)
        result = self._run(problem)
        self.history_ = result.history
        self.loss_ = get_loss(self.loss) if graded is None else graded
        self.coef_ = result.w
        self.intercept_ = 0.0
        self.n_queries_skipped_ = problem.n_skipped
        if hasattr(self, "n_easy_"):
            del self.n_easy_
        return self

    def _fit_approx(self, X, y, qid, monitor_options=None):
        X, y, qid, approx = check_appx_data(X, y, qid, self.approx, self.loss, self.lai)
        # stage 1: the binary SVM whose margins split the easy from the difficult samples
        stage1 = self._solve(BinaryProblem(X, y, bias=APPX_BIAS))
        appx = APPXProblem(X, y, stage1.w, qid=qid, approx=approx, loss=self.loss, lai=self.lai)
        result = self._run(appx.stage2, monitor_options, hard_constraints=appx.hard_constraints)
        self.history_ = result.history
        d = X.shape[1]
        self.loss_ = get_loss(self.loss)
        self.coef_ = result.w[:d]
        self.intercept_ = float(result.w[d] * APPX_BIAS)
        self.n_queries_skipped_ = appx.stage2.n_skipped
        self.n_easy_ = int(appx.easy.sum())
        return self

    def score(self, X, y, qid=None, sample_weight=None, group=None):
        """Mean of the measure the loss targets (AP, NDCG or ROC area, with binary
        relevance y > 0 as in training; 1 − Δ for a user's QSLoss, whose ties keep the
        input order) over the queries (``qid`` or ``group``) with a relevant and a
        non-relevant sample, as in training; the loss is the one fitted (``loss_``),
        whatever ``loss`` is now. ``sample_weight`` must be None. For the pairwise loss:
        1 − the fraction of swapped pairs (ties count ½) per query; for graded NDCG: NDCG@k
        with the fitted gains (:func:`svmrank.metrics.ndcg`); both over the queries of two
        levels or more. Without queries, rows that outnumber the largest training query
        are scored as one, with a warning. X may be partitioned data (y and qid None:
        from its shards)."""
        refuse_sample_weight(sample_weight, type(self).__name__)
        scores, y, qid = self._scores_and_labels(X, y, qid, group)
        qid = score_queries(self, qid, group, len(scores))
        loss = self.loss_
        if isinstance(loss, (PairwiseLoss, GradedNDCG)):
            measure = loss_measure(loss)

            def ranked(y_q, s_q):
                return measure(y_q, s_q) if len(np.unique(y_q)) > 1 else float("nan")
            ranked.__name__ = measure.__name__
            levels = graded_levels(self._relevance(y))
            return mean_over_queries(ranked, levels.astype(np.float64), scores, qid)
        return mean_over_ranked_queries(loss_measure(loss), self._relevance(y), scores, qid)


def loss_measure(loss):
    """``measure(y_q, s_q)``: the measure a rank loss targets on one query (AP, NDCG or
    ROC area with binary relevance y > 0, as the loss has it; 1 − Δ for a user's
    QSLoss, whose ties keep the input order; for the pairwise loss 1 − the fraction of
    swapped pairs, for graded NDCG its NDCG@k with the fitted gains)."""
    if isinstance(loss, PairwiseLoss):
        return _pair_accuracy
    if isinstance(loss, GradedNDCG):
        def graded_ndcg(y_q, s_q):
            return ndcg(y_q, s_q, k=loss.k, gains=loss.gains)
        graded_ndcg.__name__ = "ndcg"
        return graded_ndcg
    if loss.name not in _SCORERS or get_loss(loss.name) is not loss:  # a user's QSLoss
        return lambda y_q, s_q: 1.0 - loss.ranking_loss(y_q > 0, s_q)
    scorer = _SCORERS[loss.name]  # a built-in loss, by name or as svmrank.losses.AP / ...
    # binary relevance, as the loss has it (svmrank.metrics.ndcg for graded gains)
    measure = lambda y_q, s_q: scorer((y_q > 0).astype(np.float64), s_q)  # noqa: E731
    measure.__name__ = scorer.__name__
    return measure


def _pair_accuracy(y_q, s_q):
    """1 − the fraction of swapped pairs of different relevance (ties count ½)."""
    order = np.argsort(y_q, kind="stable")
    y, s = y_q[order], s_q[order]
    n_pairs = total = 0.0
    for level in np.unique(y)[1:]:
        higher, lower = s[y == level], s[y < level]
        lower = np.sort(lower)
        below = np.searchsorted(lower, higher, side="left")
        tied = np.searchsorted(lower, higher, side="right") - below
        total += below.sum() + 0.5 * tied.sum()
        n_pairs += len(higher) * len(lower)
    return total / n_pairs


_pair_accuracy.__name__ = "pair accuracy"  # (in mean_over_queries' warning)


class APSVM(RankSVM):
    """AP-SVM (Yue et al. 2007): :class:`RankSVM` with the AP loss.

    Parameters are those of :class:`RankSVM` except ``loss``, which is always "ap",
    and the graded losses' ``pair_loss``, ``gains`` and ``k``.
    """

    def __init__(self, C=1.0, epsilon=1e-3, max_iter=10000, lai="qs", verbose=0,
                 approx=None, n_jobs=None):
        super().__init__(loss="ap", C=C, epsilon=epsilon, max_iter=max_iter, lai=lai,
                         verbose=verbose, approx=approx, n_jobs=n_jobs)


class BinarySVM(ClassifierMixin, BinaryLabelsMixin, LinearScorerMixin, CuttingPlaneEstimator):
    """Binary SVM with the error-rate loss, or one of SVM-perf's multivariate losses,
    trained by the same cutting-plane learner.

    With the error rate it is the hinge-loss SVM ½‖w‖² + (C/n) Σ max(0, 1 − y_i (w·x_i
    + b)) with the bias b = ``bias`` · w_bias regularised like a feature (SVM-perf's
    ``--b``). The other losses (Joachims 2005) score the labelling of the whole sample
    (:mod:`svmrank.problems.perf`); docs/algorithms.md gives SVM-perf's C for each.

    Parameters
    ----------
    loss : {"error", "zero_one", "f1", "prbep", "prec@k", "rec@k"}
        Error rate (default), zero/one loss of the whole labelling, 1 − F1, 1 − PRBEP,
        1 − precision at k, 1 − recall at k (SVM-perf's ``-l`` 2, 0, 1, 3, 4, 5).
    k : float, optional
        For "prec@k" and "rec@k": k as a fraction of the training positives
        (SVM-perf's ``--p``: in (0, 1] for Prec@k, >= 1 for Rec@k); None: SVM-perf's
        default, 0.5 for Prec@k and 2 for Rec@k.
    C : float
        Regularisation constant (> 0) on the loss's scale (loss in [0, 1]).
    epsilon : float
        Stopping tolerance on the constraint violation.
    bias : float
        Value of the constant bias feature (0: no bias).
    max_iter : int
    verbose : int
    n_jobs : int or None, default None
        Threads of the sparse products and the losses' inference (None or -1: every
        core; see :func:`svmrank.parallel.effective_n_jobs`). The result does not depend
        on it.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float
    n_iter_, n_constraints_, objective_, duality_gap_ : learner report
    classes_ : ndarray of shape (2,) or None
        The two training labels (non-relevant first), which :meth:`predict` returns;
        None for graded labels (then it returns 0/1 relevance).
    max_query_size_ : int or None
        As :class:`RankSVM`'s.
    """

    def __init__(self, C=1.0, epsilon=1e-3, bias=1.0, max_iter=10000, verbose=0, loss="error",
                 k=None, n_jobs=None):
        self.n_jobs = n_jobs
        self.loss = loss
        self.k = k
        self.C = C
        self.epsilon = epsilon
        self.bias = bias
        self.max_iter = max_iter
        self.verbose = verbose

    def fit(self, X, y=None, qid=None, group=None, eval_set=None, early_stopping_rounds=None):
        """Fit on X and labels y (relevant: > 0, or the second of two non-numeric
        classes); the queries (``qid`` or ``group``) are checked, recorded in
        ``max_query_size_`` and otherwise ignored. ``eval_set`` and
        ``early_stopping_rounds`` as in :meth:`RankSVM.fit` (the measure: AP). X may
        come from ``svmrank.dask.read_svmlight`` (y and qid None): trained on its Dask
        cluster (error-rate loss only)."""
        self._check_common()
        bias = check_positive(self.bias, "bias", allow_zero=True)
        if is_partitioned(X):
            if getattr(self, "loss", "error") != "error":
                raise ValueError(f"loss: {self.loss!r} is not supported on partitioned (Dask) "
                                 "data: only 'error'")
            check_partitioned_fit(self, X, y, None, group=group, eval_set=eval_set,
                                  early_stopping_rounds=early_stopping_rounds)
            result = self._run(X.problem("binary", bias=bias))
            self.history_ = result.history
            d = X.n_features
            self.coef_ = result.w[:d]
            self.intercept_ = float(result.w[d] * bias) if bias else 0.0
            return self
        X = self._validate_X(X, reset=True)
        fit_queries(self, qid, group, X.shape[0])
        y = check_vector(self._fit_labels(y, X.shape[0]), "y", n=X.shape[0])
        if not is_ranked(y > 0):
            raise ValueError(f"y: needs relevant (y > 0) and non-relevant (y <= 0) samples; got "
                             f"{int((y > 0).sum())} relevant of {len(y)} (labels such as 1 and "
                             "2 are all relevant)")
        loss = getattr(self, "loss", "error")
        if loss == "error":
            if getattr(self, "k", None) is not None:
                raise ValueError("k: only the prec@k and rec@k losses take k, not "
                                 "loss='error'")
            problem = BinaryProblem(X, y, bias=bias)
        elif loss in PERF_LOSSES:
            problem = PerfProblem(X, y, loss, k=self.k, bias=bias)
        else:
            raise ValueError(f"loss: expected 'error' or one of {', '.join(PERF_LOSSES)}, "
                             f"got {loss!r}")
        d = X.shape[1]
        monitor_options = self._eval_options(eval_set, early_stopping_rounds, average_precision,
                                             "ap", d, lambda w: float(w[d] * bias) if bias else 0.0)
        result = self._run(problem, monitor_options)
        self.history_ = result.history
        self.coef_ = result.w[:d]
        self.intercept_ = float(result.w[d] * bias) if bias else 0.0
        return self

    def score(self, X, y, qid=None, sample_weight=None, group=None):
        """Mean AP of the scores over the queries (``qid`` or ``group``) with a relevant
        and a non-relevant sample (``sample_weight`` must be None); X may be partitioned
        data (y and qid None: from its shards)."""
        refuse_sample_weight(sample_weight, type(self).__name__)
        scores, y, qid = self._scores_and_labels(X, y, qid, group)
        qid = score_queries(self, qid, group, len(scores))
        return mean_over_ranked_queries(average_precision, self._relevance(y), scores, qid)
