"""Boykov-Kolmogorov max-flow and dynamic-cut max-marginals (kernel only).

Written from the published algorithms: Boykov & Kolmogorov, "An experimental
comparison of min-cut/max-flow algorithms for energy minimization in vision" (PAMI
2004): two search trees S (from the source) and T (to the sink) are grown, an
augmenting path is found where they touch, flow is pushed, and the nodes cut off
from their tree (orphans) are re-adopted or freed. Kohli & Torr, "Dynamic graph
cuts" (PAMI 2007) and "Measuring uncertainty in graph cut solutions" (ECCV 2006):
after one cut, a max-marginal is obtained by changing one node's terminal
capacities in the residual graph, re-using both search trees, re-augmenting, and
restoring the previous state.

Conventions. Nodes 0..n-1; label 1 = source side (S), label 0 = sink side.
Terminal capacities are kept as one net residual per node, ``tr[i]`` = residual of
s->i minus residual of i->t (at most one of the two is non-zero; flow sent s->i->t
directly is counted into the flow at once). Arcs are stored CSR-like by tail node,
each with its head, residual capacity and the index of its reverse arc (sister).
No validation happens here: the Python layer (svmrank.graph) checks the input.
"""
import numpy as np

cimport numpy as cnp
from cpython.exc cimport PyErr_CheckSignals
from libc.stdlib cimport free, malloc, realloc

cnp.import_array()

cdef enum:
    # tree membership
    FREE = 0
    SRC = 1
    SNK = 2
    # special parent values (parent >= 0 is the arc from the node to its parent)
    TERMINAL = -1
    ORPHAN = -2
    NOPARENT = -3


cdef struct BK:
    int n
    int m
    const int* first      # (n + 1) arc offsets by tail node
    const int* head       # (m,) head node of each arc
    const int* sister     # (m,) index of the reverse arc
    double* rcap          # (m,) residual capacities
    double* tr            # (n,) net terminal residual
    signed char* tree     # (n,)
    int* parent           # (n,)
    long long* ts         # (n,) time stamp of dist
    int* dist             # (n,) distance to the terminal along parents
    char* in_active       # (n,)
    int* aq               # active FIFO, ring of n + 1
    int aq_head
    int aq_tail
    int* oq               # orphan FIFO, ring of n + 1
    int oq_head
    int oq_tail
    long long time
    double flow
    # journal of first-touch values (dynamic phase only)
    int journaling
    int stamp
    int* node_stamp
    int* arc_stamp
    int jn_len
    int* jn_idx
    signed char* jn_tree
    int* jn_parent
    long long* jn_ts
    int* jn_dist
    double* jn_tr
    int ja_len
    int* ja_idx
    double* ja_rcap


cdef inline void save_node(BK* g, int v) noexcept nogil:
    cdef int k
    if g.journaling and g.node_stamp[v] != g.stamp:
        g.node_stamp[v] = g.stamp
        k = g.jn_len
        g.jn_idx[k] = v
        g.jn_tree[k] = g.tree[v]
        g.jn_parent[k] = g.parent[v]
        g.jn_ts[k] = g.ts[v]
        g.jn_dist[k] = g.dist[v]
        g.jn_tr[k] = g.tr[v]
        g.jn_len = k + 1


cdef inline void save_arc(BK* g, int a) noexcept nogil:
    cdef int k
    if g.journaling and g.arc_stamp[a] != g.stamp:
        g.arc_stamp[a] = g.stamp
        k = g.ja_len
        g.ja_idx[k] = a
        g.ja_rcap[k] = g.rcap[a]
        g.ja_len = k + 1


cdef inline void set_rcap(BK* g, int a, double v) noexcept nogil:
    save_arc(g, a)
    g.rcap[a] = v


cdef inline void push_active(BK* g, int v) noexcept nogil:
    if not g.in_active[v]:
        g.in_active[v] = 1
        g.aq[g.aq_tail] = v
        g.aq_tail += 1
        if g.aq_tail == g.n + 1:
            g.aq_tail = 0


