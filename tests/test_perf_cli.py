"""svm_perf_learn / svm_perf_classify: SVM-perf's defaults, its C and weight scales per
loss, its -w 9 rule, its prediction format, and every refusal (one line, non-zero exit,
no model file)."""
import numpy as np
import pytest

import svmrank._perf_fast  # noqa: F401  (a missing kernel fails, never skips)
from svmrank.cli import perf_classify, perf_learn
from svmrank.estimators import BinarySVM, RankSVM
from svmrank.io.estimator_model import from_model, training_info
from svmrank.io.model_file import read_model
from svmrank.io.svmlight import dump_svmlight, load_svmlight
from svmrank.problems.perf import perf_scale


def write_data(path, X, y):
    with open(path, "w") as fh:
        for row, label in zip(X, y):
            feats = " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(row) if v != 0)
            fh.write(f"{label:g} {feats}\n")
    return str(path)


@pytest.fixture
def train(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4))
    y = np.where(X @ [1.0, -1.0, 0.5, 0.0] + 0.5 * rng.normal(size=80) > 0.3, 1, -1)
    return write_data(tmp_path / "train.dat", X, y), tmp_path


def learned_w(path):
    model = read_model(path)
    return model.w, model.b


@pytest.mark.parametrize("argv, loss, c_factor, w_factor", [
    ([], "error", 100.0, 1.0),                       # SVM-perf's defaults: -l 2 -w 9
    (["-l", "1", "-w", "3"], "f1", 100.0, 1.0),
    (["-l", "4", "-w", "4", "--p", "0.5"], "prec@k", 100.0, 1.0),
    (["-l", "0", "-w", "3"], "zero_one", 1e4, 0.01),
    (["-l", "10", "-w", "3"], "roc", 25.0, 2.0),
    (["-l", "11", "-w", "3"], "ap", None, None)])     # (the factors depend on P and N)
