"""HOB-SVM and HOAP-SVM: joint features, loss-augmented inference against brute force,
the CCCP pieces, the η = 0 baselines, and bad input."""
import itertools
import re
import warnings

import numpy as np
import pytest

from svmrank.datasets import make_grouped
from sklearn.exceptions import NotFittedError

from svmrank.estimators.high_order import HOAPSVM, HOBSVM
from svmrank.io import from_model, to_model
from svmrank.exceptions import ConvergenceWarning
from svmrank.estimators.ranking import APSVM, BinarySVM
from svmrank.graph import edges_from_groups, max_marginals
from svmrank.inference import loss_augmented_inference, true_coef
from svmrank.problems.high_order import (HighOrderFeatures, HOAPPairProblem, HOAPProblem,
                                         HOBProblem, LabellingSet, hoap_true_objective)


def tiny(seed, n=6, d=3, sparse_pairs=0.5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X[rng.random((n, d)) < 0.3] = 0.0
    edges = np.array([(u, v) for u in range(n) for v in range(u + 1, n)
                      if rng.random() < sparse_pairs], dtype=np.int64).reshape(-1, 2)
    y = np.zeros(n)
    y[rng.permutation(n)[:max(1, n // 3)]] = 1.0
    return rng, X, y, edges


def random_w(rng, f):
    w = rng.normal(size=f.n_features)
    w[f.pairwise_slice] = -np.abs(w[f.pairwise_slice])
    return w


def labellings(n):
    return np.array(list(itertools.product([0, 1], repeat=n)), dtype=np.int64)


def reference_joint_feature(X, edges, eta, pf, y):
    """Eq. 4-5 written out, with the bias column already in X."""
    pos = X[y == 1].sum(axis=0)
    neg = X[y == 0].sum(axis=0)
    pair = np.zeros(len(pf))
    for u, v in edges:
        if y[u] != y[v]:
            pair += np.exp(-(X[u, pf] - X[v, pf]) ** 2)
    return np.concatenate([pos, neg, eta * pair])


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("bias, pairwise", [(1.0, None), (0.0, [0, 2]), (2.5, [1])])
def test_dot_w_joint_feature_equals_score_for_every_labelling(seed, bias, pairwise):
    rng, X, _, edges = tiny(seed)
    eta = float(rng.choice([0.0, 0.3, 2.0]))
    f = HighOrderFeatures(X, edges, eta=eta, pairwise_features=pairwise, bias=bias)
    Xa = np.column_stack([X, np.full(len(X), bias)]) if bias else X
    pf = list(range(X.shape[1])) if pairwise is None else list(pairwise)
    if bias:
        pf.append(X.shape[1])
    w = random_w(rng, f)
    for y in labellings(len(X)):
        psi = f.joint_feature(y)
        assert np.allclose(psi, reference_joint_feature(Xa, edges, eta, pf, y), atol=1e-12)
        assert w @ psi == pytest.approx(f.score(w, y), abs=1e-10)


@pytest.mark.parametrize("seed", range(8))
def test_hob_most_violated_is_the_brute_force_argmax(seed):
    rng, X, y, edges = tiny(seed, n=7)
    f = HighOrderFeatures(X, edges, eta=1.5)
    problem = HOBProblem(f, y)
    w = random_w(rng, f) * rng.choice([0.1, 1.0, 10.0])
    n = len(y)
    J = (n - y.sum()) / y.sum()
    objective = []
    for yy in labellings(n):
        loss = (J * np.sum((y == 1) & (yy == 0)) + np.sum((y == 0) & (yy == 1))) / (J * y.sum() + n - y.sum())
        assert problem.loss(yy) == pytest.approx(loss)
        objective.append(loss + w @ f.joint_feature(yy) / n)
    loss, g = problem.most_violated(w)
    psi_true = f.joint_feature(y) / n
    assert loss - w @ g == pytest.approx(max(objective) - w @ psi_true, abs=1e-10)


@pytest.mark.parametrize("seed", range(6))
def test_hoap_scores_constraint_and_tightness(seed):
    rng, X, y, edges = tiny(seed, n=7)
    f = HighOrderFeatures(X, edges, eta=0.8)
    w_t = random_w(rng, f)
    fixed = LabellingSet.from_max_marginals(f.max_marginals(w_t), (y > 0).astype(np.uint8))
    # the fixed labellings carry the wanted label and score their max-marginal at w_t
    m0, m1 = max_marginals(f.unary(w_t), f.pairs, f.edge_weights(w_t))
    dense = fixed.reference + fixed.flips.toarray()
    fixed_scores = fixed.scores(f, w_t)
    for k in range(len(y)):
        assert dense[k, k] == (y[k] > 0)
        assert fixed_scores[k] == pytest.approx(f.score(w_t, dense[k].astype(int)), abs=1e-10)
        assert fixed_scores[k] == pytest.approx(m1[k] if y[k] > 0 else m0[k], abs=1e-10)
    problem = HOAPProblem(f, y, fixed, lai="greedy")
    # tight at w_t: s̄ = m⁺ − m⁻ (Prop. 4)
    s_bar, _ = problem.surrogate_scores(w_t)
    assert np.allclose(s_bar, m1 - m0, atol=1e-10)
    # at another w: the constraint's w·g is F(R*) − F(R̂) on s̄, and the violation is
    # the AP inference objective minus F(R*) (Prop. 5)
    w = random_w(rng, f)
    s_bar, _ = problem.surrogate_scores(w)
    loss, g = problem.most_violated(w)
    res = loss_augmented_inference(s_bar, y, loss="ap", method="greedy")
    rel = y > 0
    assert loss == pytest.approx(res.loss)
    assert w @ g == pytest.approx(true_coef(rel) @ s_bar - res.coef @ s_bar, abs=1e-10)
    assert loss - w @ g == pytest.approx(res.objective - true_coef(rel) @ s_bar, abs=1e-10)
    # g = Σ a_k (Ψ(Ȳ_k) − Ψ(Y_k(w))) written out labelling by labelling
    _, current = problem.surrogate_scores(w)
    delta = true_coef(rel) - res.coef
    a = np.where(rel, delta, -delta)
    cur = current.reference + current.flips.toarray()
    g_ref = sum(a[k] * (f.joint_feature(dense[k]) - f.joint_feature(cur[k])) for k in range(len(y)))
    assert np.allclose(g, g_ref, atol=1e-10)


def hoap_objective(f, y, w, C):
    """HOAP-SVM's true objective ½‖w‖² + C ξ(w): the convex step fixed at w itself
    is tight at w (Prop. 4)."""
    fixed = LabellingSet.from_max_marginals(f.max_marginals(w), (y > 0).astype(np.uint8))
    loss, g = HOAPProblem(f, y, fixed).most_violated(w)
    return 0.5 * w @ w + C * max(0.0, loss - w @ g)


@pytest.mark.parametrize("seed", range(6))
def test_hoap_pair_problem_against_the_labellings(seed):
    # s̄_k(w) = σ_k w·(Ψ(Ŷ ⊕ F_k) − Ψ(Ŷ)) written out labelling by labelling: at w_t it is
    # m⁺ − m⁻, and the constraint's g is Σ_k δc_k ∂s̄_k/∂w
    rng, X, y, edges = tiny(seed, n=7)
    f = HighOrderFeatures(X, edges, eta=0.8)
    w_t = random_w(rng, f)
    mm = f.max_marginals(w_t)
    problem = HOAPPairProblem(f, y, mm, lai="greedy")
    m0, m1 = max_marginals(f.unary(w_t), f.pairs, f.edge_weights(w_t))
    assert np.allclose(problem.scores(w_t), m1 - m0, atol=1e-10)
    flipped = mm.labelling + mm.flips.toarray()
    diff = np.array([f.joint_feature(flipped[k]) - f.joint_feature(mm.labelling)
                     for k in range(len(y))])
    diff *= np.where(mm.labelling > 0, -1.0, 1.0)[:, None]
    w = random_w(rng, f)
    assert np.allclose(problem.scores(w), diff @ w, atol=1e-10)
    loss, g = problem.most_violated(w)
    res = loss_augmented_inference(diff @ w, y, loss="ap", method="greedy")
    assert loss == pytest.approx(res.loss)
    assert np.allclose(g, diff.T @ (true_coef(y > 0) - res.coef), atol=1e-10)
    # the true objective at w_t is the tight CCCP bound's there
    assert hoap_true_objective(f, y > 0, w_t, 3.0)[0] == pytest.approx(
        hoap_objective(f, y, w_t, 3.0), abs=1e-10)


def test_hoap_pair_problem_with_eta_zero_is_ap_svm():
    rng, X, y, edges = tiny(3, n=9)
    f = HighOrderFeatures(X, edges, eta=0.0, bias=0.0)
    mm = f.max_marginals(random_w(rng, f))
    w = random_w(rng, f)
    d = X.shape[1]
    assert np.allclose(HOAPPairProblem(f, y, mm).scores(w), X @ (w[:d] - w[d:2 * d]), atol=1e-12)


@pytest.mark.parametrize("step", ["local", "bound"])
@pytest.mark.parametrize("seed", range(2))
def test_hoap_cccp_decreases_the_objective(seed, step):
    X, y, groups = make_grouped(n_samples=40, n_features=4, n_groups=10, random_state=seed)
    edges = edges_from_groups(groups)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = HOAPSVM(C=10.0, eta=1.0, cccp_tol=0.0, cccp_max_iter=3,
                      cccp_step=step).fit(X, y, edges=edges)
    h = np.array(est.history_)
    assert np.all(np.diff(h) <= 1e-12)            # the convex steps' objectives
    f = HighOrderFeatures(X, edges, eta=1.0)
    start = hoap_objective(f, y, est.init_coef_, 10.0)
    end = hoap_objective(f, y, est.coef_, 10.0)
    # the true objective: at most the last step's (an upper bound), which is at most
    # the start's (each step starts at the previous iterate, where it is tight)
    assert end <= est.objective_ + 1e-9 and est.objective_ <= start + 1e-9


def test_hob_with_eta_zero_and_J_one_is_the_binary_svm():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 5))
    y = (X[:, 0] + 0.8 * rng.normal(size=80) > 0.7).astype(float)
    hob = HOBSVM(C=3.0, eta=0.0, J=1.0, epsilon=1e-7).fit(X, y)
    svm = BinarySVM(C=6.0, epsilon=1e-7).fit(X, y)
    assert np.allclose(hob.unary_coef_, np.r_[svm.coef_, svm.intercept_], atol=1e-5)
    # without edges the ranking score is the linear score
    assert np.allclose(hob.decision_function(X), svm.decision_function(X), atol=1e-4)


def test_hoap_with_eta_zero_keeps_the_ap_svm_solution():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 4))
    y = (X[:, 0] + rng.normal(size=60) > 0.8).astype(float)
    ap = APSVM(C=4.0, epsilon=1e-8).fit(X, y)
    d = X.shape[1]
    w0 = np.r_[ap.coef_ / 2, -ap.coef_ / 2, 0.0 * np.zeros(d)]
    ho = HOAPSVM(C=2.0, eta=0.0, bias=0.0, init=w0, epsilon=1e-8, cccp_tol=1e-10).fit(X, y)
    assert np.allclose(ho.unary_coef_, ap.coef_, atol=1e-4)
    assert ho.objective_ == pytest.approx(ap.objective_ / 2, rel=1e-4)
    assert np.allclose(ho.decision_function(X), X @ ap.coef_, atol=1e-4)


