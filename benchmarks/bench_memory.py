"""Peak memory of reading, fitting and classifying, per byte of input.

Every measurement runs in a fresh child process (this script with ``--child NAME``),
which imports svmrank and its estimators, notes its peak RSS (``ru_maxrss``), runs the
operation and notes the peak again; the table shows the difference, what the operation
adds over an idle process with its imports, divided by the size of the input: the
file's bytes and the CSR size of X (data + indices + indptr bytes). A fit's peak
includes reading its data (the "read" column is that part alone). "After the read" is
what the operation's own peak adds to the resident size once the data is read (Linux:
VmHWM reset through /proc/self/clear_refs), so that buffers the reader freed do not hide
it; issue 28 bounds it for a fit by 2x X's CSR size plus O(n).

Operations: ``load_svmlight`` of w8a.train and MQ2008 Fold1 train, and the same files
through ``iter_svmlight`` in 1 MiB chunks (the CSR column: all chunks together); APSVM(C=1e5) on
w8a.train, RankSVM(loss="ndcg") (graded: levels 0-2) and RankSVM(loss="ap") (binary:
RankingProblem) on MQ2008 Fold1 train with its qid, TopKSVM(k=5) on
letter, LatentAPSVM on musk1, HOAPSVM on cora (class 0 one-vs-rest, the whole citation
graph); and svm_ap_classify's path on w8a.test (read the model of the APSVM fit,
``from_model``, ``decision_function``).

Usage: python benchmarks/bench_memory.py [--quick]   (--quick: the reads only)
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import description, machine_line, print_table, shared_file_or_exit  # noqa: E402

import numpy as np  # noqa: E402

from svmrank.bags import load_bags  # noqa: E402
from svmrank.estimators.high_order import HOAPSVM  # noqa: E402
from svmrank.estimators.latent import LatentAPSVM  # noqa: E402
from svmrank.estimators.ranking import APSVM, RankSVM  # noqa: E402
from svmrank.estimators.topk import TopKSVM  # noqa: E402
from svmrank.graph import edges_from_file  # noqa: E402
from svmrank.io.estimator_model import from_model, to_model  # noqa: E402
from svmrank.io.model_file import read_model, write_model  # noqa: E402
from svmrank.io.svmlight import iter_svmlight, load_svmlight  # noqa: E402

W8A = ("w8a", "w8a.train")
MQ2008 = ("mq2008", "Fold1", "train.txt")
# name: (operation, data set label, file parts)
MEASUREMENTS = {
    "read-w8a": ("read (load_svmlight)", "w8a.train", W8A),
    "read-mq2008": ("read (load_svmlight)", "MQ2008 Fold1 train", MQ2008),
    "read-chunked-w8a": ("read chunked (iter_svmlight, 1 MiB)", "w8a.train", W8A),
    "read-chunked-mq2008": ("read chunked (iter_svmlight, 1 MiB)", "MQ2008 Fold1 train", MQ2008),
    "fit-apsvm": ("fit APSVM(C=1e5)", "w8a.train", W8A),
    "fit-ranksvm": ('fit RankSVM(loss="ndcg"), qid', "MQ2008 Fold1 train", MQ2008),
    "fit-ranksvm-ap": ('fit RankSVM(loss="ap"), qid', "MQ2008 Fold1 train", MQ2008),
    "fit-topk": ("fit TopKSVM(k=5)", "letter", ("letter", "letter.scale.svm")),
    "fit-latent": ("fit LatentAPSVM", "musk1", ("musk1", "musk1.mil.svm")),
    "fit-hoap": ("fit HOAPSVM (class 0)", "cora (+ edges)", ("cora", "cora.nodes.svm")),
    "classify": ("classify (model, from_model, decision_function)", "w8a.test", ("w8a", "w8a.test")),
}
QUICK = ["read-w8a", "read-mq2008", "read-chunked-w8a", "read-chunked-mq2008"]
CHUNK = 1 << 20


def max_rss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def status_bytes(field):
    """A /proc/self/status field (VmRSS, VmHWM) in bytes, or None off Linux."""
    try:
        with open("/proc/self/status") as fh:
            return next(int(l.split()[1]) * 1024 for l in fh if l.startswith(field + ":"))
    except (OSError, StopIteration):
        return None


def mark_read(marks):
    """The peak once the data is read; then the resident size, and the kernel's peak
    (VmHWM) reset to it, so that what the operation adds beyond the data it holds is
    measured apart from the reader's freed buffers."""
    marks["read"] = max_rss_bytes()
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        marks["resident"] = status_bytes("VmRSS")
    except OSError:
        marks["resident"] = None


def csr_bytes(X):
    return X.data.nbytes + X.indices.nbytes + X.indptr.nbytes


