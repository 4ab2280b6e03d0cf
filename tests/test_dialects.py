"""The per-dialect option tables (svmrank.cli.dialects) and the scripts built on them:
svm_rank_learn / svm_rank_classify (SVM-rank V1.00) and svm_learn / svm_classify
(SVM-light, linear classification)."""
import itertools
import os
import re
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svmrank.cli import (ap_classify, ap_learn, light_classify, light_learn, perf_classify,
                         perf_learn, rank_classify,
                         rank_learn, topk_classify, topk_learn)
from svmrank.cli.common import CLIError
from svmrank.cli.dialects import REFUSED, UNUSED, USED
from svmrank.io.model_file import read_model
from svmrank.io.svmlight import load_svmlight

from conftest import shared_file
from test_model_file import SVM_RANK_MODEL, SVM_RANK_W

ROOT = Path(__file__).resolve().parents[1]
TRAIN, TEST = ROOT / "data_examples" / "rank_train.dat", ROOT / "data_examples" / "rank_test.dat"
SCRIPTS = [ap_learn, ap_classify, topk_learn, topk_classify, rank_learn, rank_classify,
           light_learn, light_classify]
POSITIONALS = {ap_learn: ["t", "m"], topk_learn: ["-c", "1", "t", "m"],
               rank_learn: ["-c", "1", "t", "m"], light_learn: ["t", "m"],
               ap_classify: ["t", "m", "p"], topk_classify: ["t", "m", "p"],
               rank_classify: ["t", "m", "p"], light_classify: ["t", "m", "p"]}


def parse(script, argv):
    """The script's options for argv (its own cross checks included where it has them)."""
    if hasattr(script, "parse_options"):
        return script.parse_options(argv + POSITIONALS[script])
    return script.DIALECT.parse(argv + POSITIONALS[script])


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda s: s.DIALECT.prog)
def test_every_refusal_is_one_line_naming_the_option(script):
    for option in script.DIALECT.table():
        if option.status == REFUSED:
            bad = "x"
        elif option.only is not None:
            bad = "7" if option.type is not None else "zz"
        else:
            continue
        with pytest.raises(CLIError) as exc:
            parse(script, [option.flag, bad])
        message = str(exc.value)
        assert "\n" not in message and message.startswith(option.flag), message


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda s: s.DIALECT.prog)
def test_defaults_parse_and_unused_options_are_accepted(script):
    args = parse(script, [])
    for option in script.DIALECT.table():
        if option.status == USED and option.only is not None:
            assert option.default in option.only
        if option.status == UNUSED and option.only is None and option.check is None:
            parse(script, [option.flag, "3"])  # accepted, ignored
    assert args is not None


def test_markdown_rows_list_every_option():
    rows = rank_learn.DIALECT.markdown().splitlines()
    assert len(rows) == 2 + len(rank_learn.DIALECT.table())
    assert any(r.startswith("| `-l` | used | 1 |") for r in rows)


# ---------------------------------------------------------------- svm_rank_learn

def test_rank_learn_options_follow_svm_rank():
    with pytest.raises(CLIError, match="'-c'"):
        rank_learn.parse_options(["t", "m"])
    args = rank_learn.parse_options(["-c", "3", "t"])
    assert (args.l, args.e, args.w, args.model_file) == (1, 0.001, 3, "svm_struct_model")
    for argv, pattern in ((["-l", "0"], "-l 0 is not supported"), (["-w", "9"], "-w 9"),
                          (["-o", "1"], "-o 1"), (["-p", "2"], "-p 2"), (["-t", "2"], "-t 2"),
                          (["-a", "f"], "-a"), (["--b", "1"], "unknown option --b")):
        with pytest.raises(CLIError, match=re.escape(pattern)):
            rank_learn.parse_options(argv + ["-c", "1", "t", "m"])
    for argv in (["-w", "0"], ["-# ", "5"], ["-h", "5"], ["-k", "10"], ["-m", "40"]):
        rank_learn.parse_options([a.strip() for a in argv] + ["-c", "1", "t", "m"])


