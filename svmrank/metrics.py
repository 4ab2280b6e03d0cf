"""Ranking and classification measures: AP, NDCG, ROC area, top-k accuracy, the
learning-to-rank measures (graded NDCG@k, MAP, P@k, MRR, ERR), their means over queries,
and scikit-learn scorers that take the queries (:func:`make_ranking_scorer`).

Conventions (docs/python.md, "Ranking metrics"): a query without a relevant document
(no label > 0) has no value (NaN) in every per-query measure; the means skip it by
default (``no_relevant="skip"``), or count it as 0 (trec_eval, scikit-learn's
``ndcg_score``) or as 1 (LightGBM's ndcg and map). Tied scores: the value does not depend
on the order of tied documents; NDCG, P@k, MRR and ERR are their expectation over the
orders of the tied documents, AP counts a tie as one threshold (as scikit-learn's
``average_precision_score``).
"""
import numbers
import warnings

import numpy as np

from ._validation import check_vector, qid_from_group, query_segments

GAINS = ("exp", "linear")
NO_RELEVANT = ("skip", 0, 1)


def _check_pair(y_true, scores):
    scores = check_vector(scores, "scores")
    y_true = check_vector(y_true, "y_true", n=scores.shape[0])
    return y_true > 0, scores


def _tie_groups(sorted_scores):
    """Start and size of each run of equal values in a sorted score array."""
    s = sorted_scores
    starts = np.r_[0, np.flatnonzero(s[1:] != s[:-1]) + 1]
    return starts, np.diff(np.r_[starts, len(s)])


def average_precision(y_true, scores):
    """Average precision of the ranking by decreasing score.

    Relevant means ``y_true > 0``. Tied scores form one threshold (as in
    scikit-learn's ``average_precision_score``). Returns NaN without relevant samples.
    """
    rel, scores = _check_pair(y_true, scores)
    n_rel = rel.sum()
    if n_rel == 0:
        return float("nan")
    order = np.argsort(-scores, kind="stable")
    s, r = scores[order], rel[order]
    last_of_tie = np.r_[s[1:] != s[:-1], True]
    tp = np.cumsum(r)[last_of_tie]
    n_seen = np.flatnonzero(last_of_tie) + 1
    new_tp = np.diff(np.r_[0, tp])
    return float(np.sum(new_tp * tp / n_seen) / n_rel)


def check_k(k, name="k", allow_none=True):
    """``k`` as an int >= 1 (or None when ``allow_none``); a one-line error otherwise."""
    if k is None and allow_none:
        return None
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, numbers.Integral) or k < 1:
        raise ValueError(f"{name} must be a positive integer{' or None' if allow_none else ''}, "
                         f"got {k!r}")
    return int(k)


def _check_gains(gains):
    if not isinstance(gains, str) or gains not in GAINS:
        raise ValueError(f"gains must be 'exp' (2**label - 1) or 'linear' (label), got {gains!r}")
    return gains


def graded_gains(y_true, gains="exp"):
    """Gain of each label: ``2**l - 1`` ("exp") or ``l`` ("linear"), 0 for l <= 0.

    The "exp" gains are divided by ``2**max(label)`` (ratios such as NDCG do not change,
    and no label overflows).
    """
    labels = np.clip(np.asarray(y_true, dtype=np.float64), 0, None)
    if _check_gains(gains) == "linear":
        return labels
    return _exp_gains(labels, labels.max(initial=0.0))


def _exp_gains(labels, top):
    """(2^l - 1) / 2^top for labels l >= 0, as 2^(l - top) (1 - 2^-l), which does not
    cancel for small labels nor overflow for large ones."""
    with np.errstate(over="ignore"):  # (-expm1 of a huge negative is 1)
        return np.where(labels > 0, np.exp2(labels - top) * -np.expm1(-labels * np.log(2.0)), 0.0)


def _expected_gains(gains, scores):
    """Gains in decreasing score order, each tie group sharing its mean gain: the
    expected gain at each rank over the orders of tied samples."""
    order = np.argsort(-scores, kind="stable")
    starts, sizes = _tie_groups(scores[order])
    return np.repeat(np.add.reduceat(gains[order], starts) / sizes, sizes)


