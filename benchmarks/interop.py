"""Interop with Joachims' real binaries, and the speed of SVM-perf's multivariate losses.

    python benchmarks/interop.py --bin DIR          # DIR: the real binaries (optional)
    python benchmarks/interop.py --quick            # smaller speed runs

Part 1, interop (needs DIR): each tool found in DIR and svmrank's console script of the
same name are run with the same command lines on shared data sets; the table says, per
row, whether each reads the other's model, whether the predictions agree to 1e-6
relative (svmrank scores in float64; SVM-light writes 32-bit floats in its model files),
whether the two primal objectives of the same problem agree within ε, and for SVM-perf
the C conversion: SVM-perf's printed objective (pval) equals the one svmrank's oracle
computes for SVM-perf's model through docs/algorithms.md's factors. A tool absent from
DIR gets its rows skipped with the reason.

Building the binaries (never committed; outside the repository):

    # SVM-light V6.02 (svm_learn, svm_classify): its C sources ship on PyPI
    pip download svmlight==0.4 --no-deps --no-binary :all: && tar xzf svmlight-0.4.tar.gz
    cd svmlight-0.4/lib
    gcc -O3 -o DIR/svm_learn svm_learn_main.c svm_learn.c svm_common.c svm_hideo.c -lm
    gcc -O3 -o DIR/svm_classify svm_classify.c svm_common.c -lm
    # SVM-perf V3.00 (svm_perf_learn, svm_perf_classify; SVM-struct V3.10, SVM-light
    # V6.20 inside): BCILAB redistributes its sources. With the library's `fetch` tool
    # (github:sccn/BCILAB, a git directory without work tree):
    git --git-dir=BCILAB.git archive HEAD dependencies/SVMperf-3.10 | tar -x
    cd dependencies/SVMperf-3.10
    # No edit: BCILAB renamed svm_struct_main.c to mex_svm_perf_learn.c and
    # svm_struct_classify.c to mex_svm_perf_classify.c, and every MEX part is under
    # #ifdef COMPILE_MEX_INTERFACE; left undefined, the native mains are compiled (the
    # learner's -w 9 calls svm_learn_struct_joint_custom, as SVM-perf V3.00's does).
    S="svm_struct_api.c svm_struct_learn_custom.c svm_struct_learn.c svm_struct_common.c
       svm_learn.c svm_hideo.c svm_common.c"
    gcc -O3 -w -o DIR/svm_perf_learn mex_svm_perf_learn.c $S -lm
    gcc -O3 -w -o DIR/svm_perf_classify mex_svm_perf_classify.c $S -lm
    # SVM-rank V1.00: not built (its rows are not checked by this script)

Part 2, speed (always): each new loss's most-violated-labelling call against the error
rate's (``violation_at_scores``, and ``most_violated`` with the products X w, Xᵀd) at
N = 1e5 (target <= 5x), and training on w8a with each loss at SVM-perf's -c 1 (svmrank's
C per docs/algorithms.md) against the error rate. SVM-perf's own time on w8a is the
issue's other target (<= 0.2x): both console scripts, best of 3 interleaved rounds (2
with --quick), compared on training time (each program's own "Runtime in cpu-seconds": CPU
time of the learning alone, reading and writing excluded; svmrank's counts every thread)
and on the whole program's wall time (Python's start and imports included), with the
interop columns on w8a; skipped without the binary.
"""
import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import description, interleaved_times, machine_line  # noqa: E402
from _common import print_table, shared_file_or_exit  # noqa: E402

from svmrank.io.model_file import read_model  # noqa: E402
from svmrank.io.svmlight import load_svmlight  # noqa: E402
from svmrank.problems.binary import BinaryProblem  # noqa: E402
from svmrank.problems.perf import PERF_LOSSES, PerfProblem, perf_scale  # noqa: E402
from svmrank.problems.ranking import RankingProblem  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PERF_L = {"error": 2, "zero_one": 0, "f1": 1, "prbep": 3, "prec@k": 4, "rec@k": 5, "roc": 10,
          "ap": 11}