cdef inline int pop_active(BK* g) noexcept nogil:
    cdef int v
    if g.aq_head == g.aq_tail:
        return -1
    v = g.aq[g.aq_head]
    g.aq_head += 1
    if g.aq_head == g.n + 1:
        g.aq_head = 0
    g.in_active[v] = 0
    return v


cdef inline void make_orphan(BK* g, int v) noexcept nogil:
    save_node(g, v)
    g.parent[v] = ORPHAN
    g.oq[g.oq_tail] = v
    g.oq_tail += 1
    if g.oq_tail == g.n + 1:
        g.oq_tail = 0


cdef void augment(BK* g, int s_end, int t_end, int mid) noexcept nogil:
    """Push the bottleneck along s -> ... -> s_end -(mid)-> t_end -> ... -> t."""
    cdef double b = g.rcap[mid]
    cdef int x, pa
    # bottleneck on the source side (arcs parent -> child carry the flow)
    x = s_end
    while g.parent[x] != TERMINAL:
        pa = g.parent[x]
        if g.rcap[g.sister[pa]] < b:
            b = g.rcap[g.sister[pa]]
        x = g.head[pa]
    if g.tr[x] < b:
        b = g.tr[x]
    # bottleneck on the sink side (arcs child -> parent carry the flow)
    x = t_end
    while g.parent[x] != TERMINAL:
        pa = g.parent[x]
        if g.rcap[pa] < b:
            b = g.rcap[pa]
        x = g.head[pa]
    if -g.tr[x] < b:
        b = -g.tr[x]
    # push
    set_rcap(g, mid, g.rcap[mid] - b)
    set_rcap(g, g.sister[mid], g.rcap[g.sister[mid]] + b)
    x = s_end
    while g.parent[x] != TERMINAL:
        pa = g.parent[x]
        set_rcap(g, pa, g.rcap[pa] + b)
        set_rcap(g, g.sister[pa], g.rcap[g.sister[pa]] - b)
        if g.rcap[g.sister[pa]] <= 0:
            make_orphan(g, x)
        x = g.head[pa]
    save_node(g, x)
    g.tr[x] -= b
    if g.tr[x] <= 0:
        make_orphan(g, x)
    x = t_end
    while g.parent[x] != TERMINAL:
        pa = g.parent[x]
        set_rcap(g, pa, g.rcap[pa] - b)
        set_rcap(g, g.sister[pa], g.rcap[g.sister[pa]] + b)
        if g.rcap[pa] <= 0:
            make_orphan(g, x)
        x = g.head[pa]
    save_node(g, x)
    g.tr[x] += b
    if g.tr[x] >= 0:
        make_orphan(g, x)
    g.flow += b


cdef int origin_distance(BK* g, int q) noexcept nogil:
    """Distance from q to its tree's terminal along parents, or -1 if the chain
    ends in an orphan. Marks the walked chain with the current time."""
    cdef int x = q, pa, d = 0
    while True:
        if g.ts[x] == g.time:
            d += g.dist[x]
            break
        pa = g.parent[x]
        d += 1
        if pa == TERMINAL:
            save_node(g, x)
            g.ts[x] = g.time
            g.dist[x] = 1
            break
        if pa < 0:   # ORPHAN (or NOPARENT, which cannot occur inside a tree)
            return -1
        x = g.head[pa]
    # mark the chain so that later walks stop early (BK 2004, adoption heuristic)
    x = q
    pa = d
    while g.ts[x] != g.time:
        save_node(g, x)
        g.ts[x] = g.time
        g.dist[x] = pa
        pa -= 1
        x = g.head[g.parent[x]]
    return d


