"""Rank losses as data and the user-defined QS-suitable loss interface (C1-C3 checks)."""
import numpy as np
import pytest

from svmrank import losses
from svmrank.inference import loss_augmented_inference
from svmrank.losses import (AP, NDCG, ROC, QSLoss, check_qs_suitable, get_loss)
from lai_reference import brute_force_interleavings, order_from_ranks, rank_loss


def user_copy(builtin):
    """The built-in loss re-entered through the public user interface."""
    return QSLoss(builtin.step, name=f"user {builtin.name}")


def chakrabarti_cutoff_step(i, j, P, N):
    """NDCG with Chakrabarti et al.'s discount D(1) = D(2) = 1, D(i) = 1/log2(i) (i > 2):
    not convex, so not QS-suitable (2018 supplement, Remark 1)."""
    D = lambda k: np.where(k <= 2, 1.0, 1.0 / np.log2(np.maximum(k, 2)))
    k = np.asarray(i) + np.asarray(j)
    return (D(k) - D(k - 1)) / D(np.arange(1, P + 1)).sum()


@pytest.mark.parametrize("builtin", [AP, NDCG, ROC])
def test_user_loss_reproduces_builtin_kernel(builtin):
    rng = np.random.default_rng(0)
    user = user_copy(builtin)
    for n in (3, 40, 400):
        labels = rng.random(n) < 0.3
        labels[:2] = [True, False]
        for scores in (rng.normal(size=n), np.round(rng.normal(size=n), 1)):
            for method in ("qs", "greedy", "select"):
                a = loss_augmented_inference(scores, labels, builtin.name, method)
                b = loss_augmented_inference(scores, labels, user, method)
                assert b.objective == pytest.approx(a.objective, rel=1e-12, abs=1e-12)
                assert b.loss == pytest.approx(a.loss, rel=1e-12, abs=1e-14)
                np.testing.assert_array_equal(a.ranks, b.ranks)


@pytest.mark.parametrize("builtin", [AP, NDCG, ROC])
def test_loss_values_match_definition(builtin):
    """C1: Σ_j δ_j(r_j) from the steps equals Δ computed from the ranking itself."""
    rng = np.random.default_rng(1)
    for _ in range(30):
        P, N = rng.integers(1, 5), rng.integers(1, 6)
        r = np.sort(rng.integers(1, P + 2, size=N))  # a proper ranking's interleaving ranks
        order = []  # labels from top to bottom
        for i in range(1, P + 2):
            order += [False] * int(np.sum(r == i)) + ([True] if i <= P else [])
        value = builtin.values(r, np.arange(1, N + 1), P, N).sum()
        assert value == pytest.approx(rank_loss(order, builtin.name), abs=1e-12)


def test_builtins_are_qs_suitable():
    for loss in (AP, NDCG, ROC):
        for P, N in ((1, 1), (7, 3), (50, 400), (3000, 2000)):
            assert check_qs_suitable(loss, P, N) > 0


def test_remark_1_counterexample_is_refused_with_the_offending_pair():
    bad = QSLoss(chakrabarti_cutoff_step, name="cut-off NDCG")
    with pytest.raises(ValueError, match=r"C2 fails at \(i, j\) = \(1, 1\)"):
        check_qs_suitable(bad, 1, 2)
    # the supplement's instance: negatives 3ε, ε and a positive 5ε
    eps = 1e-3
    with pytest.raises(ValueError, match="not QS-suitable"):
        loss_augmented_inference([3 * eps, eps, 5 * eps], [0, 0, 1], loss=bad)


def _breaks_c2_at(j_bad):
    def step(i, j, P, N):
        out = AP.step(i, j, P, N)
        return np.where(np.asarray(j) == j_bad + 1, out - 1.0, out)  # C2 fails at (·, j_bad)
    return QSLoss(step)


