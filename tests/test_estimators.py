"""Estimators: scikit-learn compatibility, fitting behaviour, bad input."""
import inspect
import re
import warnings

import numpy as np
import pytest

from svmrank import APSVM, BinarySVM, RankSVM, TopKSVM
from svmrank.datasets import make_ranking
from svmrank.exceptions import ConvergenceWarning
from svmrank.metrics import average_precision

sklearn = pytest.importorskip("sklearn")
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

# Checks that cannot hold for a ranker trained on a rank loss (or for the error-rate
# SVM, which also needs relevant and non-relevant samples), and why:
EXPECTED_FAILED_CHECKS = {
    # AP/NDCG/ROC area and the error rate's SVM need relevant and non-relevant samples.
    # These checks fit labels that are all > 0 ([1, 2] * 10, or 1 and 2 only): every
    # sample is relevant, so the loss is undefined and fit refuses the data.
    "check_estimators_dtypes": "labels [1, 2]: all relevant, the loss is undefined",
    "check_classifier_data_not_an_array": "labels [1, 2]: all relevant, the loss is undefined",
    "check_fit2d_1feature": "labels in {1, 2} or all 0: the loss is undefined",
    # Three or more numeric labels are relevance grades (y > 0 relevant), so predict
    # returns 0/1 relevance there, and a multiclass target of strings is refused.
    "check_classifiers_train": "three labels are relevance grades; predict returns 0/1",
    "check_classifiers_classes": "three string labels: only two classes of non-numbers",
    # fractional labels are relevance (y > 0), as SVM-light reads them
    "check_classifiers_regression_target": "fractional labels are relevance y > 0",
}


# graded NDCG (issue 25) trains on labels 1 and 2 (two grades): these checks pass for it
GRADED_NDCG_PASSES = ("check_estimators_dtypes", "check_classifier_data_not_an_array",
                      "check_fit2d_1feature")


def _expected_failures(estimator):
    if isinstance(estimator, RankSVM) and estimator.loss == "ndcg":
        return {k: v for k, v in EXPECTED_FAILED_CHECKS.items() if k not in GRADED_NDCG_PASSES}
    return EXPECTED_FAILED_CHECKS


@parametrize_with_checks([APSVM(C=10.0), RankSVM(loss="ndcg"), BinarySVM(C=10.0)],
                         expected_failed_checks=_expected_failures)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


# TopKSVM is a classifier; the classifier checks it fails, and why:
TOPK_EXPECTED_FAILED_CHECKS = {
    # decision_function is (n_samples, n_classes) for two classes too (one score per class,
    # as for more), where scikit-learn's binary convention is one column for classes_[1]
    "check_classifiers_train": "binary decision_function has one column per class",
    "check_classifiers_classes": "binary decision_function has one column per class",
    # labels are any sortable hashable values: distinct floats are distinct classes
    "check_classifiers_regression_target": "float labels are class labels, not a continuous target",
    # y must be 1-d: a column vector is refused with a ValueError, not ravelled with a warning
    "check_supervised_y_2d": "a 2-d y is refused",
}


@parametrize_with_checks([TopKSVM(random_state=0),
                          TopKSVM(kernel="precomputed", random_state=0)],
                         expected_failed_checks=lambda estimator: TOPK_EXPECTED_FAILED_CHECKS)
def test_topk_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


def test_topk_is_a_classifier():
    from sklearn.base import is_classifier
    from sklearn.model_selection import StratifiedKFold, check_cv
    assert is_classifier(TopKSVM())
    y = np.repeat([0, 1, 2], 4)
    assert isinstance(check_cv(3, y, classifier=is_classifier(TopKSVM())), StratifiedKFold)


class _ArrayOnly:
    """An array-like that converts (``__array__``) but refuses every NumPy function."""

    def __init__(self, a):
        self.a = np.asarray(a)

    def __array__(self, dtype=None, copy=None):
        return self.a if dtype is None else self.a.astype(dtype)

    def __array_function__(self, func, types, args, kwargs):
        raise TypeError(f"no NumPy function on this object: {func.__name__}")


