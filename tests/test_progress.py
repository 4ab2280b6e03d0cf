"""Progress display, logging, eval_set / early stopping and Ctrl-C (issue 27, parts 2-3)."""
import io
import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pytest

from svmrank import BinarySVM, RankSVM, TopKSVM
from svmrank.datasets import make_ranking
from svmrank.progress import Monitor, plain_lines, time_to_target


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


@pytest.fixture(scope="module")
def data():
    return make_ranking(n_samples=400, n_features=20, n_queries=4, random_state=0)


def test_pipe_gets_one_plain_line_per_iteration(data, monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    model = RankSVM(C=10, verbose=1).fit(*data)
    lines = out.getvalue().splitlines()
    assert len(lines) == model.n_iter_
    assert "\r" not in out.getvalue()
    assert all(line.startswith("iter ") and "objective" in line for line in lines)


def test_terminal_gets_one_live_line(data, monkeypatch):
    out = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", out)
    model = RankSVM(C=10, verbose=1).fit(*data)
    text = out.getvalue()
    assert text.count("\r") == model.n_iter_ and text.endswith("\n")
    assert text.count("\n") == 1  # (one line, rewritten in place)
    last = text.rstrip("\n").split("\r")[-1]
    for field in (f"iter {model.n_iter_}", "objective", "gap", "target 1.0e-02", "elapsed",
                  "ETA"):
        assert field in last
    with plain_lines():  # (the console scripts: SVM-struct's lines on a terminal too)
        out.seek(0), out.truncate()
        RankSVM(C=10, verbose=1).fit(*data)
        assert "\r" not in out.getvalue() and out.getvalue().count("\n") == model.n_iter_


def test_verbose_0_shows_nothing_and_logging_gets_the_lines(data, monkeypatch, caplog):
    out = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", out)
    with caplog.at_level(logging.DEBUG, logger="svmrank"):
        model = RankSVM(C=10, verbose=0).fit(*data)
    assert out.getvalue() == ""
    lines = [r.getMessage() for r in caplog.records if r.name == "svmrank"]
    assert len(lines) == model.n_iter_ and lines[0].startswith("iter    1")


def test_topk_progress_and_converged(monkeypatch):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(120, 5)), rng.integers(0, 4, 120)
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    model = TopKSVM(k=2, C=1.0, check_gap_every=1, random_state=0, verbose=1).fit(X, y)
    lines = out.getvalue().splitlines()
    assert len(lines) == len(model.history_) and lines[-1].startswith(f"epoch {model.n_iter_}:")
    assert model.converged_ and not model.interrupted_


def test_time_to_target_follows_the_gap_slope():
    # gap = 10^(-t): reaching 1e-6 from 1e-3 at t = 3 takes 3 more seconds
    records = [{"time": t, "gap": 10.0 ** -t} for t in (0.0, 1.0, 2.0, 3.0)]
    assert time_to_target(records, 1e-6) == pytest.approx(3.0)
    assert time_to_target(records[:1], 1e-6) is None  # (one point: no slope)
    assert time_to_target([{"time": 0, "gap": 1}, {"time": 1, "gap": 2}], 1e-3) is None
    assert time_to_target(records, 1.0) == 0.0


def test_monitor_early_stopping_keeps_the_best_point():
    scores = iter([0.5, 0.7, 0.6, 0.65, 0.69, 0.9])
    monitor = Monitor(evaluate=lambda w: next(scores), eval_name="valid_ap",
                      early_stopping_rounds=3)
    stops = [monitor({"iteration": k, "time": 0.0, "objective": 1.0}, np.array([k]))
             for k in range(1, 6)]
    assert stops == [False, False, False, False, True]
    assert monitor.best_iteration == 2 and monitor.best_w.tolist() == [2]
    assert [r["valid_ap"] for r in monitor.records] == [0.5, 0.7, 0.6, 0.65, 0.69]


