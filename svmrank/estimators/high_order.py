"""High-order ranking estimators (Dokania et al. 2014): HOB-SVM and HOAP-SVM.

Both take the samples X with ``edges``, pairs of similar samples (0-based rows of X,
see :mod:`svmrank.graph` for builders from a file, from groups or from networkx), and
rank the samples by the difference of max-marginals s_i = m_i⁺ − m_i⁻ (eq. 11), which
depends on the neighbours of i through the pairwise term. With η = 0 (no pairwise
term) HOB-SVM is a class-weighted binary SVM, and HOAP-SVM's objective is AP-SVM's; its
CCCP, though, may stop at a stationary point of its surrogate that is worse than
AP-SVM's optimum (without a bias a start at unary part 0, w = 0 for one, is a fixed
point, so that start is refused).
"""
import warnings

import numpy as np

from sklearn.base import ClassifierMixin
from sklearn.exceptions import ConvergenceWarning

from .._validation import check_int, check_positive, check_vector
from ..graph import max_marginals as graph_max_marginals
from ..graph import check_edges, max_score_labelling
from ..learners.cccp import RoundInterrupted, cccp
from ..metrics import average_precision, mean_over_ranked_queries
from ..problems.high_order import (HighOrderFeatures, HOAPPairProblem, HOAPProblem, HOBProblem,
                                   LabellingSet, hoap_true_objective)
from .base import BinaryLabelsMixin, CuttingPlaneEstimator, check_eval_X, refuse_sample_weight


def _no_edges():
    return np.zeros((0, 2), dtype=np.int64)