cdef void adopt(BK* g) noexcept nogil:
    cdef int p, a, q, k, kend, best_a, best_d, d
    cdef signed char t
    while g.oq_head != g.oq_tail:
        p = g.oq[g.oq_head]
        g.oq_head += 1
        if g.oq_head == g.n + 1:
            g.oq_head = 0
        t = g.tree[p]
        best_a = -1
        best_d = 2147483647
        kend = g.first[p + 1]
        for k in range(g.first[p], kend):
            q = g.head[k]
            if g.tree[q] != t:
                continue
            # the arc to the new parent must carry flow towards p (S) or from p (T)
            if t == SRC:
                if g.rcap[g.sister[k]] <= 0:
                    continue
            elif g.rcap[k] <= 0:
                continue
            d = origin_distance(g, q)
            if d >= 0 and d < best_d:
                best_d = d
                best_a = k
        save_node(g, p)
        if best_a >= 0:
            g.parent[p] = best_a
            g.ts[p] = g.time
            g.dist[p] = best_d + 1
            continue
        # no parent: p becomes free; its children become orphans and neighbours
        # that could reach it become active again
        for k in range(g.first[p], kend):
            q = g.head[k]
            if g.tree[q] != t:
                continue
            if t == SRC:
                if g.rcap[g.sister[k]] > 0:
                    push_active(g, q)
            elif g.rcap[k] > 0:
                push_active(g, q)
            a = g.parent[q]
            if a >= 0 and g.head[a] == p:
                make_orphan(g, q)
        g.tree[p] = FREE
        g.parent[p] = NOPARENT


cdef void run(BK* g) noexcept nogil:
    """Grow, augment, adopt until no active node is left (BK 2004, Sec. 3)."""
    cdef int p = -1, k = 0, kend, a, q, mid, s_end, t_end
    cdef signed char tp
    while True:
        if p < 0 or g.tree[p] == FREE:
            p = pop_active(g)
            if p < 0:
                break
            if g.tree[p] == FREE:
                p = -1
                continue
            k = g.first[p]
        tp = g.tree[p]
        kend = g.first[p + 1]
        mid = -1
        while k < kend:
            q = g.head[k]
            if tp == SRC:
                if g.rcap[k] > 0:
                    if g.tree[q] == FREE:
                        save_node(g, q)
                        g.tree[q] = SRC
                        g.parent[q] = g.sister[k]
                        g.ts[q] = g.ts[p]
                        g.dist[q] = g.dist[p] + 1
                        push_active(g, q)
                    elif g.tree[q] == SNK:
                        mid = k
                        s_end = p
                        t_end = q
                        break
            else:
                a = g.sister[k]
                if g.rcap[a] > 0:
                    if g.tree[q] == FREE:
                        save_node(g, q)
                        g.tree[q] = SNK
                        g.parent[q] = a
                        g.ts[q] = g.ts[p]
                        g.dist[q] = g.dist[p] + 1
                        push_active(g, q)
                    elif g.tree[q] == SRC:
                        mid = a
                        s_end = q
                        t_end = p
                        break
            k += 1
        if mid < 0:
            p = -1          # p is passive now
            continue
        g.time += 1
        augment(g, s_end, t_end, mid)
        adopt(g)
        # keep scanning p from arc k (re-checked) if p is still in its tree; if it
        # was freed, the loop pops the next active node


