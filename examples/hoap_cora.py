"""HOAP-SVM against AP-SVM and HOB-SVM on Cora's citation graph.

Reproduces the comparison of Dokania et al. 2014 (Table 1: SVM, AP-SVM, HOB-SVM and
HOAP-SVM by test AP; HOB and HOAP use the links between samples) on the public Cora
data set: rank the papers of one class (default 3) against the others, train on a
random half of the nodes with the edges among them and test on the other half with
theirs (svmrank.graph.subgraph_edges). The figure is HOAP-SVM's max-marginal scatter
on the test nodes (m⁺ against m⁻; the ranking score is their difference, eq. 11).

    python examples/hoap_cora.py [--quick] [--C 10] [--label 3] [--figure hoap_cora.png]
"""
import time

import numpy as np

from example_data import data_file, parser, positive, run, save, table
from svmrank import APSVM, HOAPSVM, HOBSVM
from svmrank.graph import edges_from_file, subgraph_edges
from svmrank.io.svmlight import load_svmlight
from svmrank.metrics import average_precision
from svmrank.plot import max_marginals, new_figure


def main(argv=None):
    p = parser(__doc__)
    p.add_argument("--C", type=positive(float), default=10.0)
    p.add_argument("--label", type=float, default=3.0, help="the relevant class")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    X, labels, _ = load_svmlight(data_file("cora", "cora.nodes.svm"))
    edges = edges_from_file(data_file("cora", "cora.edges.txt"), X.shape[0])
    y = (labels == args.label).astype(np.float64)
    rng = np.random.default_rng(args.seed)
    nodes = rng.permutation(X.shape[0])
    if args.quick:
        nodes = nodes[:800]
    train, test = np.sort(nodes[: len(nodes) // 2]), np.sort(nodes[len(nodes) // 2:])
    e_train, e_test = subgraph_edges(edges, train), subgraph_edges(edges, test)
    # the pairwise term on the bias feature only: a Potts term (links prefer equal labels)
    high_order = dict(C=args.C, eta=1.0, pairwise_features=[])
    hoap_options = {"cccp_max_iter": 3, "epsilon": 0.01} if args.quick else {}
    rows, hoap = [], None
    for name, model in (("AP-SVM", APSVM(C=args.C)), ("HOB-SVM", HOBSVM(**high_order)),
                        ("HOAP-SVM", HOAPSVM(**high_order, **hoap_options))):
        start = time.perf_counter()
        links = {} if name == "AP-SVM" else {"edges": e_train}
        model.fit(X[train], y[train], **links)
        seconds = time.perf_counter() - start
        test_links = {} if name == "AP-SVM" else {"edges": e_test}
        scores = model.decision_function(X[test], **test_links)
        rows.append((name, average_precision(y[test], scores), f"{seconds:.2f}s"))
        hoap = model
    print(f"Cora, class {args.label:g} against the rest: {len(train)} training nodes "
          f"({len(e_train)} edges), {len(test)} test nodes ({len(e_test)} edges), "
          f"C = {args.C:g}")
    table(rows, ("model", "test AP", "time"))
    figure = new_figure((5.5, 5))
    ax = max_marginals(hoap, X[test], y[test], e_test, ax=figure.add_subplot())
    ax.set_title("HOAP-SVM max-marginals, Cora test nodes")
    save(figure, args, __file__)


if __name__ == "__main__":
    run(main)
