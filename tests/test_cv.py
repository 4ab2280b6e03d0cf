"""RankSVMCV / APSVMCV and the learner's warm start they walk C with."""
import numpy as np
import pytest
from sklearn import config_context
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, GroupKFold

from svmrank import APSVMCV, RankSVM, RankSVMCV
from svmrank.estimators.cv import FOLD_EPSILON_FACTOR, path_start
from svmrank.learners.cutting_plane import cutting_plane
from svmrank.problems.binary import BinaryProblem
from svmrank.problems.ranking import RankingProblem


def ranking_data(n_queries=12, per_query=15, d=6, seed=0):
    rng = np.random.default_rng(seed)
    n = n_queries * per_query
    X = rng.normal(size=(n, d))
    w = rng.normal(size=d)
    y = (X @ w + rng.normal(scale=1.5, size=n) > 0.8).astype(float)
    qid = np.repeat(np.arange(n_queries), per_query)
    for q in range(n_queries):  # every query ranked
        rows = np.flatnonzero(qid == q)
        y[rows[0]], y[rows[1]] = 1.0, 0.0
    return X, y, qid


CS = [0.1, 1.0, 10.0, 100.0, 1000.0]


@pytest.mark.parametrize("line_search", [True, False])
@pytest.mark.parametrize("make", [
    lambda X, y, qid: RankingProblem(X, y, qid=qid, loss="ap"),
    lambda X, y, qid: BinaryProblem(X, y)], ids=["ap", "binary"])
def test_warm_start_reaches_the_cold_objective_at_every_C(make, line_search):
    X, y, qid = ranking_data()
    problem = make(X, y, qid)
    eps = 1e-4
    previous = None
    for C in CS:
        cold = cutting_plane(problem, C, eps, line_search=line_search)
        warm = cutting_plane(problem, C, eps, line_search=line_search, warm_start=previous,
                             keep_planes=True)
        # both primal objectives lie within C ε of the optimum, above each one's dual
        assert abs(warm.primal_objective - cold.primal_objective) <= C * eps + 1e-12
        assert warm.dual_objective <= cold.primal_objective + 1e-9 * max(1, C)
        assert warm.converged and warm.duality_gap <= C * eps
        previous = warm


def test_path_start_extrapolates_the_last_step_in_log_C():
    w0, w1 = np.array([1.0, 0.0]), np.array([2.0, 1.0])
    assert path_start([], [1.0, 10.0], 0) is None
    assert path_start([w0], [1.0, 10.0], 1) is w0
    np.testing.assert_allclose(path_start([w0, w1], [1.0, 10.0, 100.0], 2), [3.0, 2.0])
    # a step twice as long in log C goes twice as far
    np.testing.assert_allclose(path_start([w0, w1], [1.0, 10.0, 1000.0], 2), [4.0, 3.0])


@pytest.mark.parametrize("line_search", [True, False])
@pytest.mark.parametrize("make", [
    lambda X, y, qid: RankingProblem(X, y, qid=qid, loss="ap"),
    lambda X, y, qid: BinaryProblem(X, y)], ids=["ap", "binary"])
def test_extrapolated_path_starts_reach_the_cold_objective_at_every_C(make, line_search):
    # the walk of the CV estimators: previous planes, w extrapolated along the path
    X, y, qid = ranking_data(seed=2)
    problem = make(X, y, qid)
    eps = 1e-4
    previous, weights = None, []
    for k, C in enumerate(CS):
        cold = cutting_plane(problem, C, eps, line_search=line_search)
        warm = cutting_plane(problem, C, eps, line_search=line_search, warm_start=previous,
                             keep_planes=True, w0=path_start(weights, CS, k))
        assert abs(warm.primal_objective - cold.primal_objective) <= C * eps + 1e-12
        assert warm.converged and warm.duality_gap <= C * eps
        previous = warm
        weights.append(warm.w)


