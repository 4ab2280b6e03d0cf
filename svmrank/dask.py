"""Dask as the engine for data beyond one machine (extra ``svmrank[dask]``).

:func:`read_svmlight` loads SVMlight shards into the workers' memory, one partition a
shard (queries whole), and checks them; ``RankSVM``/``APSVM``/``BinarySVM`` ``.fit``
accept the result, and their ``decision_function``/``predict`` score it on the
workers (in input order). Each cutting-plane iteration the driver broadcasts w; every
partition computes and keeps its scores, runs its per-query inference and returns its
sums (loss, inner products; Xᵀd for the planes the learner takes); the line search's
points s_b + t (s_c − s_b) are evaluated on the partitions' cached scores; the QP runs
on the driver. A query spanning partitions has its inference on the driver; a lost
partition is read again and its vectors made again. docs/dask.md gives the memory and
network arithmetic.
"""
import glob
import logging
import numbers
import os
import warnings

import numpy as np
import scipy.sparse as sp

try:
    import dask.utils
    import distributed
except ImportError:  # pragma: no cover - depends on the environment
    raise ImportError("svmrank.dask needs dask's distributed scheduler: "
                      "pip install svmrank[dask]") from None

from ._validation import check_matrix, query_segments
from .graded import graded_levels
from .inference import lai_queries_unchecked, true_coef
from .io.svmlight import example_lines, iter_svmlight, load_svmlight, open_data
from .problems.binary import BinaryProblem
from .problems.graded import GradedQueries, GradedRankingProblem
from .problems.linear import COPY_MAX_NNZ, matrix_product, transpose_product
from .problems.ranking import RankingProblem

__all__ = ["read_svmlight", "SvmlightPartitions", "connect", "score_svmlight", "shard_paths"]


def connect(address, timeout=10):
    """A ``distributed.Client`` for a scheduler address, or for ``local:N`` a new
    LocalCluster of N worker processes (one thread each); a one-line error when no
    scheduler answers."""
    if address.startswith("local:"):
        try:
            n = int(address[len("local:"):])
            if n < 1:
                raise ValueError
        except ValueError:
            raise ValueError(f"--dask: expected local:N with N a positive integer, got "
                             f"{address!r}") from None
        # (its workers' logs silenced: a task's error reaches the user as one line)
        cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                           dashboard_address=None,
                                           silence_logs=logging.CRITICAL)
        return distributed.Client(cluster)
    try:
        client = distributed.Client(address, timeout=timeout)
    except (OSError, TimeoutError, ValueError) as exc:  # (ValueError: not an address)
        raise ValueError(f"--dask: no Dask scheduler answers at {address!r} ({exc})") from None
    try:  # (a scheduler without workers would leave every task waiting, silently)
        client.wait_for_workers(1, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        client.close()
        raise ValueError(f"--dask: the Dask scheduler at {address!r} has no worker (waited "
                         f"{timeout} s: {exc})") from None
    return client


def shard_paths(paths_or_glob):
    """The files of a path, a glob (sorted) or a list of paths, as absolute paths (the
    workers open what the driver found, whatever their working directory), without
    the empty (0-byte) files that Spark and Hadoop write for empty partitions; a
    one-line ValueError naming the glob that matches nothing or the path that is not a
    file (checked before any cluster work). A file whose name looks like a glob
    (``run[1].txt``) is that file."""
    if isinstance(paths_or_glob, (str, os.PathLike)):
        pattern = os.fspath(paths_or_glob)
        paths = sorted(glob.glob(pattern)) if glob.has_magic(pattern) and not \
            os.path.isfile(pattern) else [pattern]
    else:
        paths = [os.fspath(p) for p in paths_or_glob]
    if not paths:
        raise ValueError(f"paths_or_glob: {paths_or_glob!r} matches no file")
    for path in paths:
        if not os.path.isfile(path):
            raise ValueError(f"paths_or_glob: {path}: no such file")
    kept = [os.path.abspath(p) for p in paths if os.path.getsize(p) > 0]
    if not kept:
        raise ValueError(f"paths_or_glob: {paths_or_glob!r}: every file is empty")
    return kept


def _load_shard(path, n_features):
    X, y, qid = load_svmlight(path, n_features=n_features)
    return X, y, qid


def _load_chunks(path, n_features, blocksize):
    return [(X, y, qid) for X, y, qid, _ in iter_svmlight(path, chunk_bytes=blocksize,
                                                          n_features=n_features)]


def _chunk(chunks, k):
    return chunks[k]


def _count(chunks):
    return len(chunks)


def _widen(part, width):
    """The partition with ``width`` columns (empty ones added)."""
    X, y, qid = part
    return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], width)), y, qid


def _partition_scores(part, w, intercept, labels=False):
    scores = np.asarray(part[0] @ w).ravel() + intercept
    return (scores, part[1], part[2]) if labels else scores


def _shard_summary(part):
    """Rows, width, labels, and the runs of equal qids (their qids and first rows)."""
    X, y, qid = part
    starts = np.flatnonzero(np.r_[True, qid[1:] != qid[:-1]]) if len(qid) else np.zeros(0, int)
    return {"n_rows": X.shape[0], "n_columns": X.shape[1], "nnz": X.nnz, "runs": qid[starts],
            "run_starts": starts, "labels": np.unique(y)}


