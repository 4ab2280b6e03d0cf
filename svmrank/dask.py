"""Dask as the engine for data beyond one machine (extra ``svmrank[dask]``).

:func:`read_svmlight` loads SVMlight shards into the workers' memory, one partition a
shard (queries whole), and checks them; ``RankSVM``/``APSVM``/``BinarySVM`` ``.fit``
accept the result, and their ``decision_function``/``predict`` score it on the
workers (in input order). Each cutting-plane iteration the driver broadcasts w; every
partition computes and keeps its scores, runs its per-query inference and returns its
sums (loss, Xᵀd, counts); the line search's points s_b + t (s_c − s_b) and their inner
products are evaluated on the partitions' cached scores; the QP runs on the driver.
docs/dask.md gives the memory and network arithmetic.
"""
import glob
import os
import warnings

import numpy as np

try:
    import distributed
except ImportError:  # pragma: no cover - depends on the environment
    raise ImportError("svmrank.dask needs dask's distributed scheduler: "
                      "pip install svmrank[dask]") from None

from .io.svmlight import iter_svmlight, load_svmlight
from .problems.binary import BinaryProblem
from .problems.ranking import RankingProblem

__all__ = ["read_svmlight", "SvmlightPartitions", "connect"]


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
        cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                           dashboard_address=None)
        return distributed.Client(cluster)
    try:
        return distributed.Client(address, timeout=timeout)
    except (OSError, TimeoutError) as exc:
        raise ValueError(f"--dask: no Dask scheduler answers at {address!r} ({exc})") from None


def _expand(paths_or_glob):
    if isinstance(paths_or_glob, (str, os.PathLike)):
        pattern = os.fspath(paths_or_glob)
        paths = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
    else:
        paths = [os.fspath(p) for p in paths_or_glob]
    if not paths:
        raise ValueError(f"paths_or_glob: {paths_or_glob!r} matches no file")
    for path in paths:
        if not os.path.isfile(path):
            raise ValueError(f"paths_or_glob: {path}: no such file")
    return paths


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


def _partition_scores(part, w, intercept):
    return np.asarray(part[0] @ w).ravel() + intercept


def _shard_summary(part):
    X, y, qid = part
    return {"n_rows": X.shape[0], "n_columns": X.shape[1], "qids": np.unique(qid),
            "labels": np.unique(y)}


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
    """

    def __init__(self, client, paths, partitions, n_rows, n_features, labels):
        self.client, self.paths, self.partitions = client, paths, partitions
        self.n_rows, self.n_features, self.labels = n_rows, n_features, labels
        self.unlabelled_partitions = 0  # partitions with lines without qid

    @property
    def shape(self):
        return (int(self.n_rows.sum()), self.n_features)

    def problem(self, kind, **options):
        """The distributed problem of ``kind`` ("ranking" or "binary") over the
        partitions; ``options`` go to each partition's RankingProblem / BinaryProblem."""
        return DistributedProblem(self, kind, options)

    def decision_function(self, coef, intercept=0.0):
        """The scores ``X @ coef + intercept`` of every row, computed on the workers
        partition by partition, returned in input order (shards in order, lines in
        order).

        Parameters
        ----------
        coef : array of shape (n_features,)
        intercept : float

        Returns
        -------
        ndarray of shape (n_rows,)
        """
        coef = np.asarray(coef, dtype=np.float64).ravel()
        if coef.shape[0] != self.n_features:
            raise ValueError(f"X: the shards have {self.n_features} features, but the model "
                             f"has {coef.shape[0]}; read them with n_features={coef.shape[0]}")
        futures = [self.client.submit(_partition_scores, f, coef, float(intercept), pure=False)
                   for f in self.partitions]
        return np.concatenate([np.zeros(0)] + self.client.gather(futures))

    def gather(self):
        """(X, y, qid) of all the shards in one process (for tests and small data)."""
        import scipy.sparse as sp
        parts = self.client.gather(self.partitions)
        return (sp.vstack([p[0] for p in parts], format="csr"),
                np.concatenate([p[1] for p in parts]), np.concatenate([p[2] for p in parts]))