def test_hoap_local_step_with_eta_zero_reaches_the_ap_svm_optimum():
    # its rounds are AP-SVM's problem itself: from HOB-SVM's start, one round gets there
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 4))
    y = (X[:, 0] + rng.normal(size=60) > 0.8).astype(float)
    ap = APSVM(C=4.0, epsilon=1e-8).fit(X, y)
    ho = HOAPSVM(C=2.0, eta=0.0, bias=0.0, epsilon=1e-8, cccp_tol=1e-10).fit(X, y)
    assert ho.converged_
    assert ho.objective_ == pytest.approx(ap.objective_ / 2, rel=1e-4)
    assert np.allclose(ho.unary_coef_, ap.coef_, atol=1e-3)


def test_high_order_estimators_use_the_edges():
    X, y, groups = make_grouped(n_samples=160, n_features=8, n_groups=30, homophily=0.95,
                                separation=0.8, random_state=3)
    Xt, yt, gt = make_grouped(n_samples=160, n_features=8, n_groups=30, homophily=0.95,
                              separation=0.8, random_state=4)
    E, Et = edges_from_groups(groups), edges_from_groups(gt)
    flat = HOBSVM(C=10.0, eta=0.0).fit(X, y, edges=E)
    hob = HOBSVM(C=10.0, eta=1.0).fit(X, y, edges=E)
    assert (hob.pairwise_coef_ <= 0).all() and hob.pairwise_coef_.min() < 0
    assert hob.score(Xt, yt, edges=Et) > flat.score(Xt, yt, edges=Et) + 0.05
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hoap = HOAPSVM(C=10.0, eta=1.0, cccp_max_iter=3).fit(X, y, edges=E)
    assert (hoap.pairwise_coef_ <= 0).all()
    assert hoap.score(Xt, yt, edges=Et) > flat.score(Xt, yt, edges=Et) + 0.05
    # the decision function is the max-marginal difference of the test graph
    f = HighOrderFeatures(Xt, Et, eta=1.0)
    m0, m1 = max_marginals(f.unary(hoap.coef_), f.pairs, f.edge_weights(hoap.coef_))
    assert np.allclose(hoap.decision_function(Xt, edges=Et), m1 - m0)
    assert set(np.unique(hoap.predict(Xt, edges=Et))) <= {0, 1}
    # a test set without a non-relevant (or relevant) sample scored 1.0 (or NaN
    # silently): undefined, with a warning, as the other estimators' score
    for labels in (np.ones(len(yt)), np.zeros(len(yt))):
        with pytest.warns(UserWarning, match=r"undefined \(NaN\) on every query"):
            assert np.isnan(hob.score(Xt, labels, edges=Et))