def test_warm_start_from_a_larger_C_and_none_is_the_cold_run():
    X, y, qid = ranking_data(seed=1)
    problem = RankingProblem(X, y, qid=qid)
    big = cutting_plane(problem, 100.0, 1e-4, keep_planes=True)
    down = cutting_plane(problem, 1.0, 1e-4, warm_start=big)  # the dual is scaled under C
    cold = cutting_plane(problem, 1.0, 1e-4)
    assert abs(down.primal_objective - cold.primal_objective) <= 1e-4
    again = cutting_plane(problem, 1.0, 1e-4, warm_start=None)
    assert np.array_equal(again.w, cold.w) and again.history[-1]["objective"] == \
        cold.history[-1]["objective"]


def test_warm_start_planes_of_another_problem_are_refused():
    X, y, qid = ranking_data()
    res = cutting_plane(RankingProblem(X, y, qid=qid), 1.0, keep_planes=True)
    assert cutting_plane(RankingProblem(X, y, qid=qid), 1.0).planes is None
    with pytest.raises(ValueError, match="warm_start"):
        cutting_plane(RankingProblem(X[:, :3], y, qid=qid), 1.0, warm_start=res,
                      w0=np.zeros(3))


def test_cv_matches_grid_search_and_refits():
    X, y, qid = ranking_data(n_queries=15)
    folds = list(GroupKFold(3).split(X, y, groups=qid))
    Cs = CS[:4]
    cv = RankSVMCV(Cs=Cs, cv=folds, epsilon=1e-4).fit(X, y, qid=qid)
    with config_context(enable_metadata_routing=True):  # (qid to score too)
        grid = GridSearchCV(RankSVM(epsilon=1e-4), {"C": Cs}, cv=folds).fit(X, y, qid=qid)
    assert cv.C_ == grid.best_params_["C"]
    # (each fit is ε-optimal, C ε apart in objective: at large C the models differ a little)
    np.testing.assert_allclose(cv.scores_.mean(axis=0), grid.cv_results_["mean_test_score"],
                               atol=1e-2)
    assert cv.scores_.shape == (3, len(Cs)) and list(cv.Cs_) == Cs
    assert cv.best_score_ == pytest.approx(cv.scores_.mean(axis=0).max())
    refit = RankSVM(C=cv.C_, epsilon=1e-4).fit(X, y, qid=qid)  # (from 0; cv's: warm)
    assert abs(cv.objective_ - refit.objective_) <= cv.C_ * 1e-4
    assert cv.best_estimator_.objective_ == cv.objective_
    np.testing.assert_allclose(cv.decision_function(X), X @ cv.coef_, rtol=1e-12, atol=1e-12)


def test_fold_epsilon_defaults_to_a_multiple_of_epsilon_and_the_refit_keeps_epsilon():
    X, y, qid = ranking_data(n_queries=12)
    folds = list(GroupKFold(3).split(X, y, groups=qid))
    default = APSVMCV(Cs=CS, cv=folds, epsilon=1e-4).fit(X, y, qid=qid)
    explicit = APSVMCV(Cs=CS, cv=folds, epsilon=1e-4,
                       fold_epsilon=FOLD_EPSILON_FACTOR * 1e-4).fit(X, y, qid=qid)
    np.testing.assert_array_equal(default.scores_, explicit.scores_)
    np.testing.assert_array_equal(default.n_iter_path_, explicit.n_iter_path_)
    tight = APSVMCV(Cs=CS, cv=folds, epsilon=1e-4, fold_epsilon=1e-4).fit(X, y, qid=qid)
    assert tight.n_iter_path_.sum() >= default.n_iter_path_.sum()
    assert default.best_estimator_.duality_gap_ <= default.C_ * 1e-4


def test_cv_int_folds_group_the_queries_and_int_Cs_is_a_log_grid():
    X, y, qid = ranking_data(n_queries=9)
    seen = []

    def scorer(est, X_test, y_test, qid=None):
        seen.append(np.unique(qid))
        return est.score(X_test, y_test, qid=qid)

    cv = APSVMCV(Cs=3, cv=3, scoring=scorer).fit(X, y, qid=qid)
    np.testing.assert_allclose(cv.Cs_, [1.0, 1e3, 1e6])
    test_queries = [set(seen[k * 3].tolist()) for k in range(3)]  # one per fold
    assert sorted(set().union(*test_queries)) == list(range(9))
    assert sum(len(t) for t in test_queries) == 9  # disjoint: queries stay whole
    assert cv.n_iter_path_.shape == (3, 3)


