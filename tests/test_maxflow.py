"""The Boykov-Kolmogorov kernel and its dynamic max-marginals against brute force,
a plain Edmonds-Karp reference and networkx (integer capacities only)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from svmrank._maxflow_fast import MaxFlowGraph

from maxflow_reference import brute_force, build_csr, edmonds_karp, energy


def random_graph(rng, n, p, scale=1.0, integer=False, symmetric=False, zero_frac=0.2):
    pairs = [(u, v) for u in range(n) for v in range(u + 1, n) if rng.random() < p]
    edges = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    E = len(edges)

    def draw(k):
        x = rng.exponential(scale, k)
        if integer:
            x = np.round(x)
        x[rng.random(k) < zero_frac] = 0.0
        return x

    cap_uv = draw(E)
    cap_vu = cap_uv.copy() if symmetric else draw(E)
    return edges, cap_uv, cap_vu, draw(n), draw(n)


def solve(n, edges, cap_uv, cap_vu, cs, ct):
    first, head, sister, cap, arc_edge = build_csr(n, edges, cap_uv, cap_vu)
    g = MaxFlowGraph(first, head, sister, cap, cs, ct)
    flow = g.maxflow()
    return g, flow, g.labels(), arc_edge


def forcing(n, edges, cap_uv, cap_vu, cs, ct):
    inc = np.zeros(n)
    for e, (u, v) in enumerate(edges):
        inc[u] += max(cap_uv[e], cap_vu[e])
        inc[v] += max(cap_uv[e], cap_vu[e])
    k = 2.0 * (np.abs(cs - ct) + inc)
    k[k == 0] = 1.0
    return k


def kernel_min_marginals(n, edges, cap_uv, cap_vu, cs, ct, record=True):
    g, flow, y, arc_edge = solve(n, edges, cap_uv, cap_vu, cs, ct)
    e_map = energy(y, edges, cap_uv, cap_vu, cs, ct)
    out = g.max_marginals(forcing(n, edges, cap_uv, cap_vu, cs, ct), arc_edge,
                          np.ascontiguousarray(cap_uv, dtype=np.float64),
                          np.ascontiguousarray(cap_vu, dtype=np.float64),
                          np.ascontiguousarray(edges[:, 0], dtype=np.int32), cs - ct, record)
    return g, flow, y, e_map, out


@pytest.mark.parametrize("seed", range(40))
def test_min_cut_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 9))
    edges, cuv, cvu, cs, ct = random_graph(rng, n, rng.uniform(0.2, 0.9),
                                           scale=float(rng.choice([1e-6, 1.0, 1e6])))
    es, _ = brute_force(n, edges, cuv, cvu, cs, ct)
    _, flow, y, _ = solve(n, edges, cuv, cvu, cs, ct)
    tol = 1e-9 * es.max()  # (relative: no floor, which made tiny capacities vacuous)
    assert flow == pytest.approx(es.min(), abs=tol)
    assert energy(y, edges, cuv, cvu, cs, ct) == pytest.approx(es.min(), abs=tol)


@pytest.mark.parametrize("seed", range(10))
def test_min_cut_matches_networkx_integer_capacities(seed):
    nx = pytest.importorskip("networkx")
    rng = np.random.default_rng(100 + seed)
    n = 60
    edges, cuv, cvu, cs, ct = random_graph(rng, n, 0.08, scale=5.0, integer=True)
    G = nx.DiGraph()
    G.add_nodes_from(["s", "t", *range(n)])
    for e, (u, v) in enumerate(edges):
        G.add_edge(int(u), int(v), capacity=int(cuv[e]))
        G.add_edge(int(v), int(u), capacity=int(cvu[e]))
    for i in range(n):
        G.add_edge("s", i, capacity=int(cs[i]))
        G.add_edge(i, "t", capacity=int(ct[i]))
    value, (side_s, _) = nx.minimum_cut(G, "s", "t")
    _, flow, y, _ = solve(n, edges, cuv, cvu, cs, ct)
    assert flow == value
    assert energy(y, edges, cuv, cvu, cs, ct) == value
    y_nx = np.zeros(n, dtype=np.uint8)
    y_nx[[v for v in side_s if v != "s"]] = 1
    assert energy(y_nx, edges, cuv, cvu, cs, ct) == value


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.sampled_from([-1000, -300, -60, 0, 60, 300]))
def test_scaled_integer_graphs_cut_exactly_as_unscaled(seed, k):
    """Integer capacities times 2**k are the same problem (every sum is exact): the
    flow must be 2**k times the integer minimum cut, exactly, and the cut's energy
    too, at any scale. An absolute epsilon anywhere in the kernel would show at 2**-1000
    (capacities near 1e-301) or at 2**300."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 9))
    edges, cuv, cvu, cs, ct = random_graph(rng, n, rng.uniform(0.2, 0.9), scale=5.0, integer=True)
    es, _ = brute_force(n, edges, cuv, cvu, cs, ct)
    f = 2.0 ** k
    _, flow, y, _ = solve(n, edges, cuv * f, cvu * f, cs * f, ct * f)
    assert flow == es.min() * f
    assert energy(y, edges, cuv, cvu, cs, ct) == es.min()