class _HighOrderEstimator(ClassifierMixin, BinaryLabelsMixin, CuttingPlaneEstimator):
    """Shared prediction: features of (X, edges) with the fitted w."""

    def _check_common(self):
        super()._check_common()
        check_positive(self.eta, "eta", allow_zero=True)
        check_positive(self.bias, "bias", allow_zero=True)

    def _features(self, X, edges, layout=None):
        eta, pairwise_features, bias = layout or (self.eta, self.pairwise_features, self.bias)
        return HighOrderFeatures(X, _no_edges() if edges is None else edges, eta=eta,
                                 pairwise_features=pairwise_features, bias=bias)

    def _training_features(self, X, edges, eval_set):
        """Features of the training (X, edges), with a warning when the edges can do
        nothing (none given in an explicit list, or no pairwise feature), or
        when an ``eval_set`` without edges scores a model that has a pairwise term."""
        features = self._features(X, edges)
        name = type(self).__name__
        if edges is not None and len(features.pairs) == 0:
            warnings.warn(f"{name}: edges holds no edge: the samples are unlinked and only "
                          "the unary part is learnt", UserWarning, stacklevel=3)
        elif len(features.pairs) and len(features.pairwise_index) == 0:
            warnings.warn(f"{name}: the edges do nothing: pairwise_features=[] with bias=0 "
                          "(the bias is the Potts feature) leaves no pairwise term",
                          UserWarning, stacklevel=3)
        elif len(features.pairs) and eval_set is not None and (
                len(eval_set) < 3 or eval_set[2] is None):
            warnings.warn(f"{name}: eval_set has no edges_val: its samples are scored "
                          "unlinked, by the unary part only; pass eval_set=(X_val, y_val, "
                          "edges_val)", UserWarning, stacklevel=3)
        return features

    def _test_features(self, X, edges):
        """Features of (X, edges) in the layout of the fit (η, pairwise features and
        bias as they were then, whatever set_params did since)."""
        X = self._validate_X(X, reset=False)
        if edges is None and np.any(self.pairwise_coef_):
            warnings.warn(f"{type(self).__name__} was trained with a pairwise term "
                          f"(pairwise_coef_ is not 0) but no edges were given: the samples "
                          "are unlinked and only the unary part scores them; pass edges=",
                          UserWarning, stacklevel=3)
        f = self._features(X, edges, getattr(self, "layout_", None))
        w2 = self.coef_[f.pairwise_slice]
        if (w2 > 0).any():  # (fit keeps w₂ ≤ 0; edge weights would be clipped to 0)
            k = int(np.argmax(w2 > 0))
            raise ValueError(f"coef_: pairwise weight {w2[k]:g} (pairwise feature {k}) is "
                             "positive; graph cuts need w₂ <= 0 (a submodular energy)")
        return f

    def _node_eval_options(self, eval_set, features):
        """Monitor options scoring ``eval_set = (X_val, y_val[, edges_val])`` after every
        cutting-plane iteration: the AP of the validation nodes ranked by their
        max-marginal differences (as :meth:`score`; one max-marginal computation, a
        graph cut per node block, each time), recorded as ``valid_ap``."""
        if eval_set is None:
            return {}
        X_val = check_eval_X(eval_set, features.n_input_features, "edges_val", owner=self)
        edges_val = eval_set[2] if len(eval_set) == 3 else None
        if edges_val is not None:  # (named here; the features check them as "edges")
            edges_val = check_edges(edges_val, X_val.shape[0], "eval_set edges_val")
        val = self._features(X_val, edges_val)
        y_val = check_vector(self._relevance(eval_set[1], "eval_set y_val"), "eval_set y_val",
                             n=X_val.shape[0])

        def evaluate(w):
            w = np.array(w, dtype=np.float64)
            w[val.pairwise_slice] = np.minimum(w[val.pairwise_slice], 0.0)  # (as _store)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # (no ranked nodes: NaN)
                return mean_over_ranked_queries(average_precision, y_val,
                                                 val.ranking_scores(w), None)

        return {"evaluate": evaluate, "eval_name": "valid_ap"}

    def _store(self, features, w):
        d = features.n_input_features
        self.layout_ = (features.eta, features.pairwise_index[features.pairwise_index < d],
                        float(self.bias))
        k = features.d_unary
        self.coef_ = np.array(w, dtype=np.float64)
        # the QP's sign bounds hold up to rounding (|w₂| ~ 1e-17 above zero)
        self.coef_[features.pairwise_slice] = np.minimum(self.coef_[features.pairwise_slice], 0.0)
        self.unary_coef_ = self.coef_[:k] - self.coef_[k:2 * k]
        self.pairwise_coef_ = self.coef_[features.pairwise_slice]
        self.pairwise_index_ = features.pairwise_index
        self.n_features_in_ = features.n_input_features

    def decision_function(self, X, edges=None):
        """Ranking scores s_i = m_i⁺ − m_i⁻ of the rows of X linked by ``edges``."""
        f = self._test_features(X, edges)
        return f.ranking_scores(self.coef_)

    def max_marginals(self, X, edges=None):
        """Max-marginals (m⁻, m⁺) of the rows of X linked by ``edges``: the best score of
        a labelling with y_i = 0 and with y_i = 1 (their difference ranks, eq. 11)."""
        f = self._test_features(X, edges)
        return graph_max_marginals(f.unary(self.coef_), f.pairs, f.edge_weights(self.coef_))

    def predict(self, X, edges=None):
        """The labelling of largest score (one graph cut), in the labels of y
        (``classes_``; 0/1 when y had more than two levels)."""
        f = self._test_features(X, edges)
        y, _ = max_score_labelling(f.unary(self.coef_), f.pairs, f.edge_weights(self.coef_))
        return self._class_of(y.astype(bool))

    def score(self, X, y, edges=None, sample_weight=None):
        """AP of the ranking by :meth:`decision_function`; NaN, with a warning, when y
        has no relevant or no non-relevant sample (as the other estimators' score);
        ``sample_weight`` must be None."""
        refuse_sample_weight(sample_weight, type(self).__name__)
        return mean_over_ranked_queries(average_precision, self._relevance(y),
                                         self.decision_function(X, edges), None)


