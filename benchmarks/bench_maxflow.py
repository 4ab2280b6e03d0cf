"""Graph cuts: all max-marginals by dynamic cuts vs one max-flow and vs recomputing
every max-marginal from scratch (n = 1e5), and one max-flow vs networkx (n = 1e4).

Usage: python benchmarks/bench_maxflow.py [--n-large 100000] [--n-small 10000]
       [--scratch-sample 20] [--seed 0]

Problems: unary scores N(0, 1) for both labels, edge weights U(0, 1) (penalty for
disagreeing labels); a 4-connected grid and a random graph of average degree 4.
"""
import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import best_time, description, machine_line, positive_int, print_table  # noqa: E402

from svmrank._maxflow_fast import MaxFlowGraph  # noqa: E402
from svmrank.graph import _check_problem, _Cut, max_marginals, max_score_labelling  # noqa: E402


def grid_edges(rows, cols):
    idx = np.arange(rows * cols).reshape(rows, cols)
    return np.concatenate([np.stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()], 1),
                           np.stack([idx[:-1, :].ravel(), idx[1:, :].ravel()], 1)])


def random_edges(n, rng, degree=4):
    m = degree * n // 2
    e = rng.integers(0, n, (int(m * 1.1) + 10, 2))
    e = e[e[:, 0] != e[:, 1]]
    e = np.unique(np.sort(e, axis=1), axis=0)
    return e[rng.permutation(len(e))[:m]]


def grid_shape(n):
    rows = int(np.sqrt(n))
    while n % rows:
        rows -= 1
    return rows, n // rows


def make_problem(kind, n, rng):
    edges = grid_edges(*grid_shape(n)) if kind == "grid" else random_edges(n, rng)
    return rng.normal(size=(n, 2)), edges, rng.uniform(0.0, 1.0, len(edges))


def kernel_flow(cut, gain):
    """One fresh max-flow on prebuilt CSR arrays (no validation, no Python graph build)."""
    g = MaxFlowGraph(cut.first, cut.head, cut.sister, cut.cap, np.maximum(gain, 0), np.maximum(-gain, 0))
    g.maxflow()
    return g


def part_a(n, sample, rng, rows):
    for kind in ("grid", "random"):
        unary, edges, weights = make_problem(kind, n, rng)
        t_flow = best_time(lambda: max_score_labelling(unary, edges, weights), repeat=3, min_time=0.0)
        t_mm = best_time(lambda: max_marginals(unary, edges, weights), repeat=3, min_time=0.0)
        # from scratch: one fresh cut per node with y_i forced to the label opposite
        # its MAP label (the other max-marginal is the MAP score), on a sample of nodes
        cut = _Cut(*_check_problem(unary, edges, weights))
        nodes = rng.choice(n, sample, replace=False)
        big = 10.0 * (np.abs(unary).sum() + weights.sum())
        t0 = time.perf_counter()
        for i in nodes:
            u = unary.copy()
            u[i, int(cut.labelling[i])] -= big
            max_score_labelling(u, edges, weights)
        t_scratch_api = (time.perf_counter() - t0) / sample * n
        t0 = time.perf_counter()
        for i in nodes:
            gain = cut.gain.copy()
            gain[i] += -big if cut.labelling[i] else big
            kernel_flow(cut, gain)
        t_scratch_kernel = (time.perf_counter() - t0) / sample * n
        rows.append([f"{kind}, n={n}, E={len(edges)}", f"{t_flow:.3f}", f"{t_mm:.3f}",
                     f"{t_mm / t_flow:.2f}x", f"{t_scratch_kernel:.0f}",
                     f"{t_scratch_kernel / t_mm:.0f}x", f"{t_scratch_api / t_mm:.0f}x"])


def nx_graph(unary, edges, weights, scale=1000):
    import networkx as nx
    gain = np.round(scale * (unary[:, 1] - unary[:, 0])).astype(np.int64)
    w = np.round(scale * weights).astype(np.int64)
    G = nx.DiGraph()
    G.add_nodes_from(["s", "t"])
    G.add_nodes_from(range(len(unary)))
    for (u, v), c in zip(edges.tolist(), w.tolist()):
        G.add_edge(u, v, capacity=c)
        G.add_edge(v, u, capacity=c)
    for i, gi in enumerate(gain.tolist()):
        if gi > 0:
            G.add_edge("s", i, capacity=gi)
        elif gi < 0:
            G.add_edge(i, "t", capacity=-gi)
    int_unary = np.column_stack([np.zeros(len(gain)), gain.astype(float)])
    return G, int_unary, w.astype(float)


