"""Messages where users were surprised (issue 27 part 5) and graph.subgraph_edges."""
import importlib
import re
import sys
import warnings

import numpy as np
import pytest

from svmrank import HOAPSVM, HOBSVM, RankSVM
from svmrank.cli import topk_learn
from svmrank.datasets import make_ranking
from svmrank.estimators.base import GRADED_LOSSES, warn_binarised_labels
from svmrank.graph import subgraph_edges
from svmrank.io.svmlight import dump_svmlight


@pytest.mark.parametrize("module, blocked, extra", [("svmrank.losses_torch", "torch", "torch"),
                                                    ("svmrank.plot", "matplotlib", "plot")])
def test_a_missing_optional_dependency_names_the_extra(monkeypatch, module, blocked, extra):
    monkeypatch.setitem(sys.modules, blocked, None)  # (import of it raises ImportError)
    monkeypatch.delitem(sys.modules, module, raising=False)
    with pytest.raises(ImportError, match=re.escape(f"pip install 'svmrank[{extra}]'")):
        importlib.import_module(module)


def test_high_order_scores_without_edges_warn():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = (X[:, 0] > 0).astype(float)
    edges = np.array([[i, i + 1] for i in range(29)])
    model = HOBSVM(C=1.0).fit(X, y, edges=edges)
    assert np.any(model.pairwise_coef_)
    with pytest.warns(UserWarning, match="trained with a pairwise term .* no edges"):
        model.decision_function(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.decision_function(X, edges)
        HOBSVM(C=1.0, eta=0.0).fit(X, y).decision_function(X)  # (no pairwise term)


def test_graded_labels_warn_once_unless_the_loss_is_graded():
    X, y, qid = make_ranking(n_samples=120, n_features=5, n_queries=2, random_state=0)
    graded = np.where(y > 0, 1 + (np.arange(len(y)) % 2), 0)
    with pytest.warns(UserWarning, match="3 distinct labels") as caught:
        RankSVM(C=1).fit(X, graded, qid)
    assert sum("distinct labels" in str(w.message) for w in caught) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        RankSVM(C=1, loss="ndcg").fit(X, graded, qid)
        RankSVM(C=1).fit(X, y, qid)  # (two labels)
        for name in GRADED_LOSSES:
            warn_binarised_labels(np.array([0, 1, 2]), name, "RankSVM")


def test_topk_learn_prints_one_primal_in_one_unit(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(90, 3)), rng.integers(1, 4, 90).astype(float)
    data = tmp_path / "train.dat"
    dump_svmlight(data, X, y)
    assert topk_learn.main(["-v", "2", "-c", "100", "--gap-every", "1", str(data),
                            str(tmp_path / "model")]) == 0
    out = capsys.readouterr().out
    last_epoch = [line for line in out.splitlines() if line.startswith("epoch")][-1]
    primal = float(re.search(r"primal (\S+)", last_epoch).group(1))
    summary = float(re.search(r"; objective (\S+),", out).group(1))
    assert primal == pytest.approx(summary, rel=1e-7)


def test_subgraph_edges():
    edges = np.array([[0, 1], [1, 2], [2, 3], [3, 0], [1, 3]])
    assert subgraph_edges(edges, [3, 1, 2]).tolist() == [[1, 2], [2, 0], [1, 0]]
    mask = np.array([True, True, False, True])
    assert subgraph_edges(edges, mask).tolist() == [[0, 1], [2, 0], [1, 2]]
    assert subgraph_edges(edges, []).shape == (0, 2)
    assert subgraph_edges(np.zeros((0, 2), int), [0, 1]).shape == (0, 2)
    with pytest.raises(ValueError, match="rows: a row number is repeated"):
        subgraph_edges(edges, [1, 1])
    with pytest.raises(ValueError, match="rows: row numbers must be >= 0"):
        subgraph_edges(edges, [-1])
    rng = np.random.default_rng(0)  # against a dictionary on random graphs
    for _ in range(20):
        e = rng.integers(0, 30, size=(40, 2))
        e = e[e[:, 0] != e[:, 1]]
        rows = rng.permutation(30)[:rng.integers(0, 30)]
        where = {int(r): k for k, r in enumerate(rows)}
        expected = [[where[u], where[v]] for u, v in e.tolist() if u in where and v in where]
        assert subgraph_edges(e, rows).tolist() == expected


def test_review21_estimator_findings():
    """Review 21: stale validation results, eval_set checks, bad y in score, pd.NA,
    random_state -1 and the messages' lists."""
    pd = pytest.importorskip("pandas")
    from svmrank import APSVM, BinarySVM, LatentAPSVM, TopKSVM
    from svmrank.datasets import make_bags
    X, y, qid = make_ranking(120, 6, n_queries=4, density=1.0, random_state=0)
    X = X.toarray()
    # a refit without eval_set drops the earlier fit's best_iteration_ / best_score_
    for model, extra in ((APSVM(C=10.0), {"qid": qid}), (BinarySVM(C=10.0), {})):
        model.fit(X, y, eval_set=(X, y), **extra)
        assert model.best_iteration_ >= 1
        model.fit(X, y, **extra)
        assert not hasattr(model, "best_iteration_") and not hasattr(model, "best_score_")
    labels = np.arange(60) % 3
    topk = TopKSVM(k=1, max_epoch=5).fit(X[:60], labels, eval_set=(X[:60], labels))
    assert hasattr(topk, "best_score_")
    assert not hasattr(topk.fit(X[:60], labels), "best_score_")
    # eval_set: a DataFrame with other columns, and a wrong-length qid_val before any work
    columns = [f"f{j}" for j in range(X.shape[1])]
    df = pd.DataFrame(X, columns=columns)
    with pytest.raises(ValueError, match="^eval_set X_val: its columns are not the feature"):
        APSVM().fit(df, y, qid=qid, eval_set=(df[columns[::-1]], y, qid),
                    early_stopping_rounds=2)
    with pytest.raises(ValueError, match="^eval_set qid_val: expected length 120, got 119$"):
        APSVM().fit(X, y, qid=qid, eval_set=(X, y, qid[:-1]))
    # score names y; a column vector is ravelled as in fit
    model = APSVM(C=10.0).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="^y: expected length 120, got 119$"):
        model.score(X, y[:-1], qid=qid)
    with pytest.warns(Warning, match="column-vector y"):
        assert model.score(X, y[:, None], qid=qid) == model.score(X, y, qid=qid)
    # pandas' NA is a missing value (ValueError, as NaN), not a TypeError
    holed = df.astype({"f0": "Float64"})
    holed.loc[0, "f0"] = pd.NA
    with pytest.raises(ValueError, match=r"^X: contains NaN or infinite values \(pd.NA\)$"):
        APSVM().fit(holed, y, qid=qid)
    bags_X, bags_y, bags, _ = make_bags(n_bags=12, n_features=4, random_state=0)
    with pytest.raises(ValueError, match="^random_state must be None, an int >= 0"):
        LatentAPSVM(random_state=-1, init="random").fit(bags_X, bags_y, bags=bags)
    with pytest.raises(ValueError, match="'pairs'"):
        RankSVM(loss="bogus").fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="^X: expected a 2-d array, got 3-d$"):
        APSVM().fit(X[:, :, None], y)