class HOBSVM(_HighOrderEstimator):
    """High-order binary SVM (Dokania et al. 2014, §3, eq. 4-11).

    Learns w = (w₁⁺; w₁⁻; w₂), w₂ ≤ 0, by the 1-slack cutting-plane algorithm on the
    weighted 0-1 loss of eq. (7) (loss-augmented inference = one graph cut), and ranks
    by the difference of max-marginals.

    Parameters
    ----------
    C : float
        Regularisation constant (> 0); Ψ is averaged over samples, so C is on the
        scale of :class:`BinarySVM` (with J = 1 and η = 0, HOBSVM(C) = BinarySVM(2C)).
    eta : float ≥ 0
        Weight η of the pairwise block (0: no high-order term).
    pairwise_features : array of int or bool mask, optional
        Features Φ(ψ_i, ψ_j) = exp(−(ψ_i − ψ_j)²) is computed on (default all).
    J : float, optional
        Weight of a missed positive in the loss (default |N|/|P|, as in the paper).
    epsilon : float
        Cutting-plane tolerance.
    bias : float
        Constant feature appended to X (0: none); also a pairwise feature (Potts term).
    max_iter : int
        Cap on cutting-plane iterations.
    verbose : int
        1: a live line on a terminal (see :mod:`svmrank.progress`), plain lines
        otherwise; HOAPSVM's plain lines are one per CCCP round (at 2, every
        iteration's too).
    n_jobs : int or None, default None
        Threads of the sparse products (None or -1: every core; see
        :func:`svmrank.parallel.effective_n_jobs`). The result does not depend on it.

    Attributes
    ----------
    coef_ : ndarray (2 d' + p,)
        w = (w₁⁺; w₁⁻; w₂), d' = d (+1 with bias), p pairwise features (+1 with bias).
    unary_coef_ : w₁⁺ − w₁⁻ (the per-sample score without neighbours)
    pairwise_coef_ : w₂ (≤ 0)
    n_iter_, objective_, duality_gap_, result_ : learner report
    """

    def __init__(self, C=1.0, eta=1.0, pairwise_features=None, J=None, epsilon=1e-3,
                 bias=1.0, max_iter=10000, verbose=0, n_jobs=None):
        self.n_jobs = n_jobs
        self.C = C
        self.eta = eta
        self.pairwise_features = pairwise_features
        self.J = J
        self.epsilon = epsilon
        self.bias = bias
        self.max_iter = max_iter
        self.verbose = verbose

    def _fit_features(self, features, y, w0=None, report=False, monitor_options=None):
        """The learner's result; with ``report``, kept as fitted attributes (see
        :meth:`_run`)."""
        problem = HOBProblem(features, y, J=self.J)
        idx = np.arange(features.n_features)[features.pairwise_slice]
        if report:
            return self._run(problem, monitor_options, w0=w0, nonpositive=idx)
        return self._solve(problem, w0=w0, nonpositive=idx)

    def fit(self, X, y, edges=None, eval_set=None, early_stopping_rounds=None):
        """Fit on samples X, labels y (> 0 relevant) and edges between rows of X.

        ``eval_set=(X_val, y_val[, edges_val])`` records the AP of the validation nodes
        (as :meth:`score`) after every iteration as ``valid_ap`` in ``trace_``; with ``early_stopping_rounds`` the fit stops when it has
        not improved for that many iterations and keeps the best iteration's w."""
        self._check_common()
        X = self._validate_X(X, reset=True)
        y = self._fit_labels(y, X.shape[0])
        features = self._training_features(X, edges, eval_set)
        options = self._node_eval_options(eval_set, features)
        if early_stopping_rounds is not None:
            if not options:
                raise ValueError("early_stopping_rounds: needs an eval_set to score")
            options["early_stopping_rounds"] = check_int(early_stopping_rounds,
                                                         "early_stopping_rounds")
        result = self._fit_features(features, y, report=True, monitor_options=options or None)
        self._store(features, result.w)
        return self