def test_rank_learn_orders_any_real_labels_as_svm_rank_does(tmp_path, capsys):
    """Review 21: SVM-rank trains on labels that are not levels (-1/0/1, 0.5 steps): only
    their order within a query makes pairs, so they train the model of their ranks."""
    real = tmp_path / "real.dat"
    real.write_text("2 qid:1 1:1 2:0.3\n0 qid:1 1:0.5\n# c\n1 qid:2 1:1\n-1 qid:2 1:2 2:1\n"
                    "0.5 qid:2 2:1\n-1 qid:2 1:0.2\n")
    ranks = tmp_path / "ranks.dat"  # (each label's rank among its query's labels)
    ranks.write_text("1 qid:1 1:1 2:0.3\n0 qid:1 1:0.5\n2 qid:2 1:1\n0 qid:2 1:2 2:1\n"
                     "1 qid:2 2:1\n0 qid:2 1:0.2\n")
    for loss in ("1", "2"):
        models = []
        for data in (real, ranks):
            model = tmp_path / f"{data.stem}{loss}.model"
            assert rank_learn.main(["-v", "0", "-l", loss, "-c", "1", str(data),
                                    str(model)]) == 0
            models.append(read_model(model).w)
        np.testing.assert_array_equal(*models)
    many = tmp_path / "many.dat"  # (more distinct labels in a query than levels exist)
    many.write_text("".join(f"{k / 7:.6f} qid:1 1:{k % 5 + 1}\n" for k in range(1003)))
    assert rank_learn.main(["-c", "1", str(many), str(tmp_path / "m")]) == 1
    assert "many.dat:1002: the query of this line has more than 1001 distinct labels" \
        in capsys.readouterr().err
    assert not (tmp_path / "m").exists()


def brute_pairs(y, qid):
    return [sum(1 for i, j in itertools.product(range(len(y)), repeat=2)
                if qid[i] == q == qid[j] and y[i] > y[j]) for q in sorted(set(qid.tolist()))]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 3)), min_size=1, max_size=25))
def test_pairs_per_query_matches_brute_force(rows):
    qid, y = np.array(rows, dtype=float).T
    assert rank_learn.pairs_per_query(y, qid).tolist() == brute_pairs(y, qid)


def test_rank_estimator_mapping():
    y = np.array([2.0, 1, 0, 0, 1, 1, 3])
    qid = np.array([1.0, 1, 1, 1, 2, 2, 3])
    pairs = rank_learn.pairs_per_query(y, qid)
    assert pairs.tolist() == [5, 0, 0]
    args = rank_learn.parse_options(["-c", "3", "-e", "0.01", "t"])
    est = rank_learn.make_estimator(args, pairs)
    # one rankable query of three: C = c n_r / n, epsilon = e * pairs / n_r
    assert (est.loss, est.pair_loss, est.C, est.epsilon) == ("pairs", "count", 1.0,
                                                              pytest.approx(0.05))
    args = rank_learn.parse_options(["-c", "3", "-e", "0.01", "-l", "2", "t"])
    est = rank_learn.make_estimator(args, pairs)
    assert (est.pair_loss, est.C, est.epsilon) == ("fraction", 1.0, pytest.approx(0.03))


def test_rank_learn_and_classify_end_to_end(tmp_path, capsys):
    model, pred = tmp_path / "m", tmp_path / "p"
    assert rank_learn.main(["-c", "3", str(TRAIN), str(model)]) == 0
    out = capsys.readouterr().out
    assert "Training set properties:" in out and "eps=" in out
    assert rank_classify.main([str(TEST), str(model), str(pred)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"Avg Swappedpairs Percent: +\d+\.\d\d", out)
    lines = pred.read_text().splitlines()
    assert all(re.fullmatch(r"-?\d+\.\d{8}", line) for line in lines)


# ---------------------------------------------------------------- svm_rank_classify

def brute_swapped(y, s):
    return (sum(1 for i, j in itertools.product(range(len(y)), repeat=2)
                if y[i] > y[j] and s[i] <= s[j]),
            sum(1 for i, j in itertools.product(range(len(y)), repeat=2) if y[i] > y[j]))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), st.integers(-2, 2)), min_size=1, max_size=20))
