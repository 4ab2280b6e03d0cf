"""Loss-augmented inference: the Cython kernel against brute-force enumeration and
between methods."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from svmrank.inference import lai_queries, loss_augmented_inference, true_coef
from svmrank._validation import query_segments
from lai_reference import brute_force_interleavings, brute_force_permutations

LOSSES = ["ap", "ndcg", "roc"]
METHODS = ["qs", "greedy"]


def small_problem(draw_scores):
    return st.integers(min_value=2, max_value=9).flatmap(
        lambda n: st.tuples(
            st.lists(draw_scores, min_size=n, max_size=n),
            st.lists(st.booleans(), min_size=n, max_size=n)
            .filter(lambda lab: 0 < sum(lab) < len(lab))))


TIED = st.sampled_from([-1.0, 0.0, 0.5, 1.0])        # many ties
WIDE = st.floats(-1e6, 1e6, allow_nan=False)          # huge values
TINY = st.floats(-1e-9, 1e-9, allow_nan=False)        # tiny values


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("method", METHODS)
@settings(max_examples=300, deadline=None)
@given(problem=st.one_of(small_problem(TIED), small_problem(WIDE), small_problem(TINY),
                         small_problem(st.floats(-3, 3, allow_nan=False))))
def test_matches_brute_force_over_interleavings(problem, loss, method):
    scores, labels = map(np.asarray, problem)
    res = loss_augmented_inference(scores, labels.astype(float), loss=loss, method=method)
    best, best_loss, _ = brute_force_interleavings(scores, labels, loss)
    scale = 1.0 + np.abs(scores).max()
    assert res.objective == pytest.approx(best, rel=1e-9, abs=1e-9 * scale)
    # the returned coef and loss describe a ranking that attains the objective
    assert res.loss + res.coef @ scores == pytest.approx(res.objective, rel=1e-9, abs=1e-9 * scale)
    assert 0.0 <= res.loss <= 1.0 + 1e-12


@pytest.mark.parametrize("loss", LOSSES)
@settings(max_examples=60, deadline=None)
@given(problem=small_problem(st.sampled_from([0.0, 1.0, 2.0])).filter(lambda p: len(p[0]) <= 6))
def test_sorted_interleavings_suffice(problem, loss):
    """Observation 1: the best over all permutations is attained by an interleaving."""
    scores, labels = map(np.asarray, problem)
    res = loss_augmented_inference(scores, labels.astype(float), loss=loss)
    assert res.objective == pytest.approx(brute_force_permutations(scores, labels, loss), abs=1e-12)


@pytest.mark.parametrize("loss", LOSSES)
def test_loss_matches_coef_ranking_on_random_inputs(loss):
    """Loss and coef agree with the ranking rebuilt from the interleaving ranks."""
    rng = np.random.default_rng(1)
    for _ in range(200):
        n = rng.integers(2, 9)
        labels = rng.random(n) < 0.4
        if labels.all() or not labels.any():
            continue
        scores = rng.normal(size=n)
        res = loss_augmented_inference(scores, labels, loss=loss)
        best, best_loss, best_coef = brute_force_interleavings(scores, labels, loss)
        assert res.loss == pytest.approx(best_loss, abs=1e-12)
        np.testing.assert_allclose(res.coef, best_coef, atol=1e-12)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("n,p", [(2000, 1), (2000, 30), (3000, 1500), (500, 499)])
def test_qs_agrees_with_greedy_on_large_inputs(loss, n, p):
    rng = np.random.default_rng(n + p)
    labels = np.zeros(n)
    labels[rng.choice(n, p, replace=False)] = 1
    tied = (np.round(rng.normal(size=n), 1), np.zeros(n))
    for k, scores in enumerate((rng.normal(size=n), rng.normal(size=n) * 1e8,
                                labels + 0.3 * rng.normal(size=n)) + tied):
        a = loss_augmented_inference(scores, labels, loss, "qs")
        b = loss_augmented_inference(scores, labels, loss, "greedy")
        assert a.objective == pytest.approx(b.objective, rel=1e-12, abs=1e-12)
        if k < 3:  # with exactly tied objectives the maximiser may differ by rounding
            assert a.loss == pytest.approx(b.loss, rel=1e-9, abs=1e-12)
            np.testing.assert_array_equal(a.ranks, b.ranks)


def test_extremes_one_positive_and_perfect_separation():
    scores = np.array([5.0, 1.0, 0.0, -1.0])
    res = loss_augmented_inference(scores, [1, 0, 0, 0])
    assert res.objective == pytest.approx(brute_force_interleavings(scores, [1, 0, 0, 0], "ap")[0])
    # huge margins: the ground truth wins, loss 0, coef equals R*'s
    scores = np.array([1e9, 2e9, -1e9, -3e9])
    res = loss_augmented_inference(scores, [1, 1, 0, 0])
    assert res.loss == 0.0
    np.testing.assert_allclose(res.coef, true_coef([1, 1, 0, 0]))
    np.testing.assert_array_equal(res.ranks, [0, 0, 3, 3])


def test_queries_are_independent():
    rng = np.random.default_rng(3)
    scores, labels = rng.normal(size=30), rng.random(30) < 0.3
    qid = np.repeat([7, 3, 5], 10)
    labels[[0, 10, 20]] = True
    labels[[1, 11, 21]] = False
    order, offsets = query_segments(qid, 30)
    coef, losses, objectives = lai_queries(scores, labels, order, offsets)
    for q, rows in enumerate([slice(0, 10), slice(10, 20), slice(20, 30)]):
        res = loss_augmented_inference(scores[rows], labels[rows])
        np.testing.assert_allclose(coef[rows], res.coef)
        assert losses[q] == pytest.approx(res.loss)
        assert objectives[q] == pytest.approx(res.objective)


def test_query_without_negatives_is_nan():
    order, offsets = query_segments(np.array([1, 1, 2, 2]), 4)
    coef, losses, _ = lai_queries(np.ones(4), np.array([True, True, True, False]), order, offsets)
    assert np.isnan(losses[0]) and not np.isnan(losses[1])
    assert coef[0] == coef[1] == 0.0


@pytest.mark.parametrize("scores,labels,match", [
    ([1.0, np.nan], [1, 0], "scores"),
    ([1.0, np.inf], [1, 0], "scores"),
    ([1.0, 2.0], [1, 1], "labels"),
    ([1.0, 2.0], [0, -1], "labels"),
    ([1.0, 2.0], [1, 0, 1], "labels"),
    ([[1.0, 2.0]], [1, 0], "scores"),
])
def test_bad_input(scores, labels, match):
    with pytest.raises(ValueError, match=match):
        loss_augmented_inference(scores, labels)


def test_bad_options():
    with pytest.raises(ValueError, match="loss"):
        loss_augmented_inference([1.0, 0.0], [1, 0], loss="map")
    with pytest.raises(ValueError, match="method"):
        loss_augmented_inference([1.0, 0.0], [1, 0], method="fast")