def test_params_protocol():
    est = HOAPSVM(C=2.0, eta=0.5, pairwise_features=[0, 1])
    params = est.get_params()
    assert params["C"] == 2.0 and params["eta"] == 0.5 and params["pairwise_features"] == [0, 1]
    assert HOBSVM().set_params(eta=3.0).eta == 3.0
    with pytest.raises(ValueError, match="(?i)invalid parameter"):
        HOBSVM().set_params(gamma=1)


@pytest.mark.parametrize("make, match", [
    (lambda: HOBSVM(eta=-1.0), "eta must be non-negative"),
    (lambda: HOBSVM(C=0.0), "C must be positive"),
    (lambda: HOBSVM(pairwise_features=[0, 9]), r"pairwise_features: indices must lie in \[0, 3\)"),
    (lambda: HOAPSVM(init="random"), "init must be"),
    (lambda: HOAPSVM(cccp_step="exact"), "cccp_step must be 'local' or 'bound'"),
    (lambda: HOAPSVM(init_C=0.0), "init_C must be positive"),
    (lambda: HOAPSVM(init_C="x"), "init_C must be a finite number"),
    (lambda: HOAPSVM(init="zero", init_C=-1.0), "init_C must be positive"),
    (lambda: HOBSVM(verbose="x"), "verbose must be an integer >= 0"),
    (lambda: HOAPSVM(verbose=-1), "verbose must be an integer >= 0"),
])
def test_bad_parameters(make, match):
    _, X, y, edges = tiny(0, n=6)
    with pytest.raises(ValueError, match=match):
        make().fit(X, y, edges=edges)


