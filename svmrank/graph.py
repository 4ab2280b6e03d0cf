"""Pairwise edges between samples, and exact MAP labellings and max-marginals of
binary pairwise models by graph cuts.

The model scores a labelling y ∈ {0, 1}ⁿ as

    score(y) = Σ_i unary[i, y_i] − Σ_{(u, v) ∈ E} weight_uv · [y_u ≠ y_v],   weight ≥ 0,

which is maximised exactly by one minimum s-t cut (the energy −score is submodular).
The cut is our own Boykov-Kolmogorov max-flow (``svmrank._maxflow_fast``); the
max-marginals of every node come from dynamic graph cuts (Kohli & Torr): the residual
graph and search trees of the first cut are reused, only node i's terminal capacities
change (by a node-local constant larger than its unary gap plus its incident weights)
to force the label opposite to its MAP label, the flow is re-augmented, and the state
is restored from a journal of the values the re-augmentation changed.

Edges are an (E, 2) integer array of 0-based row numbers. Self loops, rows out of
range, negative or non-finite weights are errors. Duplicate edges ((u, v) twice, or
(u, v) and (v, u)) are merged: the graph-cut functions add their weights (the same
energy), the edge builders keep one copy.
"""
import re
from collections import namedtuple
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from . import _maxflow_fast
from ._maxflow_fast import MaxFlowGraph
from ._validation import is_missing, parse_small_int
from .exceptions import InputFormatError

__all__ = ["MAX_GROUP_EDGES", "edges_from_file", "edges_from_groups", "edges_from_networkx", "group_keys", "check_edges",
           "subgraph_edges",
           "max_score_labelling", "max_marginals", "labelling_score"]


# --------------------------------------------------------------------------- edges
#: Most edges :func:`edges_from_groups` builds (Σ k(k−1)/2 over groups of k samples):
#: 10 million edges take 160 MB as row pairs and far more in the learners' max-flow
#: graphs; one group of 4,473 samples exceeds it. Denser links: an explicit edge list.
MAX_GROUP_EDGES = 10_000_000

def check_edges(edges, n_samples, name="edges"):
    """Validate an edge array and return it as a contiguous (E, 2) int64 array.

    Parameters
    ----------
    edges : array-like of int, shape (E, 2)
        0-based row numbers; an empty list means no edges.
    n_samples : int
        Number of rows the edges may name.
    name : str
        Argument name used in error messages.
    """
    arr = np.asarray(edges)
    if arr.size == 0 and arr.ndim < 2:  # [] or an empty 1-d array: no edges
        return np.zeros((0, 2), dtype=np.int64)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"{name}: expected an (E, 2) array of row numbers, got shape {arr.shape}")
    if arr.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
            raise ValueError(f"{name}: row numbers must be integers")
    elif arr.dtype.kind not in "iu":
        raise ValueError(f"{name}: row numbers must be integers, got dtype {arr.dtype}")
    if arr.max() >= n_samples or arr.min() < 0:  # (before the cast: uint64 and floats wrap)
        bad = np.flatnonzero((arr < 0).any(axis=1) | (arr >= n_samples).any(axis=1))
        show = (lambda x: f"{x:g}") if arr.dtype.kind == "f" else str
        u, v = (show(x) for x in arr[bad[0]].tolist())
        raise ValueError(f"{name}: edge {bad[0]} ({u}, {v}) names a row outside [0, {n_samples})")
    arr = np.ascontiguousarray(arr, dtype=np.int64)
    loops = np.flatnonzero(arr[:, 0] == arr[:, 1])
    if loops.size:
        raise ValueError(f"{name}: edge {loops[0]} is a self loop on row {arr[loops[0], 0]}")
    return arr