def read_svmlight(paths_or_glob, blocksize=None, n_features=None, client=None):
    """Read SVMlight shards into a Dask cluster: one partition a shard, or with
    ``blocksize`` partitions of about that many bytes of text that keep queries whole
    (:func:`svmrank.io.iter_svmlight`, run by the worker that reads the shard).

    The lines of a query must lie in one shard (a query split across shards is
    refused). Lines without ``qid:`` (qid 0) may be spread over partitions for
    ``BinarySVM``; the rank losses read them as one query, which must then lie in one
    partition. Every shard is read with the same number of features: ``n_features``,
    or the highest feature index, which must then be the same in every shard.

    Parameters
    ----------
    paths_or_glob : str, path or list of them
        A file, a glob pattern (``"data/part-*.txt"``), or a list of files.
    blocksize : int, optional
        Bytes of text a partition (queries are never cut: one larger than it makes a
        larger partition). None: one partition a shard.
    n_features : int, optional
    client : distributed.Client, optional
        Default: the current client (``distributed.get_client()``).

    Returns
    -------
    SvmlightPartitions
    """
    if blocksize is not None and (isinstance(blocksize, bool) or int(blocksize) != blocksize
                                  or blocksize < 1):
        raise ValueError(f"blocksize: expected None or a positive integer, got {blocksize!r}")
    paths = _expand(paths_or_glob)
    if client is None:
        try:
            client = distributed.get_client()
        except ValueError:
            raise ValueError("client: no Dask client is running; pass client= or create "
                             "distributed.Client(...) first") from None
    # each shard is read on a worker and stays there; only its summary comes back
    if blocksize is None:
        futures = [client.submit(_load_shard, p, n_features, pure=False) for p in paths]
        owners = list(paths)
    else:
        shards = [client.submit(_load_chunks, p, n_features, int(blocksize), pure=False)
                  for p in paths]
        counts = client.gather([client.submit(_count, f) for f in shards])
        futures = [client.submit(_chunk, f, k) for f, n in zip(shards, counts) for k in range(n)]
        owners = [p for p, n in zip(paths, counts) for _ in range(n)]
        del shards  # (the chunks' futures keep what they need)
    summaries = client.gather([client.submit(_shard_summary, f) for f in futures])
    widths = {p: s["n_columns"] for p, s in zip(owners, summaries)}
    if n_features is None and len(set(widths.values())) > 1:
        detail = ", ".join(f"{p}: {n}" for p, n in widths.items())
        raise ValueError(f"paths_or_glob: the shards have different feature counts ({detail}); "
                         "pass n_features=")
    width = n_features if n_features is not None else widths[paths[0]]
    seen, unlabelled = {}, 0
    for path, s in zip(owners, summaries):
        unlabelled += bool((s["qids"] == 0).any())
        for q in s["qids"].tolist():
            if q in seen and seen[q] != path and q != 0:
                raise ValueError(f"paths_or_glob: query qid:{q} is split across {seen[q]} and "
                                 f"{path}; keep each query's lines in one shard")
            seen[q] = path
    labels = np.unique(np.concatenate([s["labels"] for s in summaries]))
    n_rows = np.array([s["n_rows"] for s in summaries])
    data = SvmlightPartitions(client, paths, futures, n_rows, int(width), labels)
    data.unlabelled_partitions = unlabelled
    return data


class _Partition:
    """The problem of one partition on its worker, and the vectors (scores, coefficients)
    the driver refers to by number: the driver moves only w, scalars and Xᵀd. Every
    task on a partition is pinned to its worker and chained after the previous one, so
    they see the same object in order."""

    def __init__(self, part, kind, options):
        X, y, qid = part
        self.kind, self.vectors = kind, {}
        self.problem, self.n_skipped, self.n_queries_total = None, 0, 0
        if kind == "binary":
            self.problem = BinaryProblem(X, y, **options)
            return
        self.n_queries_total = len(np.unique(qid))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (the driver warns once with the total)
            try:
                self.problem = RankingProblem(X, y, qid=qid, **options)
            except ValueError:  # no ranked query in this partition
                self.n_skipped = self.n_queries_total
                return
        self.n_skipped = self.problem.n_skipped

    def summary(self):
        p = self.problem
        n = 0 if p is None else (p.X.shape[0] if self.kind == "binary" else p.n_queries)
        return {"count": n, "skipped": self.n_skipped, "total": self.n_queries_total}

    def scores(self, w, out):
        self.vectors[out] = np.zeros(0) if self.problem is None else self.problem.scores(w)

    def combine(self, a, b, t, u, out):
        """t a + u b (u = 0: t a), as the learner's line search forms its points."""
        a = self.vectors[a]
        self.vectors[out] = t * a if u == 0 else (a + u * self.vectors[b] if t == 1
                                                  else t * a + u * self.vectors[b])

    def dot(self, a, b):
        return float(self.vectors[a] @ self.vectors[b])

    def violation(self, s, count, out):
        """The sum of the losses of this partition, keeping d as vector ``out``; d·v
        for every vector v held (the line search's inner products: s·d and
        d·(s_c − s_b)); and Xᵀd. ``count`` is the divisor of the whole set (queries,
        or rows for the binary loss)."""
        p, scores = self.problem, self.vectors[s]
        if p is None:
            self.vectors[out] = np.zeros(0)
            return 0.0, {k: 0.0 for k in self.vectors}, None
        if self.kind == "binary":
            flipped = p.sign * scores < 1.0
            loss, d = float(flipped.sum()), np.where(flipped, p.sign / count, 0.0)
        else:
            losses, d = p.query_violations(scores)
            if count > 1:
                d /= count
            loss = float(losses.sum())
        self.vectors[out] = d
        return loss, {k: float(v @ d) for k, v in self.vectors.items()}, p.joint_feature(d)