def test_zero_start_without_bias_is_refused():
    # From w = 0 with no bias, the labellings imputed at w = 0 make w = 0 optimal again
    # (Ȳ_i⁺ of a tied labelling lifts the negatives with any move), so CCCP would end
    # there; on 1200 samples with 2400 edges its convex solve ran for many minutes.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] + 0.5 * rng.normal(size=40) > 0.3).astype(int)
    # unary part w₁⁺ − w₁⁻ = 0 ties every sample however the pairwise block is set
    for init in ("zero", np.zeros(9), np.r_[np.zeros(6), -np.ones(3)], np.r_[np.ones(6), 0, 0, 0]):
        with pytest.raises(ValueError, match=r"with bias=0: a start whose unary part .* is 0"):
            HOAPSVM(C=1.0, eta=1.0, bias=0.0, init=init).fit(X, y, edges=[[0, 1], [1, 2]])
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        assert np.any(HOAPSVM(C=1.0, eta=0.0, bias=0.0).fit(X, y).coef_)
        assert np.any(HOAPSVM(C=1.0, eta=0.0, bias=1.0, init="zero").fit(X, y).coef_)


def test_a_fit_ending_at_w_zero_warns(monkeypatch):
    import svmrank.estimators.high_order as module
    real = module.cccp

    def to_zero(impute, solve, w0, **kwargs):
        result = real(impute, solve, w0=w0, **kwargs)
        result.w[:] = 0.0
        return result
    monkeypatch.setattr(module, "cccp", to_zero)
    _, X, y, edges = tiny(0, n=6)
    with pytest.warns(ConvergenceWarning, match="ended with a unary part .* = 0, which ties"):
        HOAPSVM(C=1.0).fit(X, y, edges=edges)


