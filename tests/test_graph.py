"""svmrank.graph: edge builders, MAP labellings and max-marginals (against brute force
and against recomputing every max-marginal from scratch), and bad input."""
import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from svmrank.exceptions import InputFormatError
from svmrank import graph
from svmrank.graph import (check_edges, edges_from_file, edges_from_groups, edges_from_networkx,
                           labelling_score, max_marginal_gaps, max_marginals,
                           max_marginals_compact, max_score_labelling)

from conftest import shared_file


def all_scores(unary, edges, weights):
    n = len(unary)
    ys = np.array(list(itertools.product([0, 1], repeat=n)), dtype=np.int64).reshape(-1, n)
    return ys, np.array([labelling_score(unary, edges, weights, y) for y in ys])


def random_problem(rng, n, p, scale=1.0):
    edges = np.array([(u, v) for u in range(n) for v in range(u + 1, n) if rng.random() < p],
                     dtype=np.int64).reshape(-1, 2)
    weights = rng.exponential(scale, len(edges))
    unary = rng.normal(scale=scale, size=(n, 2))
    return unary, edges, weights


def grid_edges(rows, cols):
    idx = np.arange(rows * cols).reshape(rows, cols)
    return np.concatenate([np.stack([idx[:, :-1].ravel(), idx[:, 1:].ravel()], 1),
                           np.stack([idx[:-1, :].ravel(), idx[1:, :].ravel()], 1)])


def from_scratch(unary, edges, weights, i, label):
    """Reference max-marginal: a fresh cut with y_i pinned by a large unary penalty."""
    u = unary.copy()
    u[i, 1 - label] -= 10.0 * (np.abs(unary).sum() + weights.sum() + 1.0)
    y, _ = max_score_labelling(u, edges, weights)
    assert y[i] == label
    return labelling_score(unary, edges, weights, y)


@pytest.mark.parametrize("seed", range(30))
def test_map_and_max_marginals_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 9))
    unary, edges, weights = random_problem(rng, n, rng.uniform(0.1, 1.0),
                                           scale=float(rng.choice([1e-3, 1.0, 1e3])))
    if seed % 4 == 0:      # ties everywhere
        unary, weights = np.round(unary), np.round(weights)
    ys, sc = all_scores(unary, edges, weights)
    y, best = max_score_labelling(unary, edges, weights)
    tol = 1e-9 * np.abs(sc).max()  # (relative: no floor)
    assert best == pytest.approx(sc.max(), abs=tol)
    assert labelling_score(unary, edges, weights, y) == pytest.approx(best, abs=tol)
    m0, m1, Y0, Y1 = max_marginals(unary, edges, weights, return_labellings=True)
    for i in range(n):
        assert m0[i] == pytest.approx(sc[ys[:, i] == 0].max(), abs=tol)
        assert m1[i] == pytest.approx(sc[ys[:, i] == 1].max(), abs=tol)
        assert Y0[i, i] == 0 and Y1[i, i] == 1
        assert labelling_score(unary, edges, weights, Y0[i]) == pytest.approx(m0[i], abs=tol)
        assert labelling_score(unary, edges, weights, Y1[i]) == pytest.approx(m1[i], abs=tol)
    assert np.allclose(np.maximum(m0, m1), best, atol=tol)


@pytest.mark.parametrize("kind", ["grid", "random"])
def test_max_marginals_match_recomputation_from_scratch(kind):
    rng = np.random.default_rng(11)
    if kind == "grid":
        n, edges = 15 * 15, grid_edges(15, 15)
    else:
        n = 200
        edges = np.unique(np.sort(rng.integers(0, n, (400, 2)), axis=1), axis=0)
        edges = edges[edges[:, 0] != edges[:, 1]]
    weights = rng.uniform(0, 1.5, len(edges))
    unary = rng.normal(size=(n, 2))
    m0, m1 = max_marginals(unary, edges, weights)
    for i in rng.choice(n, 40, replace=False):
        assert m0[i] == pytest.approx(from_scratch(unary, edges, weights, i, 0), abs=1e-9)
        assert m1[i] == pytest.approx(from_scratch(unary, edges, weights, i, 1), abs=1e-9)


