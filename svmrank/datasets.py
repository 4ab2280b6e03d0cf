"""Seeded generators of small synthetic data sets (what data_examples/ and many tests
are made from)."""
import numpy as np
import scipy.sparse as sp

from ._validation import check_random_state


def _integer(value, low):
    return (isinstance(value, (int, np.integer)) and not isinstance(value, bool)
            and value >= low)


def _between(low, high, low_open=False, high_open=False):
    """A test that a value is a real number in the interval (NaN and inf fail)."""
    def test(value):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer,
                                                               np.floating)):
            return False
        return bool(np.isfinite(value) and (value > low if low_open else value >= low)
                    and (value < high if high_open else value <= high))
    return test


def _require(owner, checks):
    """Refuse the first (name, value, test, what) whose test fails, naming it."""
    for name, value, test, what in checks:
        if not test(value):
            raise ValueError(f"{owner}: {name} must be {what}, got {value!r}")


_FRACTION = (_between(0, 1, True, True), "a number in (0, 1)")
_SHARE = (_between(0, 1), "a number in [0, 1]")
_NON_NEGATIVE = (_between(0, np.inf, high_open=True), "a finite number >= 0")


def make_ranking(n_samples=1000, n_features=50, n_queries=1, positive_fraction=0.1,
                 density=0.2, noise=1.0, random_state=0):
    """Sparse linear ranking data: relevance = a noisy linear score above a per-query quantile.

    Parameters
    ----------
    n_samples, n_features : int
    n_queries : int
        Samples are split evenly into this many queries (qid 1..n_queries; sizes differ
        by at most one, and every query has at least two samples).
    positive_fraction : float in (0, 1)
        Fraction of relevant samples in every query (at least one relevant and one
        non-relevant per query).
    density : float in (0, 1]
        Fraction of non-zero features.
    noise : float
        Standard deviation of the Gaussian noise added to the true score.
    random_state : int, None or numpy Generator

    Returns
    -------
    X : scipy.sparse.csr_matrix, shape (n_samples, n_features)
    y : ndarray of float64, 1 for relevant, 0 otherwise
    qid : ndarray of int64
    """
    rng = check_random_state(random_state)
    _require("make_ranking", [
        ("n_samples", n_samples, lambda v: _integer(v, 2), "an integer >= 2"),
        ("n_features", n_features, lambda v: _integer(v, 1), "an integer >= 1"),
        ("n_queries", n_queries, lambda v: _integer(v, 1) and 2 * v <= n_samples,
         f"an integer in 1..n_samples / 2 (two samples a query: {n_samples} // 2)"),
        ("positive_fraction", positive_fraction, *_FRACTION),
        ("density", density, _between(0, 1, low_open=True), "a number in (0, 1]"),
        ("noise", noise, *_NON_NEGATIVE)])
    X = sp.random(n_samples, n_features, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.normal(size=k))
    w_true = rng.normal(size=n_features)
    score = X @ w_true + noise * rng.normal(size=n_samples)
    sizes = np.full(n_queries, n_samples // n_queries)
    sizes[:n_samples % n_queries] += 1  # (the first queries take the remainder)
    qid = np.repeat(np.arange(1, n_queries + 1), sizes).astype(np.int64)
    y = np.zeros(n_samples)
    for q in np.unique(qid):
        idx = np.flatnonzero(qid == q)
        n_pos = min(len(idx) - 1, max(1, int(round(positive_fraction * len(idx)))))
        y[idx[np.argsort(-score[idx], kind="stable")[:n_pos]]] = 1.0
    return X, y, qid


def make_bags(n_bags=200, bag_size=(2, 10), n_features=20, positive_fraction=0.3,
              supervision=0.0, separation=2.0, clutter=1.5, random_state=0,
              negative_classes=0, overlap=False):
    """Multiple-instance data: bags of candidates, one of which carries the bag's label.

    Every bag has one *true* candidate at a random position. A positive bag's true
    candidate is shifted by ``separation`` along a hidden unit direction; a negative
    bag's is not. The other candidates are clutter, Gaussian with standard deviation
    ``clutter`` (> 1 makes them outscore true candidates under a wrong direction).

    Two options (off by default; the default output does not depend on them) model the
    setting of behl2014 §5.1, one-vs-rest action classification over images whose
    latent variable picks one of the top T person-detector boxes:

    - ``negative_classes=K`` gives every negative bag one of K other classes (drawn
      uniformly), each with its own hidden unit direction: a negative bag's true
      candidate is shifted by ``separation`` along its class's direction (a person
      performing another action). With ``positive_fraction = 1 / (K + 1)`` this is
      the paper's one-vs-rest split of K + 1 balanced classes.
    - ``overlap=True`` makes the other candidates of a bag detections that overlap its
      true candidate partly: each carries a fraction o ~ U(0, 1) of the bag's true
      shift (o × separation along the bag's class direction) on top of its clutter.

    These options draw their random numbers after all the others, so the rest of the
    data set (sizes, labels, positions, known candidates) is the same as without them.

    Parameters
    ----------
    n_bags : int
    bag_size : int or (min, max)
        Candidates per bag (uniform on [min, max]).
    n_features : int
    positive_fraction : float in (0, 1)
        Fraction of positive bags (at least one of each class).
    supervision : float in [0, 1]
        The supervision level S of behl2014 §5.1: this fraction of the positive bags and
        of the negative bags have their true candidate marked known.
    separation, clutter : float
    random_state : int, None or numpy Generator
    negative_classes : int >= 0
        Number of classes of the negative bags (0: negative true candidates unshifted).
    overlap : bool
        Clutter candidates share part of their bag's true shift (see above).

    Returns
    -------
    X : ndarray of shape (n_rows, n_features)
    y : ndarray of float64, shape (n_rows,)
        The bag's label (1 or -1) on each of its rows.
    bags : ndarray of int64, shape (n_rows,)
        Bag id (1 .. n_bags) of each row; a bag's rows are consecutive.
    known : ndarray of bool, shape (n_rows,)
        True on the known true candidates.
    """
    rng = check_random_state(random_state)
    sizes = (bag_size, bag_size) if np.isscalar(bag_size) else tuple(bag_size)
    _require("make_bags", [
        ("n_bags", n_bags, lambda v: _integer(v, 2), "an integer >= 2"),
        ("bag_size", bag_size, lambda v: len(sizes) == 2 and all(_integer(b, 1) for b in sizes)
         and sizes[0] <= sizes[1], "an integer >= 1 or a pair (min, max) of them"),
        ("n_features", n_features, lambda v: _integer(v, 1), "an integer >= 1"),
        ("positive_fraction", positive_fraction, *_FRACTION),
        ("supervision", supervision, *_SHARE),
        ("separation", separation, *_NON_NEGATIVE),
        ("clutter", clutter, *_NON_NEGATIVE),
        ("negative_classes", negative_classes, lambda v: _integer(v, 0), "an integer >= 0")])
    lo, hi = sizes
    n_pos = min(n_bags - 1, max(1, int(round(positive_fraction * n_bags))))
    positive = np.zeros(n_bags, dtype=bool)
    positive[rng.permutation(n_bags)[:n_pos]] = True
    sizes = rng.integers(lo, hi + 1, size=n_bags)
    offsets = np.r_[0, np.cumsum(sizes)]
    direction = rng.normal(size=n_features)
    direction /= np.linalg.norm(direction)
    X = clutter * rng.normal(size=(offsets[-1], n_features))
    true_rows = offsets[:-1] + (rng.random(n_bags) * sizes).astype(np.int64)
    X[true_rows] = rng.normal(size=(n_bags, n_features)) + np.outer(separation * positive, direction)
    known_bags = np.zeros(n_bags, dtype=bool)
    for cls in (positive, ~positive):
        members = np.flatnonzero(cls)
        known_bags[rng.permutation(members)[:int(round(supervision * members.size))]] = True
    shift = np.outer(separation * positive, direction)  # each bag's true shift
    if negative_classes:
        directions = rng.normal(size=(int(negative_classes), n_features))
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        neg = np.flatnonzero(~positive)
        shift[neg] = separation * directions[rng.integers(0, int(negative_classes), neg.size)]
        X[true_rows[neg]] += shift[neg]
    if overlap:
        bag_of_row = np.repeat(np.arange(n_bags), sizes)
        clutter_rows = np.ones(offsets[-1], dtype=bool)
        clutter_rows[true_rows] = False
        clutter_rows = np.flatnonzero(clutter_rows)
        X[clutter_rows] += rng.random(clutter_rows.size)[:, None] * shift[bag_of_row[clutter_rows]]
    known = np.zeros(offsets[-1], dtype=bool)
    known[true_rows[known_bags]] = True
    y = np.repeat(np.where(positive, 1.0, -1.0), sizes)
    bags = np.repeat(np.arange(1, n_bags + 1, dtype=np.int64), sizes)
    return X, y, bags, known


def write_ranking_examples(folder, random_state=0):
    """Write the bundled example ranking data: ``rank_train.dat`` (queries 1-6) and
    ``rank_test.dat`` (queries 7-8), 40 sparse features, about 10% relevant per query,
    drawn from one seeded :func:`make_ranking` call so both share the true model."""
    from pathlib import Path

    from .io.svmlight import dump_svmlight

    X, y, qid = make_ranking(n_samples=1600, n_features=40, n_queries=8, positive_fraction=0.1,
                             density=0.25, noise=0.5, random_state=random_state)
    X.data = np.round(X.data, 4)  # short, exactly reproducible text
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    train = qid <= 6
    for name, rows in (("rank_train.dat", train), ("rank_test.dat", ~train)):
        dump_svmlight(folder / name, X[rows], y[rows], qid=qid[rows])


def make_grouped(n_samples=300, n_features=20, n_groups=60, positive_fraction=0.3,
                 homophily=0.9, separation=1.0, random_state=0):
    """Samples linked by groups whose members tend to share a label (high-order ranking).

    Every group gets a label (positive with probability ``positive_fraction``); each
    member keeps it with probability ``homophily`` and takes the other label otherwise.
    Features are standard normal, with the first quarter of them shifted by
    ``± separation / 2`` according to the member's label. Build edges with
    ``svmrank.graph.edges_from_groups(groups)``.

    Returns
    -------
    X : ndarray (n_samples, n_features)
    y : ndarray of float64, 1 relevant, 0 otherwise (both classes present)
    groups : ndarray of int64, group id of each sample
    """
    rng = check_random_state(random_state)
    _require("make_grouped", [
        ("n_samples", n_samples, lambda v: _integer(v, 2), "an integer >= 2"),
        ("n_features", n_features, lambda v: _integer(v, 1), "an integer >= 1"),
        ("n_groups", n_groups, lambda v: _integer(v, 1), "an integer >= 1"),
        ("positive_fraction", positive_fraction, *_FRACTION),
        ("homophily", homophily, *_SHARE),
        ("separation", separation, *_NON_NEGATIVE)])
    groups = rng.integers(0, n_groups, n_samples).astype(np.int64)
    group_label = rng.random(n_groups) < positive_fraction
    keep = rng.random(n_samples) < homophily
    y = np.where(keep, group_label[groups], ~group_label[groups]).astype(np.float64)
    if y.min() == y.max():            # both classes present
        y[rng.integers(n_samples)] = 1.0 - y[0]
    X = rng.normal(size=(n_samples, n_features))
    k = max(1, n_features // 4)
    X[:, :k] += (separation / 2.0) * (2.0 * y - 1.0)[:, None]
    return X, y, groups


def make_citation_graph(n_samples=20000, n_classes=7, n_features=2000, degree=4.0,
                        homophily=0.8, words=20, topic_share=0.1, random_state=0):
    """A citation-like graph: communities (classes), homophilous edges, sparse binary
    bag-of-words features (for high-order ranking at real sizes).

    Every node gets a class uniformly. Each node cites ``degree / 2`` others on average
    (Poisson), a node of its own class with probability ``homophily``, any node
    otherwise; duplicates and self-citations are dropped. Each node holds ``words``
    word draws, a share ``topic_share`` of them from its class's own block of the
    vocabulary and the rest from the whole vocabulary (Zipf-like frequencies).

    Returns
    -------
    X : scipy.sparse.csr_matrix (n_samples, n_features), 0/1 values
    labels : ndarray of int64 in [0, n_classes)
    edges : ndarray of int64 (E, 2), u < v, unique
    """
    rng = check_random_state(random_state)
    _require("make_citation_graph", [
        ("n_samples", n_samples, lambda v: _integer(v, 2), "an integer >= 2"),
        ("n_classes", n_classes, lambda v: _integer(v, 2), "an integer >= 2"),
        ("n_features", n_features, lambda v: _integer(v, n_classes),
         f"an integer >= n_classes ({n_classes})"),
        ("words", words, lambda v: _integer(v, 1), "an integer >= 1"),
        ("degree", degree, *_NON_NEGATIVE),
        ("homophily", homophily, *_SHARE),
        ("topic_share", topic_share, *_SHARE)])
    labels = rng.integers(0, n_classes, n_samples).astype(np.int64)
    members = [np.flatnonzero(labels == c) for c in range(n_classes)]
    out = rng.poisson(degree / 2.0, n_samples)
    src = np.repeat(np.arange(n_samples), out)
    dst = rng.integers(0, n_samples, len(src))
    same = rng.random(len(src)) < homophily
    for c in range(n_classes):
        pick = same & (labels[src] == c)
        if members[c].size:
            dst[pick] = members[c][rng.integers(0, members[c].size, int(pick.sum()))]
    keep = src != dst
    pairs = np.sort(np.column_stack([src[keep], dst[keep]]), axis=1)
    edges = np.unique(pairs, axis=0).astype(np.int64) if len(pairs) else np.zeros((0, 2), np.int64)
    freq = 1.0 / np.arange(1, n_features + 1)
    freq /= freq.sum()
    block = n_features // n_classes
    draws = rng.choice(n_features, size=(n_samples, words), p=freq)
    topical = rng.random((n_samples, words)) < topic_share
    own = labels[:, None] * block + rng.integers(0, block, (n_samples, words))
    draws = np.where(topical, own, draws)
    rows = np.repeat(np.arange(n_samples), words)
    X = sp.csr_matrix((np.ones(rows.size), (rows, draws.ravel())), shape=(n_samples, n_features))
    X.data[:] = 1.0   # (repeated words count once)
    return X, labels, edges