def subgraph_edges(edges, rows):
    """The edges between the given rows, renumbered as rows of ``X[rows]``.

    Use it to split a graph with its samples: ``X[train]`` goes with
    ``subgraph_edges(edges, train)``; edges with an end outside ``rows`` are dropped.

    Parameters
    ----------
    edges : array-like of int, shape (E, 2)
        0-based row numbers of the full data.
    rows : array-like of int (distinct row numbers) or boolean mask
        The rows kept, in their new order.

    Returns
    -------
    ndarray of int64, shape (E', 2)
        Each kept edge (u, v) as (position of u in rows, position of v in rows), in the
        input order of the edges.
    """
    rows = np.asarray(rows)
    if rows.dtype == bool:
        rows = np.flatnonzero(rows)
    elif rows.size and rows.dtype.kind not in "iu":
        raise ValueError(f"rows: expected row numbers or a boolean mask, got dtype {rows.dtype}")
    rows = rows.astype(np.int64).ravel()
    if rows.size and rows.min() < 0:
        raise ValueError(f"rows: row numbers must be >= 0, got {rows.min()}")
    if np.unique(rows).size != rows.size:
        raise ValueError("rows: a row number is repeated")
    arr = np.asarray(edges)
    n = int(max(rows.max() + 1 if rows.size else 0, arr.max() + 1 if arr.size else 0))
    edges = check_edges(edges, n)
    position = np.full(n, -1, dtype=np.int64)
    position[rows] = np.arange(rows.size)
    mapped = position[edges]
    return np.ascontiguousarray(mapped[(mapped >= 0).all(axis=1)])


def canonical_edges(edges, n=None):
    """Edges as (min, max) pairs, unique and sorted, plus the map from input rows
    (counting sorts in the kernel, O(n + E)). Without n the rows are renumbered first
    (order kept), so that a large row number costs no memory."""
    edges = np.ascontiguousarray(edges, dtype=np.int64).reshape(-1, 2)
    if n is not None:
        return _maxflow_fast.canonical_edges(n, edges)
    rows, compact = np.unique(edges, return_inverse=True)
    compact = np.ascontiguousarray(compact.reshape(-1, 2), dtype=np.int64)
    pairs, inverse = _maxflow_fast.canonical_edges(len(rows), compact)
    return rows[pairs], inverse


def _int64_edges(rows, what):
    try:
        return np.array(rows, dtype=np.int64).reshape(-1, 2)
    except OverflowError:
        raise ValueError(f"{what}: row numbers must be below 2**63") from None


def edges_from_file(path, n_samples=None):
    """Read an undirected edge list: one ``u v`` pair of 0-based row numbers per line.

    Blank lines and ``#`` comments are skipped; duplicates (also reversed) are merged.

    Parameters
    ----------
    path : str or Path
    n_samples : int, optional
        When given, rows must lie in ``[0, n_samples)``.

    Returns
    -------
    ndarray of int64, shape (E, 2), with u < v, sorted.

    Raises
    ------
    InputFormatError
        Naming the file and the 1-based line of a malformed line, a negative or out
        of range row, or a self loop.
    """
    path = Path(path)
    rows = []
    # a byte order mark is skipped; bytes that are not UTF-8 can only fail as numbers
    with open(path, encoding="utf-8-sig", errors="surrogateescape") as fh:
        for lineno, line in enumerate(fh, 1):
            text = line.split("#", 1)[0].strip()
            if not text:
                continue
            parts = text.split()
            if len(parts) != 2:
                raise InputFormatError(f"{path}:{lineno}: expected two row numbers 'u v', got {text!r}")
            if not all(re.fullmatch(r"[+-]?[0-9]+", p) for p in parts):
                raise InputFormatError(f"{path}:{lineno}: row numbers must be integers, got {text!r}")
            limit = f"[0, {n_samples})" if n_samples is not None else "non-negative"
            u, v = parse_small_int(parts[0]), parse_small_int(parts[1])
            if u is None or v is None:
                shown = text if len(text) <= 40 else text[:40] + "..."
                raise InputFormatError(f"{path}:{lineno}: row numbers must be {limit}, got a "
                                       f"number of more than 18 digits in {shown!r}")
            if u < 0 or v < 0 or (n_samples is not None and (u >= n_samples or v >= n_samples)):
                raise InputFormatError(f"{path}:{lineno}: row numbers must be {limit}, got {u} {v}")
            if u == v:
                raise InputFormatError(f"{path}:{lineno}: self loop on row {u}")
            rows.append((u, v))
    return canonical_edges(_int64_edges(rows, str(path)))[0]