def test_swapped_pairs_matches_brute_force(rows):  # (ties in scores count as swapped)
    y, s = np.array(rows, dtype=float).T
    assert rank_classify.swapped_pairs(y, s) == brute_swapped(y, s)


def test_rank_classify_reads_svm_rank_models(tmp_path, capsys):
    model, data, pred = tmp_path / "m", tmp_path / "d", tmp_path / "p"
    model.write_text(SVM_RANK_MODEL)
    # one feature a line: the scores are the model's weights (feature 7 is beyond it)
    data.write_text("3 qid:1 1:1\n2 qid:1 5:1\n1 qid:1 3:1\n1 qid:2 1:1 7:9\n0 qid:2 2:1\n"
                    "0 qid:3 1:1\n")
    assert rank_classify.main([str(data), str(model), str(pred)]) == 0
    w = SVM_RANK_W
    assert pred.read_text() == "".join(f"{s:.8f}\n" for s in (w[0], w[4], w[2], w[0], w[1], w[0]))
    out, err = capsys.readouterr()
    assert "index above the model's highest (6); they are ignored" in err
    # query 1: labels 3, 2, 1 scored w1 < w5, w3: the pair (3, 2) is swapped, of 3
    assert "Total Num Swappedpairs  :      1" in out
    assert "Average loss on test set: 0.1111" in out  # (1/3 + 0 + 0) / 3
    assert "(2 correct, 1 incorrect, 3 total)" in out


# ---------------------------------------------------------------- svm_ap_learn -l 2

def test_ap_learn_error_rate_on_queries_is_refused(tmp_path, capsys):
    """Issue 25: -l 2 cannot honour queries, so ranked data is refused, not merged."""
    model = tmp_path / "m"
    assert ap_learn.main(["-v", "0", "-l", "2", "-c", "1", str(TRAIN), str(model)]) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(TRAIN) in err
    assert "cannot honour its 6 queries (qid)" in err and "svm_perf_learn -l 2" in err
    assert not model.exists()


# ---------------------------------------------------------------- svm_learn

def blobs(n=80, d=5, seed=0):
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X = rng.normal(size=(n, d)) + 0.8 * y[:, None]
    return X, y


def write_data(path, X, y):
    with open(path, "w") as fh:
        for row, label in zip(X, y):
            fh.write(f"{label:+g} " + " ".join(f"{j + 1}:{v:.6f}" for j, v in enumerate(row))
                     + "\n")
    return path


def hinge_objective(w, b, X, y, C):
    return 0.5 * w @ w + C * np.maximum(0, 1 - y * (X @ w - b)).sum()


def test_svm_learn_c_is_per_example(tmp_path):
    """svm_learn -c C -b 0 minimises 1/2|w|^2 + C sum_i hinge_i: the objective matches
    LinearSVC's (hinge loss, no intercept) at the same C, within the epsilon scale."""
    from sklearn.svm import LinearSVC
    X, y = blobs()
    X = np.round(X, 6)
    data, model = write_data(tmp_path / "d", X, y), tmp_path / "m"
    C = 0.05
    assert light_learn.main(["-v", "0", "-t", "0", "-b", "0", "-c", str(C), "-e", "1e-5",
                             str(data), str(model)]) == 0
    m = read_model(model)
    w = np.zeros(X.shape[1])
    w[:len(m.w)] = m.w
    assert m.b == 0
    ref = LinearSVC(C=C, loss="hinge", fit_intercept=False, dual=True, tol=1e-10,
                    max_iter=200000).fit(X, y)
    ours, theirs = hinge_objective(w, 0, X, y, C), hinge_objective(ref.coef_[0], 0, X, y, C)
    assert ours == pytest.approx(theirs, rel=1e-3)
    np.testing.assert_allclose(w, ref.coef_[0], rtol=0.02, atol=2e-3)


