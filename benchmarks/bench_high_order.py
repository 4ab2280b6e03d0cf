"""Cora, one-vs-rest per class: AP of SVM, AP-SVM, HOB-SVM and HOAP-SVM (as in
Dokania et al. 2014, Tables 1-2) and their training times.

Usage: python benchmarks/bench_high_order.py [--classes 0,1,...] [--C 1,10,100]
       [--eta 0.1,1,10] [--pairwise none|all]
       python benchmarks/bench_high_order.py --full [--graphs cora,generated] [...]

Protocol (standard Planetoid split of cora.splits.txt): every method's hyper-parameters
are chosen by the AP on ``val`` of a model trained on ``train``
(C for SVM and AP-SVM, (C, η) for HOB-SVM; HOAP-SVM takes HOB-SVM's η and
initialisation C and chooses its own C). The chosen setting is then re-trained on
``train`` + ``val`` (640 nodes, 345 citation edges among them; ``train`` alone has 21)
and evaluated on ``test`` (1000 nodes, the 653 edges among them). HOB/HOAP rank test
nodes by max-marginal differences on the test graph. Timings are the final fits.

``--full`` (real sizes): every node of Cora (2,708) and a generated citation-like graph
(``svmrank.datasets.make_citation_graph``, 20,000 nodes, seed 0), each split at random
(seed 0) into train 50 % / val 25 % / test 25 % with the edges inside each part. Per
class (one-vs-rest): C of AP-SVM, (C, η) of HOB-SVM and (C, η) of HOAP-SVM (HOB's C
as its initialisation's) chosen by val AP, final fits on train + val, AP on test. It
reports each final fit's time against AP-SVM's on the same rows, HOAP's CCCP rounds
(and whether it converged before its cap) and cutting-plane iterations per convex solve.
"""
import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import description, machine_line, print_table, shared_file_or_exit  # noqa: E402

from svmrank.estimators.high_order import HOAPSVM, HOBSVM  # noqa: E402
from svmrank.estimators.ranking import APSVM, BinarySVM  # noqa: E402
from svmrank.exceptions import ConvergenceWarning  # noqa: E402
from svmrank.graph import edges_from_file  # noqa: E402
from svmrank.io.svmlight import load_svmlight  # noqa: E402
from svmrank.metrics import average_precision  # noqa: E402


def load_cora():
    nodes = shared_file_or_exit("cora", "cora.nodes.svm")
    X, labels, _ = load_svmlight(nodes, n_features=1433)
    edges = edges_from_file(shared_file_or_exit("cora", "cora.edges.txt"), n_samples=X.shape[0])
    splits = {}
    for line in open(shared_file_or_exit("cora", "cora.splits.txt"), encoding="utf-8"):
        if line.strip() and not line.startswith("#"):
            name, *rows = line.split()
            splits[name] = np.array(rows, dtype=np.int64)
    return X, labels.astype(np.int64), edges, splits


def subgraph(X, edges, rows):
    """Rows of X and the edges among them, renumbered."""
    index = np.full(X.shape[0], -1)
    index[rows] = np.arange(len(rows))
    keep = (index[edges[:, 0]] >= 0) & (index[edges[:, 1]] >= 0)
    return X[rows], index[edges[keep]]


class Method:
    def __init__(self, name, make, graph):
        self.name, self.make, self.graph = name, make, graph

    def fit_score(self, params, train, test):
        (Xa, ya, Ea), (Xb, yb, Eb) = train, test
        est = self.make(**params)
        t0 = time.perf_counter()
        if self.graph:
            est.fit(Xa, ya, edges=Ea)
            seconds = time.perf_counter() - t0
            scores = est.decision_function(Xb, edges=Eb)
        else:
            est.fit(Xa, ya)
            seconds = time.perf_counter() - t0
            scores = est.decision_function(Xb)
        return average_precision(yb, scores), seconds


def select(method, grid, train, val):
    best = None
    for params in grid:
        ap, _ = method.fit_score(params, train, val)
        if best is None or ap > best[0]:
            best = (ap, params)
    return best[1]


def random_parts(n, seed=0):
    """Rows of train (50 %), val (25 %) and test (25 %) of a seeded permutation."""
    perm = np.random.default_rng(seed).permutation(n)
    a, b = n // 2, (3 * n) // 4
    return np.sort(perm[:a]), np.sort(perm[a:b]), np.sort(perm[b:])


def full_graphs(names):
    from svmrank.datasets import make_citation_graph
    for name in names:
        if name == "cora":
            X, labels, edges, _ = load_cora()
            yield "Cora (all)", X, labels, edges
        elif name == "generated":
            X, labels, edges = make_citation_graph(n_samples=20000, random_state=0)
            yield "generated 20k", X, labels, edges
        else:
            raise SystemExit(f"--graphs: unknown graph {name!r} (cora, generated)")


