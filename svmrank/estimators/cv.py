"""Cross-validation over C at about the cost of one fit per fold: :class:`RankSVMCV` and
:class:`APSVMCV` walk C upward on each fold, warm-starting every fit from the previous
C's solution and working set, then refit on all the data at the best C (as
scikit-learn's ``LogisticRegressionCV`` does for its path)."""
import numbers
import warnings

import numpy as np
from sklearn.model_selection import GroupKFold, StratifiedKFold

from .._validation import check_int, check_positive, check_vector, qid_from_group, query_segments
from ..learners.cutting_plane import cutting_plane
from .. import metrics
from ..losses import GradedNDCG, get_loss
from ..metrics import average_precision, mean_over_ranked_queries, roc_auc
from ..parallel import effective_n_jobs, threads
from ..problems.graded import GradedRankingProblem
from ..problems.ranking import RankingProblem
from .base import check_eval_names, is_partitioned
from .ranking import RankSVM

# scoring= strings: the measure averaged over the queries with a relevant and a
# non-relevant sample (binary relevance y > 0, as the rank losses have it)
_MEASURES = {"ap": average_precision, "average_precision": average_precision,
             "roc": roc_auc, "roc_auc": roc_auc}
# Cs=int: that many values spaced evenly in log scale over SVM^map's range of C
DEFAULT_C_RANGE = (1e0, 1e6)
# fold_epsilon=None: the fold fits' tolerance is this many times epsilon (they only rank
# the Cs; on w8a it keeps the fold scores' order at the user's epsilon and saves a
# quarter of the path's iterations: benchmarks/README.md, "Cross-validation over C")
FOLD_EPSILON_FACTOR = 3.0


def log_grid(Cs):
    """The sorted grid of C: ``Cs`` itself, or for an int n, n values from 1 to 1e6 in
    log scale."""
    if isinstance(Cs, numbers.Integral) and not isinstance(Cs, bool):
        n = check_int(Cs, "Cs")
        lo, hi = np.log10(DEFAULT_C_RANGE)
        return np.logspace(lo, hi, n) if n > 1 else np.array([10 ** ((lo + hi) / 2)])
    try:
        grid = np.asarray(Cs, dtype=np.float64).ravel()
    except (TypeError, ValueError):
        grid = np.zeros(0)
    if grid.size == 0 or not np.isfinite(grid).all() or (grid <= 0).any():
        raise ValueError(f"Cs: expected an int or a non-empty list of positive numbers; got {Cs!r}")
    return np.unique(grid)


def _measure_scorer(measure):
    def scorer(estimator, X, y, qid=None):
        relevance = (np.asarray(estimator._relevance(y)) > 0).astype(np.float64)
        return mean_over_ranked_queries(measure, relevance, estimator.decision_function(X), qid)
    return scorer


def _default_scorer(estimator, X, y, qid=None):
    return estimator.score(X, y, qid=qid)


def check_scoring(scoring, gains="exp"):
    """``scoring=`` as a callable ``scorer(estimator, X, y, qid=...)``: None is the
    estimator's ``score`` (the measure its loss targets), a string one of
    ``_MEASURES`` or, where svmrank.metrics has it, any name ``make_ranking_scorer``
    takes ("ndcg@10", "mrr", ...), with the estimator's ``gains``."""
    if scoring is None:
        return _default_scorer
    if isinstance(scoring, str):
        factory = getattr(metrics, "make_ranking_scorer", None)  # (where the package has it)
        if scoring not in _MEASURES and factory is not None:
            try:
                return factory(scoring, gains=gains)
            except ValueError as exc:  # (the measures of _MEASURES as well)
                raise ValueError(f"scoring: {exc}, or one of "
                                 f"{', '.join(m for m in _MEASURES if m != 'ap')}") from None
        if scoring not in _MEASURES:
            raise ValueError(f"scoring: unknown measure {scoring!r}; expected a callable "
                             f"scorer(estimator, X, y, qid=...) or one of {sorted(_MEASURES)}")
        return _measure_scorer(_MEASURES[scoring])
    if callable(scoring):
        return scoring
    raise ValueError(f"scoring: expected None, a string or a callable; got {scoring!r}")


