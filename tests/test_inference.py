"""Loss-augmented inference: every method of the Cython kernel against brute-force
enumeration, exact rational arithmetic, and each other."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from svmrank.inference import METHODS, lai_queries, loss_augmented_inference, true_coef
from svmrank._validation import query_segments
from lai_reference import (brute_force_interleavings, brute_force_permutations, coef_of,
                           exact_opt_ranks, order_from_ranks, query_shifts, rank_loss)

LOSSES = ["ap", "ndcg", "roc"]
ALL_METHODS = list(METHODS)


def methods_for(loss):
    """Every method that accepts the loss (search needs AP or ROC area)."""
    return [m for m in ALL_METHODS if loss != "ndcg" or "search" not in m]


def small_problem(draw_scores, max_n=9):
    return st.integers(min_value=2, max_value=max_n).flatmap(
        lambda n: st.tuples(
            st.lists(draw_scores, min_size=n, max_size=n),
            st.lists(st.booleans(), min_size=n, max_size=n)
            .filter(lambda lab: 0 < sum(lab) < len(lab))))


TIED = st.sampled_from([-1.0, 0.0, 0.5, 1.0])        # many ties
QUARTERS = st.integers(-8, 8).map(lambda k: k / 4)    # exact objective ties
WIDE = st.floats(-1e6, 1e6, allow_nan=False)          # huge values
TINY = st.floats(-1e-9, 1e-9, allow_nan=False)        # tiny values


@pytest.mark.parametrize("loss", LOSSES)
@settings(max_examples=120, deadline=None)
@given(problem=st.one_of(small_problem(TIED), small_problem(WIDE), small_problem(TINY),
                         small_problem(QUARTERS), small_problem(st.floats(-3, 3, allow_nan=False))))
def test_every_method_matches_brute_force_over_interleavings(problem, loss):
    scores, labels = map(np.asarray, problem)
    best, _, _ = brute_force_interleavings(scores, labels, loss)
    scale = 1.0 + np.abs(scores).max()
    first = None
    for method in methods_for(loss):
        res = loss_augmented_inference(scores, labels.astype(float), loss=loss, method=method)
        assert res.objective == pytest.approx(best, rel=1e-9, abs=1e-9 * scale)
        # the returned ranks, loss and coef describe one ranking, which attains the
        # objective (loss and coef recomputed from the ranks by the reference)
        order = order_from_ranks(scores, labels, res.ranks)
        assert res.loss == pytest.approx(rank_loss(labels[order] > 0, loss), abs=1e-12)
        np.testing.assert_allclose(res.coef, coef_of(order, labels > 0), rtol=0, atol=1e-12)
        assert res.loss + res.coef @ scores == pytest.approx(res.objective, rel=1e-9,
                                                              abs=1e-9 * scale)
        assert 0.0 <= res.loss <= 1.0 + 1e-12
        if first is None:
            first = res
        else:  # the same maximiser, ties included
            assert res.loss == first.loss
            np.testing.assert_array_equal(res.ranks, first.ranks)


@pytest.mark.parametrize("loss", ["ap", "roc"])
@settings(max_examples=150, deadline=None)
@given(problem=st.one_of(small_problem(QUARTERS, 12), small_problem(TIED, 12)))
def test_ties_go_upward_as_in_exact_arithmetic(problem, loss):
    """With exactly tied objectives every method returns the exact-arithmetic largest
    maximiser of each f_j (2018 supplement §2), not one chosen by rounding."""
    scores, labels = map(np.asarray, problem)
    expected = exact_opt_ranks(scores, labels, loss)
    for method in methods_for(loss):
        res = loss_augmented_inference(scores, labels, loss=loss, method=method)
        np.testing.assert_array_equal(res.ranks, expected, err_msg=method)


@pytest.mark.parametrize("loss", ["ap", "roc"])
@settings(max_examples=150, deadline=None)
@given(problem=small_problem(QUARTERS, 10),
       outlier=st.sampled_from([1e10, 1e14, 1e200, -1e14, -1e200]), positive=st.booleans())
def test_a_huge_score_elsewhere_does_not_hide_violations(problem, loss, outlier, positive):
    """A sample scored far from all the others once widened the tie tolerance of the
    whole query, so small violations among the others counted as ties (wrong loss and
    gradient). Every method must still return the exact-arithmetic maximiser."""
    scores, labels = map(np.asarray, problem)
    scores, labels = np.append(scores, outlier), np.append(labels, float(positive))
    expected = exact_opt_ranks(scores, labels, loss)
    for method in methods_for(loss):
        res = loss_augmented_inference(scores, labels, loss=loss, method=method)
        np.testing.assert_array_equal(res.ranks, expected, err_msg=method)


@pytest.mark.parametrize("loss", ["ap", "roc"])
@settings(max_examples=100, deadline=None)
@given(problem=small_problem(QUARTERS, 10), offset=st.sampled_from([2.0**30, 2.0**46, 2.0**50, -2.0**50]))
def test_a_common_offset_changes_nothing(problem, loss, offset):
    """Inference depends on score differences only. The tie tolerance grew with |score|,
    so under a large common offset whole loss steps counted as ties: [c, c] with labels
    [1, 0] gave loss 0 from c = 1e14 on. (The offsets keep quarters exact.)"""
    scores, labels = map(np.asarray, problem)
    expected = exact_opt_ranks(scores, labels, loss)
    for method in methods_for(loss):
        res = loss_augmented_inference(scores + offset, labels, loss=loss, method=method)
        np.testing.assert_array_equal(res.ranks, expected, err_msg=method)


def test_ties_at_a_large_offset_are_violations():
    for c in (1e14, 1e300, -1e200):
        res = loss_augmented_inference([c, c], [1, 0])
        assert res.loss == 0.5 and res.ranks.tolist() == [0, 1]
    # several queries (the kernel's per-query shifts), rows interleaved
    order, offsets = query_segments(np.array([2, 1, 2, 1, 3, 3]), 6)
    coef, losses, _ = lai_queries(np.array([1e14, 5.0, 1e14, 5.0, 0.0, -1e200]),
                                  np.array([True, True, False, False, True, False]),
                                  order.astype(np.intp), offsets.astype(np.intp))
    np.testing.assert_array_equal(losses, [0.5, 0.5, 0.0])
    res = loss_augmented_inference([1e14 - 0.25, 1e14 + 0.25], [1, 0])
    # Δ = 0.5 plus F = s_neg - s_pos = 0.5 (the structured hinge adds another 0.5)
    assert res.ranks.tolist() == [0, 1] and res.objective == pytest.approx(1.0)
    # a tie at 1e308 beside -1e308 gave objective inf and loss 0 (the shift overflowed
    # and the tie was lost): scores whose differences overflow are refused, per query
    for scores, labels in (([1e308, 1e308, -1e308], [1, 0, 0]), ([1e308, -1e308], [1, 0])):
        with pytest.raises(ValueError, match=r"^scores: a query's scores span more than the "
                                             r"largest double"):
            loss_augmented_inference(scores, labels)
    order, offsets = query_segments(np.array([1, 2, 1, 2]), 4)  # 1e308 and -1e308 apart
    _, losses, objectives = lai_queries(np.array([1e308, -1e308, 1e308, -1e308]),
                                        np.array([True, True, False, False]),
                                        order.astype(np.intp), offsets.astype(np.intp))
    np.testing.assert_array_equal(losses, [0.5, 0.5])
    assert np.isfinite(objectives).all()


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_kernel_shifts_match_reference(data):
    """The per-query shifts the kernel applies against the reference, on queries of
    tied, offset, huge, tiny, empty, one-class and mixed-sign scores whose rows
    interleave; the same answer for the rows in place (order None), and the same
    inference as on scores shifted beforehand."""
    from svmrank.inference import _run, shifted_scores
    from svmrank.losses import get_loss
    sizes = data.draw(st.lists(st.integers(0, 6), min_size=1, max_size=6))
    value = st.one_of(st.sampled_from([0.0, -0.0, 1.0, 1e14, -1e14, 1e300, -1e300, 5e-324]),
                      st.floats(-1e6, 1e6))
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    n = int(offsets[-1])
    base = np.array(data.draw(st.lists(value, min_size=len(sizes), max_size=len(sizes))))
    in_place = np.repeat(base, sizes) + np.array(data.draw(
        st.lists(st.floats(-2.0, 2.0), min_size=n, max_size=n)))
    rel_in_place = np.array(data.draw(st.lists(st.booleans(), min_size=n, max_size=n)),
                            dtype=bool)
    # rows of each query increasing (their tie order kept in place), queries interleaved
    order = np.array(data.draw(st.permutations(range(n))), dtype=np.intp)
    for a, b in zip(offsets[:-1], offsets[1:]):
        order[a:b] = np.sort(order[a:b])
    scores, relevant = np.empty(n), np.empty(n, dtype=bool)
    scores[order], relevant[order] = in_place, rel_in_place
    method = data.draw(st.sampled_from(ALL_METHODS))
    run = lambda s, r, o: _run(s, r, o, offsets, get_loss("ap"), METHODS[method])  # noqa: E731
    coef, ranks, losses, objectives, shifts = run(scores, relevant, order)
    np.testing.assert_array_equal(shifts, query_shifts(scores, relevant, order, offsets))
    got = run(in_place, rel_in_place, None)
    for x, y in zip((coef[order], ranks[order], losses, objectives, shifts), got):
        np.testing.assert_array_equal(x, y)
    pre = run(shifted_scores(scores, order, offsets, shifts), relevant, order)
    assert not pre[4].any()
    for x, y in zip((coef, ranks, losses, objectives), pre):
        np.testing.assert_array_equal(x, y)
    for q in range(len(sizes)):  # (empty or one-class: NaN)
        rel = rel_in_place[offsets[q]:offsets[q + 1]]
        assert np.isnan(losses[q]) == (rel.all() or not rel.any())


@pytest.mark.parametrize("loss", ["ap", "roc"])
@settings(max_examples=100, deadline=None)
@given(problem=small_problem(QUARTERS, 10), offset=st.sampled_from([2.0**30, 2.0**46, 2.0**50, -2.0**50]),
       far=st.sampled_from([None, 0.0, -2.0**52, 2.0**53]), positive=st.booleans())
def test_an_offset_with_a_far_sample_changes_nothing(problem, loss, offset, far, positive):
    """As above, with one more sample far from the offset group ([1e14, 1e14, 0] with
    labels [1, 0, 0] lost its loss step while its range was wider than its offset)."""
    scores, labels = map(np.asarray, problem)
    scores = scores + offset
    if far is not None:
        scores, labels = np.append(scores, far), np.append(labels, positive)
    expected = exact_opt_ranks(scores, labels, loss)
    for method in methods_for(loss):
        res = loss_augmented_inference(scores, labels, loss=loss, method=method)
        np.testing.assert_array_equal(res.ranks, expected, err_msg=method)


def test_huge_scores_near_the_float_limit():
    """The tie tolerance, proportional to the largest |score|, must not overflow to inf
    (every rank would then tie with the best and go to the bottom)."""
    for scores in ([5e307, 6e307], [1e308, 1.5e308]):
        for method in methods_for("ap"):
            res = loss_augmented_inference(scores, [1, 0], method=method)
            assert res.loss == 0.5 and res.ranks.tolist() == [0, 1], (scores, method)


@pytest.mark.parametrize("loss", LOSSES)
@settings(max_examples=40, deadline=None)
@given(problem=small_problem(st.sampled_from([0.0, 1.0, 2.0]), max_n=6))
def test_sorted_interleavings_suffice(problem, loss):
    """Observation 1: the best over all permutations is attained by an interleaving."""
    scores, labels = map(np.asarray, problem)
    res = loss_augmented_inference(scores, labels.astype(float), loss=loss)
    assert res.objective == pytest.approx(brute_force_permutations(scores, labels, loss), abs=1e-12)


@pytest.mark.parametrize("loss", LOSSES)
def test_loss_matches_coef_ranking_on_random_inputs(loss):
    """Loss and coef agree with the ranking rebuilt from the interleaving ranks."""
    rng = np.random.default_rng(1)
    for _ in range(100):
        n = rng.integers(2, 9)
        labels = rng.random(n) < 0.4
        if labels.all() or not labels.any():
            continue
        scores = rng.normal(size=n)
        best, best_loss, best_coef = brute_force_interleavings(scores, labels, loss)
        for method in methods_for(loss):
            res = loss_augmented_inference(scores, labels, loss=loss, method=method)
            assert res.loss == pytest.approx(best_loss, abs=1e-12)
            np.testing.assert_allclose(res.coef, best_coef, atol=1e-12)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("n,p", [(2000, 1), (2000, 30), (3000, 1500), (500, 499), (20000, 40)])
def test_methods_agree_on_large_inputs(loss, n, p):
    """Same objective to 1e-12 relative, same loss, same ranks: random, huge, separated,
    rounded (exact ties) and constant scores."""
    rng = np.random.default_rng(n + p)
    labels = np.zeros(n)
    labels[rng.choice(n, p, replace=False)] = 1
    for scores in (rng.normal(size=n), rng.normal(size=n) * 1e8, labels + 0.3 * rng.normal(size=n),
                   np.round(rng.normal(size=n), 1), np.round(2 * labels + rng.normal(size=n)) / 4,
                   np.zeros(n)):
        ref = loss_augmented_inference(scores, labels, loss, "greedy")
        for method in methods_for(loss):
            res = loss_augmented_inference(scores, labels, loss, method)
            assert res.objective == pytest.approx(ref.objective, rel=1e-12, abs=1e-12)
            assert res.loss == pytest.approx(ref.loss, rel=1e-12, abs=1e-15)
            np.testing.assert_array_equal(res.ranks, ref.ranks)


def test_ranks_are_monotone_in_score():
    rng = np.random.default_rng(5)
    scores, labels = np.round(rng.normal(size=3000), 1), rng.random(3000) < 0.1
    for loss in LOSSES:
        res = loss_augmented_inference(scores, labels, loss)
        neg = np.flatnonzero(~labels)
        neg = neg[np.lexsort((neg, -scores[neg]))]
        assert np.all(np.diff(res.ranks[neg]) >= 0)


def test_extremes_one_positive_and_perfect_separation():
    scores = np.array([5.0, 1.0, 0.0, -1.0])
    res = loss_augmented_inference(scores, [1, 0, 0, 0])
    assert res.objective == pytest.approx(brute_force_interleavings(scores, [1, 0, 0, 0], "ap")[0])
    # huge margins: the ground truth wins, loss 0, coef equals R*'s
    scores = np.array([1e9, 2e9, -1e9, -3e9])
    for method in ALL_METHODS:
        res = loss_augmented_inference(scores, [1, 1, 0, 0], method=method)
        assert res.loss == 0.0
        np.testing.assert_allclose(res.coef, true_coef([1, 1, 0, 0]))
        np.testing.assert_array_equal(res.ranks, [0, 0, 3, 3])


@pytest.mark.parametrize("method", ALL_METHODS)
def test_queries_are_independent(method):
    rng = np.random.default_rng(3)
    scores, labels = rng.normal(size=30), rng.random(30) < 0.3
    qid = np.repeat([7, 3, 5], 10)
    labels[[0, 10, 20]] = True
    labels[[1, 11, 21]] = False
    order, offsets = query_segments(qid, 30)
    coef, losses, objectives = lai_queries(scores, labels, order, offsets, "ap", method)
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


@pytest.mark.parametrize("scores, relevant, order, offsets, match", [
    # (each of these crashed the interpreter, read past an array or answered wrongly)
    ([1.0, 0.0, 2.0], [True, False, True], None, [0, 3_000_000], r"^offsets: must be non-decreasing within \[0, 3\]$"),
    ([1.0, 0.0, 2.0], [True, False, True], [0, 1, 7], [0, 3], r"^order: row numbers must lie in \[0, 3\)$"),
    ([1.0, 0.0, 2.0], [True, False, True], [0, 1, 1], [0, 3], "^order: a row appears twice$"),
    ([1.0, 0.0, 2.0], [True, False], None, [0, 3], "^relevant: expected length 3, got 2$"),
    ([1.0, 0.0, 2.0], [5, 0, 1], None, [0, 3], "^relevant: must be binary"),
    ([1.0, np.nan, 2.0], [True, False, True], None, [0, 3], "^scores: contains NaN"),
    ([1.0, 0.0, 2.0], [True, False, True], None, [], "^offsets: expected a non-empty array of integers$"),
    ([1.0, 0.0, 2.0], [True, False, True], None, [0.0, 3.0], "^offsets: expected a non-empty array"),
    ([1.0, 0.0, 2.0], [True, False, True], None, [0, 3, 2], "^offsets: must be non-decreasing"),
    ([1.0, 0.0, 2.0], [True, False, True], None, np.array([0, 5, 3], np.uint64), "^offsets: must be"),
    ([1.0, 0.0, 2.0], [True, False, True], [0.0, 1.0, 2.0], [0, 3], "^order: expected integer"),
])
def test_lai_queries_checks_its_inputs(scores, relevant, order, offsets, match):
    with pytest.raises(ValueError, match=match):
        lai_queries(scores, relevant, order, offsets)


def test_lai_queries_gives_zero_to_rows_of_no_query():
    """Rows outside every query kept whatever memory coef was allocated over."""
    scores = np.random.default_rng(0).normal(size=100000)
    for order, offsets in ((None, [0, 10]), (None, [50, 60]), (np.arange(20)[::-1], [0, 20])):
        coef = lai_queries(scores, scores > 1, order, offsets)[0]
        rows = np.arange(offsets[0], offsets[1]) if order is None else order
        outside = np.setdiff1d(np.arange(scores.size), rows)
        assert not coef[outside].any()
        np.testing.assert_array_equal(coef[rows], lai_queries(
            scores[rows], scores[rows] > 1, None, [0, len(rows)])[0])


def test_lai_queries_takes_array_likes_and_binary_labels():
    coef, losses, _ = lai_queries([1.0, 0.0, 2.0, 0.5], [1, -1, 1, -1], [3, 2, 1, 0], [0, 2, 4])
    ref = lai_queries(np.array([1.0, 0.0, 2.0, 0.5]), np.array([True, False, True, False]),
                      np.array([3, 2, 1, 0]), np.array([0, 2, 4]))
    np.testing.assert_array_equal(coef, ref[0])
    np.testing.assert_array_equal(losses, ref[1])


@pytest.mark.parametrize("scores,labels,match", [
    ([1.0, np.nan], [1, 0], "scores"),
    ([1.0, np.inf], [1, 0], "scores"),
    ([1.0, 2.0], [1, 1], "labels"),
    ([1.0, 2.0], [0, 0], "labels"),
    ([1.0, 2.0], [-1, -1], "labels"),
    ([1.0, 2.0], [1, 0, 1], "labels"),
    ([1.0, 2.0, 3.0], [0, 1, 2], "binary"),
    ([1.0, 2.0], [0.5, 0], "binary"),
    ([1.0, 2.0], [1, np.nan], "labels"),
    ([[1.0, 2.0]], [1, 0], "scores"),
    ([10**400, 1.0], [0, 1], "^scores: cannot convert"),  # (was an OverflowError)
    ([0.0, 1.0], [10**400, 0], "^labels: cannot convert"),
])
def test_bad_input(scores, labels, match):
    with pytest.raises(ValueError, match=match):
        loss_augmented_inference(scores, labels)


def test_bad_options():
    with pytest.raises(ValueError, match="loss"):
        loss_augmented_inference([1.0, 0.0], [1, 0], loss="map")
    with pytest.raises(ValueError, match="method"):
        loss_augmented_inference([1.0, 0.0], [1, 0], method="fast")
    for method in ("search", "search+select"):  # f_j is not unimodal for NDCG
        with pytest.raises(ValueError, match="unimodal"):
            loss_augmented_inference([1.0, 0.0], [1, 0], loss="ndcg", method=method)


def test_minus_one_plus_one_labels_equal_zero_one():
    rng = np.random.default_rng(2)
    scores, labels = rng.normal(size=50), (rng.random(50) < 0.3).astype(float)
    labels[:2] = [1, 0]
    a = loss_augmented_inference(scores, labels)
    b = loss_augmented_inference(scores, 2 * labels - 1)
    np.testing.assert_array_equal(a.coef, b.coef)


def test_concurrent_calls_share_no_state():
    """The kernel releases the GIL and keeps a work-array cache: concurrent calls from
    threads (one uses the cache, the others their own arrays) give the serial results."""
    from concurrent.futures import ThreadPoolExecutor
    rng = np.random.default_rng(6)
    problems = []
    for n in (3000, 5000, 800, 4000, 2500, 6000):
        labels = rng.random(n) < 0.2
        labels[:2] = [True, False]
        problems.append((rng.normal(size=n) + labels, labels))
    expected = [loss_augmented_inference(s, l, "ndcg").coef for s, l in problems]
    with ThreadPoolExecutor(max_workers=4) as pool:
        for _ in range(3):
            got = list(pool.map(lambda p: loss_augmented_inference(p[0], p[1], "ndcg").coef,
                                problems))
            for a, b in zip(got, expected):
                np.testing.assert_array_equal(a, b)


# qs takes a bucket pass over queries of at least 4096 samples (cython_src/_lai_fast.pyx,
# BUCKET_MIN_N): it must return greedy's ranks, loss and objective bit for bit.
BUCKET_N = 5000
BUCKET_KINDS = ["normal", "grid", "four_values", "mostly_zero", "huge", "outliers", "tiny",
                "subnormal", "separated", "below", "constant"]


def bucket_scores(kind, labels, rng):
    """Adversarial scores for the bucket pass: exact ties (which must share a bucket),
    values beyond the sampled range (clamped into the end buckets), huge and tiny
    spreads (a bucket width that overflows or underflows: the plain split takes over),
    flat objectives (many positives tied: ties within the tolerance extend past f_j's
    maximum), and most negatives far below every positive (rank P + 1 in one bucket)."""
    n = labels.size
    z = rng.normal(size=n)
    if kind == "normal":
        return z + labels
    if kind == "grid":
        return np.round(4 * (z + labels)) / 4
    if kind == "four_values":
        return rng.choice([-1.0, 0.0, 0.5, 1.0], size=n)
    if kind == "mostly_zero":
        return np.where(rng.random(n) < 0.9, 0.0, z)
    if kind == "huge":
        s = 1e8 * (z + labels)
        s[rng.choice(n, 3, replace=False)] = [1e300, -1e300, 1e200]
        return s
    if kind == "outliers":
        return np.where(rng.random(n) < 0.02, 1e3 * z, z + labels)
    if kind == "tiny":
        return 1e-9 * (z + labels)
    if kind == "subnormal":
        return 1e-310 * np.round(4 * z)
    if kind == "separated":
        return np.where(labels, z + 10.0, z)
    if kind == "below":  # nearly every negative far below the lowest positive
        return np.where(labels, z, np.where(rng.random(n) < 0.97, z - 50.0, z))
    return np.zeros(n)  # constant


@pytest.mark.parametrize("loss", LOSSES)
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), kind=st.sampled_from(BUCKET_KINDS),
       n_pos=st.sampled_from([1, 2, 40, 700, 2500, 4990]))
def test_qs_bucket_pass_equals_greedy(seed, kind, n_pos, loss):
    rng = np.random.default_rng(seed)
    labels = np.zeros(BUCKET_N, bool)
    labels[rng.choice(BUCKET_N, n_pos, replace=False)] = True
    scores = bucket_scores(kind, labels, rng)
    ref = loss_augmented_inference(scores, labels, loss, "greedy")
    res = loss_augmented_inference(scores, labels, loss, "qs")
    np.testing.assert_array_equal(res.ranks, ref.ranks)
    assert res.loss == ref.loss
    assert res.objective == ref.objective  # same coefficients, summed in the same order
    np.testing.assert_array_equal(res.coef, ref.coef)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("layout", ["queries", "increasing", "permuted"])
@pytest.mark.parametrize("offset", [0.0, 1e14])
def test_qs_bucket_pass_row_orders(loss, layout, offset):
    """The bucket pass over rows that are not the whole array: several queries (rows
    increasing within each), an increasing subset, and an arbitrary permutation (whose
    ties are still broken by row, not by position), with and without an offset that
    makes the kernel shift the scores: coef, ranks (kept), losses and objectives as
    greedy's."""
    from svmrank.inference import _run
    from svmrank.losses import get_loss
    rng = np.random.default_rng(11)
    n = 3 * BUCKET_N
    labels = rng.random(n) < 0.1
    scores = offset + np.round(rng.normal(size=n) + labels, 1)
    if layout == "queries":
        order, offsets = query_segments(rng.integers(0, 2, size=n), n)
    elif layout == "increasing":
        order = np.sort(rng.choice(n, 2 * BUCKET_N, replace=False)).astype(np.int64)
        offsets = np.array([0, order.size], dtype=np.int64)
    else:
        order = rng.permutation(n).astype(np.int64)
        offsets = np.array([0, n], dtype=np.int64)
    ref, res = (_run(scores, labels, order, offsets, get_loss(loss), METHODS[m])
                for m in ("greedy", "qs"))
    assert (res[4] != 0).all() == (offset != 0)
    rows = order[offsets[0]:offsets[-1]]
    for x, y in zip(res[:2], ref[:2]):
        np.testing.assert_array_equal(x[rows], y[rows])
    for x, y in zip(res[2:], ref[2:]):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("layout", ["in place", "increasing", "permuted"])
