"""The timing tables of the efficient AP-SVM paper (2014, Tables 2-3) and the
quicksort-flavoured inference paper (2018, Tables 1-2, Fig. 2-3) on public data.

    python benchmarks/bench_paper_tables.py                    # every section
    python benchmarks/bench_paper_tables.py --section training # one of: training, sweeps, accuracy
    python benchmarks/bench_paper_tables.py --section training --data w8a --cv-C

training  Train on w8a (w8a.train) and on MQ2008 Fold1 (train.txt, qid = query) with the
          0-1 loss (BinarySVM), AP with each inference method and NDCG with greedy and
          qs: cutting-plane iterations, loss-augmented inference (LAI) calls, total and
          per-call LAI time, total training time. All exact AP methods return the same
          maximiser, so they take the same iterations. With --cv-C (w8a only), each loss
          trains at its own C, chosen by 3-fold CV on w8a.train (AP; NDCG for the NDCG
          loss), as the papers fix their hyper-parameters by cross-validation. A fit
          that takes under a second is repeated (--repeat, default 3) and the fastest
          kept, with its own LAI time: the 0-1 and AP qs fits, whose ratio is a target,
          last 0.03-0.3 s, where one fit varies by 30% or more on a shared machine.
sweeps    Per-call LAI time on synthetic scores as in 2018 Fig. 2-3: N with P:N = 1:10,
          N with P = 227 fixed, P with N = 200 fixed (positives ~ N(1, 1), negatives ~
          N(0, 1)). Greedy cells with N·P > 1e9 are skipped (not extrapolated).
accuracy  Test AP / NDCG@10 / MAP of models trained with 0-1, AP, NDCG and
          AP-SVM-APPX (k = 25, 50, 75) on w8a (w8a.test) and MQ2008 Fold1 (test.txt).

LAI time is wall-clock time inside the problem's inference step
(``violation_at_scores``: the most violated output and its coefficient vector; the
scores X w are computed outside it), the same step for every loss; for the 0-1 loss it
is the binary SVM's most-violated labelling. In this section every loss trains on the
same rows: on MQ2008 the queries with a relevant and a non-relevant document (the
others have no AP). The accuracy section trains the 0-1 loss on every row, as a binary
SVM would be trained.
"""
import argparse
import os
import sys
import time
import warnings
from pathlib import Path

# one core, as bench_apsvm_w8a.py and liblinear: svmrank's products would otherwise use
# every core (set OMP_NUM_THREADS=2 to see that)
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import best_time, cv_score, description, machine_line  # noqa: E402
from _common import positive_int, print_table, shared_file_or_exit  # noqa: E402
from svmrank import APSVM, BinarySVM, RankSVM  # noqa: E402
from svmrank._validation import query_segments  # noqa: E402
from svmrank.inference import lai_queries_unchecked  # noqa: E402
from svmrank.io.svmlight import load_svmlight  # noqa: E402
from svmrank.learners.cutting_plane import cutting_plane  # noqa: E402
from svmrank.metrics import average_precision, mean_over_queries, ndcg  # noqa: E402
from svmrank.problems.binary import BinaryProblem  # noqa: E402
from svmrank.problems.ranking import RankingProblem  # noqa: E402

C = {"w8a": 100.0, "mq2008": 100.0}
EPSILON = 1e-3
# --cv-C: each loss's own C by 3-fold CV on w8a.train, as the papers fix their
# hyper-parameters; the measure is the one the loss targets (NDCG for NDCG, else AP)
CV_GRID = [1e2, 1e3, 3e3, 1e4, 3e4, 1e5, 3e5, 1e6]
CV_MODELS = {"0-1": (lambda c: BinarySVM(C=c, epsilon=EPSILON), "AP"),
             "AP": (lambda c: APSVM(C=c, epsilon=EPSILON), "AP"),
             "NDCG": (lambda c: RankSVM(loss="ndcg", C=c, epsilon=EPSILON), "NDCG")}
CONFIGS = [("0-1", None, None), ("AP", "ap", "greedy"), ("AP", "ap", "search"),
           ("AP", "ap", "select"), ("AP", "ap", "search+select"), ("AP", "ap", "qs"),
           ("NDCG", "ndcg", "greedy"), ("NDCG", "ndcg", "qs")]


class LaiClock:
    """Accumulates the time and number of LAI calls."""

    def __init__(self):
        self.total, self.calls = 0.0, 0

    def wrap(self, fn):
        """``fn`` timed into this clock."""
        def timed(*args, **kwargs):
            t0 = time.perf_counter()
            out = fn(*args, **kwargs)
            self.total += time.perf_counter() - t0
            self.calls += 1
            return out
        return timed