def test_compact_labellings_reproduce_scores():
    rng = np.random.default_rng(3)
    n = 120
    unary, edges, weights = random_problem(rng, n, 0.04)
    res = max_marginals_compact(unary, edges, weights)
    dense = np.tile(res.labelling.astype(int), (n, 1)) + res.flips.toarray()
    for i in range(n):
        forced = dense[i]
        assert forced[i] == 1 - res.labelling[i]
        m = res.m1[i] if forced[i] == 1 else res.m0[i]
        assert labelling_score(unary, edges, weights, forced) == pytest.approx(m, abs=1e-10)
        cut_change = ((forced[res.pairs[:, 0]] != forced[res.pairs[:, 1]]).astype(int)
                      - (res.labelling[res.pairs[:, 0]] != res.labelling[res.pairs[:, 1]]))
        assert np.array_equal(cut_change, res.cut_changes[i].toarray().ravel())


def test_duplicate_edges_are_merged_by_adding_weights():
    unary = np.array([[0.0, 1.0], [0.5, 0.0], [0.0, 0.2]])
    dup = np.array([[0, 1], [1, 0], [1, 2], [0, 1]])
    w = np.array([0.3, 0.2, 0.4, 0.1])
    merged = np.array([[0, 1], [1, 2]])
    wm = np.array([0.6, 0.4])
    assert max_score_labelling(unary, dup, w)[1] == pytest.approx(max_score_labelling(unary, merged, wm)[1])
    for a, b in zip(max_marginals(unary, dup, w), max_marginals(unary, merged, wm)):
        assert np.allclose(a, b)


def test_no_edges_gives_independent_nodes():
    unary = np.array([[0.0, 1.0], [2.0, -1.0], [0.0, 0.0]])
    y, best = max_score_labelling(unary, [], [])
    assert best == pytest.approx(1.0 + 2.0 + 0.0)
    m0, m1 = max_marginals(unary, np.zeros((0, 2), int), np.zeros(0))
    assert np.allclose(m1 - m0, unary[:, 1] - unary[:, 0])


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_property_against_brute_force(data):
    n = data.draw(st.integers(1, 7))
    pairs = [(u, v) for u in range(n) for v in range(u + 1, n)]
    chosen = data.draw(st.lists(st.sampled_from(pairs), unique=True) if pairs else st.just([]))
    edges = np.array(chosen, dtype=np.int64).reshape(-1, 2)
    vals = st.one_of(st.just(0.0), st.integers(-3, 3).map(float), st.floats(-1e6, 1e6),
                     st.floats(-1e-6, 1e-6))
    unary = np.array(data.draw(st.lists(vals, min_size=2 * n, max_size=2 * n))).reshape(n, 2)
    weights = np.abs(np.array(data.draw(st.lists(vals, min_size=len(edges), max_size=len(edges)))))
    ys, sc = all_scores(unary, edges, weights)
    tol = 1e-9 * np.abs(sc).max()  # (relative: no floor)
    y, best = max_score_labelling(unary, edges, weights)
    assert best == pytest.approx(sc.max(), abs=tol)
    m0, m1 = max_marginals(unary, edges, weights)
    for i in range(n):
        assert m0[i] == pytest.approx(sc[ys[:, i] == 0].max(), abs=tol)
        assert m1[i] == pytest.approx(sc[ys[:, i] == 1].max(), abs=tol)


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("edges, weights, match", [
    ([[0, 3]], [1.0], r"edges: edge 0 \(0, 3\) names a row outside \[0, 3\)"),
    ([[-1, 2]], [1.0], "outside"),
    ([[1, 1]], [1.0], "self loop on row 1"),
    ([[0, 1]], [-0.5], "weights: must be non-negative"),
    ([[0, 1]], [np.nan], "weights: contains NaN"),
    ([[0, 1]], [1.0, 2.0], "one weight per edge"),
    ([[0, 1, 2]], [1.0], r"edges: expected an \(E, 2\) array"),
    ([[0.5, 1]], [1.0], "must be integers"),
])
def test_bad_graph_input(edges, weights, match):
    unary = np.zeros((3, 2))
    with pytest.raises(ValueError, match=match):
        max_score_labelling(unary, edges, weights)
    with pytest.raises(ValueError, match=match):
        max_marginals(unary, edges, weights)