def run_full(args, Cs, etas, pf):
    """The real-size protocol of ``--full`` (module docstring)."""
    print(machine_line())
    print(f"--full: C grid {Cs}, eta grid {etas}, pairwise features: "
          f"{'constant only (Potts)' if pf == [] else 'all + constant'}, "
          f"HOAP cccp_max_iter {args.cccp_max_iter}, max_iter {args.hoap_max_iter}")
    apsvm = Method("AP-SVM", lambda C: APSVM(C=C), False)
    hob = Method("HOB-SVM", lambda C, eta: HOBSVM(C=C, eta=eta, pairwise_features=pf), True)
    hoap = Method("HOAP-SVM", lambda C, eta, init_C: HOAPSVM(
        C=C, eta=eta, init_C=init_C, pairwise_features=pf, cccp_max_iter=args.cccp_max_iter,
        max_iter=args.hoap_max_iter), True)
    for title, X, labels, edges in full_graphs(args.graphs.split(",")):
        tr, va, te = random_parts(X.shape[0])
        trva = np.sort(np.concatenate([tr, va]))
        parts = {k: subgraph(X, edges, r) for k, r in
                 (("train", tr), ("val", va), ("trainval", trva), ("test", te))}
        classes = range(int(labels.max()) + 1) if args.classes == "all" else \
            [int(c) for c in args.classes.split(",")]
        print()
        print(f"{title}: {X.shape[0]} nodes, {X.shape[1]} features, {len(edges)} edges; "
              f"train+val {len(trva)} nodes / {len(parts['trainval'][1])} edges, "
              f"test {len(te)} / {len(parts['test'][1])}")
        rows, aps = [], {m: [] for m in ("AP-SVM", "HOB-SVM", "HOAP-SVM")}
        ratios = {m: [] for m in ("HOB-SVM", "HOAP-SVM")}
        for c in classes:
            y = (labels == c).astype(np.float64)
            data = {k: (Xp, y[r], Ep) for (k, (Xp, Ep)), r in
                    zip(parts.items(), (tr, va, trva, te))}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                chosen = {"AP-SVM": select(apsvm, [{"C": C} for C in Cs], data["train"], data["val"]),
                          "HOB-SVM": select(hob, [{"C": C, "eta": e} for C in Cs for e in etas],
                                            data["train"], data["val"])}
                h = chosen["HOB-SVM"]
                chosen["HOAP-SVM"] = select(hoap, [{"C": C, "eta": e, "init_C": h["C"]}
                                                   for C in Cs for e in etas],
                                            data["train"], data["val"])
                res = {}
                for method in (apsvm, hob, hoap):
                    est = method.make(**chosen[method.name])
                    Xa, ya, Ea = data["trainval"]
                    t0 = time.perf_counter()
                    est.fit(Xa, ya, edges=Ea) if method.graph else est.fit(Xa, ya)
                    seconds = time.perf_counter() - t0
                    Xb, yb, Eb = data["test"]
                    scores = est.decision_function(Xb, edges=Eb) if method.graph \
                        else est.decision_function(Xb)
                    res[method.name] = (est, seconds, average_precision(yb, scores))
                    aps[method.name].append(res[method.name][2])
            t_ap = res["AP-SVM"][1]
            m = res["HOAP-SVM"][0]
            for name in ratios:
                ratios[name].append(res[name][1] / t_ap)
            rows.append([str(c)] + [f"{100 * res[k][2]:.1f}" for k in aps]
                        + [f"{t_ap:.2f}", f"{res['HOB-SVM'][1]:.2f}", f"{res['HOAP-SVM'][1]:.1f}",
                           f"{res['HOB-SVM'][1] / t_ap:.0f}", f"{res['HOAP-SVM'][1] / t_ap:.0f}",
                           f"{m.n_outer_iter_}{'' if m.converged_ else ' (cap)'}",
                           f"{m.n_iter_ / m.n_outer_iter_:.0f}",
                           ", ".join(f"{k.split('-')[0]} " + "/".join(
                               f"{v:g}" for p, v in chosen[k].items() if p != "init_C")
                               for k in chosen)])
            print(f"class {c} done", file=sys.stderr, flush=True)
        rows.append(["mean"] + [f"{100 * np.mean(aps[k]):.1f}" for k in aps] + [""] * 3
                    + [f"{np.mean(ratios[k]):.0f}" for k in ratios] + [""] * 3)
        print_table(["class", "AP-SVM", "HOB", "HOAP", "t AP-SVM s", "t HOB s", "t HOAP s",
                     "HOB/AP", "HOAP/AP", "CCCP rounds", "iter/solve", "chosen C[/eta]"], rows)
        gain = np.mean(aps["HOAP-SVM"]) - np.mean(aps["AP-SVM"])
        print(f"HOAP mean test AP - AP-SVM's: {100 * gain:+.1f} points")


