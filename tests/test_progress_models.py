"""Issue 27 parts 2-3 on the CCCP models (latent, HOAP) and the top-k SVM: the live line,
eval_set (and early stopping where it is offered), Ctrl-C in a starting fit."""
import io
import json
import sys
import warnings

import numpy as np
import pytest

from svmrank import TopKSVM
from svmrank.datasets import make_bags, make_grouped
from svmrank.estimators.high_order import HOAPSVM, HOBSVM
from svmrank.estimators.latent import LatentAPSVM, LatentSSVM, LatentSVM
from svmrank.graph import edges_from_groups
from svmrank.progress import Monitor, plain_lines
from test_progress import _interrupt_after_first_line


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture(scope="module")
def bags():
    train = make_bags(n_bags=60, bag_size=(2, 4), random_state=3)
    val = make_bags(n_bags=40, bag_size=(2, 4), random_state=4)
    return train, val


@pytest.fixture(scope="module")
def graph():
    def one(seed):
        X, y, groups = make_grouped(n_samples=80, n_features=6, n_groups=15, homophily=0.9,
                                    separation=0.8, random_state=seed)
        return X, y, edges_from_groups(groups)
    return one(3), one(4)


@pytest.fixture(scope="module")
def classes():
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(5, 6)) * 2
    y = rng.integers(0, 5, 300)
    X = centres[y] + rng.normal(size=(300, 6))
    return (X[:200], y[:200]), (X[200:], y[200:])


def _fit_latent(cls, bags, **kwargs):
    (X, y, b, _), _ = bags
    # (one start: "auto", LatentAPSVM's default, prints the rounds of two)
    kwargs.setdefault("init", "random")
    return cls(C=1.0, max_outer_iter=3, **kwargs).fit(X, y, bags=b)


def _fit_hoap(graph, **kwargs):
    (X, y, E), _ = graph
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return HOAPSVM(C=10.0, eta=1.0, cccp_max_iter=2, **kwargs).fit(X, y, edges=E)


@pytest.mark.parametrize("cls", [LatentAPSVM, LatentSSVM, LatentSVM, "hoap"])
def test_cccp_models_live_line_and_plain_lines(cls, bags, graph, monkeypatch):
    fit = (lambda **kw: _fit_hoap(graph, **kw)) if cls == "hoap" else \
        (lambda **kw: _fit_latent(cls, bags, **kw))
    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stdout", pipe)
    model = fit(verbose=1)
    lines = pipe.getvalue().splitlines()  # (not a terminal: CCCP's lines, as before)
    assert lines == [f"CCCP iteration {k + 1}: objective {h:.8g}"
                     for k, h in enumerate(model.history_)]
    term = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", term)
    model = fit(verbose=1)
    text = term.getvalue()
    assert text.count("\r") == len(model.trace_) and text.endswith("\n")
    for k in range(1, model.n_outer_iter_ + 1):
        assert f"CCCP round {k}  iter " in text
        assert f"\nCCCP iteration {k}: objective" in "\n" + text.replace("\r", "\n")
    assert all(r["round"] >= 1 for r in model.trace_ if "round" in r)
    with plain_lines():
        term.seek(0), term.truncate()
        fit(verbose=1)
        assert "\r" not in term.getvalue() and term.getvalue().splitlines() == lines
    term.seek(0), term.truncate()
    fit(verbose=0)
    assert term.getvalue() == ""


def test_hoap_verbose_2_prints_every_iteration(graph, monkeypatch):
    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stdout", pipe)
    model = _fit_hoap(graph, verbose=2)
    lines = pipe.getvalue().splitlines()
    assert sum(line.startswith("CCCP iteration") for line in lines) == model.n_outer_iter_
    assert sum(line.startswith("iter ") for line in lines) == len(model.trace_)


def test_topk_live_line_shows_epoch_primal_dual_gap(classes, monkeypatch):
    (X, y), _ = classes
    term = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", term)
    model = TopKSVM(k=2, C=1.0, check_gap_every=1, random_state=0, verbose=1).fit(X, y)
    text = term.getvalue()
    assert text.count("\r") == len(model.history_) and text.count("\n") == 1
    last = text.rstrip("\n").split("\r")[-1]
    for field in (f"epoch {model.n_iter_}", "primal", "dual", "gap", "target 1.0e-03", "ETA"):
        assert field in last