def edges_from_groups(keys, max_edges=None):
    """All pairs of samples that share a key (a qid, an image id, a comment key ...).

    Parameters
    ----------
    keys : sequence or 1-d array, length n_samples
        One hashable key per sample (a tuple is one key); samples whose key is missing
        (None, NaN, pandas' NA or NaT) join no group.
    max_edges : int, optional
        Refuse groupings with more edges; default :data:`MAX_GROUP_EDGES`.

    Returns
    -------
    ndarray of int64, shape (E, 2), with u < v, sorted. A group of size k gives
    k(k−1)/2 edges.

    Raises
    ------
    ValueError
        When the groups imply more than ``max_edges`` edges (counted before any is built).
    """
    if isinstance(keys, np.ndarray):
        if keys.ndim != 1:
            raise ValueError(f"keys: expected one key per sample (a 1-d array), got shape {keys.shape}")
        keys = keys.tolist()
    groups = {}
    for i, k in enumerate(keys):
        if is_missing(k):
            continue
        try:
            groups.setdefault(k, []).append(i)
        except TypeError:
            raise ValueError(f"keys: key {k!r} of sample {i} is not hashable") from None
    limit = MAX_GROUP_EDGES if max_edges is None else max_edges
    sizes = [len(members) for members in groups.values()]
    count = sum(k * (k - 1) // 2 for k in sizes)
    if count > limit:
        raise ValueError(f"groups: the groups imply {count:,} edges (largest group: "
                         f"{max(sizes):,} samples), more than the limit of {limit:,}; "
                         "give a sparser edge list with --edges FILE (edges=...)")
    parts = []
    for members in groups.values():
        if len(members) > 1:
            m = np.asarray(members, dtype=np.int64)
            a, b = np.triu_indices(len(m), k=1)
            parts.append(np.stack([m[a], m[b]], axis=1))
    if not parts:
        return np.zeros((0, 2), dtype=np.int64)
    return canonical_edges(np.concatenate(parts))[0]


def group_keys(key, qid=None, comments=None):
    """Group keys of the examples of an SVMlight file, for :func:`edges_from_groups`.

    Parameters
    ----------
    key : str
        ``"qid"``: the qid column (0, SVM-light's "no qid", joins no group);
        otherwise the value of a ``key=value`` token in each example's comment
        (e.g. ``# image=2007_000123``); examples without the token, or with an empty
        value (``image=``), join no group. A key that no example carries is an error
        (a misspelt key would link nothing), as is a key with '=' or white space.
    qid : array-like, optional
    comments : list of str, optional
    """
    if key == "qid":
        if qid is None:
            raise ValueError("groups: key 'qid' needs the qid column")
        keys = [None if q == 0 else q for q in np.asarray(qid).tolist()]
        where = "a non-zero qid"
    else:
        if not isinstance(key, str) or not key or "=" in key or any(c.isspace() for c in key):
            raise ValueError(f"groups: key must be 'qid' or a name without '=' or white "
                             f"space; got {key!r}")
        if comments is None:
            raise ValueError(f"groups: key {key!r} is read from the comments, which are missing")
        prefix = key + "="
        keys = []
        for text in comments:
            found = None
            for token in str(text).split():
                if token.startswith(prefix):
                    found = token[len(prefix):] or None
                    break
            keys.append(found)
        where = f"a '{key}=value' token in its comment"
    if keys and all(k is None for k in keys):
        raise ValueError(f"groups: no example has {where}, so {key!r} links nothing")
    return keys


def edges_for_examples(n_samples, edges_file=None, groups=None, qid=None, comments=None):
    """Edges of the console scripts: from an edge-list file (rows of the example file),
    from groups (:func:`group_keys`), or the union of both."""
    parts = [np.zeros((0, 2), dtype=np.int64)]
    if edges_file is not None:
        parts.append(edges_from_file(edges_file, n_samples=n_samples))
    if groups is not None:
        parts.append(edges_from_groups(group_keys(groups, qid=qid, comments=comments)))
    return canonical_edges(np.concatenate(parts))[0]


def edges_from_networkx(graph, nodes=None):
    """Edges of a networkx graph as row numbers.

    Parameters
    ----------
    graph : networkx.Graph (or DiGraph / MultiGraph: directions and parallel edges
        are merged)
    nodes : sequence, optional
        The graph node of each row (row i is ``nodes[i]``). By default the graph's
        nodes must be the integers 0..n−1.

    Returns
    -------
    ndarray of int64, shape (E, 2), with u < v, sorted. Edge attributes (``weight``
    too) are not read: the models learn the pairwise weights.
    """
    if not (hasattr(graph, "nodes") and hasattr(graph, "edges")):
        raise ValueError(f"graph: expected a networkx graph, got {type(graph).__name__} "
                         "(an (E, 2) array of row numbers is the edges themselves)")
    if nodes is None:
        index = {}
        for v in graph.nodes:
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)) or v < 0:
                raise ValueError(f"graph: node {v!r} is not a row number; pass nodes=[...] "
                                 "giving the graph node of each row")
            index[v] = int(v)
    else:
        index = {}
        for i, v in enumerate(nodes):
            if v in index:
                raise ValueError(f"nodes: graph node {v!r} appears twice")
            index[v] = i
    rows = []
    for u, v in graph.edges():
        if u not in index or v not in index:
            missing = u if u not in index else v
            raise ValueError(f"graph: edge ({u!r}, {v!r}) names node {missing!r} that has no row")
        if u == v:
            raise ValueError(f"graph: self loop on node {u!r}")
        rows.append((index[u], index[v]))
    return canonical_edges(_int64_edges(rows, "graph"))[0]