def ours(tool):
    """Command of svmrank's console script ``tool`` (the checkout's launcher)."""
    return [sys.executable, str(ROOT / "bin" / tool)]


def run(cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"{' '.join(map(str, cmd))}: exit {done.returncode}: "
                           f"{(done.stderr or done.stdout).strip()[-300:]}")
    return done.stdout


def predictions(path):
    return np.array([float(line.split()[0]) for line in open(path) if line.strip()])


def rel_diff(a, b):
    """max |a − b| relative to the largest |score|."""
    return float(np.abs(a - b).max() / max(np.abs(a).max(), np.abs(b).max(), 1e-300))


def agree(a, b, rel=1e-6, atol=0.0):
    """Equal to ``rel`` relative, or to ``atol`` (the printed format's last digit)."""
    return rel_diff(a, b) <= rel or float(np.abs(a - b).max()) <= atol


def cross_read(bindir, classify, data, theirs_m, ours_m, tmp):
    """Each classifier on each model: do they read each other's, and do the two tools'
    models predict alike (both read by our classifier)?"""
    notes = []
    for who, model in (("theirs", theirs_m), ("ours", ours_m)):
        try:
            run([bindir / classify, "-v", "0", data, model, tmp / f"p_{who}_c"])
        except RuntimeError as exc:
            notes.append(f"{classify} on our model: {str(exc).split(': ', 2)[-1][:60]}")
        run(ours(classify) + ["-v", "0", data, model, tmp / f"p_{who}_o"])
    # (one model read by both classifiers: equal to 1e-6, SVM-light's 32-bit floats, or
    # to svm_perf_classify's %.8f: its 1e-8 steps are above 1e-6 of a score below 0.01)
    atol = 1e-8 if classify == "svm_perf_classify" else 0.0
    ours_read_theirs = agree(predictions(tmp / "p_theirs_c"), predictions(tmp / "p_theirs_o"),
                             atol=atol)
    theirs_read_ours = not notes and agree(predictions(tmp / "p_ours_c"),
                                           predictions(tmp / "p_ours_o"), atol=atol)
    difference = rel_diff(predictions(tmp / "p_theirs_o"), predictions(tmp / "p_ours_o"))
    return {"ours reads theirs": "yes" if ours_read_theirs else "NO",
            "theirs reads ours": "yes" if theirs_read_ours else "NO: " + "; ".join(notes),
            "models' predictions, max rel. diff": f"{difference:.1e}"}


def hinge_objective(w, b, X, y, C_light, biased):
    """SVM-light's primal ½‖w‖² + C Σ max(0, 1 − y_i (w·x_i − b)) (b free when biased)."""
    margins = y * (X @ w - (b if biased else 0.0))
    return 0.5 * w @ w + C_light * np.maximum(0.0, 1.0 - margins).sum()


