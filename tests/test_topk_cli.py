"""svm_topk_learn / svm_topk_classify: round trip through the SVM-multiclass model
file, label conventions, and every bad input (one-line error, non-zero exit, no
partial output file)."""
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import svmrank._sdca_fast  # noqa: E402,F401  (a missing kernel fails, never skips)
from svmrank.cli import topk_classify, topk_learn  # noqa: E402
from svmrank.estimators.topk import TopKSVM  # noqa: E402
from svmrank.io.model_file import LinearModel, write_model  # noqa: E402
from svmrank.io.multiclass_model import (MulticlassModel, read_multiclass_model,  # noqa: E402
                                         write_multiclass_model)
from svmrank.io.svmlight import load_svmlight  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def write_data(path, X, y, extra=None):
    with open(path, "w") as fh:
        for i, (row, label) in enumerate(zip(X, y)):
            feats = " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(row) if v != 0)
            if extra is not None:
                feats += f" {X.shape[1] + extra}:2.5"
            fh.write(f"{label:g} {feats} # example {i}\n")
    return str(path)


@pytest.fixture
def data(tmp_path):
    rng = np.random.default_rng(0)
    centers = rng.normal(scale=2.0, size=(4, 5))
    y = np.arange(120) % 4
    X = centers[y] + rng.normal(size=(120, 5))
    return tmp_path, X, y


def learn(argv):
    return topk_learn.main([str(a) for a in argv])


def classify(argv):
    return topk_classify.main([str(a) for a in argv])


def fails(capsys, status, pattern, *paths_absent):
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert pattern in err, err
    for p in paths_absent:
        assert not os.path.exists(p)
    return status != 0


def test_round_trip_matches_estimator(data, capsys):
    tmp, X, y = data
    train = write_data(tmp / "train.dat", X[:80], y[:80] + 1)
    test = write_data(tmp / "test.dat", X[80:], y[80:] + 1)
    model, pred = tmp / "model", tmp / "pred"
    assert learn(["-c", 500, "-k", 2, "--loss", "beta", "-e", 1e-6, "--seed", 3, train, model]) == 0
    out = capsys.readouterr().out
    assert "80 examples, 5 features, 4 classes" in out and "Converged" in out
    assert classify([test, model, pred]) == 0
    out = capsys.readouterr().out
    assert "top-1" in out and "top-4" in out and "Zero/one-error" in out
    # svm_multiclass_classify's two lines: its loss is 100 per error
    loss = float(re.search(r"^Average loss on test set: (\S+)$", out, re.M).group(1))
    error = float(re.search(r"^Zero/one-error on test set: (\S+)% ", out, re.M).group(1))
    assert loss == pytest.approx(error, abs=0.01) and loss > 0
    est = TopKSVM(k=2, loss="beta", C=500 / (100 * 80), epsilon=1e-6, random_state=3)
    est.fit(X[:80], y[:80] + 1)
    m = read_multiclass_model(model)
    np.testing.assert_array_equal(m.classes, [1, 2, 3, 4])
    Xtr, _, _ = load_svmlight(train)
    est_file = TopKSVM(k=2, loss="beta", C=500 / 8000, epsilon=1e-6, random_state=3)
    est_file.fit(Xtr, y[:80] + 1)
    # weights are written with repr, which the SVMlight reader parses back exactly
    np.testing.assert_array_equal(m.coef, 100 * est_file.coef_)
    np.testing.assert_allclose(m.coef, 100 * est.coef_, rtol=1e-3, atol=1e-3)
    assert m.metadata["k"] == "2" and m.metadata["loss"] == "beta" and m.n_train == 80
    lines = Path(pred).read_text().splitlines()
    assert len(lines) == 40
    Xte, yte, _ = load_svmlight(test, n_features=5)
    S = 100 * est_file.decision_function(Xte)
    for line, row in zip(lines, S):
        fields = line.split()
        assert len(fields) == 5
        assert int(fields[0]) == np.argmax(row) + 1
        assert fields[1:] == [f"{s:f}" for s in row]  # svm_multiclass_classify's " %f"
    acc = np.mean([int(line.split()[0]) for line in lines] == yte)
    assert f"top-1 {100 * acc:.2f}%" in out