def test_svm_learn_default_c_and_refusals(tmp_path, capsys):
    X, y = blobs(40)
    data = write_data(tmp_path / "d", X, y)
    assert light_learn.main([str(data), str(tmp_path / "m")]) == 0
    # SVM-light's code: 1 / (mean |x|)^2 (estimate_r_delta_average), not its help's x.x
    c = 1 / np.mean(np.sqrt(np.sum(np.round(X, 6) ** 2, axis=1))) ** 2
    assert f"C = {c:.8g}" in capsys.readouterr().out
    (tmp_path / "cost").write_text("1 cost:1 1:1\n-1 1:-1 # cost:3 in a comment\n"
                                   "1 cost:2.5 1:2\n")
    assert light_learn.main([str(tmp_path / "cost"), str(tmp_path / "mc")]) == 1
    assert f"{tmp_path / 'cost'}:3: cost:2.5: per-example cost factors" in capsys.readouterr().err
    assert not (tmp_path / "mc").exists()
    for values, cause in (("1e300 2:1e300", "is 0 in float64: scale the features down"),
                          ("1e-170", "is infinite in float64: scale the features up")):
        (tmp_path / "x").write_text(f"1 1:{values}\n-1 1:-{values}\n")
        assert light_learn.main([str(tmp_path / "x"), str(tmp_path / "mx")]) == 1
        err = capsys.readouterr().err
        assert f"{tmp_path / 'x'}: the default C" in err and cause in err, err
    for argv, pattern in ((["-z", "p"], "-z p is not supported"), (["-y", "1"], "-y 1"),
                          (["-b", "2"], "-b 2"), (["-t", "1"], "-t 1"), (["-j", "2"], "-j 2"),
                          (["-p", "0.5"], "-p (transductive"), (["-x", "1"], "-x 1")):
        with pytest.raises(CLIError, match=re.escape(pattern)):
            light_learn.parse_options(argv + ["t", "m"])
    assert light_learn.parse_options(["-b", "0", "-y", "0", "t"]).biased == 0
    (tmp_path / "u").write_text("1 1:1\n0 1:2\n-1 1:-1\n")
    assert light_learn.main([str(tmp_path / "u"), str(tmp_path / "m2")]) == 1
    assert ":2: label 0" in capsys.readouterr().err


def test_svm_classify_writes_percent_8g(tmp_path, capsys):
    X, y = blobs(30)
    data, model, pred = write_data(tmp_path / "d", X, y), tmp_path / "m", tmp_path / "p"
    assert light_learn.main(["-v", "0", "-c", "0.1", str(data), str(model)]) == 0
    assert light_classify.main([str(data), str(model), str(pred)]) == 0
    m = read_model(model)
    expected = "".join(f"{s:.8g}\n" for s in m.decision_function(load_svmlight(data)[0]))
    assert pred.read_text() == expected
    assert re.search(r"Accuracy on test set: \d+\.\d\d% \(\d+ correct", capsys.readouterr().out)
    with pytest.raises(CLIError, match="-f 0"):
        light_classify.DIALECT.parse(["-f", "0", "t", "m"])
    # review 23: as svm_classify, no accuracy lines unless every label is -1 or +1 (a 0/1
    # file reported 100% over its positives only)
    zero_one = write_data(tmp_path / "z", X, np.where(y > 0, 1, 0))
    assert light_classify.main([str(zero_one), str(model), str(pred)]) == 0
    assert "Accuracy" not in capsys.readouterr().out