@pytest.mark.parametrize("unary, match", [
    (np.zeros((3, 3)), r"unary: expected an \(n, 2\) array"),
    (np.array([[0.0, np.inf], [0, 0], [0, 0]]), "unary: contains NaN or infinite"),
    (np.zeros(3), r"unary: expected an \(n, 2\)"),
])
def test_bad_unary(unary, match):
    with pytest.raises(ValueError, match=match):
        max_score_labelling(unary, [[0, 1]], [1.0])


# ------------------------------------------------------------------ edge builders
def test_edges_from_file(tmp_path):
    path = tmp_path / "e.txt"
    path.write_text("# citations\n0 3\n3 0\n\n2 1  # comment\n1 2\n")
    edges = edges_from_file(path)
    assert edges.tolist() == [[0, 3], [1, 2]]
    assert edges_from_file(path, n_samples=4).tolist() == [[0, 3], [1, 2]]
    path.write_bytes(b"\xef\xbb\xbf0 3\r\n1 2 # \xff not UTF-8 in a comment\r\n")  # BOM, CRLF
    assert edges_from_file(path).tolist() == [[0, 3], [1, 2]]


@pytest.mark.parametrize("text, n, match", [
    ("0 1\n2\n", None, r"e\.txt:2: expected two row numbers"),
    ("0 1\n1 x\n", None, r"e\.txt:2: row numbers must be integers"),
    ("0 1\n1 1_0\n", None, r"e\.txt:2: row numbers must be integers"),
    ("0 1\n1 \u0663\n", None, r"e\.txt:2: row numbers must be integers"),  # Arabic-Indic 3
    (b"0 1\n1 \xff\n", None, r"e\.txt:2: row numbers must be integers"),
    ("0 1\n+-1 2\n", None, r"e\.txt:2: row numbers must be integers"),
    ("0 1\n\n4 4\n", None, r"e\.txt:3: self loop on row 4"),
    ("0 1\n-1 2\n", None, r"e\.txt:2: row numbers must be non-negative"),
    ("0 1\n1 5\n", 5, r"e\.txt:2: row numbers must be \[0, 5\)"),
    # int() refuses more than 4300 digits, with a message naming no file
    ("0 1\n0 " + "9" * 5000 + "\n", 5,
     r"e\.txt:2: row numbers must be \[0, 5\), got a number of more than 18 digits in "
     r"'0 9{38}\.\.\.'$"),
    ("0 1\n0 1" + "0" * 18 + "\n", None, r"e\.txt:2: row numbers must be non-negative, got a "
     r"number of more than 18 digits in '0 10{18}'$"),
    ("0 1\n0 " + "0" * 5000 + "7\n", 5, r"e\.txt:2: row numbers must be \[0, 5\), got 0 7"),
])
def test_edges_from_file_errors(tmp_path, text, n, match):
    path = tmp_path / "e.txt"
    path.write_bytes(text) if isinstance(text, bytes) else path.write_text(text, encoding="utf-8")
    with pytest.raises(InputFormatError, match=match):
        edges_from_file(path, n_samples=n)


def test_edges_from_cora_file():
    path = shared_file("cora", "cora.edges.txt")
    edges = edges_from_file(path, n_samples=2708)
    assert edges.shape == (5278, 2)
    assert (edges[:, 0] < edges[:, 1]).all()


def test_edges_from_groups():
    keys = ["a", "b", "a", None, "a", "b", "c"]
    assert edges_from_groups(keys).tolist() == [[0, 2], [0, 4], [1, 5], [2, 4]]
    assert edges_from_groups([1, 2, 3]).shape == (0, 2)
    assert edges_from_groups(np.array([7, 7, 7, 7])).shape == (6, 2)
    # a tuple is one key (np.asarray would make a 2-d array of them and lose the rows)
    assert edges_from_groups([("a", 1), ("b", 1), ("a", 1)]).tolist() == [[0, 2]]
    with pytest.raises(ValueError, match=r"keys: expected one key per sample .* shape \(2, 2\)"):
        edges_from_groups(np.array([[1, 1], [1, 2]]))
    with pytest.raises(ValueError, match=r"keys: key \[1\] of sample 0 is not hashable"):
        edges_from_groups([[1], [1]])
    with pytest.raises(ValueError, match=r"keys: key array\(\[1, 2\]\) of sample 0 is not"):
        edges_from_groups([np.array([1, 2]), np.array([1, 2])])


