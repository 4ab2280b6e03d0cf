"""TopKSVM estimator and top-k accuracy: the k = 1 optimum equals scikit-learn's
Crammer-Singer LinearSVC, labels, predictions, kernels and bad input."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings, strategies as st

from svmrank.exceptions import ConvergenceWarning
from svmrank.learners.sdca import topk_hinge_losses
from svmrank.metrics import top_k_accuracies, top_k_accuracy

import svmrank._sdca_fast  # noqa: E402,F401  (a missing kernel fails, never skips)
from svmrank.estimators.topk import TopKSVM  # noqa: E402
from test_sdca import blobs  # noqa: E402


def objective(coef, X, y, C, k=1, loss="alpha"):
    """1/2 ||W||^2 + C sum_i phi(...) with classes coded 0..m-1."""
    return 0.5 * np.sum(coef ** 2) + C * topk_hinge_losses(X @ coef.T, y, k, loss).sum()


# ---------------------------------------------------------------------------
# k = 1 is LinearSVC(multi_class="crammer_singer", fit_intercept=False) with the same C
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("C", [0.05, 1.0])
@pytest.mark.parametrize("sparse", [False, True])
def test_k1_reaches_linearsvc_crammer_singer_optimum(C, sparse):
    svm = pytest.importorskip("sklearn.svm")
    X, y = blobs(120, 8, 5, seed=3, spread=2.0)
    Xf = sp.csr_matrix(X) if sparse else X
    ref = svm.LinearSVC(C=C, multi_class="crammer_singer", fit_intercept=False, tol=1e-10,
                        max_iter=200000, random_state=0).fit(Xf, y)
    ours = TopKSVM(k=1, C=C, epsilon=1e-9, max_epoch=20000, random_state=0).fit(Xf, y)
    p_ref = objective(ref.coef_, X, y, C)
    p_ours = objective(ours.coef_, X, y, C)
    assert ours.primal_objective_ == pytest.approx(p_ours, rel=1e-12)
    assert p_ours <= p_ref * (1 + 1e-6)
    assert p_ours == pytest.approx(p_ref, rel=1e-6)
    # the primal is strongly convex, so the optimal W is unique
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=2e-3 * np.abs(ref.coef_).max())
    # and the dual certifies it: the optimum lies in [D, P]
    assert ours.dual_objective_ <= p_ref * (1 + 1e-9)


def test_k1_alpha_and_beta_are_the_same_problem():
    X, y = blobs(60, 5, 4, seed=1)
    a = TopKSVM(k=1, loss="alpha", epsilon=1e-6, random_state=0).fit(X, y)
    b = TopKSVM(k=1, loss="beta", epsilon=1e-6, random_state=0).fit(X, y)
    assert a.n_iter_ == b.n_iter_
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-10)


# ---------------------------------------------------------------------------
# API
# ---------------------------------------------------------------------------

def test_labels_predictions_and_score():
    X, y = blobs(90, 6, 5, seed=2)
    names = np.array(["ant", "bee", "cat", "dog", "eel"])
    est = TopKSVM(k=2, C=1.0, epsilon=1e-6, random_state=0).fit(X, names[y])
    np.testing.assert_array_equal(est.classes_, names)
    assert est.coef_.shape == (5, 6) and est.dual_coef_.shape == (90, 5)
    np.testing.assert_allclose(est.dual_coef_.sum(axis=1), 0, atol=1e-12)
    np.testing.assert_allclose(est.coef_, (X.T @ est.dual_coef_).T, atol=1e-9)
    S = est.decision_function(X)
    np.testing.assert_allclose(S, X @ est.coef_.T)
    top = est.predict_topk(X, 3)
    assert top.shape == (90, 3)
    np.testing.assert_array_equal(top[:, 0], est.predict(X))
    rows = np.arange(90)
    col = {c: j for j, c in enumerate(names)}
    picked = np.vectorize(col.get)(top)
    assert np.all(S[rows, picked[:, 0]] >= S[rows, picked[:, 1]])
    assert np.all(S[rows, picked[:, 1]] >= S[rows, picked[:, 2]])
    hit = (est.predict_topk(X) == names[y][:, None]).any(axis=1).mean()
    assert est.score(X, names[y]) == pytest.approx(hit)
    assert est.score(X, names[y]) == pytest.approx(top_k_accuracy(names[y], S, 2, names))
    assert est.n_iter_ >= 1 and 0 <= est.duality_gap_ <= 1e-6


def test_scores_and_predictions_do_not_depend_on_the_batch():
    # scikit-learn's check_methods_subset_invariance data: at sample 7 the precomputed
    # model ties three classes, and with BLAS products predicting the sample alone
    # picked another class than predicting the whole set.
    Z = 3 * np.random.RandomState(0).uniform(size=(20, 3))
    K = Z @ Z.T
    y = K[:, 0].astype(int)
    for est, X in [(TopKSVM(kernel="precomputed", random_state=1), K),
                   (TopKSVM(random_state=1), Z), (TopKSVM(random_state=1), sp.csr_matrix(Z))]:
        est.fit(X, y)
        full = est.decision_function(X)
        np.testing.assert_array_equal(full, np.vstack([est.decision_function(X[i:i + 1])
                                                       for i in range(20)]))
        np.testing.assert_array_equal(est.predict(X), np.concatenate([est.predict(X[i:i + 1])
                                                                      for i in range(20)]))


def test_unknown_test_labels_count_as_errors():
    X, y = blobs(40, 4, 3, seed=5)
    est = TopKSVM(k=1, random_state=0).fit(X, y)
    acc = est.score(X, y)
    y2 = y.copy()
    y2[:10] = 7
    expected = top_k_accuracy(y[10:], est.decision_function(X[10:]), 1) * 30 / 40
    assert est.score(X, y2) == pytest.approx(expected)
    assert est.score(X, y2) < acc or acc == 0


def test_sparse_and_dense_fit_identically():
    X, y = blobs(50, 7, 4, seed=6)
    X[np.abs(X) < 1.0] = 0.0
    a = TopKSVM(k=2, loss="beta", epsilon=1e-6, random_state=3).fit(X, y)
    b = TopKSVM(k=2, loss="beta", epsilon=1e-6, random_state=3).fit(sp.csr_matrix(X), y)
    np.testing.assert_array_equal(a.coef_, b.coef_)
    np.testing.assert_allclose(a.decision_function(sp.csr_matrix(X)), b.decision_function(X))


def test_precomputed_kernel():
    X, y = blobs(50, 4, 4, seed=9)
    Xt, _ = blobs(20, 4, 4, seed=19)
    lin = TopKSVM(k=2, epsilon=1e-6, random_state=1).fit(X, y)
    ker = TopKSVM(k=2, epsilon=1e-6, random_state=1, kernel="precomputed").fit(X @ X.T, y)
    assert not hasattr(ker, "coef_")
    np.testing.assert_allclose(ker.decision_function(Xt @ X.T), lin.decision_function(Xt),
                               rtol=1e-7, atol=1e-9)
    np.testing.assert_array_equal(ker.predict(Xt @ X.T), lin.predict(Xt))
    # a non-linear kernel works the same way
    rbf = lambda A, B: np.exp(-0.5 * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))
    est = TopKSVM(k=1, C=10.0, kernel="precomputed", epsilon=1e-4, random_state=0)
    est.fit(rbf(X, X), y)
    assert est.score(rbf(X, X), y) > 0.9
    with pytest.raises(ValueError, match="X has 4 features, but TopKSVM is expecting 50 "):
        ker.decision_function(Xt)
    with pytest.raises(ValueError, match="precomputed kernel needs 50 columns"):
        TopKSVM(kernel="precomputed").fit(X @ X.T[:, :20], y)
    # cross-validation slices a precomputed kernel by rows and columns (pairwise tag)
    from sklearn.model_selection import cross_val_score
    scores = cross_val_score(TopKSVM(k=1, kernel="precomputed", random_state=0), X @ X.T, y, cv=2)
    np.testing.assert_allclose(scores, cross_val_score(TopKSVM(k=1, random_state=0), X, y, cv=2))


@pytest.mark.parametrize("loss, k, m, seed", [("alpha", 1, 3, 0), ("beta", 2, 3, 0)]
                         + [("alpha", 2, 6, seed) for seed in range(6)])
def test_an_example_of_tiny_norm_does_not_stall_the_solver(loss, k, m, seed):
    """A row of norm 1e-12 makes its dual update project b ~ 1/K_ii ~ 1e24 times the
    budget: the projection's root lost x to rounding (or, with tied entries, fixed
    them all at 0), the row's duals stayed 0 and the gap stuck at C/P (ConvergenceWarning
    at max_epoch). A zero row was fine."""
    rng = np.random.default_rng(seed)
    X, y = rng.normal(size=(4 * m, 3)), rng.integers(0, m, 4 * m)
    fits = []
    for v in (0.0, 1e-12, 1e-15):
        X[0] = [v, 0.0, 0.0]
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            fits.append(TopKSVM(k=k, loss=loss, C=2.5e-5, max_epoch=200,
                                random_state=0).fit(X, y))
    for fit in fits[1:]:  # (the row's duals may be another maximiser: its norm is ~0)
        assert fit.duality_gap_ <= 1e-3 and fit.n_iter_ <= 50
        assert fit.dual_coef_[0].any()  # the row's losses count, as the zero row's do
        np.testing.assert_allclose(fit.coef_, fits[0].coef_, rtol=1e-3,
                                   atol=1e-3 * np.abs(fits[0].coef_).max())


def test_predictions_keep_the_k_of_the_fit():
    X, y = blobs(60, 4, 4, seed=3)
    est = TopKSVM(k=1, random_state=0).fit(X, y)
    before = est.score(X, y)
    est.set_params(k=2)
    assert est.score(X, y) == before and est.predict_topk(X).shape == (60, 1)
    assert est.k_ == 1 and est.predict_topk(X, k=2).shape == (60, 2)
    del est.k_, est.kernel_  # a model fitted before they were kept: its parameters
    assert est.predict_topk(X).shape == (60, 2) and est.decision_function(X).shape == (60, 4)


def test_classes_may_include_labels_without_examples():
    X, y = blobs(40, 3, 3, seed=5)
    est = TopKSVM(random_state=0).fit(X, y + 1, classes=[4, 3, 2, 1])  # (sorted on fit)
    assert est.classes_.tolist() == [1, 2, 3, 4] and est.decision_function(X).shape == (40, 4)
    np.testing.assert_array_equal(np.unique(est.predict(X)), [1, 2, 3])
    with pytest.raises(ValueError, match=r"classes: label 3 of y is not among the classes"):
        TopKSVM().fit(X, y + 1, classes=[1, 2, 4])
    with pytest.raises(ValueError, match=r"classes: expected a 1-d array of distinct labels"):
        TopKSVM().fit(X, y + 1, classes=[1, 1, 2, 3])


def test_random_state_takes_a_legacy_randomstate():
    X, y = blobs(40, 3, 3, seed=2)
    a = TopKSVM(random_state=np.random.RandomState(7)).fit(X, y)
    b = TopKSVM(random_state=np.random.RandomState(7)).fit(X, y)
    np.testing.assert_array_equal(a.coef_, b.coef_)


def test_convergence_warning_and_params():
    X, y = blobs(60, 4, 5, seed=0, spread=3.0)
    est = TopKSVM(k=2, C=100.0, epsilon=1e-12, max_epoch=2, random_state=0)
    with pytest.warns(ConvergenceWarning):
        est.fit(X, y)
    assert est.n_iter_ == 2
    params = est.get_params()
    assert params["k"] == 2 and params["max_epoch"] == 2
    clone = TopKSVM(**params)
    assert clone.get_params() == params
    assert "k=2" in repr(clone)
    est.set_params(k=3)
    assert est.k == 3


def test_topk_training_helps_topk_accuracy_on_training_loss():
    """The alpha loss at k=3 is pointwise below the k=1 loss, so its optimum (bounded
    below by the dual) is below the k=3 objective of the k=1 solution."""
    X, y = blobs(80, 12, 6, seed=4, spread=2.0)
    e1 = TopKSVM(k=1, epsilon=1e-4, max_epoch=5000, random_state=0).fit(X, y)
    e3 = TopKSVM(k=3, epsilon=1e-4, max_epoch=5000, random_state=0).fit(X, y)
    assert e3.dual_objective_ <= objective(e1.coef_, X, y, 1.0, k=3)
    assert e3.primal_objective_ < e1.dual_objective_


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("params, match", [
    ({"k": 0}, "k must be an integer >= 1"),
    ({"k": 1.5}, "k must be an integer"),
    ({"k": 4}, r"k must be smaller than the number of classes \(4\)"),
    ({"k": 9}, "k must be smaller"),
    ({"loss": "gamma"}, "loss must be one of"),
    ({"C": 0.0}, "C must be positive"),
    ({"C": float("nan")}, "C must be a finite number"),
    ({"epsilon": -1.0}, "epsilon must be positive"),
    ({"max_epoch": 0}, "max_epoch must be an integer >= 1"),
    ({"check_gap_every": 0}, "check_gap_every"),
    ({"kernel": "rbf"}, "kernel must be one of"),
    ({"verbose": "x"}, "verbose must be an integer >= 0"),
])
def test_bad_parameters(params, match):
    X, y = blobs(20, 3, 4, seed=0)
    with pytest.raises(ValueError, match=match):
        TopKSVM(**params).fit(X, y)


def test_bad_data():
    X, y = blobs(20, 3, 4, seed=0)
    with pytest.raises(ValueError, match="at least 2 classes, got 1 class"):
        TopKSVM().fit(X, np.zeros(20))
    with pytest.raises(ValueError, match="requires y to be passed"):
        TopKSVM().fit(X, None)
    with pytest.raises(ValueError, match="Reshape your data"):
        TopKSVM().fit(X[:, 0], y)
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="X: contains NaN"):
        TopKSVM().fit(bad, y)
    with pytest.raises(ValueError, match="X: contains NaN"):
        TopKSVM().fit(sp.csr_matrix(bad), y)
    with pytest.raises(ValueError, match=r"y: expected shape \(20,\)"):
        TopKSVM().fit(X, y[:5])
    with pytest.raises(ValueError, match="y: contains NaN"):
        TopKSVM().fit(X, np.where(y == 0, np.nan, y))
    with pytest.raises(ValueError, match="y: labels must be mutually comparable"):
        TopKSVM().fit(X, np.array([1, "a"] * 10, dtype=object))
    # hashable labels without a total order came out of np.unique repeated (28 classes
    # of 3); NaN inside an object column made a class per NaN
    for labels in ([frozenset({1}), frozenset({2}), frozenset({3}), frozenset({4})],
                   [np.nan, 1.0, 2.0, 3.0]):
        column = np.empty(4, dtype=object)
        column[:] = labels
        with pytest.raises(ValueError, match="^y: (labels must be totally ordered|contains NaN)"):
            TopKSVM().fit(X, column[y])
    lists = np.empty(4, dtype=object)  # (unhashable labels that compare: still classes)
    lists[:] = [[0], [1], [2], [3]]
    assert len(TopKSVM(random_state=0).fit(X, lists[y]).classes_) == 4

    class Missing:  # (like pandas.NA: its truth is undefined)
        def __ne__(self, other):
            raise TypeError("boolean value of NA is ambiguous")
        __eq__ = __ne__
        __hash__ = object.__hash__

    column[:] = [Missing(), 1, 2, 3]
    with pytest.raises(ValueError, match="^y: contains NaN or missing labels"):
        TopKSVM().fit(X, column[y])
    with pytest.raises(AttributeError, match="not fitted"):
        TopKSVM().predict(X)
    est = TopKSVM(random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="X has 2 features"):
        est.predict(X[:, :2])
    with pytest.raises(ValueError, match="k must be at most the number of classes"):
        est.predict_topk(X, 5)


# ---------------------------------------------------------------------------
# top_k_accuracy against its definition
# ---------------------------------------------------------------------------

def brute_topk_hit(y, scores, k):
    """Sort classes by (score desc, index asc) and look for y among the first k."""
    hits = []
    for yi, row in zip(y, scores):
        order = sorted(range(len(row)), key=lambda j: (-row[j], j))
        hits.append(yi in order[:k])
    return np.mean(hits)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), ties=st.booleans())
def test_top_k_accuracy_matches_definition(seed, ties):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(1, 30)), int(rng.integers(2, 12))
    S = rng.normal(size=(n, m))
    if ties:
        S = np.round(S)
    y = rng.integers(0, m, size=n)
    accs = top_k_accuracies(y, S, range(1, m + 1))
    for k in range(1, m + 1):
        assert accs[k - 1] == pytest.approx(brute_topk_hit(y, S, k))
        assert top_k_accuracy(y, S, k) == accs[k - 1]
    assert accs[-1] == 1.0 and np.all(np.diff(accs) >= 0)
    assert accs[0] == pytest.approx(np.mean(np.argmax(S, axis=1) == y))


def test_top_k_accuracy_with_class_labels_and_errors():
    S = np.array([[0.1, 0.5, 0.2], [0.3, 0.3, 0.0], [0.0, 0.0, 0.0]])
    assert top_k_accuracies([1, 1, 2], S).shape == (3,)  # the default ks stop at m
    classes = np.array([10, 20, 30])
    assert top_k_accuracy([20, 20, 30], S, 1, classes) == pytest.approx(1 / 3)
    assert top_k_accuracy([20, 20, 30], S, 2, classes) == pytest.approx(2 / 3)
    assert top_k_accuracy([1, 1, 2], S, 2) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="k must be an integer in 1..3"):
        top_k_accuracy([0, 1, 2], S, 4)
    with pytest.raises(ValueError, match="k must be an integer"):
        top_k_accuracy([0, 1, 2], S, 0)
    with pytest.raises(ValueError, match="label 40 is not one of classes"):
        top_k_accuracy([10, 40, 20], S, 1, classes)
    with pytest.raises(ValueError, match="scores: expected a 2-d array"):
        top_k_accuracy([0], [0.1, 0.2], 1)
    with pytest.raises(ValueError, match="scores: contains NaN"):
        top_k_accuracy([0], [[np.nan, 0.2]], 1)
    with pytest.raises(ValueError, match=r"y_true: expected shape \(3,\)"):
        top_k_accuracy([0, 1], S, 1)
    with pytest.raises(ValueError, match="classes: expected 3 labels"):
        top_k_accuracy([0, 1, 2], S, 1, [0, 1])
    with pytest.raises(ValueError, match="classes: expected distinct labels"):  # (was silent)
        top_k_accuracy([1, 1, 2], S, 1, [1, 1, 2])


@pytest.mark.parametrize("loss", ["alpha", "beta"])
def test_dual_stays_in_its_set_when_K_C_is_tiny(loss):
    """With K_ii C ~ 1e-13 the projection's rounding (relative to b ~ 1 / K_ii) used to
    leave <1, x> above C: a dual point outside the set, a negative duality gap, and a
    run declared converged. The dual now stays feasible, so D <= P."""
    rng = np.random.default_rng(1)
    n, m = 200, 50
    y = np.arange(n) % m
    X = rng.normal(size=(m, 5))[y] + rng.normal(size=(n, 5))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    C = 1e-13
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # (it may not converge there)
        est = TopKSVM(k=2, loss=loss, C=C, max_epoch=20, random_state=0).fit(X, y)
    assert est.dual_coef_[np.arange(n), y].max() <= C * (1 + 1e-12)
    assert est.duality_gap_ >= -1e-12


def test_labels_of_another_kind_and_bad_classes_are_refused():
    """Review 22: score and eval_set on string labels of a numeric model returned 0.0
    silently (early stopping then stopped on zeros); classes= took NaN and inf."""
    import warnings
    from sklearn.datasets import load_iris
    X, y = load_iris(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = TopKSVM(random_state=0, max_epoch=20).fit(X, y)
    with pytest.raises(ValueError, match=r"^y: string labels, but the classes \(classes_\) "
                                         r"are numbers"):
        model.score(X, y.astype(str))
    with pytest.raises(ValueError, match="^eval_set y_val: string labels"):
        TopKSVM(random_state=0).fit(X, y, eval_set=(X, y.astype(str)))
    assert model.score(X, y.astype(float)) == model.score(X, y)
    for extra in (np.nan, np.inf):
        with pytest.raises(ValueError, match="^classes: contains NaN, infinite or missing"):
            TopKSVM().fit(X, y, classes=[0, 1, 2, extra])
    with pytest.raises(ValueError, match="^classes: contains NaN, infinite or missing"):
        TopKSVM().fit(X, y.astype(str), classes=["0", "1", "2", None])


def test_object_labels_of_another_kind_are_refused():
    """Review 22b: pandas (object) labels skipped the kind check and scored 0.0."""
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3)) + np.repeat(np.eye(3) * 3, 20, axis=0)
    ints, names = np.repeat([1, 2, 3], 20), pd.Series(np.repeat(["a", "b", "c"], 20))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        on_names = TopKSVM(random_state=0, max_epoch=20).fit(X, names)
        on_ints = TopKSVM(random_state=0, max_epoch=20).fit(X, ints)
    with pytest.raises(ValueError, match="^y: number labels, but the classes"):
        on_names.score(X, pd.Series(ints, dtype=object))
    with pytest.raises(ValueError, match="^y: string labels, but the classes"):
        on_ints.score(X, names)
    assert on_names.score(X, names) == on_names.score(X, names.to_numpy(str))
