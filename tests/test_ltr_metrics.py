"""Learning-to-rank measures (svmrank.metrics): graded NDCG@k, MAP, P@k, MRR, ERR, the
conventions for queries without a relevant document and for ties, LightGBM's group=,
and the scikit-learn scorers with metadata routing."""
import itertools
import warnings

import numpy as np
import pytest
import sklearn
from hypothesis import given, settings, strategies as st
from sklearn.metrics import ndcg_score
from sklearn.model_selection import GridSearchCV, GroupKFold, cross_validate

from svmrank import BinarySVM, RankSVM
from svmrank import metrics
from svmrank.metrics import (average_precision, expected_reciprocal_rank, make_ranking_scorer,
                             mean_over_queries, ndcg, per_query, precision_at_k,
                             ranking_metrics, reciprocal_rank)


@pytest.fixture(autouse=True)
def fresh_warning_registry(monkeypatch):
    """The missing-qid warning is shown once per process: each test starts afresh."""
    monkeypatch.setattr(metrics, "_WARNED_WITHOUT_QUERIES", set())


def over_tie_orders(measure, y, s, **kw):
    """Mean of the measure over every order of the tied samples (brute force)."""
    y, s = np.asarray(y, float), np.asarray(s, float)
    values = []
    for perm in itertools.permutations(range(len(s))):
        if all(s[perm[i]] >= s[perm[i + 1]] for i in range(len(s) - 1)):
            ranks = np.empty(len(s))
            ranks[list(perm)] = -np.arange(len(s), dtype=float)
            values.append(measure(y, ranks, **kw))
    return np.mean(values)


def test_hand_computations():
    y, s = [2, 0, 1, 0], [4.0, 3.0, 2.0, 1.0]
    # DCG = 3/log2(2) + 1/log2(4) = 3.5; ideal = 3 + 1/log2(3)
    assert ndcg(y, s) == pytest.approx(3.5 / (3 + 1 / np.log2(3)))
    assert ndcg(y, s, gains="linear") == pytest.approx(2.5 / (2 + 1 / np.log2(3)))
    assert ndcg(y, s, k=1) == 1.0
    assert average_precision(y, s) == pytest.approx((1 + 2 / 3) / 2)
    assert precision_at_k(y, s, k=2) == 0.5 and precision_at_k(y, s, k=10) == 0.2
    assert reciprocal_rank([0, 0, 1], [3, 2, 1]) == pytest.approx(1 / 3)
    # ERR: R = (2^l - 1) / 4 = 3/4, 0, 1/4: 3/4 + (1/4)(1/4)/3
    assert expected_reciprocal_rank(y, s) == pytest.approx(0.75 + 1 / 48)
    assert expected_reciprocal_rank(y, s, k=1) == pytest.approx(0.75)
    assert expected_reciprocal_rank(y, s, max_label=4) == pytest.approx(3 / 16 + (13 / 16) / 16 / 3)
    # ties: rank of the first relevant among 3 tied (1 relevant): (1 + 1/2 + 1/3) / 3
    assert reciprocal_rank([0, 1, 0], [1, 1, 1]) == pytest.approx(11 / 18)
    assert precision_at_k([0, 1, 0], [1, 1, 1], k=1) == pytest.approx(1 / 3)
    for measure in (ndcg, precision_at_k, reciprocal_rank, expected_reciprocal_rank, average_precision):
        assert np.isnan(measure([0, 0, -1], [1, 2, 3]))


def test_graded_ndcg_matches_scikit_learn():
    rng = np.random.default_rng(0)
    for _ in range(30):
        n = rng.integers(2, 12)
        y = rng.integers(0, 5, n)
        if not y.any():
            continue
        s = rng.integers(0, 4, n).astype(float)  # many ties
        for k in (None, 1, 3, 5, 10):
            assert ndcg(y, s, k=k, gains="linear") == pytest.approx(ndcg_score([y], [s], k=k))
            assert ndcg(y, s, k=k) == pytest.approx(ndcg_score([2.0 ** y - 1], [s], k=k))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2)), min_size=1, max_size=5),
       st.integers(1, 4))