def _score_shard(path, coef, intercept):
    """One shard read on a worker at its own width and scored with ``coef``: columns
    beyond the model's are cut (counted), missing ones are zeros."""
    X, y, qid = load_svmlight(path)
    n = coef.shape[0]
    cut_values = cut_lines = 0
    if X.shape[1] > n:
        extra = X[:, n:]
        cut_values, cut_lines = extra.nnz, int(np.count_nonzero(np.diff(extra.indptr)))
        X = X[:, :n].tocsr()
    else:
        X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n))
    return np.asarray(X @ coef).ravel() + intercept, y, qid, cut_values, cut_lines


def score_svmlight(paths_or_glob, coef, intercept=0.0, client=None):
    """Score SVMlight shards on a Dask cluster without keeping them: one task a shard
    reads it on a worker and returns its scores ``X @ coef + intercept``, labels and
    qids (24 bytes a row); the results come back in input order (shards in order,
    lines in order). Shards may have any width: feature indices beyond the model's
    are ignored (and counted), as SVM-light does.

    Parameters
    ----------
    paths_or_glob : str, path or list of them
    coef : array of shape (n_features,)
    intercept : float
    client : distributed.Client, optional
        Default: the current client.

    Returns
    -------
    scores, y, qid : ndarrays of shape (n_rows,)
    shards : list of (path, n_rows, cut_values, cut_lines)
        Per shard, its rows and the feature values (and lines holding them) cut.
    """
    paths = shard_paths(paths_or_glob)
    client = _current_client(client)
    coef = np.asarray(coef, dtype=np.float64).ravel()
    futures = [client.submit(_score_shard, p, coef, float(intercept), pure=False)
               for p in paths]
    parts = client.gather(futures)
    scores, y, qid = (np.concatenate([np.zeros(0)] + [r[k] for r in parts]) for k in range(3))
    return scores, y, qid, [(p, len(r[0]), r[3], r[4]) for p, r in zip(paths, parts)]


def _current_client(client):
    if client is not None:
        return client
    try:
        return distributed.get_client()
    except ValueError:
        raise ValueError("client: no Dask client is running; pass client= or create "
                         "distributed.Client(...) first") from None


class SvmlightPartitions:
    """SVMlight shards held in a Dask cluster's memory, one partition a shard.

    Made by :func:`read_svmlight`; ``RankSVM``, ``APSVM`` and ``BinarySVM`` ``.fit``
    take it as X (with y and qid None: they come from the shards).

    Attributes
    ----------
    client : distributed.Client
    paths : list of str
    partitions : list of distributed.Future
        Each holds (CSR X, y, qid) of one shard.
    n_rows : ndarray of int
        Rows of each partition.
    n_features : int
    labels : ndarray
        The distinct labels over all shards.
    nnz : int
        Stored values over all partitions.
    spanning : ndarray of int
        The qids whose lines lie in more than one partition.
    sources : list of (path, chunk, blocksize)
        Where each partition is read from (chunk None: the whole shard), to read it
        again when its worker is lost.
    """

    def __init__(self, client, paths, partitions, n_rows, n_features, labels):
        self.client, self.paths, self.partitions = client, paths, partitions
        self.n_rows, self.n_features, self.labels = n_rows, n_features, labels
        self.spanning, self.nnz = np.zeros(0, dtype=np.int64), 0
        self.sources = [(p, None, None) for p in paths]
        self.qid0_error = None  # lines without qid: apart over partitions (rank losses)

    @property
    def shape(self):
        return (int(self.n_rows.sum()), self.n_features)

    def problem(self, kind, **options):
        """The distributed problem of ``kind`` ("ranking", "graded" or "binary") over
        the partitions; ``options`` go to each partition's RankingProblem /
        GradedRankingProblem / BinaryProblem."""
        return DistributedProblem(self, kind, options)

    def decision_function(self, coef, intercept=0.0, labels=False):
        """The scores ``X @ coef + intercept`` of every row, computed on the workers
        partition by partition, returned in input order (shards in order, lines in
        order).

        Parameters
        ----------
        coef : array of shape (n_features,)
            Features beyond the shards' are dropped; the shards' features beyond
            ``coef``'s are ignored, with a warning (as SVM-light's classifiers do).
        intercept : float
        labels : bool
            Also return the rows' labels and qids (24 bytes a row in all).

        Returns
        -------
        ndarray of shape (n_rows,), or (scores, y, qid) with ``labels``
        """
        coef = np.asarray(coef, dtype=np.float64).ravel()
        if coef.shape[0] > self.n_features:  # (features the shards lack are zeros)
            coef = coef[:self.n_features]
        elif coef.shape[0] < self.n_features:  # (as SVM-light's classifiers do)
            warnings.warn(f"X: the shards have {self.n_features} features, the model "
                          f"{coef.shape[0]}: the values of features beyond "
                          f"{coef.shape[0]} are ignored", UserWarning, stacklevel=3)
            coef = np.r_[coef, np.zeros(self.n_features - coef.shape[0])]
        futures = [self.client.submit(_partition_scores, f, coef, float(intercept), labels,
                                      pure=False) for f in self.partitions]
        parts = self.client.gather(futures)
        if not labels:
            return np.concatenate([np.zeros(0)] + parts)
        return tuple(np.concatenate([np.zeros(0)] + [p[k] for p in parts]) for k in range(3))

    def query_pairs(self):
        """Pairs of different labels in each query, in qid order (0 for a query of one
        label): svm_rank_learn's C and ε scale (:func:`svmrank.losses.svm_rank_parameters`).
        Each partition sends its (qid, label, count) triples; a query that spans
        partitions is summed on the driver.

        Returns
        -------
        ndarray of int64, one entry a query
        """
        query, count = self._query_label_counts()
        sizes = np.bincount(query, weights=count)
        same = np.bincount(query, weights=count ** 2)
        return np.rint((sizes ** 2 - same) / 2).astype(np.int64)

    def query_sizes(self):
        """Rows of each query, in qid order (a query split over partitions summed)."""
        query, count = self._query_label_counts()
        return np.rint(np.bincount(query, weights=count)).astype(np.int64)

    def _query_label_counts(self):
        """(query number, rows) of every (qid, label) over the partitions, summed on
        the driver from each partition's (qid, label, count) triples."""
        parts = self.client.gather([self.client.submit(_label_counts, f, pure=False)
                                    for f in self.partitions])
        qid, label, count = (np.concatenate([p[k] for p in parts]) for k in range(3))
        keys, where = np.unique(np.column_stack([qid, label]), axis=0, return_inverse=True)
        count = np.bincount(where.ravel(), weights=count)  # rows a (qid, label)
        _, query = np.unique(keys[:, 0], return_inverse=True)
        return query.ravel(), count

    def gather(self):
        """(X, y, qid) of all the shards in one process (for tests and small data)."""
        parts = self.client.gather(self.partitions)
        return (sp.vstack([p[0] for p in parts], format="csr"),
                np.concatenate([p[1] for p in parts]), np.concatenate([p[2] for p in parts]))