def ndcg(y_true, scores, k=None, gains="exp"):
    """NDCG (at k) with gains ``2**rel - 1`` ("exp"; binary labels: 1 for relevant) or
    ``rel`` ("linear") and discount ``1 / log2(1 + rank)``. Tied scores share the mean
    gain of their group (as in scikit-learn's ``ndcg_score``), so the order of tied
    samples does not matter. NaN without relevant samples."""
    k = check_k(k)
    scores = check_vector(scores, "scores")
    y_true = check_vector(y_true, "y_true", n=scores.shape[0])
    gain = graded_gains(y_true, gains)
    n = len(scores) if k is None else min(k, len(scores))
    discount = 1.0 / np.log2(np.arange(2, n + 2))
    ideal = np.sort(gain)[::-1][:n] @ discount
    if ideal == 0:
        return float("nan")
    return float(_expected_gains(gain, scores)[:n] @ discount / ideal)


def precision_at_k(y_true, scores, k=10):
    """Precision at k: the fraction of the k highest scored samples that are relevant
    (y > 0), divided by k even when the query has fewer samples (as trec_eval's P_k).
    Ties: the expectation over the orders of tied samples. NaN without relevant samples."""
    k = check_k(k, allow_none=False)
    rel, scores = _check_pair(y_true, scores)
    if not rel.any():
        return float("nan")
    return float(_expected_gains(rel.astype(np.float64), scores)[:k].sum() / k)


def _no_stop_probabilities(q, m):
    """E[j] for j = 0..m: the mean over the j-subsets of ``q`` of the product of their
    values (the chance that the first j of a random order of the items all pass, item i
    passing with probability q[i]); the elementary symmetric polynomials divided by
    C(n, j), by their recurrence over the items (convex combinations: no overflow)."""
    if np.all(q == q[0]):
        return q[0] ** np.arange(m + 1)
    if np.all((q == 0) | (q == 1)):  # (MRR's stops: the first j avoid the zeros, in O(m))
        n, ones, j = len(q), int(np.count_nonzero(q)), np.arange(m)
        return np.r_[1.0, np.cumprod(np.maximum(ones - j, 0) / (n - j))]
    e = np.zeros(m + 1)
    e[0] = 1.0
    for n, qn in enumerate(q, start=1):
        j = np.arange(1, min(n, m) + 1)
        e[j] = ((n - j) * e[j] + j * qn * e[j - 1]) / n
    return e


def _cascade(stop, scores, k):
    """Expected ``sum_r stop_r prod_{i<r} (1 - stop_i) / r`` over the first k ranks
    (Chapelle et al. 2009's cascade), in expectation over the orders of tied scores: within
    a tie group starting after rank s, the first stop is at rank s + j with probability
    E[j-1] - E[j] (:func:`_no_stop_probabilities` of the group's 1 - stop)."""
    order = np.argsort(-scores, kind="stable")
    stop = stop[order]
    starts, sizes = _tie_groups(scores[order])
    n = len(scores) if k is None else min(k, len(scores))
    total, passing = 0.0, 1.0
    for start, size in zip(starts.tolist(), sizes.tolist()):
        if start >= n or passing == 0.0:
            break
        group = 1.0 - stop[start:start + size]
        m = min(size, n - start)
        e = _no_stop_probabilities(group, m)
        total += passing * float(np.sum((e[:-1] - e[1:]) / np.arange(start + 1, start + m + 1)))
        passing *= float(np.prod(group))
    return total


def reciprocal_rank(y_true, scores):
    """1 / the rank of the first relevant (y > 0) sample; ties: the expectation over the
    orders of tied samples. NaN without relevant samples."""
    rel, scores = _check_pair(y_true, scores)
    if not rel.any():
        return float("nan")
    return _cascade(rel.astype(np.float64), scores, None)


def _check_max_label(max_label):
    if max_label is not None and (isinstance(max_label, (bool, np.bool_, str, bytes))
                                  or not isinstance(max_label, numbers.Real)
                                  or not np.isfinite(max_label)):
        raise ValueError(f"max_label must be a finite number or None, got {max_label!r}")
    return max_label