def test_qid_is_ignored_without_a_warning(data, capsys):
    tmp, X, y = data  # (SVM-multiclass ignores qid; a mix of lines with and without is fine)
    for name, rows in [("train.dat", slice(0, 80)), ("test.dat", slice(80, 120))]:
        lines = Path(write_data(tmp / name, X[rows], y[rows] + 1)).read_text().splitlines(True)
        lines[1] = lines[1].replace(" 1:", " qid:4 1:", 1)
        assert "qid:4" in lines[1]
        (tmp / name).write_text("".join(lines))
    assert learn(["-c", 10, tmp / "train.dat", tmp / "model"]) == 0
    assert classify([tmp / "test.dat", tmp / "model", tmp / "pred"]) == 0
    assert "qid" not in capsys.readouterr().err


def test_model_with_a_byte_order_mark(data, capsys):
    tmp, X, y = data
    train = write_data(tmp / "train.dat", X, y + 1)
    model, bom = tmp / "model", tmp / "bom.model"
    assert learn(["-v", 0, "-c", 1, train, model]) == 0
    bom.write_bytes(b"\xef\xbb\xbf" + model.read_bytes())
    np.testing.assert_array_equal(read_multiclass_model(bom).coef, read_multiclass_model(model).coef)


def test_arbitrary_labels_are_mapped_and_printed_back(data, capsys):
    tmp, X, y = data
    names = np.array([-1.0, 0.0, 3.0, 7.5])
    train = write_data(tmp / "train.dat", X, names[y])
    model, pred = tmp / "model", tmp / "pred"
    assert learn(["-c", 1000, "-v", 0, train, model]) == 0
    text = Path(model).read_text()
    assert text.splitlines()[1] == "4 # number of classes"  # (svm_multiclass_learn's spacing)
    assert "classes=-1,0,3,7.5" in text
    assert classify(["-v", 0, train, model, pred]) == 0
    labels = {line.split()[0] for line in Path(pred).read_text().splitlines()}
    assert labels <= {"-1", "0", "3", "7.5"} and len(labels) >= 3
    assert capsys.readouterr().out == ""


def test_reads_plain_svm_multiclass_model_and_refuses_extra_features(data, capsys):
    tmp, X, y = data
    # what svm_multiclass_learn writes: weights of class c at (c-1)*d + j, no metadata
    W = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])
    text = ("SVM-multiclass Version V2.20\n3# number of classes\n2# number of base features\n"
            "0 # loss function\n0 # kernel type\n3 # kernel parameter -d \n"
            "1 # kernel parameter -g \n1 # kernel parameter -s \n1 # kernel parameter -r \n"
            "empty# kernel parameter -u \n6 # highest feature index \n"
            "10 # number of training documents \n2 # number of support vectors plus 1 \n"
            "0 # threshold b, each following line is a SV (starting with alpha*y)\n"
            "1 qid:0 1:1 4:1 5:-1 6:-1 #\n")
    model = tmp / "mc.model"
    model.write_text(text)
    m = read_multiclass_model(model)
    np.testing.assert_array_equal(m.coef, W)
    np.testing.assert_array_equal(m.classes, [1, 2, 3])
    assert m.metadata == {}
    test = tmp / "t.dat"
    test.write_text("1 1:2 2:1 9:100\n2 1:0.5 2:3\n3 1:-1 2:-2 3:50\n")
    pred = tmp / "pred"
    assert classify([test, model, pred]) == 1  # a feature beyond the model's: line 1
    assert f"{test}:1: expected a feature index <= 2 (the model's number of base features" \
        in capsys.readouterr().err and not pred.exists()
    assert classify(["--ignore-extra-features", test, model, pred]) == 0  # 3: and 9: dropped
    lines = Path(pred).read_text().splitlines()
    assert [line.split()[0] for line in lines] == ["1", "2", "3"]
    assert lines[0].split()[1:] == ["2.000000", "1.000000", "-3.000000"]
    out = capsys.readouterr().out
    assert ("Average loss on test set: 0.0000\nZero/one-error on test set: 0.00% (3 correct, "
            "0 incorrect, 3 total)") in out


