"""Slow, obviously-correct references for the graph-cut kernel (svmrank._maxflow_fast).

- ``energy``/``brute_force``: the cut energy of every labelling of a tiny graph.
- ``edmonds_karp``: shortest augmenting paths on a dense residual matrix (floats are
  fine: it returns the flow value and the source side of a minimum cut).
- ``build_csr``: the kernel's CSR arc arrays from an edge list.

Convention (as in the kernel): label 1 = source side. A labelling y pays
cap_source[i] when y_i = 0, cap_sink[i] when y_i = 1, and cap_uv[e] when
(y_u, y_v) = (1, 0), cap_vu[e] when (y_u, y_v) = (0, 1).
"""
import itertools
from collections import deque

import numpy as np


def build_csr(n, edges, cap_uv, cap_vu):
    """(first, head, sister, cap, arc_edge) with arcs u->v (cap_uv) and v->u (cap_vu)."""
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    E = len(edges)
    arcs = []                      # (tail, head, cap, edge, partner position in list)
    for e, (u, v) in enumerate(edges):
        arcs.append((u, v, cap_uv[e], e))
        arcs.append((v, u, cap_vu[e], e))
    order = sorted(range(2 * E), key=lambda k: (arcs[k][0], k))
    pos = {k: p for p, k in enumerate(order)}
    first = np.zeros(n + 1, dtype=np.int32)
    for u, _, _, _ in arcs:
        first[u + 1] += 1
    first = np.cumsum(first).astype(np.int32)
    head = np.array([arcs[k][1] for k in order], dtype=np.int32)
    cap = np.array([arcs[k][2] for k in order], dtype=np.float64)
    sister = np.array([pos[k ^ 1] for k in order], dtype=np.int32)
    arc_edge = np.array([arcs[k][3] for k in order], dtype=np.int32)
    return first, head, sister, cap, arc_edge


def energy(y, edges, cap_uv, cap_vu, cap_source, cap_sink):
    """Cut capacity of the labelling y (1 = source side)."""
    y = np.asarray(y, dtype=np.int64)
    total = float(np.sum(np.where(y == 0, cap_source, cap_sink)))
    for e, (u, v) in enumerate(np.asarray(edges).reshape(-1, 2)):
        if y[u] == 1 and y[v] == 0:
            total += cap_uv[e]
        elif y[u] == 0 and y[v] == 1:
            total += cap_vu[e]
    return total


def brute_force(n, edges, cap_uv, cap_vu, cap_source, cap_sink):
    """Energies of all 2**n labellings, shape (2**n,), and the labellings (2**n, n)."""
    ys = np.array(list(itertools.product([0, 1], repeat=n)), dtype=np.int64).reshape(-1, n)
    es = np.array([energy(y, edges, cap_uv, cap_vu, cap_source, cap_sink) for y in ys])
    return es, ys


def edmonds_karp(n, edges, cap_uv, cap_vu, cap_source, cap_sink):
    """Max-flow value and the min-cut labelling (nodes reachable from s get 1)."""
    s, t = n, n + 1
    R = np.zeros((n + 2, n + 2))
    for e, (u, v) in enumerate(np.asarray(edges).reshape(-1, 2)):
        R[u, v] += cap_uv[e]
        R[v, u] += cap_vu[e]
    R[s, :n] += cap_source
    R[:n, t] += cap_sink
    flow = 0.0
    while True:
        prev = np.full(n + 2, -1)
        prev[s] = s
        queue = deque([s])
        while queue and prev[t] < 0:
            x = queue.popleft()
            for z in np.flatnonzero(R[x] > 0):
                if prev[z] < 0:
                    prev[z] = x
                    queue.append(z)
        if prev[t] < 0:
            break
        path, z = [], t
        while z != s:
            path.append((prev[z], z))
            z = prev[z]
        b = min(R[a, c] for a, c in path)
        for a, c in path:
            R[a, c] -= b
            R[c, a] += b
        flow += b
    reach = prev[:n] >= 0
    return flow, reach.astype(np.uint8)


def canonical_edges(edges):
    """Unique (min, max) pairs sorted by (u, v) and each input edge's pair (np.unique)."""
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    lo, hi = edges.min(axis=1), edges.max(axis=1)
    keys, inverse = np.unique(np.stack([lo, hi], axis=1), axis=0, return_inverse=True)
    return keys.reshape(-1, 2), inverse.ravel()


def csr_arcs(n, pairs):
    """Arc e = pairs[e] (u -> v), arc e + E the reverse; stable argsort by tail."""
    E = len(pairs)
    tails = np.concatenate([pairs[:, 0], pairs[:, 1]])
    heads = np.concatenate([pairs[:, 1], pairs[:, 0]])
    order = np.argsort(tails, kind="stable")
    pos = np.empty(2 * E, dtype=np.int64)
    pos[order] = np.arange(2 * E)
    first = np.concatenate([[0], np.cumsum(np.bincount(tails, minlength=n))])
    sister = pos[(order + E) % (2 * E)] if E else np.zeros(0, np.int64)
    return order, first, heads[order], sister, (order % E if E else order)