def read_svmlight(paths_or_glob, blocksize=None, n_features=None, client=None):
    """Read SVMlight shards into a Dask cluster: one partition a shard, or with
    ``blocksize`` partitions of about that many bytes of text that keep queries whole
    (:func:`svmrank.io.iter_svmlight`, run by the worker that reads the shard).

    A query may continue from one shard into the next (its lines consecutive across
    the shards: the last lines of a shard and the first of the next); a qid seen again
    after other queries in another partition is refused, naming file:line. The rank
    losses run the inference of such a query on the driver (docs/dask.md). Every shard
    is read with the same number of features: ``n_features``; or None, the highest
    feature index, which must then be the same in every shard; or "max", the highest
    over all the shards (as the shards put together in one file would be read).

    Parameters
    ----------
    paths_or_glob : str, path or list of them
        A file, a glob pattern (``"data/part-*.txt"``), or a list of files.
    blocksize : int or str, optional
        Bytes of text a partition (queries are never cut: one larger than it makes a
        larger partition), or a size such as "64MB". None: one partition a shard.
    n_features : int, None or "max"
    client : distributed.Client, optional
        Default: the current client (``distributed.get_client()``).

    Returns
    -------
    SvmlightPartitions
    """
    widest = isinstance(n_features, str) and n_features == "max"
    if widest:
        n_features = None
    elif n_features is not None and (isinstance(n_features, (bool, np.bool_)) or not isinstance(
            n_features, numbers.Integral) or not 0 <= n_features <= np.iinfo(np.int32).max):
        raise ValueError(f"n_features: expected None, 'max' or an integer in [0, "
                         f"{np.iinfo(np.int32).max}], got {n_features!r}")
    given = blocksize
    if isinstance(blocksize, str):  # ("64MB", as dask's readers take it)
        try:
            blocksize = dask.utils.parse_bytes(blocksize)
        except ValueError:
            blocksize = 0  # (refused below, naming what was given)
    if blocksize is not None and (isinstance(blocksize, bool)
                                  or not isinstance(blocksize, numbers.Real)
                                  or int(blocksize) != blocksize or blocksize < 1):
        raise ValueError(f"blocksize: expected None, a positive integer or a size such as "
                         f"'64MB', got {given!r}")
    paths = shard_paths(paths_or_glob)
    client = _current_client(client)
    # each shard is read on a worker and stays there; only its summary comes back
    if blocksize is None:
        futures = [client.submit(_load_shard, p, n_features, pure=False) for p in paths]
        sources = [(p, None, None) for p in paths]
    else:
        shards = [client.submit(_load_chunks, p, n_features, int(blocksize), pure=False)
                  for p in paths]
        counts = client.gather([client.submit(_count, f) for f in shards])
        futures = [client.submit(_chunk, f, k) for f, n in zip(shards, counts) for k in range(n)]
        sources = [(p, k, int(blocksize)) for p, n in zip(paths, counts) for k in range(n)]
        del shards  # (the chunks' futures keep what they need)
    summaries = client.gather([client.submit(_shard_summary, f) for f in futures])
    widths = {src[0]: s["n_columns"] for src, s in zip(sources, summaries)}
    if n_features is None and not widest and len(set(widths.values())) > 1:
        detail = ", ".join(f"{p}: {n}" for p, n in widths.items())
        raise ValueError(f"paths_or_glob: the shards have different feature counts ({detail}); "
                         "pass n_features= (an int, or 'max' for the highest)")
    width = n_features if n_features is not None else max(widths.values())
    if widest:  # (the narrower partitions padded where they are)
        futures = [f if s["n_columns"] == width else client.submit(_widen, f, width)
                   for f, s in zip(futures, summaries)]
    labels = np.unique(np.concatenate([s["labels"] for s in summaries]))
    n_rows = np.array([s["n_rows"] for s in summaries])
    data = SvmlightPartitions(client, paths, futures, n_rows, int(width), labels)
    data.sources = sources
    data.nnz = int(sum(s["nnz"] for s in summaries))
    data.spanning, qid0_error = _spanning_queries(client, sources, summaries)
    data.qid0_error = qid0_error
    return data