def main(argv=None):
    ap = argparse.ArgumentParser(description=description(__doc__))
    ap.add_argument("--classes", default="0,1,2,3,4,5,6", help="class ids, or 'all' (--full)")
    ap.add_argument("--C", default="1,10,100")
    ap.add_argument("--eta", default="0.1,1,10")
    ap.add_argument("--pairwise", choices=["none", "all"], default="none",
                    help="pairwise features besides the constant (Potts) one")
    ap.add_argument("--full", action="store_true", help="real sizes (see the docstring)")
    ap.add_argument("--graphs", default="cora,generated", help="--full: cora, generated")
    ap.add_argument("--cccp-max-iter", type=int, default=20, help="--full: HOAP's CCCP cap")
    ap.add_argument("--hoap-max-iter", type=int, default=10000,
                    help="--full: HOAP's cap on cutting-plane iterations per convex solve")
    args = ap.parse_args(argv)
    if args.full:
        Cs = [float(c) for c in args.C.split(",")]
        etas = [float(e) for e in args.eta.split(",")]
        return run_full(args, Cs, etas, [] if args.pairwise == "none" else None)
    classes = [int(c) for c in args.classes.split(",")]
    Cs = [float(c) for c in args.C.split(",")]
    etas = [float(e) for e in args.eta.split(",")]
    pf = [] if args.pairwise == "none" else None
    X, labels, edges, splits = load_cora()
    Xtr, Etr = subgraph(X, edges, splits["train"])
    Xval, Eval = subgraph(X, edges, splits["val"])
    trval = np.concatenate([splits["train"], splits["val"]])
    Xtv, Etv = subgraph(X, edges, trval)
    Xte, Ete = subgraph(X, edges, splits["test"])
    print(machine_line())
    print(f"Cora: train {len(splits['train'])} nodes / {len(Etr)} edges, val {len(splits['val'])} / "
          f"{len(Eval)}, train+val {len(trval)} / {len(Etv)}, test {len(splits['test'])} / {len(Ete)}; "
          f"C grid {Cs}, eta grid {etas}, pairwise features: "
          f"{'constant only (Potts)' if pf == [] else 'all + constant'}")
    print()
    svm = Method("SVM", lambda C: BinarySVM(C=C), False)
    apsvm = Method("AP-SVM", lambda C: APSVM(C=C), False)
    hob = Method("HOB-SVM", lambda C, eta: HOBSVM(C=C, eta=eta, pairwise_features=pf), True)
    hoap = Method("HOAP-SVM", lambda C, eta, init_C: HOAPSVM(C=C, eta=eta, init_C=init_C,
                                                             pairwise_features=pf), True)
    rows, times, warned = [], {m: [] for m in ("SVM", "AP-SVM", "HOB-SVM", "HOAP-SVM")}, 0
    results = {m: [] for m in times}
    for c in classes:
        y = (labels == c).astype(np.float64)
        train = (Xtr, y[splits["train"]], Etr)
        val = (Xval, y[splits["val"]], Eval)
        trainval = (Xtv, y[trval], Etv)
        test = (Xte, y[splits["test"]], Ete)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ConvergenceWarning)
            chosen = {
                "SVM": select(svm, [{"C": C} for C in Cs], train, val),
                "AP-SVM": select(apsvm, [{"C": C} for C in Cs], train, val),
                "HOB-SVM": select(hob, [{"C": C, "eta": e} for C in Cs for e in etas], train, val),
            }
            h = chosen["HOB-SVM"]
            chosen["HOAP-SVM"] = select(hoap, [{"C": C, "eta": h["eta"], "init_C": h["C"]} for C in Cs],
                                        train, val)
            row = [str(c)]
            for method in (svm, apsvm, hob, hoap):
                ap_test, seconds = method.fit_score(chosen[method.name], trainval, test)
                results[method.name].append(ap_test)
                times[method.name].append(seconds)
                row.append(f"{100 * ap_test:.1f}")
            row.append("; ".join(f"{k}: " + ", ".join(f"{p}={v:g}" for p, v in chosen[k].items()
                                                         if p != "init_C") for k in chosen))
        warned += sum(issubclass(w.category, ConvergenceWarning) for w in caught)
        rows.append(row)
        print(f"class {c} done", file=sys.stderr, flush=True)
    rows.append(["mean"] + [f"{100 * np.mean(results[m]):.1f}" for m in results] + [""])
    print("Test AP (x100) per class, one-vs-rest")
    print()
    print_table(["class", "SVM", "AP-SVM", "HOB-SVM", "HOAP-SVM", "chosen (on val)"], rows)
    print()
    print("Training time of the final fits (seconds, mean over classes)")
    print()
    print_table(["SVM", "AP-SVM", "HOB-SVM", "HOAP-SVM (incl. its HOB init)"],
                [[f"{np.mean(times[m]):.2f}" for m in times]])
    print()
    print(f"ConvergenceWarnings during the run: {warned}")
    hoap_gain = np.mean(results["HOAP-SVM"]) - np.mean(results["AP-SVM"])
    print(f"HOAP-SVM mean AP - AP-SVM mean AP = {100 * hoap_gain:+.1f} points "
          f"(target > 0: {'met' if hoap_gain > 0 else 'MISSED'})")


if __name__ == "__main__":
    main()
