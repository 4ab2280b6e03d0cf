"""Graded relevance: SVM-rank's pairwise loss and graded NDCG@k (issue 25, parts 1-2)."""
import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone

from graded_reference import (ndcg_lai_brute, ndcg_loss_reference, pair_counts_reference,
                              pair_feature_reference, pairs_objective_brute)
from svmrank import _graded_fast
from svmrank.estimators import RankSVM
from svmrank.graded import (MAX_DP_STATES, NDCGQueries, graded_levels, ndcg_inference,
                            pairs_inference)
from svmrank.io.estimator_model import from_model, to_model
from svmrank.losses import GradedNDCG, PairwiseLoss, svm_rank_parameters
from svmrank.metrics import ndcg
from svmrank.parallel import threads
from svmrank.problems.graded import GradedRankingProblem


def _pairs_one(scores, labels):
    values, lev = np.unique(labels, return_inverse=True)
    n = len(scores)
    return pairs_inference(np.asarray(scores, float), lev.astype(np.int64).ravel(),
                           np.array([0, n], np.int64), np.array([len(values)], np.int64))


# ---------------------------------------------------------------- pairwise loss
@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, -1.0,
                                                               1e-9, 3.25])),
                min_size=2, max_size=12))
def test_pair_counts_match_double_loop(rows):
    labels = np.array([r[0] for r in rows])
    scores = np.array([r[1] for r in rows])
    if len(np.unique(labels)) < 2:
        return
    coef, swapped = _pairs_one(scores, labels)
    heads, tails = pair_counts_reference(scores, labels)
    np.testing.assert_array_equal(coef, heads - tails)
    assert swapped[0] == heads.sum()


@pytest.mark.parametrize("seed", range(12))
def test_pairs_inference_is_the_maximiser(seed):
    rng = np.random.default_rng(seed)
    n = rng.integers(2, 6)
    labels = rng.integers(0, rng.integers(2, 5), n)
    if len(np.unique(labels)) < 2:
        labels[0], labels[1] = 0, 1
    scores = rng.choice([0.0, 0.5, 1.0, 2.0, rng.normal()], n)  # ties and margins of 1
    coef, swapped = _pairs_one(scores, labels)
    assert swapped[0] - coef @ scores == pytest.approx(pairs_objective_brute(scores, labels))


def test_pairs_several_queries_and_huge_values():
    scores = np.array([1e300, -1e300, 0.0, 5.0, 5.0, 4.5])
    levels = np.array([1, 0, 0, 2, 1, 0], np.int64)
    offsets = np.array([0, 2, 6], np.int64)
    coef, swapped = pairs_inference(scores, levels, offsets, np.array([2, 3], np.int64))
    assert swapped.tolist() == [0.0, 3.0]  # (level 2 at 5 against 5 and 4.5, 1 against 4.5)
    for a, b in zip(offsets[:-1], offsets[1:]):
        heads, tails = pair_counts_reference(scores[a:b], levels[a:b])
        np.testing.assert_array_equal(coef[a:b], heads - tails)


def _pairs_per_query_reference(scores, levels, offsets):
    coef, swapped = np.empty(len(scores)), []
    for a, b in zip(offsets[:-1], offsets[1:]):
        heads, tails = pair_counts_reference(scores[a:b], levels[a:b])
        coef[a:b] = heads - tails
        swapped.append(float(heads.sum()))
    return coef, np.array(swapped)


_SCORE_VALUES = st.sampled_from([0.0, 0.5, 1.0, 1.5, -1.0, 2.0 - 1e-16, 1e-300, -1e-300, 1e300,
                                 -1e300, 1e16, 1e16 + 2.0, np.inf, -np.inf, 0.1 + 0.2, 0.3])


@settings(max_examples=120, deadline=None)
@given(st.lists(st.lists(st.tuples(st.integers(0, 3), _SCORE_VALUES | st.floats(-3, 3)),
                         min_size=1, max_size=40), min_size=1, max_size=12))