def light_rows(bindir, data, tmp):
    """svm_learn -t 0 (with and without its unregularised threshold) against ours."""
    rows = []
    X, y, _ = load_svmlight(data)
    y = np.where(y > 0, 1.0, -1.0)
    for c in ("0.01", "1"):
        for b in ("1", "0"):
            argv = ["-t", "0", "-c", c, "-b", b, "-e", "0.0001", "-v", "0"]
            row = {"tool": "svm_learn", "data": Path(data).name, "options": " ".join(argv[:6])}
            theirs_m, ours_m = tmp / "light_theirs.model", tmp / "light_ours.model"
            run([bindir / "svm_learn", *argv, data, theirs_m])
            run(ours("svm_learn") + [*argv, data, ours_m])
            row.update(cross_read(bindir, "svm_classify", data, theirs_m, ours_m, tmp))
            mt, mo = read_model(theirs_m), read_model(ours_m)
            jt = hinge_objective(mt.w, mt.b, X, y, float(c), b == "1")
            jo = hinge_objective(mo.w, mo.b, X, y, float(c), b == "1")
            row["objective rel. diff"] = f"{(jo - jt) / jt:+.1e}"
            rows.append(row)
    # SVM-perf's C conversion for the error rate (its own note: c_light = c_perf·100/n),
    # without a threshold (svm_learn -b 0, svm_perf_learn --b 0): the same problem
    c_perf = 1.0
    c_light = c_perf * 100.0 / len(y)
    run([bindir / "svm_learn", "-t", "0", "-b", "0", "-c", repr(c_light), "-e", "0.0001",
         "-v", "0", data, tmp / "light.model"])
    run(ours("svm_perf_learn") + ["-c", repr(c_perf), "-e", "0.001", "--b", "0", "-v", "0",
                                  data, tmp / "perf.model"])
    mt, mo = read_model(tmp / "light.model"), read_model(tmp / "perf.model")
    jt = hinge_objective(mt.w, 0.0, X, y, c_light, False)
    jo = hinge_objective(mo.w, 0.0, X, y, c_light, False)
    rows.append({"tool": "svm_learn vs our svm_perf_learn", "data": Path(data).name,
                 "options": f"-b 0 -c {c_light:.4g} vs --b 0 -c {c_perf:g}",
                 "ours reads theirs": "", "theirs reads ours": "",
                 "models' predictions, max rel. diff":
                     f"{rel_diff(X @ mt.w, X @ mo.w):.1e}",
                 "objective rel. diff": f"{(jo - jt) / jt:+.1e}"})
    return rows


def perf_problem(loss, X, y, bias=1.0):
    """svmrank's oracle of SVM-perf's ``-l`` loss (on svmrank's scale)."""
    if loss in ("roc", "ap"):
        return RankingProblem(X, y, loss=loss)  # (one ranking: SVM-perf ignores qid)
    if loss == "error":
        return BinaryProblem(X, y, bias=bias)
    return PerfProblem(X, y, loss, bias=bias)


def perf_objective(model, problem, loss, c_perf, X, y, bias=1.0):
    """SVM-perf's primal ½‖w‖² + C ξ(w) of an SVM-perf model file, ξ(w) the largest
    violation over all outputs, computed by svmrank's oracle through the conversion of
    docs/algorithms.md (SVM-perf's problem at w is w_factor² × svmrank's at w/w_factor,
    C × c_factor). The bias weight is −b/--b; it cancels in ROC area and AP's Ψ."""
    P = int((y > 0).sum())
    c_factor, _, w_factor = perf_scale(loss, P, len(y) - P)
    d = X.shape[1]
    w = np.zeros(d)
    w[:min(d, model.w.size)] = model.w[:d]
    w_bias = -model.b / bias if bias else 0.0
    ranking = loss in ("roc", "ap")
    w_ours = (w if ranking or not bias else np.append(w, w_bias)) / w_factor
    delta, g = problem.most_violated(w_ours)
    xi = w_factor ** 2 * c_factor * max(0.0, delta - w_ours @ g)
    return 0.5 * (w @ w + w_bias ** 2) + c_perf * xi


def perf_argv(loss, c, eps="0.1"):
    return ["-c", c, "-e", eps, "-l", str(PERF_L[loss]), "-w", "9" if loss == "error" else "3"]


def perf_row(bindir, data, loss, argv, X, y, problem, tmp, out_t=None):
    """One svm_perf_learn row: train both (unless SVM-perf's output ``out_t`` is given
    with its model already in tmp), read both ways, both objectives in SVM-perf's scale."""
    theirs_m, ours_m = tmp / "perf_theirs.model", tmp / "perf_ours.model"
    if out_t is None:
        out_t = run([bindir / "svm_perf_learn", *argv, "-v", "1", data, theirs_m])
        run(ours("svm_perf_learn") + [*argv, "-v", "0", data, ours_m])
    row = {"data": Path(data).name, "options": " ".join(argv)}
    row.update(cross_read(bindir, "svm_perf_classify", data, theirs_m, ours_m, tmp))
    c = float(argv[1])
    pval = float(re.search(r"pval=([-+0-9.eE]+)", out_t).group(1))
    j_t, j_o = (perf_objective(read_model(m), problem, loss, c, X, y) for m in (theirs_m, ours_m))
    row["J(theirs)"] = f"{j_t:.5g}"
    row["J(ours) - J(theirs)"] = f"{j_o - j_t:+.2g}"
    row["C ε"] = f"{c * float(argv[3]):.2g}"
    row["pval = J(theirs)"] = f"{'yes' if abs(pval - j_t) <= 1e-4 * j_t + 1e-5 else 'NO'}" \
                              f" ({pval:.5g})"
    return row


