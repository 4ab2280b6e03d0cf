"""Learning to rank with graded relevance (issue 25 part 5): test NDCG@1,3,5,10 and MAP of
svmrank's rank losses against SVM-rank V1.00, LightGBM lambdarank and a pairwise
LinearSVC, on MQ2008 Folds 1-5 and LightGBM's 5-level lambdarank example; with
SVM-rank, its objective, training time and model files against svmrank's.

Protocol
- MQ2008 (LETOR 4.0, QueryLevelNorm, labels 0-2): Fold k trains on S_k, S_k+1, S_k+2,
  validates on S_k+3 and tests on S_k+4 (cyclically, readme_folds.txt), built from the
  S*.txt files. lightgbm_rank (labels 0-4) has a train and a test file only: C is
  chosen on its last 40 training queries, then the model is refitted on all of them.
- Measures (svmrank.metrics.ranking_metrics): graded NDCG@k with gains 2^l - 1, MAP
  (relevant: label > 0), both averaged over the queries with a relevant document
  (``no_relevant="skip"``; MQ2008 has 51 of 156 test queries without one in Fold 1).
  The NDCG@10 column "(0)" counts those queries as 0, as trec_eval does.
- svmrank: RankSVM(loss=...) for "ap" and "ndcg" trained on binary relevance (label > 0)
  and, when this checkout has them, "pairs" (pair_loss="fraction", svm_rank_learn -l 2's
  loss) and graded "ndcg" (gains="exp", every place), epsilon 1e-3, C in
  {0.01, 0.1, 1, 10, 100} chosen by validation NDCG@10.
- Pairwise LinearSVC: liblinear's L2-loss SVM, no intercept, on the differences
  x_i - x_j of the pairs of documents of one query with different labels (sign of
  the label difference, every other pair flipped to balance the classes), C in
  {0.001, 0.01, 0.1, 1} chosen the same way: the RankSVM of Herbrich/Joachims.
- LightGBM lambdarank (benchmark-only peer, ``pip install lightgbm``; its row is skipped
  with the reason when it does not import): LGBMRanker with its defaults
  (100 trees, learning rate 0.1, 31 leaves), one thread, seed 0, no tuning.
- SVM-rank V1.00 (Joachims 2009) as a peer: ``--svm-rank DIR`` runs DIR/svm_rank_learn
  and DIR/svm_rank_classify (-l 1, -e 0.001, C on its own scale in {0.01, 0.1, 1, 10,
  100}, chosen by validation NDCG@10), then, at the C it chose on each split, the
  anchor table: (a) objectives, svm_rank_learn's "pval" and its model's objective
  computed by svmrank (GradedRankingProblem, C and epsilon mapped by
  svmrank.losses.svm_rank_parameters) against RankSVM(loss="pairs", pair_loss="count")
  at the mapped parameters, with SVM-rank's tolerance c * eps (its scale); (b) training
  time, interleaved, mean and best of ROUNDS: SVM-rank's own "Runtime in cpu-seconds"
  (learning only, CPU time) against the CPU time of RankSVM.fit on the arrays (one
  thread), and the whole program (read, train, write; svm_rank_learn's wall time)
  against svmrank's svm_rank_learn script called in-process (--threads 1, no
  interpreter start); (c) models read both ways: SVM-rank's
  svm_rank_classify on svmrank's model and svmrank's svm_rank_classify on SVM-rank's,
  on the test part, against each program's own predictions (largest difference over
  the largest prediction: SVM-rank prints %.8f and holds features in float).
  Build (outside this repository; its source is reachable only through a MATLAB
  wrapper's mirror; nothing of it is committed):
      fetch github:lanpa/svm-rank-matlab-wrapper   (the search library's fetch tool;
          or git clone https://github.com/lanpa/svm-rank-matlab-wrapper)
      mkdir -p /work/peers/svm_rank/src /work/peers/svm_rank/bin
      git --git-dir=<mirror> archive HEAD | tar -x -C /work/peers/svm_rank/src
    then, in src/, four edits that only undo the MATLAB entry points (no learning
    routine is touched):
      svm_struct/svm_struct_common.h: delete the line #include "mex.h";
      svm_struct_api.c and svm_struct_api.h: delete read_struct_examples_matlab
          (definition and prototype; read_struct_examples, the file reader, stays);
      svm_struct/svm_struct_classify.c: delete mexFunction (its native main is intact);
      svm_struct/svm_struct_main.c: replace mexFunction by SVM-struct V3.10's generic
          main(argc, argv): svm_struct_learn_api_init; read_input_parameters;
          sample = read_struct_examples(trainfile, &struct_parm); the same -w dispatch
          (0, 1: svm_learn_struct; 2, 3, 4: svm_learn_struct_joint; 9: custom);
          write_struct_model; free_struct_sample; free_struct_model;
          svm_struct_learn_api_exit; return 0;
    and compile (gcc 12; -fcommon for the globals its headers define):
      F="-O3 -fomit-frame-pointer -ffast-math -Wall -fcommon"
      for f in svm_light/svm_common svm_light/svm_learn svm_light/svm_hideo \
               svm_struct/svm_struct_learn svm_struct/svm_struct_common \
               svm_struct/svm_struct_main svm_struct/svm_struct_classify \
               svm_struct_api svm_struct_learn_custom; do gcc $F -c $f.c -o $f.o; done
      gcc -O3 svm_struct/svm_struct_learn.o svm_struct_learn_custom.o svm_struct_api.o \
          svm_light/svm_hideo.o svm_light/svm_learn.o svm_light/svm_common.o \
          svm_struct/svm_struct_common.o svm_struct/svm_struct_main.o \
          -o ../bin/svm_rank_learn -lm
      gcc -O3 svm_struct_api.o svm_struct/svm_struct_classify.o svm_light/svm_common.o \
          svm_struct/svm_struct_common.o -o ../bin/svm_rank_classify -lm
    SVM-rank's learning time is the sum of clock() differences (get_runtime, in
    hundredths of a second as a double); glibc's clock() counts process CPU time in
    microseconds, but svm_rank_learn prints the sum with "%.2f", rounded to 10 ms: "0.01"
    is anything in [5, 15) ms, and since the learning time varies by well under 10 ms
    between runs the mean of the printed values does not resolve it either (100 runs on
    lightgbm_rank at c = 0.001 all printed 0.01). The timings therefore use a second
    build, in another folder, whose only change is that print's format:
      cp -r /work/peers/svm_rank/src /work/peers/svm_rank/fine/src; in fine/src:
      sed -i 's/Runtime in cpu-seconds: %.2f/Runtime in cpu-seconds: %.6f/' \
          svm_struct/svm_struct_learn.c
    recompile svm_struct_learn.o, relink svm_rank_learn into fine/bin (the same commands;
    copy svm_rank_classify there), and pass --svm-rank /work/peers/svm_rank/fine/bin.
    Both builds learn the same models (same pval); the fine one prints microseconds.
    Check: ``svm_rank_learn -?`` prints "SVM-struct learning module: SVM-rank, V1.00,
    15.03.2009"; -c is required, -l 3 is refused, -e 0.01 prints the NOTE line with eps
    times the mean pairs per query; on the 3-query example of SVM-rank's web page
    (example3, -c 3) this build scores the test query 2.45127674 1.41263953 0.92976471
    -0.55576233 (svmrank's svm_rank_classify on its model: the same to 3e-8).
      python benchmarks/bench_ltr.py --svm-rank /work/peers/svm_rank/fine/bin
  Without the option its rows are not measured.
- lightgbm_rank's grids reach one decade lower (C from 0.001; LinearSVC from 0.0001):
  with C from 0.01 every svmrank loss picked the lowest C.

Usage (from the repository root): python benchmarks/bench_ltr.py [--folds 1 2 3 4 5]
[--datasets mq2008 lightgbm_rank] [--svm-rank DIR] [--rounds 5] [--models NAME ...]
(--models: run only the rows whose name contains one of these words)
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np

from _common import description, machine_line, print_table, shared_file_or_exit

from svmrank import RankSVM
from svmrank.cli import rank_classify, rank_learn
from svmrank.io import dump_svmlight, load_svmlight, read_model
from svmrank.losses import PairwiseLoss, svm_rank_parameters
from svmrank.metrics import ranking_metrics
from svmrank.parallel import threads
from svmrank.problems.graded import GradedRankingProblem

METRICS = ("ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "map")
SVMRANK_C = (0.01, 0.1, 1.0, 10.0, 100.0)
LINEARSVC_C = (0.001, 0.01, 0.1, 1.0)


def load_parts(paths, n_features):
    parts = [load_svmlight(p, n_features=n_features) for p in paths]
    import scipy.sparse as sp
    X = sp.vstack([p[0] for p in parts]).tocsr()
    y = np.concatenate([p[1] for p in parts])
    # (S files hold disjoint queries; offsets keep ids unique anyway)
    qid = np.concatenate([p[2] + 10**7 * i for i, p in enumerate(parts)])
    return X, y, qid


def mq2008_folds(folds):
    for k in folds:
        s = [shared_file_or_exit("mq2008", f"S{(k - 1 + i) % 5 + 1}.txt") for i in range(5)]
        yield (f"MQ2008 Fold{k}", load_parts(s[:3], 46), load_parts(s[3:4], 46),
               load_parts(s[4:5], 46), True)


def lightgbm_rank():
    train = load_svmlight(shared_file_or_exit("lightgbm_rank", "rank.train.qid.svm"), n_features=300)
    test = load_svmlight(shared_file_or_exit("lightgbm_rank", "rank.test.qid.svm"), n_features=300)
    X, y, qid = train
    held = np.isin(qid, np.unique(qid)[-40:])
    return ("lightgbm_rank", (X[~held], y[~held], qid[~held]), (X[held], y[held], qid[held]),
            test, train)


def measures(y, scores, qid):
    out = ranking_metrics(y, scores, qid, metrics=METRICS)
    out["ndcg@10 (0)"] = ranking_metrics(y, scores, qid, metrics=["ndcg@10"], no_relevant=0)["ndcg@10"]
    return out


def pairwise_differences(X, y, qid):
    """x_i - x_j for the pairs of one query with y_i != y_j, labelled by the sign of
    y_i - y_j, every other one flipped."""
    X = X.toarray()
    rows, signs = [], []
    for q in np.unique(qid):
        idx = np.flatnonzero(qid == q)
        i, j = np.triu_indices(len(idx), 1)
        i, j = idx[i], idx[j]
        keep = y[i] != y[j]
        i, j = i[keep], j[keep]
        rows.append(X[i] - X[j])
        signs.append(np.sign(y[i] - y[j]))
    D, s = np.vstack(rows), np.concatenate(signs)
    flip = np.arange(len(s)) % 2 == 1
    D[flip], s[flip] = -D[flip], -s[flip]
    return D, s


class PairwiseLinearSVC:
    def __init__(self, C):
        self.C = C

    def fit(self, X, y, qid):
        from sklearn.svm import LinearSVC
        D, s = pairwise_differences(X, y, qid)
        self.model = LinearSVC(C=self.C, fit_intercept=False, max_iter=100000, random_state=0).fit(D, s)
        return self

    def decision_function(self, X):
        return np.asarray(X @ self.model.coef_.ravel()).ravel()


class LightGBMRanker:
    def fit(self, X, y, qid):
        import lightgbm
        order = np.argsort(qid, kind="stable")
        _, sizes = np.unique(qid[order], return_counts=True)
        # (np.unique sorts ids; rows are grouped in that order)
        self.model = lightgbm.LGBMRanker(n_jobs=1, random_state=0, verbose=-1).fit(
            X[order], y[order], group=sizes)
        return self

    def decision_function(self, X):
        return self.model.predict(X)


class SVMRankBinary:
    """SVM-rank V1.00 run as a program (``--svm-rank DIR``)."""

    def __init__(self, folder, C):
        self.folder, self.C = Path(folder), C

    def fit(self, X, y, qid):
        self.tmp = tempfile.mkdtemp()
        train, self.model_file = Path(self.tmp) / "train.dat", Path(self.tmp) / "model"
        order = np.argsort(qid, kind="stable")
        dump_svmlight(train, X[order], y[order], qid=qid[order])
        subprocess.run([str(self.folder / "svm_rank_learn"), "-c", str(self.C), str(train),
                        str(self.model_file)], check=True, stdout=subprocess.DEVNULL)
        return self

    def decision_function(self, X):
        test, pred = Path(self.tmp) / "test.dat", Path(self.tmp) / "pred"
        dump_svmlight(test, X, np.zeros(X.shape[0]), qid=np.ones(X.shape[0]))
        subprocess.run([str(self.folder / "svm_rank_classify"), str(test), str(self.model_file),
                        str(pred)], check=True, stdout=subprocess.DEVNULL)
        return np.loadtxt(pred)


def by_query(X, y, qid):
    """The rows sorted by qid (svm_rank_learn requires increasing query ids)."""
    order = np.argsort(qid, kind="stable")
    return X[order], y[order], qid[order]


def svm_rank_objective(w, X, y, qid, c, epsilon=0.001):
    """svm_rank_learn's primal objective at w for ``-c c -l 1``,
    1/2 |w|^2 + (c/n) sum_q xi_q, computed by svmrank: RankSVM's pairwise problem at the
    parameters svm_rank_parameters maps ``c`` to (its C times its averaged hinge)."""
    params = svm_rank_parameters(c, epsilon, 1, rank_learn.pairs_per_query(y, qid))
    problem = GradedRankingProblem(X, y, qid, PairwiseLoss("count"))
    w = np.concatenate([w, np.zeros(max(0, X.shape[1] - len(w)))])[:X.shape[1]]
    scores = problem.scores(w)
    loss, d = problem.violation_at_scores(scores)
    return 0.5 * float(w @ w) + params["C"] * max(0.0, loss - float(scores @ d))


def anchor(folder, split, c, train, test, rounds):
    """SVM-rank V1.00 against svmrank at svm_rank_learn's ``-c c -e 0.001 -l 1`` on one
    split: objectives, training times and the models read both ways (a dict)."""
    folder, tmp = Path(folder), Path(tempfile.mkdtemp())
    X, y, qid = by_query(*train)
    data, test_file = tmp / "train.dat", tmp / "test.dat"
    dump_svmlight(data, X, y, qid=qid)
    Xt, yt, qt = by_query(*test)
    dump_svmlight(test_file, Xt, yt, qid=qt)
    theirs_model, ours_model = tmp / "theirs.model", tmp / "ours.model"
    pairs = rank_learn.pairs_per_query(y, qid)
    params = svm_rank_parameters(c, 0.001, 1, pairs)
    state = {}

    def run_peer():
        t0 = time.perf_counter()
        done = subprocess.run([str(folder / "svm_rank_learn"), "-c", repr(c), str(data),
                               str(theirs_model)], capture_output=True, text=True, check=True)
        wall = time.perf_counter() - t0
        state["pval"] = float(re.search(r"pval=([-\d.e+]+)", done.stdout)[1])
        return float(re.search(r"Runtime in cpu-seconds: ([\d.]+)", done.stdout)[1]), wall

    def fit_ours():
        t0, c0 = time.perf_counter(), time.process_time()
        with threads(1):
            state["ours"] = RankSVM(loss="pairs", max_iter=100000, **params).fit(X, y, qid=qid)
        return time.process_time() - c0, time.perf_counter() - t0

    def program_ours():
        t0 = time.perf_counter()
        assert rank_learn.main(["-v", "0", "--threads", "1", "-c", repr(c), str(data),
                                str(ours_model)]) == 0
        return None, time.perf_counter() - t0

    # (CPU, wall) seconds of each in every round, run in turns; SVM-rank's CPU time is
    # its own "Runtime in cpu-seconds" (clock(), learning only; microseconds with the
    # fine build of the docstring, else 10 ms steps)
    times = [[[], []] for _ in range(3)]
    for round_ in range(rounds + 1):  # (round 0 warms up)
        for k, fn in enumerate((run_peer, fit_ours, program_ours)):
            for j, t in enumerate(fn()):
                if t is not None and round_ > 0:
                    times[k][j].append(t)
    best = [[min(t) if t else np.inf for t in pair] for pair in times]
    (cpu_peer, wall_peer), (cpu_fit, wall_fit), (_, wall_program) = best
    ours = state["ours"]
    w_theirs = read_model(theirs_model).w
    # models read both ways, on the test part
    preds = {}
    for name, program, model in (("theirs/theirs", folder / "svm_rank_classify", theirs_model),
                                 ("theirs/ours", folder / "svm_rank_classify", ours_model),
                                 ("ours/ours", None, ours_model),
                                 ("ours/theirs", None, theirs_model)):
        out = tmp / name.replace("/", "_")
        argv = ["-v", "0", str(test_file), str(model), str(out)]
        if program is None:
            assert rank_classify.main(argv) == 0
        else:
            subprocess.run([str(program), *argv], check=True, capture_output=True)
        preds[name] = np.loadtxt(out)

    def rel(a, b):  # (SVM-rank prints %.8f, so a small prediction has few digits)
        return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))

    shutil.rmtree(tmp)
    return {
        "split": split, "c": c, "C": params["C"],
        "pval": state["pval"], "obj_theirs": svm_rank_objective(w_theirs, X, y, qid, c),
        "obj_ours": svm_rank_objective(ours.coef_.ravel(), X, y, qid, c),
        "tolerance": c * 0.001 * pairs.sum() / len(pairs),
        "cpu_theirs": cpu_peer, "fit_ours": cpu_fit, "fit_ours_wall": wall_fit,
        "cpu_theirs_mean": float(np.mean(times[0][0])),
        "fit_ours_mean": float(np.mean(times[1][0])),
        "wall_theirs": wall_peer, "program_ours": wall_program,
        "read_theirs_model": rel(preds["ours/theirs"], preds["theirs/theirs"]),
        "read_ours_model": rel(preds["theirs/ours"], preds["ours/ours"]),
    }


def print_anchor(rows):
    """Print the anchor table, one row a split."""
    header = ["split", "c (SVM-rank)", "pval", "objective of its w (svmrank)",
              "svmrank objective", "difference / (c eps)", "SVM-rank train ms (mean)",
              "svmrank fit ms (mean)", "ratio (mean)", "SVM-rank train ms (best)",
              "svmrank fit ms (best)", "ratio (best)", "SVM-rank program s",
              "svmrank program s", "ratio",
              "svmrank reads its model", "it reads svmrank's"]
    table = [[r["split"], f"{r['c']:g}", f"{r['pval']:.6g}", f"{r['obj_theirs']:.6g}",
              f"{r['obj_ours']:.6g}", f"{(r['obj_ours'] - r['obj_theirs']) / r['tolerance']:+.2f}",
              f"{1e3 * r['cpu_theirs_mean']:.1f}", f"{1e3 * r['fit_ours_mean']:.1f}",
              f"{r['fit_ours_mean'] / max(r['cpu_theirs_mean'], 1e-6):.2f}",
              f"{1e3 * r['cpu_theirs']:.1f}", f"{1e3 * r['fit_ours']:.1f}",
              f"{r['fit_ours'] / max(r['cpu_theirs'], 1e-6):.2f}",
              f"{r['wall_theirs']:.3f}", f"{r['program_ours']:.3f}",
              f"{r['program_ours'] / r['wall_theirs']:.2f}",
              f"{r['read_theirs_model']:.1e}", f"{r['read_ours_model']:.1e}"] for r in rows]
    print()
    print_table(header, table)


class BinaryRelevance:
    """An estimator fitted on binary relevance y > 0 (RankSVM(loss="ndcg") trains graded
    NDCG on graded labels where this checkout has it)."""

    def __init__(self, estimator):
        self.estimator = estimator

    def fit(self, X, y, qid):
        self.estimator.fit(X, (y > 0).astype(np.float64), qid=qid)
        return self

    def decision_function(self, X):
        return self.estimator.decision_function(X)


def svmrank_losses():
    """(row name, factory of C) for each rank loss this checkout has."""
    rows = [("svmrank AP", lambda C: RankSVM(loss="ap", C=C)),
            ("svmrank NDCG (binary)", lambda C: BinaryRelevance(RankSVM(loss="ndcg", C=C)))]
    probe = (np.array([[1.0], [0.0], [0.5]]), np.array([2.0, 0.0, 1.0]))
    for name, make in (("svmrank pairs", lambda C: RankSVM(loss="pairs", C=C)),
                       ("svmrank NDCG (graded)", lambda C: RankSVM(loss="ndcg", gains="exp", C=C))):
        try:
            make(1.0).fit(*probe)
        except (TypeError, ValueError) as exc:
            print(f"SKIP {name}: not in this checkout ({str(exc).splitlines()[0]})")
            continue
        rows.append((name, make))
    return rows


def select_and_test(make, grid, train, vali, test, refit):
    """C by validation NDCG@10, then the test measures of the model fitted with it
    (on ``refit``, default the training part)."""
    best = None
    for C in grid:
        model = make(C).fit(*train)
        value = ranking_metrics(vali[1], model.decision_function(vali[0]), vali[2],
                                metrics=["ndcg@10"])["ndcg@10"]
        if best is None or value > best[0]:
            best = (value, C)
    t0 = time.perf_counter()
    model = make(best[1]).fit(*(refit if refit is not None else train))
    seconds = time.perf_counter() - t0
    return best[1], seconds, measures(test[1], model.decision_function(test[0]), test[2])


def main(argv=None):
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--folds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    parser.add_argument("--datasets", nargs="+", default=["mq2008", "lightgbm_rank"])
    parser.add_argument("--svm-rank", metavar="DIR", help="folder of svm_rank_learn and "
                        "svm_rank_classify (SVM-rank V1.00) to run as a peer")
    parser.add_argument("--rounds", type=int, default=5,
                        help="rounds of the interleaved anchor timings (mean and best)")
    parser.add_argument("--models", nargs="+", metavar="WORD",
                        help="run only the rows whose name contains one of these words")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")  # (convergence notes of the sweeps' fits)
    models = [(name, make, SVMRANK_C) for name, make in svmrank_losses()]
    models.append(("pairwise LinearSVC", PairwiseLinearSVC, LINEARSVC_C))
    if args.svm_rank:
        models.append(("SVM-rank V1.00", lambda C: SVMRankBinary(args.svm_rank, C), SVMRANK_C))
    else:
        print("SKIP SVM-rank V1.00: not measured (give --svm-rank DIR)")
    try:
        import lightgbm  # noqa: F401
        lgb = True
    except ImportError as exc:
        lgb = False
        print(f"SKIP LightGBM lambdarank: {exc} (pip install lightgbm)")
    if args.models:
        def wanted(name):
            return any(word.lower() in name.lower() for word in args.models)
        models = [m for m in models if wanted(m[0])]
        lgb = lgb and wanted("LightGBM lambdarank")
    splits = []
    if "mq2008" in args.datasets:
        splits += [(name, tr, va, te, None) for name, tr, va, te, _ in mq2008_folds(args.folds)]
    if "lightgbm_rank" in args.datasets:
        splits.append(lightgbm_rank())
    print(machine_line())
    results = {}  # (dataset, model) -> list of measure dicts
    anchors = []
    for split, train, vali, test, refit in splits:
        dataset = split.split()[0]
        for name, make, grid in models:
            if dataset == "lightgbm_rank":  # (every loss picked the lowest C from 0.01)
                grid = (grid[0] / 10,) + tuple(grid)
            C, seconds, out = select_and_test(make, grid, train, vali, test, refit)
            results.setdefault((dataset, name), []).append(out)
            print(f"{split:18s} {name:24s} C={C:<6g} fit {seconds:6.2f}s  " +
                  "  ".join(f"{k}={v:.4f}" for k, v in out.items()), flush=True)
            if name == "SVM-rank V1.00":
                anchors.append(anchor(args.svm_rank, split, C,
                                      refit if refit is not None else train, test, args.rounds))
                print("  anchor: " + "  ".join(f"{k}={v:.6g}" if isinstance(v, float) else
                                               f"{k}={v}" for k, v in anchors[-1].items()),
                      flush=True)
        if lgb:
            model = LightGBMRanker().fit(*(refit if refit is not None else train))
            out = measures(test[1], model.decision_function(test[0]), test[2])
            results.setdefault((dataset, "LightGBM lambdarank"), []).append(out)
            print(f"{split:18s} {'LightGBM lambdarank':24s} " +
                  "  ".join(f"{k}={v:.4f}" for k, v in out.items()), flush=True)
    header = ["data", "model"] + [m.upper().replace("NDCG@10 (0)", "NDCG@10 (0)") for m in
                                  METRICS + ("ndcg@10 (0)",)]
    rows = [[dataset + (f" ({len(v)} folds, mean)" if len(v) > 1 else ""), name] +
            [float(np.mean([o[m] for o in v])) for m in METRICS + ("ndcg@10 (0)",)]
            for (dataset, name), v in results.items()]
    print()
    print_table(header, rows)
    if anchors:
        print_anchor(anchors)
        print(f"load average: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