def test_missing_keys_of_every_kind_join_no_group():
    """Review 22: pandas' NA (nullable dtypes) and NaT linked every unlabelled sample."""
    pd = pytest.importorskip("pandas")
    column = pd.DataFrame({"image": [1, 1, None, None, 2, None]}).convert_dtypes()["image"]
    assert str(column.dtype) == "Int64" and edges_from_groups(column).tolist() == [[0, 1]]
    for missing in (None, float("nan"), np.float32("nan"), pd.NA, pd.NaT,
                    np.datetime64("NaT")):
        keys = ["a", missing, missing, "a"]
        assert edges_from_groups(keys).tolist() == [[0, 3]], missing
    strings = pd.Series(["a", None, None, "a"], dtype="string")
    assert edges_from_groups(strings).tolist() == [[0, 3]]


def test_edges_from_groups_counts_before_building():
    # one group of 20,000 implies 199,990,000 edges (3.2 GB as pairs): refused at once
    import time
    import tracemalloc
    tracemalloc.start()
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"^groups: the groups imply 199,990,000 edges \(largest "
                       r"group: 20,000 samples\), more than the limit of 10,000,000; .*--edges"):
        edges_from_groups(np.zeros(20_000, dtype=np.int64))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert time.perf_counter() - start < 5 and peak < 50e6
    assert graph.MAX_GROUP_EDGES == 10_000_000
    # the limit counts all groups; at the limit the edges are built
    assert edges_from_groups([1] * 4 + [2] * 3, max_edges=9).shape == (9, 2)
    with pytest.raises(ValueError, match=r"imply 9 edges \(largest group: 4 samples\), more than "
                       r"the limit of 8"):
        edges_from_groups([1] * 4 + [2] * 3, max_edges=8)


def test_cli_groups_too_dense(tmp_path, capsys, monkeypatch):
    from svmrank.cli import ap_classify, ap_learn
    train = tmp_path / "one_group.dat"
    rng = np.random.default_rng(0)
    train.write_text("".join(f"{1 if i % 7 == 0 else -1} qid:3 1:{rng.random():.3f} 2:1 "
                             f"# img=a\n" for i in range(20_000)))
    for groups in ("qid", "img"):
        assert ap_learn.main(["--model", "hob", "--groups", groups, "-v", "0", str(train),
                              str(tmp_path / "m")]) != 0
        err = capsys.readouterr().err.strip()
        assert "\n" not in err and str(train) in err and "199,990,000 edges" in err, err
        assert "--edges" in err and not (tmp_path / "m").exists()
    # svm_ap_classify refuses too (a small model, a lowered limit)
    small = tmp_path / "small.dat"
    small.write_text("".join(f"{1 if i % 3 == 0 else -1} 1:{i / 10} 2:1 # img={i % 2}\n"
                             for i in range(12)))
    assert ap_learn.main(["--model", "hob", "--groups", "img", "-v", "0", str(small),
                          str(tmp_path / "hob")]) == 0
    monkeypatch.setattr(graph, "MAX_GROUP_EDGES", 20)
    assert ap_classify.main(["--groups", "img", "-v", "0", str(small), str(tmp_path / "hob"),
                             str(tmp_path / "out")]) != 0
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "imply 30 edges" in err and "--edges" in err, err
    assert not (tmp_path / "out").exists()


def test_edges_from_networkx():
    nx = pytest.importorskip("networkx")
    G = nx.Graph([(0, 2), (2, 1), (1, 0)])
    assert edges_from_networkx(G).tolist() == [[0, 1], [0, 2], [1, 2]]
    H = nx.MultiDiGraph([("x", "y"), ("y", "x"), ("y", "z")])
    assert edges_from_networkx(H, nodes=["z", "y", "x"]).tolist() == [[0, 1], [1, 2]]
    with pytest.raises(ValueError, match="self loop"):
        edges_from_networkx(nx.Graph([(0, 0)]))
    with pytest.raises(ValueError, match="has no row"):
        edges_from_networkx(H, nodes=["x", "y"])
    with pytest.raises(ValueError, match="not a row number"):
        edges_from_networkx(H)
    # a large row number costs no memory (rows are renumbered for the merge)
    assert edges_from_networkx(nx.Graph([(0, 2**40), (5, 3)])).tolist() == [[0, 2**40], [3, 5]]
    with pytest.raises(ValueError, match="below 2\\*\\*63"):
        edges_from_networkx(nx.Graph([(0, 2**70)]))