def _spanning_queries(client, sources, summaries):
    """The qids whose lines lie in more than one partition, checked to be consecutive
    (the end of one partition, whole partitions, the start of the next); a one-line
    error naming file:line otherwise (for qid 0, the lines without qid:, only returned:
    BinarySVM ignores queries)."""
    runs = []  # (qid, partition, first row) of each run of equal qids, over all partitions
    for k, s in enumerate(summaries):
        for j, (q, row) in enumerate(zip(s["runs"].tolist(), s["run_starts"].tolist())):
            if j == 0 and runs and runs[-1][0] == q and runs[-1][3] == k - 1:
                runs[-1][3] = k  # (the query goes on from the previous partition)
                continue
            runs.append([q, k, row, k])
    first, spanning, qid0_error = {}, set(), None
    for q, k, row, last in runs:
        if last > k:
            spanning.add(q)
        if q not in first:
            first[q] = (k, last)
            continue
        if first[q][1] == first[q][0] and last == k == first[q][0]:
            continue  # (within one partition a query's lines may be apart, as in memory)
        path, line = _place(client, sources, k, row)
        message = (f"{path}:{line}: qid:{q} appears again after other queries, and its lines "
                   f"are in more than one partition; keep a query's lines consecutive across "
                   "the shards")
        if q != 0:
            raise ValueError(message)
        qid0_error = qid0_error or message
        spanning.add(q)
    return np.array(sorted(spanning), dtype=np.int64), qid0_error


def _place(client, sources, k, row):
    """(path, line number) of row ``row`` of partition ``k`` (read again, on a worker:
    only on an error path)."""
    path, chunk, _ = sources[k]
    if chunk is not None:  # rows of the shard's earlier chunks come first
        row += sum(_rows_of(client, [s for s in sources if s[0] == path and s[1] < chunk]))
    return path, client.submit(_line_of, path, row, pure=False).result()


def _rows_of(client, sources):
    return [client.submit(_count_rows, *src, pure=False).result() for src in sources]


def _count_rows(path, chunk, blocksize):
    return _load_source((path, chunk, blocksize), None)[0].shape[0]


def _line_of(path, row):
    with open_data(path) as (fh, _):
        lines = example_lines(fh.read())
    return int(lines[row]) if row < len(lines) else row + 1


def _load_source(source, n_features):
    """A partition's (X, y, qid) read again from its source: a whole shard, or chunk
    ``chunk`` of ``iter_svmlight(path, blocksize)``."""
    path, chunk, blocksize = source
    if chunk is None:
        return _load_shard(path, n_features)
    for k, (X, y, qid, _) in enumerate(iter_svmlight(path, chunk_bytes=blocksize,
                                                     n_features=n_features)):
        if k == chunk:
            return X, y, qid
    raise ValueError(f"{path}: has fewer than {chunk + 1} chunks of {blocksize} bytes now")


class _ReadingX(RankingProblem):
    """A partition's ranking problem whose products read X (no copies), as those of
    the whole set in memory above ``COPY_MAX_NNZ``: X w and Xᵀd by the scatter over X."""

    product_copies = False


class _GradedReadingX(GradedRankingProblem):
    """:class:`_ReadingX` for the graded losses."""

    product_copies = False


# a partition's problem by kind, with product copies and reading X
_PROBLEMS = {"ranking": (RankingProblem, _ReadingX),
             "graded": (GradedRankingProblem, _GradedReadingX)}


def _ranked(labels, qid):
    """Whether some query has two different labels."""
    order, offsets = query_segments(qid, len(qid))
    labels, starts = np.asarray(labels, dtype=np.float64)[order], offsets[:-1]
    return bool(np.any(np.maximum.reduceat(labels, starts) != np.minimum.reduceat(labels, starts)))