def timed(problem, clock):
    """``problem`` with its inference step ``violation_at_scores`` (the most violated
    output and its coefficients; not the mat-vecs) timed into ``clock``: the same
    step for every loss."""
    problem.violation_at_scores = clock.wrap(problem.violation_at_scores)
    return problem


def ranked_queries(y, q):
    """Rows of the queries with a relevant and a non-relevant document (those the rank
    losses train on; the 0-1 loss gets the same rows, so every loss sees one problem)."""
    if q is None:
        return np.arange(len(y))
    order, offsets = query_segments(q, len(y))
    rows = [order[a:b] for a, b in zip(offsets[:-1], offsets[1:])]
    return np.sort(np.concatenate([r for r in rows if 0 < (y[r] > 0).sum() < len(r)]))


def load(name):
    if name == "w8a":
        X, y, _ = load_svmlight(shared_file_or_exit("w8a", "w8a.train"))
        Xt, yt, _ = load_svmlight(shared_file_or_exit("w8a", "w8a.test"), n_features=X.shape[1])
        return X, y, None, Xt, yt, None
    X, y, q = load_svmlight(shared_file_or_exit("mq2008", "Fold1", "train.txt"))
    Xt, yt, qt = load_svmlight(shared_file_or_exit("mq2008", "Fold1", "test.txt"),
                               n_features=X.shape[1])
    return X, y, q, Xt, yt, qt


def train_timed(X, y, qid, C_value, loss, method):
    clock = LaiClock()
    t0 = time.perf_counter()
    if loss is None:
        problem = timed(BinaryProblem(X, y), clock)
    else:
        problem = timed(RankingProblem(X, y, qid=qid, loss=loss, lai=method), clock)
    result = cutting_plane(problem, C_value, EPSILON)
    return result.n_iter, clock, time.perf_counter() - t0


def cv_chosen_C(X, y):
    """{loss label: C} chosen by 3-fold CV on (X, y) over CV_GRID (see CV_MODELS)."""
    measures = {"AP": average_precision, "NDCG": ndcg}
    chosen = {}
    for label, (make, measure) in CV_MODELS.items():
        cv = {c: cv_score(lambda c=c: make(c), X, y, measures[measure]) for c in CV_GRID}
        chosen[label] = max(cv, key=cv.get)
        print(f"{label}: CV {measure} by C: " + ", ".join(f"{c:g}: {v:.4f}" for c, v in cv.items()),
              flush=True)
    return chosen


REPEAT_UNDER = 1.0  # seconds: fits shorter than this are repeated (--repeat)


def section_training(datasets, cv_C=False, repeat=3):
    for name in datasets:
        X, y, q, *_ = load(name)
        kept = ranked_queries(y, q)
        n_all = X.shape[0]
        X, y, q = X[kept], y[kept], (None if q is None else q[kept])
        if cv_C and q is not None:
            print(f"\n{name}: --cv-C is for single-query data; skipped")
            continue
        C_of = cv_chosen_C(X, y) if cv_C else dict.fromkeys(CV_MODELS, C[name])
        rows = []
        for label, loss, method in CONFIGS:
            n_iter, clock, total = train_timed(X, y, q, C_of[label], loss, method)
            for _ in range(repeat - 1 if total < REPEAT_UNDER else 0):
                again = train_timed(X, y, q, C_of[label], loss, method)
                if again[2] < total:
                    n_iter, clock, total = again
            rows.append([label, method or "-", f"{C_of[label]:g}", n_iter, clock.calls, clock.total,
                         1e3 * clock.total / clock.calls, total])
            print(f"done {name} {label} {method}", file=sys.stderr, flush=True)
        base_lai, base_total = rows[0][5], rows[0][7]
        for row in rows:
            row += [row[5] / base_lai, row[7] / base_total]
        used = "" if X.shape[0] == n_all else f" (of {n_all}: the queries with a relevant and a non-relevant document)"
        print(f"\n{name}: {X.shape[0]} samples{used}, {X.shape[1]} features, "
              f"{'one query' if q is None else f'{len(np.unique(q))} queries'}; "
              f"{'C chosen per loss by 3-fold CV' if cv_C else f'C = {C[name]:g}'}, "
              f"epsilon = {EPSILON:g}; fits under {REPEAT_UNDER:g} s best of {repeat}\n")
        print_table(["loss", "LAI", "C", "iterations", "LAI calls", "LAI total (s)",
                     "LAI per call (ms)", "training (s)", "LAI total / 0-1",
                     "training / 0-1"], rows)


def synthetic(n_neg, n_pos, seed=0):
    rng = np.random.default_rng(seed)
    relevant = np.zeros(n_neg + n_pos, dtype=bool)
    relevant[rng.choice(n_neg + n_pos, n_pos, replace=False)] = True
    return rng.normal(size=n_neg + n_pos) + relevant, relevant


