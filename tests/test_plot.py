"""svmrank.plot: each figure's data (not its pixels), on the Agg backend (issue 27 part 1)."""
import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

from svmrank import HOAPSVM, LatentAPSVM, RankSVM, TopKSVM  # noqa: E402
from svmrank import plot  # noqa: E402
from svmrank.cli import ap_classify, ap_learn, topk_classify, topk_learn  # noqa: E402
from svmrank.datasets import make_bags, make_ranking  # noqa: E402
from svmrank.inference import loss_augmented_inference  # noqa: E402
from svmrank.io.svmlight import dump_svmlight  # noqa: E402
from svmrank.metrics import average_precision, top_k_accuracies  # noqa: E402


def axes():
    return plot.new_figure().add_subplot()


def test_precision_recall_by_hand():
    recall, precision = plot.precision_recall([1, 0, 1, 0, 1], [0.9, 0.8, 0.7, 0.2, 0.1])
    assert recall.tolist() == pytest.approx([1 / 3, 2 / 3, 1.0])
    assert precision.tolist() == pytest.approx([1.0, 2 / 3, 3 / 5])


def test_pr_curve_overall_per_query_and_mean():
    rng = np.random.default_rng(0)
    y = (rng.random(60) < 0.3).astype(float)
    s = rng.normal(size=60) + y
    qid = np.repeat([1, 2, 3], 20)
    ax = plot.pr_curve(y, s, ax=axes(), label="m")
    recall, precision = plot.precision_recall(y, s)
    line = ax.get_lines()[0]
    assert np.allclose(line.get_xdata(), recall) and np.allclose(line.get_ydata(), precision)
    assert ax.get_legend().get_texts()[0].get_text() == f"m: AP = {average_precision(y, s):.3f}"
    ax = plot.pr_curve(y, s, qid, kind="per_query", ax=axes())
    assert len(ax.get_lines()) == 3
    ax = plot.pr_curve(y, s, qid, kind="mean", ax=axes(), n_points=11)
    mean = ax.get_lines()[0].get_ydata()
    # the mean of the interpolated curves: at recall 0 each query's best precision
    best = [plot.precision_recall(y[qid == q], s[qid == q])[1].max() for q in (1, 2, 3)]
    assert mean[0] == pytest.approx(np.mean(best)) and len(mean) == 11
    assert len(ax.collections) == 1  # (the band)
    aps = [average_precision(y[qid == q], s[qid == q]) for q in (1, 2, 3)]
    assert f"mean AP = {np.mean(aps):.3f}" in ax.get_legend().get_texts()[0].get_text()
    with pytest.raises(ValueError, match="qid"):
        plot.pr_curve(y, s, kind="mean")


def test_training_curves_of_a_fit_with_eval_set():
    X, y, qid = make_ranking(n_samples=300, n_features=10, n_queries=3, random_state=1)
    model = RankSVM(C=10).fit(X[:200], y[:200], qid[:200],
                              eval_set=(X[200:], y[200:], qid[200:]))
    ax = plot.training_curves(model, ax=axes())
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert set(lines) >= {"primal objective", "dual bound", "duality gap", "violation"}
    objective = [h["objective"] for h in model.history_]
    assert np.allclose(lines["primal objective"].get_ydata(), objective)
    assert lines["primal objective"].get_xdata().tolist() == list(range(1, model.n_iter_ + 1))
    assert ax.get_yscale() == "log"
    twin = ax.svmrank_eval_axes
    assert np.allclose(twin.get_lines()[0].get_ydata(), [h["valid_ap"] for h in model.history_])
    ax = plot.training_curves(model.result_, x="time", ax=axes(), quantities=("gap",))
    assert np.allclose(ax.get_lines()[0].get_xdata(), [h["time"] for h in model.history_])