def test_array_likes_are_converted_before_they_are_inspected():
    X, y, qid = make_ranking(120, 5, n_queries=2, random_state=3)
    dense = X.toarray()
    a = APSVM(C=10.0).fit(_ArrayOnly(dense), _ArrayOnly(y), qid=qid)
    b = APSVM(C=10.0).fit(dense, y, qid=qid)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_array_equal(a.decision_function(_ArrayOnly(dense)), b.decision_function(dense))
    with pytest.raises(ValueError, match="^X: Complex data not supported$"):
        APSVM().fit(_ArrayOnly(dense + 1j), y, qid=qid)
    with pytest.raises(ValueError, match="^y: complex data not supported$"):
        APSVM().fit(dense, _ArrayOnly(y + 0j), qid=qid)


def test_dense_and_sparse_give_the_same_model():
    X, y, qid = make_ranking(300, 15, n_queries=3, random_state=1)
    a = APSVM(C=100.0, epsilon=1e-4).fit(X, y, qid=qid)
    b = APSVM(C=100.0, epsilon=1e-4).fit(X.toarray(), y, qid=qid)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-8, atol=1e-10)
    assert a.n_iter_ == b.n_iter_


def test_apsvm_learns_and_beats_chance():
    X, y, qid = make_ranking(1200, 20, n_queries=4, noise=0.3, random_state=2)
    train = qid <= 3
    model = APSVM(C=1000.0, epsilon=1e-3).fit(X[train], y[train], qid=qid[train])
    assert model.score(X[~train], y[~train]) > 0.7
    assert model.duality_gap_ <= 1000.0 * 1e-3 + 1e-9
    # a larger C fits the training set at least as well (lower training loss)
    small = APSVM(C=1.0).fit(X[train], y[train], qid=qid[train])
    s_big = model.score(X[train], y[train], qid=qid[train])
    assert s_big >= small.score(X[train], y[train], qid=qid[train]) - 1e-9


def test_ap_and_greedy_lai_train_the_same_model():
    X, y, qid = make_ranking(400, 10, random_state=3)
    a = APSVM(C=50.0, lai="qs").fit(X, y)
    b = APSVM(C=50.0, lai="greedy").fit(X, y)
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-7, atol=1e-9)


def test_grid_search_over_C():
    X, y, _ = make_ranking(400, 10, random_state=4)
    search = GridSearchCV(APSVM(epsilon=1e-2), {"C": [0.1, 10.0]}, cv=2).fit(X, y)
    assert search.best_params_["C"] in (0.1, 10.0)
    assert 0 <= search.best_score_ <= 1


def test_binary_svm_has_an_intercept_and_no_bias_option():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 3)) + 3.0
    y = np.where(X[:, 0] > 3.0, 1, -1)
    with_bias = BinarySVM(C=100.0, bias=1.0).fit(X, y)
    without = BinarySVM(C=100.0, bias=0.0).fit(X, y)
    assert with_bias.intercept_ < -1.0 and without.intercept_ == 0.0
    assert np.mean(with_bias.predict(X) == y) > 0.9