def test_eval_set_is_recorded_and_early_stopping_is_opt_in(data):
    X, y, qid = data
    train, val = slice(0, 300), slice(300, None)
    full = RankSVM(C=10).fit(X[train], y[train], qid[train],
                             eval_set=(X[val], y[val], qid[val]))
    assert all("valid_ap" in h for h in full.history_) and full.converged_
    best = max(h["valid_ap"] for h in full.history_)
    assert full.best_score_ == pytest.approx(best)
    model = RankSVM(C=10).fit(X[train], y[train], qid[train],
                              eval_set=(X[val], y[val], qid[val]), early_stopping_rounds=1)
    assert model.n_iter_ <= full.n_iter_
    k = model.best_iteration_
    assert model.score(X[val], y[val], qid[val]) == pytest.approx(model.history_[k - 1]["valid_ap"])
    binary = BinarySVM(C=1).fit(X[train], y[train], eval_set=(X[val], y[val]))
    assert all("valid_ap" in h for h in binary.history_)
    with pytest.raises(ValueError, match="eval_set X_val: has 3 features"):
        RankSVM().fit(X, y, eval_set=(X[:, :3], y))
    with pytest.raises(ValueError, match="early_stopping_rounds: needs an eval_set"):
        RankSVM().fit(X, y, early_stopping_rounds=2)


FIT_UNTIL_SIGNALLED = textwrap.dedent("""
    import json, sys, warnings
    import numpy as np
    from svmrank import RankSVM
    from svmrank.datasets import make_ranking
    X, y, qid = make_ranking(n_samples=5000, n_features=100, n_queries=1, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        m = RankSVM(C=1e4, epsilon=1e-12, max_iter=100000, verbose=1).fit(X, y, qid)
    print(json.dumps({"interrupted": m.interrupted_, "converged": m.converged_,
                      "n_iter": m.n_iter_, "objective": m.objective_,
                      "best": min(h["objective"] for h in m.history_),
                      "finite": bool(np.isfinite(m.coef_).all()),
                      "warnings": [str(w.message) for w in caught]}))
""")


def _interrupt_after_first_line(args, **kwargs):
    """Start ``args``, wait for its second line on stdout, send SIGINT; (returncode,
    the rest of stdout, stderr)."""
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            **kwargs)
    try:
        seen = 0
        while seen < 2:
            line = proc.stdout.readline()
            assert line, proc.stderr.read()
            seen += line.startswith("iter ")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    return proc.returncode, out, err


def test_ctrl_c_keeps_the_best_point():
    code, out, err = _interrupt_after_first_line([sys.executable, "-c", FIT_UNTIL_SIGNALLED])
    assert code == 0, err
    report = json.loads(out.splitlines()[-1])
    assert report["interrupted"] and not report["converged"] and report["finite"]
    assert report["objective"] == pytest.approx(report["best"])
    assert any("interrupted" in w for w in report["warnings"])


@pytest.fixture(scope="module")
def big_file(tmp_path_factory):
    X, y, _ = make_ranking(n_samples=5000, n_features=100, n_queries=1, random_state=0)
    from svmrank.io.svmlight import dump_svmlight
    path = tmp_path_factory.mktemp("big") / "train.dat"
    dump_svmlight(path, X, y)
    return path


@pytest.mark.parametrize("save", [False, True])
def test_cli_writes_no_model_on_ctrl_c_unless_asked(big_file, tmp_path, save):
    model = tmp_path / "model"
    code, out, err = _interrupt_after_first_line(
        [sys.executable, "-m", "svmrank.cli.ap_learn", "-c", "1e4", "-e", "1e-12", "-#", "100000"]
        + ["--save-on-interrupt"] * save + [str(big_file), str(model)])
    if save:
        assert code == 0 and model.exists(), err
        assert "interrupted" in err and "Interrupted (not converged)" in out
    else:
        assert code == 130 and "interrupted" in err
        assert not model.exists() and os.listdir(tmp_path) == []
