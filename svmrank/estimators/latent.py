"""Estimators for bags of candidates (weak supervision): latent AP-SVM (behl2014) and
the baselines it is compared with, latent SVM and latent structural SVM.

All three take one row of X per candidate, ``bags`` mapping rows to bags (see
:mod:`svmrank.bags`) and labels per row or per bag; all three score a bag by its highest
scoring candidate (behl2014 eq. 6-7) and rank bags by that score.
"""
import warnings

import numpy as np

from .._validation import check_int, check_positive, check_random_state
from ..bags import check_bag_labels, check_known, group_bags
from ..learners.cccp import RoundInterrupted, cccp
from ..metrics import average_precision, mean_over_ranked_queries
from ..problems.binary import BinaryProblem
from ..problems.latent import LatentAPProblem, LatentBinaryProblem, LatentSSVMProblem
from ..problems.ranking import RankingProblem
from .base import CuttingPlaneEstimator, LinearScorerMixin, check_eval_X, refuse_sample_weight


def _per_row(values, order):
    """``values`` in the regrouped row order when it has one entry per row (labels or
    a mask; one per bag stays as it is)."""
    arr = np.asarray(values)
    return arr[order] if arr.ndim == 1 and arr.shape[0] == order.shape[0] else values


def _known_regrouped(known, order, bag_index):
    """Known candidates for the regrouped rows: a row mask reordered, row numbers per
    bag renumbered after checking, in the input's numbering, that each is a row of its
    bag (anything else is kept, for check_known to refuse)."""
    if known is None:
        return None
    arr = np.asarray(known)
    if arr.dtype == bool:
        return _per_row(arr, order)
    if (arr.shape != (bag_index.n_bags,) or arr.dtype.kind not in "iu"
            or (arr.size and (arr.max() >= order.shape[0] or arr.min() < -1))):
        return known  # (check_known refuses it)
    arr = arr.astype(np.intp)
    renumbered = np.where(arr >= 0, np.argsort(order)[np.maximum(arr, 0)], -1)
    lo, hi = bag_index.offsets[:-1], bag_index.offsets[1:]
    bad = np.flatnonzero((arr >= 0) & ((renumbered < lo) | (renumbered >= hi)))
    if bad.size:
        b = int(bad[0])
        raise ValueError(f"known: bag {bag_index.ids[b].item()!r} marks row {arr[b]} as its "
                         "known candidate, but that row belongs to another bag; use -1 for "
                         "a bag without a known candidate")
    return renumbered


def _rows_back(rows, order):
    """Rows of the regrouped data as rows of the input (-1 stays -1)."""
    return rows if order is None else np.where(rows >= 0, order[np.maximum(rows, 0)], rows)


def _instance_ranking(problem, rows, labels, lai):
    """The AP problem over candidate ``rows`` (instance start): over every row, it
    shares the latent problem's X and products (no copy of X); over some, it reads X
    through them (products of its own, no copy X[rows])."""
    if rows.size == problem.X.shape[0]:  # (rows: increasing, so every row in order)
        return RankingProblem(problem.X, labels, loss="ap", lai=lai, products=problem.products)
    return RankingProblem(problem.X, labels, loss="ap", lai=lai, rows=rows)