def test_binary_svm_predicts_its_training_labels():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(200, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    model = BinarySVM(C=100.0).fit(X, y)
    np.testing.assert_array_equal(model.classes_, [-1, 1])
    assert set(model.predict(X)) == {-1, 1} and np.mean(model.predict(X) == y) > 0.9
    assert model.predict(X).dtype == y.dtype  # the labels' own type
    text = BinarySVM(C=100.0).fit(X, y.astype(str).astype(object).copy())  # '-1' and '1'
    signed = np.where(y > 0, "+1", "-1")  # '+1' sorts before '-1'
    for labels in (signed, y.astype(str)):
        model = BinarySVM(C=100.0).fit(X, labels)
        np.testing.assert_array_equal(model.classes_, np.unique(labels))  # (sorted)
        assert np.mean(model.predict(X) == labels) > 0.9
    assert text.classes_.tolist() == ["-1", "1"]
    graded = BinarySVM(C=100.0).fit(X, np.where(y > 0, 1 + (X[:, 1] > 0), 0))
    assert graded.classes_.tolist() == [0, 1, 2] and set(graded.predict(X)) == {0, 1}
    with pytest.raises(ValueError, match=r"y: needs relevant \(y > 0\) and non-relevant .*got "
                                         r"200 relevant of 200 \(labels such as 1 and 2"):
        BinarySVM().fit(X, y + 2)


def test_ndcg_score_uses_the_relevance_the_loss_trained_on():
    """Graded labels train and score graded NDCG (issue 25: no silent merge of levels);
    binary labels train and score binary NDCG."""
    from svmrank.metrics import ndcg
    X = np.eye(4)
    model = RankSVM(loss="ndcg", C=1.0).fit(X, [2, 1, 0, 0])
    model.coef_ = np.array([0.1, 0.9, 0.5, 0.0])
    y = np.array([2, 1, 0, 0])
    assert model.score(X, y) == pytest.approx(ndcg(y, model.coef_))
    assert model.score(X, y) != pytest.approx(ndcg((y > 0).astype(float), model.coef_))
    binary = RankSVM(loss="ndcg", C=1.0).fit(X, [1, 1, 0, 0])
    binary.coef_ = model.coef_
    assert binary.score(X, y) == pytest.approx(ndcg((y > 0).astype(float), model.coef_))


def test_a_builtin_loss_object_scores_like_its_name():
    """loss=svmrank.losses.AP is loss="ap": the same fit and the same score. score took
    the built-in objects for a user's QSLoss and broke ties by input order."""
    from svmrank.losses import AP, NDCG, ROC
    X, y = np.array([[1.0, 0], [0, 1], [1, 1], [0, 0]]), [1, 0, 1, 0]
    X_tied, y_tied = np.zeros((4, 2)), [0, 0, 1, 1]
    for name, loss in (("ap", AP), ("ndcg", NDCG), ("roc", ROC)):
        by_name, by_object = RankSVM(loss=name).fit(X, y), RankSVM(loss=loss).fit(X, y)
        np.testing.assert_array_equal(by_name.coef_, by_object.coef_)
        assert by_object.score(X_tied, y_tied) == by_name.score(X_tied, y_tied)
    assert RankSVM(loss=ROC).fit(X, y).score(X_tied, y_tied) == 0.5  # (ties count half)


def test_copies_of_a_builtin_loss_stay_builtin():
    """clone and pickle made a new AP object, which score then took for a user's loss
    (1 − Δ, ties by input order): the copy scored 0.968 where the original scored 0.9525,
    in every GridSearchCV fold."""
    import copy
    import pickle
    from sklearn.base import clone
    from svmrank.losses import AP, NDCG, ROC
    for loss in (AP, NDCG, ROC):
        assert copy.deepcopy(loss) is loss and pickle.loads(pickle.dumps(loss)) is loss
    X, y = np.array([[1.0, 0], [0, 1], [1, 1], [0, 0]]), [1, 0, 1, 0]
    X_tied, y_tied = np.zeros((4, 2)), [0, 0, 1, 1]
    model = RankSVM(loss=AP).fit(X, y)
    for copied in (clone(model).fit(X, y), pickle.loads(pickle.dumps(model))):
        assert copied.score(X_tied, y_tied) == model.score(X_tied, y_tied) == 0.5


def test_score_measures_by_the_fitted_loss():
    """set_params(loss=...) without a refit changed the measure of score."""
    X, y, qid = make_ranking(n_samples=60, n_features=4, n_queries=3, random_state=0)
    model = RankSVM(loss="ap", C=10.0).fit(X, y, qid=qid)
    before = model.score(X, y, qid=qid)
    assert model.set_params(loss="roc").score(X, y, qid=qid) == before
    assert model.loss_.name == "ap"


def test_make_ranking_splits_evenly_and_checks_its_parameters():
    _, y, qid = make_ranking(n_samples=10, n_features=3, n_queries=4)
    np.testing.assert_array_equal(np.bincount(qid)[1:], [3, 3, 2, 2])
    for q in range(1, 5):  # a relevant and a non-relevant sample in every query
        assert 0 < y[qid == q].sum() < (qid == q).sum()
    for bad in ({"n_queries": 7}, {"n_queries": 0}, {"n_queries": -1}, {"n_samples": 10.5},
                {"positive_fraction": 1.0}, {"noise": float("nan")}, {"noise": -1.0},
                {"n_features": 0}, {"density": 0.0}):
        (name, value), = bad.items()  # (review 23: each named, with its value)
        with pytest.raises(ValueError, match=rf"^make_ranking: {name} must be .*, got "
                                             rf"{re.escape(repr(value))}$"):
            make_ranking(**{"n_samples": 10, **bad})
    from svmrank.datasets import make_bags, make_citation_graph, make_grouped
    for make, bad in ((make_bags, {"positive_fraction": 0}), (make_bags, {"n_features": 0}),
                      (make_bags, {"separation": float("nan")}), (make_bags, {"clutter": -1}),
                      (make_bags, {"bag_size": (5, 2)}), (make_grouped, {"homophily": 2}),
                      (make_grouped, {"separation": float("inf")}),
                      (make_grouped, {"n_features": 0}),
                      (make_citation_graph, {"n_features": 3})):
        (name, value), = bad.items()
        with pytest.raises(ValueError, match=rf"^{make.__name__}: {name} must be"):
            make(**bad)


def test_refit_without_approx_drops_n_easy():
    X, y, _ = make_ranking(200, 5, random_state=7)
    model = APSVM(C=10.0, approx=50).fit(X, y)
    assert hasattr(model, "n_easy_")
    assert not hasattr(model.set_params(approx=None).fit(X, y), "n_easy_")


def test_a_pipeline_is_scored_per_query_under_metadata_routing():
    # with routing on, Pipeline.score hands every step sample_weight=None: a score
    # without that parameter failed, and GridSearchCV over a Pipeline scored nan
    from sklearn.model_selection import GroupKFold
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    from svmrank import HOBSVM, LatentAPSVM, TopKSVM
    X, y, qid = make_ranking(600, 10, n_queries=6, noise=0.5, random_state=0)
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = Pipeline([("scale", StandardScaler(with_mean=False)), ("svm", APSVM(C=10.0))])
        pipe.fit(X, y, qid=qid)
        scaled = StandardScaler(with_mean=False).fit_transform(X)
        alone = APSVM(C=10.0).fit(scaled, y, qid=qid)
        assert pipe.score(X, y, qid=qid) == alone.score(scaled, y, qid=qid)
        search = GridSearchCV(pipe, {"svm__C": [1.0, 10.0]}, cv=GroupKFold(3))
        search.fit(X, y, qid=qid, groups=qid)
        assert np.isfinite(search.cv_results_["mean_test_score"]).all()
    for model in (APSVM(), BinarySVM(), HOBSVM(), LatentAPSVM(), TopKSVM()):
        assert "sample_weight" in inspect.signature(model.score).parameters
    with pytest.raises(ValueError, match="sample_weight: APSVM.score does not weight samples"):
        alone.score(X, y, qid=qid, sample_weight=np.ones(len(y)))


def test_metadata_routing_passes_each_fold_its_queries():
    from sklearn.model_selection import GroupKFold, cross_val_score
    X, y, qid = make_ranking(600, 10, n_queries=6, noise=0.5, random_state=0)
    cv = GroupKFold(3)
    by_hand = [APSVM(C=10.0).fit(X[tr], y[tr], qid=qid[tr]).score(X[te], y[te], qid=qid[te])
               for tr, te in cv.split(X, y, qid)]
    with sklearn.config_context(enable_metadata_routing=True):
        routed = cross_val_score(APSVM(C=10.0), X, y, cv=cv, params={"qid": qid, "groups": qid})
        search = GridSearchCV(APSVM(), {"C": [1.0, 10.0]}, cv=cv).fit(X, y, qid=qid, groups=qid)
        assert search.best_params_ == {"C": 10.0}
        # a method's metadata can be switched off (then a fold is scored as one query),
        # and unknown names are refused
        off = APSVM(C=10.0).set_score_request(qid=False)
        one_query = cross_val_score(off, X, y, cv=cv, params={"qid": qid, "groups": qid})
        np.testing.assert_allclose(one_query, [
            APSVM(C=10.0).fit(X[tr], y[tr], qid=qid[tr]).score(X[te], y[te])
            for tr, te in cv.split(X, y, qid)])
        with pytest.raises(TypeError, match=r"Unexpected args: {'bags'} in fit"):
            APSVM().set_fit_request(bags=True)
        from svmrank import LatentAPSVM
        routing = LatentAPSVM().set_predict_request(bags=False).get_metadata_routing()
        assert routing.predict.requests == {"bags": False}
        assert routing.decision_function.requests == {"bags": True}
        # UNCHANGED leaves a request as it is (it was stored as an alias), and an alias
        # must be an identifier (scikit-learn's rules)
        from sklearn.utils.metadata_routing import UNCHANGED
        kept = APSVM().set_fit_request(qid="group").set_fit_request(qid=UNCHANGED)
        assert kept.get_metadata_routing().fit.requests == {"qid": "group", "group": True}
        with pytest.raises(ValueError, match="should be either a valid identifier"):
            APSVM().set_fit_request(qid="my-qid")
        with pytest.raises(ValueError):
            APSVM().set_fit_request(qid=np.array([1, 2]))
    with pytest.raises(RuntimeError, match="only available when metadata routing is enabled"):
        APSVM().set_fit_request(qid=True)
    np.testing.assert_allclose(routed, by_hand)
    assert np.mean(by_hand) == pytest.approx(search.cv_results_["mean_test_score"][1])


def test_get_set_params_roundtrip():
    model = RankSVM(loss="ndcg", C=3.0)
    assert model.get_params()["loss"] == "ndcg"
    assert "loss" not in APSVM().get_params()
    model.set_params(C=5.0)
    assert model.C == 5.0
    with pytest.raises(ValueError, match="(?i)invalid parameter 'c'"):
        model.set_params(c=1)


@pytest.mark.parametrize("params,match", [
    ({"C": 0}, "C must be positive"), ({"C": -1.0}, "C must be positive"),
    ({"C": float("nan")}, "C must be a finite"), ({"epsilon": 0}, "epsilon"),
    ({"max_iter": 0}, "max_iter"), ({"loss": "map"}, "loss"), ({"lai": "fast"}, "lai"),
    ({"verbose": "x"}, "verbose must be an integer >= 0"), ({"verbose": 1.5}, "verbose"),
])
def test_bad_parameters(params, match):
    X, y, _ = make_ranking(50, 5, random_state=0)
    with pytest.raises(ValueError, match=match):
        RankSVM(**params).fit(X, y)


def test_not_fitted_error_and_convergence_warning_are_sklearns():
    import sklearn.exceptions

    import svmrank
    assert svmrank.NotFittedError is sklearn.exceptions.NotFittedError
    assert svmrank.ConvergenceWarning is sklearn.exceptions.ConvergenceWarning
    for catch in (svmrank.NotFittedError, ValueError, AttributeError):
        with pytest.raises(catch, match="not fitted"):
            APSVM().decision_function(np.ones((2, 2)))
    X, y, _ = make_ranking(60, 5, random_state=0)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", category=sklearn.exceptions.ConvergenceWarning)
        with pytest.raises(svmrank.ConvergenceWarning, match="max_iter=1"):
            APSVM(C=100.0, max_iter=1).fit(X, y)
    with warnings.catch_warnings():
        warnings.filterwarnings("error")
        warnings.filterwarnings("ignore", category=sklearn.exceptions.ConvergenceWarning)
        APSVM(C=100.0, max_iter=1).fit(X, y)  # silenced by scikit-learn's filter


def test_bad_data():
    X, y, _ = make_ranking(50, 5, random_state=0)
    with pytest.raises(ValueError, match="y: expected length"):
        APSVM().fit(X, y[:-1])
    with pytest.raises(ValueError, match="NaN or infinite"):
        APSVM().fit(np.full((4, 2), np.nan), [1, 0, 1, 0])
    with pytest.raises(ValueError, match=r"needs a relevant and a non-relevant sample; got one class \(1.0\)"):
        APSVM().fit(X, np.ones(50))
    with pytest.raises(ValueError, match="qid: expected length"):
        APSVM().fit(X, y, qid=[1, 2])
    model = APSVM().fit(X, y)
    with pytest.raises(ValueError, match="X has 4 features, but APSVM is expecting 5"):
        model.decision_function(X[:, :4])
    with pytest.raises(AttributeError, match="not fitted"):
        APSVM().decision_function(X)


def test_metrics_match_sklearn():
    from sklearn.metrics import average_precision_score, ndcg_score, roc_auc_score
    rng = np.random.default_rng(6)
    for _ in range(20):
        y = (rng.random(30) < 0.3).astype(float)
        y[0], y[1] = 1, 0
        s = np.round(rng.normal(size=30), 1)  # with ties
        assert average_precision(y, s) == pytest.approx(average_precision_score(y, s))
        from svmrank.metrics import ndcg, roc_auc
        assert roc_auc(y, s) == pytest.approx(roc_auc_score(y, s))
        assert ndcg(y, s) == pytest.approx(ndcg_score([y], [s]))  # ties averaged by both
        assert ndcg(y, s, k=10) == pytest.approx(ndcg_score([y], [s], k=10))
        graded = rng.integers(0, 5, size=30).astype(float)
        assert ndcg(graded, s, k=5) == pytest.approx(ndcg_score([2.0**graded - 1], [s], k=5))
    assert ndcg([1.0, 0.0, 0.0], [0.0, 0.0, 0.0]) == pytest.approx(ndcg_score([[1, 0, 0]], [[0, 0, 0]]))
    assert ndcg([2000.0, 1.0, 0.0], [0.0, 1.0, 2.0]) == pytest.approx(1 / np.log2(4))  # no overflow
    # small graded labels: their gains 2^l - 1 used to cancel (NaN, or digits lost)
    assert ndcg([1e-17, 0.0, 0.0], [0.0, 1.0, 2.0]) == pytest.approx(0.5)
    tiny = np.array([1e-12, 3e-12, 0.0])
    assert ndcg(tiny, [0.0, 1.0, 2.0]) == pytest.approx(
        ndcg_score([np.expm1(tiny * np.log(2))], [[0.0, 1.0, 2.0]]), rel=1e-12)
    for k in (0, -1, 2.7, True):
        with pytest.raises(ValueError, match="k must be a positive integer"):
            ndcg([1.0, 0.0, 1.0], [3.0, 2.0, 1.0], k=k)


@pytest.mark.parametrize("make", [lambda: APSVM(), lambda: RankSVM(loss="ndcg"),
                                  lambda: RankSVM(loss="roc"), lambda: BinarySVM()])
def test_score_averages_the_queries_training_uses(make):
    """A query of relevant samples only is skipped, as in training and in
    svm_ap_classify's summary (it used to count as AP = NDCG = 1, ROC area 0)."""
    X = np.array([[0.1], [0.2], [0.3], [0.4], [0.5], [0.6]])
    y = np.array([1, 1, 1, 0, 1, 0])
    qid = np.array([1, 1, 2, 2, 2, 2])
    est = make().fit(X, y, qid=qid)
    est.coef_ = np.array([1.0])  # (the ranking of query 2: 0.6 > 0.5 > 0.4 > 0.3)
    if hasattr(est, "intercept_"):
        est.intercept_ = 0.0
    only_second = make().fit(X, y, qid=qid)
    only_second.coef_, only_second.intercept_ = est.coef_, getattr(est, "intercept_", 0.0)
    assert est.score(X, y, qid=qid) == pytest.approx(only_second.score(X[2:], y[2:], qid=qid[2:]))
    assert est.score(X, y, qid=qid) < 1.0


def test_nan_qid_is_refused_and_an_undefined_score_warns():
    X, y, qid = make_ranking(n_samples=60, n_features=4, n_queries=3, random_state=0)
    bad = qid.astype(float)
    bad[5] = np.nan
    with pytest.raises(ValueError, match="qid: contains NaN"):
        APSVM(C=10.0).fit(X, y, qid=bad)
    clf = APSVM(C=10.0).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="qid: contains NaN"):
        clf.score(X, y, qid=bad)
    with pytest.warns(UserWarning, match=r"undefined \(NaN\) on every query"):
        assert np.isnan(clf.score(X, np.zeros(len(y))))