def test_latent_eval_set_is_recorded_and_early_stopping_refused(bags):
    (X, y, b, _), (Xv, yv, bv, _) = bags
    for cls in (LatentAPSVM, LatentSVM):
        model = cls(C=1.0, max_outer_iter=3, init="instances").fit(
            X, y, bags=b, eval_set=(Xv, yv, bv))
        assert model.trace_ and all("valid_ap" in r for r in model.trace_)
        assert any("round" not in r for r in model.trace_)  # (the instances fit's)
        with pytest.raises(ValueError, match="early_stopping_rounds: .* does not stop early"):
            cls().fit(X, y, bags=b, eval_set=(Xv, yv, bv), early_stopping_rounds=2)
    model = LatentAPSVM(C=1.0, max_outer_iter=1).fit(X, y, bags=b, eval_set=(Xv, yv, bv))
    assert model.trace_[-1]["valid_ap"] == pytest.approx(model.score(Xv, yv, bv))
    with pytest.raises(ValueError, match="eval_set X_val: has 2 features"):
        LatentAPSVM().fit(X, y, bags=b, eval_set=(Xv[:, :2], yv, bv))
    with pytest.raises(ValueError, match="eval_set: expected a tuple"):
        LatentAPSVM().fit(X, y, bags=b, eval_set=Xv)


def test_high_order_eval_set(graph):
    (X, y, E), (Xv, yv, Ev) = graph
    model = _fit_hoap(graph)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = HOAPSVM(C=10.0, eta=1.0, cccp_max_iter=1).fit(X, y, edges=E,
                                                               eval_set=(Xv, yv, Ev))
    assert all("valid_ap" in r for r in model.trace_)
    assert any("round" not in r for r in model.trace_)  # (the HOB-SVM start's iterations)
    assert model.trace_[-1]["valid_ap"] == pytest.approx(model.score(Xv, yv, edges=Ev))
    with pytest.raises(ValueError, match="early_stopping_rounds: HOAPSVM does not stop"):
        HOAPSVM().fit(X, y, edges=E, eval_set=(Xv, yv, Ev), early_stopping_rounds=1)
    full = HOBSVM(C=10.0, eta=1.0).fit(X, y, edges=E, eval_set=(Xv, yv, Ev))
    assert full.best_score_ == pytest.approx(max(r["valid_ap"] for r in full.trace_))
    hob = HOBSVM(C=10.0, eta=1.0).fit(X, y, edges=E, eval_set=(Xv, yv, Ev),
                                     early_stopping_rounds=1)
    assert hob.n_iter_ <= full.n_iter_
    assert hob.score(Xv, yv, edges=Ev) == pytest.approx(hob.best_score_)
    with pytest.raises(ValueError, match="early_stopping_rounds: needs an eval_set"):
        HOBSVM().fit(X, y, edges=E, early_stopping_rounds=1)