def fold_splits(cv, X, relevance, qid):
    """Train/test index pairs: an int n is GroupKFold(n) over the queries (with one
    query, StratifiedKFold(n) over the rows by relevance); otherwise a scikit-learn
    splitter (``split(X, y, groups=qid)``) or an iterable of pairs; None is 5 folds,
    as in scikit-learn."""
    if cv is None:
        cv = 5
    if isinstance(cv, (str, bytes)):
        raise ValueError(f"cv: expected an int, a splitter or (train, test) pairs; got {cv!r}")
    if isinstance(cv, numbers.Integral) and not isinstance(cv, bool):
        n = check_int(cv, "cv", minimum=2)
        if qid is None or np.unique(qid).size == 1:
            splitter, groups = StratifiedKFold(n), None
        else:
            if np.unique(qid).size < n:
                raise ValueError(f"cv: {n} folds need at least {n} queries; qid has "
                                 f"{np.unique(qid).size}")
            splitter, groups = GroupKFold(n), qid
        return list(splitter.split(X, relevance > 0, groups=groups))
    if hasattr(cv, "split"):
        return list(cv.split(X, relevance > 0, groups=qid))
    try:
        return [(np.asarray(tr), np.asarray(te)) for tr, te in cv]
    except TypeError:
        raise ValueError(f"cv: expected an int, a splitter or (train, test) pairs; got "
                         f"{cv!r}") from None


def fold_path(model, X, y, relevance, qid, train, test, Cs, scorer, n_threads=None,
              epsilon=None):
    """Scores on ``test`` of the fits on ``train`` along the increasing grid ``Cs``, each
    fit warm-started from the previous, their iteration counts and their w; ``model`` is
    an unfitted RankSVM with its ``classes_`` set (a template for the fold's fitted models), ``relevance`` the labels
    as the problems take them, ``n_threads`` the kernels' threads (None: every core),
    ``epsilon`` the fold fits' tolerance (None: ``model.epsilon``)."""
    epsilon = float(model.epsilon if epsilon is None else epsilon)
    with threads(n_threads):
        return _walk(model, X, y, relevance, qid, train, test, Cs, scorer, epsilon)


def path_start(weights, Cs, k):
    """Start of the fit at ``Cs[k]`` on a path of C.

    A fit stopped at a loose tolerance lags behind the optimum towards the C it started
    from; starting past the previous solution removes most of that lag from the fold
    scores (w8a: benchmarks/README.md, "Cross-validation over C").

    Parameters
    ----------
    weights : list of ndarray
        The solutions at ``Cs[0]``, ..., ``Cs[k-1]``.
    Cs : sequence of float
        The increasing grid.
    k : int
        Index of the next C.

    Returns
    -------
    ndarray or None
        None for the first C, the previous solution for the second, then the previous
        solution moved along the last step, extrapolated linearly in log C.
    """
    if k < 2:
        return weights[-1] if weights else None
    step = np.log(Cs[k] / Cs[k - 1]) / np.log(Cs[k - 1] / Cs[k - 2])
    return weights[-1] + step * (weights[-1] - weights[-2])


def _walk(model, X, y, relevance, qid, train, test, Cs, scorer, epsilon):
    take = lambda v: None if v is None else v[train]
    qid_test = None if qid is None else qid[test]
    X_test, y_test = X[test], y[test]
    graded = model._graded_loss(relevance)  # (the refit's loss: graded on graded labels)
    try:  # (X's training rows read in place, not copied)
        problem = RankingProblem(X, relevance[train], qid=take(qid), loss=model.loss,
                                 lai=model.lai, rows=train) if graded is None else \
            GradedRankingProblem(X, relevance[train], qid=take(qid), loss=graded, rows=train)
    except ValueError as exc:  # (the whole data trains, this fold's training part not)
        raise ValueError(f"cv: the training part of a fold ({len(train)} rows) cannot be "
                         f"trained on: {exc}; use fewer folds, or folds that spread the "
                         "ranked queries") from None
    scores, previous, n_iter, weights = [], None, [], []
    for k, C in enumerate(Cs):
        previous = cutting_plane(problem, float(C), epsilon, max_iter=int(model.max_iter),
                                 verbose=0, warm_start=previous, keep_planes=True,
                                 w0=path_start(weights, Cs, k))
        fitted = model.set_params(C=float(C))
        fitted.coef_, fitted.intercept_ = previous.w, 0.0
        scores.append(float(scorer(fitted, X_test, y_test, qid=qid_test)))
        n_iter.append(previous.n_iter)
        weights.append(previous.w)
    return scores, n_iter, weights