def test_binary_rankers_are_scikit_learn_classifiers():
    from sklearn.base import is_classifier
    from sklearn.model_selection import StratifiedKFold, check_cv, cross_val_score
    X, y, _ = make_ranking(300, 6, positive_fraction=0.2, noise=0.5, random_state=4)
    labels = np.where(y > 0, "spam", "ham")
    for model in (APSVM(C=10.0), RankSVM(loss="ndcg", C=10.0), BinarySVM(C=10.0)):
        assert is_classifier(model)
        assert isinstance(check_cv(3, labels, classifier=is_classifier(model)), StratifiedKFold)
        fitted = model.fit(X, labels)
        assert fitted.classes_.tolist() == ["ham", "spam"]
        assert set(fitted.predict(X)) <= {"ham", "spam"}
        assert fitted.score(X, labels) == fitted.score(X, y)
        np.testing.assert_array_equal(fitted.decision_function(X),
                                      type(model)(**model.get_params()).fit(X, y).decision_function(X))
    # a plain cross_val_score splits stratified: every fold keeps relevant samples
    scores = cross_val_score(APSVM(C=10.0), X, y, cv=5)
    assert np.isfinite(scores).all() and len(scores) == 5


def test_feature_names_are_kept_from_a_dataframe():
    pd = pytest.importorskip("pandas")
    from svmrank import HOBSVM, LatentAPSVM
    X, y, _ = make_ranking(120, 4, random_state=2)
    frame = pd.DataFrame(X.toarray(), columns=["a", "b", "c", "d"])
    for model in (APSVM(C=10.0), BinarySVM(), TopKSVM(random_state=0), HOBSVM(),
                  LatentAPSVM()):
        model.fit(frame, y)
        assert model.feature_names_in_.tolist() == ["a", "b", "c", "d"]
        assert model.n_features_in_ == 4
        with pytest.warns(UserWarning, match="feature names"):
            model.decision_function(X.toarray())
    assert not hasattr(APSVM(C=10.0).fit(X, y), "feature_names_in_")


