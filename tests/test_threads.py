"""Every core (issue 28 part 3): the per-query inference and the per-bag argmax give
bitwise the same results on any number of threads, and so do whole fits; n_jobs and
--threads follow scikit-learn's conventions."""

import numpy as np
import pytest
from hypothesis import given, settings
from scipy import sparse
from hypothesis import strategies as st

from svmrank import _latent_fast
from svmrank.estimators.latent import LatentAPSVM
from svmrank.estimators.high_order import HOBSVM
from svmrank.estimators.ranking import APSVM, BinarySVM, RankSVM
from svmrank.inference import lai_queries
from svmrank.parallel import current_threads, effective_n_jobs, threads

THREADS = (1, 2, 4)


@pytest.fixture(autouse=True)
def threads_on_small_inputs(monkeypatch):
    """Small problems here take the threaded path too."""
    from svmrank import _graded_fast, _lai_fast
    monkeypatch.setattr(_lai_fast, "PARALLEL_MIN_ROWS", 0)
    monkeypatch.setattr(_graded_fast, "PARALLEL_MIN_ROWS", 0)


def queries(rng, n_queries, largest, ties=False):
    sizes = rng.integers(0, largest + 1, n_queries)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    n = int(offsets[-1])
    scores = rng.normal(size=n)
    if ties:
        scores = np.round(scores * 2) / 2
    relevant = rng.random(n) < rng.uniform(0.05, 0.6)
    return scores, relevant, offsets


@pytest.mark.parametrize("loss", ["ap", "ndcg", "roc"])
@pytest.mark.parametrize("method", ["qs", "greedy"])
def test_inference_is_the_same_on_any_thread_count(loss, method):
    rng = np.random.default_rng(7)
    # small and large queries (the large ones take the bucketed qs path), ties
    cases = [(300, 30, False), (40, 3000 if method == "qs" else 800, True)]
    if method == "qs":  # (greedy is quadratic in the query's size)
        cases.append((5, 40000, False))
    for n_queries, largest, ties in cases:
        scores, relevant, offsets = queries(rng, n_queries, largest, ties)
        order = rng.permutation(scores.size).astype(np.intp)
        for layout in (None, order):
            got = []
            for k in THREADS:
                with threads(k):
                    got.append(lai_queries(scores, relevant, layout, offsets, loss, method))
            for other in got[1:]:
                for a, b in zip(got[0], other):
                    assert np.array_equal(a, b, equal_nan=True) and a.dtype == b.dtype


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 60), st.integers(0, 12))
def test_inference_threads_property(seed, n_queries, largest):
    """Random, tiny and empty queries, one positive, no negatives: same on 1 and 3."""
    rng = np.random.default_rng(seed)
    scores, relevant, offsets = queries(rng, n_queries, largest, ties=seed % 2 == 0)
    with threads(1):
        one = lai_queries(scores, relevant, None, offsets)
    with threads(3):
        three = lai_queries(scores, relevant, None, offsets)
    for a, b in zip(one, three):
        assert np.array_equal(a, b, equal_nan=True)


def test_bag_argmax_is_the_same_on_any_thread_count():
    rng = np.random.default_rng(3)
    sizes = rng.integers(1, 6, 20000)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)
    scores = np.round(rng.normal(size=offsets[-1]), 1)  # (ties: the first row wins)
    known = np.where(rng.random(sizes.size) < 0.1, offsets[:-1], -1).astype(np.intp)
    minimise = (rng.random(sizes.size) < 0.3).astype(np.uint8)
    results = []
    for k in THREADS:
        rows = np.empty(sizes.size, dtype=np.intp)
        values = np.empty(sizes.size)
        _latent_fast.bag_argmax(scores, offsets, known, minimise, rows, values, k)
        results.append((rows, values))
    # the reference: plain NumPy
    for b in range(0, sizes.size, 997):
        lo, hi = offsets[b], offsets[b + 1]
        seg = scores[lo:hi]
        want = known[b] if known[b] >= 0 else lo + int(np.argmin(seg) if minimise[b]
                                                         else np.argmax(seg))
        assert results[0][0][b] == want
    for rows, values in results[1:]:
        assert np.array_equal(rows, results[0][0]) and np.array_equal(values, results[0][1])


def ranking_data(seed=0, n_queries=60):
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(n_queries), rng.integers(5, 40, n_queries))
    X = rng.normal(size=(qid.size, 8))
    y = (X[:, 0] + 0.5 * rng.normal(size=qid.size) > 0.6).astype(float)
    return X, y, qid


@pytest.mark.parametrize("make", [lambda k: APSVM(C=10.0, n_jobs=k),
                                  lambda k: RankSVM(loss="ndcg", C=10.0, n_jobs=k),
                                  lambda k: RankSVM(loss="pairs", C=10.0, n_jobs=k),
                                  lambda k: BinarySVM(C=10.0, n_jobs=k),
                                  lambda k: BinarySVM(loss="f1", C=10.0, n_jobs=k)])