# ------------------------------------------------------------------ graph cuts
def _check_problem(unary, edges, weights):
    if np.iscomplexobj(unary) or np.iscomplexobj(weights):
        raise ValueError(f"{'unary' if np.iscomplexobj(unary) else 'weights'}: complex "
                         "values are not supported")
    try:
        unary = np.array(unary, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"unary: cannot convert to a float64 array ({exc})") from None
    if unary.ndim != 2 or unary.shape[1] != 2:
        raise ValueError(f"unary: expected an (n, 2) array of scores for labels 0 and 1, got shape {unary.shape}")
    if not np.all(np.isfinite(unary)):
        raise ValueError("unary: contains NaN or infinite values")
    n = unary.shape[0]
    edges = check_edges(edges, n, "edges")
    try:
        weights = np.array(weights, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"weights: cannot convert to a float64 array ({exc})") from None
    if weights.ndim > 1:
        raise ValueError(f"weights: expected a 1-d array (one per edge), got shape {weights.shape}")
    weights = weights.ravel()
    if weights.shape[0] != edges.shape[0]:
        raise ValueError(f"weights: expected one weight per edge ({edges.shape[0]}), got {weights.shape[0]}")
    if not np.all(np.isfinite(weights)):
        raise ValueError("weights: contains NaN or infinite values")
    if np.any(weights < 0):
        raise ValueError(f"weights: must be non-negative (penalties for disagreeing labels), "
                         f"got {weights.min()!r}")
    with np.errstate(over="ignore"):  # (checked just below)
        if not np.all(np.isfinite(unary[:, 1] - unary[:, 0])):  # the terminal capacities
            raise ValueError("unary: too large (the difference of a row's two scores "
                             "overflows); scale them down")
        if not np.isfinite(np.abs(unary).max(axis=1).sum() + weights.sum()):
            raise ValueError("unary, weights: too large (the score of a labelling "
                             "overflows); scale them down")
    pairs, inverse = canonical_edges(edges, n)
    merged = np.bincount(inverse, weights=weights, minlength=len(pairs)) if len(pairs) else weights[:0]
    return unary, pairs, np.ascontiguousarray(merged, dtype=np.float64)


def labelling_score(unary, edges, weights, labelling):
    """Score Σ unary[i, y_i] − Σ weight · [y_u ≠ y_v] of a labelling of 0s and 1s
    (every listed edge counts, repeated ones too)."""
    unary, pairs, weights = _check_problem(unary, edges, weights)
    y = np.asarray(labelling)
    if y.shape != (len(unary),) or not np.isin(y, (0, 1)).all() or y.dtype.kind not in "biuf":
        got = repr(labelling) if y.size <= 10 else f"shape {y.shape}"
        raise ValueError(f"labelling: expected {len(unary)} labels of 0 or 1, got {got}")
    return _score(unary, pairs, weights, y.astype(np.int64))