def test_ranked_queries_are_those_with_a_relevant_and_a_non_relevant_sample():
    from svmrank.metrics import is_ranked, ranked_queries
    rng = np.random.default_rng(9)
    for _ in range(50):
        sizes = rng.integers(0, 5, size=rng.integers(1, 6))  # (empty queries too)
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        relevant = rng.random(offsets[-1]) < 0.5
        expected = [relevant[a:b].any() and not relevant[a:b].all()
                    for a, b in zip(offsets[:-1], offsets[1:])]
        assert ranked_queries(relevant, offsets).tolist() == expected
        assert [is_ranked(relevant[a:b]) for a, b in zip(offsets[:-1], offsets[1:])] == expected
    assert not is_ranked(np.zeros(0, dtype=bool))


def test_a_zero_model_warns():
    """Issue 29: a degenerate model (w = 0, every sample ties) was returned silently."""
    import warnings as _warnings
    from svmrank import RankSVM, TopKSVM
    X = np.zeros((8, 3))
    y = np.array([0, 1] * 4)
    with pytest.warns(UserWarning, match=r"RankSVM ended at w = 0 .*C=1 may be too small"):
        RankSVM(C=1.0).fit(X, y)
    with pytest.warns(UserWarning, match="TopKSVM ended at w = 0"):
        TopKSVM(C=1.0).fit(X, y)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    with _warnings.catch_warnings():
        _warnings.simplefilter("error", UserWarning)
        RankSVM(C=1.0).fit(X, (X[:, 0] > 0).astype(int))