class _Partition:
    """The problem of one partition on its worker, and the vectors (scores, coefficients)
    the driver refers to by number: the driver moves only w, scalars and Xᵀd. Every
    task on a partition is pinned to its worker and chained after the previous one, so
    they see the same object in order.

    The rows of queries that span partitions (``spanning``) are kept apart as pieces,
    after the local problem's rows in every vector: their scores go to the driver,
    which runs their inference and sends their coefficients back (:meth:`complete`);
    rows of ``dropped`` queries (spanning, but not ranked) are left out."""

    def __init__(self, part, kind, options, spanning=(), dropped=(), scatter=False):
        X, y, qid = part
        self.scatter = scatter  # no product copies, as the whole set in memory
        self.kind, self.vectors, self.pieces, self.n_local = kind, {}, [], 0
        self.problem, self.n_skipped, self.n_queries_total = None, 0, 0
        if kind == "binary":
            self.problem = BinaryProblem(X, y, **options)
            return
        keep = None
        if len(spanning) or len(dropped):
            apart = np.isin(qid, np.concatenate([spanning, dropped]))
            for q in _in_order(qid[np.isin(qid, spanning)]):
                rows = np.flatnonzero(qid == q)
                self.pieces.append((int(q), check_matrix(X[rows])))
            if apart.any():  # (the problem reads the other rows through ``keep``)
                keep = np.flatnonzero(~apart)
                y, qid = y[keep], qid[keep]
        if len(qid) == 0:
            return
        self.n_queries_total = len(np.unique(qid))
        if not _ranked(y if kind == "graded" else y > 0, qid):  # (no problem to make)
            self.n_skipped = self.n_queries_total
            return
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (the driver warns once with the total)
            self.problem = _PROBLEMS[kind][scatter](X, y, qid=qid, rows=keep, **options)
        self.n_skipped = self.problem.n_skipped
        self.n_local = len(self.problem.rows)

    def summary(self):
        p = self.problem
        n = 0 if p is None else (p.X.shape[0] if self.kind == "binary" else p.n_queries)
        return {"count": n, "skipped": self.n_skipped, "total": self.n_queries_total,
                "pieces": [(q, Xp.shape[0]) for q, Xp in self.pieces]}

    def scores(self, w, out):
        own = [np.zeros(0) if self.problem is None else self.problem.scores(w)]
        self.vectors[out] = np.concatenate(own + [matrix_product(Xp, w)
                                                  for _, Xp in self.pieces])

    def combine(self, a, b, t, u, out):
        """t a + u b (u = 0: t a), as the learner's line search forms its points."""
        a = self.vectors[a]
        self.vectors[out] = t * a if u == 0 else (a + u * self.vectors[b] if t == 1
                                                  else t * a + u * self.vectors[b])

    def dot(self, a, b):
        return float(self.vectors[a] @ self.vectors[b])

    def violation(self, s, count, out):
        """The sum of the losses of this partition's own queries, keeping d as vector
        ``out``; then, without pieces, d·v for every vector v held (the line search's
        inner products: s·d and d·(s_c − s_b)), or with pieces their scores (the dots
        come from :meth:`complete`). ``count`` is the divisor of the whole set
        (queries, or rows for the binary loss)."""
        p, scores = self.problem, self.vectors[s]
        loss, d = 0.0, np.zeros(len(scores))
        if self.kind == "binary":
            flipped = p.sign * scores < 1.0
            loss, d = float(flipped.sum()), np.where(flipped, p.sign / count, 0.0)
        elif p is not None:
            losses, d[:self.n_local] = p.query_violations(scores[:self.n_local])
            if count > 1:
                d[:self.n_local] /= count
            loss = float(losses.sum())
        self.vectors[out] = d
        if self.pieces:
            return loss, None, scores[self.n_local:]
        return loss, self.dots(out), None

    def complete(self, out, d_pieces):
        """The pieces' coefficients from the driver into d (vector ``out``); its inner
        products, as :meth:`violation` returns them."""
        self.vectors[out][self.n_local:] = d_pieces
        return self.dots(out)

    def dots(self, out):
        d = self.vectors[out]
        return {k: float(v @ d) for k, v in self.vectors.items()}

    def joint(self, out):
        """X_pᵀd for vector ``out`` (None without rows)."""
        d = self.vectors[out]
        if self.problem is None and not self.pieces:
            return None
        own = d[:self.n_local] if self.pieces else d
        joint = np.zeros(0) if self.problem is None else self.problem.joint_feature(own)
        first = self.n_local
        for _, Xp in self.pieces:
            piece = transpose_product(Xp, d[first:first + Xp.shape[0]])
            joint = piece if joint.size == 0 else joint + piece
            first += Xp.shape[0]
        return joint


def _in_order(values):
    """The distinct values in order of first appearance."""
    _, first = np.unique(values, return_index=True)
    return values[np.sort(first)]


def _label_counts(part):
    """The partition's distinct (qid, label) pairs and their row counts."""
    _, y, qid = part
    keys, counts = np.unique(np.column_stack([qid, y]), axis=0, return_counts=True)
    return keys[:, 0], keys[:, 1], counts


def _span_labels(part, spanning):
    """Per spanning qid held here, its rows' labels (in row order), for the driver."""
    _, y, qid = part
    return {int(q): y[qid == q] for q in _in_order(qid[np.isin(qid, spanning)])}


def _make_partition(part, kind, options, spanning, dropped, scatter):
    return _Partition(part, kind, options, spanning, dropped, scatter)


def _rebuild_partition(source, n_features, kind, options, spanning, dropped, scatter):
    return _Partition(_load_source(source, n_features), kind, options, spanning, dropped,
                      scatter)


def _summary(partition):
    return partition.summary()