def test_every_pair_is_checked_up_to_full_check_pairs():
    """A violation between the sampled j (here j = 1002, P·N = 5·10⁶) was accepted and
    the inference then missed the maximum: up to 10⁸ pairs every one is checked."""
    with pytest.raises(ValueError, match=r"C2 fails at \(i, j\) = \(1, 1002\)"):
        check_qs_suitable(_breaks_c2_at(1002), 1000, 5000)


def test_violation_far_down_the_negatives_is_found_on_large_problems(monkeypatch):
    """Beyond FULL_CHECK_PAIRS only a subset of j is checked, with a warning: it
    includes the last ones."""
    monkeypatch.setattr(losses, "FULL_CHECK_PAIRS", 4_000_000)
    N = 5000
    with pytest.warns(UserWarning, match="checked for C1-C2 on a subset"), \
            pytest.raises(ValueError, match=rf"\(1, {N - 2}\)"):
        check_qs_suitable(_breaks_c2_at(N - 2), 1000, N)


def test_negative_loss_is_found_on_large_problems_with_many_positives(monkeypatch):
    """For P > 2000 and P·N beyond FULL_CHECK_PAIRS only some i enter the C2 grid; C1 is
    still checked for every i (at j = N, where C2 puts the smallest δ_j(i))."""
    monkeypatch.setattr(losses, "FULL_CHECK_PAIRS", 4_000_000)
    positive_steps = QSLoss(lambda i, j, P, N: np.full(np.broadcast(i, j).shape, 1.0 / (P * N)))
    with pytest.warns(UserWarning, match="subset"), \
            pytest.raises(ValueError, match=r"negative loss term .* at \(i, j\) = \(1, 2000\)"):
        check_qs_suitable(positive_steps, 2001, 2000)


def test_an_overflowing_loss_term_is_refused():
    huge = QSLoss(lambda i, j, P, N: np.full(np.broadcast(i, j).shape, -1e308), name="huge")
    with pytest.raises(ValueError, match=r"^loss: huge's loss term .* overflows at \(i, j\) = \(1, 1\)"):
        check_qs_suitable(huge, 3, 2)