def test_threshold_is_subtracted_from_every_class_score(data, capsys):
    # svm_multiclass_classify scores class c by w_c·x − b (classify_example_linear)
    tmp, _, _ = data
    model = tmp / "b5.model"
    model.write_text("SVM-multiclass Version V2.20\n2 # number of classes\n"
                     "1 # number of base features\n0 # loss function\n0 # kernel type\n"
                     "3 # kernel parameter -d \n1 # kernel parameter -g \n"
                     "1 # kernel parameter -s \n1 # kernel parameter -r \n"
                     "empty# kernel parameter -u \n2 # highest feature index \n"
                     "4 # number of training documents \n2 # number of support vectors plus 1 \n"
                     "5 # threshold b, each following line is a SV (starting with alpha*y)\n"
                     "1 qid:0 1:1 2:2 #\n")
    test, pred = tmp / "b5.dat", tmp / "b5.pred"
    test.write_text("1 1:1\n2 1:-1\n")
    assert classify([test, model, pred]) == 0
    assert Path(pred).read_text().splitlines() == ["2 -4.000000 -3.000000",
                                                   "1 -6.000000 -7.000000"]
    m = read_multiclass_model(model)
    assert m.b == 5.0
    write_multiclass_model(tmp / "again.model", m)
    assert read_multiclass_model(tmp / "again.model").b == 5.0
    with pytest.raises(ValueError, match="b: expected a finite number"):
        write_multiclass_model(tmp / "again.model", MulticlassModel(m.coef, m.classes, b=np.inf))
    capsys.readouterr()