def _call_group(partitions, previous, free, method, args):
    """Run ``partition.method(*a)`` for the partitions of one worker (one task a worker
    and call), after dropping the vectors numbered ``free`` (``previous``, the
    partitions' last tasks, only orders them); their results, in order."""
    out = []
    for partition, a in zip(partitions, args):
        for k in free:
            partition.vectors.pop(k, None)
        out.append(getattr(partition, method)(*a))
    return out


def _replay(partition, previous, steps, free):
    """Make the vectors of a rebuilt partition again: ``steps`` are the calls that made
    them (in order), then the vectors not held any more are dropped."""
    for method, args in steps:
        getattr(partition, method)(*args)
    for k in free:
        partition.vectors.pop(k, None)


class DistributedVector:
    """A vector split over the partitions (scores or coefficients), each piece held by
    the worker of its partition under a number. Supports what the learner's line search
    does with scores: ``a + b``, ``a - b``, ``t * a`` and ``a @ b`` (a float summed over
    the partitions)."""

    def __init__(self, problem, key, dots=None, joint=None):
        self.problem, self.key, self.joint = problem, key, joint
        self.dots = {} if dots is None else dots  # key of v -> self·v, computed with self

    def _combine(self, other, t, u):
        out = self.problem.new_key()
        self.problem.call("combine", self.key, other.key if other is not None else self.key,
                          t, u, out, makes=out)
        return DistributedVector(self.problem, out)

    def __add__(self, other):
        return self._combine(other, 1.0, 1.0)

    def __sub__(self, other):
        return self._combine(other, 1.0, -1.0)

    def __mul__(self, t):
        return self._combine(None, float(t), 0.0)

    __rmul__ = __mul__

    def __matmul__(self, other):
        for a, b in ((self, other), (other, self)):
            if b.key in a.dots:
                return a.dots[b.key]
        return float(sum(self.problem.gather(self.problem.call("dot", self.key, other.key))))

    def __del__(self):
        try:
            self.problem.free.append(self.key)
        except Exception:  # pragma: no cover - interpreter shutdown
            pass