def test_topk_eval_set_and_early_stopping(classes):
    (X, y), (Xv, yv) = classes
    full = TopKSVM(k=2, C=1.0, check_gap_every=1, random_state=0).fit(
        X, y, eval_set=(Xv, yv))
    assert all("valid_top2" in r for r in full.trace_) and len(full.trace_) == len(full.history_)
    assert full.trace_[-1]["valid_top2"] == pytest.approx(full.score(Xv, yv))
    assert full.best_score_ == pytest.approx(max(r["valid_top2"] for r in full.trace_))
    model = TopKSVM(k=2, C=1.0, check_gap_every=1, random_state=0).fit(
        X, y, eval_set=(Xv, yv), early_stopping_rounds=1)
    assert model.n_iter_ <= full.n_iter_ and not model.converged_
    assert model.score(Xv, yv) == pytest.approx(model.best_score_)
    best = model.trace_[model.best_iteration_ - 1]
    assert model.primal_objective_ == best["objective"] and model.duality_gap_ == best["gap"]
    # a precomputed kernel: the validation kernel against the training samples
    K, Kv = X @ X.T, Xv @ X.T
    kern = TopKSVM(k=2, C=1.0, check_gap_every=1, random_state=0, kernel="precomputed").fit(
        K, y, eval_set=(Kv, yv))
    assert kern.trace_[-1]["valid_top2"] == pytest.approx(kern.score(Kv, yv))
    with pytest.raises(ValueError, match="eval_set X_val: has 5 features"):
        TopKSVM().fit(X, y, eval_set=(Xv[:, :5], yv))
    with pytest.raises(ValueError, match=r"eval_set: expected a tuple \(X_val, y_val\)$"):
        TopKSVM().fit(X, y, eval_set=(Xv, yv, yv))
    with pytest.raises(ValueError, match="early_stopping_rounds: needs an eval_set"):
        TopKSVM().fit(X, y, early_stopping_rounds=1)


def _ctrl_c_on(monkeypatch, when):
    """Make the monitor raise KeyboardInterrupt (as Ctrl-C would, inside a learner) at
    the first record for which ``when(monitor)`` holds."""
    call = Monitor.__call__

    def interrupting(self, record, w=None, target=None):
        stop = call(self, record, w, target)
        if when(self):
            raise KeyboardInterrupt
        return stop

    monkeypatch.setattr(Monitor, "__call__", interrupting)


def test_ctrl_c_in_the_hob_start_stops_the_whole_hoap_fit(graph, monkeypatch):
    (X, y, E), _ = graph
    _ctrl_c_on(monkeypatch, lambda m: m.round is None and len(m.records) == 3)
    with pytest.warns(UserWarning, match="interrupted during the HOB-SVM fit"):
        model = HOAPSVM(C=10.0, eta=1.0, verbose=0).fit(X, y, edges=E)
    assert model.interrupted_ and not model.converged_ and model.n_outer_iter_ == 0
    assert len(model.trace_) == 3 and all("round" not in r for r in model.trace_)
    best = min(r["objective"] for r in model.trace_)
    np.testing.assert_array_equal(model.init_coef_, model.result_.w)
    assert model.result_.primal_objective == pytest.approx(best)
    assert np.isfinite(model.objective_) and np.isfinite(model.decision_function(X, E)).all()


@pytest.mark.parametrize("cls", [LatentAPSVM, LatentSVM])
def test_ctrl_c_in_the_instances_start_stops_the_whole_latent_fit(cls, bags, monkeypatch):
    (X, y, b, _), _ = bags
    _ctrl_c_on(monkeypatch, lambda m: m.round is None and len(m.records) == 2)
    with pytest.warns(UserWarning, match="interrupted during the init='instances' fit"):
        model = cls(C=1.0, init="instances", n_init=3).fit(X, y, bags=b)
    assert model.interrupted_ and not model.converged_ and model.n_outer_iter_ == 0
    assert len(model.trace_) == 2 and model.objectives_.shape == (1,)
    assert model.latent_ is not None and np.isfinite(model.decision_function(X, b)).all()


def test_ctrl_c_in_a_later_start_keeps_the_best_earlier_one(bags, monkeypatch):
    (X, y, b, _), _ = bags
    _ctrl_c_on(monkeypatch, lambda m: len([r for r in m.records if r.get("round") == 1
                                          and r["iteration"] == 1]) == 2)
    with pytest.warns(UserWarning, match="interrupted in start 2"):
        model = LatentAPSVM(C=1.0, n_init=3, max_outer_iter=3).fit(X, y, bags=b)
    assert model.interrupted_ and not model.converged_ and model.objectives_.shape == (1,)