cdef class MaxFlowGraph:
    """A max-flow problem on n nodes with CSR arcs, solved in place.

    Parameters
    ----------
    first : int32 (n + 1,), head, sister : int32 (m,), cap : float64 (m,)
        Arcs by tail node; ``sister[a]`` is the reverse arc of ``a``.
    cap_source, cap_sink : float64 (n,)
        Terminal capacities (non-negative).
    """
    cdef BK g
    cdef object _arrays          # keeps the numpy buffers alive
    cdef readonly double flow0   # flow sent s -> i -> t directly
    cdef bint solved

    def __cinit__(self):
        self.g.jn_idx = NULL
        self.g.jn_tree = NULL
        self.g.jn_parent = NULL
        self.g.jn_ts = NULL
        self.g.jn_dist = NULL
        self.g.jn_tr = NULL
        self.g.ja_idx = NULL
        self.g.ja_rcap = NULL

    def __init__(self, first, head, sister, cap, cap_source, cap_sink):
        cdef int n = len(first) - 1
        cdef int m = len(head)
        cdef int i
        first = np.ascontiguousarray(first, dtype=np.int32)
        head = np.ascontiguousarray(head, dtype=np.int32)
        sister = np.ascontiguousarray(sister, dtype=np.int32)
        rcap = np.array(cap, dtype=np.float64, copy=True)
        cs = np.ascontiguousarray(cap_source, dtype=np.float64)
        ct = np.ascontiguousarray(cap_sink, dtype=np.float64)
        tr = cs - ct
        self.flow0 = float(np.minimum(cs, ct).sum())
        tree = np.zeros(n, dtype=np.int8)
        parent = np.full(n, NOPARENT, dtype=np.int32)
        ts = np.zeros(n, dtype=np.int64)
        dist = np.zeros(n, dtype=np.int32)
        in_active = np.zeros(n, dtype=np.int8)
        aq = np.zeros(n + 1, dtype=np.int32)
        oq = np.zeros(n + 1, dtype=np.int32)
        node_stamp = np.zeros(n, dtype=np.int32)
        arc_stamp = np.zeros(max(m, 1), dtype=np.int32)
        self._arrays = (first, head, sister, rcap, tr, tree, parent, ts, dist, in_active,
                        aq, oq, node_stamp, arc_stamp)
        self.g.n = n
        self.g.m = m
        self.g.first = <const int*> cnp.PyArray_DATA(first)
        self.g.head = <const int*> cnp.PyArray_DATA(head)
        self.g.sister = <const int*> cnp.PyArray_DATA(sister)
        self.g.rcap = <double*> cnp.PyArray_DATA(rcap)
        self.g.tr = <double*> cnp.PyArray_DATA(tr)
        self.g.tree = <signed char*> cnp.PyArray_DATA(tree)
        self.g.parent = <int*> cnp.PyArray_DATA(parent)
        self.g.ts = <long long*> cnp.PyArray_DATA(ts)
        self.g.dist = <int*> cnp.PyArray_DATA(dist)
        self.g.in_active = <char*> cnp.PyArray_DATA(in_active)
        self.g.aq = <int*> cnp.PyArray_DATA(aq)
        self.g.oq = <int*> cnp.PyArray_DATA(oq)
        self.g.node_stamp = <int*> cnp.PyArray_DATA(node_stamp)
        self.g.arc_stamp = <int*> cnp.PyArray_DATA(arc_stamp)
        self.g.aq_head = self.g.aq_tail = 0
        self.g.oq_head = self.g.oq_tail = 0
        self.g.time = 0
        self.g.flow = 0.0
        self.g.journaling = 0
        self.g.stamp = 0
        self.g.jn_len = self.g.ja_len = 0
        self.solved = False
        with nogil:
            for i in range(n):
                if self.g.tr[i] > 0:
                    self.g.tree[i] = SRC
                elif self.g.tr[i] < 0:
                    self.g.tree[i] = SNK
                else:
                    continue
                self.g.parent[i] = TERMINAL
                self.g.dist[i] = 1
                push_active(&self.g, i)

    def __dealloc__(self):
        free(self.g.jn_idx)
        free(self.g.jn_tree)
        free(self.g.jn_parent)
        free(self.g.jn_ts)
        free(self.g.jn_dist)
        free(self.g.jn_tr)
        free(self.g.ja_idx)
        free(self.g.ja_rcap)

    def maxflow(self):
        """Run BK to completion; return the max-flow value (= min-cut capacity)."""
        with nogil:
            run(&self.g)
        self.solved = True
        return self.g.flow + self.flow0

    def labels(self):
        """Min-cut labelling: 1 for nodes in the source tree, 0 otherwise (uint8)."""
        return (np.asarray(self._arrays[5]) == SRC).astype(np.uint8)

    def residual(self):
        """Copies of the arc residuals and net terminal residuals (for tests)."""
        return np.array(self._arrays[3]), np.array(self._arrays[4])

    def max_marginals(self, const double[::1] force, const int[::1] arc_edge, const double[::1] cap_uv,
                      const double[::1] cap_vu, const int[::1] edge_u,
                      const double[::1] gain, bint record):
        """Energy increase of forcing each node to the label opposite its min-cut label.

        Parameters
        ----------
        force : (n,) node-local forcing constants K_i, larger than any energy
            change a single node can cause (|gain_i| + incident capacities).
        arc_edge : (m,) edge id of each arc; cap_uv, cap_vu, edge_u : per edge the
            cost of (y_u, y_v) = (1, 0), of (0, 1), and the u end-point.
        gain : (n,) cost of label 0 minus cost of label 1 (= cap_source - cap_sink).
        record : also return the changed nodes and edges of every forced labelling.

        Returns
        -------
        delta_e : (n,) exact energy increase of the forced labelling (from labels).
        delta_flow : (n,) the same from the flow value (a consistency check).
        node_ptr, node_idx, node_sgn, edge_ptr, edge_idx, edge_sgn : CSR rows of the
            label changes (+1: 0 -> 1) and cut changes (+1: edge becomes cut) per
            forced node; empty unless ``record``.
        """
        if not self.solved:
            self.maxflow()
        cdef BK* g = &self.g
        cdef int n = g.n, m = g.m
        cdef int n_edges = cap_uv.shape[0]
        cdef int i, j, k, v, l, e, nl, nv, ol, vl
        cdef double old_tr, new_tr, flow_before, base_adj, de
        cdef signed char told
        map_arr = self.labels()
        cdef unsigned char[::1] map_label = map_arr
        delta_e_arr = np.zeros(n, dtype=np.float64)
        delta_f_arr = np.zeros(n, dtype=np.float64)
        cdef double[::1] delta_e = delta_e_arr
        cdef double[::1] delta_f = delta_f_arr
        edge_stamp_arr = np.zeros(max(n_edges, 1), dtype=np.int32)
        cdef int[::1] edge_stamp = edge_stamp_arr
        changed_arr = np.zeros(n, dtype=np.int8)
        cdef signed char[::1] changed = changed_arr
        node_ptr_arr = np.zeros(n + 1, dtype=np.int64)
        edge_ptr_arr = np.zeros(n + 1, dtype=np.int64)
        cdef long long[::1] node_ptr = node_ptr_arr
        cdef long long[::1] edge_ptr = edge_ptr_arr
        # growable output buffers (record only)
        cdef long long ncap = 16, ecap = 16, nlen = 0, elen = 0
        cdef int* nidx = NULL
        cdef signed char* nsgn = NULL
        cdef int* eidx = NULL
        cdef signed char* esgn = NULL
        cdef bint oom = False, stop = False
        cdef object pending = None  # (Ctrl-C's exception, raised after the buffers are freed)
        cdef void* tmp
        # journal buffers: each node / arc is saved at most once per forced node
        if g.jn_idx == NULL:
            g.jn_idx = <int*> malloc(max(n, 1) * sizeof(int))
            g.jn_tree = <signed char*> malloc(max(n, 1) * sizeof(signed char))
            g.jn_parent = <int*> malloc(max(n, 1) * sizeof(int))
            g.jn_ts = <long long*> malloc(max(n, 1) * sizeof(long long))
            g.jn_dist = <int*> malloc(max(n, 1) * sizeof(int))
            g.jn_tr = <double*> malloc(max(n, 1) * sizeof(double))
            g.ja_idx = <int*> malloc(max(m, 1) * sizeof(int))
            g.ja_rcap = <double*> malloc(max(m, 1) * sizeof(double))
            if (g.jn_idx == NULL or g.jn_tree == NULL or g.jn_parent == NULL or g.jn_ts == NULL
                    or g.jn_dist == NULL or g.jn_tr == NULL or g.ja_idx == NULL or g.ja_rcap == NULL):
                raise MemoryError("max_marginals: cannot allocate the journal")
        if record:
            nidx = <int*> malloc(ncap * sizeof(int))
            nsgn = <signed char*> malloc(ncap * sizeof(signed char))
            eidx = <int*> malloc(ecap * sizeof(int))
            esgn = <signed char*> malloc(ecap * sizeof(signed char))
            if nidx == NULL or nsgn == NULL or eidx == NULL or esgn == NULL:
                free(nidx); free(nsgn); free(eidx); free(esgn)
                raise MemoryError("max_marginals: cannot allocate the labelling buffers")
        with nogil:
            for i in range(n):
                if (i & 63) == 63:  # (Ctrl-C between forced nodes: the state is the first cut's)
                    with gil:
                        try:
                            PyErr_CheckSignals()
                        except BaseException as exc:
                            pending, stop = exc, True
                    if stop:
                        break
                # ---- force node i to the label opposite its min-cut label ------
                g.stamp += 1
                g.journaling = 1
                g.jn_len = 0
                g.ja_len = 0
                flow_before = g.flow
                save_node(g, i)
                old_tr = g.tr[i]
                if map_label[i]:
                    new_tr = old_tr - force[i]     # extra sink capacity K_i
                else:
                    new_tr = old_tr + force[i]     # extra source capacity K_i
                # flow bookkeeping of a terminal change (Kohli & Torr reparametrisation):
                # the net residual changes by delta and min(tr, 0) tracks the flow
                # that goes straight to the sink
                base_adj = (new_tr if new_tr < 0 else 0.0) - (old_tr if old_tr < 0 else 0.0)
                g.tr[i] = new_tr
                told = g.tree[i]
                if told != FREE:
                    for k in range(g.first[i], g.first[i + 1]):
                        v = g.head[k]
                        if g.tree[v] == told and g.parent[v] >= 0 and g.head[g.parent[v]] == i:
                            make_orphan(g, v)
                g.time += 1
                g.tree[i] = SRC if new_tr > 0 else SNK
                g.parent[i] = TERMINAL
                g.ts[i] = g.time
                g.dist[i] = 1
                push_active(g, i)
                adopt(g)
                run(g)
                # energy(forced cut) - energy(min cut), from the flow ...
                de = g.flow - flow_before + base_adj
                if map_label[i]:
                    # extra sink capacity K = (source capacity - K) + K on both
                    # terminal arcs, and the latter adds K to every cut
                    de += force[i]
                delta_f[i] = de
                # ... and exactly, from the labels that changed
                de = 0.0
                for j in range(g.jn_len):
                    v = g.jn_idx[j]
                    nl = 1 if g.tree[v] == SRC else 0
                    if nl != map_label[v]:
                        changed[v] = 1
                for j in range(g.jn_len):
                    v = g.jn_idx[j]
                    if not changed[v]:
                        continue
                    nl = 1 - map_label[v]
                    de += -gain[v] if nl == 1 else gain[v]
                    if record:
                        if nlen == ncap:
                            ncap *= 2
                            tmp = realloc(nidx, ncap * sizeof(int))
                            if tmp == NULL:
                                oom = True
                                break
                            nidx = <int*> tmp
                            tmp = realloc(nsgn, ncap * sizeof(signed char))
                            if tmp == NULL:
                                oom = True
                                break
                            nsgn = <signed char*> tmp
                        nidx[nlen] = v
                        nsgn[nlen] = 1 if nl == 1 else -1
                        nlen += 1
                    for k in range(g.first[v], g.first[v + 1]):
                        e = arc_edge[k]
                        if edge_stamp[e] == g.stamp:
                            continue
                        edge_stamp[e] = g.stamp
                        l = g.head[k]
                        if edge_u[e] == v:
                            ol = map_label[v] * 2 + map_label[l]
                            vl = nl * 2 + (1 - map_label[l] if changed[l] else map_label[l])
                        else:
                            ol = map_label[l] * 2 + map_label[v]
                            vl = (1 - map_label[l] if changed[l] else map_label[l]) * 2 + nl
                        # pair costs: (1, 0) -> cap_uv, (0, 1) -> cap_vu
                        if ol == 2:
                            de -= cap_uv[e]
                        elif ol == 1:
                            de -= cap_vu[e]
                        if vl == 2:
                            de += cap_uv[e]
                        elif vl == 1:
                            de += cap_vu[e]
                        if record and (ol == 1 or ol == 2) != (vl == 1 or vl == 2):
                            if elen == ecap:
                                ecap *= 2
                                tmp = realloc(eidx, ecap * sizeof(int))
                                if tmp == NULL:
                                    oom = True
                                    break
                                eidx = <int*> tmp
                                tmp = realloc(esgn, ecap * sizeof(signed char))
                                if tmp == NULL:
                                    oom = True
                                    break
                                esgn = <signed char*> tmp
                            eidx[elen] = e
                            esgn[elen] = 1 if (vl == 1 or vl == 2) else -1
                            elen += 1
                    if oom:
                        break
                delta_e[i] = de
                node_ptr[i + 1] = nlen
                edge_ptr[i + 1] = elen
                for j in range(g.jn_len):
                    changed[g.jn_idx[j]] = 0
                # ---- restore the state of the first cut ----------------------
                for j in range(g.ja_len):
                    g.rcap[g.ja_idx[j]] = g.ja_rcap[j]
                for j in range(g.jn_len):
                    v = g.jn_idx[j]
                    g.tree[v] = g.jn_tree[j]
                    g.parent[v] = g.jn_parent[j]
                    g.ts[v] = g.jn_ts[j]
                    g.dist[v] = g.jn_dist[j]
                    g.tr[v] = g.jn_tr[j]
                g.flow = flow_before
                g.journaling = 0
                if oom:
                    break
        if oom or stop:
            free(nidx); free(nsgn); free(eidx); free(esgn)
            if stop:
                raise pending
            raise MemoryError("max_marginals: out of memory recording the labellings")
        if record:
            node_idx = np.array(<int[:nlen]> nidx, dtype=np.int32) if nlen else np.zeros(0, np.int32)
            node_sgn = np.array(<signed char[:nlen]> nsgn, dtype=np.int8) if nlen else np.zeros(0, np.int8)
            edge_idx = np.array(<int[:elen]> eidx, dtype=np.int32) if elen else np.zeros(0, np.int32)
            edge_sgn = np.array(<signed char[:elen]> esgn, dtype=np.int8) if elen else np.zeros(0, np.int8)
            free(nidx); free(nsgn); free(eidx); free(esgn)
        else:
            node_idx = np.zeros(0, np.int32)
            node_sgn = np.zeros(0, np.int8)
            edge_idx = np.zeros(0, np.int32)
            edge_sgn = np.zeros(0, np.int8)
        return (delta_e_arr, delta_f_arr, node_ptr_arr, node_idx, node_sgn,
                edge_ptr_arr, edge_idx, edge_sgn)