def test_overflowing_cut_is_refused():
    """|gain| near 1e308 overflowed to inf and gave a wrong max-marginal."""
    with pytest.raises(ValueError, match="too large"):
        max_marginals([[1e308, -1e308]], [], [])
    with pytest.raises(ValueError, match="too large"):
        max_score_labelling([[1e308, -1e308]], [], [])
    with pytest.raises(ValueError, match="too large for max-marginals"):
        max_marginals([[0.0, 1e308], [0.0, 0.0]], [[0, 1]], [1e307])
    with pytest.raises(ValueError, match="too large"):  # (the labelling's score too)
        max_marginals([[0.0, 1e308], [0.0, 0.0]], [[0, 1]], [1e308])
    # each row's gain is finite, the score of a labelling is not: NaN max-marginals
    with pytest.raises(ValueError, match=r"^unary, weights: too large \(the score of a "
                                         r"labelling overflows\)"):
        max_marginals([[1e308, 1e308], [1e308, 1e308]], [[0, 1]], [1.0])
    # one cut needs no forcing constant: still solved
    labels, _ = max_score_labelling([[0.0, 1.0], [0.0, -1.0]], [[0, 1]], [1e308])
    assert labels.tolist() == [0, 0]


def test_check_edges_empty_and_dtype():
    assert check_edges([], 4).shape == (0, 2)
    assert check_edges(np.array([[1.0, 2.0]]), 4).dtype == np.int64
    with pytest.raises(ValueError, match="integers"):
        check_edges(np.array([["a", "b"]]), 4)


def test_group_keys_and_edges_for_examples(tmp_path):
    from svmrank.graph import edges_for_examples, group_keys
    comments = ["img=a x=1", "img=b", "nothing", "x=2 img=a"]
    assert group_keys("img", comments=comments) == ["a", "b", None, "a"]
    assert group_keys("qid", qid=np.array([0, 3, 3, 1])) == [None, 3, 3, 1]
    with pytest.raises(ValueError, match="comments"):
        group_keys("img")
    with pytest.raises(ValueError, match="no example has a 'nokey=value' token"):
        group_keys("nokey", comments=comments)  # a misspelt key must not link nothing silently
    with pytest.raises(ValueError, match="no example has a non-zero qid"):
        group_keys("qid", qid=np.zeros(4))
    # an empty value joins no group (it linked every such example as one group)
    assert group_keys("img", comments=["img= x=1", "img=", "img=c"]) == [None, None, "c"]
    for key in ("", "img=", "a b", "img\t", 3):
        with pytest.raises(ValueError, match="key must be 'qid' or a name without"):
            group_keys(key, comments=comments)
    path = tmp_path / "e.txt"
    path.write_text("1 2\n")
    edges = edges_for_examples(4, path, "img", comments=comments)
    assert edges.tolist() == [[0, 3], [1, 2]]
    assert edges_for_examples(4).shape == (0, 2)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_graph_building_kernels_match_numpy(data):
    """canonical_edges / csr_arcs (counting sorts) against np.unique / stable argsort,
    with duplicates, reversed duplicates, isolated nodes and no edges at all."""
    from svmrank import _maxflow_fast
    import maxflow_reference as ref
    n = data.draw(st.integers(2, 12))
    pairs = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))
                               .filter(lambda e: e[0] != e[1]), max_size=40))
    edges = np.array(pairs, dtype=np.int64).reshape(-1, 2)
    got_pairs, got_inverse = _maxflow_fast.canonical_edges(n, edges)
    want_pairs, want_inverse = ref.canonical_edges(edges)
    np.testing.assert_array_equal(got_pairs, want_pairs)
    np.testing.assert_array_equal(got_inverse, want_inverse)
    for got, want in zip(_maxflow_fast.csr_arcs(n, got_pairs), ref.csr_arcs(n, want_pairs)):
        np.testing.assert_array_equal(got, want)