@pytest.mark.parametrize("fit", ["latent", "hoap_local", "hoap_bound"])
def test_ctrl_c_in_the_first_round_keeps_its_solves_point(fit, bags, graph, monkeypatch):
    """Review 22: Ctrl-C in round 1 of the first start (no round completed) raised
    KeyboardInterrupt, and --save-on-interrupt wrote nothing; the fit now ends at the
    point the round's solve had reached (a local round: at its start w_t)."""
    (X, y, b, _), _ = bags
    (Xg, yg, E), _ = graph
    _ctrl_c_on(monkeypatch, lambda m: len([r for r in m.records if r.get("round") == 1]) == 2)
    with pytest.warns(UserWarning, match="CCCP interrupted in round 1: keeping the (point|round)"):
        if fit == "latent":
            model = LatentAPSVM(C=1.0, n_init=3).fit(X, y, bags=b)
            scores = model.decision_function(X, b)
        else:
            model = HOAPSVM(C=10.0, eta=1.0, cccp_step=fit[5:]).fit(Xg, yg, edges=E)
            scores = model.decision_function(Xg, E)
    assert model.interrupted_ and not model.converged_ and model.n_outer_iter_ == 1
    assert len(model.history_) == 1 and model.objective_ == model.history_[0]
    assert np.isfinite(model.objective_) and np.isfinite(scores).all()
    if fit == "latent":
        assert model.objectives_.shape == (1,)
        assert model.result_.w is not None and np.any(model.coef_)


def test_latent_cli_summary_says_interrupted(bags, tmp_path, capsys, monkeypatch):
    """Review 22: after Ctrl-C in round 2, --save-on-interrupt's summary said "Converged"
    (the last convex solve's status, not the fit's)."""
    from svmrank.cli import ap_learn
    from svmrank.io.svmlight import dump_svmlight
    (X, y, b, _), _ = bags
    train, model = tmp_path / "bags.dat", tmp_path / "model"
    dump_svmlight(train, X, y, qid=b)  # (bag ids as qid, labels per row)
    _ctrl_c_on(monkeypatch, lambda m: len([r for r in m.records if r.get("round") == 2]) == 2)
    assert ap_learn.main(["--latent", "-c", "1", "--save-on-interrupt", str(train),
                          str(model)]) == 0
    out = capsys.readouterr().out
    assert "Interrupted (not converged) after" in out and "Converged" not in out
    assert model.exists()


def test_ctrl_c_in_the_auto_instance_start_keeps_the_random_start(bags, monkeypatch):
    """Review 22b: after the random start's CCCP, monitor.round was stale, so Ctrl-C in
    init="auto"'s instance start escaped fit as RoundInterrupted."""
    (X, y, b, _), _ = bags
    _ctrl_c_on(monkeypatch, lambda m: m.round is None and any("round" in r for r in m.records)
               and len([r for r in m.records if r.get("round") is None]) == 2)
    with pytest.warns(UserWarning, match="interrupted in the instance start: keeping the best"):
        model = LatentAPSVM(C=1.0, init="auto", max_outer_iter=3).fit(X, y, bags=b)
    assert model.interrupted_ and model.objectives_.shape == (1,)


HOAP_UNTIL_SIGNALLED = """
import json, warnings
import numpy as np
from svmrank.datasets import make_grouped
from svmrank.estimators.high_order import HOAPSVM
from svmrank.graph import edges_from_groups
X, y, groups = make_grouped(n_samples=3000, n_features=50, n_groups=300, random_state=0)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    m = HOAPSVM(C=1e4, eta=1.0, epsilon=1e-12, max_iter=100000, verbose=2).fit(
        X, y, edges=edges_from_groups(groups))
print(json.dumps({"interrupted": m.interrupted_, "converged": m.converged_,
                  "rounds": m.n_outer_iter_, "finite": bool(np.isfinite(m.coef_).all()),
                  "warnings": [str(w.message) for w in caught]}))
"""


def test_sigint_in_the_hob_start_stops_the_whole_hoap_fit():
    code, out, err = _interrupt_after_first_line([sys.executable, "-c", HOAP_UNTIL_SIGNALLED])
    assert code == 0, err
    report = json.loads(out.splitlines()[-1])
    assert report["interrupted"] and not report["converged"] and report["finite"]
    assert report["rounds"] == 0
    assert any("interrupted during the HOB-SVM fit" in w for w in report["warnings"])