def test_cv_single_query_string_scoring_and_joblib():
    X, y, _ = ranking_data(n_queries=1, per_query=90)
    a = APSVMCV(Cs=[1.0, 100.0], cv=3, scoring="roc").fit(X, y)
    b = clone(a).set_params(n_jobs=2).fit(X, y)
    np.testing.assert_array_equal(a.scores_, b.scores_)
    assert a.C_ == b.C_


def test_cv_graded_losses_train_the_refits_loss_on_every_fold():
    # labels 0..3: the folds of RankSVMCV(loss="ndcg") train graded NDCG, as the refit
    # does; "pairs" and k are taken; group= is the queries' sizes
    X, y, qid = ranking_data(n_queries=12)
    y = y * 2 + (np.arange(len(y)) % 5 == 0)
    folds = list(GroupKFold(3).split(X, y, groups=qid))
    for params in ({"loss": "ndcg"}, {"loss": "ndcg", "k": 5}, {"loss": "pairs"}):
        cv = RankSVMCV(Cs=[10.0], cv=folds, **params).fit(X, y, group=[15] * 12)
        assert cv.loss_.name == params["loss"] and cv.loss_ == cv.best_estimator_.loss_
        for k, (train, test) in enumerate(folds):
            fold = RankSVM(C=10.0, epsilon=FOLD_EPSILON_FACTOR * 1e-3, **params).fit(
                X[train], y[train], qid=qid[train])
            assert cv.scores_[k, 0] == pytest.approx(fold.score(X[test], y[test],
                                                                qid=qid[test]), abs=2e-3)
    with pytest.raises(ValueError, match="^lai: "):
        RankSVMCV(loss="pairs", lai="greedy", Cs=[1.0]).fit(X, y, qid=qid)


def test_cv_estimators_under_metadata_routing():
    X, y, qid = ranking_data(n_queries=12)
    with config_context(enable_metadata_routing=True):
        for cls in (RankSVMCV, APSVMCV):
            assert set(cls().get_metadata_routing().fit.requests) == {"qid", "group"}
            grid = GridSearchCV(cls(Cs=[1.0, 10.0], cv=2), {"epsilon": [1e-3]}, cv=2)
            grid.fit(X, y, qid=qid)
            assert grid.best_estimator_.C_ in (1.0, 10.0)
    cv = APSVMCV(Cs=[1.0, 10.0], cv=2).fit(X, y, qid=qid, eval_set=(X, y, qid))
    assert len(cv.history_) == cv.n_iter_ and "valid_ap" in cv.history_[-1]


def test_cv_bad_input():
    X, y, qid = ranking_data(n_queries=4)
    with pytest.raises(ValueError, match="Cs"):
        APSVMCV(Cs=[1.0, -1.0]).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="scoring"):
        APSVMCV(scoring="accuracy").fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="cv: 5 folds"):
        APSVMCV(cv=5).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="qid"):
        APSVMCV().fit(X, y, qid=qid[:-1])
    for bad in (0.0, -1e-3, float("nan"), "loose"):
        with pytest.raises(ValueError, match="fold_epsilon"):
            APSVMCV(fold_epsilon=bad).fit(X, y, qid=qid)


