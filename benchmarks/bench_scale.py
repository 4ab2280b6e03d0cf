"""Scaling benchmarks of issue 28, one section each.

cv: APSVMCV (7 values of C, 3 folds, each fold's path warm-started; also with the fold
    fits at the refit's epsilon) against
    GridSearchCV(LinearSVC) over 7 values (each grid three decades around its model's
    best C on this set) and the same 3 folds on w8a.train: time of the
    whole search including the refit (wall clock and CPU time of the process, each the
    best of --repeat runs timed in turns; ratios to GridSearchCV's), the chosen C, and
    AP of the refitted model on w8a.test. Both searches run on one core, so the CPU
    time is their work, less exposed than the wall clock to other processes on a
    shared machine.

    python benchmarks/bench_scale.py cv [--repeat 3]

dask: a seeded generator writes --rows rows (default 5e6) in queries of 100 rows, 20
    non-zeros a row over 1e4 features, as --shards SVMlight shards in --data-dir
    (outside the repository; kept between runs); APSVM is fitted on them in memory (one
    process, both cores: n_jobs=2) and on a 2-worker LocalCluster (processes, one thread
    each), back to back, each in a fresh subprocess: load time, setup (the fit before
    the cutting-plane loop: the problems, on the workers their product copies if any), fit
    time, time per iteration of the loop, peak memory (max RSS) of the driver and of
    each worker, the ratio, the fit's CPU time (user + system: the process, or the
    driver and the workers; on a shared machine a fairer measure than wall time), and
    the workers' task time by function (Dask's task stream).

    With --loss pairs the model is RankSVM(loss="pairs") (SVM-rank's pairwise loss, the
    graded problem on every partition) instead of APSVM.

    python benchmarks/bench_scale.py dask [--rows 5000000] [--shards 10] [--data-dir DIR]
        [--loss ap|pairs]
"""
import argparse
import io
import json
import os
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

# one core for both, as liblinear has (APSVMCV: n_jobs=1)
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
import numpy as np  # noqa: E402

from _common import description, machine_line, positive_int  # noqa: E402
from _common import print_table, shared_file_or_exit  # noqa: E402
from svmrank import APSVMCV  # noqa: E402
from svmrank.estimators.cv import FOLD_EPSILON_FACTOR  # noqa: E402
from svmrank.io import load_svmlight  # noqa: E402
from svmrank.metrics import average_precision  # noqa: E402

APSVM_CS = [1e3, 3e3, 1e4, 3e4, 1e5, 3e5, 1e6]
LINEARSVC_CS = [0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0]
EPSILON = 1e-3


def best_runs(fits, repeat):
    """{name: (wall seconds, CPU seconds, fitted model)}: the least wall clock and the
    least process CPU time of ``repeat`` calls of each of ``fits`` ({name: callable}),
    timed in turns so that a slow spell of a shared machine does not fall on one alone."""
    best = {}
    for _ in range(repeat):
        for name, fit in fits.items():
            t0, c0 = time.perf_counter(), time.process_time()
            model = fit()
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            old = best.get(name, (np.inf, np.inf, None))
            best[name] = (min(wall, old[0]), min(cpu, old[1]), model)
    return best