class RankSVMCV(RankSVM):
    """:class:`RankSVM` with C chosen by query-grouped cross-validation.

    On each fold the fits walk the grid of C upward, each warm-started from the
    previous C's solution and cutting planes, so a fold costs about one fit at the
    largest C. The folds run in parallel (joblib, or a Dask client); the model is then
    refitted on all the data at the C of best mean score.

    Parameters
    ----------
    loss : {"ap", "ndcg", "roc", "pairs"} or svmrank.losses.QSLoss
        As in :class:`RankSVM` (graded NDCG on graded labels or with ``k``), with its
        ``pair_loss``, ``gains`` and ``k``; the folds train the refit's loss.
    Cs : int or list of float
        The values of C, or their number on a log scale from 1 to 1e6 (default 7).
    cv : None, int, splitter or iterable of (train, test)
        Folds. An int n: ``GroupKFold(n)`` over ``qid`` (``StratifiedKFold(n)`` over the
        rows when there is one query); None: 5, as in scikit-learn. A splitter gets
        ``split(X, y > 0, groups=qid)``.
    scoring : None, str or callable
        None: the estimator's ``score`` (the measure of the loss); "ap", "roc", or a
        name of :func:`svmrank.metrics.make_ranking_scorer` ("ndcg", "ndcg@10", "map",
        ...: graded, as there); or a callable ``scorer(estimator, X, y, qid=...)``.
    epsilon, max_iter, lai, verbose :
        As in :class:`RankSVM` (``verbose`` 1 prints the scores by C). ``epsilon`` is
        the refit's tolerance.
    n_jobs : int, optional
        Cores: None, one fold at a time with the kernels on every core; 1, on one core;
        k > 1, k folds at a time by joblib, each on one thread. The refit takes
        ``n_jobs`` threads (as :class:`RankSVM`).
    client : dask.distributed.Client, optional
        Run the folds on this Dask cluster instead.
    fold_epsilon : float, optional
        Tolerance of the fold fits, which only have to rank the Cs. None: 3 x
        ``epsilon`` (``FOLD_EPSILON_FACTOR``); pass ``epsilon`` for fold fits as tight
        as the refit. From the third C on, each fold fit starts from the previous
        solution extrapolated along the path (in log C).

    Attributes
    ----------
    C_ : float
        The chosen C.
    Cs_ : ndarray of shape (n_Cs,)
        The grid, sorted.
    scores_ : ndarray of shape (n_folds, n_Cs)
        Score of each fold's fit at each C.
    n_iter_path_ : ndarray of shape (n_folds, n_Cs)
        Cutting-plane iterations of each warm-started fit.
    best_score_ : float
        Mean score over the folds at ``C_`` (with ``eval_set``, the refit's validation
        result is ``best_estimator_.best_score_`` and ``best_iteration_``).
    coef_, intercept_, n_iter_, objective_, ... :
        Those of the refitted :class:`RankSVM` (also kept as ``best_estimator_``),
        started from the mean of the folds' solutions at ``C_``.
    """

    def __init__(self, loss="ap", Cs=7, cv=3, scoring=None, epsilon=1e-3, max_iter=10000,
                 lai="qs", n_jobs=None, client=None, verbose=0, fold_epsilon=None,
                 pair_loss="fraction", gains="exp", k=None):
        self.loss = loss
        self.pair_loss = pair_loss
        self.gains = gains
        self.k = k
        self.Cs = Cs
        self.cv = cv
        self.scoring = scoring
        self.epsilon = epsilon
        self.max_iter = max_iter
        self.lai = lai
        self.n_jobs = n_jobs
        self.client = client
        self.verbose = verbose
        self.fold_epsilon = fold_epsilon

    def _base(self, C=1.0):
        return RankSVM(loss=self.loss, C=C, epsilon=self.epsilon, max_iter=self.max_iter,
                       lai=self.lai, verbose=0, pair_loss=getattr(self, "pair_loss", "fraction"),
                       gains=getattr(self, "gains", "exp"), k=getattr(self, "k", None))

    def fit(self, X, y, qid=None, group=None, eval_set=None, early_stopping_rounds=None):
        """Cross-validate C on X, y and the queries (``qid``, or LightGBM's ``group``),
        then refit at the best C; ``eval_set`` and ``early_stopping_rounds`` are the
        refit's, as in :meth:`RankSVM.fit`."""
        if is_partitioned(X):
            raise ValueError(f"X: {type(self).__name__} trains on data in memory (client= runs "
                             "its folds on Dask); on partitioned data fit RankSVM per C")
        Cs = log_grid(self.Cs)
        base = self._base(C=float(Cs[0]))
        base._check_common()
        gains = getattr(self, "gains", "exp")  # (APSVMCV has none)
        GradedNDCG(gains, getattr(self, "k", None))  # (a bad gains named, not as scoring's)
        scorer = check_scoring(self.scoring, gains)
        fold_epsilon = (FOLD_EPSILON_FACTOR * float(self.epsilon) if self.fold_epsilon is None
                        else check_positive(self.fold_epsilon, "fold_epsilon"))
        X = self._validate_X(X, reset=True)  # (feature_names_in_ of a DataFrame)
        if eval_set is not None:  # (the refit sees X's values, not its names)
            check_eval_names(self, eval_set)
        relevance = base._fit_labels(y, X.shape[0])  # (sets base.classes_)
        y = np.asarray(y)
        y = y.ravel() if y.ndim == 2 and y.shape[1] == 1 else y  # (_fit_labels warned)
        qid = qid_from_group(group, X.shape[0], qid)
        if qid is not None:
            qid = check_vector(qid, "qid", n=X.shape[0], dtype=None, finite=False)
            query_segments(qid, X.shape[0])  # (NaN and mixed types refused here)
        folds = fold_splits(self.cv, X, relevance, qid)
        graded = base._graded_loss(relevance)
        if graded is not None and self.lai != "qs":
            raise ValueError(f"lai: {graded!r} has one exact inference; leave lai='qs'")
        base.loss_ = get_loss(self.loss) if graded is None else graded
        if isinstance(graded, GradedNDCG):  # (a query too large for it: refused as
            with warnings.catch_warnings():  # RankSVM refuses it, not as a fold's)
                warnings.simplefilter("ignore")  # (the folds warn about skipped queries)
                GradedRankingProblem(X, relevance, qid=qid, loss=graded)
        base.n_features_in_ = X.shape[1]
        # n_jobs bounds the cores: None, one fold at a time on every core; 1, on one;
        # k > 1 (or a Dask client), folds in parallel on one kernel thread each
        parallel = self.client is not None or (
            self.n_jobs is not None and effective_n_jobs(self.n_jobs) > 1)
        n_threads = 1 if parallel else self.n_jobs
        args = [(base, X, y, relevance, qid, train, test, Cs, scorer, n_threads, fold_epsilon)
                for train, test in folds]
        if self.client is not None:
            client = self.client
            shared = client.scatter([X, y, relevance, qid], broadcast=True)
            futures = [client.submit(fold_path, base, *shared, train, test, Cs, scorer, 1,
                                     fold_epsilon, pure=False)
                       for train, test in folds]
            paths = client.gather(futures)
        elif parallel:
            from joblib import Parallel, delayed
            paths = Parallel(n_jobs=self.n_jobs)(delayed(fold_path)(*a) for a in args)
        else:
            paths = [fold_path(*a) for a in args]
        self.Cs_ = Cs
        self.scores_ = np.array([p[0] for p in paths])
        self.n_iter_path_ = np.array([p[1] for p in paths])
        mean = self.scores_.mean(axis=0)
        best = int(np.argmax(mean))  # (the first, i.e. smallest, C among ties)
        self.C_, self.best_score_ = float(Cs[best]), float(mean[best])
        if self.verbose:
            print("C: mean score " + ", ".join(f"{C:g}: {s:.4f}" for C, s in zip(Cs, mean)))
        # the refit starts from the folds' mean solution at C_ (about half the iterations
        # of a start from 0 on w8a)
        start = np.mean([p[2][best] for p in paths], axis=0)
        best_estimator = self._base(C=self.C_).set_params(
            n_jobs=None if self.client is not None else self.n_jobs)._fit(
                X, y, qid, eval_set=eval_set, early_stopping_rounds=early_stopping_rounds,
                w0=start)
        # the refit's fitted attributes, but not its eval_set result (best_score_ is the
        # folds' mean; best_estimator_ keeps both)
        for name, value in vars(best_estimator).items():
            if name.endswith("_") and not name.startswith("_") and name not in (
                    "best_score_", "best_iteration_"):
                setattr(self, name, value)
        if hasattr(self, "feature_names_in_"):
            best_estimator.feature_names_in_ = self.feature_names_in_
        self.best_estimator_ = best_estimator
        return self


class APSVMCV(RankSVMCV):
    """:class:`RankSVMCV` with the AP loss (AP-SVM with C chosen by cross-validation).

    Parameters are those of :class:`RankSVMCV` except ``loss``, which is always "ap",
    and the graded losses' ``pair_loss``, ``gains`` and ``k``.
    """

    def __init__(self, Cs=7, cv=3, scoring=None, epsilon=1e-3, max_iter=10000, lai="qs",
                 n_jobs=None, client=None, verbose=0, fold_epsilon=None):
        super().__init__(loss="ap", Cs=Cs, cv=cv, scoring=scoring, epsilon=epsilon,
                         max_iter=max_iter, lai=lai, n_jobs=n_jobs, client=client,
                         verbose=verbose, fold_epsilon=fold_epsilon)