def test_ties_are_the_expectation_over_tied_orders(pairs, k):
    y, s = map(np.array, zip(*pairs))
    if not (y > 0).any():
        return
    for measure, kw in ((ndcg, {"k": k}), (precision_at_k, {"k": k}), (reciprocal_rank, {}),
                        (expected_reciprocal_rank, {"k": k, "max_label": 3}),
                        (expected_reciprocal_rank, {"gains": "linear", "max_label": 3})):
        assert measure(y, s.astype(float), **kw) == pytest.approx(over_tie_orders(measure, y, s, **kw))


def test_large_tie_groups_stay_finite():
    y = np.r_[np.zeros(3000), 1, 4]
    s = np.zeros(len(y))
    rr = reciprocal_rank(y, s)
    assert 0 < rr < 0.01 and np.isfinite(expected_reciprocal_rank(y, s))
    assert precision_at_k(y, s, k=10) == pytest.approx(2 / len(y))


def test_conventions_for_queries_without_a_relevant_document():
    y = np.array([1, 0, 0, 0, 0, 1, 0])
    s = np.array([1.0, 2.0, 1.0, 2.0, 1.0, 1.0, 2.0])
    qid = np.array([1, 1, 2, 2, 3, 3, 3])
    per = per_query(ndcg, y, s, qid)
    assert np.isnan(per[1]) and per[0] == pytest.approx(1 / np.log2(3))
    mean = lambda **kw: mean_over_queries(ndcg, y, s, qid, **kw)
    assert mean() == pytest.approx((per[0] + per[2]) / 2)
    assert mean(no_relevant=0) == pytest.approx((per[0] + per[2]) / 3)
    assert mean(no_relevant=1) == pytest.approx((per[0] + per[2] + 1) / 3)
    assert mean_over_queries(ndcg, y, s, group=[2, 2, 3]) == mean()
    with pytest.raises(ValueError, match="no_relevant"):
        mean(no_relevant="zero")
    out = ranking_metrics(y, s, qid, no_relevant=0)
    assert list(out) == ["ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "map", "mrr", "p@10"]
    assert out["ndcg@10"] == pytest.approx(mean(no_relevant=0, k=10))


def test_group_is_checked():
    y, s = np.array([1, 0, 1]), np.array([1.0, 2.0, 3.0])
    for group, message in (([1, 1], "sum to 2, expected the number of rows \\(3\\)"),
                           ([0, 3], "positive integers, got 0"), ([1.5, 1.5], "got 1.5"),
                           ([[1, 2]], "1-d"), (["a"], "query sizes"),
                           # review 23: int64 sums wrapped to 3 and np.repeat segfaulted
                           ([2**63 - 1, 2**63 - 1, 5], "sum to 18446744073709551619"),
                           (np.array([1e19]), "sum to 10000000000000000000")):
        with pytest.raises(ValueError, match="^group: .*" + message):
            per_query(ndcg, y, s, group=group)
    with pytest.raises(ValueError, match="qid and group"):
        per_query(ndcg, y, s, qid=[1, 1, 2], group=[2, 1])


def test_metric_names():
    for bad, message in (("ndcg@0", "positive"), ("p", "cut-off"), ("map@3", "no @k"),
                         ("auc", "unknown"), (3, "name")):
        with pytest.raises(ValueError, match="metric"):
            make_ranking_scorer(bad)
    with pytest.raises(ValueError, match="gains"):
        make_ranking_scorer("ndcg", gains="log")
    assert repr(make_ranking_scorer("NDCG@10", no_relevant=0)) == \
        "make_ranking_scorer('NDCG@10', no_relevant=0)"


def ranked_data(seed=0, n_queries=12, size=10, d=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_queries * size, d))
    y = np.clip(np.round(X[:, 0] + 0.5 * rng.normal(size=len(X))), 0, 3)
    y[::size] = 1  # every query has a relevant document
    return X, y, np.repeat(np.arange(n_queries), size)