def test_bad_data():
    _, X, y, edges = tiny(0, n=6)
    with pytest.raises(ValueError, match="edges: edge 0 .* outside"):
        HOBSVM().fit(X, y, edges=[[0, 6]])
    with pytest.raises(ValueError, match="self loop"):
        HOBSVM().fit(X, y, edges=[[2, 2]])
    Xn = X.copy()
    Xn[1, 1] = np.nan
    with pytest.raises(ValueError, match="X: contains NaN"):
        HOBSVM().fit(Xn, y, edges=edges)
    with pytest.raises(ValueError, match="needs a relevant and a non-relevant sample"):
        HOAPSVM().fit(X, np.zeros(6), edges=edges)
    with pytest.raises(ValueError, match="at least one relevant"):
        HOAPSVM().fit(X, -np.arange(6), edges=edges)
    with pytest.raises(NotFittedError, match="not fitted"):
        HOBSVM().decision_function(X)
    est = HOBSVM(C=1.0).fit(X, y, edges=edges)
    with pytest.raises(ValueError, match="X has 2 features"):
        est.decision_function(X[:, :2])


def test_predictions_keep_the_fitted_layout():
    """set_params after fit changes nothing until the next fit (the scores use the η,
    pairwise features and bias that coef_ was fitted with)."""
    _, X, y, edges = tiny(1, n=8)
    est = HOBSVM(C=3.0, eta=0.8).fit(X, y, edges=edges)
    before = est.decision_function(X, edges=edges)
    est.set_params(bias=0.0, eta=3.0, pairwise_features=[0])
    np.testing.assert_array_equal(est.decision_function(X, edges=edges), before)


def test_model_metadata_read_by_index_and_checked():
    _, X, y, edges = tiny(2, n=8)
    est = HOBSVM(C=3.0, pairwise_features=[0, 2]).fit(X, y, edges=edges)
    model = to_model(est)
    tokens = model.metadata["pairwise"].split(",")
    model.metadata["pairwise"] = ",".join(reversed(tokens))  # order does not matter
    np.testing.assert_allclose(from_model(model).decision_function(X, edges=edges),
                               est.decision_function(X, edges=edges))
    for bad, match in ((tokens + tokens[:1], "listed twice"),
                       ([t for t in tokens if not t.startswith("b:")], "missing with one"),
                       (tokens + ["3:-1"], r"pairwise feature 3 outside 0\.\.2")):
        model.metadata["pairwise"] = ",".join(bad)
        with pytest.raises(ValueError, match=match):
            from_model(model)