def test_fused_pairs_kernel_matches_double_loop_on_many_queries(queries):
    """pairs_queries sorts each query itself: ties, one level pair, huge/tiny and
    infinite scores, queries of one row or one level (no pairs), any thread count."""
    offsets = np.cumsum([0] + [len(q) for q in queries]).astype(np.int64)
    scores = np.array([s for q in queries for _, s in q], dtype=np.float64)
    levels = np.concatenate([np.unique([l for l, _ in q], return_inverse=True)[1].ravel()
                             for q in queries]).astype(np.int64)
    n_levels = np.array([len({l for l, _ in q}) for q in queries], np.int64)
    want = _pairs_per_query_reference(scores, levels, offsets)
    for n_threads in (1, 3):
        for min_rows in (0, _graded_fast.PARALLEL_MIN_ROWS):
            coef, swapped = np.full(len(scores), np.nan), np.full(len(queries), np.nan)
            old, _graded_fast.PARALLEL_MIN_ROWS = _graded_fast.PARALLEL_MIN_ROWS, min_rows
            try:
                _graded_fast.pairs_queries(scores, levels, offsets, n_levels, coef, swapped,
                                           n_threads)
            finally:
                _graded_fast.PARALLEL_MIN_ROWS = old
            np.testing.assert_array_equal(coef, want[0])
            np.testing.assert_array_equal(swapped, want[1])


