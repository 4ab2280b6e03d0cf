"""SVM-perf's multivariate losses (kernel svmrank._perf_fast): the most violated
labelling against brute force over every labelling, the C conversions against
SVM-perf's objective computed from its own definitions, BinarySVM and model files."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from svmrank.estimators import BinarySVM, RankSVM
from svmrank.io.estimator_model import from_model, to_model, training_info
from svmrank.problems.binary import BinaryProblem
from svmrank.problems.perf import PERF_LOSSES, PerfProblem, k_count, perf_scale, table_loss
from svmrank.problems.ranking import RankingProblem
from perf_reference import (brute_force_violation, contingency, measure_loss, perf_objective,
                            perf_rank_objective)

LOSSES = list(PERF_LOSSES)
K_CHOICES = {"prec@k": [None, 0.2, 0.5, 1.0], "rec@k": [None, 1.0, 1.5, 3.0]}

TIED = st.sampled_from([-1.0, 0.0, 0.5, 1.0])
QUARTERS = st.integers(-8, 8).map(lambda k: k / 4)
WIDE = st.floats(-1e6, 1e6, allow_nan=False)
TINY = st.floats(-1e-9, 1e-9, allow_nan=False)
ANY = st.floats(-3, 3, allow_nan=False)


def sample(scores_strategy, max_n=8):
    """(scores, labels) with at least one positive (negatives optional)."""
    return st.integers(1, max_n).flatmap(lambda n: st.tuples(
        st.lists(scores_strategy, min_size=n, max_size=n),
        st.lists(st.booleans(), min_size=n, max_size=n).filter(any)))


def check_against_brute_force(scores, labels, loss, k):
    scores = np.asarray(scores, dtype=float)
    y = np.where(labels, 1.0, -1.0)
    problem = PerfProblem(np.eye(len(y)), y, loss, k=k, bias=0.0)
    delta, d = problem.violation_at_scores(scores)
    # (the reference with k as given: a Rec@k k above n, which the problem clips to n)
    k_given = problem.k if k is None else k_count(k, int(sum(labels)))
    best = brute_force_violation(scores, y, loss, k=k_given)
    scale = 1.0 + np.abs(scores).max()
    assert delta - scores @ d == pytest.approx(best, rel=1e-9, abs=1e-9 * scale)
    # d flips a labelling whose contingency table has the loss returned
    n = len(y)
    flipped = d != 0
    np.testing.assert_allclose(d[flipped], y[flipped] / n)
    labelling = np.where(flipped, -y, y)
    table = contingency(y, labelling)
    if flipped.any():
        assert delta == pytest.approx(measure_loss(loss, *table, k=k_given), abs=1e-12)
        assert delta == pytest.approx(table_loss(loss, table[0], table[1], table[0] + table[2],
                                                 problem.k), abs=1e-12)
    else:
        assert delta == 0.0


@pytest.mark.parametrize("loss", LOSSES)
@settings(max_examples=40, deadline=None)
@given(problem=st.one_of(sample(TIED), sample(QUARTERS), sample(WIDE), sample(TINY),
                         sample(ANY)), pick=st.integers(0, 3))
def test_most_violated_labelling_matches_brute_force(problem, loss, pick):
    scores, labels = problem
    k = K_CHOICES[loss][pick] if loss in K_CHOICES else None
    check_against_brute_force(scores, labels, loss, k)


@pytest.mark.parametrize("loss", LOSSES)
def test_adversarial_samples(loss):
    cases = [([0.0] * 8, [True] + [False] * 7),          # every score tied, one positive
             ([1.0, 1.0, 1.0], [True, True, True]),      # no negatives
             ([5.0, -5.0, 5.0, -5.0, 0.0], [True, False, False, True, True]),
             ([1e300, -1e300, 0.0], [True, False, True]),
             ([2.0, 2.0, 0.5, 0.5, 0.5, 2.0], [True, False, True, False, True, False])]
    for scores, labels in cases:
        for k in K_CHOICES.get(loss, [None]):
            check_against_brute_force(scores, labels, loss, k)


@pytest.mark.parametrize("loss", LOSSES)
def test_no_positive_is_refused_in_one_line(loss):
    with pytest.raises(ValueError, match=f"^y: the {loss} loss needs a positive"):
        PerfProblem(np.eye(3), [-1, -1, -1], loss)
    with pytest.raises(ValueError, match="^y: needs"):
        BinarySVM(loss=loss).fit(np.eye(3), [-1, -1, -1])


@pytest.mark.parametrize("loss, k, message", [
    ("prec@k", 0.0, "in \\(0, 1\\]"), ("prec@k", 1.5, "in \\(0, 1\\]"),
    ("rec@k", 0.5, ">= 1"), ("rec@k", np.inf, ">= 1"), ("f1", 0.5, "only the prec@k"),
    ("error", 0.5, "only the prec@k"),
    ("prec@k", "x", "expected a number")])
def test_bad_k_is_refused(loss, k, message):
    X, y = np.eye(4), [1, -1, 1, -1]
    with pytest.raises(ValueError, match=f"^k: .*{message}"):
        BinarySVM(loss=loss, k=k).fit(X, y)


def test_rec_at_k_beyond_the_samples_admits_every_labelling():
    """Review 23: Rec@k's k beyond n was refused (svm_perf_learn's default --p 2 on any
    file more than half positive); SVM-perf trains it, every labelling admitted."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=30) > -0.5, 1, -1)
    assert (y > 0).sum() > 15
    problem = PerfProblem(X, y, "rec@k", k=10.0)
    assert problem.k == 30
    at_n = BinarySVM(loss="rec@k", k=30 / (y > 0).sum(), C=10.0).fit(X, y)
    beyond = BinarySVM(loss="rec@k", k=10.0, C=10.0).fit(X, y)
    np.testing.assert_allclose(beyond.coef_, at_n.coef_)