class HOAPSVM(_HighOrderEstimator):
    """High-order AP-SVM (Dokania et al. 2014, §4, eq. 12-18, Alg. 1-2).

    Ranks by s_i = m_i⁺ − m_i⁻ and learns w (w₂ ≤ 0) on the AP loss by rounds of convex
    solves (cutting-plane learner, AP inference on surrogate scores s̄), each starting at
    the previous round's w_t; initialised from HOB-SVM, as in the paper. With
    ``cccp_step="local"`` (default) a round freezes both max-marginal labellings of every
    node at w_t (s̄_i linear, equal to s_i at w_t, the shared part of the graph
    cancelling as in s_i: an AP-SVM on flip-set differences) and keeps the solution,
    or the first of its ½, ¼, ⅛ steps from w_t, that lowers the true objective; with
    ``"bound"`` a round is the paper's CCCP step (Ȳ_i⁺, i ∈ P, and Ȳ_j⁻, j ∈ N, fixed:
    Prop. 4-5), a bound of the objective tight at w_t, whose convex solves take
    hundreds of iterations on large graphs (docs/algorithms.md). Both lower the true
    objective every round.

    Parameters
    ----------
    C : float
        Regularisation constant (> 0), on AP-SVM's scale (with η = 0 the objective is
        AP-SVM's with C doubled: ½‖w₁⁺‖² + ½‖w₁⁻‖² = ¼‖w₁⁺ − w₁⁻‖² at the optimum; CCCP
        reaches a stationary point of it, not necessarily that optimum).
    eta, pairwise_features, epsilon, bias, max_iter, verbose
        As in :class:`HOBSVM`.
    init : {"hob", "zero"} or array (2 d' + p,)
        Start CCCP from a HOB-SVM fit (paper), from w = 0, or from the given w (its
        pairwise block is clipped to ≤ 0). A start whose unary part w₁⁺ − w₁⁻ is 0 (w = 0
        for one) needs ``bias > 0``: without a bias it is a fixed point of the CCCP, and
        it is refused.
    init_C : float, optional
        C of the initialising HOB-SVM (default ``C``).
    cccp_max_iter : int
        Cap on CCCP iterations (ConvergenceWarning when reached).
    cccp_tol : float
        Stop when a round lowers the objective (the true one with ``"local"``, the
        convex bound's with ``"bound"``) by less than this.
    cccp_step : {"local", "bound"}
        The convex problem of a round (see above).
    lai : {"qs", "greedy"}
        AP loss-augmented inference method.

    n_jobs : int or None, default None
        Threads of the per-query inference (None or -1: every core; see
        :func:`svmrank.parallel.effective_n_jobs`). The result does not depend on it.

    Attributes
    ----------
    coef_, unary_coef_, pairwise_coef_ : as in :class:`HOBSVM`
    init_coef_ : the starting w
    result_ : CuttingPlaneResult of the convex step that gave ``coef_``
    n_outer_iter_, n_iter_, objective_, history_, converged_ : CCCP report (with
        ``"local"``, ``objective_`` and ``history_`` are true objectives)
    """

    def __init__(self, C=1.0, eta=1.0, pairwise_features=None, epsilon=1e-3, bias=1.0,
                 max_iter=10000, init="hob", init_C=None, cccp_max_iter=20, cccp_tol=1e-3,
                 lai="qs", verbose=0, n_jobs=None, cccp_step="local"):
        self.C = C
        self.eta = eta
        self.pairwise_features = pairwise_features
        self.epsilon = epsilon
        self.bias = bias
        self.max_iter = max_iter
        self.init = init
        self.init_C = init_C
        self.cccp_max_iter = cccp_max_iter
        self.cccp_tol = cccp_tol
        self.lai = lai
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.cccp_step = cccp_step

    def fit(self, X, y, edges=None, eval_set=None, early_stopping_rounds=None):
        """Fit on samples X, labels y (> 0 relevant) and edges between rows of X.

        ``eval_set=(X_val, y_val[, edges_val])`` records the AP of the validation nodes
        (as :meth:`score`) after every cutting-plane iteration, of the HOB-SVM start
        and of every CCCP round, as ``valid_ap`` in ``trace_``.
        ``early_stopping_rounds`` is refused (CCCP: see docs/python.md)."""
        self._check_common()
        self._no_early_stopping(early_stopping_rounds)
        if isinstance(self.init, str) and self.init not in ("hob", "zero"):
            raise ValueError(f"init must be 'hob', 'zero' or an array, got {self.init!r}")
        if self.lai not in ("qs", "greedy"):
            raise ValueError(f"lai must be 'qs' or 'greedy', got {self.lai!r}")
        if self.cccp_step not in ("local", "bound"):
            raise ValueError(f"cccp_step must be 'local' or 'bound', got {self.cccp_step!r}")
        check_int(self.cccp_max_iter, "cccp_max_iter")
        check_positive(self.cccp_tol, "cccp_tol", allow_zero=True)
        if self.init_C is not None:
            check_positive(self.init_C, "init_C")
        X = self._validate_X(X, reset=True)
        y = self._fit_labels(y, X.shape[0])
        features = self._training_features(X, edges, eval_set)
        relevant = HOBProblem(features, y).relevant     # validates y
        options = self._node_eval_options(eval_set, features)
        # (plain lines: CCCP's, one per round, and at verbose 2 every iteration's; the
        # live line shows the iterations, the HOB-SVM start's too)
        with self._monitoring(plain_iterations=int(self.verbose) >= 2, **options) as monitor:
            return self._fit_cccp(features, y, relevant, monitor)

    def _fit_cccp(self, features, y, relevant, monitor):
        """The start (HOB-SVM's fit, when ``init="hob"``) and CCCP, under ``monitor``."""
        nonpositive = np.arange(features.n_features)[features.pairwise_slice]
        if not isinstance(self.init, str):
            w0 = check_vector(self.init, "init", n=features.n_features).copy()
            w0[features.pairwise_slice] = np.minimum(w0[features.pairwise_slice], 0.0)
        elif self.init == "hob":
            hob = HOBSVM(C=self.C if self.init_C is None else self.init_C, eta=self.eta,
                         pairwise_features=self.pairwise_features, epsilon=self.epsilon,
                         bias=self.bias, max_iter=self.max_iter)
            hob._monitor = monitor  # (its iterations on this fit's monitor)
            try:
                start = hob._fit_features(features, y)
            finally:
                del hob._monitor
            if start.interrupted:  # (Ctrl-C: the whole fit stops at HOB-SVM's point)
                fixed = LabellingSet.from_max_marginals(features.max_marginals(start.w),
                                                        relevant.astype(np.uint8))
                result = self._stopped_at_start(
                    start, HOAPProblem(features, relevant, fixed, lai=self.lai), fixed,
                    "the HOB-SVM fit that starts it")
                self._keep_cccp_report(result, [start])
                self.init_coef_, self.trace_ = start.w, monitor.records
                self._store(features, start.w)
                return self
            w0 = start.w
        else:
            w0 = np.zeros(features.n_features)
        k = features.d_unary
        if (not isinstance(self.init, str) or self.init == "zero") and not self.bias \
                and not np.any(w0[:k] - w0[k:2 * k]):
            raise ValueError(f"init={self.init if isinstance(self.init, str) else 'array'!r} "
                             "with bias=0: a start whose unary part w₁⁺ − w₁⁻ is 0 ties every "
                             "sample, and without a bias it is a fixed point of HOAP-SVM's "
                             "CCCP (the labellings imputed there make any move cost more), "
                             "so the fit would end at a constant ranking after a long convex "
                             "solve; use init='hob' or a bias > 0")
        solves = []
        if self.cccp_step == "local":
            impute, solve = self._local_rounds(features, relevant, nonpositive, solves)
        else:
            want = relevant.astype(np.uint8)

            def impute(w):
                return LabellingSet.from_max_marginals(features.max_marginals(w), want)

            def solve(fixed, w):
                problem = HOAPProblem(features, relevant, fixed, lai=self.lai)
                try:
                    res = self._solve(problem, w0=w, nonpositive=nonpositive)
                except RoundInterrupted as exc:  # (CCCP may keep its point)
                    solves.append(exc.result)
                    raise
                solves.append(res)
                return res.w, res.primal_objective

        result = cccp(impute, solve, w0=w0, tol=float(self.cccp_tol),
                      max_iter=int(self.cccp_max_iter), verbose=self.verbose, monitor=monitor)
        # (the HOB-SVM start's iterations count in n_iter_; listed last, so that a round
        # that kept its start w_t is still the solve reported)
        hob_start = [start] if isinstance(self.init, str) and self.init == "hob" else []
        self._keep_cccp_report(result, solves + hob_start)
        self.init_coef_ = w0
        if not np.any(result.w[:k] - result.w[k:2 * k]):
            warnings.warn("HOAP-SVM's CCCP ended with a unary part w₁⁺ − w₁⁻ = 0, which "
                          "ties every sample's own score",
                          ConvergenceWarning, stacklevel=2)
        self._store(features, result.w)
        return self

    def _local_rounds(self, features, relevant, nonpositive, solves):
        """CCCP's ``impute`` and ``solve`` for ``cccp_step="local"``: the state at w is
        its max-marginals; a round solves :class:`HOAPPairProblem` from w_t and keeps
        the first of w_t + α (w − w_t), α = 1, ½, ¼, ⅛, whose true objective is below
        w_t's (w_t itself when none is), reporting the true objective."""
        C, lai = float(self.C), self.lai
        seen = {}  # id(w) -> (w, objective, max-marginals) of the last point evaluated

        def evaluate(w):
            if id(w) in seen and seen[id(w)][0] is w:
                return seen[id(w)][1:]
            objective, mm = hoap_true_objective(features, relevant, w, C, lai=lai)
            seen.clear()
            seen[id(w)] = (w, objective, mm)
            return objective, mm

        def impute(w):
            mm = evaluate(w)[1]
            # (equal flip sets: the same convex problem; the arrays identify them)
            return (mm.labelling, mm.flips.indptr, mm.flips.indices, mm.flips.data,
                    _Box(w, mm))

        def solve(state, w_t):
            box = state[-1]
            w_t, mm = box.w, box.mm
            start = evaluate(w_t)[0]
            try:
                res = self._solve(HOAPPairProblem(features, relevant, mm, lai=lai), w0=w_t,
                                  nonpositive=nonpositive)
            except RoundInterrupted as exc:  # (CCCP may keep w_t, whose true objective
                exc.result.w = w_t           # is known; no step is tried)
                solves.append(exc.result)
                raise RoundInterrupted(w_t, start, exc.result,
                                       "the round's start w_t (no step was tried)") from None
            solves.append(res)
            for alpha in (1.0, 0.5, 0.25, 0.125):
                w = w_t + alpha * (res.w - w_t)
                objective, mm_w = evaluate(w)
                if objective < start:
                    res.w = w
                    return w, objective
            res.w = w_t
            seen.clear()
            seen[id(w_t)] = (w_t, start, mm)
            return w_t, start

        return impute, solve


class _Box:
    """A latent state's payload that compares equal to any other (CCCP's state
    comparison looks at the arrays beside it)."""

    def __init__(self, w, mm):
        self.w, self.mm = w, mm

    def __eq__(self, other):
        return isinstance(other, _Box)

    __hash__ = None