class _LatentEstimator(LinearScorerMixin, CuttingPlaneEstimator):
    """CCCP over a latent problem with ``n_init`` random starts; bag-level scoring."""

    # (what warn_if_degenerate adds for a fit that ends at w = 0)
    _degenerate_hint = ", or the initialisation may be degenerate (try init='instances')"

    def _check_common(self):
        super()._check_common()
        check_positive(self.tol, "tol", allow_zero=True)
        check_int(self.max_outer_iter, "max_outer_iter")
        check_int(self.n_init, "n_init")

    def _prepare(self, X, y, bags, known):
        """Validated (X, bag index, bag labels, known rows, order): the rows regrouped
        so that each bag's are consecutive (``order``, None when they were)."""
        X = self._validate_X(X, reset=True)
        bag_index, order = group_bags(bags, X.shape[0])
        rows = None  # (errors name the rows as passed in)
        if order is not None:  # (a shuffled split, say)
            rows = lambda r: f"row {order[r]}"  # noqa: E731
            X, y = X[order], _per_row(y, order)
            known = _known_regrouped(known, order, bag_index)
        labels = check_bag_labels(y, bag_index, lines=rows)
        known_rows = check_known(known, bag_index, lines=rows)
        self.max_bag_size_ = int(bag_index.sizes.max())  # (score warns without bags)
        return X, bag_index, labels, known_rows, order

    def _bag_eval_options(self, eval_set, early_stopping_rounds, bias=0.0):
        """Monitor options scoring ``eval_set = (X_val, y_val[, bags_val])`` after every
        cutting-plane iteration (the AP of the validation bags, as :meth:`score`,
        recorded as ``valid_ap``); early stopping is refused."""
        self._no_early_stopping(early_stopping_rounds)
        if eval_set is None:
            return {}
        d = self.n_features_in_
        X_val = check_eval_X(eval_set, d, "bags_val", owner=self)
        bags_val = eval_set[2] if len(eval_set) == 3 else None
        if bags_val is None and self.max_bag_size_ > 1 and X_val.shape[0] > 1:
            warnings.warn(f"{type(self).__name__}: eval_set has no bags_val: every row of "
                          "X_val is scored as its own bag, but the training bags have up to "
                          f"{self.max_bag_size_} rows; pass eval_set=(X_val, y_val, "
                          "bags_val)", UserWarning, stacklevel=3)
        bag_index, order = group_bags(bags_val, X_val.shape[0], name="eval_set bags_val")
        if order is not None:
            X_val = X_val[order]
        try:
            labels = check_bag_labels(_per_row(eval_set[1], order) if order is not None
                                      else eval_set[1], bag_index)
        except ValueError as exc:
            raise ValueError(f"eval_set y_val: {exc}") from None

        def evaluate(w):
            scores = np.asarray(X_val @ w[:d]).ravel() + (float(w[d]) * bias if bias else 0.0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # (no ranked bags: NaN)
                return mean_over_ranked_queries(average_precision, labels,
                                                 bag_index.max(scores), None)

        return {"evaluate": evaluate, "eval_name": "valid_ap"}

    def _fit_problem(self, problem, instance_problem, monitor_options=None):
        """Run CCCP from ``n_init`` initialisations; keep the lowest objective.

        ``instance_problem(rows, labels)`` builds the supervised problem over an
        instance-level view of the data (used by ``init="instances"`` and "auto");
        ``monitor_options`` (see :meth:`_bag_eval_options`) go to the fit's monitor."""
        if self.init not in ("auto", "random", "instances"):
            raise ValueError(f"init must be 'auto', 'random' or 'instances', got {self.init!r}")
        solves = []

        def solve(state, w):
            # warm start at the previous iterate: the line-search learner keeps its best
            # point, whose objective starts at the true objective there (Prop. 2), so a
            # solve never ends above the previous one and CCCP's decrease is measured
            # exactly, whatever the inner tolerance ε
            problem.set_state(state)
            try:
                res = self._solve(problem, w0=w, line_search=True, verbose=0)
            except RoundInterrupted as exc:  # (CCCP may keep its point)
                solves.append(exc.result)
                raise
            solves.append(res)
            return res.w, res.primal_objective

        rng = check_random_state(self.random_state)
        # (plain lines: CCCP's, one per round; the live line shows the iterations too)
        with self._monitoring(plain_iterations=False, **(monitor_options or {})) as monitor:
            best, objectives = self._restarts(problem, instance_problem, solve, rng, monitor,
                                              solves)
        problem.set_state(best.state)
        self._keep_cccp_report(best, solves)
        self.objectives_ = np.asarray(objectives)
        return best

    def _restarts(self, problem, instance_problem, solve, rng, monitor, solves):
        """CCCP from each of the ``n_init`` starts: the best result and every objective
        (Ctrl-C ends the fit at the best result so far, skipping the later starts; in
        the instance start's fit, at that fit's best point). "auto" runs the ``n_init``
        random starts and then the instance start; a later start wins only with a lower
        objective."""
        best, objectives = None, []
        n_starts = int(self.n_init) + (self.init == "auto")
        for k in range(n_starts):
            last_auto = k == n_starts - 1 and self.init == "auto"
            if (k == 0 and self.init == "instances") or last_auto:
                monitor.round = None  # (not a CCCP round: Ctrl-C ends this fit at its best)
                # every candidate of a latent bag as a sample labelled with its bag
                init = self._solve(instance_problem(*problem.instance_rows()), verbose=0)
                if init.interrupted and best is not None:  # ("auto" after its random starts)
                    best.converged, best.interrupted = False, True
                    warnings.warn(f"{type(self).__name__}: interrupted in the instance start: "
                                  f"keeping the best of the first {k} (objective "
                                  f"{best.objective:.6g})", UserWarning, stacklevel=3)
                    break
                solves.append(init)  # (its iterations count in n_iter_)
                if init.interrupted:
                    state = problem.impute(init.w)
                    problem.set_state(state)
                    best = self._stopped_at_start(init, problem, state,
                                                  "the init='instances' fit")
                    return best, [best.objective]
                start = dict(w0=init.w)
            else:
                start = dict(state0=problem.random_state(rng))
            # tol is on the loss scale, like epsilon: the objective is ½‖w‖² + C ξ
            monitor.round = None  # (a new start: its rounds count from 1)
            try:
                with self._threads():  # (the per-bag argmax of impute on n_jobs threads)
                    result = cccp(problem.impute, solve, tol=float(self.tol) * float(self.C),
                                  max_iter=int(self.max_outer_iter), verbose=self.verbose,
                                  monitor=monitor, keep_first_round=best is None, **start)
            except KeyboardInterrupt:  # (in a later start's first round: keep the best)
                if best is None:
                    raise
                best.converged, best.interrupted = False, True
                warnings.warn(f"{type(self).__name__}: interrupted in start {k + 1}: keeping "
                              f"the best of the first {k} (objective {best.objective:.6g})",
                              UserWarning, stacklevel=3)
                break
            objectives.append(result.objective)
            if best is None or result.objective < best.objective:
                best = result
            if result.interrupted:
                break
        return best, objectives

    def _bags_for(self, X, bags):
        """Validated (X, bag index, order) as in :meth:`_prepare`."""
        X = self._validate_X(X, reset=False)
        bag_index, order = group_bags(bags, X.shape[0])
        return (X if order is None else X[order]), bag_index, order

    def candidate_scores(self, X):
        """Score of every candidate (row of X): ``X @ coef_ + intercept_``."""
        return LinearScorerMixin.decision_function(self, X)

    def _candidate_scores(self, X):
        """:meth:`candidate_scores` of an X validated by :meth:`_bags_for`."""
        return np.asarray(X @ self.coef_).ravel() + self.intercept_

    def decision_function(self, X, bags=None):
        """One score per bag (order of first appearance): its highest candidate score
        (eq. 6-7). ``bags=None`` makes every row its own bag."""
        X, bag_index, _ = self._bags_for(X, bags)
        return bag_index.max(self._candidate_scores(X))

    def predict_latent(self, X, bags=None):
        """Row index (into X) of every bag's highest scoring candidate (eq. 6)."""
        X, bag_index, order = self._bags_for(X, bags)
        rows, _ = bag_index.argmax(self._candidate_scores(X))
        return _rows_back(rows, order)

    def predict(self, X, bags=None):
        """1 for bags whose score is positive, 0 otherwise (one value per bag)."""
        return (self.decision_function(X, bags) > 0).astype(np.int64)

    def score(self, X, y, bags=None, sample_weight=None):
        """Average precision of the bag ranking; ``y`` per row or per bag
        (``sample_weight`` must be None)."""
        refuse_sample_weight(sample_weight, type(self).__name__)
        X, bag_index, order = self._bags_for(X, bags)
        if bags is None and getattr(self, "max_bag_size_", 1) > 1 and X.shape[0] > 1:
            warnings.warn(f"{type(self).__name__}.score got no bags: every row is scored as its "
                          f"own bag, but the model was fitted on bags of up to "
                          f"{self.max_bag_size_} rows. Pass bags=; in a search or "
                          "cross-validation, enable metadata routing with "
                          "sklearn.set_config(enable_metadata_routing=True)", UserWarning,
                          stacklevel=2)
        labels = check_bag_labels(y if order is None else _per_row(y, order), bag_index)
        # (one query; NaN with a warning when it has no positive or no negative bag)
        return mean_over_ranked_queries(average_precision, labels,
                                         bag_index.max(self._candidate_scores(X)), None)


class LatentAPSVM(_LatentEstimator):
    """Latent AP-SVM (Behl, Jawahar & Kumar, CVPR 2014): AP-SVM over bags whose right
    candidate is latent.

    Learns w by CCCP (Alg. 1) on problem (8): impute every positive bag's candidate as
    its highest scoring one under the current w (Prop. 2; known candidates stay fixed),
    then solve the convex problem (11) with the 1-slack cutting-plane learner, whose
    loss-augmented inference takes every negative bag's highest scoring candidate
    (Prop. 3) and then runs the fast AP inference over bag scores. Stops when the
    objective decreases by less than ``tol * C``. The best of ``n_init``
    initialisations (random: a random candidate per positive bag) and, by default, one
    instance-level start (``init``) is kept.

    Parameters
    ----------
    C : float
        Regularisation constant of ½‖w‖² + C ξ (SVM^map's scale: the loss is in [0, 1]).
    epsilon : float
        Cutting-plane tolerance on the constraint violation.
    tol : float
        CCCP stops when the objective ½‖w‖² + C ξ decreases by less than ``tol * C``
        (a tolerance on the loss scale, like ``epsilon``).
    max_outer_iter : int
        Cap on CCCP iterations (ConvergenceWarning when reached).
    n_init : int
        Initialisations; the lowest final objective wins (the paper uses 5 random ones).
    random_state : None, int, numpy Generator or RandomState
        Seeds the random initialisations.
    lai : {"qs", "greedy", "search", "select", "search+select"}
        Loss-augmented inference method (svmrank.inference).
    max_iter : int
        Cap on cutting-plane iterations per convex solve.
    verbose : int
        1: a live line on a terminal (CCCP round, iteration, objective, gap; see
        :mod:`svmrank.progress`) and one plain line per CCCP iteration.
    init : {"auto", "random", "instances"}
        "random": every initialisation draws a random candidate per positive bag (the
        paper's seeds). "instances": the first initialisation instead imputes at the
        solution of the supervised problem over all candidates, each labelled with its
        bag's label (the known candidate only, where a bag has one); the other
        ``n_init - 1`` stay random. Random starts can settle at w = 0 when positive
        bags hold many distractors; "instances" avoids that. "auto" (the default): the
        ``n_init`` random starts and then the "instances" start, which is kept only
        when its objective is lower (``objectives_`` lists ``n_init + 1`` values).

    n_jobs : int or None, default None
        Threads of the per-query inference and per-bag argmax (None or -1: every
        core; see :func:`svmrank.parallel.effective_n_jobs`). The result does not depend on it.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
    intercept_ : float (always 0)
    objective_ : float
        Final objective of the best initialisation; ``objectives_`` lists all of them.
    latent_ : ndarray of intp, shape (n_bags,)
        Training row imputed for every positive bag (the known row or -1 for negatives).
    n_outer_iter_ : int
        CCCP iterations of the best initialisation; ``history_`` its objectives,
        ``converged_`` whether it met ``tol``.
    n_iter_ : int
        Cutting-plane iterations over all initialisations and CCCP iterations.
    result_ : CuttingPlaneResult
        Report of the convex solve that produced ``coef_``.
    n_features_in_ : int
    max_bag_size_ : int
        Rows of the largest training bag (``score`` without ``bags`` warns when it is
        above 1).
    """

    def __init__(self, C=1.0, epsilon=1e-3, tol=1e-3, max_outer_iter=50, n_init=1,
                 random_state=0, lai="qs", max_iter=10000, verbose=0, init="auto",
                 n_jobs=None):
        self.C = C
        self.epsilon = epsilon
        self.tol = tol
        self.max_outer_iter = max_outer_iter
        self.n_init = n_init
        self.random_state = random_state
        self.lai = lai
        self.max_iter = max_iter
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.init = init

    def _make_problem(self, X, bag_index, labels, known_rows):
        return LatentAPProblem(X, bag_index, labels, known_rows, loss="ap", lai=self.lai)

    def fit(self, X, y, bags=None, known=None, eval_set=None, early_stopping_rounds=None):
        """Fit on candidates X (one row each), labels y (per row or per bag; positive
        means > 0), ``bags`` (bag id per row; None: every row its own bag) and ``known``
        (optional known candidates: a boolean row mask or a row index per bag, -1 for
        latent).

        ``eval_set=(X_val, y_val[, bags_val])`` records the AP of the validation bags
        (as :meth:`score`) after every cutting-plane iteration of every CCCP round, as
        ``valid_ap`` in ``trace_``. ``early_stopping_rounds`` is refused (CCCP: see
        docs/python.md)."""
        self._check_common()
        X, bag_index, labels, known_rows, order = self._prepare(X, y, bags, known)
        options = self._bag_eval_options(eval_set, early_stopping_rounds)
        problem = self._make_problem(X, bag_index, labels, known_rows)
        best = self._fit_problem(problem, lambda rows, lab: _instance_ranking(
            problem, rows, lab, self.lai), options)
        self.coef_ = np.asarray(best.w, dtype=np.float64)
        self.intercept_ = 0.0
        self.latent_ = _rows_back(np.asarray(best.state), order)
        return self


class LatentSSVM(LatentAPSVM):
    """Latent structural SVM with the AP loss (Yu & Joachims 2009), the baseline of
    behl2014 §4.1 (eq. 4-5).

    CCCP as for :class:`LatentAPSVM`, but the ground truth's latent variables are
    imputed independently of the violating output's (positives at their highest,
    negatives at their lowest scoring candidate), and the most violated (ranking,
    candidates) pair is found by alternating between the exact ranking for fixed
    candidates and the exact candidates for a fixed ranking until the loss-augmented
    score stops rising (at most ``max_rounds`` rounds), from the candidates of highest
    score and from the ground truth's, an approximation of the joint maximisation
    (see :class:`svmrank.problems.latent.LatentSSVMProblem`). ``objective_`` and
    ``history_`` are measured with that approximation: lower bounds on the exact
    objective at ``coef_``. Bags are scored by their highest candidate, like the other
    estimators here.

    Parameters are those of :class:`LatentAPSVM`, plus ``max_rounds``.
    ``latent_`` holds the imputed ground-truth row of every bag.
    """

    def __init__(self, C=1.0, epsilon=1e-3, tol=1e-3, max_outer_iter=50, n_init=1,
                 random_state=0, lai="qs", max_iter=10000, verbose=0, init="auto",
                 max_rounds=50, n_jobs=None):
        super().__init__(C=C, epsilon=epsilon, tol=tol, max_outer_iter=max_outer_iter,
                         n_init=n_init, random_state=random_state, lai=lai,
                         max_iter=max_iter, verbose=verbose, init=init, n_jobs=n_jobs)
        self.max_rounds = max_rounds

    def _make_problem(self, X, bag_index, labels, known_rows):
        check_int(self.max_rounds, "max_rounds")
        return LatentSSVMProblem(X, bag_index, labels, known_rows, loss="ap", lai=self.lai,
                                 max_rounds=int(self.max_rounds))


class LatentSVM(_LatentEstimator):
    """Latent SVM (Felzenszwalb et al. 2010) with the robustness of behl2014 §5.1.

    Minimises ½‖w‖² + (C/n) Σ_b J_b max(0, 1 − y_b (w·Φ_b(h_b) + b)) over n bags by CCCP:
    positive bags take their highest scoring candidate (known ones stay fixed), negative
    bags their highest scoring candidate among those kept (the loss is convex in w
    there). Robustness ``c`` ignores a fraction c of the negative bags' candidates at
    each imputation, the most confusing: those whose removal lowers the objective most,
    at least one kept per negative bag (so a bag of one candidate is never ignored). The
    bias is a constant feature (regularised).

    Parameters
    ----------
    C : float
        Regularisation constant on the error-rate scale (as :class:`BinarySVM`).
    J : float
        Weight of positive bags' hinge terms (the paper's grid: (|P|+|N|)/|P| × 10^k).
    c : float in [0, 1)
        Fraction of negative candidates ignored (0: the standard latent SVM).
    bias : float
        Value of the constant bias feature (0: no bias).
    epsilon, tol, max_outer_iter, n_init, random_state, max_iter, verbose, init
        As for :class:`LatentAPSVM` ("instances" starts from the binary SVM over all
        candidates), but ``init`` defaults to "random" here.

    n_jobs : int or None, default None
        Threads of the per-query inference and per-bag argmax (None or -1: every
        core; see :func:`svmrank.parallel.effective_n_jobs`). The result does not depend on it.

    Attributes
    ----------
    coef_, intercept_, objective_, objectives_, n_outer_iter_, n_iter_, history_
    latent_ : tuple (rows, kept)
        Imputed row per bag and the mask of negative candidates kept.
    """

    def __init__(self, C=1.0, J=1.0, c=0.0, epsilon=1e-3, tol=1e-3, max_outer_iter=50,
                 n_init=1, random_state=0, bias=1.0, max_iter=10000, verbose=0, init="random",
                 n_jobs=None):
        self.C = C
        self.J = J
        self.c = c
        self.epsilon = epsilon
        self.tol = tol
        self.max_outer_iter = max_outer_iter
        self.n_init = n_init
        self.random_state = random_state
        self.bias = bias
        self.max_iter = max_iter
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.init = init

    def fit(self, X, y, bags=None, known=None, eval_set=None, early_stopping_rounds=None):
        """Fit; arguments as :meth:`LatentAPSVM.fit`."""
        self._check_common()
        J = check_positive(self.J, "J")
        c = check_positive(self.c, "c", allow_zero=True)
        if c >= 1:
            raise ValueError(f"c must lie in [0, 1), got {self.c!r}")
        bias = check_positive(self.bias, "bias", allow_zero=True)
        X, bag_index, labels, known_rows, order = self._prepare(X, y, bags, known)
        options = self._bag_eval_options(eval_set, early_stopping_rounds, bias)
        problem = LatentBinaryProblem(X, bag_index, labels, known_rows, J=J, c=c, bias=bias)
        best = self._fit_problem(problem, lambda rows, lab: BinaryProblem(X[rows], lab, bias=bias),
                                 options)
        d = X.shape[1]
        self.coef_ = np.asarray(best.w[:d], dtype=np.float64)
        self.intercept_ = float(best.w[d] * bias) if bias else 0.0
        rows, kept = best.state
        if order is not None:
            kept = kept[np.argsort(order)]
        self.latent_ = (_rows_back(rows, order), kept)
        return self