def test_fused_pairs_kernel_large_queries_and_sorted_inputs():
    """Queries past the insertion-sort size, in every input order (sorted, reversed,
    all tied, few distinct values: the quicksort's and heapsort's paths), and the
    public pairs_inference on 1 and 2 threads."""
    rng = np.random.default_rng(5)
    parts = [rng.normal(size=300), np.sort(rng.normal(size=257)), -np.sort(rng.normal(size=200)),
             np.zeros(150), rng.integers(0, 3, 400).astype(float), np.arange(1000.0) % 7]
    offsets = np.cumsum([0] + [len(p) for p in parts]).astype(np.int64)
    scores = np.concatenate(parts)
    levels = np.concatenate([rng.integers(0, 4, len(p)) for p in parts]).astype(np.int64)
    n_levels = np.array([len(np.unique(levels[a:b])) for a, b in zip(offsets[:-1], offsets[1:])],
                        np.int64)
    levels = np.concatenate([np.unique(levels[a:b], return_inverse=True)[1].ravel()
                             for a, b in zip(offsets[:-1], offsets[1:])]).astype(np.int64)
    want = _pairs_per_query_reference(scores, levels, offsets)
    for k in (1, 2):
        with threads(k):
            coef, swapped = pairs_inference(scores, levels, offsets, n_levels)
        np.testing.assert_array_equal(coef, want[0])
        np.testing.assert_array_equal(swapped, want[1])


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 30), st.sampled_from([0.05, 0.4, 3.0]))
def test_fused_pairs_kernel_start_order_and_every_pair_swapped(seed, n_queries, spread):
    """The counts do not depend on the order a query's sort starts from (any
    permutation of its rows), which is returned sorted by decreasing score; queries
    whose scores span less than 1 (every pair swapped: no sort) and others mixed."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 25, n_queries)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    scores = rng.normal(size=offsets[-1]) * rng.choice([spread, 0.1], n_queries).repeat(sizes)
    levels, n_levels = [], []
    for m in sizes:
        raw = rng.integers(0, 4, m)
        levels.append(np.unique(raw, return_inverse=True)[1].ravel())
        n_levels.append(len(np.unique(raw)))
    levels, n_levels = np.concatenate(levels).astype(np.int64), np.array(n_levels, np.int64)
    want = _pairs_per_query_reference(scores, levels, offsets)
    order = np.concatenate([a + rng.permutation(b - a) for a, b in zip(offsets[:-1], offsets[1:])])
    order = order.astype(np.int64)
    for _ in range(2):  # (the second call starts from the first's sorted rows)
        coef, swapped = np.empty(len(scores)), np.empty(n_queries)
        _graded_fast.pairs_queries(scores, levels, offsets, n_levels, coef, swapped, 1, order)
        np.testing.assert_array_equal(coef, want[0])
        np.testing.assert_array_equal(swapped, want[1])
    for a, b in zip(offsets[:-1], offsets[1:]):
        assert sorted(order[a:b]) == list(range(a, b))
        if scores[a:b].min() <= scores[a:b].max() - 1.0:  # (sorted there)
            assert np.all(np.diff(scores[order[a:b]]) <= 0)


def test_pairwise_problem_repeated_calls_match_pairs_inference():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(200, 3))
    y, qid = rng.integers(0, 3, 200), np.repeat(np.arange(10), 20)
    p = GradedRankingProblem(X, y, qid=qid, loss=PairwiseLoss("count"))
    for scale in (0.01, 1.0, 5.0, 1.0, 0.01):
        s = p.scores(rng.normal(size=3) * scale)
        loss, d = p.violation_at_scores(s)
        coef, swapped = pairs_inference(s, p.queries.levels, p.offsets, p.queries.n_levels)
        np.testing.assert_array_equal(d, coef / p.n_queries)
        assert loss == swapped.mean()


def test_pairwise_problem_matches_hinge_sum():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 4))
    y = rng.integers(0, 3, 30)
    qid = np.repeat([1, 2, 3], 10)
    w = rng.normal(size=4)
    for pair_loss in ("count", "fraction"):
        p = GradedRankingProblem(X, y, qid=qid, loss=PairwiseLoss(pair_loss))
        loss, d = p.violation_at_scores(p.scores(w))
        s = X @ w
        hinge = []
        for q in (1, 2, 3):
            m = qid == q
            terms = [max(0.0, 1 - (s[m][i] - s[m][j])) for i in range(10) for j in range(10)
                     if y[m][i] > y[m][j]]
            hinge.append(sum(terms) / (len(terms) if pair_loss == "fraction" else 1))
        assert loss - p.scores(w)[np.argsort(p.rows)] @ d[np.argsort(p.rows)] == \
            pytest.approx(np.mean(hinge))


def test_problem_rows_equal_the_problem_of_the_copy():
    """GradedRankingProblem(X, rows=r) reads X[r] through r: the same problem, both losses."""
    rng = np.random.default_rng(5)
    X = sp.random(60, 5, density=0.5, format="csr", random_state=1)
    rows = rng.permutation(60)[:40]
    y, qid = rng.integers(0, 3, 40), np.repeat([4, 1, 2, 9], 10)
    w = rng.normal(size=5)
    for loss in (PairwiseLoss("fraction"), GradedNDCG("exp", 3)):
        copy = GradedRankingProblem(X[rows], y, qid=qid, loss=loss)
        mapped = GradedRankingProblem(X, y, qid=qid, loss=loss, rows=rows)
        np.testing.assert_array_equal(mapped.rows, rows[copy.rows])
        loss_c, d_c = copy.violation_at_scores(copy.scores(w))
        loss_m, d_m = mapped.violation_at_scores(mapped.scores(w))
        assert loss_m == loss_c
        np.testing.assert_array_equal(d_m, d_c)
        np.testing.assert_allclose(mapped.joint_feature(d_m), copy.joint_feature(d_c),
                                   rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match="^rows: repeated row indices"):
        GradedRankingProblem(X, y, qid=qid, loss=PairwiseLoss("count"), rows=[0] * 40)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3)), min_size=2, max_size=40),
       st.integers(0, 2**32 - 1))
def test_problem_query_arrays_match_per_query_reference(rows, seed):
    """The rows, offsets, dense levels and pair counts GradedRankingProblem builds in one
    sort equal a np.unique per query (queries of one level dropped, ids in any order)."""
    qid = np.array([r[0] for r in rows]) * 7 - 3
    y = np.array([r[1] for r in rows])
    X = np.random.default_rng(seed).normal(size=(len(y), 2))
    by_query = {}
    for i, q in enumerate(qid):  # (queries in order of first appearance)
        by_query.setdefault(q, []).append(i)
    kept = [np.array(v) for v in by_query.values() if len(np.unique(y[v])) > 1]
    if not kept:
        with pytest.raises(ValueError, match="no query has two relevance levels"):
            GradedRankingProblem(X, y, qid=qid, loss=PairwiseLoss("count"))
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = GradedRankingProblem(X, y, qid=qid, loss=PairwiseLoss("fraction"))
    np.testing.assert_array_equal(p.rows, np.concatenate(kept))
    np.testing.assert_array_equal(p.offsets, np.cumsum([0] + [len(v) for v in kept]))
    dense = np.concatenate([np.unique(y[v], return_inverse=True)[1].ravel() for v in kept])
    np.testing.assert_array_equal(p.queries.levels, dense)
    assert p.queries.n_levels.tolist() == [len(np.unique(y[v])) for v in kept]
    assert p.queries.n_pairs.tolist() == [sum(a > b for a in y[v] for b in y[v]) for v in kept]
    assert p.n_skipped == len(by_query) - len(kept)


def test_svm_rank_parameters():
    out = svm_rank_parameters(0.5, 0.001, 1, [10, 0, 20, 30])
    assert out == {"C": pytest.approx(0.375), "epsilon": pytest.approx(0.001 * 60 / 3),
                   "pair_loss": "count"}
    out = svm_rank_parameters(2.0, 0.01, 2, [1, 4])
    assert out == {"C": 2.0, "epsilon": pytest.approx(0.01), "pair_loss": "fraction"}
    with pytest.raises(ValueError, match="loss_function"):
        svm_rank_parameters(1, 0.1, 3, [1])


# ---------------------------------------------------------------- graded NDCG@k
def _check_ndcg_case(scores, labels, k, gains):
    ranking, loss, coef, coef_true = ndcg_inference(scores, labels, k, gains)
    assert sorted(ranking.tolist()) == list(range(len(scores)))
    assert loss == pytest.approx(ndcg_loss_reference(ranking, labels, k, gains), abs=1e-12)
    assert coef @ scores == pytest.approx(pair_feature_reference(ranking, scores, labels),
                                          abs=1e-9)
    best = ndcg_lai_brute(scores, labels, k, gains)
    assert loss + coef @ scores == pytest.approx(best, abs=1e-9)
    identity = np.lexsort((np.arange(len(labels)), -np.asarray(labels)))
    assert coef_true @ scores == pytest.approx(pair_feature_reference(identity, scores, labels))


def test_ndcg_inference_every_small_case():
    """Levels 2 to 5, every label vector of n ≤ 5 samples up to relabelling, scores with
    ties, every k from 1 to n and None, both gains."""
    rng = np.random.default_rng(0)
    cases = 0
    for n in range(2, 6):
        for labels in itertools.product(range(5), repeat=n):
            labels = np.array(labels)
            L = len(np.unique(labels))
            # one representative per pattern: levels used in order of first appearance
            first = list(dict.fromkeys(labels.tolist()))
            if L < 2 or first != sorted(first) or max(first) != L - 1 and n > 4:
                continue
            scores = rng.choice([0.0, 0.3, 1.0, -0.7], n) * rng.choice([1.0, 3.0])
            for k in list(range(1, n + 1)) + [None]:
                _check_ndcg_case(scores, labels * (1 + (n % 2)), k, ("exp", "linear")[cases % 2])
                cases += 1
    assert cases > 500


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 7), st.integers(2, 5), st.integers(0, 2**32 - 1), st.booleans())
def test_ndcg_inference_random(n, L, seed, ties):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, L, n)
    if len(np.unique(labels)) < 2:
        labels[:2] = [0, L - 1]
    scores = rng.integers(-2, 3, n).astype(float) if ties else rng.normal(size=n) * 2
    k = int(rng.integers(1, n + 1)) if rng.random() < 0.7 else None
    _check_ndcg_case(scores, labels, k, "exp" if seed % 2 else "linear")


@pytest.mark.parametrize("k", [None, 1, 3])
def test_ndcg_queries_match_one_query_at_a_time(k):
    rng = np.random.default_rng(k or 0)
    sizes = [5, 2, 9, 7]
    labels = np.concatenate([rng.integers(0, 4, m) for m in sizes])
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    for a, b in zip(offsets[:-1], offsets[1:]):
        labels[a:a + 2] = [0, 3]  # (two levels or more in every query)
    scores = rng.integers(-2, 3, len(labels)).astype(float)
    d, losses, ranking = NDCGQueries(labels, offsets, k, "exp")(scores)
    for q, (a, b) in enumerate(zip(offsets[:-1], offsets[1:])):
        r, loss, coef, coef_true = ndcg_inference(scores[a:b], labels[a:b], k, "exp")
        assert losses[q] == pytest.approx(loss)
        np.testing.assert_allclose(d[a:b], coef_true - coef, atol=1e-12)
        np.testing.assert_array_equal(ranking[a:b], r + a)


def test_ndcg_two_levels_full_matches_binary_qs():
    from svmrank.inference import loss_augmented_inference
    rng = np.random.default_rng(5)
    for _ in range(20):
        scores = rng.normal(size=9)
        labels = rng.integers(0, 2, 9)
        if len(np.unique(labels)) < 2:
            continue
        _, loss, coef, _ = ndcg_inference(scores, labels, None, "exp")
        res = loss_augmented_inference(scores, labels, loss="ndcg")
        assert loss + coef @ scores == pytest.approx(res.objective, abs=1e-10)


def test_ndcg_large_query_with_k_is_fast_and_refused_without():
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 5, 20000)
    scores = rng.normal(size=20000)
    ranking, loss, coef, _ = ndcg_inference(scores, labels, 10, "exp")
    assert 0 <= loss <= 1 and len(ranking) == 20000
    with pytest.raises(ValueError, match=r"above the limit.*smaller k.*loss='pairs'"):
        ndcg_inference(scores, labels, None, "exp")
    assert MAX_DP_STATES >= 1e7


def test_dp_kernel_on_a_hand_case():
    # one sample of each of levels 0, 1, tied scores: the loss is largest with the
    # relevant one second
    choice, value = np.empty(4, np.int8), np.empty(4)
    prefix = np.zeros(2, np.int64)
    best = _graded_fast.ndcg_dp(np.array([0.0, 0.0]), np.array([0, 1], np.int64),
                                np.array([0.0, 1.0]), np.array([1.0, 1 / np.log2(3)]),
                                np.array([1, 1], np.int64), np.array([2, 2], np.int64),
                                2.0, 2, choice, value, prefix)
    assert best == pytest.approx(-1 / np.log2(3)) and prefix.tolist() == [1, 1]
    assert choice[3] == 1  # (the last placed is level 1)


# ---------------------------------------------------------------- labels and refusals
def test_graded_labels():
    assert graded_levels([-1, 1, 1]).tolist() == [0, 1, 1]
    assert graded_levels([0, 2, 3]).tolist() == [0, 2, 3]
    for bad in ([0, 1.5, 2], [-1, 0, 2]):
        with pytest.raises(ValueError, match="^y: graded relevance labels"):
            graded_levels(bad)


def _ltr_data(seed=0, n_q=8, per=12, levels=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_q * per, 5))
    w = np.array([1.0, -0.5, 0.3, 0.0, 0.2])
    y = np.clip(np.round((X @ w + rng.normal(scale=0.5, size=len(X))) + 1), 0, levels - 1)
    return X, y.astype(int), np.repeat(np.arange(n_q), per)


def test_estimator_refusals():
    X, y, qid = _ltr_data()
    with pytest.raises(ValueError, match="^k must be"):
        RankSVM(loss="ndcg", k=0).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="^pair_loss"):
        RankSVM(loss="pairs", pair_loss="sum").fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="^gains"):
        RankSVM(loss="ndcg", gains="log").fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="^y: graded"):
        RankSVM(loss="pairs").fit(X, y + 0.5, qid=qid)
    with pytest.raises(ValueError, match="^approx"):
        RankSVM(loss="pairs", approx=50).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="^lai"):
        RankSVM(loss="ndcg", k=3, lai="greedy").fit(X, y, qid=qid)


@pytest.mark.parametrize("params", [dict(loss="pairs"), dict(loss="pairs", pair_loss="count"),
                                    dict(loss="ndcg", k=5), dict(loss="ndcg", gains="linear"),
                                    dict(loss="ndcg")])
def test_estimator_fits_scores_and_round_trips(params):
    X, y, qid = _ltr_data()
    y[qid == 7] = 1  # one single-level query: skipped with a warning
    est = RankSVM(C=10.0, **params)
    with pytest.warns(UserWarning, match="1 of 8 queries have a single relevance level"):
        est.fit(X, y, qid=qid)
    assert clone(est).get_params() == est.get_params()
    assert isinstance(est.loss_, PairwiseLoss if params["loss"] == "pairs" else GradedNDCG)
    score = est.score(X, y, qid=qid)
    assert 0.5 < score <= 1.0
    if params["loss"] == "ndcg":
        per_q = [ndcg(y[qid == q], est.decision_function(X[qid == q]), k=params.get("k"),
                      gains=params.get("gains", "exp")) for q in range(7)]
        assert score == pytest.approx(np.mean(per_q))
    back = from_model(to_model(est, n_train=len(y)))
    assert back.loss_ == est.loss_
    for key in ("loss", "pair_loss", "gains", "k"):
        assert back.get_params()[key] == est.get_params()[key]
    np.testing.assert_allclose(back.decision_function(X), est.decision_function(X))
    assert back.score(X, y, qid=qid) == pytest.approx(score)


def test_binary_ndcg_keeps_the_qs_path():
    X, y, qid = _ltr_data(levels=2)
    est = RankSVM(loss="ndcg", C=5.0).fit(X, y, qid=qid)
    assert est.loss_.name == "ndcg" and not isinstance(est.loss_, GradedNDCG)
    assert "gains" not in to_model(est, n_train=len(y)).metadata


def test_pairs_count_objective_is_svm_rank_l1():
    """½‖w‖² + (C/n) Σ_pairs hinge at the fitted w, as the learner reports it."""
    X, y, qid = _ltr_data(seed=2, n_q=4, per=8)
    est = RankSVM(loss="pairs", pair_loss="count", C=0.3, epsilon=1e-4).fit(X, y, qid=qid)
    s = est.decision_function(X)
    hinge = sum(max(0.0, 1 - (s[i] - s[j])) for q in range(4)
                for i in np.flatnonzero(qid == q) for j in np.flatnonzero(qid == q)
                if y[i] > y[j])
    primal = 0.5 * est.coef_ @ est.coef_ + 0.3 / 4 * hinge
    assert est.objective_ == pytest.approx(primal, rel=1e-3, abs=1e-4)


def test_ndcg_gains_keyword():
    y, s = np.array([2, 1, 0, 3]), np.array([0.1, 0.4, 0.3, 0.2])
    g = np.array([2, 1, 0, 3], float)
    ideal = np.sort(g)[::-1] @ (1 / np.log2(np.arange(2, 6)))
    got = g[np.argsort(-s)] @ (1 / np.log2(np.arange(2, 6)))
    assert ndcg(y, s, gains="linear") == pytest.approx(got / ideal)
    with pytest.raises(ValueError, match="gains"):
        ndcg(y, s, gains="cubic")


def test_k_is_refused_for_the_losses_that_do_not_truncate():
    X = np.random.default_rng(0).normal(size=(20, 3))
    y = np.tile([0, 1, 2, 0, 1], 4)
    for loss in ("ap", "roc", "pairs"):
        with pytest.raises(ValueError, match=f"^k: only loss='ndcg' takes k .*'{loss}'"):
            RankSVM(loss=loss, k=3).fit(X, y, group=[5] * 4)
        # (review 22: gains and pair_loss were silently ignored)
        with pytest.raises(ValueError, match=f"^gains: only loss='ndcg' has gains.*'{loss}'"):
            RankSVM(loss=loss, gains="linear").fit(X, y, group=[5] * 4)
    for loss in ("ap", "roc", "ndcg"):
        with pytest.raises(ValueError, match=f"^pair_loss: only loss='pairs' .*'{loss}'"):
            RankSVM(loss=loss, pair_loss="count").fit(X, y, group=[5] * 4)


def test_ndcg_inference_checks_its_inputs():
    """Review 21: a NaN score crashed the kernel; -1/+1 labels gave a loss above 1."""
    for args, message in ((([np.nan, 1.0], [1, 0]), "^scores: contains NaN"),
                          (([0.0, 1.0], [1, 0, 1]), "^labels: expected length 2, got 3$"),
                          (([0.0, 1.0], [1, 1]), "^labels: need two relevance levels"),
                          (([0.0, 1.0, 2.0], [2.5, 0, 1]), "^labels: graded relevance labels must be"),
                          (([0.0, 1.0], [1, 0], 0), "^k must be a positive integer or None"),
                          (([0.0, 1.0], [1, 0], None, "cube"), "^gains must be 'exp' or")):
        with pytest.raises(ValueError, match=message):
            ndcg_inference(*args)
    _, loss, _, _ = ndcg_inference([0.0, 1.0, 0.5], [-1, 1, -1])  # (binary relevance)
    assert loss == 0.0
    assert ndcg_inference([1.0, 0.0, 0.5], [-1, 1, -1])[1] == ndcg_inference(
        [1.0, 0.0, 0.5], [0, 1, 0])[1] > 0


def test_too_large_queries_get_advice_that_helps_and_are_named():
    """Review 22: "use a smaller k" where even k = 1 is too large (one sample a level),
    no word on which query, nor that a missing qid made the data one query; RankSVMCV
    added "use fewer folds" for a query that no fold can train on."""
    from svmrank import RankSVM, RankSVMCV
    with pytest.raises(ValueError, match=r"limit of 1e\+07; use fewer relevance levels or "
                                         r"loss='pairs'$"):
        ndcg_inference(np.random.default_rng(0).normal(size=24), np.arange(24), k=1)
    rng = np.random.default_rng(0)
    sizes = [240, 20, 20, 20, 20, 20]
    X = rng.normal(size=(sum(sizes), 5))
    y = np.concatenate([np.repeat([0, 1, 2, 3], m // 4) for m in sizes])
    qid = np.repeat(np.arange(6), sizes) + 10
    named = r"\(qid 10\); use a smaller k, fewer relevance levels or loss='pairs'$"
    with pytest.raises(ValueError, match=named):
        RankSVM(loss="ndcg").fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="^loss: .*" + named):
        RankSVMCV(loss="ndcg", Cs=[1, 10], cv=3).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match=r"\(all rows are one query: pass qid if they hold "
                                         r"several\)"):
        RankSVM(loss="ndcg").fit(X, y)