def test_fits_are_bitwise_the_same_on_any_thread_count(make):
    X, y, qid = ranking_data()
    fits = [make(k).fit(X, y, qid=qid) for k in THREADS]
    for fit in fits[1:]:
        assert np.array_equal(fit.coef_, fits[0].coef_)
        assert fit.objective_ == fits[0].objective_ and fit.n_iter_ == fits[0].n_iter_


def test_high_order_binary_fit_is_the_same_on_any_thread_count():
    X, y, _ = ranking_data(n_queries=10)
    edges = np.column_stack([np.arange(len(y) - 1), np.arange(1, len(y))])
    fits = [HOBSVM(C=10.0, n_jobs=k).fit(X, y, edges=edges) for k in THREADS]
    for fit in fits[1:]:
        assert np.array_equal(fit.coef_, fits[0].coef_) and fit.objective_ == fits[0].objective_


def test_latent_fit_is_the_same_on_any_thread_count():
    rng = np.random.default_rng(5)
    bags = np.repeat(np.arange(80), 3)
    X = rng.normal(size=(bags.size, 5))
    y = np.repeat((rng.random(80) < 0.3).astype(float), 3)
    X[y > 0, 0] += 1.0
    a = LatentAPSVM(C=5.0, n_jobs=1, init="instances").fit(X, y, bags=bags)
    b = LatentAPSVM(C=5.0, n_jobs=2, init="instances").fit(X, y, bags=bags)
    assert np.array_equal(a.coef_, b.coef_) and a.objective_ == b.objective_


def test_n_jobs_conventions():
    cores = effective_n_jobs(None)
    assert cores >= 1 and effective_n_jobs(-1) == cores and effective_n_jobs(3) == 3
    assert effective_n_jobs(-cores - 5) == 1
    for bad in (0, 1.5, True, "2"):
        with pytest.raises(ValueError, match="n_jobs"):
            effective_n_jobs(bad)
    assert current_threads() == 1  # (outside a fit: one thread)
    with threads(2):
        assert current_threads() == 2
    assert current_threads() == 1
    X, y, qid = ranking_data(n_queries=5)
    with pytest.raises(ValueError, match="n_jobs"):
        APSVM(n_jobs=0).fit(X, y, qid=qid)
    assert APSVM(n_jobs=2).get_params()["n_jobs"] == 2
    assert "n_jobs" in RankSVM().get_params()
    assert current_threads() == 1


@pytest.mark.parametrize("loss,k", [("alpha", 1), ("alpha", 3), ("beta", 2)])
def test_topk_fit_is_bitwise_the_same_on_any_thread_count(monkeypatch, loss, k):
    """TopKSVM's gap checks run over blocks of rows on n_jobs threads: the same
    coefficients, duals, objectives and epochs on 1, 2 and 4 (blocks of 16 rows here,
    so that every thread has several)."""
    from svmrank.estimators.topk import TopKSVM
    from svmrank.learners import sdca
    monkeypatch.setattr(sdca, "block_rows", lambda m: 16)
    rng = np.random.default_rng(11)
    X = rng.normal(size=(300, 6))
    y = np.argmax(X[:, :5] + rng.normal(size=(300, 5)), axis=1)
    X = sparse.csr_matrix(np.round(X, 1))  # (ties among the scores)
    fits = [TopKSVM(k=k, loss=loss, C=0.5, check_gap_every=1, random_state=0,
                    n_jobs=j).fit(X, y) for j in THREADS]
    for fit in fits[1:]:
        assert np.array_equal(fit.coef_, fits[0].coef_)
        assert np.array_equal(fit.dual_coef_, fits[0].dual_coef_)
        assert fit.history_ and [h[:4] for h in fit.history_] == [h[:4] for h in fits[0].history_]
        assert fit.n_iter_ == fits[0].n_iter_


def test_topk_cli_threads_option_reaches_the_fit(tmp_path, monkeypatch):
    """svm_topk_learn --threads N runs the gap checks on N threads."""
    from svmrank.cli import topk_learn
    from svmrank.learners import sdca
    seen = []
    real = sdca.blockwise_losses
    monkeypatch.setattr(sdca, "blockwise_losses",
                        lambda *a: seen.append(a[-1]) or real(*a))
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 3))
    y = np.argmax(X, axis=1) + 1
    train = tmp_path / "train.dat"
    train.write_text("".join(f"{c} " + " ".join(f"{j + 1}:{v:.3f}" for j, v in enumerate(r))
                             + "\n" for c, r in zip(y, X)))
    for n in (1, 3):
        seen.clear()
        assert topk_learn.main(["-v", "0", "-c", "1", "--threads", str(n), str(train),
                                str(tmp_path / "model")]) == 0
        assert seen and set(seen) == {n}