@pytest.mark.parametrize("seed", range(6))
def test_float_capacities_match_edmonds_karp(seed):
    rng = np.random.default_rng(200 + seed)
    n = 40
    edges, cuv, cvu, cs, ct = random_graph(rng, n, 0.12, scale=float(rng.choice([1e-3, 1.0, 1e3])))
    ref_flow, ref_y = edmonds_karp(n, edges, cuv, cvu, cs, ct)
    _, flow, y, _ = solve(n, edges, cuv, cvu, cs, ct)
    assert flow == pytest.approx(ref_flow, rel=1e-9, abs=1e-12)
    assert energy(y, edges, cuv, cvu, cs, ct) == pytest.approx(ref_flow, rel=1e-9, abs=1e-12)
    # the kernel's labelling is the source side of the residual graph: the smallest
    # min cut, as Edmonds-Karp's reachable set
    assert np.array_equal(y, ref_y)


def test_no_edges_and_empty_graph():
    cs = np.array([1.0, 0.0, 2.0, 0.0])
    ct = np.array([0.5, 3.0, 2.0, 0.0])
    _, flow, y, _ = solve(4, np.zeros((0, 2), np.int64), [], [], cs, ct)
    assert flow == pytest.approx(0.5 + 0.0 + 2.0 + 0.0)
    assert y.tolist() == [1, 0, 0, 0]       # ties and zero capacities go to the sink side
    g = MaxFlowGraph(np.zeros(1, np.int32), np.zeros(0, np.int32), np.zeros(0, np.int32),
                     np.zeros(0), np.zeros(0), np.zeros(0))
    assert g.maxflow() == 0.0 and g.labels().shape == (0,)


@pytest.mark.parametrize("seed", range(40))
def test_dynamic_min_marginals_match_brute_force(seed):
    rng = np.random.default_rng(300 + seed)
    n = int(rng.integers(1, 9))
    edges, cuv, cvu, cs, ct = random_graph(rng, n, rng.uniform(0.2, 0.9),
                                           scale=float(rng.choice([1e-4, 1.0, 1e4])),
                                           integer=bool(seed % 3 == 0))
    es, ys = brute_force(n, edges, cuv, cvu, cs, ct)
    g, _, y, e_map, out = kernel_min_marginals(n, edges, cuv, cvu, cs, ct)
    delta_e, delta_flow, node_ptr, node_idx, node_sgn, edge_ptr, edge_idx, edge_sgn = out
    tol = 1e-9 * es.max()  # (relative: no floor, which made tiny capacities vacuous)
    for i in range(n):
        want = 1 - y[i]
        best_forced = es[ys[:, i] == want].min()
        assert e_map + delta_e[i] == pytest.approx(best_forced, abs=tol)
        assert delta_flow[i] == pytest.approx(delta_e[i], abs=tol)
        # the recorded labelling attains it and differs from y exactly as recorded
        forced = y.astype(np.int64).copy()
        rows = slice(node_ptr[i], node_ptr[i + 1])
        forced[node_idx[rows]] += node_sgn[rows]
        assert set(np.unique(forced)) <= {0, 1} and forced[i] == want
        assert energy(forced, edges, cuv, cvu, cs, ct) == pytest.approx(best_forced, abs=tol)
        cut_before = (y[edges[:, 0]] != y[edges[:, 1]]).astype(int)
        cut_after = (forced[edges[:, 0]] != forced[edges[:, 1]]).astype(int)
        change = np.zeros(len(edges), dtype=int)
        er = slice(edge_ptr[i], edge_ptr[i + 1])
        change[edge_idx[er]] += edge_sgn[er]
        assert np.array_equal(cut_after - cut_before, change)