def test_unknown_loss_is_refused():
    with pytest.raises(ValueError, match="^loss: expected 'error' or one of"):
        BinarySVM(loss="auc").fit(np.eye(2), [1, -1])


# ---------------------------------------------------------------- C conversion
def our_objective(problem, w, C):
    loss, d = problem.violation_at_scores(problem.scores(w))
    return 0.5 * w @ w + C * max(0.0, loss - problem.scores(w) @ d)


@pytest.mark.parametrize("loss", ["error"] + LOSSES)
def test_c_conversion_matches_svm_perfs_objective(loss):
    """SVM-perf's objective at (w_perf, C) = scale × ours at (w, C · c_factor), w_perf =
    w_factor · w, for every w: the two problems have the same minimiser."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(7, 3))
    y = np.array([1, -1, 1, -1, -1, 1, -1])
    c_factor, eps_factor, w_factor = perf_scale(loss)
    problem = (BinaryProblem(X, y, bias=0.0) if loss == "error"
               else PerfProblem(X, y, loss, bias=0.0))
    for C_perf in (0.01, 1.0):
        for _ in range(4):
            w = rng.normal(size=3) * rng.choice([0.01, 1.0, 30.0])
            theirs = perf_objective(w_factor * w, X, y, loss, C_perf,
                                    k=getattr(problem, "k", None))
            ours = our_objective(problem, w, C_perf * c_factor)
            assert theirs == pytest.approx(w_factor ** 2 * ours, rel=1e-10)


@pytest.mark.parametrize("loss", ["roc", "ap"])
def test_c_conversion_rank_losses(loss):
    """-l 10: SVM-perf's -c C gives svmrank's -c 25 C, its w twice ours (issue 26); -l 11:
    (PN)² C / 100, its w 100 / (PN) times ours."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(6, 2))
    y = np.array([1, -1, 1, -1, -1, 1])
    c_factor, eps_factor, w_factor = perf_scale(loss, 3, 3)
    if loss == "roc":
        assert (c_factor, eps_factor, w_factor) == (25.0, 0.01, 2.0)
    problem = RankingProblem(X, y, loss=loss)
    for C_perf in (0.01, 1.0):
        for _ in range(3):
            w = rng.normal(size=2) * rng.choice([0.01, 1.0, 30.0])
            theirs = perf_rank_objective(w_factor * w, X, y, C_perf, loss)
            ours = our_objective(problem, w, C_perf * c_factor)
            assert theirs == pytest.approx(w_factor ** 2 * ours, rel=1e-10)


# ---------------------------------------------------------------- estimator and files
def toy_data(seed=0, n=60):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = np.where(X @ [1.0, -0.5, 0.2, 0.0] + 0.3 * rng.normal(size=n) > 0.4, 1, -1)
    return X, y


@pytest.mark.parametrize("loss, k", [("zero_one", None), ("f1", None), ("prbep", None),
                                     ("prec@k", 0.5), ("rec@k", None), ("rec@k", 2.5)])
def test_binary_svm_fits_and_round_trips(loss, k):
    X, y = toy_data()
    if loss == "zero_one":  # (not separable: every w has ξ >= 1, and w = 0 is optimal)
        with pytest.warns(UserWarning, match="ended at w = 0"):
            est = BinarySVM(loss=loss, k=k, C=10.0, epsilon=1e-4).fit(X, y)
    else:
        est = BinarySVM(loss=loss, k=k, C=10.0, epsilon=1e-4).fit(X, y)
        assert np.any(est.coef_)
    assert est.result_.converged
    # the fitted objective is the minimum: no random nearby w does better
    problem = PerfProblem(X, y, loss, k=k, bias=1.0)
    w = np.append(est.coef_, est.intercept_)
    best = our_objective(problem, w, 10.0)
    rng = np.random.default_rng(1)
    for _ in range(20):
        assert our_objective(problem, w + 0.05 * rng.normal(size=w.size), 10.0) >= best - 1e-3
    model = to_model(est, n_train=len(y))
    assert model.metadata["loss"] == loss
    assert training_info(model).get("k_fraction") == k
    back = from_model(model)
    assert isinstance(back, BinarySVM) and (back.loss, back.k) == (loss, k)
    np.testing.assert_allclose(back.decision_function(X), est.decision_function(X))


def test_error_loss_is_unchanged():
    X, y = toy_data(2)
    a = BinarySVM(C=3.0).fit(X, y)
    b = BinarySVM(C=3.0, loss="error").fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    assert "k_fraction" not in to_model(a, n_train=len(y)).metadata


def test_rank_svm_does_not_take_the_labelling_losses():
    with pytest.raises(ValueError):
        RankSVM(loss="f1").fit(*toy_data())