def section_cv(args):
    try:
        from sklearn.model_selection import GridSearchCV, StratifiedKFold
        from sklearn.svm import LinearSVC
    except ImportError:  # pragma: no cover - benchmark-only dependency
        print("SKIP: scikit-learn is needed for this benchmark")
        return
    X, y, _ = load_svmlight(shared_file_or_exit("w8a", "w8a.train"))
    Xt, yt, _ = load_svmlight(shared_file_or_exit("w8a", "w8a.test"), n_features=X.shape[1],
                              ignore_extra_features=True)
    # w8a.train's rows are not in random order: the folds are shuffled (the same for both)
    folds = StratifiedKFold(3, shuffle=True, random_state=0)
    warnings.simplefilter("ignore")  # LinearSVC's convergence chatter
    runs = {
        "GridSearchCV(LinearSVC)": lambda: GridSearchCV(
            LinearSVC(), {"C": LINEARSVC_CS}, cv=folds, scoring="average_precision").fit(X, y),
        "APSVMCV": lambda: APSVMCV(Cs=APSVM_CS, cv=folds, epsilon=EPSILON, n_jobs=1).fit(X, y),
        # the fold fits as tight as the refit (the path before fold_epsilon)
        "APSVMCV(fold_epsilon=epsilon)": lambda: APSVMCV(
            Cs=APSVM_CS, cv=folds, epsilon=EPSILON, fold_epsilon=EPSILON, n_jobs=1).fit(X, y),
    }
    results = best_runs(runs, args.repeat)
    base, base_cpu = results["GridSearchCV(LinearSVC)"][:2]
    rows, test_ap = [], {}
    for name, (seconds, cpu, model) in results.items():
        if name.startswith("APSVMCV"):
            fold_epsilon = model.fold_epsilon or FOLD_EPSILON_FACTOR * model.epsilon
            C, cv_ap, notes = model.C_, model.best_score_, (
                f"{int(model.n_iter_path_.sum())} iterations over the 21 fold fits at "
                f"fold_epsilon {fold_epsilon:g} (refit at C_ from the "
                f"folds' mean w: {model.n_iter_})")
        else:
            C, cv_ap, notes = model.best_params_["C"], model.best_score_, ""
        test_ap[name] = average_precision(yt, model.decision_function(Xt))
        rows.append([name, f"{C:g}", round(cv_ap, 4), round(test_ap[name], 4), round(seconds, 2),
                     round(seconds / base, 2), round(cpu, 2), round(cpu / base_cpu, 2), notes])
    print(f"w8a: train {X.shape[0]} x {X.shape[1]}, test {Xt.shape[0]}; 7 values of C, "
          f"3 folds (StratifiedKFold, shuffled), refit included; APSVM epsilon={EPSILON}; best of "
          f"{args.repeat}, timed in turns")
    print(f"machine: {machine_line()}; threads: OMP_NUM_THREADS={os.environ['OMP_NUM_THREADS']}; "
          f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    print()
    print_table(["search", "C chosen", "CV AP", "test AP", "time (s)", "time / GridSearchCV",
                 "CPU (s)", "CPU / GridSearchCV", "notes"], rows)
    ratio = results["APSVMCV"][0] / base
    cpu_ratio = results["APSVMCV"][1] / base_cpu
    gap = max(test_ap.values()) - test_ap["APSVMCV"]
    print()
    print(f"targets: no slower: {'met' if ratio <= 1 else 'MISSED'} ({ratio:.2f}x wall, "
          f"{cpu_ratio:.2f}x CPU); test AP within 0.005 of the better: "
          f"{'met' if gap <= 0.005 else 'MISSED'} ({gap:.4f} below)")


ROWS_PER_QUERY, NNZ_PER_ROW, N_FEATURES = 100, 20, 10_000
DASK_C, DASK_MAX_ITER = 1e4, 40


def write_ranking_shards(directory, n_rows, n_shards, seed=0):
    """The generated set as ``n_shards`` SVMlight files part-NN.txt (queries of
    ROWS_PER_QUERY rows kept whole; NNZ_PER_ROW features a row, one in each of as many
    equal blocks of the N_FEATURES, values 0.01-0.99; label 1 for a row whose hidden
    score is among its query's top fifth, about). Returns the paths; files already
    written for the same arguments are kept."""
    directory.mkdir(parents=True, exist_ok=True)
    stamp = directory / f"done-{n_rows}-{n_shards}-{seed}"
    paths = [directory / f"part-{j:02d}.txt" for j in range(n_shards)]
    if stamp.exists():
        return paths
    rng = np.random.default_rng(seed)
    w_true = rng.normal(size=N_FEATURES)
    block = N_FEATURES // NNZ_PER_ROW
    index_tokens = np.array([f"{j + 1}:".encode() for j in range(N_FEATURES)], dtype=object)
    value_tokens = np.array([f"0.{v:02d} ".encode() for v in range(100)], dtype=object)
    n_queries = n_rows // ROWS_PER_QUERY
    bounds = [n_queries * j // n_shards for j in range(n_shards + 1)]
    for j, path in enumerate(paths):
        with open(path, "wb") as fh:
            for q0 in range(bounds[j], bounds[j + 1], 1000):  # 1000 queries a batch
                nq = min(1000, bounds[j + 1] - q0)
                n = nq * ROWS_PER_QUERY
                cols = (rng.integers(0, block, size=(n, NNZ_PER_ROW))
                        + block * np.arange(NNZ_PER_ROW))
                vals = rng.integers(1, 100, size=(n, NNZ_PER_ROW))
                score = (w_true[cols] * vals / 100).sum(axis=1) + rng.normal(size=n)
                by_query = score.reshape(nq, ROWS_PER_QUERY)
                top = np.quantile(by_query, 0.8, axis=1, keepdims=True)
                label = (by_query > top).ravel().astype(int)
                qid = np.repeat(np.arange(q0, q0 + nq) + 1, ROWS_PER_QUERY)
                row = np.empty((n, 2 * NNZ_PER_ROW + 2), dtype=object)
                row[:, 0] = [f"{a} qid:{b} ".encode() for a, b in zip(label.tolist(),
                                                                     qid.tolist())]
                row[:, 1:-1:2] = index_tokens[cols]
                row[:, 2:-1:2] = value_tokens[vals]
                row[:, -1] = b"\n"
                fh.write(b"".join(row.ravel().tolist()))
    stamp.touch()
    return paths


class _Chain(io.RawIOBase):
    """The shards read as one binary stream (the in-memory fit reads one file's text)."""

    def __init__(self, paths):
        self.files = [open(p, "rb") for p in paths]

    def readable(self):
        return True

    def readinto(self, buffer):
        while self.files:
            n = self.files[0].readinto(buffer)
            if n:
                return n
            self.files.pop(0).close()
        return 0


def _max_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _model(loss, **kwargs):
    """APSVM, or RankSVM(loss="pairs"), at the benchmark's C and max_iter."""
    from svmrank import APSVM, RankSVM
    if loss == "pairs":
        return RankSVM(loss="pairs", C=DASK_C, max_iter=DASK_MAX_ITER, **kwargs)
    return APSVM(C=DASK_C, max_iter=DASK_MAX_ITER, **kwargs)


def _fit_memory(paths, loss):
    t0 = time.perf_counter()
    X, y, qid = load_svmlight(io.BufferedReader(_Chain(paths)))
    t1, cpu = time.perf_counter(), _cpu_seconds()
    model = _model(loss, n_jobs=2).fit(X, y, qid=qid)
    t2, cpu = time.perf_counter(), _cpu_seconds() - cpu
    return {"load": t1 - t0, "fit": t2 - t1, "iterations": int(model.n_iter_),
            "learner": model.result_.history[-1]["time"], "tasks": {}, "cpu": cpu,
            "objective": float(model.objective_), "coef": model.coef_.tolist(),
            "driver_mb": _max_rss_mb(), "workers_mb": [],
            "csr_mb": (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes) / 2**20}


def _fit_dask(paths, loss):
    import distributed

    from svmrank.dask import read_svmlight
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, memory_limit=0) as cluster:
        with distributed.Client(cluster) as client:
            t0 = time.perf_counter()
            data = read_svmlight([str(p) for p in paths], client=client)
            t1, cpu, worker_cpu = time.perf_counter(), _cpu_seconds(), client.run(_cpu_seconds)
            with distributed.get_task_stream(client=client) as stream:
                model = _model(loss).fit(data)
            t2, cpu = time.perf_counter(), _cpu_seconds() - cpu
            cpu += sum(client.run(_cpu_seconds).values()) - sum(worker_cpu.values())
            workers = client.run(_max_rss_mb)
    tasks = {}  # the workers' compute seconds and task count, by function
    for task in stream.data:
        name = task["key"].split("-")[0] if isinstance(task["key"], str) else str(task["key"])
        busy = sum(s["stop"] - s["start"] for s in task["startstops"] if s["action"] == "compute")
        seconds, count = tasks.get(name, (0.0, 0))
        tasks[name] = (seconds + busy, count + 1)
    return {"load": t1 - t0, "fit": t2 - t1, "iterations": int(model.n_iter_),
            "learner": model.result_.history[-1]["time"], "tasks": tasks, "cpu": cpu,
            "objective": float(model.objective_), "coef": model.coef_.tolist(),
            "driver_mb": _max_rss_mb(), "workers_mb": sorted(workers.values())}


def section_dask(args):
    if args.mode:  # (a subprocess: one fit, its numbers as JSON on the last line)
        warnings.simplefilter("ignore")
        paths = sorted(args.data_dir.glob("part-*.txt"))
        print(json.dumps((_fit_memory if args.mode == "memory" else _fit_dask)(paths,
                                                                                args.loss)))
        return
    t0 = time.perf_counter()
    paths = write_ranking_shards(args.data_dir, args.rows, args.shards)
    size = sum(p.stat().st_size for p in paths) / 2**20
    print(f"generated set: {args.rows} rows, {args.rows // ROWS_PER_QUERY} queries, "
          f"{NNZ_PER_ROW} non-zeros a row over {N_FEATURES} features, {len(paths)} shards, "
          f"{size:.0f} MB of text (written or found in {time.perf_counter() - t0:.0f} s)")
    results = {}
    for mode in ("memory", "dask"):  # back to back
        load = os.getloadavg()[0]
        out = subprocess.run([sys.executable, __file__, "dask", "--mode", mode, "--data-dir",
                              str(args.data_dir), "--loss", args.loss], check=True,
                             capture_output=True, text=True)
        results[mode] = json.loads(out.stdout.strip().splitlines()[-1])
        results[mode]["loadavg"] = load
    memory, dask = results["memory"], results["dask"]
    rows = []
    for name, r in (("in memory (1 process, 2 threads)", memory),
                    ("Dask LocalCluster (2 workers x 1 thread)", dask)):
        per_iter = r["learner"] / r["iterations"]  # (the learner's loop: setup apart)
        rows.append([name, round(r["load"], 1), round(r["fit"] - r["learner"], 1),
                     round(r["fit"], 1), r["iterations"], round(per_iter, 3),
                     round(per_iter / (memory["learner"] / memory["iterations"]), 2),
                     round(r["cpu"], 1), round(r["cpu"] / memory["cpu"], 2),
                     round(r["driver_mb"]), ", ".join(f"{m:.0f}" for m in r["workers_mb"]) or "-",
                     round(r["loadavg"], 2)])
    model = "APSVM" if args.loss == "ap" else "RankSVM(loss='pairs')"
    print(f"machine: {machine_line()}; {model} C={DASK_C}, max_iter={DASK_MAX_ITER}; CSR of X: "
          f"{memory['csr_mb']:.0f} MB")
    print()
    print_table(["fit", "load (s)", "setup (s)", "fit (s)", "iterations", "s / iteration",
                 "ratio to in memory", "fit CPU (s)", "CPU ratio", "driver peak (MB)", "worker peaks (MB)", "load avg"], rows)
    gap = abs(dask["objective"] - memory["objective"]) / abs(memory["objective"])
    dw = np.abs(np.subtract(dask["coef"], memory["coef"])).max()
    ratio = rows[1][6]
    worst = max(dask["workers_mb"])
    print()
    print(f"same model: objective {gap:.1e} relative, w {dw:.1e}; targets: Dask at most 1.5x: "
          f"{'met' if ratio <= 1.5 else 'MISSED'} ({ratio}x); each worker's peak below the "
          f"in-memory fit's: {'met' if worst < memory['driver_mb'] else 'MISSED'} "
          f"({worst:.0f} against {memory['driver_mb']:.0f} MB)")
    print()
    print("where the Dask fit's time goes (the workers' task time, wall, summed over the two "
          "workers; setup is _make_partition):")
    for name, (seconds, count) in sorted(dask["tasks"].items(), key=lambda kv: -kv[1][0]):
        print(f"  {name}: {count} tasks, {seconds:.1f} s")


SECTIONS = {"cv": section_cv, "dask": section_dask}


def main():
    parser = argparse.ArgumentParser(description=description(__doc__))
    parser.add_argument("section", choices=sorted(SECTIONS))
    parser.add_argument("--repeat", type=positive_int, default=3, help="timed runs (best is kept)")
    parser.add_argument("--rows", type=int, default=5_000_000, help="dask: rows generated")
    parser.add_argument("--shards", type=int, default=10, help="dask: shard files")
    parser.add_argument("--loss", choices=["ap", "pairs"], default="ap",
                        help="dask: APSVM, or RankSVM(loss='pairs')")
    parser.add_argument("--data-dir", type=Path, default=Path("/tmp/svmrank-bench-scale"),
                        help="dask: where the shards are written (outside the repository)")
    parser.add_argument("--mode", choices=["memory", "dask"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    SECTIONS[args.section](args)


if __name__ == "__main__":
    sys.exit(main())