def test_max_marginal_gaps_do_not_cancel():
    """m1 - m0 subtracts two scores that carry the whole labelling's score: beside a node
    with a gap of 1e12 the gaps 1e-7 and -3e-7 of isolated nodes came out 0. The gaps
    are exact there, and equal m1 - m0 to rounding on random graphs."""
    unary = np.array([[0.0, 1e12], [0.0, 1e-7], [3e-7, 0.0]])
    assert max_marginal_gaps(unary, np.zeros((0, 2), dtype=int), []).tolist() == [1e12, 1e-7, -3e-7]
    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(2, 9))
        unary = rng.normal(size=(n, 2))
        edges = rng.integers(0, n, size=(2 * n, 2))
        edges = edges[edges[:, 0] != edges[:, 1]]
        weights = rng.uniform(0, 1, len(edges))
        m0, m1 = max_marginals(unary, edges, weights)
        np.testing.assert_allclose(max_marginal_gaps(unary, edges, weights), m1 - m0,
                                   rtol=0, atol=1e-12 * (1 + np.abs(m0).max()))


def test_edges_and_weights_of_the_wrong_kind_are_refused():
    """uint64 and float rows past int64 were reported wrapped ((0, -1)); (0, 3) and
    (5, 0) arrays passed as 'no edges'; complex unary lost its imaginary part and 2-D
    weights were flattened, with a warning at most."""
    for edges, match in [
            (np.array([[0, 2**64 - 1]], dtype=np.uint64),
             r"edge 0 \(0, 18446744073709551615\) names a row"),
            (np.array([[0.0, 1e20]]), r"edge 0 \(0, 1e\+20\) names a row"),
            (np.zeros((0, 3)), r"expected an \(E, 2\) array of row numbers, got shape \(0, 3\)"),
            (np.zeros((5, 0)), r"expected an \(E, 2\) array of row numbers, got shape \(5, 0\)")]:
        with pytest.raises(ValueError, match=r"^edges: " + match):
            check_edges(edges, 5)
    assert check_edges(np.zeros((0, 2)), 5).shape == (0, 2)
    with pytest.raises(ValueError, match=r"^unary: complex values are not supported$"):
        max_marginals([[0.0, 1j], [0.0, 0.0]], [[0, 1]], [1.0])
    with pytest.raises(ValueError, match=r"^weights: expected a 1-d array"):
        max_marginals([[0.0, 1.0], [0.0, 0.0]], [[0, 1]], [[1.0]])


def test_labelling_score_refuses_what_is_not_a_labelling():
    """-1 read as label 1 (negative indexing), 0.9 truncated to 0, a short labelling
    read past: each is an error naming the labelling."""
    unary, edges, weights = [[0, 1.0], [0, 5.0]], [[0, 1]], [1.0]
    for bad in ([-1, 0], [0.9, 1], [1], [0, 2], np.zeros(30)):
        with pytest.raises(ValueError, match="labelling: expected 2 labels of 0 or 1"):
            labelling_score(unary, edges, weights, bad)
    with pytest.raises(ValueError, match="edges"):
        labelling_score(unary, [[0, 2]], weights, [0, 1])
    # repeated and reversed edges all count
    assert labelling_score(unary, [[0, 1], [1, 0]], [1.0, 2.0], [0, 1]) == 2.0
    assert labelling_score(unary, edges, weights, np.array([True, True])) == 6.0


def test_nan_keys_of_any_float_type_join_no_group():
    for nan in (float("nan"), np.float32("nan"), np.float16("nan"), np.float64("nan")):
        assert edges_from_groups([nan, nan, 1]).shape == (0, 2)


def test_edges_from_networkx_names_a_list_passed_as_the_graph():
    """Review 22: an edge list gave "AttributeError: 'list' object has no attribute"."""
    with pytest.raises(ValueError, match="^graph: expected a networkx graph, got list"):
        edges_from_networkx([(0, 1)])


def test_group_values_that_are_not_utf8_stay_distinct(tmp_path):
    """Review 23: comments were decoded with errors="replace", so 'café' and 'cafè' in
    Latin-1 both became 'caf\\ufffd' and were linked."""
    from svmrank.io import load_svmlight
    path = tmp_path / "latin1.dat"
    path.write_bytes(b"1 1:1 # img=caf\xe9\n0 1:0.5 # img=caf\xe8\n1 1:0.2 # img=caf\xe9\n")
    *_, comments = load_svmlight(path, return_comments=True)
    keys = graph.group_keys("img", comments=comments)
    assert keys[0] != keys[1] and keys[0] == keys[2]
    assert edges_from_groups(keys).tolist() == [[0, 2]]
    assert comments[0].encode("utf-8", "surrogateescape") == b"img=caf\xe9"