def test_user_loss_errors_stay_with_their_call():
    """A step that raises in one thread is reported there, as the ValueError naming the
    loss, while another thread's valid user loss succeeds."""
    import threading

    def fails_in_the_kernel(i, j, P, N):  # the C1-C3 grid calls it with 2-d arrays: fine
        if np.ndim(i) == 1:
            raise ArithmeticError("step failed")
        return AP.step(i, j, P, N)

    broken = QSLoss(fails_in_the_kernel, name="broken")
    rng = np.random.default_rng(0)
    scores, labels = rng.normal(size=300), rng.random(300) < 0.3
    outcomes = []

    def work(loss):
        for _ in range(50):
            try:
                loss_augmented_inference(scores, labels, loss=loss)
                outcomes.append("ok")
            except ValueError as exc:
                outcomes.append("broken" if "broken" in str(exc) else repr(exc))
    threads = [threading.Thread(target=work, args=(loss,))
               for loss in (broken, user_copy(AP), broken)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(set(outcomes)) == ["broken", "ok"] and outcomes.count("ok") == 50


@pytest.mark.parametrize("step,match", [
    (lambda i, j, P, N: np.zeros(3), "shape"),
    (lambda i, j, P, N: np.full(np.broadcast(i, j).shape, 1j), "complex"),
    (lambda i, j, P, N: np.full(np.broadcast(i, j).shape, np.nan), "not finite"),
    (lambda i, j, P, N: 1 / 0, "failed"),
    (lambda i, j, P, N: np.full(np.broadcast(i, j).shape, "x"), "step must return numbers"),
    (lambda i, j, P, N: np.full(np.broadcast(i, j).shape, 1.0), "negative loss"),
    # an integer result: np.full_like on the integer grids rounds every step to 0
    (lambda i, j, P, N: np.full_like(i + j, -1.0 / (P * N)), "floating-point numbers, got dtype int64"),
])
def test_bad_user_losses_are_refused(step, match):
    with pytest.raises(ValueError, match=match):
        loss_augmented_inference([0.3, 0.1, 0.5], [0, 0, 1], loss=QSLoss(step))


def test_user_step_may_change_its_arguments_and_return_a_read_only_array():
    """A step that goes 0-based in place (i -= 1) used to corrupt the checks' grids, and
    a read-only result failed inside the kernel without naming the loss."""
    def in_place(i, j, P, N):
        i -= 1
        j -= 1
        out = AP.step(i + 1, j + 1, P, N)
        out.setflags(write=False)
        return out

    scores, labels = [0.3, 0.1, 0.5, 0.2, 0.4], [0, 0, 1, 1, 0]
    for method in ("qs", "greedy"):
        got = loss_augmented_inference(scores, labels, loss=QSLoss(in_place), method=method)
        ref = loss_augmented_inference(scores, labels, loss="ap", method=method)
        assert got.objective == pytest.approx(ref.objective) and got.loss == pytest.approx(ref.loss)


def test_search_is_refused_for_user_losses():
    with pytest.raises(ValueError, match="^method 'search' needs a loss whose f_j is unimodal"):
        loss_augmented_inference([0.3, 0.1, 0.5], [0, 0, 1], loss=user_copy(AP), method="search")


def test_problem_sizes_must_be_integers():
    """2.9 was truncated to 2 positives, and '3' or True were read as sizes."""
    for P, N in ((2.9, 3), ("3", "4"), (True, 3), (3, 0)):
        with pytest.raises(ValueError, match="^n_(pos|neg) must be an integer >= 1"):
            check_qs_suitable(AP, P, N)
    assert check_qs_suitable(AP, np.int64(3), 4) > 0


def test_get_loss_and_constructor_errors():
    assert get_loss("ap") is AP and get_loss(ROC) is ROC
    with pytest.raises(ValueError, match="loss"):
        get_loss("map")
    with pytest.raises(ValueError, match="callable"):
        QSLoss(3)


def test_user_loss_objective_matches_brute_force():
    rng = np.random.default_rng(4)
    user = user_copy(AP)
    for _ in range(20):
        n = rng.integers(2, 8)
        labels = rng.random(n) < 0.4
        labels[:2] = [True, False]
        scores = rng.normal(size=n)
        res = loss_augmented_inference(scores, labels, loss=user)
        assert res.objective == pytest.approx(brute_force_interleavings(scores, labels, "ap")[0],
                                              abs=1e-12)


def _weighted_roc_step(i, j, P, N):
    """A QS-suitable loss that is not built in: each swapped (positive, negative) pair
    weighs w_j = 1 + (N − j)/N, from about 2 for the top negative down to 1 (w
    non-increasing in j, so C2 holds)."""
    return np.broadcast_to(-(1.0 + (N - j) / N) / (P * N), np.broadcast(i, j).shape)


def _weighted_roc_loss(labels_in_order):
    """The same loss from its definition: Σ_j w_j · #(positives below the j-th negative) / PN."""
    rel = np.asarray(labels_in_order, dtype=bool)
    P, N = int(rel.sum()), int((~rel).sum())
    below = P - np.cumsum(rel)[~rel]  # positives below each negative, top to bottom
    j = np.arange(1, N + 1)
    return float(((1.0 + (N - j) / N) * below).sum() / (P * N))


def test_a_loss_of_the_users_own_against_brute_force():
    """Every user loss tested before was a built-in step through the user interface; a
    kernel that quietly used a built-in table would have passed. A loss of its own,
    against enumeration of every ranking (n <= 7), for every method it allows, and qs
    against greedy on a query of the bucket pass's size."""
    import itertools
    from lai_reference import discriminant
    user = QSLoss(_weighted_roc_step, name="weighted ROC")
    rng = np.random.default_rng(12)
    for _ in range(30):
        n = int(rng.integers(2, 8))
        labels = rng.random(n) < 0.4
        labels[:2] = [True, False]
        scores = np.round(rng.normal(size=n), 1)  # (ties too)
        best = max(_weighted_roc_loss(labels[list(order)]) + discriminant(order, scores, labels)
                   for order in itertools.permutations(range(n)))
        for method in ("qs", "greedy", "select"):
            res = loss_augmented_inference(scores, labels, loss=user, method=method)
            assert res.objective == pytest.approx(best, abs=1e-12)
            # the ranking returned is a maximiser, and .loss is its loss
            order = order_from_ranks(scores, labels, res.ranks)
            assert res.loss == pytest.approx(_weighted_roc_loss(labels[order]), abs=1e-12)
            assert res.loss + discriminant(order, scores, labels) == pytest.approx(best, abs=1e-12)
    labels = rng.random(6000) < 0.1
    scores = np.round(rng.normal(size=6000) + labels, 1)
    qs, greedy = (loss_augmented_inference(scores, labels, loss=user, method=m)
                  for m in ("qs", "greedy"))
    np.testing.assert_array_equal(qs.ranks, greedy.ranks)
    assert qs.objective == greedy.objective


@pytest.mark.parametrize("builtin", [AP, NDCG, ROC])
def test_ranking_loss_of_scores_matches_the_metrics(builtin):
    from svmrank.metrics import average_precision, ndcg, roc_auc
    measure = {"ap": average_precision, "ndcg": ndcg, "roc": roc_auc}[builtin.name]
    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(2, 30))
        rel = rng.random(n) < 0.4
        rel[:2] = [True, False]
        scores = rng.normal(size=n)  # distinct: no tie convention involved
        assert builtin.ranking_loss(rel, scores) == pytest.approx(
            1.0 - measure(rel.astype(float), scores), abs=1e-12)
    assert np.isnan(builtin.ranking_loss([True, True], [0.0, 1.0]))