def test_model_is_svm_perfs_scale_of_ours(train, argv, loss, c_factor, w_factor):
    path, tmp = train
    C = 0.5
    if loss == "zero_one":  # separable data (else w = 0 is optimal), a large C
        X = np.random.default_rng(1).normal(size=(40, 3))
        path, C = write_data(tmp / "sep.dat", X, np.where(X[:, 0] > 0.2, 1, -1)), 100.0
    model = str(tmp / "m")
    assert perf_learn.main(["-c", str(C), "-e", "0.01", "-v", "0", *argv, path, model]) == 0
    X, y, _ = load_svmlight(path)
    if loss == "ap":
        c_factor, _, w_factor = perf_scale("ap", int((y > 0).sum()), int((y <= 0).sum()))
    common = dict(C=C * c_factor, epsilon=0.01 * (1.0 if loss == "zero_one" else 0.01))
    est = (RankSVM(loss=loss, **common) if loss in ("roc", "ap")
           else BinarySVM(loss=loss, k=0.5 if loss == "prec@k" else None, **common))
    est.fit(X, y)
    w, b = learned_w(model)
    assert np.any(w)
    # (the file keeps 8 digits)
    np.testing.assert_allclose(w, w_factor * est.coef_, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(b, -w_factor * est.intercept_, rtol=1e-7, atol=1e-9)
    # the metadata: C and epsilon of the estimator, and the weights' scale to it
    info = training_info(read_model(model))
    assert info["C"] == pytest.approx(common["C"]) and info["loss"] == loss
    assert info.get("w_scale", 1.0) == pytest.approx(w_factor, rel=1e-15)
    # round trip: svm_perf_classify's output is what from_model's estimator scores,
    # and refitting that estimator gives the file's weights over w_scale
    out = str(tmp / "pred")
    assert perf_classify.main(["-v", "0", path, model, out]) == 0
    back = from_model(read_model(model))
    written = np.loadtxt(out)
    np.testing.assert_allclose(written, back.decision_function(X), rtol=0, atol=5e-9)
    assert np.array_equal(np.char.mod("%.8f", back.decision_function(X)),
                          open(out).read().split())
    assert back.C == pytest.approx(common["C"])
    refit = back.set_params(max_iter=10000).fit(X, y)
    np.testing.assert_allclose(w_factor * refit.coef_, w, rtol=1e-7, atol=1e-9)


def test_classify_writes_svm_perfs_format(train, capsys):
    path, tmp = train
    model, out = str(tmp / "m"), str(tmp / "pred")
    assert perf_learn.main(["-v", "0", "-c", "1", path, model]) == 0
    assert perf_classify.main([path, model, out]) == 0
    printed = capsys.readouterr().out
    for name in ("Accuracy :", "Precision:", "Recall   :", "F1       :", "PRBEP    :",
                 "ROCArea  :", "AvgPrec  :", "Average loss on test set:"):
        assert name in printed
    lines = open(out).read().splitlines()
    X, y, _ = load_svmlight(path)
    assert all(len(line.split(".")[1]) == 8 for line in lines)
    np.testing.assert_allclose([float(v) for v in lines],
                               read_model(model).decision_function(X), atol=5e-9)


def test_label_zero_is_negative_as_in_svm_perf(train, capsys):
    """Review 23: 0/1 test labels were called unlabeled and no statistics printed;
    SVM-perf's reader makes every label <= 0 negative (svm_struct_api.c), so it prints
    them, and so do we, the same as for -1/+1."""
    path, tmp = train
    model = str(tmp / "m")
    assert perf_learn.main(["-v", "0", "-c", "1", path, model]) == 0
    X, y, _ = load_svmlight(path)
    printed = {}
    for name, labels in (("zero", np.where(y > 0, 1, 0)), ("minus", np.where(y > 0, 1, -1))):
        dump_svmlight(tmp / name, X, labels)
        assert perf_classify.main([str(tmp / name), model, str(tmp / "pred")]) == 0
        printed[name] = capsys.readouterr().out
    assert "unlabeled" not in printed["zero"] and "AvgPrec  :" in printed["zero"]
    stats = [line for line in printed["zero"].splitlines() if line[:9].strip() in (
        "Accuracy", "Precision", "Recall", "F1", "PRBEP", "ROCArea", "AvgPrec")]
    assert len(stats) == 7 and stats == [line for line in printed["minus"].splitlines()
                                         if line in stats]


@pytest.mark.parametrize("argv, message", [
    (["-l", "1"], "-w 9: the custom algorithm can only optimize the error rate (-l 2), not "
                  "-l 1; use -w 3"),
    (["-l", "10", "-w", "9"], "-w 9: the custom algorithm"),
    (["--i", "2"], "--i (sparse kernel approximation) is not supported"),
    (["--k", "500"], "--k (sparse kernel approximation) is not supported"),
    (["--r", "1"], "--r (sparse kernel approximation) is not supported"),
    (["--t", "1"], "--t 1 (sparse kernel approximation) is not supported"),
    (["-t", "2"], "-t 2 is not supported"),
    (["-o", "1"], "-o 1 is not supported"),
    (["-l", "7"], "-l 7: unknown loss"),
    (["-w", "5"], "-w 5: unknown algorithm"),
    (["-l", "4", "-w", "3", "--p", "1.5"], "--p 1.5: for Prec@k it must not be larger"),
    (["-l", "5", "-w", "3", "--p", "0.5"], "--p 0.5: for Rec@k it must not be smaller"),
    (["--p", "-1"], "--p: expected a finite value >= 0")])
def test_refusals_are_one_line(train, capsys, argv, message):
    path, tmp = train
    model = tmp / "m"
    assert perf_learn.main([*argv, path, str(model)]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err
    assert not model.exists()


def test_data_without_positives_is_refused(tmp_path, capsys):
    path = write_data(tmp_path / "neg.dat", np.eye(3), [-1, -1, -1])
    assert perf_learn.main(["-c", "1", "-l", "1", "-w", "3", path, str(tmp_path / "m")]) == 1
    err = capsys.readouterr().err.strip()
    assert "needs positive" in err and "\n" not in err
    assert not (tmp_path / "m").exists()