# ------------------------------------------------------------------ graph building
cdef void counting_sort(const long long* key, const long long* items, long long n_items,
                        long long n_keys, long long* count, long long* out) noexcept nogil:
    """Stable sort of ``items`` by key[item] in 0..n_keys-1 (count: n_keys + 1 zeros)."""
    cdef long long k, c
    for k in range(n_items):
        count[key[items[k]] + 1] += 1
    for c in range(n_keys):
        count[c + 1] += count[c]
    for k in range(n_items):
        out[count[key[items[k]]]] = items[k]
        count[key[items[k]]] += 1


def canonical_edges(long long n, const long long[:, ::1] edges):
    """Merge an (E, 2) edge list into unique pairs (u < v) sorted by (u, v).

    Two stable counting sorts (by v, then by u): O(n + E). Returns (pairs (E', 2),
    inverse (E,)) with ``pairs[inverse[k]]`` the pair of input edge k."""
    cdef long long E = edges.shape[0], k, e, p = -1, prev_lo = -1, prev_hi = -1
    lo_a = np.empty(E, dtype=np.int64)
    hi_a = np.empty(E, dtype=np.int64)
    idx = np.arange(E, dtype=np.int64)
    by_hi = np.empty(E, dtype=np.int64)
    by_both = np.empty(E, dtype=np.int64)
    count = np.zeros(n + 1, dtype=np.int64)
    inverse = np.empty(E, dtype=np.int64)
    pairs = np.empty((E, 2), dtype=np.int64)
    cdef long long[::1] lo = lo_a, hi = hi_a, ix = idx, s1 = by_hi, s2 = by_both, cnt = count
    cdef long long[::1] inv = inverse
    cdef long long[:, ::1] pr = pairs
    with nogil:
        for k in range(E):
            lo[k] = min(edges[k, 0], edges[k, 1])
            hi[k] = max(edges[k, 0], edges[k, 1])
        if E:
            counting_sort(&hi[0], &ix[0], E, n, &cnt[0], &s1[0])
            for k in range(n + 1):
                cnt[k] = 0
            counting_sort(&lo[0], &s1[0], E, n, &cnt[0], &s2[0])
        for k in range(E):
            e = s2[k]
            if lo[e] != prev_lo or hi[e] != prev_hi:
                p += 1
                prev_lo = lo[e]
                prev_hi = hi[e]
                pr[p, 0] = prev_lo
                pr[p, 1] = prev_hi
            inv[e] = p
    return pairs[:p + 1], inverse