def sweep_row(n_neg, n_pos):
    scores, relevant = synthetic(n_neg, n_pos)
    sign = np.where(relevant, 1.0, -1.0)
    offsets = np.array([0, len(scores)])  # rows in place, as the learners call it
    row = [n_neg + n_pos, n_pos, n_neg,
           1e3 * best_time(lambda: np.where(sign * scores < 1.0, sign, 0.0), repeat=3, min_time=0.05)]
    for loss in ("ap", "ndcg"):
        for method in ("greedy", "qs"):
            if method == "greedy" and n_neg * n_pos > 1e9:
                row.append("skipped")
                continue
            t = best_time(
                lambda: lai_queries_unchecked(scores, relevant, None, offsets, loss, method),
                repeat=1 if method == "greedy" else 3, min_time=0.05)
            row.append(1e3 * t)
    return row


def section_sweeps():
    header = ["N total", "P", "N neg", "0-1 (ms)", "AP greedy (ms)", "AP qs (ms)",
              "NDCG greedy (ms)", "NDCG qs (ms)"]
    sweeps = [
        ("Vary N with P:N = 1:10 (2018 Fig. 2a/3a)",
         [(10 * n // 11, n // 11) for n in (1100, 11000, 110000, 1100000)]),
        ("Vary N with P = 227 fixed (2018 Fig. 2b/3b)",
         [(n, 227) for n in (1000, 10000, 100000, 1000000)]),
        ("Vary P with N = 200 negatives fixed (2018 Fig. 2c/3c)",
         [(200, p) for p in (10, 100, 1000, 10000, 100000)]),
    ]
    for title, cells in sweeps:
        rows = [sweep_row(n_neg, n_pos) for n_neg, n_pos in cells]
        print(f"\n{title}; LAI time per call\n")
        print_table(header, rows)
        print(f"done sweep {title}", file=sys.stderr, flush=True)


def scores_of(yt, st, qt):
    """AP of all test samples as one ranking, NDCG@10 and MAP (mean AP over queries;
    without queries NDCG@10 is of the one ranking and MAP = AP)."""
    rel = (yt > 0).astype(float)
    ap = average_precision(rel, st)
    if qt is None:
        return [ap, ndcg(rel, st, k=10), ap]
    return [ap, mean_over_queries(ndcg, yt, st, qt, k=10),
            mean_over_queries(average_precision, rel, st, qt)]


def section_accuracy(datasets):
    models = [("0-1", lambda c: BinarySVM(C=c, epsilon=EPSILON)),
              ("AP", lambda c: APSVM(C=c, epsilon=EPSILON)),
              ("NDCG", lambda c: RankSVM(loss="ndcg", C=c, epsilon=EPSILON)),
              ("APPX k=25", lambda c: APSVM(C=c, epsilon=EPSILON, approx=25)),
              ("APPX k=50", lambda c: APSVM(C=c, epsilon=EPSILON, approx=50)),
              ("APPX k=75", lambda c: APSVM(C=c, epsilon=EPSILON, approx=75))]
    for name in datasets:
        X, y, q, Xt, yt, qt = load(name)
        rows = []
        for label, make in models:
            model = make(C[name])
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)
                model.fit(X, y, qid=q)
            elapsed = time.perf_counter() - t0
            rows.append([label] + scores_of(yt, model.decision_function(Xt), qt)
                        + [model.n_iter_, elapsed])
            print(f"done {name} {label}", file=sys.stderr, flush=True)
        what = ("AP and NDCG@10 of the whole test set (one ranking); MAP = AP"
                if qt is None else "AP of all test documents as one ranking; NDCG@10 "
                "(gains 2^label - 1) and MAP averaged over the test queries with a relevant "
                "document")
        print(f"\n{name} test set: {what}; C = {C[name]:g}\n")
        print_table(["trained with", "AP", "NDCG@10", "MAP", "iterations", "training (s)"], rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("--section", choices=["training", "sweeps", "accuracy", "all"],
                        default="all")
    parser.add_argument("--data", nargs="+", choices=["w8a", "mq2008"], default=["w8a", "mq2008"])
    parser.add_argument("--cv-C", action="store_true",
                        help="training section: each loss at its own C chosen by 3-fold CV "
                             "(single-query data only) instead of the fixed C")
    parser.add_argument("--repeat", type=positive_int, default=3,
                        help="training section: fits under 1 s are run this often, the "
                             "fastest kept (default 3)")
    args = parser.parse_args(argv)
    print(f"{machine_line()}; threads: OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}")
    if args.section in ("training", "all"):
        section_training(args.data, args.cv_C, args.repeat)
    if args.section in ("sweeps", "all"):
        section_sweeps()
    if args.section in ("accuracy", "all"):
        section_accuracy(args.data)


if __name__ == "__main__":
    main()