class DistributedProblem:
    """The cutting-plane learner's score interface (``scores``, ``violation_at_scores``,
    ``joint_feature``, ``most_violated``) map-reduced over :class:`SvmlightPartitions`.

    Scores and coefficients stay on the workers (:class:`DistributedVector`); per call
    the driver sends w or a few scalars, and an inference returns from each partition
    its loss sum and a few inner products: one round trip a point of the line search,
    and one more for Xᵀd (n_features floats a partition) when the learner takes the
    point's cutting plane. Queries that span partitions take a second: their
    scores come to the driver, which runs their inference and sends their
    coefficients back.

    The driver keeps the calls that made every held vector: a partition whose worker
    left the cluster is read again from its source on a live worker, its vectors are
    made again by those calls, and the waiting call is sent to it again."""

    def __init__(self, data, kind, options):
        if kind not in ("ranking", "graded", "binary"):
            raise ValueError(f"kind: expected 'ranking', 'graded' or 'binary', got {kind!r}")
        ranks = kind != "binary"
        if ranks and getattr(data, "qid0_error", None):
            raise ValueError(data.qid0_error)
        if kind == "graded":  # (bad labels refused before any work, as in memory)
            graded_levels(data.labels)
        self.client, self.kind, self.options = data.client, kind, options
        self.sources, self.n_features_read = data.sources, data.n_features
        spanning = data.spanning if ranks else np.zeros(0, dtype=np.int64)
        self.span_labels, dropped = {}, []
        if len(spanning):  # their labels (8 bytes a row), in row order over the partitions
            pieces = self.client.gather([self.client.submit(_span_labels, f, spanning)
                                         for f in data.partitions])
            for q in spanning.tolist():
                y = np.concatenate([p[q] for p in pieces if q in p])
                labels = graded_levels(y) if kind == "graded" else y > 0
                if len(np.unique(labels)) > 1:
                    self.span_labels[q] = labels
                else:
                    dropped.append(q)
        self.spanning = np.array(sorted(self.span_labels), dtype=np.int64)
        self.dropped = np.array(dropped, dtype=np.int64)
        self.span_offsets = np.concatenate(
            [[0], np.cumsum([len(self.span_labels[q]) for q in self.spanning])]).astype(np.int64)
        if kind == "graded" and len(self.spanning):
            self.span_queries = GradedQueries(
                np.concatenate([self.span_labels[q] for q in self.spanning]),
                self.span_offsets, options["loss"])
        # a set too large for the product copies in memory has X w and Xᵀd read X
        # there: its partitions make no copies either (on many features the scatter is
        # the faster Xᵀd, and setup and worker memory drop: bench_scale.py dask)
        self.scatter = getattr(data, "nnz", 0) > COPY_MAX_NNZ
        self.parts = [self.client.submit(_make_partition, f, kind, options, self.spanning,
                                         self.dropped, self.scatter, pure=False)
                      for f in data.partitions]
        summaries = self.client.gather([self.client.submit(_summary, p) for p in self.parts])
        who_has = self.client.who_has(self.parts)
        self.workers = [list(who_has[p.key])[:1] for p in self.parts]
        self.last = [None] * len(self.parts)
        self.free, self.keys = [], 0
        self.steps, self.held = [], set()  # the calls that made vectors; their numbers
        self.pending = None  # the call whose results are awaited: (method, args by part)
        self.poll_seconds = 1.0  # how often a waiting gather checks that the workers live
        self.pieces = [s["pieces"] for s in summaries]
        self.count = sum(s["count"] for s in summaries) + len(self.spanning)
        self.n_skipped = sum(s["skipped"] for s in summaries) + len(self.dropped)
        self.n_queries_total = sum(s["total"] for s in summaries) + len(spanning)
        if ranks:  # (as the problems in memory say it)
            if self.count == 0:
                raise ValueError("y: no query has two relevance levels, so the rank loss is "
                                 "undefined everywhere" if kind == "graded" else
                                 "y: no query has both a relevant (y > 0) and a non-relevant "
                                 "sample, so the rank loss is undefined everywhere")
            if self.n_skipped:
                warnings.warn(f"{self.n_skipped} of {self.n_queries_total} queries " + (
                    "have a single relevance level" if kind == "graded" else
                    "have no relevant or no non-relevant sample") + " and are skipped",
                    UserWarning, stacklevel=4)
        self.n_features = data.n_features + (kind == "binary" and options.get("bias", 1.0) != 0)

    def new_key(self):
        self.keys += 1
        return self.keys

    def call(self, method, *args, makes=None, each=None):
        """Submit ``method(*args)`` on every partition (after its previous task), or
        with ``each`` ({partition: args}) on those partitions only, as one task a
        worker; ``makes``: the number of the vector it makes (its call is kept, to make
        it again). Returns the round to :meth:`gather`: the partitions and, per task,
        its future and partitions."""
        free, self.free = self.free, []
        self.held.difference_update(free)
        each = {k: args for k in range(len(self.parts))} if each is None else each
        if makes is not None:
            self.held.add(makes)
            self.steps.append((method, each, makes))
            if len(self.steps) > 4 * len(self.held) + 32:
                self.needed_steps()
        self.pending = (method, each, free)
        return list(each), self._submit(list(each), free, method, each)

    def _submit(self, ks, free, method, each):
        """One task a worker for the partitions ``ks``: [(future, its partitions)]."""
        groups = {}
        for k in ks:
            groups.setdefault(self.workers[k][0] if self.workers[k] else None, []).append(k)
        tasks = []
        for worker, group in groups.items():
            previous = list({f.key: f for f in (self.last[k] for k in group)
                             if f is not None}.values())
            future = self.client.submit(
                _call_group, [self.parts[k] for k in group], previous, free, method,
                [each[k] for k in group], workers=None if worker is None else [worker],
                allow_other_workers=False, pure=False)
            for k in group:
                self.last[k] = future
            tasks.append((future, group))
        return tasks

    def gather(self, call):
        """The results of a :meth:`call`, in its partitions' order; when a partition's
        worker has left the cluster (its pinned tasks could never run), the partition
        is rebuilt and the call sent to it again. Every wait is bounded
        (``poll_seconds``), so that a worker lost while the results are computed or
        fetched is seen."""
        ks, tasks = call
        fetch_seconds = self.poll_seconds
        while True:
            futures = [f for f, _ in tasks]
            try:
                distributed.wait(futures, timeout=self.poll_seconds)
            except distributed.TimeoutError:
                pass
            else:  # (a task may fail because Dask, on its own, recomputed a lost input)
                if not any(f.status == "error" for f in futures):
                    try:
                        results = self.fetch(futures, fetch_seconds)
                    except (distributed.TimeoutError, TimeoutError):
                        # a lost result is computed again on its pinned worker: never, if
                        # the worker left; or the results are large: wait longer
                        fetch_seconds *= 2
                    else:
                        by_partition = {k: r for (_, group), rs in zip(tasks, results)
                                        for k, r in zip(group, rs)}
                        return [by_partition[k] for k in ks]
            lost = self.lost_partitions()
            if lost:
                tasks = self.recover(lost, tasks)
            elif any(f.status == "error" for f in futures):
                self.client.gather(futures)  # (raises the task's error)

    def fetch(self, futures, seconds):
        """The results of finished ``futures``, or a TimeoutError after ``seconds``
        (the transfer is then abandoned)."""
        return self.client.sync(self.client._gather, futures, callback_timeout=seconds)

    def alive_workers(self):
        """The addresses of the workers in the cluster."""
        try:
            info = self.client.scheduler_info(n_workers=-1)  # (all the workers)
        except TypeError:  # pragma: no cover - distributed before 2025.4 lists all
            info = self.client.scheduler_info()
        return set(info["workers"])

    def lost_partitions(self):
        """The partitions whose worker is not in the cluster any more."""
        alive = self.alive_workers()
        return [k for k, w in enumerate(self.workers) if w and w[0] not in alive]

    def recover(self, lost, tasks):
        """Rebuild the ``lost`` partitions from their sources on live workers, make their
        held vectors again (the kept calls, in order) and send them the waiting call;
        returns ``tasks`` (of :meth:`call`) with those of lost partitions replaced. A
        partition that cannot be rebuilt (its file gone, say) is a one-line
        RuntimeError."""
        method, each, free = self.pending
        alive = sorted(self.alive_workers())
        steps = [st for st in self.needed_steps() if st[1] is not each]  # (not the waiting one)
        unheld = sorted({made for _, _, made in steps} - self.held)
        for j, k in enumerate(lost):
            target = [alive[j % len(alive)]]
            part = self.client.submit(_rebuild_partition, self.sources[k], self.n_features_read,
                                      self.kind, self.options, self.spanning, self.dropped,
                                      self.scatter, workers=target, allow_other_workers=False, pure=False)
            replayed = self.client.submit(
                _replay, part, None, [(m, e[k]) for m, e, _ in steps if k in e], unheld,
                workers=target, allow_other_workers=False, pure=False)
            while True:
                try:
                    replayed.result(timeout=self.poll_seconds)
                    break
                except (distributed.TimeoutError, TimeoutError):
                    if target[0] not in self.alive_workers():
                        raise RuntimeError(f"Dask worker {target[0]} left the cluster while "
                                           f"partition {k} was read again on it (after worker "
                                           f"{self.workers[k][0]}); fit again") from None
                except Exception as exc:  # noqa: BLE001 - named in the message
                    raise RuntimeError(f"Dask worker {self.workers[k][0]} left the cluster "
                                       f"mid-fit with partition {k}, and reading it again from "
                                       f"{self.sources[k][0]} failed ({type(exc).__name__}: "
                                       f"{exc}); fit again") from None
            self.parts[k], self.workers[k], self.last[k] = part, target, replayed
        # (a task is one worker's: all its partitions are lost, or none)
        again = [k for _, group in tasks for k in group if set(group) & set(lost)]
        kept = [(f, group) for f, group in tasks if not set(group) & set(lost)]
        return kept + self._submit(again, free, method, each)

    def needed_steps(self):
        """The kept calls that the held vectors depend on, in order (the others are
        forgotten)."""
        makers = {}
        for method, each, made in self.steps:
            makers.setdefault(made, []).append((method, next(iter(each.values()))))
        needed, stack = set(), list(self.held)
        while stack:
            key = stack.pop()
            if key in needed or key not in makers:
                continue
            needed.add(key)
            for method, args in makers[key]:
                if method == "combine":
                    stack += [args[0], args[1]]
                elif method == "violation":
                    stack.append(args[0])
        self.steps = [st for st in self.steps if st[2] in needed]
        return list(self.steps)

    def scores(self, w):
        out = self.new_key()
        self.call("scores", np.asarray(w, dtype=np.float64), out, makes=out)
        return DistributedVector(self, out)

    def violation_at_scores(self, scores):
        out = self.new_key()
        results = self.gather(self.call("violation", scores.key, self.count, out, makes=out))
        loss = float(sum(r[0] for r in results))
        dots = [r[1] for r in results if r[2] is None]
        if len(self.spanning):
            spanning_loss, d_pieces = self.spanning_inference([r[2] for r in results])
            loss += spanning_loss
            each = {k: (out, d) for k, d in d_pieces.items()}
            dots += self.gather(self.call("complete", each=each))
            self.steps.append(("complete", each, out))  # (d is made again with its pieces)
        common = set.intersection(*(set(p) for p in dots))  # (held by every partition)
        return loss / self.count, DistributedVector(self, out, {k: float(sum(p[k] for p in dots))
                                                                for k in common})

    def spanning_inference(self, piece_scores):
        """The loss sum of the queries that span partitions and their coefficients
        d / count, split by partition ({partition: its pieces' d}): the scores of each
        such query are put together in row order and its inference runs here."""
        scores = {q: [] for q in self.span_labels}
        for k, pieces in enumerate(self.pieces):
            first = 0
            for q, n in pieces:
                scores[q].append(piece_scores[k][first:first + n])
                first += n
        queries, offsets = self.spanning.tolist(), self.span_offsets
        s = np.concatenate([np.concatenate(scores[q]) for q in queries])
        if self.kind == "graded":
            losses, d = self.span_queries(s)
        else:
            relevant = np.concatenate([self.span_labels[q] for q in queries])
            coef, losses, _ = lai_queries_unchecked(s, relevant, None, offsets,
                                                    self.options.get("loss", "ap"),
                                                    self.options.get("lai", "qs"))
            d = np.concatenate([true_coef(relevant[a:b])
                                for a, b in zip(offsets[:-1], offsets[1:])])
            d -= coef
        if self.count > 1:
            d /= self.count
        start = dict(zip(queries, offsets[:-1].tolist()))
        taken = dict.fromkeys(queries, 0)
        out = {}
        for k, pieces in enumerate(self.pieces):
            if not pieces:
                continue
            parts = []
            for q, n in pieces:
                a = start[q] + taken[q]
                parts.append(d[a:a + n])
                taken[q] += n
            out[k] = np.concatenate(parts)
        return float(losses.sum()), out

    def joint_feature(self, d):
        """Xᵀd, summed over the partitions (one round trip, the first time it is asked)."""
        if d.joint is None:
            parts = [j for j in self.gather(self.call("joint", d.key)) if j is not None]
            d.joint = np.sum(parts, axis=0) if parts else np.zeros(self.n_features)
        return d.joint

    def most_violated(self, w):
        loss, d = self.violation_at_scores(self.scores(w))
        return loss, self.joint_feature(d)