def test_state_is_restored_after_max_marginals():
    rng = np.random.default_rng(7)
    n = 30
    edges, cuv, cvu, cs, ct = random_graph(rng, n, 0.2)
    g, flow, y, _ = solve(n, edges, cuv, cvu, cs, ct)
    before = g.residual()
    _, _, _, _, out1 = kernel_min_marginals(n, edges, cuv, cvu, cs, ct)
    first, head, sister, cap, arc_edge = build_csr(n, edges, cuv, cvu)
    g.max_marginals(forcing(n, edges, cuv, cvu, cs, ct), arc_edge, cuv, cvu,
                    np.ascontiguousarray(edges[:, 0], dtype=np.int32), cs - ct, False)
    after = g.residual()
    assert np.array_equal(before[0], after[0]) and np.array_equal(before[1], after[1])
    assert np.array_equal(g.labels(), y)
    # a second pass over the restored state gives the same answer
    out2 = g.max_marginals(forcing(n, edges, cuv, cvu, cs, ct), arc_edge, cuv, cvu,
                           np.ascontiguousarray(edges[:, 0], dtype=np.int32), cs - ct, True)
    assert np.allclose(out1[0], out2[0], rtol=0, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_property_min_cut_and_min_marginals(data):
    n = data.draw(st.integers(1, 7))
    pairs = [(u, v) for u in range(n) for v in range(u + 1, n)]
    chosen = data.draw(st.lists(st.sampled_from(pairs), unique=True) if pairs else st.just([]))
    edges = np.array(chosen, dtype=np.int64).reshape(-1, 2)
    values = st.one_of(st.just(0.0), st.just(1.0), st.floats(0, 1e-9), st.floats(0, 10),
                       st.floats(1e8, 1e9), st.integers(0, 3).map(float))
    E = len(edges)
    cuv = np.array(data.draw(st.lists(values, min_size=E, max_size=E)))
    cvu = np.array(data.draw(st.lists(values, min_size=E, max_size=E)))
    cs = np.array(data.draw(st.lists(values, min_size=n, max_size=n)))
    ct = np.array(data.draw(st.lists(values, min_size=n, max_size=n)))
    es, ys = brute_force(n, edges, cuv, cvu, cs, ct)
    g, flow, y, e_map, out = kernel_min_marginals(n, edges, cuv, cvu, cs, ct)
    tol = 1e-9 * es.max()  # (relative: no floor, which made tiny capacities vacuous)
    assert flow == pytest.approx(es.min(), abs=tol)
    assert e_map == pytest.approx(es.min(), abs=tol)
    for i in range(n):
        assert e_map + out[0][i] == pytest.approx(es[ys[:, i] != y[i]].min(), abs=tol)


def test_ctrl_c_stops_the_max_marginals_between_forced_nodes():
    from svmrank.graph import max_marginals
    """Review 22: the nogil kernel acted on Ctrl-C only when it returned, 20 s later on
    a 100 x 100 grid with strong pairwise weights."""
    import _thread
    import threading
    import time
    side = 100
    idx = np.arange(side * side).reshape(side, side)
    edges = np.r_[np.c_[idx[:, :-1].ravel(), idx[:, 1:].ravel()],
                  np.c_[idx[:-1].ravel(), idx[1:].ravel()]]
    unary = np.random.default_rng(0).normal(size=(side * side, 2))
    timer = threading.Timer(0.3, _thread.interrupt_main)
    start = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            max_marginals(unary, edges, np.full(len(edges), 5.0))
    finally:
        timer.cancel()
    assert time.perf_counter() - start < 5.0