def perf_rows(bindir, data, tmp):
    """svm_perf_learn with each loss against ours at the same command line."""
    X, y, _ = load_svmlight(data)
    rows = []
    for loss in PERF_L:
        for c in ("0.1", "10"):
            rows.append(perf_row(bindir, data, loss, perf_argv(loss, c), X, y,
                                 perf_problem(loss, X, y), tmp))
    return rows


def interop(bindir, quick):
    """Part 1: a table per tool, or the reasons its rows are skipped."""
    data = str(shared_file_or_exit("heart_scale", "heart_scale"))
    skipped = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for tools, make in ((("svm_learn", "svm_classify"), light_rows),
                            (("svm_perf_learn", "svm_perf_classify"), perf_rows)):
            missing = [t for t in tools if not (bindir and (bindir / t).exists())]
            if missing:
                skipped.append(f"{', '.join(missing)}: not in {bindir or '(no --bin)'}")
                continue
            rows = make(bindir, data, tmp)
            print(f"\n{tools[0]}:")
            print_table(list(rows[-1]), [list(r.values()) for r in rows])
    skipped.append("svm_rank_learn, svm_rank_classify: not checked by this script")
    for reason in skipped:
        print(f"SKIP {reason}")


def inference_speed(quick):
    """Part 2a: the most-violated-labelling call per loss against the error rate's."""
    rng = np.random.default_rng(0)
    n, d = 100_000, 300
    positive = rng.random(n) < 0.03  # (w8a's share of positives)
    import scipy.sparse as sp
    X = sp.random(n, d, density=0.04, format="csr", random_state=1, dtype=np.float64)
    X.data[:] = 1.0
    y = np.where(positive, 1.0, -1.0)
    w = rng.normal(size=d + 1) * 0.3
    problems = {"error": BinaryProblem(X, y)}
    problems.update({loss: PerfProblem(X, y, loss) for loss in PERF_LOSSES})
    scores = problems["error"].scores(w) + np.where(positive, 1.0, 0.0)
    calls = [lambda p=p: p.violation_at_scores(scores) for p in problems.values()]
    full = [lambda p=p: p.most_violated(w) for p in problems.values()]
    t_lai = interleaved_times(calls, repeat=3 if quick else 7)
    t_full = interleaved_times(full, repeat=3 if quick else 7)
    rows = [{"loss": loss, "violation_at_scores ms": f"{1e3 * a:.2f}",
             "x error": f"{a / t_lai[0]:.1f}", "most_violated(w) ms": f"{1e3 * b:.2f}",
             "x error ": f"{b / t_full[0]:.1f}"}
            for loss, a, b in zip(problems, t_lai, t_full)]
    print(f"\nInference at N = {n} (P = {int(positive.sum())}), {d} binary features, "
          "density 0.04:")
    print_table(list(rows[0]), [list(r.values()) for r in rows])