def _score(unary, pairs, weights, y):
    """labelling_score on a validated problem (merged pairs), unchecked."""
    unary_part = unary[np.arange(len(y)), y].sum()
    cut = y[pairs[:, 0]] != y[pairs[:, 1]]
    return float(unary_part - weights[cut].sum())


class EdgeTopology:
    """CSR arcs of merged edges (u < v): arc order, heads, reverse arcs, edge ids."""

    def __init__(self, n, pairs):
        self.n, self.pairs = n, pairs
        self.order, self.first, self.head, self.sister, self.arc_edge = \
            _maxflow_fast.csr_arcs(n, np.ascontiguousarray(pairs, dtype=np.int64))
        self.edge_u = np.ascontiguousarray(pairs[:, 0], dtype=np.int32)


class _Cut:
    """One validated problem wired to the kernel: CSR arcs with reverse indices."""

    def __init__(self, unary, pairs, weights, topology=None):
        n = unary.shape[0]
        t = EdgeTopology(n, pairs) if topology is None else topology
        self.topology = t
        self.unary, self.pairs, self.weights = unary, pairs, weights
        self.gain = unary[:, 1] - unary[:, 0]          # = cap_source - cap_sink
        self.first, self.head, self.sister, self.arc_edge = t.first, t.head, t.sister, t.arc_edge
        order = t.order
        self.cap = np.concatenate([weights, weights])[order]
        # label 1 = source side: label 0 pays the source arc, label 1 the sink arc
        self.graph = MaxFlowGraph(self.first, self.head, self.sister, self.cap,
                                  np.maximum(self.gain, 0.0), np.maximum(-self.gain, 0.0))
        self.flow = self.graph.maxflow()
        self.labelling = self.graph.labels()
        self.best = _score(unary, pairs, weights, self.labelling.astype(np.int64))

    def max_marginals(self, record):
        n = self.unary.shape[0]
        incident = np.bincount(self.pairs.ravel(), weights=np.repeat(self.weights, 2), minlength=n)
        # node-local forcing constant: strictly above the largest energy change that
        # flipping node i alone can cause (|gap| + incident weights)
        with np.errstate(over="ignore"):  # (checked just below)
            force = 2.0 * (np.abs(self.gain) + incident)
        if not np.all(np.isfinite(force)):
            raise ValueError("unary, weights: too large for max-marginals (a node's unary gap "
                             "plus its incident weights, doubled, overflows); scale them down")
        force[force == 0] = 1.0
        out = self.graph.max_marginals(force, self.arc_edge, self.weights, self.weights,
                                       self.topology.edge_u, self.gain, record)
        delta_e, delta_flow = out[0], out[1]
        forced = self.best - delta_e
        m1 = np.where(self.labelling == 1, self.best, forced)
        m0 = np.where(self.labelling == 0, self.best, forced)
        gaps = np.where(self.labelling == 1, delta_e, -delta_e)  # m1 - m0, exactly
        return m0, m1, gaps, delta_flow, out[2:]


def max_score_labelling(unary, edges, weights):
    """The labelling of largest score, by one minimum s-t cut.

    Parameters
    ----------
    unary : array-like, shape (n, 2)
        Scores of label 0 and label 1 for every node (to maximise).
    edges : array-like of int, shape (E, 2)
        Pairs of 0-based node indices (duplicates are merged, weights added).
    weights : array-like, shape (E,)
        Non-negative penalties paid when an edge's ends get different labels.

    Returns
    -------
    labelling : ndarray of uint8, shape (n,)
    best : float
        Its score Σ unary[i, y_i] − Σ weights · [y_u ≠ y_v].
    """
    cut = _Cut(*_check_problem(unary, edges, weights))
    return cut.labelling, cut.best


MaxMarginalLabellings = namedtuple("MaxMarginalLabellings",
                                   ["labelling", "best", "m0", "m1", "flips", "cut_changes", "pairs"])