def test_model_file_round_trip_and_console_scripts(tmp_path, capsys):
    from svmrank.cli import ap_classify, ap_learn
    from svmrank.io.model_file import read_model, write_model
    from svmrank.io.svmlight import dump_svmlight
    X, y, groups = make_grouped(n_samples=90, n_features=5, n_groups=20, random_state=5)
    E = edges_from_groups(groups)
    est = HOBSVM(C=5.0, eta=0.7, pairwise_features=[1, 3]).fit(X, y, edges=E)
    write_model(tmp_path / "m.txt", to_model(est))
    back = from_model(read_model(tmp_path / "m.txt"))
    assert isinstance(back, HOBSVM) and back.eta == 0.7
    assert np.allclose(back.decision_function(X, edges=E), est.decision_function(X, edges=E),
                       atol=1e-6)
    # console scripts: groups from a comment key, edges from a file
    dump_svmlight(tmp_path / "train.dat", X, y, comments=[f"img={g}" for g in groups])
    np.savetxt(tmp_path / "train.edges", E, fmt="%d")
    assert ap_learn.main(["--model", "hob", "--groups", "img", "-c", "5", "-v", "0",
                          str(tmp_path / "train.dat"), str(tmp_path / "hob.model")]) == 0
    for opts in (["--groups", "img"], ["--edges", str(tmp_path / "train.edges")]):
        assert ap_classify.main(opts + ["-v", "0", str(tmp_path / "train.dat"),
                                        str(tmp_path / "hob.model"), str(tmp_path / "out.txt")]) == 0
        scores = np.loadtxt(tmp_path / "out.txt")
        model = from_model(read_model(tmp_path / "hob.model"))
        assert np.allclose(scores, model.decision_function(X, edges=E), atol=1e-6)
    capsys.readouterr()  # both links options: one would be ignored silently, so refused
    assert ap_classify.main(["--groups", "img", "--edges", str(tmp_path / "train.edges"), "-v",
                             "0", str(tmp_path / "train.dat"), str(tmp_path / "hob.model"),
                             str(tmp_path / "both.txt")]) == 2
    assert "--edges and --groups: give one of them" in capsys.readouterr().err
    assert not (tmp_path / "both.txt").exists()
    assert ap_learn.main(["--model", "hob", "-v", "0", str(tmp_path / "train.dat"),
                          str(tmp_path / "x.model")]) == 2
    # without the links, a high-order model scores by its unary part: said, not silent
    capsys.readouterr()
    assert ap_classify.main(["-v", "0", str(tmp_path / "train.dat"), str(tmp_path / "hob.model"),
                             str(tmp_path / "out.txt")]) == 0
    assert "without --edges or --groups the examples are unlinked" in capsys.readouterr().err
    # qid lines: --model ranks all examples as one query, and says so
    dump_svmlight(tmp_path / "q.dat", X, y, qid=groups % 3 + 1)
    assert ap_learn.main(["--model", "hob", "--edges", str(tmp_path / "train.edges"), "-v", "0",
                          str(tmp_path / "q.dat"), str(tmp_path / "q.model")]) == 0
    assert "--model ranks all examples as one query" in capsys.readouterr().err
    assert ap_learn.main(["--edges", str(tmp_path / "train.edges"), "-v", "0",
                          str(tmp_path / "train.dat"), str(tmp_path / "x.model")]) == 2