def test_rank_svm_trains_on_a_user_loss():
    from svmrank import RankSVM
    from svmrank.datasets import make_ranking
    X, y, qid = make_ranking(n_samples=200, n_features=8, n_queries=4, density=1.0,
                             random_state=0)  # dense: no tied scores
    builtin = RankSVM(loss="ap", C=10.0).fit(X, y, qid=qid)
    user = RankSVM(loss=user_copy(AP), C=10.0).fit(X, y, qid=qid)
    np.testing.assert_allclose(user.coef_, builtin.coef_, rtol=1e-6, atol=1e-9)
    assert user.score(X, y, qid=qid) == pytest.approx(builtin.score(X, y, qid=qid), abs=1e-9)
    bad = QSLoss(chakrabarti_cutoff_step, name="cut-off NDCG")
    with pytest.raises(ValueError, match="cut-off NDCG"):
        RankSVM(loss=bad, C=1.0).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="^lai 'search' needs"):  # (the argument's name)
        RankSVM(loss=user_copy(AP), lai="search").fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="^lai 'search' needs"):
        RankSVM(loss="ndcg", lai="search").fit(X, y, qid=qid)


def test_builtin_loss_and_method_codes_are_the_kernels():
    """The codes are the kernel's enums (svmrank/_lai_fast.pxd), not restated numbers."""
    from svmrank import _lai_fast
    from svmrank.inference import LOSSES, METHODS
    assert (AP.code, NDCG.code, ROC.code) == (_lai_fast.LOSS_AP, _lai_fast.LOSS_NDCG,
                                              _lai_fast.LOSS_ROC)
    assert LOSSES == {"ap": _lai_fast.LOSS_AP, "ndcg": _lai_fast.LOSS_NDCG,
                      "roc": _lai_fast.LOSS_ROC}
    assert METHODS == {"qs": _lai_fast.METHOD_QS, "greedy": _lai_fast.METHOD_GREEDY,
                       "search": _lai_fast.METHOD_SEARCH, "select": _lai_fast.METHOD_SELECT,
                       "search+select": _lai_fast.METHOD_SEARCH_SELECT}
    assert len({*LOSSES.values(), _lai_fast.LOSS_USER}) == 4 and len(set(METHODS.values())) == 5