def test_training_curves_mark_cccp_rounds():
    X, y, bags, _ = make_bags(n_bags=40, n_features=6, random_state=0)
    model = LatentAPSVM(C=10, init="instances").fit(X, y, bags=bags)
    ax = plot.training_curves(model, ax=axes())
    # the initialising solve (no round), then each CCCP round's iterations
    rounds = [r.get("round") for r in model.trace_]
    assert rounds[0] is None and rounds[-1] == model.n_outer_iter_ >= 2
    assert rounds == sorted(rounds, key=lambda r: -1 if r is None else r)
    marks = [line for line in ax.get_lines() if line.get_linestyle() == ":"]
    assert len(marks) == model.n_outer_iter_  # (where each round starts)
    assert len(ax.get_lines()[0].get_xdata()) == len(model.trace_)
    # review 23: the starts of n_init are marked apart (the objective of another start
    # is not a rise of CCCP's)
    model = LatentAPSVM(C=10, init="instances", n_init=3).fit(X, y, bags=bags)
    ax = plot.training_curves(model, ax=axes())
    rounds = [r.get("round") for r in model.trace_]
    restarts = sum(1 for a, b in zip(rounds, rounds[1:]) if None not in (a, b) and b < a)
    assert restarts == 2
    solid = [line for line in ax.get_lines() if line.get_label() == "another CCCP start (n_init)"]
    assert len(solid) == 1 and sum(line.get_linestyle() == "-" and line.get_color() == "0.3"
                                   for line in ax.get_lines()) == restarts


def test_topk_accuracy_curves():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(150, 4)), rng.integers(0, 5, 150)
    models = {f"k={k}": TopKSVM(k=k, C=1.0, random_state=0).fit(X, y) for k in (1, 2)}
    ax = plot.topk_accuracy(models, X, y, ax=axes())
    for line, model in zip(ax.get_lines(), models.values()):
        assert line.get_xdata().tolist() == [1, 2, 3, 4, 5]
        assert np.allclose(line.get_ydata(), top_k_accuracies(y, model.decision_function(X),
                                                              [1, 2, 3, 4, 5], model.classes_))
    scores = models["k=1"].decision_function(X)
    ax = plot.topk_accuracy({"scores": (scores, models["k=1"].classes_)}, y=y, ks=[1, 3],
                            ax=axes())
    assert ax.get_lines()[0].get_xdata().tolist() == [1, 3]


def test_interleaving_picture():
    rng = np.random.default_rng(2)
    y = (rng.random(80) < 0.2).astype(float)
    s = rng.normal(size=80) + y
    ax = plot.interleaving(s, y, ax=axes())
    ranks = ax.get_lines()[0].get_ydata()
    negatives = y == 0
    expected = loss_augmented_inference(s, y).ranks[negatives][np.argsort(-s[negatives],
                                                                          kind="stable")]
    assert np.array_equal(ranks, expected)
    assert np.all(np.diff(ranks) >= 0)  # (lower-scored negatives go further down)
    assert ranks.min() >= 1 and ranks.max() <= y.sum() + 1


def test_max_marginal_scatter():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0.3).astype(float)
    edges = np.array([[i, i + 1] for i in range(39)])
    model = HOAPSVM(C=1.0, cccp_max_iter=2).fit(X, y, edges=edges)
    ax = plot.max_marginals(model, X, y, edges, ax=axes())
    m0, m1 = model.max_marginals(X, edges)
    negatives, positives = ax.collections
    assert np.allclose(negatives.get_offsets(), np.c_[m0[y == 0], m1[y == 0]])
    assert np.allclose(positives.get_offsets(), np.c_[m0[y == 1], m1[y == 1]])
    assert np.allclose(m1 - m0, model.decision_function(X, edges))