@pytest.mark.parametrize("kind", BUCKET_KINDS)
def test_learners_path_without_ranks_equals_the_path_with_ranks(loss, layout, kind):
    """The learners call the kernel without ranks (keep_ranks=False), a path of its own
    in the bucket pass of large queries: coef, losses and objectives must be those of
    the call that keeps the ranks, bit for bit, whatever the row layout."""
    from svmrank.inference import _run
    from svmrank.losses import get_loss
    rng = np.random.default_rng(BUCKET_KINDS.index(kind))
    n = BUCKET_N + 1000
    labels = rng.random(n) < 0.1
    scores = bucket_scores(kind, labels, rng)
    if layout == "in place":
        order = None
    elif layout == "increasing":
        order = np.sort(rng.choice(n, BUCKET_N, replace=False)).astype(np.intp)
    else:
        order = rng.permutation(n).astype(np.intp)
    offsets = np.array([0, n if order is None else order.size], dtype=np.intp)
    kept, bare = (_run(scores, labels, order, offsets, get_loss(loss), METHODS["qs"],
                       keep_ranks=keep) for keep in (True, False))
    for i in (0, 2, 3, 4):  # coef, losses, objectives, shifts
        np.testing.assert_array_equal(bare[i], kept[i])


@pytest.mark.parametrize("loss", LOSSES)
def test_qs_bucket_pass_with_a_user_loss(loss):
    """A user loss (called back for its steps) through the bucket pass: the built-in
    kernel's ranks, and greedy's ranks and objective with the same user loss."""
    from svmrank.losses import QSLoss, get_loss
    user = QSLoss(get_loss(loss).step, name=f"user {loss}")
    rng = np.random.default_rng(4)
    labels = rng.random(BUCKET_N) < 0.1
    scores = np.round(rng.normal(size=BUCKET_N) + labels, 1)
    builtin = loss_augmented_inference(scores, labels, loss, "qs")
    res = loss_augmented_inference(scores, labels, user, "qs")
    ref = loss_augmented_inference(scores, labels, user, "greedy")
    np.testing.assert_array_equal(res.ranks, builtin.ranks)
    np.testing.assert_array_equal(res.ranks, ref.ranks)
    assert res.objective == ref.objective


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("offset", [0.0, 1e14])
def test_qs_bucket_pass_in_place_and_shifted(loss, offset):
    """The bucket pass over queries whose rows lie in place (order None, the learners'
    layout), with and without a common offset that makes the kernel shift them: the
    same as through an index array, as greedy, and as on scores shifted beforehand."""
    from svmrank.inference import _run, shifted_scores
    from svmrank.losses import get_loss
    rng = np.random.default_rng(5)
    n = 3 * BUCKET_N
    labels = rng.random(n) < 0.1
    scores = offset + np.round(rng.normal(size=n) + labels, 1)
    offsets = np.array([0, BUCKET_N + 7, n], dtype=np.intp)
    run = lambda s, o, m: _run(s, labels, o, offsets, get_loss(loss), METHODS[m])  # noqa: E731
    res = run(scores, None, "qs")
    assert (res[4] != 0).all() == (offset != 0)
    pre = run(shifted_scores(scores, None, offsets, res[4]), None, "qs")
    for other in (run(scores, np.arange(n, dtype=np.intp), "qs"), run(scores, None, "greedy"), pre):
        for x, y in zip(res[:4], other[:4]):
            np.testing.assert_array_equal(x, y)