def run_operation(name, path, model_path, marks):
    """Run one measurement; ``marks["read"]`` is the peak RSS once the data is read.
    Returns X (for its CSR size)."""
    if name == "classify":
        model = read_model(model_path)
        X, _, _ = load_svmlight(path, n_features=model.n_features)
        mark_read(marks)
        from_model(model).decision_function(X)
        return X
    if name == "fit-latent":
        X, y, bags, _ = load_bags(path)
        mark_read(marks)
        LatentAPSVM(random_state=0).fit(X, y, bags=bags)
        return X
    if name.startswith("read-chunked"):
        total = 0  # (the CSR bytes of all chunks, returned in place of X)
        for X, _, _, _ in iter_svmlight(path, chunk_bytes=CHUNK):
            total += csr_bytes(X)
            del X
        mark_read(marks)
        return total
    if name == "fit-hoap":
        X, labels, _ = load_svmlight(path, n_features=1433)
        edges = edges_from_file(path.with_name("cora.edges.txt"), n_samples=X.shape[0])
        mark_read(marks)
        marks["edges"] = np.asarray(edges).nbytes  # (the graph's other input: E x 2 ids)
        HOAPSVM(pairwise_features=[]).fit(X, (labels == 0).astype(np.float64), edges=edges)
        return X
    X, y, qid = load_svmlight(path)
    mark_read(marks)
    if name == "fit-apsvm":
        est = APSVM(C=1e5).fit(X, y)
        marks["peak"] = max(marks["read"], max_rss_bytes())  # (before writing the model)
        marks["peak_hwm"] = status_bytes("VmHWM")
        write_model(model_path, to_model(est, n_train=X.shape[0]))
    elif name == "fit-ranksvm":
        RankSVM(loss="ndcg").fit(X, y, qid=qid)
    elif name == "fit-ranksvm-ap":
        RankSVM(loss="ap").fit(X, y, qid=qid)
    elif name == "fit-topk":
        TopKSVM(k=5).fit(X, y)
    return X


def child(name, model_path):
    path = shared_file_or_exit(*MEASUREMENTS[name][2])
    base = max_rss_bytes()
    marks = {}
    t0 = time.perf_counter()
    X = run_operation(name, path, model_path, marks)
    seconds = time.perf_counter() - t0
    hwm = marks.get("peak_hwm", status_bytes("VmHWM"))
    after = None if marks["resident"] is None or hwm is None else hwm - marks["resident"]
    # (ru_maxrss restarted from the resident size at the VmHWM reset)
    peak = marks.get("peak", max(marks["read"], max_rss_bytes()))
    import svmrank
    print(json.dumps(dict(base=base, read=marks["read"] - base, peak=peak - base, after=after,
                          file=os.path.getsize(path),
                          csr=X if isinstance(X, int) else csr_bytes(X), seconds=seconds,
                          svmrank=svmrank.__file__, edges=marks.get("edges"))))


def measure(name, model_path):
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", name,
                          "--model", model_path], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{name}: child failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=description(__doc__))
    ap.add_argument("--quick", action="store_true", help="the two reads only")
    ap.add_argument("--child", choices=list(MEASUREMENTS), help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child(args.child, args.model)
    print(machine_line())
    names = QUICK if args.quick else list(MEASUREMENTS)
    for name in names:  # (the SKIP line here, not from a child the table cannot read)
        shared_file_or_exit(*MEASUREMENTS[name][2])
    rows, base, graph_notes = [], [], []
    MB = 1e6
    with tempfile.TemporaryDirectory() as tmp:
        model_path = os.path.join(tmp, "w8a.apsvm.model")  # written by fit-apsvm
        for name in names:
            r = measure(name, model_path)
            base.append(r["base"])
            op, data, _ = MEASUREMENTS[name]
            rows.append([op, data, f"{r['file'] / MB:.2f}", f"{r['csr'] / MB:.2f}",
                         f"{r['read'] / MB:.1f}", f"{r['peak'] / MB:.1f}",
                         f"{r['peak'] / r['file']:.2f}", f"{r['peak'] / r['csr']:.2f}",
                         "—" if r["after"] is None or name.startswith("read")
                         else f"{r['after'] / MB:.1f} ({r['after'] / r['csr']:.2f}x)",
                         f"{r['seconds']:.2f}"])
            if r.get("edges") and r["after"] is not None:
                graph_notes.append(
                    f"{op}: after the read {r['after'] / MB:.1f} MB = {r['after'] / r['csr']:.2f}x "
                    f"X's CSR size, {r['after'] / (r['csr'] + r['edges']):.2f}x X's CSR size "
                    f"plus the edges ({r['edges'] / MB:.3f} MB)")
            print(f"  {name} done ({r['seconds']:.1f}s, svmrank from {r['svmrank']})",
                  file=sys.stderr, flush=True)
    print(f"Peak RSS of a fresh process after its imports: {min(base) / MB:.0f}-"
          f"{max(base) / MB:.0f} MB (not counted below)")
    print()
    print_table(["operation", "data", "file MB", "CSR MB", "read adds MB", "peak adds MB",
                 "peak / file bytes", "peak / CSR bytes", "after the read MB (/ CSR)", "s"],
                rows)
    for note in graph_notes:
        print()
        print(note)


if __name__ == "__main__":
    main()