def csr_arcs(long long n, const long long[:, ::1] pairs):
    """CSR arcs of undirected pairs: arc e goes u -> v, arc e + E goes v -> u; arcs
    are ordered by tail (stably). Returns (order, first, head, sister, arc_edge):
    position k holds arc order[k], first (n + 1,) the offsets by tail node."""
    cdef long long E = pairs.shape[0], m = 2 * E, k, a
    tails_a = np.empty(m, dtype=np.int64)
    heads_a = np.empty(m, dtype=np.int64)
    order_a = np.empty(m, dtype=np.int64)
    count_a = np.zeros(n + 1, dtype=np.int64)
    pos_a = np.empty(m, dtype=np.int64)
    first_a = np.zeros(n + 1, dtype=np.int32)
    head_a = np.empty(m, dtype=np.int32)
    sister_a = np.empty(m, dtype=np.int32)
    edge_a = np.empty(m, dtype=np.int32)
    idx = np.arange(m, dtype=np.int64)
    cdef long long[::1] tails = tails_a, heads = heads_a, order = order_a, cnt = count_a
    cdef long long[::1] pos = pos_a, ix = idx
    cdef int[::1] first = first_a, head = head_a, sister = sister_a, arc_edge = edge_a
    with nogil:
        for k in range(E):
            tails[k] = pairs[k, 0]
            heads[k] = pairs[k, 1]
            tails[k + E] = pairs[k, 1]
            heads[k + E] = pairs[k, 0]
        if m:
            counting_sort(&tails[0], &ix[0], m, n, &cnt[0], &order[0])
        for k in range(n + 1):
            first[k] = <int>cnt[k - 1] if k else 0
        for k in range(m):
            pos[order[k]] = k
        for k in range(m):
            a = order[k]
            head[k] = <int>heads[a]
            sister[k] = <int>pos[(a + E) % m]
            arc_edge[k] = <int>(a % E)
    return order_a, first_a, head_a, sister_a, edge_a