def test_user_loss_with_empty_queries():
    """A user loss over queries of which some are empty (the positives per query were
    counted with reduceat, which gives an empty query its neighbour's count)."""
    from svmrank.losses import QSLoss, get_loss
    user = QSLoss(get_loss("ap").step, name="user ap")
    scores = np.array([0.5, 2.0, 1.0])
    labels = np.array([True, False, True])
    for offsets in ([0, 3, 3], [0, 0, 3], [0, 0, 3, 3]):
        offsets = np.array(offsets, dtype=np.intp)
        got = lai_queries(scores, labels, None, offsets, user, "qs")
        ref = lai_queries(scores, labels, None, offsets, "ap", "qs")
        for x, y in zip(got, ref):
            np.testing.assert_allclose(x, y, rtol=1e-12, atol=1e-15)


def test_lai_queries_unchecked_gives_what_the_checked_entry_gives():
    """The problems' per-iteration entry returns lai_queries' arrays bit for bit on
    valid input (rows in place and through an order)."""
    from svmrank.inference import lai_queries_unchecked
    rng = np.random.default_rng(5)
    scores, relevant = rng.normal(size=60), rng.random(60) < 0.3
    offsets = np.array([0, 25, 25, 60], dtype=np.intp)
    for order in (None, rng.permutation(60).astype(np.intp)):
        for method in ("qs", "greedy", "select"):
            checked = lai_queries(scores, relevant, order, offsets, "ndcg", method)
            trusted = lai_queries_unchecked(scores, relevant, order, offsets, "ndcg", method)
            for a, b in zip(checked, trusted):
                np.testing.assert_array_equal(a, b)
