"""The problems linear in the scores share one base: its products, scores and joint
feature, whatever the family (ranking, binary, latent)."""
import numpy as np
import pytest
import scipy.sparse as sp

from svmrank.bags import check_bag_labels, check_bags
from svmrank.problems.binary import BinaryProblem
from svmrank.problems.latent import LatentAPProblem, LatentBinaryProblem, LatentSSVMProblem
from svmrank.problems.linear import SPARSE_D_FRACTION, LinearScoreProblem
from svmrank.problems.ranking import RankingProblem

FAMILIES = [RankingProblem, BinaryProblem, LatentAPProblem, LatentSSVMProblem,
            LatentBinaryProblem]


@pytest.mark.parametrize("cls", FAMILIES)
def test_each_family_adds_only_its_violation(cls):
    assert issubclass(cls, LinearScoreProblem)
    for name in ("scores", "joint_feature", "most_violated"):
        assert getattr(cls, name) is getattr(LinearScoreProblem, name), f"{cls.__name__}.{name}"
    assert cls.violation_at_scores is not LinearScoreProblem.violation_at_scores


def test_the_base_needs_a_violation():
    with pytest.raises(TypeError, match="violation_at_scores"):
        LinearScoreProblem(sp.csr_matrix(np.eye(2)))


def _latent_problem(cls, rng):
    sizes = rng.integers(1, 5, size=30)
    X = sp.random(int(sizes.sum()), 6, density=0.5, random_state=rng, format="csr")
    bags = check_bags(np.repeat(np.arange(30), sizes), X.shape[0])
    labels = check_bag_labels(np.where(np.arange(30) % 3 == 0, 1.0, -1.0), bags)
    return cls(X, bags, labels), X


@pytest.mark.parametrize("cls", [LatentAPProblem, LatentSSVMProblem, LatentBinaryProblem])
@pytest.mark.parametrize("fraction", [0.1, 0.9])
def test_latent_products_match_scipy_on_both_sides_of_the_switch(cls, fraction):
    """Candidate scores and Xᵀd of the latent problems go through the base's products:
    d with few non-zero rows (the scatter) and with many (the gather over Xᵀ)."""
    rng = np.random.default_rng(0)
    problem, X = _latent_problem(cls, rng)
    assert (fraction <= SPARSE_D_FRACTION) == (fraction == 0.1)
    w = rng.normal(size=problem.n_features)
    Xp = problem.X  # (with the bias column of the latent SVM)
    np.testing.assert_allclose(problem.scores(w), Xp @ w, rtol=1e-12, atol=1e-12)
    rows = rng.choice(X.shape[0], size=int(fraction * X.shape[0]), replace=False)
    d = problem.candidate_coef(rows, rng.normal(size=rows.size))
    np.testing.assert_allclose(problem.joint_feature(d), Xp.T @ d, rtol=1e-12, atol=1e-12)


def test_problems_share_products_over_the_same_matrix():
    """A RankingProblem given another problem's products over the same X uses them (no
    copy of X) and answers as one that builds its own; over another X it is refused."""
    rng = np.random.default_rng(0)
    X = sp.random(50, 6, density=0.5, random_state=rng, format="csr")
    X.sum_duplicates()  # (canonical: validation keeps X's arrays as they are)
    y = (rng.random(50) < 0.3).astype(float)
    own = RankingProblem(X, y)
    shared = RankingProblem(X, 1.0 - y, products=own.products)
    fresh = RankingProblem(X, 1.0 - y)
    assert shared.products is own.products
    w = rng.normal(size=6)
    for a, b in zip(shared.most_violated(w), fresh.most_violated(w)):
        assert np.array_equal(a, b)
    with pytest.raises(ValueError, match="products: built over another matrix"):
        RankingProblem(X.copy(), y, products=own.products)
    qid = np.tile([0, 1], 25)  # (rows regrouped by query: products ignored)
    assert RankingProblem(X, y, qid=qid, products=own.products).products is not own.products


def test_latent_instance_start_makes_no_copy_of_x(monkeypatch):
    """LatentAPSVM's instance start over every candidate builds no second products (2
    copies of X) and no X[rows]: one SparseProducts for the whole fit."""
    from svmrank.estimators.latent import LatentAPSVM
    from svmrank.problems import linear
    built = []
    real = linear.SparseProducts.__init__
    monkeypatch.setattr(linear.SparseProducts, "__init__",
                        lambda self, X, rows=None, **kw: built.append((X.shape, rows))
                        or real(self, X, rows, **kw))
    rng = np.random.default_rng(1)
    bags = np.repeat(np.arange(30), 3)
    X = rng.normal(size=(90, 4))
    y = np.repeat((rng.random(30) < 0.4).astype(float), 3)
    LatentAPSVM(init="auto", n_init=1).fit(X, y, bags=bags)
    assert built == [((90, 4), None)]
    # with known candidates, the instance start reads its rows of X through a map
    built.clear()
    known = np.where(np.arange(30) % 2 == 0, np.arange(30) * 3 + 1, -1)
    LatentAPSVM(init="auto", n_init=1).fit(X, y, bags=bags, known=known)
    assert [shape for shape, _ in built] == [(90, 4), (90, 4)]
    assert built[1][1] is not None and len(built[1][1]) < 90


def test_ranking_problem_rows_equal_the_copy_bitwise():
    """RankingProblem(X, rows=r) (and queries skipped, whose ranked rows X reads through
    a map) answers bitwise as the problem over the copy X[r], at every density of d."""
    rng = np.random.default_rng(5)
    stored = rng.random((300, 40)) < 0.3 * rng.random((300, 1))  # rows of every length
    X = sp.csr_matrix(rng.normal(size=(300, 40)) * stored)
    rows = rng.permutation(300)[:200]
    qid = rng.integers(0, 12, size=200)
    y = (rng.random(200) < 0.2).astype(float)
    y[qid == 3] = 0.0  # (a query skipped)
    with pytest.warns(UserWarning, match="skipped"):
        mapped = RankingProblem(X, y, qid=qid, loss="ndcg", rows=rows)
    with pytest.warns(UserWarning, match="skipped"):
        copied = RankingProblem(X[rows], y, qid=qid, loss="ndcg")
    assert mapped.X is not copied.X and mapped.X.shape == X.shape
    np.testing.assert_array_equal(mapped.rows, rows[copied.rows])
    for _ in range(5):
        w = rng.normal(size=40)
        assert np.array_equal(mapped.scores(w), copied.scores(w))
        for density in (0.05, 0.5, 1.0):
            d = rng.normal(size=len(mapped.rows)) * (rng.random(len(mapped.rows)) < density)
            assert np.array_equal(mapped.joint_feature(d), copied.joint_feature(d))
            assert np.array_equal(mapped.products.scatter(d), copied.products.scatter(d))
        for a, b in zip(mapped.most_violated(w), copied.most_violated(w)):
            assert np.array_equal(a, b)


@pytest.mark.parametrize("rows, message", [([0, 5], r"in \[0, 4\)"), ([1, 1], "repeated"),
                                           ([-1], r"in \[0, 4\)"), ([0.5], "integer"),
                                           ([[0, 1]], "1-d")])
def test_bad_rows_are_refused_in_one_line(rows, message):
    X = sp.random(4, 3, density=0.8, format="csr", random_state=0)
    with pytest.raises(ValueError, match=message):
        RankingProblem(X, np.arange(len(np.ravel(rows))) % 2, rows=rows)