def training_speed(quick):
    """Part 2b: training on w8a with each loss at SVM-perf's -c 1: svmrank's estimator
    against its error rate."""
    from svmrank.estimators import BinarySVM, RankSVM
    data = str(shared_file_or_exit("w8a", "w8a.train"))
    X, y, _ = load_svmlight(data)
    Xq, yq = (X[:20000], y[:20000]) if quick else (X, y)
    rows = []
    base = None
    for loss, l in PERF_L.items():
        if loss == "ap":  # (not a new loss of issue 26; its C here is (PN)²/100)
            continue
        P = int((yq > 0).sum())
        c_factor, eps_factor, _ = perf_scale(loss, P, len(yq) - P)
        options = dict(C=1.0 * c_factor, epsilon=0.1 * eps_factor)
        est = (RankSVM(loss=loss, **options) if loss in ("roc", "ap")
               else BinarySVM(loss=loss, **options))
        start = time.perf_counter()
        est.fit(Xq, yq)
        elapsed = time.perf_counter() - start
        base = elapsed if base is None else base
        rows.append({"-l": l, "loss": loss, "C (svmrank)": f"{options['C']:.3g}",
                     "iterations": est.n_iter_, "fit s": f"{elapsed:.2f}",
                     "x error": f"{elapsed / base:.2f}"})
    print(f"\nTraining on w8a ({Xq.shape[0]} examples), SVM-perf's -c 1 -e 0.1:")
    print_table(list(rows[0]), [list(r.values()) for r in rows])


def runtime(output):
    """The "Runtime in cpu-seconds" an SVM-perf learner (either program) prints."""
    return float(re.search(r"Runtime in cpu-seconds: ([\d.]+)", output)[1])


def perf_speed(bindir, quick):
    """Part 2c: svm_perf_learn against SVM-perf's on w8a, per loss at -c 1: both console
    scripts, best of interleaved rounds, on training time (each program's own "Runtime in
    cpu-seconds") and whole-program wall time, with the interop columns of the last
    round's models."""
    data = str(shared_file_or_exit("w8a", "w8a.train"))
    X, y, _ = load_svmlight(data)
    if not (bindir and (bindir / "svm_perf_learn").exists()):
        print(f"SKIP svm_perf_learn against SVM-perf on w8a: not in {bindir or '(no --bin)'}")
        return
    rounds = 2 if quick else 3
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for loss in PERF_L:
            if loss == "ap":  # (SVM-perf's -l 11 ran over 5 minutes on w8a: heart_scale only)
                continue
            argv = perf_argv(loss, "1")
            outputs = []
            theirs = [bindir / "svm_perf_learn", *argv, "-v", "1", data, tmp / "perf_theirs.model"]
            mine = ours("svm_perf_learn") + [*argv, "-v", "1", data, tmp / "perf_ours.model"]
            wall, train = [np.inf, np.inf], [np.inf, np.inf]
            for _ in range(rounds):
                for k, cmd in enumerate((theirs, mine)):
                    start = time.perf_counter()
                    out = run(cmd)
                    wall[k] = min(wall[k], time.perf_counter() - start)
                    train[k] = min(train[k], runtime(out))
                    if k == 0:
                        outputs.append(out)
            # (both print 10 ms steps: a 0.00 of ours counts as 0.005 in the ratio)
            row = {"loss": loss, "SVM-perf train s": f"{train[0]:.2f}",
                   "svmrank train s": f"{train[1]:.2f}",
                   "ratio": f"{max(train[1], 0.005) / max(train[0], 0.005):.2f}",
                   "SVM-perf program s": f"{wall[0]:.2f}", "svmrank program s": f"{wall[1]:.2f}",
                   "program ratio": f"{wall[1] / wall[0]:.2f}"}
            row.update(perf_row(bindir, data, loss, argv, X, y, perf_problem(loss, X, y),
                                tmp, out_t=outputs[-1]))
            del row["data"]
            rows.append(row)
            print(" | ".join(row.values()), flush=True)
    load = open("/proc/loadavg").read().split()[:3]
    print(f"\nsvm_perf_learn on w8a.train: training CPU s and program wall s (best of "
          f"{rounds} interleaved rounds; "
          f"load average {' '.join(load)} at the end):")
    print_table(list(rows[0]), [list(r.values()) for r in rows])


def main():
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--bin", type=Path, default=None, help="folder of the real binaries")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    print(machine_line())
    interop(args.bin, args.quick)
    inference_speed(args.quick)
    training_speed(args.quick)
    perf_speed(args.bin, args.quick)


if __name__ == "__main__":
    main()