def test_console_scripts_write_figures(tmp_path):
    X, y, qid = make_ranking(n_samples=200, n_features=8, n_queries=2, random_state=0)
    data = tmp_path / "train.dat"
    dump_svmlight(data, X, y, qid)
    model, png = tmp_path / "model", tmp_path / "curves.png"
    assert ap_learn.main(["-v", "0", "-c", "10", "--plot", str(png), str(data), str(model)]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"
    pr = tmp_path / "pr.png"
    assert ap_classify.main(["-v", "0", "--plot", str(pr), str(data), str(model),
                             str(tmp_path / "out")]) == 0
    assert pr.read_bytes()[:4] == b"\x89PNG"
    rng = np.random.default_rng(0)
    Xm, ym = rng.normal(size=(90, 3)), rng.integers(1, 4, 90).astype(float)
    multi = tmp_path / "multi.dat"
    dump_svmlight(multi, Xm, ym)
    topk = tmp_path / "topk.png"
    assert topk_learn.main(["-v", "0", "-c", "100", "--plot", str(tmp_path / "t.svg"),
                            str(multi), str(tmp_path / "tm")]) == 0
    assert b"<svg" in (tmp_path / "t.svg").read_bytes()[:400]
    assert topk_classify.main(["-v", "0", "--plot", str(topk), str(multi), str(tmp_path / "tm"),
                               str(tmp_path / "tout")]) == 0
    assert topk.read_bytes()[:4] == b"\x89PNG"


def test_dialect_classifiers_write_pr_curves(tmp_path):
    """svm_rank_classify, svm_perf_classify and svm_classify take --plot as
    svm_ap_classify does: the precision-recall curve of the scores they write."""
    from svmrank.cli import light_classify, light_learn, perf_classify, rank_classify
    X, y, qid = make_ranking(n_samples=120, n_features=6, n_queries=3, random_state=2)
    ranked = tmp_path / "ranked.dat"
    dump_svmlight(ranked, X, y, qid)
    binary = tmp_path / "binary.dat"
    dump_svmlight(binary, X, np.where(y > 0, 1.0, -1.0))
    model = tmp_path / "model"
    assert light_learn.main(["-v", "0", "-c", "0.1", str(binary), str(model)]) == 0
    for script, data in ((rank_classify, ranked), (perf_classify, binary),
                         (light_classify, binary)):
        png = tmp_path / f"{script.__name__.rsplit('.', 1)[1]}.png"
        assert script.main(["-v", "0", "--plot", str(png), str(data), str(model),
                            str(tmp_path / "out")]) == 0
        assert png.read_bytes()[:4] == b"\x89PNG"
    args = rank_classify.DIALECT.parse(["--plot", "pr.svg", "t", "m", "p"])
    assert args.plot == "pr.svg"


def test_data_a_figure_cannot_show_is_a_warning(tmp_path, capsys):
    """Review 23: --plot made a classifier exit 1 after its predictions on unlabeled
    data or a label outside the classes (the error named y); it now warns, writes no
    figure, and the run prints its measures and exits 0."""
    from svmrank.cli import rank_classify
    X, y, qid = make_ranking(n_samples=60, n_features=4, n_queries=2, random_state=0)
    data, model = tmp_path / "train.dat", tmp_path / "model"
    dump_svmlight(data, X, y, qid)
    assert ap_learn.main(["-v", "0", "-c", "10", str(data), str(model)]) == 0
    unlabeled = tmp_path / "unlabeled.dat"
    dump_svmlight(unlabeled, X, np.zeros(len(y)), qid)
    for script in (ap_classify, rank_classify):
        png = tmp_path / "pr.png"
        assert script.main(["--plot", str(png), str(unlabeled), str(model),
                            str(tmp_path / "out")]) == 0
        out, err = capsys.readouterr()
        assert f"--plot {png}: no figure written: y: no query has both a relevant" in err
        assert not png.exists() and len((tmp_path / "out").read_text().splitlines()) == 60
        assert "Runtime" in out or "AP" in out
    multi, topk = tmp_path / "multi.dat", tmp_path / "topk.png"
    dump_svmlight(multi, X, np.r_[np.ones(30), 2 * np.ones(30)])
    assert topk_learn.main(["-v", "0", "-c", "1", str(multi), str(tmp_path / "tm")]) == 0
    dump_svmlight(multi, X, 99 * np.ones(60))
    assert topk_classify.main(["--plot", str(topk), str(multi), str(tmp_path / "tm"),
                               str(tmp_path / "tout")]) == 0
    out, err = capsys.readouterr()
    assert "no figure written: y_true: label 99.0 is not one of classes" in err
    assert "Top-k accuracy: top-1 0.00%" in out and not topk.exists()


def test_a_bad_plot_path_is_refused_before_any_work(tmp_path, capsys):
    """Review 21: a figure path in a missing folder, a folder, or of an unknown format
    was found after training, which then wrote no model."""
    from svmrank.cli import rank_classify, rank_learn
    X, y, qid = make_ranking(n_samples=60, n_features=4, n_queries=2, random_state=0)
    data, model = tmp_path / "train.dat", tmp_path / "model"
    dump_svmlight(data, X, y, qid)
    for figure, status, message in ((tmp_path / "no" / "x.png", 1, "no such directory"),
                                    (tmp_path, 1, "it is a directory"),
                                    (tmp_path / "x.xyz", 2, "unknown figure format 'xyz'")):
        assert rank_learn.main(["-c", "1", "--plot", str(figure), str(data), str(model)]) == status
        err = capsys.readouterr()
        assert message in err.err and str(figure) in err.err and err.out == ""  # (no training)
        assert not model.exists()
    assert rank_learn.main(["-v", "0", "-c", "1", str(data), str(model)]) == 0
    out = tmp_path / "pred"
    assert rank_classify.main(["--plot", str(tmp_path / "x.xyz"), str(data), str(model),
                               str(out)]) == 2
    assert "--plot" in capsys.readouterr().err and not out.exists()


def test_bad_plot_input_is_a_one_line_error():
    """Review 23: lengths that differ, string labels, no relevant sample, an unfitted
    estimator, a CCCP history and records without time raised numpy errors or drew an
    'AP = nan' figure."""
    from sklearn.exceptions import NotFittedError
    for args, kwargs, message in (
            (([0, 1, 1], [1, 2, 3], [1, 1]), {"kind": "mean"}, "^qid: expected length 3, got 2"),
            (([0, 1], [1, 2], [1, 1, 2]), {"kind": "per_query"}, "^qid: expected length 2"),
            (([0, 1, 1], [1, 2]), {}, "^y: expected length 2, got 3"),
            (([0, 0, 0], [1, 2, 3]), {}, r"^y: no relevant sample \(y > 0\)"),
            (([], []), {}, "^y: no relevant sample"),
            (([0, 1], [1, 2], [1, 1]), {"kind": "mean", "n_points": 0}, "^n_points must be")):
        with pytest.raises(ValueError, match=message):
            plot.pr_curve(*args, ax=axes(), **kwargs)
    ax = plot.pr_curve(["0", "1"], [1, 2], ax=axes())  # (labels as the metrics take them)
    assert ax.get_legend().get_texts()[0].get_text() == "AP = 1.000"
    with pytest.raises(NotFittedError):
        plot.training_curves(RankSVM())
    for source, message in ((None, "^source: expected a fitted estimator"),
                            ([1.5, 1.2], r"^source: expected records .*got 1.5"),
                            ("objective", "^source: expected")):
        with pytest.raises(ValueError, match=message):
            plot.training_curves(source)
    records = [{"iteration": 1, "objective": 1.0}]
    with pytest.raises(ValueError, match="^x='time': the records have no 'time'"):
        plot.training_curves(records, x="time")
    with pytest.raises(ValueError, match="^quantities: expected a sequence of names, got the "
                                         "string 'objective'"):
        plot.training_curves(records, quantities="objective")


def test_pr_curve_of_ties_is_one_point_per_tie_group():
    """Review 23: tied scores were ranked in input order, so the figure changed when the
    file was shuffled and its area disagreed with the AP of its legend."""
    rng = np.random.default_rng(4)
    y = (rng.random(200) < 0.3).astype(float)
    s = np.round(rng.normal(size=200) + y, 1)  # (many ties)
    recall, precision = plot.precision_recall(y, s)
    perm = rng.permutation(200)
    r2, p2 = plot.precision_recall(y[perm], s[perm])
    np.testing.assert_array_equal(recall, r2)
    np.testing.assert_array_equal(precision, p2)
    area = np.sum(np.diff(np.r_[0.0, recall]) * precision)
    assert area == pytest.approx(average_precision(y, s))
    assert plot.precision_recall([1, 0, 0, 1], [0.0] * 4)[1].tolist() == [0.5]


def test_plots_read_labels_and_scores_as_the_estimators_do():
    from sklearn.linear_model import LogisticRegression
    from svmrank import HOBSVM
    X, y, qid = make_ranking(n_samples=60, n_features=4, n_queries=1, random_state=0)
    edges = np.array([[i, i + 1] for i in range(59)])
    names = np.array(["neg", "pos"])[(y > 0).astype(int)]
    h = HOBSVM(C=1.0).fit(X, names, edges=edges)
    ax = plot.max_marginals(h, X, names, edges, ax=axes())
    assert len(ax.collections[1].get_offsets()) == int((y > 0).sum())  # (the relevant ones)
    lr = LogisticRegression().fit(X, y > 0)
    with pytest.raises(ValueError, match=r"^models\['lr'\] scores: expected a 2-d array"):
        plot.topk_accuracy({"lr": lr}, X, y > 0)