def test_writer_reader_round_trip(tmp_path):
    coef = np.random.default_rng(1).normal(size=(3, 4))
    coef[1, 2] = 0.0
    path = tmp_path / "m"
    write_multiclass_model(path, MulticlassModel(coef, [0.5, 2, 10], 7, {"k": "2"}))
    m = read_multiclass_model(path)
    np.testing.assert_array_equal(m.coef, coef)  # repr text parses back exactly
    assert m.coef[1, 2] == 0.0
    np.testing.assert_array_equal(m.classes, [0.5, 2, 10])
    assert m.n_train == 7 and m.metadata == {"k": "2"}
    # texts: 's:' and percent-encoded (a space, comma, '=' or '#' would break the token)
    write_multiclass_model(path, MulticlassModel(coef, ["a b", "c,d=#", "é"]))
    assert path.read_text().endswith("#classes=s:a%20b,c%2Cd%3D%23,%C3%A9\n")
    np.testing.assert_array_equal(read_multiclass_model(path).classes, ["a b", "c,d=#", "é"])
    for classes in (["a", "b", "a"], [1.0, np.nan, 2.0], [1, np.inf, 2]):
        with pytest.raises(ValueError, match=r"^classes: expected 3 (distinct|finite)"):
            write_multiclass_model(path, MulticlassModel(coef, classes))
    with pytest.raises(ValueError, match="coef: contains NaN"):
        write_multiclass_model(path, MulticlassModel(coef * np.nan, [1, 2, 3]))
    with pytest.raises(ValueError, match="metadata"):
        write_multiclass_model(path, MulticlassModel(coef, [1, 2, 3], 0, {"k": "a b"}))
    with pytest.raises(ValueError, match="3 distinct labels"):  # the reader would refuse it
        write_multiclass_model(path, MulticlassModel(coef, [1, 2**53, 2**53 + 1]))
    # what the reader would refuse, or a value it would not read back, is refused
    for n_train in (-5, 2.7, True):
        with pytest.raises(ValueError, match=r"^n_train: expected an integer in \[0, 10\^18\)"):
            write_multiclass_model(path, MulticlassModel(coef, [1, 2, 3], n_train))
    for metadata in ({"k": "\x01"}, {"classes": "1,2,3"}, {"k": 2}):
        with pytest.raises(ValueError, match=r"^metadata"):
            write_multiclass_model(path, MulticlassModel(coef, [1, 2, 3], 0, metadata))
    np.testing.assert_allclose(read_multiclass_model(path).coef, coef, rtol=1e-15)  # untouched


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("options, status, pattern", [
    (["-k", "0"], 2, "-k: expected an integer >= 1"),
    (["-k", "4"], 1, "-k 4: must be smaller than the number of classes (4)"),
    (["-k", "9"], 1, "must be smaller than the number of classes"),
    (["--loss", "gamma"], 2, "--loss"),
    (["-c", "0"], 2, "-c must be a finite number > 0"),
    (["-#", "0"], 2, "-#: expected a positive number"),
    (["-w", "7"], 2, "-w 7 is not supported: only SVM-struct's 0..4"),
    (["--bogus", "3"], 2, "unknown option --bogus"),
    (["-v", "-1"], 2, "-v: expected a verbosity level >= 0"),
    (["-t", "2"], 2, "-t 2 is not supported"),
    (["--seed", "-1"], 2, "--seed: expected an integer >= 0"),
])
def test_learn_bad_options(data, capsys, options, status, pattern):
    tmp, X, y = data
    train = write_data(tmp / "train.dat", X, y + 1)
    model = tmp / "model"
    argv = options if "-c" in options else ["-c", "1"] + options
    assert learn(argv + [train, model]) == status
    assert fails(capsys, status, pattern, model)


def test_learn_requires_c(data, capsys):
    tmp, X, y = data
    train = write_data(tmp / "train.dat", X, y + 1)
    assert learn([train, tmp / "model"]) == 2
    assert fails(capsys, 2, "-c is required", tmp / "model")


def test_learn_keeps_classes_without_examples_on_request(data, tmp_path, capsys):
    """Labels {1, 2, 4} make classes 1..4: class 3 without an example is an error (the
    issue's bad input), and --keep-empty-classes keeps it as svm_multiclass_learn does
    (a cross-validation fold that misses a rare class still trains)."""
    from svmrank.estimators.topk import TopKSVM
    from svmrank.io.multiclass_model import read_multiclass_model
    tmp, X, y = data
    labels = np.array([1, 2, 4])[y % 3]
    train = write_data(tmp / "train.dat", X, labels)
    assert learn(["-v", "0", "-c", "1", train, tmp / "model"]) == 1
    assert (f"{train}: class 3 has no example (1 of the classes 1..4 have none); "
            "--keep-empty-classes keeps them") in capsys.readouterr().err
    assert not (tmp / "model").exists()
    assert learn(["-v", "0", "-c", "1", "--keep-empty-classes", train, tmp / "model"]) == 0
    assert "1 of the classes 1..4 have no example (the first: 3)" in capsys.readouterr().err
    model = read_multiclass_model(tmp / "model")
    assert model.coef.shape[0] == 4
    est = TopKSVM(C=1.0 / (100 * len(y)), random_state=0).fit(X, labels, classes=[1, 2, 3, 4])
    np.testing.assert_allclose(model.coef, 100 * est.coef_, rtol=1e-4, atol=1e-6)
    assert est.classes_.tolist() == [1, 2, 3, 4] and est.decision_function(X).shape == (len(y), 4)