MaxMarginalLabellings.__doc__ = """Max-marginals with their labellings in compact form.

labelling, best : the MAP labelling and its score.
m0, m1 : (n,) max-marginals.
flips : scipy.sparse.csr_matrix (n, n) int8; row i holds the label changes (+1 for
    0 -> 1, −1 for 1 -> 0) of the best labelling with y_i forced to the label opposite
    ``labelling[i]`` (the best labelling with y_i = labelling[i] is ``labelling``).
cut_changes : csr_matrix (n, E) int8; row i: +1 for edges that become cut, −1 for edges
    that stop being cut in that labelling.
pairs : (E, 2) the merged edges (u < v) that the columns of ``cut_changes`` index.
"""


def max_marginals_compact(unary, edges, weights, topology=None):
    """Max-marginals of every node with their labellings as sparse changes from the
    MAP labelling (see :class:`MaxMarginalLabellings`); memory grows with the number
    of changed labels, not n².

    ``topology`` (trusted): a prebuilt :class:`EdgeTopology` of ``edges``, which must
    then already be merged (u < v, unique) and ``unary``/``weights`` valid float64."""
    if topology is None:
        cut = _Cut(*_check_problem(unary, edges, weights))
    else:
        cut = _Cut(unary, topology.pairs, weights, topology)
    m0, m1, _, _, rec = cut.max_marginals(True)
    n, E = len(m0), len(cut.pairs)
    node_ptr, node_idx, node_sgn, edge_ptr, edge_idx, edge_sgn = rec
    flips = sp.csr_matrix((node_sgn, node_idx, node_ptr), shape=(n, n))
    cut_changes = sp.csr_matrix((edge_sgn, edge_idx, edge_ptr), shape=(n, E))
    return MaxMarginalLabellings(cut.labelling, cut.best, m0, m1, flips, cut_changes, cut.pairs)


def max_marginal_gaps(unary, edges, weights):
    """The ranking scores of Dokania et al. (eq. 11), ``m1 - m0`` of :func:`max_marginals`,
    without its cancellation: each is ± the score a node's forced flip loses, where
    ``m1 - m0`` subtracts two numbers that carry the whole labelling's score (a node's
    gap of 1e-7 beside another node's 1e12 came out 0).

    Parameters and validation as in :func:`max_score_labelling`; returns ndarray (n,)."""
    return _Cut(*_check_problem(unary, edges, weights)).max_marginals(False)[2]


def max_marginals(unary, edges, weights, return_labellings=False):
    """Max-marginals of every node, by dynamic graph cuts (Dokania et al. 2014, eq. 9-10).

    Parameters
    ----------
    unary, edges, weights
        As in :func:`max_score_labelling`.
    return_labellings : bool
        Also return the maximising labellings (dense (n, n) arrays; use
        :func:`max_marginals_compact` for large n).

    Returns
    -------
    m0, m1 : ndarray of float64, shape (n,)
        ``m0[i]`` (``m1[i]``) is the largest score of a labelling with y_i = 0 (1).
        The ranking score of Dokania et al. (eq. 11) is ``m1 - m0``, which
        :func:`max_marginal_gaps` gives without cancellation.
    labellings0, labellings1 : ndarray of uint8, shape (n, n), only if requested
        Row i is a labelling attaining ``m0[i]`` (``m1[i]``).

    Notes
    -----
    One dynamic cut per node, each starting from the first cut's residual graph. It is
    cheap when forcing a node changes few other labels; when the pairwise weights
    dominate the unaries, forcing one node drags large parts of the graph with it,
    each of the n cuts then re-routes flow through most of the graph, and the time
    grows far faster than n + E.
    """
    if not return_labellings:
        cut = _Cut(*_check_problem(unary, edges, weights))
        m0, m1, _, _, _ = cut.max_marginals(False)
        return m0, m1
    res = max_marginals_compact(unary, edges, weights)
    n = len(res.m0)
    forced = np.tile(res.labelling, (n, 1)).astype(np.int16) + res.flips.toarray()
    forced = forced.astype(np.uint8)
    base = np.tile(res.labelling, (n, 1))
    y1 = np.where((res.labelling == 1)[:, None], base, forced)
    y0 = np.where((res.labelling == 0)[:, None], base, forced)
    return res.m0, res.m1, y0, y1