def expected_reciprocal_rank(y_true, scores, k=None, max_label=None, gains="exp"):
    """ERR (at k) of Chapelle et al. (2009): ``sum_r R_r prod_{i<r} (1 - R_i) / r`` with
    stop probability ``R = (2**l - 1) / 2**max_label`` ("exp") or ``l / max_label``
    ("linear"), l clipped at 0.

    ``max_label``: the top of the label scale (default: the highest label in y_true;
    :func:`mean_over_queries` passes the highest over all queries). Ties: the expectation
    over the orders of tied samples. NaN without relevant samples.
    """
    k = check_k(k)
    scores = check_vector(scores, "scores")
    y_true = check_vector(y_true, "y_true", n=scores.shape[0])
    labels = np.clip(y_true, 0, None)
    _check_max_label(max_label)
    top = labels.max(initial=0.0) if max_label is None else float(max_label)
    if top < labels.max(initial=0.0):
        raise ValueError(f"max_label ({max_label!r}) is below the highest label "
                         f"({labels.max():g})")
    if not (labels > 0).any():
        return float("nan")
    stop = labels / top if _check_gains(gains) == "linear" else _exp_gains(labels, top)
    return _cascade(stop, scores, k)


def roc_auc(y_true, scores):
    """Area under the ROC curve (ties count one half). NaN unless both classes occur."""
    rel, scores = _check_pair(y_true, scores)
    n_pos, n_neg = rel.sum(), (~rel).sum()
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    order = np.argsort(scores, kind="stable")
    s = scores[order]
    ranks = np.empty(len(s))
    # average rank of each tie group (1-based)
    starts, sizes = _tie_groups(s)
    ranks_sorted = np.repeat(starts + (sizes + 1) / 2.0, sizes)
    ranks[order] = ranks_sorted
    return float((ranks[rel].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def _true_class_rank(y_true, scores, classes):
    """0-based rank of each sample's true class in its row of scores (n, m): the classes
    scored higher, plus the equally scored classes of lower index (ties go to the lower
    class index, as ``argmax`` does)."""
    scores = check_vector(scores, "scores", ndim=2)  # (n_samples, n_classes)
    n, m = scores.shape
    if m == 0:
        raise ValueError("scores: expected one column per class, got none")
    classes = np.arange(m) if classes is None else np.asarray(classes)
    if classes.shape != (m,):
        raise ValueError(f"classes: expected {m} labels (one per score column), got shape {classes.shape}")
    if len(np.unique(classes)) != m:
        raise ValueError("classes: expected distinct labels, one per score column")
    y_true = np.asarray(y_true)
    if y_true.shape != (n,):
        raise ValueError(f"y_true: expected shape ({n},), got {y_true.shape}")
    order = np.argsort(classes, kind="stable")
    pos = np.clip(np.searchsorted(classes, y_true, sorter=order), 0, m - 1)
    idx = order[pos]
    unknown = classes[idx] != y_true
    if np.any(unknown):
        bad = y_true[unknown][0]
        bad = bad.item() if isinstance(bad, np.generic) else bad
        raise ValueError(f"y_true: label {bad!r} is not one of classes")
    true_score = scores[np.arange(n), idx][:, None]
    lower = np.arange(m)[None, :] < idx[:, None]
    return np.sum((scores > true_score) | ((scores == true_score) & lower), axis=1)


def top_k_accuracy(y_true, scores, k=1, classes=None):
    """Fraction of samples whose true class is among the k highest scored classes.

    Parameters
    ----------
    y_true : array-like, shape (n,)
        True labels: class indices 0..m-1, or labels from ``classes``.
    scores : array-like, shape (n, m)
        One score per class (e.g. ``TopKSVM.decision_function``).
    k : int
        1 <= k <= m.
    classes : array-like, shape (m,), optional
        The label of each score column (e.g. ``estimator.classes_``).

    Ties go to the lower column index, so top-1 accuracy agrees with ``argmax``. No
    samples: NaN, with a warning.
    """
    return float(top_k_accuracies(y_true, scores, [k], classes)[0])


def top_k_accuracies(y_true, scores, ks=None, classes=None):
    """Top-k accuracy for each k in ``ks`` (default 1..min(10, m); each 1 <= k <= m) as
    a float array; see :func:`top_k_accuracy`."""
    rank = _true_class_rank(y_true, scores, classes)
    m = np.shape(scores)[1]
    ks = range(1, min(10, m) + 1) if ks is None else ks
    if isinstance(ks, (str, bytes)) or not np.iterable(ks):
        raise ValueError(f"ks: expected a sequence of integers, got {ks!r}")
    out = []
    for k in ks:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= m:
            raise ValueError(f"k must be an integer in 1..{m} (the number of classes), got {k!r}")
        out.append(np.mean(rank < k) if len(rank) else np.nan)
    if not len(rank):
        warnings.warn("top-k accuracy of no samples is undefined: returning nan", UserWarning,
                      stacklevel=2)
    return np.array(out, dtype=np.float64)


def _check_no_relevant(no_relevant):
    if isinstance(no_relevant, (bool, np.bool_)) or no_relevant not in NO_RELEVANT:
        raise ValueError("no_relevant must be 'skip', 0 (trec_eval) or 1 (LightGBM), got "
                         f"{no_relevant!r}")
    return no_relevant


def _measure(metric, kwargs):
    """``(function, kwargs)`` of a metric given as a function (``kwargs`` as given) or by
    name (:func:`parse_metric`'s, with the ``gains`` and ``max_label`` of ``kwargs``)."""
    if isinstance(metric, str):
        other = sorted(set(kwargs) - {"gains", "max_label"})
        if other:
            raise ValueError(f"metric {metric!r}: a name takes gains= and max_label= only, got "
                             f"{other[0]}= (a cut-off goes in the name: 'ndcg@10')")
        return parse_metric(metric, kwargs.get("gains", "exp"), kwargs.get("max_label"))
    if not callable(metric):
        raise ValueError(f"metric: expected a function of one query such as "
                         f"svmrank.metrics.ndcg or a name such as 'ndcg@10', got {metric!r}")
    return metric, kwargs


def per_query(metric, y_true, scores, qid=None, group=None, **kwargs):
    """``metric(y_q, s_q, **kwargs)`` of each query, in order of first appearance (NaN
    where it is undefined, e.g. a query without a relevant sample).

    ``metric``: a function of one query such as :func:`ndcg`, or a name such as
    "ndcg@10" (:func:`parse_metric`). Queries come from ``qid`` (one id per sample) or
    ``group`` (LightGBM's query sizes, consecutive rows); neither: one query.
    :func:`expected_reciprocal_rank` gets the highest label over all queries as
    ``max_label`` unless given.
    """
    metric, kwargs = _measure(metric, kwargs)
    scores = check_vector(scores, "scores")
    y_true = check_vector(y_true, "y_true", n=scores.shape[0])
    qid = qid_from_group(group, len(scores), qid)
    if metric is expected_reciprocal_rank and kwargs.get("max_label") is None:
        kwargs["max_label"] = max(float(y_true.max(initial=0.0)), 0.0)
    order, offsets = query_segments(qid, len(scores))
    return np.array([metric(y_true[order[a:b]], scores[order[a:b]], **kwargs)
                     for a, b in zip(offsets[:-1], offsets[1:])], dtype=np.float64)


def mean_over_queries(metric, y_true, scores, qid=None, *, group=None, no_relevant="skip",
                      **kwargs):
    """Mean of ``metric`` over queries (:func:`per_query`), skipping queries where it is
    undefined (NaN).

    ``no_relevant``: a query without a relevant sample (no y > 0) is skipped ("skip",
    the default), counts 0 (trec_eval's convention, and scikit-learn's ``ndcg_score``)
    or counts 1 (LightGBM's ndcg and map). Returns NaN, with a warning, when the
    metric is undefined on every query counted. AP and NDCG are defined (1) on a query
    whose samples are all relevant, ROC area is not; the estimators' ``score`` and
    svm_ap_classify skip every query without a relevant and a non-relevant sample, as
    training does.
    """
    _check_no_relevant(no_relevant)
    metric, kwargs = _measure(metric, kwargs)
    scores = check_vector(scores, "scores")
    y_true = check_vector(y_true, "y_true", n=scores.shape[0])
    values = per_query(metric, y_true, scores, qid, group, **kwargs)
    if no_relevant != "skip":
        order, offsets = query_segments(qid_from_group(group, len(scores), qid), len(scores))
        cum = np.concatenate([[0], np.cumsum(y_true[order] > 0)])
        values[cum[offsets[1:]] == cum[offsets[:-1]]] = float(no_relevant)
    values = values[~np.isnan(values)]
    if not len(values):
        warnings.warn(f"{getattr(metric, '__name__', 'the metric')} is undefined (NaN) on "
                      "every query: returning nan", UserWarning, stacklevel=2)
        return float("nan")
    return float(values.mean())


def ranked_queries(relevant, offsets):
    """Which queries have a relevant and a non-relevant sample: the queries a rank loss
    is defined on, which training and scoring use.

    Parameters
    ----------
    relevant : ndarray of bool, grouped by query
    offsets : ndarray of int
        Query q holds ``relevant[offsets[q]:offsets[q + 1]]`` (an empty one is not ranked).
    """
    offsets = np.asarray(offsets)
    # counts from cumulative sums (np.add.reduceat mishandles empty queries)
    cum = np.concatenate([[0], np.cumsum(relevant, dtype=np.int64)])
    n_rel = cum[offsets[1:]] - cum[offsets[:-1]]
    return (n_rel > 0) & (n_rel < np.diff(offsets))


def is_ranked(relevant):
    """:func:`ranked_queries` of one query: whether it has a relevant and a
    non-relevant sample."""
    return bool(ranked_queries(relevant, [0, len(relevant)])[0])


def mean_over_ranked_queries(measure, y_true, scores, qid=None):
    """Mean of ``measure(y_q, s_q)`` (a function or a name) over the queries that
    :func:`is_ranked` (y > 0 relevant): the queries training uses (an all-relevant
    query would count AP = 1). NaN, with a warning, when no query is."""
    measure, kwargs = _measure(measure, {})

    def ranked(y_q, s_q):
        return measure(y_q, s_q, **kwargs) if is_ranked(y_q > 0) else float("nan")
    ranked.__name__ = getattr(measure, "__name__", "the measure")  # (in its warning)
    return mean_over_queries(ranked, y_true, scores, qid)


# name -> (measure, takes k, needs k)
_MEASURES = {"ndcg": (ndcg, True, False), "map": (average_precision, False, False),
             "ap": (average_precision, False, False), "mrr": (reciprocal_rank, False, False),
             "p": (precision_at_k, True, True), "precision": (precision_at_k, True, True),
             "err": (expected_reciprocal_rank, True, False)}
#: The measures svm_ap_classify prints for ranked data (:func:`ranking_metrics`'s default).
LTR_METRICS = ("ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "map", "mrr", "p@10")


def parse_metric(name, gains="exp", max_label=None):
    """``(measure, kwargs)`` of a metric name: "ndcg", "ndcg@k", "map" (or "ap"), "mrr",
    "p@k" (or "precision@k"), "err", "err@k" (case-insensitive); ``gains`` goes to the
    graded ones (NDCG, ERR), ``max_label`` (the top of the label scale) to ERR. Both are
    checked whatever the measure."""
    gains, max_label = _check_gains(gains), _check_max_label(max_label)
    if not isinstance(name, str):
        raise ValueError(f"metric must be a name such as 'ndcg@10', got {name!r}")
    base, at, k = name.strip().lower().partition("@")
    if base not in _MEASURES:
        raise ValueError(f"metric {name!r}: unknown; expected one of ndcg, ndcg@k, map, ap, "
                         "mrr, p@k, err, err@k")
    measure, takes_k, needs_k = _MEASURES[base]
    kwargs = {"gains": gains} if base in ("ndcg", "err") else {}
    if base == "err" and max_label is not None:
        kwargs["max_label"] = max_label
    if at:
        if not takes_k:
            raise ValueError(f"metric {name!r}: {base} takes no @k")
        if not k.isdigit() or int(k) < 1:
            raise ValueError(f"metric {name!r}: k must be a positive integer")
        kwargs["k"] = int(k)
    elif needs_k:
        raise ValueError(f"metric {name!r}: give the cut-off, e.g. '{base}@10'")
    return measure, kwargs


def ranking_metrics(y_true, scores, qid=None, *, group=None, metrics=LTR_METRICS,
                    gains="exp", no_relevant="skip", max_label=None):
    """Means over queries of several measures, by name (:func:`parse_metric`, with
    ``gains`` and ``max_label``).

    Returns
    -------
    dict
        metric name -> mean (:func:`mean_over_queries` with ``no_relevant``).
    """
    if isinstance(metrics, (str, bytes)):
        raise ValueError(f"metrics: expected a sequence of names, got the string {metrics!r} "
                         f"(write [{metrics!r}])")
    out = {}
    for name in metrics:
        measure, kwargs = parse_metric(name, gains, max_label)
        with warnings.catch_warnings():  # (NaN when no query has a relevant sample)
            warnings.simplefilter("ignore", UserWarning)
            out[name] = mean_over_queries(measure, y_true, scores, qid, group=group,
                                          no_relevant=no_relevant, **kwargs)
    return out


_WARNED_WITHOUT_QUERIES = set()


def warn_without_queries(estimator, n_rows, owner):
    """Warn once per ``owner`` (per process) when ``n_rows`` rows are scored as one query
    although they are more than one query's worth: more rows than the largest query
    ``estimator`` was fitted on (its ``max_query_size_``, None when it was fitted
    on one query or without queries)."""
    largest = getattr(estimator, "max_query_size_", None)
    if largest is None or n_rows <= largest or owner in _WARNED_WITHOUT_QUERIES:
        return
    _WARNED_WITHOUT_QUERIES.add(owner)
    warnings.warn(f"{owner} got {n_rows} rows without qid or group, more than the largest "
                  f"training query ({largest} rows): they are scored as one query. Pass qid= "
                  "(or group=); in a search or cross-validation, enable metadata routing with "
                  "sklearn.set_config(enable_metadata_routing=True) (this warning is shown "
                  "once)", UserWarning, stacklevel=3)


def _final_step(estimator):
    steps = getattr(estimator, "steps", None)  # (a Pipeline scores by its last step)
    return steps[-1][1] if isinstance(steps, list) and steps else estimator


class RankingScorer:
    """A scikit-learn scorer of a ranking measure averaged over queries; see
    :func:`make_ranking_scorer`."""

    def __init__(self, metric, gains="exp", no_relevant="skip", max_label=None):
        self._measure, self._kwargs = parse_metric(metric, gains, max_label)
        self.metric = metric
        self.gains = gains
        self.max_label = max_label
        self.no_relevant = _check_no_relevant(no_relevant)

    def __call__(self, estimator, X, y_true, qid=None, group=None, **kwargs):
        """Mean of the measure over the queries of ``estimator``'s scores on X
        (``decision_function``, else ``predict``); ``sample_weight`` must be None."""
        if kwargs.get("sample_weight") is not None:
            raise ValueError("sample_weight: ranking scorers do not weight samples; pass None")
        unknown = set(kwargs) - {"sample_weight"}
        if unknown:
            raise TypeError(f"{self!r} got unexpected metadata {sorted(unknown)}")
        method = getattr(estimator, "decision_function", None) or estimator.predict
        scores = np.asarray(method(X), dtype=np.float64)
        if qid is None and group is None:
            warn_without_queries(_final_step(estimator), len(scores), f"{self!r}")
        return mean_over_queries(self._measure, y_true, scores, qid, group=group,
                                 no_relevant=self.no_relevant, **self._kwargs)

    def get_metadata_routing(self):
        """scikit-learn's metadata request: ``qid`` and ``group`` to the scorer."""
        from sklearn.utils.metadata_routing import MetadataRequest
        request = MetadataRequest(owner=type(self).__name__)
        for name in ("qid", "group"):
            request.score.add_request(param=name, alias=True)
        return request

    def __repr__(self):
        extra = "".join(f", {n}={v!r}" for n, v, d in (("gains", self.gains, "exp"),
                                                     ("no_relevant", self.no_relevant, "skip"),
                                                     ("max_label", self.max_label, None))
                        if v != d)
        return f"make_ranking_scorer({self.metric!r}{extra})"


def make_ranking_scorer(metric, *, gains="exp", no_relevant="skip", max_label=None):
    """A scikit-learn scorer of a ranking measure averaged over queries.

    Parameters
    ----------
    metric : str
        "ndcg@10", "ndcg", "map" (or "ap"), "mrr", "p@10", "err@10", "err", ...
        (:func:`parse_metric`).
    gains : {"exp", "linear"}
        Gains of the graded measures (NDCG, ERR).
    no_relevant : {"skip", 0, 1}
        Queries without a relevant sample: skipped, counted as 0 (trec_eval) or as 1
        (LightGBM).
    max_label : float, optional
        ERR's top of the label scale (default: the highest label of the rows scored,
        which differs between folds that lack the top grade; give it for scores
        comparable across folds).

    Returns
    -------
    RankingScorer
        ``scorer(estimator, X, y, qid=None, group=None)``, usable as ``scoring=`` in
        ``GridSearchCV`` and ``cross_validate``. It requests ``qid`` and ``group``
        through metadata routing (``sklearn.set_config(enable_metadata_routing=True)``);
        without them, the rows are one query, with one warning when they are more
        rows than the estimator's largest training query.
    """
    return RankingScorer(metric, gains=gains, no_relevant=no_relevant, max_label=max_label)