@pytest.mark.parametrize("labels, pattern", [
    ([5], "needs examples of at least 2 classes, found 1"),
    ([0.5], "needs examples of at least 2 classes, found 1"),
    # refused before an array of max-label entries exists (this one would need 73 TiB)
    ([1, 2, 10**13], "label 10000000000000 makes 10000000000000 classes"),
])
def test_learn_bad_classes(data, capsys, labels, pattern):
    tmp, X, y = data
    train = write_data(tmp / "train.dat", X, np.array(labels)[y % len(labels)])
    model = tmp / "model"
    assert learn(["-c", "1", train, model]) == 1
    assert fails(capsys, 1, pattern, model)


def test_learn_non_finite_and_malformed_features(data, capsys):
    tmp, X, y = data
    train = tmp / "train.dat"
    write_data(train, X, y + 1)
    lines = train.read_text().splitlines()
    lines[6] = "2 1:0.5 2:nan 3:1"
    train.write_text("\n".join(lines) + "\n")
    model = tmp / "model"
    model.write_text("previous model")
    assert learn(["-c", "1", train, model]) == 1
    assert fails(capsys, 1, "train.dat:7: expected a finite feature value")
    assert model.read_text() == "previous model"  # never partially overwritten
    assert learn(["-c", "1", tmp / "missing.dat", tmp / "m2"]) == 1
    assert fails(capsys, 1, "missing.dat", tmp / "m2")


def test_classify_bad_models(data, capsys):
    tmp, X, y = data
    test = write_data(tmp / "test.dat", X, y + 1)
    pred = tmp / "pred"
    good = tmp / "good.model"
    assert learn(["-c", "100", "-v", "0", write_data(tmp / "tr.dat", X, y + 1), good]) == 0
    text = good.read_text().splitlines()

    ap_model = tmp / "ap.model"
    write_model(ap_model, LinearModel(w=np.ones(5), b=0.0, metadata={}))
    cases = [
        (ap_model, "this is an SVM-light model"),
        ("garbage\n", "not an SVM-multiclass model file"),
        ("\n".join(text[:7]) + "\n", ":8: expected the header line"),
        ("\n".join(text[:4] + ["2 # kernel type"] + text[5:]) + "\n", "kernel type 0"),
        ("\n".join(text[:14]) + "\n", "1 support vector lines (truncated model file)"),
        ("\n".join(text[:14] + ["1 qid:0 21:1 #"]) + "\n", ":15: expected a feature index <= 20"),
        ("\n".join(text[:14] + [text[14].replace("classes=1,2,3,4", "classes=1,2")]) + "\n",
         "4 comma-separated numbers"),
        ("\n".join(text + ["1 1:1"]) + "\n", "the end of the file"),
        ("\n".join(text[:14] + [text[14][:text[14].index("#") - 3]]), ":15: expected a line "
         "break at the end of the line (truncated model file?)"),
        ("\n".join(text[:14] + [text[14][:text[14].index("#") - 3]]) + "\n", ":15: expected a "
         "support vector line 'alpha*y idx:val ... #' (no '#': truncated model file?)"),
        ("\n".join(text[:1] + ["2000000000 # number of classes"] + text[2:]) + "\n",
         ":2: expected at most 134217728 weights"),
        ("SVM-multiclass Version V1.01\n", "version V2.20"),
    ]
    for i, (model, pattern) in enumerate(cases):
        if not isinstance(model, Path):
            path = tmp / f"bad{i}.model"
            path.write_text(model)
            model = path
        assert classify([test, model, pred]) == 1, pattern
        assert fails(capsys, 1, pattern, pred)
    assert classify([test, tmp / "nope.model", pred]) == 1
    assert fails(capsys, 1, "nope.model", pred)


def test_classify_bad_test_file_leaves_no_output(data, capsys):
    tmp, X, y = data
    model, pred = tmp / "model", tmp / "pred"
    assert learn(["-c", "100", "-v", "0", write_data(tmp / "tr.dat", X, y + 1), model]) == 0
    bad = tmp / "bad.dat"
    bad.write_text("1 1:0.5 2:inf\n")
    assert classify([bad, model, pred]) == 1
    assert fails(capsys, 1, "bad.dat:1: expected a finite feature value", pred)
    assert classify(["-x", bad, model, pred]) == 2
    assert fails(capsys, 2, "unknown option -x", pred)