def test_estimators_take_group():
    X, y, qid = ranked_data()
    group = np.full(12, 10)
    for est in (RankSVM(C=1.0), BinarySVM(C=1.0)):
        a = type(est)(C=1.0).fit(X, y, qid=qid)
        b = type(est)(C=1.0).fit(X, y, group=group)
        np.testing.assert_array_equal(a.coef_, b.coef_)
        assert a.max_query_size_ == 10
        assert a.score(X, y, qid=qid) == b.score(X, y, group=group)
        with pytest.raises(ValueError, match="^group: query sizes sum"):
            est.fit(X, y, group=[5, 5])
        with pytest.raises(ValueError, match="qid and group"):
            a.score(X, y, qid=qid, group=group)
    assert RankSVM().fit(X, y).max_query_size_ is None


def test_score_and_scorer_warn_once_without_queries():
    X, y, qid = ranked_data()
    est = RankSVM(C=1.0).fit(X, y, qid=qid)
    one_query = RankSVM(C=1.0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.score(X[:10], y[:10])  # one query's worth
        one_query.score(X, y)  # fitted as one query
    with pytest.warns(UserWarning, match="RankSVM.score got 120 rows without qid.*enable_metadata_routing=True"):
        est.score(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est.score(X, y)  # once
    scorer = make_ranking_scorer("ndcg@10")
    with pytest.warns(UserWarning, match="make_ranking_scorer\\('ndcg@10'\\) got 120 rows"):
        one = scorer(est, X, y)
    assert one == pytest.approx(ndcg(y, est.decision_function(X), k=10))
    assert scorer(est, X, y, qid=qid) == pytest.approx(
        mean_over_queries(ndcg, y, est.decision_function(X), qid, k=10))


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def test_scorers_get_the_queries_in_a_search(routing):
    X, y, qid = ranked_data(n_queries=9)
    cv = GroupKFold(3)
    search = GridSearchCV(RankSVM(), {"C": [0.1, 10.0]}, cv=cv,
                          scoring=make_ranking_scorer("ndcg@10"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # (no missing-qid warning)
        warnings.filterwarnings("ignore", "y: .* distinct labels, but")  # (AP on grades)
        search.fit(X, y, qid=qid, groups=qid)
    # the same folds scored by hand, query by query
    expected = []
    for train, test in cv.split(X, y, qid):
        est = RankSVM(C=search.best_params_["C"]).fit(X[train], y[train], qid=qid[train])
        expected.append(mean_over_queries(ndcg, y[test], est.decision_function(X[test]),
                                          qid[test], k=10))
    assert search.best_score_ == pytest.approx(np.mean(expected))
    result = cross_validate(RankSVM(), X, y, cv=cv, params={"qid": qid, "groups": qid},
                            scoring={"map": make_ranking_scorer("map"),
                                     "mrr": make_ranking_scorer("mrr"),
                                     "err": make_ranking_scorer("err@10")})
    assert np.all((result["test_map"] > 0) & (result["test_mrr"] <= 1) & (result["test_err"] > 0))


def test_a_search_without_routing_warns():
    X, y, qid = ranked_data(n_queries=9)
    search = GridSearchCV(RankSVM(), {"C": [1.0]}, cv=GroupKFold(3),
                          scoring=make_ranking_scorer("ndcg@10"))
    with pytest.warns(UserWarning, match="without qid or group"):
        search.fit(X, y, qid=qid, groups=qid)


def test_svm_ap_classify_prints_ltr_measures_for_ranked_data(tmp_path, capsys):
    from svmrank.cli import ap_classify, ap_learn
    X, y, qid = ranked_data(n_queries=6)
    lines = [f"{int(l)} qid:{q} " + " ".join(f"{j + 1}:{v:.4f}" for j, v in enumerate(x))
             for l, q, x in zip(y, qid, X)]
    ranked, binary = tmp_path / "ranked.dat", tmp_path / "binary.dat"
    ranked.write_text("\n".join(lines) + "\n")
    binary.write_text("".join(f"{1 if l > 0 else -1} " + line.split(" ", 2)[2] + "\n"
                              for l, line in zip(y, lines)))
    model, pred = tmp_path / "m", tmp_path / "p"
    assert ap_learn.main(["-v", "0", "-c", "1", str(ranked), str(model)]) == 0
    assert ap_classify.main([str(ranked), str(model), str(pred)]) == 0
    out = capsys.readouterr().out
    assert "Zero/one" not in out
    value = lambda key: float([ln for ln in out.splitlines() if ln.startswith(key + ":")][0].split()[1])
    scores = np.loadtxt(pred)
    for key, measure, kw in (("NDCG@1", ndcg, {"k": 1}), ("NDCG@5", ndcg, {"k": 5}),
                             ("MRR", reciprocal_rank, {}), ("P@10", precision_at_k, {"k": 10})):
        assert value(key) == pytest.approx(mean_over_queries(measure, y, scores, qid, **kw), abs=1e-4)
    # binary labels, one query, a model with a bias (error rate): the zero/one error
    assert ap_learn.main(["-v", "0", "-c", "1", "-l", "error", str(binary), str(model)]) == 0
    assert ap_classify.main([str(binary), str(model), str(pred)]) == 0
    out = capsys.readouterr().out
    assert "Zero/one-error" in out and "MRR" not in out and "NDCG@10:" in out
    assert ap_classify.main(["-v", "0", str(ranked), str(model), str(pred)]) == 0
    assert capsys.readouterr().out == ""


def test_reciprocal_rank_of_a_large_tie_group_is_linear_and_exact():
    """Review 21: MRR over a tie group of g rows was O(g^2) (13 s at 32k rows); its
    binary stops have the closed form P(first relevant at j) = C(g-j, r-1) / C(g, r)."""
    from fractions import Fraction
    from math import comb
    g, r = 40, 3
    y = np.r_[0.0, np.zeros(g - r), np.ones(r)]
    s = np.r_[1.0, np.zeros(g)]  # (one row above the group)
    exact = sum(Fraction(comb(g - j, r - 1), comb(g, r)) / (1 + j) for j in range(1, g - r + 2))
    assert reciprocal_rank(y, s) == pytest.approx(float(exact), rel=1e-13)
    # the general recurrence of the stop probabilities agrees with the closed form
    q = np.r_[np.ones(g - r), np.zeros(r)]
    general = np.zeros(g + 1)
    general[0] = 1.0
    for n, qn in enumerate(q, start=1):
        j = np.arange(1, n + 1)
        general[j] = ((n - j) * general[j] + j * qn * general[j - 1]) / n
    np.testing.assert_allclose(metrics._no_stop_probabilities(q, g), general, atol=1e-15)
    big = np.r_[np.zeros(200_000), np.ones(7)]  # (linear: far below a second)
    assert 0 < reciprocal_rank(big, np.zeros(len(big))) < 1e-3


def test_err_scale_can_be_fixed_in_scorers_and_ranking_metrics():
    """Review 23: ERR's default max_label is the highest label of the rows scored, so a
    query scored next to one with a higher grade changed value, and neither
    ranking_metrics nor the scorers could fix the scale."""
    y, s, qid = np.array([0, 1, 2, 0, 4]), np.array([3.0, 2, 1, 1, 2]), np.array([1, 1, 1, 2, 2])
    fixed = expected_reciprocal_rank(y[:3], s[:3], max_label=4)
    assert ranking_metrics(y[:3], s[:3], metrics=["err"])["err"] != pytest.approx(fixed)
    assert ranking_metrics(y[:3], s[:3], metrics=["err"], max_label=4)["err"] == pytest.approx(fixed)
    assert ranking_metrics(y, s, qid, metrics=["err", "map"], max_label=4) == pytest.approx(
        ranking_metrics(y, s, qid, metrics=["err", "map"]))
    est = RankSVM(C=1.0, loss="pairs").fit(np.c_[s, -s], y, qid=qid)
    scorer = make_ranking_scorer("err", max_label=4)
    assert repr(scorer) == "make_ranking_scorer('err', max_label=4)"
    assert scorer(est, np.c_[s, -s][:3], y[:3]) == pytest.approx(
        expected_reciprocal_rank(y[:3], est.decision_function(np.c_[s, -s][:3]), max_label=4))
    for bad in (float("nan"), "4"):
        with pytest.raises(ValueError, match="^max_label must be a finite number"):
            make_ranking_scorer("ndcg@10", max_label=bad)
    with pytest.raises(ValueError, match="^gains"):
        make_ranking_scorer("map", gains="squared")  # (checked whatever the measure)


def test_bad_max_label_and_classless_scores_are_refused():
    for bad in (float("nan"), float("inf"), "3", True):
        with pytest.raises(ValueError, match="^max_label must be a finite number or None"):
            expected_reciprocal_rank([2, 0, 1], [0.3, 0.2, 0.1], max_label=bad)
    assert expected_reciprocal_rank([2, 0, 1], [0.3, 0.2, 0.1], max_label=np.int64(3)) > 0
    with pytest.raises(ValueError, match="^scores: expected one column per class, got none$"):
        metrics.top_k_accuracy([0, 1], np.zeros((2, 0)))


def test_metric_arguments_are_named():
    """Review 23: a lone name iterated by character, names refused by per_query with a
    TypeError, raw numpy errors from top_k_accuracy's scores and ks, and a silent NaN
    on no samples."""
    y, s, qid = np.array([0, 1, 2, 0]), np.array([3.0, 2, 1, 0]), np.array([1, 1, 2, 2])
    with pytest.raises(ValueError, match=r"^metrics: expected a sequence of names, got the "
                                         r"string 'map' \(write \['map'\]\)"):
        ranking_metrics(y, s, qid, metrics="map")
    assert metrics.mean_over_queries("ndcg@1", y, s, qid) == pytest.approx(
        metrics.mean_over_queries(ndcg, y, s, qid, k=1))
    np.testing.assert_allclose(per_query("err", y, s, qid, max_label=4),
                               per_query(expected_reciprocal_rank, y, s, qid, max_label=4))
    np.testing.assert_allclose(per_query("ndcg", y, s, qid, gains="linear"),
                               per_query(ndcg, y, s, qid, gains="linear"))
    with pytest.raises(ValueError, match="^metric: expected a function of one query"):
        per_query(3, y, s, qid)
    for kwargs in ({"k": None}, {"k": 5}, {"bogus": 1}):  # (a k= overrode the name's @k)
        with pytest.raises(ValueError, match="^metric 'ndcg@1': a name takes gains= and "
                                             "max_label= only"):
            per_query("ndcg@1", y, s, qid, **kwargs)
    assert metrics.mean_over_ranked_queries("map", y, s, qid) == pytest.approx(
        metrics.mean_over_ranked_queries(average_precision, y, s, qid))
    for scores, message in (([[1, 2], [3]], "cannot convert"), ([["a", "b"]], "cannot convert"),
                            ([[1 + 1j, 2]], "complex"), (None, "expected an array, got None"),
                            ([[np.nan, 1]], "contains NaN")):
        with pytest.raises(ValueError, match="^scores: " + message):
            metrics.top_k_accuracy([0] * len(scores or [0]), scores)
    with pytest.raises(ValueError, match="^ks: expected a sequence of integers, got 3"):
        metrics.top_k_accuracies([0], [[1.0, 2.0]], ks=3)
    with pytest.warns(UserWarning, match="no samples is undefined"):
        assert np.isnan(metrics.top_k_accuracy([], np.zeros((0, 3))))