def part_b(n, rng, rows):
    import networkx as nx
    from networkx.algorithms import flow
    funcs = [("edmonds_karp", flow.edmonds_karp), ("shortest_augmenting_path", flow.shortest_augmenting_path),
             ("preflow_push", flow.preflow_push), ("dinitz", flow.dinitz),
             ("boykov_kolmogorov", flow.boykov_kolmogorov)]
    try:
        import maxflow as pymaxflow  # optional GPL peer, never a dependency
    except ImportError:
        pymaxflow = None
    for kind in ("grid", "random"):
        # screen all five networkx flow functions on a graph of n / 5 nodes, then time
        # the two fastest on the benchmark graph (the slow ones take minutes at n = 1e4)
        u5, e5, w5 = make_problem(kind, n // 5, rng)
        G5 = nx_graph(u5, e5, w5)[0]
        screen = {}
        for name, fn in funcs:
            t0 = time.perf_counter()
            nx.maximum_flow_value(G5, "s", "t", flow_func=fn)
            screen[name] = time.perf_counter() - t0
        finalists = sorted(screen, key=screen.get)[:2]
        unary, edges, weights = make_problem(kind, n, rng)
        G, iu, iw = nx_graph(unary, edges, weights)
        _, best = max_score_labelling(iu, edges, iw)
        ours_value = float(np.maximum(iu[:, 1], 0).sum() - best)  # max-flow = Σ max(u0,u1) − score
        t_ours = best_time(lambda: max_score_labelling(iu, edges, iw), repeat=3, min_time=0.1)
        cut = _Cut(*_check_problem(iu, edges, iw))
        t_kernel = best_time(lambda: kernel_flow(cut, cut.gain), repeat=3, min_time=0.1)
        timings = {}
        for name, fn in funcs:
            if name not in finalists:
                continue
            t0 = time.perf_counter()
            value = nx.maximum_flow_value(G, "s", "t", flow_func=fn)
            timings[name] = time.perf_counter() - t0
            assert abs(value - ours_value) < 1e-6 * max(1.0, value), (name, value, ours_value)
        fastest = min(timings, key=timings.get)
        peer_total = peer_solve = "not installed"
        if pymaxflow is not None:
            def build_peer():  # vectorised graph construction (PyMaxflow's fast path)
                g = pymaxflow.Graph[float](n, len(edges))
                ids = g.add_nodes(n)
                g.add_edges(ids[edges[:, 0]], ids[edges[:, 1]], iw, iw)
                g.add_grid_tedges(ids, np.maximum(iu[:, 1], 0.0), np.maximum(-iu[:, 1], 0.0))
                return g
            assert abs(build_peer().maxflow() - ours_value) < 1e-6 * max(1.0, ours_value)
            t_total = best_time(lambda: build_peer().maxflow(), repeat=5, min_time=0.1)
            solve_times = []
            for _ in range(7):  # maxflow() alone (a graph can be solved once from scratch)
                g = build_peer()
                t0 = time.perf_counter()
                g.maxflow()
                solve_times.append(time.perf_counter() - t0)
            peer_total = f"{t_total * 1e3:.1f} ({t_ours / t_total:.2f}x)"
            peer_solve = f"{min(solve_times) * 1e3:.1f} ({t_kernel / min(solve_times):.2f}x)"
        rows.append([f"{kind}, n={n}, E={len(edges)}", f"{t_ours * 1e3:.1f}", f"{t_kernel * 1e3:.1f}",
                     f"{fastest} {timings[fastest] * 1e3:.0f}", f"{timings[fastest] / t_ours:.0f}x",
                     f"{timings[fastest] / t_kernel:.0f}x", peer_total, peer_solve])


def main(argv=None):
    ap = argparse.ArgumentParser(description=description(__doc__))
    ap.add_argument("--n-large", type=positive_int, default=100_000)
    ap.add_argument("--n-small", type=positive_int, default=10_000)
    ap.add_argument("--scratch-sample", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    print(machine_line())
    print()
    rows = []
    part_a(args.n_large, args.scratch_sample, rng, rows)
    print(f"(a) all n max-marginals (dynamic cuts) vs one max-flow and vs from scratch "
          f"(from-scratch time extrapolated from {args.scratch_sample} sampled nodes x n)")
    print()
    print_table(["graph", "one max-flow s", "all max-marginals s", "mm / flow (target <= 10x)",
                 "from scratch s (kernel)", "speed-up vs scratch, kernel (target >= 100x)",
                 "speed-up vs scratch, API"], rows)
    print()
    rows = []
    part_b(args.n_small, rng, rows)
    print("(b) one max-flow: ours vs networkx's fastest flow function (integer capacities, same "
          "value; the two fastest of networkx's five flow functions on an n/5 graph are timed at n)")
    print()
    print_table(["graph", "ours ms (API)", "ours ms (kernel)", "fastest networkx ms",
                 "speed-up, API (target >= 50x)", "speed-up, kernel",
                 "PyMaxflow build+solve ms (ours API / it)",
                 "PyMaxflow solve ms (ours kernel / it; target <= 1.5x)"], rows)


if __name__ == "__main__":
    main()