def test_struct_classifiers_print_their_statistics_at_v0(tmp_path, capsys):
    """Review 23: svm_perf_classify and svm_rank_classify -v 0 printed nothing; SVM-perf
    and SVM-rank print their NOTE and statistics whatever -v. A one-class file's ROC
    area and AvgPrec are nan (SVM-perf: -nan), not 0."""
    X, y = blobs(30)
    data, model = write_data(tmp_path / "d", X, y), tmp_path / "m"
    assert light_learn.main(["-v", "0", "-c", "0.1", str(data), str(model)]) == 0
    assert perf_classify.main(["-v", "0", str(data), str(model), str(tmp_path / "p")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("NOTE: The loss reported above is the percentage of errors")
    assert [line[:9] for line in lines[2:]] == ["Accuracy ", "Precision", "Recall   ",
                                                "F1       ", "PRBEP    ", "ROCArea  ",
                                                "AvgPrec  "]
    assert rank_classify.main(["-v", "0", str(data), str(model), str(tmp_path / "p")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("NOTE: The loss reported above is the fraction of swapped")
    assert lines[3].startswith("Total Num Swappedpairs  :") and len(lines) == 5
    one_class = write_data(tmp_path / "one", X[y > 0], y[y > 0])
    assert perf_classify.main(["-v", "0", str(one_class), str(model), str(tmp_path / "p")]) == 0
    out = capsys.readouterr().out
    assert "ROCArea  :   nan" in out and "AvgPrec  : 100.00" in out


# SVM-light V6.02's binaries (built as benchmarks/interop.py's docstring says; never
# committed): $SVMRANK_INTEROP_BIN, else where the interop benchmark's run left them
INTEROP_BIN = Path(os.environ.get("SVMRANK_INTEROP_BIN", "/tmp/i26/bin"))


def test_svm_learn_writes_svm_light_v602_models(tmp_path):
    """svm_learn's model has SVM-light V6.02's version line (its svm_classify reads no
    other); the SVM-struct learners keep V6.20; our readers take both."""
    X, y = blobs(30)
    data = write_data(tmp_path / "d", X, y)
    assert light_learn.main(["-v", "0", "-c", "0.1", str(data), str(tmp_path / "m")]) == 0
    assert rank_learn.main(["-v", "0", "-c", "1", str(data), str(tmp_path / "r")]) == 0
    light, rank = (read_model(tmp_path / f) for f in ("m", "r"))
    assert (tmp_path / "m").read_text().splitlines()[0] == "SVM-light Version V6.02"
    assert (tmp_path / "r").read_text().splitlines()[0] == "SVM-light Version V6.20"
    assert light.metadata["loss"] == "error" and light.n_features == X.shape[1]
    assert rank_classify.main(["-v", "0", str(data), str(tmp_path / "m"),
                               str(tmp_path / "p")]) == 0


def test_real_svm_classify_reads_our_svm_learn_model(tmp_path):
    """SVM-light V6.02's own svm_classify scores our svm_learn model as ours does
    (1e-6 relative: its model reader and ours print %.8g, SVM-light computes in
    double from the same text)."""
    binary = INTEROP_BIN / "svm_classify"
    if not os.access(binary, os.X_OK):
        pytest.skip(f"{binary} is absent: build SVM-light V6.02 as benchmarks/interop.py's "
                    "docstring says (set SVMRANK_INTEROP_BIN to its folder)")
    X, y = blobs(60)
    data, model = write_data(tmp_path / "d", X, y), tmp_path / "m"
    for argv in (["-b", "1"], ["-b", "0"]):
        assert light_learn.main(["-v", "0", "-c", "0.1", *argv, str(data), str(model)]) == 0
        assert light_classify.main(["-v", "0", str(data), str(model), str(tmp_path / "ours")]) == 0
        done = subprocess.run([str(binary), "-v", "0", str(data), str(model),
                               str(tmp_path / "theirs")], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
        theirs = np.loadtxt(tmp_path / "theirs")
        ours = np.loadtxt(tmp_path / "ours")
        np.testing.assert_allclose(theirs, ours, rtol=1e-6, atol=1e-9)


def svm_perf_objective(model, X, y, loss, c):
    """SVM-perf's primal ½‖w‖² + C ξ(w) of a model file of its (--b 1), through
    svmrank's oracle at the scale of docs/algorithms.md."""
    from svmrank.problems.binary import BinaryProblem
    from svmrank.problems.perf import PerfProblem, perf_scale
    from svmrank.problems.ranking import RankingProblem
    P = int((y > 0).sum())
    c_factor, _, w_factor = perf_scale(loss, P, len(y) - P)
    w = np.zeros(X.shape[1])
    w[:min(len(w), model.w.size)] = model.w[:len(w)]
    if loss in ("roc", "ap"):
        problem, w_ours = RankingProblem(X, y, loss=loss), w
    else:
        problem = BinaryProblem(X, y) if loss == "error" else PerfProblem(X, y, loss)
        w_ours = np.append(w, -model.b)
    delta, g = problem.most_violated(w_ours / w_factor)
    xi = w_factor ** 2 * c_factor * max(0.0, delta - w_ours @ g / w_factor)
    return 0.5 * (w @ w + model.b ** 2) + c * xi


@pytest.mark.parametrize("l", [0, 1, 2, 3, 4, 5, 10, 11])
def test_real_svm_perf_reads_ours_and_agrees(tmp_path, l):
    """SVM-perf V3.00's own binaries (built as benchmarks/interop.py's docstring says)
    and ours, per loss at -c 1: each classifier scores each model alike (1e-6 relative
    or its %.8f digit), SVM-perf's printed objective is the one svmrank computes for its
    model through the C conversion, and our model's is within C·ε of it."""
    learn, classify = INTEROP_BIN / "svm_perf_learn", INTEROP_BIN / "svm_perf_classify"
    if not (os.access(learn, os.X_OK) and os.access(classify, os.X_OK)):
        pytest.skip(f"{learn} is absent: build SVM-perf V3.00 as benchmarks/interop.py's "
                    "docstring says (set SVMRANK_INTEROP_BIN to its folder)")
    X, y = blobs(60)
    y[::3] = -1.0  # (20 positives of 60)
    data = write_data(tmp_path / "d", X, y)
    argv = ["-c", "1", "-e", "0.1", "-l", str(l), "-w", "9" if l == 2 else "3"]
    done = subprocess.run([str(learn), *argv, "-v", "1", str(data), str(tmp_path / "theirs")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    pval = float(re.search(r"pval=([-+0-9.eE]+)", done.stdout).group(1))
    assert perf_learn.main([*argv, "-v", "0", str(data), str(tmp_path / "ours")]) == 0
    for who in ("theirs", "ours"):
        model = tmp_path / who
        done = subprocess.run([str(classify), "-v", "0", str(data), str(model),
                               str(tmp_path / "p_c")], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
        assert perf_classify.main(["-v", "0", str(data), str(model), str(tmp_path / "p_o")]) == 0
        theirs, ours = np.loadtxt(tmp_path / "p_c"), np.loadtxt(tmp_path / "p_o")
        # (SVM-light sums in 32-bit floats: 1e-6 of the largest score)
        assert np.abs(theirs - ours).max() <= 1e-6 * np.abs(theirs).max() + 1e-8
    loss = perf_learn.LOSSES[l]
    j_theirs = svm_perf_objective(read_model(tmp_path / "theirs"), X, y, loss, 1.0)
    j_ours = svm_perf_objective(read_model(tmp_path / "ours"), X, y, loss, 1.0)
    assert abs(j_theirs - pval) <= 1e-4 * pval + 1e-5
    assert abs(j_ours - j_theirs) <= 1.0 * 0.1


def test_dialect_warnings_are_not_errors():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rank_learn.parse_options(["-c", "1", "t"])


def test_rank_learn_on_mq2008(tmp_path, capsys):
    """Graded labels 0/1/2 and queries without a relevant document: svm_rank_learn's
    model is RankSVM's at the mapped parameters, and it ranks the next fold's queries."""
    from svmrank.estimators import RankSVM
    from svmrank.losses import svm_rank_parameters
    train, test = shared_file("mq2008", "S1.txt"), shared_file("mq2008", "S2.txt")
    model, pred = tmp_path / "m", tmp_path / "p"
    assert rank_learn.main(["-v", "0", "-c", "1", str(train), str(model)]) == 0
    X, y, qid = load_svmlight(train)
    params = svm_rank_parameters(1.0, 0.001, 1, rank_learn.pairs_per_query(y, qid))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = RankSVM(loss="pairs", max_iter=100000, **params).fit(X, y, qid=qid)
    w = read_model(model).w
    np.testing.assert_allclose(w, est.coef_[:len(w)], rtol=1e-6, atol=1e-7)
    capsys.readouterr()
    assert rank_classify.main([str(test), str(model), str(pred)]) == 0
    percent = float(re.search(r"Avg Swappedpairs Percent: +([\d.]+)", capsys.readouterr().out)[1])
    assert percent < 30  # (a random ranking swaps about half of the pairs)


# SVM-rank V1.00's binaries (built outside the repository as benchmarks/bench_ltr.py's
# docstring says; never committed): $SVMRANK_SVM_RANK_BIN, else where that build left them
SVM_RANK_BIN = Path(os.environ.get("SVMRANK_SVM_RANK_BIN", "/work/peers/svm_rank/bin"))


def _svm_rank_objective(w, X, y, qid, c, loss_function):
    """svm_rank_learn's primal at w for -c c -l loss_function, computed by svmrank at the
    parameters svm_rank_parameters maps them to, and SVM-rank's tolerance c * eps."""
    from svmrank.losses import PairwiseLoss, svm_rank_parameters
    from svmrank.problems.graded import GradedRankingProblem
    params = svm_rank_parameters(c, 0.001, loss_function, rank_learn.pairs_per_query(y, qid))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (a query of one level)
        problem = GradedRankingProblem(X, y, qid, PairwiseLoss(params["pair_loss"]))
    w = np.concatenate([w, np.zeros(X.shape[1])])[:X.shape[1]]
    scores = problem.scores(w)
    loss, d = problem.violation_at_scores(scores)
    return (0.5 * w @ w + params["C"] * max(0.0, loss - scores @ d),
            params["C"] * params["epsilon"])


@pytest.mark.parametrize("loss_function", [1, 2])
def test_real_svm_rank_same_objective_and_models_read_both_ways(tmp_path, loss_function):
    """SVM-rank V1.00's own svm_rank_learn: the objective svmrank computes at its model is
    the 'pval' it prints (so C, epsilon and the pair counts map right), svmrank's
    svm_rank_learn reaches it within c * eps, and each program's svm_rank_classify scores
    the other's model as that program does (1e-6 of the largest prediction: SVM-rank
    holds features in float and prints %.8f)."""
    learn, classify = SVM_RANK_BIN / "svm_rank_learn", SVM_RANK_BIN / "svm_rank_classify"
    if not (os.access(learn, os.X_OK) and os.access(classify, os.X_OK)):
        pytest.skip(f"{learn} is absent: build SVM-rank V1.00 as benchmarks/bench_ltr.py's "
                    "docstring says (set SVMRANK_SVM_RANK_BIN to its folder)")
    from svmrank.io.svmlight import dump_svmlight
    rng = np.random.default_rng(7)
    qid = np.repeat(np.arange(1, 7), 15)
    X = np.round(rng.normal(size=(len(qid), 6)), 4)
    y = np.clip(np.round(X[:, 0] + X[:, 1] + rng.normal(size=len(qid))), 0, 3).astype(int)
    if loss_function == 1:  # (with -l 2 SVM-rank divides by a query's zero pairs)
        y[qid == 4] = 1
    data, c = tmp_path / "train.dat", 2.0
    dump_svmlight(data, X, y, qid=qid)
    theirs, ours = tmp_path / "theirs.model", tmp_path / "ours.model"
    done = subprocess.run([str(learn), "-c", str(c), "-l", str(loss_function), str(data),
                           str(theirs)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    pval = float(re.search(r"pval=([-\d.e+]+)", done.stdout)[1])
    assert rank_learn.main(["-v", "0", "-c", str(c), "-l", str(loss_function), str(data),
                            str(ours)]) == 0
    X, y, qid = load_svmlight(data)
    obj_theirs, tolerance = _svm_rank_objective(read_model(theirs).w, X, y, qid, c,
                                                loss_function)
    obj_ours, _ = _svm_rank_objective(read_model(ours).w, X, y, qid, c, loss_function)
    assert obj_theirs == pytest.approx(pval, rel=1e-5, abs=1e-5)
    assert abs(obj_ours - obj_theirs) <= tolerance
    preds = {}
    for program, model in itertools.product(("theirs", "ours"), (theirs, ours)):
        out = tmp_path / f"{program}_{model.stem}"
        argv = ["-v", "0", str(data), str(model), str(out)]
        if program == "ours":
            assert rank_classify.main(argv) == 0
        else:
            assert subprocess.run([str(classify), *argv], capture_output=True).returncode == 0
        preds[program, model.stem] = np.loadtxt(out)
    for model in (theirs, ours):
        a, b = preds["theirs", model.stem], preds["ours", model.stem]
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6 * np.abs(b).max())


def test_classifiers_write_no_predictions_for_a_file_without_examples(tmp_path, capsys):
    """Review 21: an empty shard or a file of comments gets an empty prediction file
    and exit status 0, as SVM-rank's and SVM-perf's classifiers do (learners refuse it)."""
    model, multi = tmp_path / "m", tmp_path / "mm"
    assert rank_learn.main(["-v", "0", "-c", "1", str(TRAIN), str(model)]) == 0
    iris = tmp_path / "iris.dat"
    iris.write_text("1 1:1\n2 1:2\n3 1:3\n1 1:1.1\n2 1:2.1\n3 1:2.9\n")
    assert topk_learn.main(["-v", "0", "-c", "10", str(iris), str(multi)]) == 0
    for content in ("", "# only a comment\n\n"):
        empty = tmp_path / "empty.dat"
        empty.write_text(content)
        for script, m in ((rank_classify, model), (ap_classify, model), (perf_classify, model),
                          (light_classify, model), (topk_classify, multi)):
            out = tmp_path / f"{script.__name__}.pred"
            out.write_text("old")
            assert script.main([str(empty), str(m), str(out)]) == 0, script.__name__
            assert out.read_bytes() == b""
            assert f"{empty}: no example lines: wrote an empty {out}" in capsys.readouterr().out
    assert rank_learn.main(["-c", "1", str(empty), str(tmp_path / "m2")]) == 1  # (no data)
    assert "expected at least one example line" in capsys.readouterr().err


@pytest.mark.parametrize("learner, options", [
    (ap_learn, []), (ap_learn, ["--latent"]), (rank_learn, ["-c", "1"]),
    (perf_learn, ["-c", "1"]), (light_learn, []), (topk_learn, ["-c", "1"])])
def test_a_training_file_of_labels_only_is_named(tmp_path, capsys, learner, options):
    """Issue 29 and review 21: the error was scikit-learn's 'X: Found array with 0
    feature(s)'; no model file is written."""
    path, model = tmp_path / "labels_only.dat", tmp_path / "m"
    path.write_text("1 qid:1\n1 qid:1 # no feature\n2 qid:2\n2 qid:2\n")
    assert learner.main(options + ["-v", "0", str(path), str(model)]) == 1
    assert capsys.readouterr().err == (f"{learner.DIALECT.prog}: error: {path}: no example "
                                       "line has a feature (idx:val), so there is no weight "
                                       "to learn\n")
    assert not model.exists()


def test_an_error_after_a_progress_line_starts_a_line_of_its_own(tmp_path, capsys):
    """Review 21: "Reading test examples...svm_rank_classify: error: ..." in a log of
    both streams; the progress line is now ended first."""
    model, bad = tmp_path / "m", tmp_path / "bad.dat"
    assert rank_learn.main(["-v", "0", "-c", "1", str(TRAIN), str(model)]) == 0
    bad.write_text("1 qid:1 1:1\n0 qid:1 1:nan\n")
    assert rank_classify.main([str(bad), str(model), str(tmp_path / "p")]) == 1
    out, err = capsys.readouterr()
    assert out.endswith("Reading test examples...\n") and err.startswith("svm_rank_classify")


def test_rank_learn_prints_the_slack_on_svm_ranks_scale(tmp_path, capsys):
    """Review 21: the summary's slack was RankSVM's (C = c·n_r/n), above the objective;
    on SVM-rank's scale objective = ½‖w‖² + c·slack."""
    model = tmp_path / "m"
    assert rank_learn.main(["-c", "3", str(TRAIN), str(model)]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if "slack" in ln)
    objective, slack = (float(re.search(rf"{key} ([-+0-9.e]+)", line).group(1))
                        for key in ("objective", "slack"))
    w = read_model(model).w
    assert objective == pytest.approx(0.5 * w @ w + 3 * slack, rel=1e-5)