def test_latent_score_without_bags_warns_once_per_call():
    pd = pytest.importorskip("pandas")
    from svmrank import LatentAPSVM
    from svmrank.datasets import make_bags
    X, y, bags, _ = make_bags(n_bags=20, n_features=4, random_state=0)
    columns = [f"f{j}" for j in range(X.shape[1])]
    model = LatentAPSVM(C=10.0, n_init=1).fit(pd.DataFrame(X, columns=columns), y, bags=bags)
    assert model.max_bag_size_ > 1
    with pytest.warns(UserWarning, match="got no bags: every row is scored as its own bag"):
        model.score(pd.DataFrame(X, columns=columns), y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.decision_function(X, bags=bags)  # (an array: one feature-names warning)
    assert sum("feature names" in str(w.message) for w in caught) == 1


def test_a_file_name_that_is_not_utf8_is_echoed_as_its_bytes(tmp_path):
    """Review 21: "[Errno 2] No such file or directory: 'a\\udcff.dat'" echoed Python's
    escapes; SVM-struct's tools print the name's bytes, and so do ours."""
    import os
    import subprocess
    name = os.fsencode(tmp_path) + b"/a\xff\xe9.dat"
    proc = subprocess.run([sys.executable, "-m", "svmrank.cli.rank_learn", "-c", "1", name,
                           os.fsencode(tmp_path / "m")], capture_output=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr == b"svm_rank_learn: error: " + name + b": No such file or directory\n"


def test_an_undefined_validation_measure_and_labels_of_no_class_are_named():
    """Review 22b: early stopping on a NaN measure crashed with a TypeError, and
    string labels scored a numeric high-order model as NaN without a word."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = (X[:, 0] > 0).astype(int)
    with pytest.raises(ValueError, match=r"^eval_set: valid_ap is undefined \(NaN\)"):
        RankSVM(C=10.0).fit(X, y, eval_set=(X, np.zeros_like(y)), early_stopping_rounds=3)
    edges = np.array([[0, 1], [2, 3]])
    with pytest.raises(ValueError, match=r"^eval_set y_val: none of its labels is one of the "
                                         r"model's classes \[0, 1\]"):
        HOBSVM(epsilon=0.1).fit(X, y, edges=edges,
                                eval_set=(X, np.where(y, "pos", "neg"), edges))
    model = HOBSVM(epsilon=0.1).fit(X, y, edges=edges)
    with pytest.raises(ValueError, match="^y: none of its labels"):
        model.score(X, np.where(y, "pos", "neg"), edges=edges)