def test_console_script_high_order_options(tmp_path, capsys):
    from svmrank.cli import ap_learn
    from svmrank.io.model_file import read_model
    from svmrank.io.svmlight import dump_svmlight
    X, y, groups = make_grouped(n_samples=60, n_features=5, n_groups=15, random_state=2)
    dump_svmlight(tmp_path / "train.dat", X, y, comments=[f"img={g}" for g in groups])
    args = ["--model", "hob", "--groups", "img", "-c", "5", "-v", "0", "--eta", "0.5",
            "--pairwise-features", "2,4", "-j", "3"]
    assert ap_learn.main(args + [str(tmp_path / "train.dat"), str(tmp_path / "m")]) == 0
    est = HOBSVM(C=5.0, eta=0.5, pairwise_features=[1, 3], J=3.0, epsilon=0.1).fit(
        X, y, edges=edges_from_groups(groups))
    back = from_model(read_model(tmp_path / "m"))
    assert back.eta == 0.5 and back.pairwise_index_.tolist()[:2] == [1, 3]
    np.testing.assert_allclose(back.pairwise_coef_, est.pairwise_coef_, atol=1e-6)
    for bad, message in ((["--pairwise-features", "0"], "feature numbers start at 1"),
                         (["--pairwise-features", "a,b"], "expected 'all', 'none'"),
                         (["--eta", "-1"], "--eta: expected a finite value >= 0"),
                         (["--edges", ""], "argument --edges: expected a file name, got ''"),
                         (["--groups", ""], "argument --groups: expected a key, got ''")):
        assert ap_learn.main(["--model", "hoap", "--groups", "img", "-v", "0"] + bad +
                             [str(tmp_path / "train.dat"), str(tmp_path / "x")]) == 2
        assert message in capsys.readouterr().err
    assert ap_learn.main(["--model", "hoap", "--groups", "img=", "-v", "0",
                          str(tmp_path / "train.dat"), str(tmp_path / "x")]) == 1
    assert "groups: key must be 'qid' or a name without '='" in capsys.readouterr().err
    # review 23: an empty --edges file warned in the learner, not in the classifier
    from svmrank.cli import ap_classify
    (tmp_path / "none.edges").write_text("")
    assert ap_classify.main(["--edges", str(tmp_path / "none.edges"), "-v", "0",
                             str(tmp_path / "train.dat"), str(tmp_path / "m"),
                             str(tmp_path / "out")]) == 0
    assert "none.edges links no two examples: they are unlinked" in capsys.readouterr().err
    (tmp_path / "out").unlink()
    # a model whose pairwise metadata is damaged: the error names the model file and line
    broken = tmp_path / "broken.model"
    broken.write_text((tmp_path / "m").read_text().replace("eta=0.5", "eta=half"))
    assert ap_classify.main(["--groups", "img", "-v", "0", str(tmp_path / "train.dat"),
                             str(broken), str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert f"{broken}:12: expected eta= as a number >= 0, got 'eta=half'" in err
    assert err.count("\n") == 1
    assert not (tmp_path / "out").exists()
    # a positive pairwise weight (edited by hand) was clipped to 0 without a word
    text = (tmp_path / "m").read_text()
    positive = re.sub(r"pairwise=(\w+):-?[0-9.e+-]+", r"pairwise=\1:5.0", text, count=1)
    assert positive != text
    broken.write_text(positive)
    assert ap_classify.main(["--groups", "img", "-v", "0", str(tmp_path / "train.dat"),
                             str(broken), str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert f"{broken}: pairwise weight " in err and "is positive" in err
    assert err.count("\n") == 1 and not (tmp_path / "out").exists()


def test_a_positive_pairwise_weight_set_by_hand_is_refused():
    """Fit keeps w₂ <= 0; a positive weight written into coef_ was clipped to 0 without a
    word (the model file reader already refuses one)."""
    X, y, groups = make_grouped(n_samples=40, n_features=4, n_groups=10, random_state=0)
    edges = edges_from_groups(groups)
    est = HOBSVM(C=5.0).fit(X, y, edges=edges)
    est.decision_function(X, edges=edges)
    start = 2 * (X.shape[1] + 1)  # after the unary blocks (with the bias)
    est.coef_[start + 1] = 0.25
    for method in (est.decision_function, est.predict):
        with pytest.raises(ValueError, match=r"^coef_: pairwise weight 0.25 \(pairwise feature 1\) is positive"):
            method(X, edges=edges)


def test_hoap_trains_on_duplicate_binary_rows():
    """Seven binary rows, two pairs of them identical, C = 1000: the working set holds
    repeated planes and a zero plane, on which the QP cycled (QPError)."""
    X = np.array([[0, 1, 1, 0], [0, 1, 1, 0], [0, 0, 0, 1], [0, 0, 0, 0], [0, 0, 0, 1],
                  [0, 0, 0, 0], [1, 0, 1, 0]], float)
    y = np.array([1, 0, 0, 0, 0, 0, 1.0])
    model = HOAPSVM(C=1000.0, eta=1.0).fit(X, y, edges=[[3, 1], [6, 3], [2, 4], [1, 0], [2, 6]])
    assert np.isfinite(model.coef_).all()


def test_pair_problem_products_equal_transposed_copies_bitwise():
    """HOAP-SVM's local step and Ψ take Mᵀv through M's CSC view, without the CSR copies
    of Xᵀ, Φ'ᵀ and the flip and cut sets' transposes: the same sums, bitwise."""
    import scipy.sparse as sp
    from svmrank.problems.high_order import HighOrderFeatures, HOAPPairProblem
    rng = np.random.default_rng(4)
    n = 60
    X = sp.random(n, 12, density=0.3, random_state=rng, format="csr")
    edges = np.unique(np.sort(rng.integers(0, n, size=(150, 2)), axis=1), axis=0)
    edges = edges[edges[:, 0] != edges[:, 1]]
    f = HighOrderFeatures(X, edges, pairwise_features=[0, 3, 5])
    w = rng.normal(size=f.n_features)
    w[f.pairwise_slice] = -np.abs(w[f.pairwise_slice])
    mm = f.max_marginals(w)
    y = (rng.random(n) < 0.3).astype(float)
    y[:2] = [0.0, 1.0]
    problem = HOAPPairProblem(f, y, mm)
    loss, g = problem.most_violated(w)
    res_s = problem.scores(w)
    from svmrank.inference import loss_augmented_inference, true_coef
    res = loss_augmented_inference(res_s, y > 0, loss="ap")
    c = np.where(mm.labelling > 0, -1.0, 1.0) * (true_coef(y > 0) - res.coef)
    flips_t = mm.flips.astype(np.float64).tocsr().T.tocsr()
    cuts_t = mm.cut_changes.astype(np.float64).tocsr().T.tocsr()
    pos = f.X.T.tocsr() @ (flips_t @ c)
    v = cuts_t @ c
    pair = f.eta * (v.sum() - f.phi_c.T.tocsr() @ v)
    assert np.array_equal(g, np.concatenate([pos, -pos, pair]))
    u, total = rng.normal(size=n), 1.5
    v = rng.normal(size=len(f.pairs))
    expected = np.concatenate([f.X.T.tocsr() @ u, f.X.T.tocsr() @ (total - u),
                               f.eta * (v.sum() - f.phi_c.T.tocsr() @ v)])
    assert np.array_equal(f.combine(u, total, v), expected)


@pytest.mark.parametrize("labels", [(-1, 1), ("bg", "fg"), (0, 1)])
def test_predict_returns_the_labels_of_y(labels):
    """Review 22: predict returned 0/1 whatever y held (accuracy_score(y, predict) was
    wrong for -1/1 labels), and there was no classes_."""
    _, X, y, edges = tiny(0, n=8)
    y = np.where(y > 0, labels[1], labels[0])
    for cls in (HOBSVM, HOAPSVM):
        est = cls(C=10.0).fit(X, y, edges=edges)
        assert est.classes_.tolist() == list(labels)
        assert set(est.predict(X, edges=edges).tolist()) <= set(labels)
        assert est.score(X, y, edges=edges) == pytest.approx(
            cls(C=10.0).fit(X, y == labels[1], edges=edges).score(X, y == labels[1],
                                                                   edges=edges))


def test_a_capped_convex_solve_is_not_convergence():
    """Review 22: with max_iter too small the local step kept w_t, CCCP saw no descent
    and reported converged_ (the CLI printed "Converged")."""
    _, X, y, edges = tiny(0, n=8)
    with pytest.warns(ConvergenceWarning):
        model = HOAPSVM(C=10.0, epsilon=1e-6, max_iter=2).fit(X, y, edges=edges)
    assert not model.converged_ and not model.result_.converged


def test_bad_edges_val_are_named_as_eval_sets():
    """Review 22: an edge of eval_set outside X_val was reported as ``edges``."""
    _, X, y, edges = tiny(0, n=8)
    with pytest.raises(ValueError, match=r"^eval_set edges_val: edge \d+ .* outside \[0, 4\)"):
        HOBSVM(C=1.0).fit(X, y, edges=edges, eval_set=(X[:4], y[:4], edges))


def test_edges_that_can_do_nothing_warn():
    """Review 22: an empty edge list (an empty --edges file), no pairwise feature, and an
    eval_set without edges trained or scored unlinked samples without a word."""
    _, X, y, edges = tiny(0, n=8)
    for params, fit_edges, eval_set, match in (
            ({}, np.zeros((0, 2), dtype=np.int64), None, "edges holds no edge"),
            (dict(pairwise_features=[], bias=0.0), edges, None, "the edges do nothing"),
            ({}, edges, (X, y), "eval_set has no edges_val")):
        with pytest.warns(UserWarning, match=match):
            HOBSVM(C=1.0, **params).fit(X, y, edges=fit_edges, eval_set=eval_set)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        HOBSVM(C=1.0).fit(X, y, edges=edges, eval_set=(X, y, edges))
        HOBSVM(C=1.0, eta=0.0).fit(X, y, edges=edges)  # (a baseline without the term)


def test_a_high_order_file_without_classes_predicts_0_1():
    """Review 22b: files from before classes_ read as -1/1; integer labels came back
    as floats."""
    _, X, y, edges = tiny(0, n=8)
    est = HOBSVM(C=10.0).fit(X, y.astype(np.int64), edges=edges)
    model = to_model(est)
    assert from_model(model).classes_.dtype == np.int64
    assert from_model(model).predict(X, edges=edges).tolist() == \
        est.predict(X, edges=edges).tolist()
    del model.metadata["classes"]
    assert from_model(model).classes_.tolist() == [0, 1]
    ones = to_model(HOBSVM(C=10.0).fit(X, np.where(y > 0, 1, -1), edges=edges))
    assert ones.metadata["classes"] == "-1,1" and from_model(ones).classes_.tolist() == [-1, 1]


def test_hoap_n_iter_counts_its_hob_start():
    """Review 22b: the latent models' n_iter_ counts their starting fit, HOAP's did not."""
    _, X, y, edges = tiny(0, n=8)
    model = HOAPSVM(C=10.0).fit(X, y, edges=edges)
    assert model.n_iter_ == len(model.trace_)