def _make_partition(part, kind, options):
    return _Partition(part, kind, options)


def _summary(partition):
    return partition.summary()


def _call(partition, previous, free, method, args):
    """Run ``partition.method(*args)`` after dropping the vectors numbered ``free``
    (``previous``, the partition's last task, only orders the two)."""
    for k in free:
        partition.vectors.pop(k, None)
    return getattr(partition, method)(*args)


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
                          t, u, out)
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
    its loss sum, a few inner products and its Xᵀd (n_features floats): one round trip
    a point of the line search."""

    def __init__(self, data, kind, options):
        if kind not in ("ranking", "binary"):
            raise ValueError(f"kind: expected 'ranking' or 'binary', got {kind!r}")
        if kind == "ranking" and data.unlabelled_partitions > 1:
            raise ValueError(f"qid: the lines without qid: form one query, spread over "
                             f"{data.unlabelled_partitions} partitions; a rank loss needs each "
                             "query within one partition (one shard, or no blocksize)")
        self.client, self.kind = data.client, kind
        self.parts = [self.client.submit(_make_partition, f, kind, options, pure=False)
                      for f in data.partitions]
        summaries = self.client.gather([self.client.submit(_summary, p) for p in self.parts])
        who_has = self.client.who_has(self.parts)
        self.workers = [list(who_has[p.key])[:1] for p in self.parts]
        self.last = [None] * len(self.parts)
        self.free, self.keys = [], 0
        self.poll_seconds = 1.0  # how often a waiting gather checks that the workers live
        self.count = sum(s["count"] for s in summaries)
        self.n_skipped = sum(s["skipped"] for s in summaries)
        self.n_queries_total = sum(s["total"] for s in summaries)
        if kind == "ranking":
            if self.count == 0:
                raise ValueError("y: no query has both a relevant (y > 0) and a non-relevant "
                                 "sample, so the rank loss is undefined everywhere")
            if self.n_skipped:
                warnings.warn(f"{self.n_skipped} of {self.n_queries_total} queries have no "
                              "relevant or no non-relevant sample and are skipped", UserWarning,
                              stacklevel=4)
        self.n_features = data.n_features + (kind == "binary" and options.get("bias", 1.0) != 0)

    def new_key(self):
        self.keys += 1
        return self.keys

    def call(self, method, *args):
        """Submit ``method(*args)`` on every partition (after its previous task);
        returns the futures."""
        free, self.free = self.free, []
        for k, part in enumerate(self.parts):
            self.last[k] = self.client.submit(_call, part, self.last[k], free, method, args,
                                              workers=self.workers[k], allow_other_workers=False,
                                              pure=False)
        return list(self.last)

    def gather(self, futures):
        """The results of ``futures``; a one-line error, instead of waiting forever, when
        a partition's worker has left the cluster (its pinned tasks could never run)."""
        while True:
            try:
                distributed.wait(futures, timeout=self.poll_seconds)
                break
            except distributed.TimeoutError:
                self.check_workers()
        return self.client.gather(futures)

    def check_workers(self):
        """Raise if a worker holding partitions is gone: its partitions' state (the held
        scores and coefficients) is lost, and a recomputed partition would not have it."""
        try:
            info = self.client.scheduler_info(n_workers=-1)  # (all the workers)
        except TypeError:  # pragma: no cover - distributed before 2025.4 lists all
            info = self.client.scheduler_info()
        alive = set(info["workers"])
        lost = [(k, w[0]) for k, w in enumerate(self.workers) if w and w[0] not in alive]
        if lost:
            parts = ", ".join(str(k) for k, _ in lost)
            who = ", ".join(sorted({w for _, w in lost}))
            raise RuntimeError(f"Dask worker {who} left the cluster mid-fit with partition(s) "
                               f"{parts}; their state is lost: fit again (the shards are "
                               "read anew)")

    def scores(self, w):
        out = self.new_key()
        self.call("scores", np.asarray(w, dtype=np.float64), out)
        return DistributedVector(self, out)

    def violation_at_scores(self, scores):
        out = self.new_key()
        pairs = self.gather(self.call("violation", scores.key, self.count, out))
        dots = {k: float(sum(p[1][k] for p in pairs)) for k in pairs[0][1]}
        joint = np.sum([p[2] for p in pairs if p[2] is not None], axis=0)
        return float(sum(p[0] for p in pairs)) / self.count, DistributedVector(self, out, dots,
                                                                               joint)

    def joint_feature(self, d):
        """Xᵀd, which came back with d."""
        return d.joint

    def most_violated(self, w):
        loss, d = self.violation_at_scores(self.scores(w))
        return loss, self.joint_feature(d)
