"""AP-SVM-APPX (2014 paper, §3.3): the easy/difficult split and the two-stage fit."""
import numpy as np
import pytest

from svmrank import APSVM, RankSVM
from svmrank.datasets import make_ranking
from svmrank.learners.cutting_plane import cutting_plane
from svmrank.problems.appx import APPX_BIAS, APPXProblem, split_easy
from svmrank.problems.binary import BinaryProblem


def test_split_keeps_the_top_k_percent_of_easy_samples_by_margin():
    margins = np.array([3.0, 0.5, 1.0, 2.0, -1.0, 5.0, 1.5, 0.99])
    # easy (margin >= 1): indices 0, 2, 3, 5, 6 -> by margin 5, 0, 3, 6, 2
    np.testing.assert_array_equal(np.flatnonzero(split_easy(margins, 100)), [0, 2, 3, 5, 6])
    np.testing.assert_array_equal(np.flatnonzero(split_easy(margins, 60)), [0, 3, 5])
    np.testing.assert_array_equal(np.flatnonzero(split_easy(margins, 50)), [0, 5])  # floor(2.5)
    assert not split_easy(margins, 0).any()


@pytest.mark.parametrize("bad", [-1, 101, np.nan, "50", True])
def test_bad_approx(bad):
    with pytest.raises(ValueError, match="approx"):
        split_easy(np.ones(3), bad)


@pytest.fixture(scope="module")
def data():
    X, y, _ = make_ranking(n_samples=600, n_features=15, positive_fraction=0.15, random_state=3)
    return X, y


def appx_problem(X, y, approx, C):
    """Stage 2 as ``APSVM(C=C, approx=approx)`` builds it: stage 1 is the binary SVM with
    the estimator's default epsilon and max_iter."""
    w0 = cutting_plane(BinaryProblem(X, y, bias=APPX_BIAS), C, 1e-3, max_iter=10000).w
    return APPXProblem(X, y, w0, approx=approx)


@pytest.mark.parametrize("k", [25, 50, 75])
def test_easy_samples_satisfy_their_hard_constraints(data, k):
    X, y = data
    model = APSVM(C=10.0, approx=k).fit(X, y)
    appx = appx_problem(X, y, approx=k, C=10.0)
    assert model.n_easy_ == appx.easy.sum() > 0
    sign = np.where(y > 0, 1.0, -1.0)
    margins = sign[appx.easy] * model.decision_function(X[appx.easy])
    assert margins.min() >= 1.0 - 1e-6
    assert model.score(X, y) > 0.6


def test_approx_zero_is_the_exact_problem(data):
    """No easy sample: stage 2 is the plain AP-SVM (the bias feature sees no gradient)."""
    X, y = data
    exact = APSVM(C=10.0, epsilon=1e-8).fit(X, y)
    appx = APSVM(C=10.0, epsilon=1e-8, approx=0).fit(X, y)
    np.testing.assert_allclose(appx.coef_, exact.coef_, atol=1e-3)
    assert appx.intercept_ == pytest.approx(0.0, abs=1e-9)


def test_stage1_solution_is_feasible_for_stage2(data):
    X, y = data
    appx = appx_problem(X, y, approx=75, C=10.0)
    A, b = appx.hard_constraints
    assert np.all(A @ appx.w0 >= b - 1e-9)


def test_difficult_set_without_a_class_is_refused():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 2))
    y = (X[:, 0] > 0).astype(float)
    X[:, 0] *= 100  # separable with a huge margin: every sample is easy
    with pytest.raises(ValueError, match="approx"):
        APSVM(C=10.0, approx=100).fit(X, y)


def test_params_and_other_losses(data):
    X, y = data
    assert APSVM(approx=50).get_params()["approx"] == 50
    assert RankSVM(loss="ndcg", approx=50).set_params(approx=25).approx == 25
    model = RankSVM(loss="ndcg", C=10.0, approx=50, lai="select").fit(X, y)
    assert model.score(X, y) > 0.6


def test_cli_approx_option(data, tmp_path, capsys):
    from svmrank.cli import ap_learn
    from svmrank.io.model_file import read_model
    from svmrank.io.svmlight import dump_svmlight
    X, y = data
    train, model = tmp_path / "train.dat", tmp_path / "model"
    dump_svmlight(train, X, y)
    assert ap_learn.main(["-c", "10", "-e", "0.001", "-v", "0", "--approx", "50",
                          str(train), str(model)]) == 0
    m = read_model(model)
    expected = APSVM(C=10.0, epsilon=0.001, approx=50).fit(X, y)
    np.testing.assert_allclose(m.w[:X.shape[1]], expected.coef_, atol=1e-8)
    assert ap_learn.main(["--approx", "150", str(train), str(model)]) != 0
    assert "--approx" in capsys.readouterr().err


def test_options_and_labels_are_checked_before_stage_one(data, capsys):
    X, y = data
    for model, match in [(RankSVM(approx=50, lai="bogus", verbose=1), "lai must be one of"),
                         (RankSVM(approx=50, loss="bogus", verbose=1), "loss must be one of"),
                         (RankSVM(approx=50, loss="ndcg", lai="search", verbose=1),
                          "lai 'search' needs a loss whose f_j is unimodal")]:
        with pytest.raises(ValueError, match=match):
            model.fit(X, y)
        assert capsys.readouterr().out == ""  # no stage-1 iteration was printed
    with pytest.raises(ValueError, match=r"^y: needs a relevant and a non-relevant sample; "
                                         r"got one class \(1.0\)"):
        APSVM(approx=0).fit(X, np.ones(len(y)))


def test_hard_rows_stay_sparse_on_wide_data():
    # the easy samples' rows were made dense over every feature before being cut to the
    # planes' columns: 111 rows x 2e6 features took 1.8 GB here
    import tracemalloc

    import scipy.sparse as sp
    rng = np.random.default_rng(0)
    n, d = 300, 2_000_000
    cols = rng.integers(0, d, size=n * 5)
    X = sp.csr_matrix((rng.normal(size=n * 5), (np.repeat(np.arange(n), 5), cols)), shape=(n, d))
    y = (np.asarray(X[:, cols[:200]].sum(axis=1)).ravel() + 0.1 * rng.normal(size=n) > 0)
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        model = APSVM(C=100.0, approx=100).fit(X, y.astype(int))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        if started:
            tracemalloc.stop()
    assert model.n_easy_ > 50
    assert peak < 600e6, f"peak {peak / 1e6:.0f} MB"


def test_stage_two_refuses_stage_one_weights_of_the_wrong_length(data):
    X, y = data
    with pytest.raises(ValueError, match="w0: expected length 16"):
        APPXProblem(X, y, np.zeros(X.shape[1]), approx=50)


def test_problems_import_no_learner():
    """A problem knows no solver: the estimator runs APPX's stage 1."""
    import ast
    from pathlib import Path

    import svmrank.problems
    for path in Path(svmrank.problems.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] + [alias.name for alias in node.names]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            assert not any("learners" in name.split(".") for name in names), \
                f"{path.name} imports a learner"