def test_unknown_test_labels_are_reported(data, capsys):
    tmp, X, y = data
    model, pred = tmp / "model", tmp / "pred"
    assert learn(["-c", "100", "-v", "0", write_data(tmp / "tr.dat", X, y + 1), model]) == 0
    labels = y + 1
    labels[:10] = 9
    assert classify([write_data(tmp / "te.dat", X, labels), model, pred]) == 0
    assert "10 examples have a label that is not a class of the model" in capsys.readouterr().out


def test_bin_launchers(data):
    tmp, X, y = data
    train = write_data(tmp / "train.dat", X, y + 1)
    env = dict(os.environ, PYTHONPATH="")
    r = subprocess.run([sys.executable, str(ROOT / "bin" / "svm_topk_learn"), "-c", "100", "-k",
                        "2", "-v", "0", train, str(tmp / "model")], capture_output=True,
                       text=True, env=env)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, str(ROOT / "bin" / "svm_topk_classify"), train,
                        str(tmp / "model"), str(tmp / "pred")], capture_output=True, text=True,
                       env=env)
    assert r.returncode == 0, r.stderr
    assert "top-2" in r.stdout
    r = subprocess.run([sys.executable, str(ROOT / "bin" / "svm_topk_learn"), "-c", "1", "-k",
                        "7", train, str(tmp / "m2")], capture_output=True, text=True, env=env)
    assert r.returncode == 1 and r.stderr.startswith("svm_topk_learn: error: -k 7")


def test_refuses_huge_feature_index_and_unwritable_model_before_training(tmp_path, capsys):
    train = tmp_path / "t.dat"
    train.write_text("1 1:1\n2 2:1\n3 2000000000:1\n")
    assert learn(["-c", "1", train, tmp_path / "m"]) == 1
    assert f"{train}:3: expected a feature index <= 16777216" in capsys.readouterr().err
    train.write_text("1 1:1\n2 2:1\n3 3:1\n")
    assert learn(["-c", "1", train, tmp_path / "no" / "m"]) == 1
    assert "cannot write (no such directory" in capsys.readouterr().err


def test_svm_multiclass_options_are_accepted_or_refused_by_name(data, capsys):
    tmp, X, y = data
    train = write_data(tmp / "tr.dat", X, y + 1)
    assert learn(["-c", "10", "-w", "3", "-o", "2", "-l", "0", "-p", "1", "-t", "0", "-y", "1",
                  "-v", "0", train, tmp / "m"]) == 0
    assert classify(["-v", "0", "-y", "1", train, tmp / "m", tmp / "pred"]) == 0
    for option, value in (("-w", "9"), ("-o", "1"), ("-l", "1"), ("-p", "2")):
        assert learn(["-c", "10", option, value, train, tmp / "m2"]) == 2
        assert f"{option} {value} is not supported" in capsys.readouterr().err
    assert not (tmp / "m2").exists()


def test_overflowing_examples_are_refused(data, capsys):
    """A squared norm beyond the largest double trained a model that ignored the row
    (exit 0, 'increase max_epoch'); a class score beyond it was written as inf."""
    tmp, X, y = data
    huge = tmp / "huge.dat"
    huge.write_text("1 1:1 2:1\n# note\n2 1:1e160 2:1e160\n3 2:1\n")
    assert learn(["-c", 1, huge, tmp / "m"]) == 1
    assert fails(capsys, 1, f"{huge}:3: the squared norm of the example overflows",
                 tmp / "m")
    with pytest.raises(ValueError, match=r"^X: the squared norm of row 1 overflows"):
        TopKSVM().fit(np.array([[1.0, 1.0], [1e160, 1e160], [0.0, 1.0]]), [1, 2, 3])
    model = tmp / "model"
    write_multiclass_model(model, MulticlassModel(coef=np.array([[1e300, 0.0], [0.0, 1.0]]),
                                                  classes=np.array([1.0, 2.0]), n_train=2))
    test = tmp / "test.dat"
    test.write_text("1 1:1\n2 1:1e10 2:1\n")
    for v in (1, 0):
        assert classify(["-v", v, test, model, tmp / "pred"]) == 1
        assert fails(capsys, 1, f"{test}:2: a class score w_c·x overflows", tmp / "pred")