def test_scores_that_tie_every_sample_warn():
    """Issue 29: w is not 0 but X w is the same for every training sample (only the bias
    or features without variance weighed) was returned silently."""
    import warnings as _warnings
    from svmrank import BinarySVM, TopKSVM
    y = np.array([0] * 6 + [1] * 2)
    # features without variance: only the bias is non-zero, every sample scores it
    with pytest.warns(UserWarning, match=r"BinarySVM ended with training scores that all "
                                         r"tie .*without variance.*C=0.1"):
        model = BinarySVM(C=0.1).fit(np.zeros((8, 3)), y)
    assert model.intercept_ != 0 and np.ptp(model.decision_function(np.zeros((8, 3)))) == 0
    # a constant feature carries each class's prior: every sample gets the same classes
    with pytest.warns(UserWarning, match="TopKSVM ended with training scores that all tie"):
        model = TopKSVM(C=1.0).fit(np.ones((8, 1)), y)
    assert np.any(model.coef_)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = (X[:, 0] > 0).astype(int)
    with _warnings.catch_warnings():
        _warnings.simplefilter("error", UserWarning)
        BinarySVM(C=1.0).fit(X, y)
        TopKSVM(C=1.0).fit(X, y)
        BinarySVM(C=1.0).fit(np.hstack([X, np.ones((30, 1))]), y)  # (a constant column too)


