"""dot(w, joint_feature) == score for the ranking and binary problems, and the
violation each oracle returns is the largest over all outputs (small inputs)."""
import itertools

import numpy as np
import pytest

from svmrank.inference import true_coef
from svmrank.problems.binary import BinaryProblem
from svmrank.problems.ranking import RankingProblem
from lai_reference import coef_of, discriminant, rank_loss


@pytest.mark.parametrize("seed", range(5))
def test_ranking_joint_feature_gives_the_discriminant(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(7, 4))
    y = np.array([1, 0, 0, 1, 0, 0, 0.0])
    w = rng.normal(size=4)
    problem = RankingProblem(X, y)
    for order in itertools.islice(itertools.permutations(range(7)), 0, 5040, 97):
        coef = coef_of(list(order), y > 0)
        assert w @ problem.joint_feature(coef) == pytest.approx(discriminant(order, X @ w, y > 0))


@pytest.mark.parametrize("loss", ["ap", "ndcg", "roc"])
def test_ranking_oracle_is_the_most_violated_over_all_rankings(loss):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(6, 3))
    y = np.array([0, 1, 0, 1, 0, 0.0])
    problem = RankingProblem(X, y, loss=loss)
    for _ in range(5):
        w = rng.normal(size=3)
        delta, g = problem.most_violated(w)
        best = max(rank_loss((y > 0)[list(o)], loss) - w @ problem.joint_feature(
            true_coef(y > 0) - coef_of(list(o), y > 0)) for o in itertools.permutations(range(6)))
        assert delta - w @ g == pytest.approx(best, abs=1e-12)


def test_binary_joint_feature_and_oracle():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(6, 2))
    y = np.array([1, -1, 1, 1, -1, -1.0])
    problem = BinaryProblem(X, y, bias=0.5)
    w = rng.normal(size=3)
    Xb = np.hstack([X, np.full((6, 1), 0.5)])
    psi = lambda labels: Xb.T @ labels / (2 * len(y))
    assert w @ psi(y) == pytest.approx(problem.scores(w) @ y / 12)
    delta, g = problem.most_violated(w)
    best = max(np.mean(np.array(lab) != y) - w @ (psi(y) - psi(np.array(lab)))
               for lab in itertools.product([-1.0, 1.0], repeat=6))
    assert delta - w @ g == pytest.approx(best)