def test_a_model_too_large_for_the_reader_is_refused_before_training(tmp_path, capsys):
    """9 classes x 14,913,081 features = 2**27 + 1 weights: the learner trained (7 GB)
    and wrote a model that svm_topk_classify then refused as corrupt."""
    train = tmp_path / "wide.dat"
    train.write_text("".join(f"{c} 1:1\n" for c in range(1, 9)) + "9 14913081:1\n")
    assert learn(["-c", "1", train, tmp_path / "model"]) == 1
    assert fails(capsys, 1, f"{train}: 9 classes x 14913081 features make 134217729 weights; "
                            "a model file holds at most 134217728", tmp_path / "model")
    wide = np.broadcast_to(0.0, (9, 14913081))  # (no memory: the size is checked first)
    with pytest.raises(ValueError, match="^coef: 9 classes x 14913081 features"):
        write_multiclass_model(tmp_path / "model", MulticlassModel(wide, np.arange(1, 10)))


@pytest.mark.parametrize("labels", ["fractional", "negative"])
def test_class_cap_applies_to_every_label_kind(tmp_path, capsys, monkeypatch, labels):
    """Issue 29 #3: fractional (and other non 1..m) labels skipped the class-count check."""
    monkeypatch.setattr(topk_learn, "MAX_CLASSES", 50)
    values = np.arange(60) + (0.5 if labels == "fractional" else -100.0)
    train = tmp_path / "train.dat"
    train.write_text("".join(f"{v:g} 1:{k % 7 + 1} 2:1\n" for k, v in enumerate(values)))
    status = learn(["-v", "0", "-c", "1", train, tmp_path / "model"])
    assert fails(capsys, status, f"{train}: 60 distinct labels make as many classes; at most 50",
                 tmp_path / "model")


def test_dual_too_large_is_refused_before_training(data, capsys, monkeypatch):
    """Issue 29 #3: memory grew as samples x classes without a bound; now refused up front
    with the bytes needed and the limit."""
    from svmrank.learners import sdca
    tmp, X, y = data
    monkeypatch.setattr(sdca, "MAX_SDCA_BYTES", 10_000)
    train = write_data(tmp / "train.dat", X, y + 1)
    need = sdca.sdca_memory_bytes(len(y), 4, X.shape[1])
    status = learn(["-v", "0", "-c", "1", train, tmp / "model"])
    assert fails(capsys, status, f"{train}: Prox-SDCA would need about {need} bytes (120 samples "
                 "x 4 classes), above the limit of 10000 bytes", tmp / "model")
    with pytest.raises(ValueError, match=f"about {need} bytes"):
        TopKSVM(C=1.0).fit(X, y)


def test_issue_sized_dual_exceeds_the_default_limit():
    """30,000 samples of 30,000 distinct labels (the issue's 7 GB run) are refused."""
    from svmrank.learners.sdca import MAX_SDCA_BYTES, check_sdca_memory, sdca_memory_bytes
    assert sdca_memory_bytes(30_000, 30_000, 1) > MAX_SDCA_BYTES
    with pytest.raises(ValueError, match="30000 samples x 30000 classes"):
        check_sdca_memory(30_000, 30_000, 1)
    check_sdca_memory(20_000, 26, 16)  # (letter: far below)