def test_early_stopping_reports_the_kept_iterates_objective():
    """Review 21: with early stopping, objective_ and duality_gap_ were the last
    iterate's while coef_ was the best one's."""
    from svmrank.inference import structured_hinge
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 10))
    qid = np.sort(rng.integers(0, 10, 400))
    w0 = rng.normal(size=10)
    y = (X @ w0 + 2 * rng.normal(size=400) > 0.8).astype(int)
    X_val = rng.normal(size=(200, 10))
    qid_val = np.sort(rng.integers(0, 5, 200))
    y_val = (X_val @ w0 + 2 * rng.normal(size=200) > 0.8).astype(int)
    C = 100.0
    model = RankSVM(loss="ap", C=C, epsilon=1e-5).fit(
        X, y, qid=qid, eval_set=(X_val, y_val, qid_val), early_stopping_rounds=3)
    assert model.best_iteration_ < model.n_iter_  # (it did stop early)
    w = model.coef_
    primal = 0.5 * w @ w + C * structured_hinge(X @ w, y, "ap", qid=qid)[0]
    assert model.objective_ == pytest.approx(primal, rel=1e-9)
    kept = model.history_[model.best_iteration_ - 1]
    assert (model.objective_, model.duality_gap_) == (kept["objective"], kept["gap"])
    assert model.result_.xi == pytest.approx(structured_hinge(X @ w, y, "ap", qid=qid)[0])