def test_cv_review_findings():
    """Review 21: feature names, best_score_ with eval_set, cv strings and None, a
    column-vector y, a NaN qid and a fold without a ranked query."""
    pd = pytest.importorskip("pandas")
    X, y, qid = ranking_data(n_queries=6, per_query=10)
    columns = [f"f{j}" for j in range(X.shape[1])]
    df = pd.DataFrame(X, columns=columns)
    model = APSVMCV(Cs=[0.1, 10.0], cv=2).fit(df, y, qid=qid)
    assert list(model.feature_names_in_) == columns
    assert list(model.best_estimator_.feature_names_in_) == columns
    with pytest.raises(ValueError, match="feature names should match"):
        model.decision_function(df[columns[::-1]])
    with pytest.raises(ValueError, match="^eval_set X_val: its columns are not the feature"):
        APSVMCV(Cs=[0.1, 10.0], cv=2).fit(df, y, qid=qid, eval_set=(df[columns[::-1]], y, qid))
    # best_score_ stays the folds' mean at C_; the refit's validation result is its own
    plain = APSVMCV(Cs=[0.1, 1.0, 10.0], cv=3).fit(X, y, qid=qid)
    X_val, y_val, qid_val = ranking_data(n_queries=3, per_query=10, seed=5)
    monitored = APSVMCV(Cs=[0.1, 1.0, 10.0], cv=3).fit(X, y, qid=qid,
                                                       eval_set=(X_val, y_val, qid_val))
    assert monitored.best_score_ == plain.best_score_ == plain.scores_.mean(axis=0).max()
    assert monitored.best_estimator_.best_score_ != monitored.best_score_
    assert not hasattr(monitored, "best_iteration_")
    with pytest.raises(ValueError, match="^cv: expected an int, a splitter"):
        APSVMCV(cv="5").fit(X, y, qid=qid)
    assert APSVMCV(Cs=[1.0], cv=None).fit(X, y, qid=qid).scores_.shape == (5, 1)  # sklearn's 5
    with pytest.warns(Warning, match="column-vector y"):
        column = APSVMCV(Cs=[0.1, 10.0], cv=2).fit(X, y[:, None], qid=qid)
    np.testing.assert_array_equal(column.coef_, APSVMCV(Cs=[0.1, 10.0], cv=2).fit(
        X, y, qid=qid).coef_)
    with pytest.raises(ValueError, match="^qid: contains NaN"):
        APSVMCV(cv=2).fit(X, y, qid=np.where(qid == 0, np.nan, qid))
    lonely = np.zeros_like(y)  # (one ranked query: the folds without it cannot train)
    lonely[0] = 1.0
    with pytest.raises(ValueError, match=r"^cv: the training part of a fold \(50 rows\) cannot"):
        APSVMCV(Cs=[1.0], cv=6).fit(X, lonely, qid=qid)


def test_cv_on_dask_client_equals_the_local_run():
    distributed = pytest.importorskip("distributed", reason="dask[distributed] is not installed")
    X, y, qid = ranking_data(n_queries=9)
    local = APSVMCV(Cs=[1.0, 100.0], cv=3).fit(X, y, qid=qid)
    with distributed.Client(n_workers=1, threads_per_worker=2, processes=False,
                            dashboard_address=None) as client:
        remote = APSVMCV(Cs=[1.0, 100.0], cv=3, client=client).fit(X, y, qid=qid)
    np.testing.assert_array_equal(local.scores_, remote.scores_)
    assert remote.C_ == local.C_


def test_a_scoring_name_takes_the_estimators_gains(monkeypatch):
    """Review 22: RankSVMCV(gains="linear", scoring="ndcg@10") chose C on exp gains."""
    from svmrank import metrics
    seen = []
    factory = metrics.make_ranking_scorer
    monkeypatch.setattr(metrics, "make_ranking_scorer",
                        lambda name, **kw: seen.append(kw) or factory(name, **kw))
    rng = np.random.default_rng(0)
    X, y, qid = rng.normal(size=(60, 3)), rng.integers(0, 3, 60), np.repeat(np.arange(6), 10)
    RankSVMCV(loss="ndcg", gains="linear", Cs=[1.0], cv=3, scoring="ndcg@10").fit(X, y, qid=qid)
    assert seen == [{"gains": "linear"}]


def test_a_bad_gains_is_named_not_blamed_on_scoring():
    """Review 22b: gains='foo' read "scoring: gains must be ..."."""
    X, y, qid = np.zeros((6, 2)), np.array([0, 1, 2] * 2), np.repeat([1, 2], 3)
    with pytest.raises(ValueError, match="^gains must be 'exp' or 'linear'; got 'foo'"):
        RankSVMCV(Cs=[1.0], cv=2, gains="foo", scoring="ndcg@10").fit(X, y, qid=qid)
