"""svmrank.io.to_model / from_model: every family through its model file and back."""
import subprocess
import sys

import numpy as np
import pytest

from svmrank.datasets import make_bags, make_grouped, make_ranking
from svmrank.estimators import (APSVM, HOAPSVM, HOBSVM, BinarySVM, LatentAPSVM, LatentSSVM,
                                LatentSVM, RankSVM, TopKSVM)
from svmrank.exceptions import NotFittedError
from svmrank.graph import edges_from_groups
from svmrank.io import (LinearModel, MulticlassModel, dump_svmlight, from_model, read_model,
                        read_multiclass_model, to_model, training_info, write_model,
                        write_multiclass_model)
from svmrank.io.estimator_model import MULTICLASS_SCALE, flip_sign
from svmrank.io.multiclass_model import format_label


@pytest.fixture(scope="module")
def ranking():
    X, y, qid = make_ranking(n_samples=60, n_features=6, n_queries=3, positive_fraction=0.3,
                             density=0.8, random_state=3)
    return X, y, qid


@pytest.fixture(scope="module")
def bag_data():
    X, y, bags, known = make_bags(n_bags=24, bag_size=(1, 4), n_features=5, supervision=0.3,
                                  random_state=1)
    return X, y, bags, known


@pytest.fixture(scope="module")
def linked():
    X, y, groups = make_grouped(n_samples=40, n_features=4, n_groups=10, random_state=4)
    return X, y, edges_from_groups(groups)


def through_file(tmp_path, model):
    path = tmp_path / "model"
    if isinstance(model, MulticlassModel):
        write_multiclass_model(path, model)
        return read_multiclass_model(path)
    write_model(path, model)
    return read_model(path)


RANKING_FAMILIES = [
    (RankSVM(loss="ap", C=3.0, epsilon=0.01), RankSVM, {"loss": "ap"}),
    (RankSVM(loss="ndcg", C=3.0, epsilon=0.01), RankSVM, {"loss": "ndcg"}),
    (RankSVM(loss="roc", C=3.0, epsilon=0.01), RankSVM, {"loss": "roc"}),
    (RankSVM(loss="ap", C=3.0, epsilon=0.01, approx=50), RankSVM, {"loss": "ap"}),
    (APSVM(C=3.0, epsilon=0.01), RankSVM, {"loss": "ap"}),
    (BinarySVM(C=3.0, epsilon=0.01, bias=1.0), BinarySVM, {}),
]


@pytest.mark.parametrize("estimator, cls, params", RANKING_FAMILIES,
                         ids=["ap", "ndcg", "roc", "approx", "apsvm", "binary"])
def test_linear_families_round_trip(tmp_path, ranking, estimator, cls, params):
    X, y, qid = ranking
    est = estimator.fit(X, y, qid=qid)
    model = to_model(est, n_train=X.shape[0])
    # in memory: the same weights and intercept, so the same scores to the bit
    back = from_model(model)
    assert type(back) is cls
    np.testing.assert_array_equal(back.decision_function(X), est.decision_function(X))
    # through the file: weights and threshold as %.8g
    back = from_model(through_file(tmp_path, model))
    assert type(back) is cls
    assert back.C == 3.0 and back.epsilon == 0.01
    assert back.get_params().items() >= params.items()
    np.testing.assert_allclose(back.decision_function(X), est.decision_function(X),
                               rtol=1e-6, atol=1e-7 * np.abs(est.decision_function(X)).max())
    # the labels travel in the metadata (review 21: they came back as -1 and 1)
    np.testing.assert_array_equal(back.classes_, est.classes_)
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    if cls is RankSVM:  # score measures by the restored loss
        assert back.score(X, y, qid=qid) == pytest.approx(est.score(X, y, qid=qid), abs=1e-6)
    info = training_info(read_model(tmp_path / "model"))
    assert info["n_train"] == X.shape[0] and info["iterations"] == est.n_iter_
    assert info["loss"] == ("error" if cls is BinarySVM else params["loss"])


def test_labels_that_are_not_numbers_round_trip(tmp_path, ranking):
    X, y, qid = ranking
    labels = np.where(y > 0, "relevant doc", "x=1, other")  # (space, comma and '=')
    est = APSVM(C=3.0, epsilon=0.01).fit(X, labels, qid=qid)
    back = from_model(through_file(tmp_path, to_model(est, n_train=X.shape[0])))
    np.testing.assert_array_equal(back.classes_, est.classes_)
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    pm = est.fit(X, np.where(y > 0, 1, -1), qid=qid)  # (SVM-light's labels: no metadata)
    assert "classes" not in to_model(pm, n_train=X.shape[0]).metadata


def test_the_threshold_is_minus_the_intercept(ranking):
    X, y, qid = ranking
    est = BinarySVM(C=3.0, epsilon=0.01).fit(X, y)
    assert est.intercept_ != 0
    model = to_model(est)
    assert model.b == -est.intercept_
    assert from_model(model).intercept_ == est.intercept_
    np.testing.assert_array_equal(model.decision_function(X), est.decision_function(X))
    # an intercept of 0 is a threshold of 0, not -0 (the file says "0", as SVM-light's)
    est = RankSVM(C=3.0, epsilon=0.01).fit(X, y, qid=qid)
    assert est.intercept_ == 0 and np.copysign(1.0, to_model(est).b) == 1.0
    assert flip_sign(0.0) == 0.0 and np.copysign(1.0, flip_sign(0.0)) == 1.0
    assert flip_sign(flip_sign(-2.5)) == -2.5


@pytest.mark.parametrize("estimator, cls, loss", [
    (LatentAPSVM(C=2.0, epsilon=0.01), LatentAPSVM, "ap"),
    (LatentSSVM(C=2.0, epsilon=0.01, max_rounds=5), LatentSSVM, "ap"),
    (LatentSVM(C=2.0, epsilon=0.01, J=2.0, c=0.2), LatentSVM, "error"),
], ids=["latent-ap", "latent-ssvm", "latent-svm"])
def test_latent_families_round_trip(tmp_path, bag_data, estimator, cls, loss):
    X, y, bags, known = bag_data
    est = estimator.fit(X, y, bags=bags, known=known)
    model = to_model(est, n_train=X.shape[0])
    info = training_info(model)
    assert info["latent"] is True and info["loss"] == loss
    assert info["cccp_iterations"] == est.n_outer_iter_
    back = from_model(model)
    assert type(back) is cls
    np.testing.assert_array_equal(back.decision_function(X, bags=bags),
                                  est.decision_function(X, bags=bags))
    back = from_model(through_file(tmp_path, model))
    assert type(back) is cls and back.C == 2.0 and back.epsilon == 0.01
    # (review 22: J, c and LatentSSVM's identity were lost; score without bags warns)
    params = est.get_params()
    assert {k: v for k, v in back.get_params().items() if k in ("J", "c", "max_rounds")} == \
        {k: v for k, v in params.items() if k in ("J", "c", "max_rounds")}
    assert back.max_bag_size_ == est.max_bag_size_ > 1
    with pytest.warns(UserWarning, match="score got no bags"):
        back.score(X, y)
    np.testing.assert_allclose(back.decision_function(X, bags=bags),
                               est.decision_function(X, bags=bags), rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(back.predict_latent(X, bags=bags),
                                  est.predict_latent(X, bags=bags))
    # without bags: every row on its own (svm_ap_classify without --latent)
    np.testing.assert_allclose(back.decision_function(X), est.candidate_scores(X),
                               rtol=1e-6, atol=1e-7)


def test_latent_reads_any_linear_part_as_candidate_scores(ranking):
    X, y, qid = ranking
    est = BinarySVM(C=3.0, epsilon=0.01).fit(X, y)
    model = to_model(est)
    as_bags = from_model(model, latent=True)
    assert type(as_bags) is LatentSVM  # (loss=error)
    bags = np.repeat(np.arange(X.shape[0] // 3), 3)
    expected = est.decision_function(X).reshape(-1, 3).max(axis=1)
    np.testing.assert_array_equal(as_bags.decision_function(X, bags=bags), expected)
    assert type(from_model(to_model(RankSVM(C=1.0).fit(X, y)), latent=True)) is LatentAPSVM
    latent = to_model(LatentSVM(C=1.0, epsilon=0.01).fit(X, y.reshape(-1, 3).max(axis=1),
                                                               bags=bags))
    assert type(from_model(latent, latent=False)) is BinarySVM


@pytest.mark.parametrize("cls, params", [
    (HOBSVM, dict(C=4.0, epsilon=0.01, eta=0.7, pairwise_features=[1, 3], bias=1.0)),
    (HOBSVM, dict(C=4.0, epsilon=0.01, eta=0.0, bias=0.0)),
    (HOAPSVM, dict(C=4.0, epsilon=0.01, eta=0.5, pairwise_features=[0, 2], cccp_max_iter=3)),
], ids=["hob", "hob-no-bias", "hoap"])
def test_high_order_families_round_trip(tmp_path, linked, cls, params):
    X, y, edges = linked
    est = cls(**params).fit(X, y, edges=edges)
    model = to_model(est, n_train=X.shape[0])
    info = training_info(model)
    assert info["model"] == ("hoap" if cls is HOAPSVM else "hob")
    assert info["eta"] == params["eta"] and info["bias"] == params.get("bias", 1.0)
    for model_ in (model, through_file(tmp_path, model)):
        back = from_model(model_)
        assert type(back) is cls
        assert back.C == 4.0 and back.epsilon == 0.01 and back.eta == params["eta"]
        assert back.bias == params.get("bias", 1.0)
        assert back.pairwise_features == params.get("pairwise_features", list(range(4)))
        np.testing.assert_allclose(back.decision_function(X, edges=edges),
                                   est.decision_function(X, edges=edges), rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(back.predict(X, edges=edges), est.predict(X, edges=edges))
        # the file's linear part is the unary part: the scores of unlinked samples
        np.testing.assert_allclose(model_.decision_function(X), est.decision_function(X),
                                   rtol=1e-6, atol=1e-6)


def test_topk_round_trip(tmp_path):
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(4, 5)) * 3
    y = np.repeat([2, 5, 7, 9], 15)
    X = centres[np.searchsorted([2, 5, 7, 9], y)] + rng.normal(size=(60, 5))
    est = TopKSVM(k=2, loss="beta", C=0.05, epsilon=1e-4, random_state=0).fit(X, y)
    model = to_model(est)
    assert isinstance(model, MulticlassModel) and model.n_train == 60
    np.testing.assert_array_equal(model.coef, MULTICLASS_SCALE * est.coef_)
    info = training_info(model)
    assert info["k"] == 2 and info["loss"] == "beta" and info["model"] == "topk-svm"
    assert info["C"] == pytest.approx(0.05 * MULTICLASS_SCALE * 60)
    back = from_model(through_file(tmp_path, model))
    assert type(back) is TopKSVM
    assert (back.k, back.loss, back.epsilon) == (2, "beta", 1e-4)
    assert back.C == pytest.approx(0.05)
    np.testing.assert_allclose(back.decision_function(X), est.decision_function(X),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    np.testing.assert_array_equal(back.predict_topk(X), est.predict_topk(X))
    assert back.score(X, y) == est.score(X, y)
    # the file's scores are svm_multiclass_learn's: MULTICLASS_SCALE times the estimator's
    np.testing.assert_allclose(model.scores(X), MULTICLASS_SCALE * est.decision_function(X))


def test_topk_string_labels_round_trip(tmp_path, capsys):
    """A TopKSVM fitted on texts used to be refused by the writer ('classes: must be
    numbers'); its file now keeps them as the binary models' do, and svm_topk_classify
    prints them back percent-encoded."""
    from svmrank.cli.topk_classify import main as classify
    rng = np.random.default_rng(0)
    codes = np.repeat([0, 1, 2], 10)
    X = rng.normal(size=(3, 4))[codes] * 3 + rng.normal(size=(30, 4))
    names = np.array(["bee", "cat dog", "x=1,#"], dtype=object)
    est = TopKSVM(k=1, C=0.1, random_state=0).fit(X, names[codes])
    back = from_model(through_file(tmp_path, to_model(est)))
    assert back.classes_.tolist() == names.tolist()
    np.testing.assert_array_equal(back.predict(X), est.predict(X))
    assert back.score(X, names[codes]) == est.score(X, names[codes])
    write_multiclass_model(tmp_path / "model", to_model(est))
    dump_svmlight(tmp_path / "test.dat", X, np.ones(len(X)))
    assert classify([str(tmp_path / f) for f in ("test.dat", "model", "pred")]) == 0
    first = [line.split()[0] for line in (tmp_path / "pred").read_text().splitlines()]
    assert first == [format_label(c) for c in est.predict(X)]
    assert set(first) <= {"bee", "cat%20dog", "x%3D1%2C%23"}
    capsys.readouterr()


def test_files_of_other_tools_read_as_plain_linear_estimators(tmp_path):
    X = np.array([[1.0, 0.0, 2.0], [0.5, -1.0, 0.0], [0.0, 0.0, 0.0]])
    for metadata, cls in (({}, RankSVM), ({"loss": "error"}, BinarySVM),
                          ({"loss": "ndcg"}, RankSVM)):
        model = through_file(tmp_path, LinearModel(np.array([0.5, -2.0, 1.0]), 0.25, metadata))
        est = from_model(model)
        assert type(est) is cls and est.n_features_in_ == 3
        np.testing.assert_array_equal(est.decision_function(X), X @ model.w - model.b)
    assert from_model(model).loss == "ndcg"
    # svm_multiclass_learn's file: k = 1, classes 1..m; a threshold b has no counterpart
    multi = MulticlassModel(coef=np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0]]),
                            classes=np.array([1.0, 2.0]), n_train=4)
    est = from_model(through_file(tmp_path, multi))
    assert type(est) is TopKSVM and est.k == 1 and est.dual_coef_ is None
    np.testing.assert_array_equal(est.predict(X), [1.0, 1.0, 1.0])
    assert est.classes_.dtype == np.int64  # (review 22: SVM-multiclass labels are integers)
    multi.b = 0.5  # (review 22: svm_topk_classify scores with it; same predictions)
    with pytest.warns(UserWarning, match=r"^model: threshold b = 0.5 is dropped"):
        np.testing.assert_array_equal(from_model(multi).predict(X), est.predict(X))
    multi.b = 0.0
    for metadata, message in (({"k": "2"}, "k=2 is outside 1..1 for 2 classes"),
                              ({"k": "0"}, "k=0 is outside"), ({"C": "-5"}, "C and epsilon")):
        bad = MulticlassModel(coef=multi.coef, classes=multi.classes, n_train=4,
                              metadata=metadata)
        with pytest.raises(ValueError, match=f"^model: {message}"):
            from_model(bad)


def test_bad_input_is_refused(ranking):
    X, y, qid = ranking
    with pytest.raises(NotFittedError):
        to_model(RankSVM())
    with pytest.raises(ValueError, match="no model file holds a str"):
        to_model("RankSVM")
    est = RankSVM(C=1.0).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match=r"^training_info: unknown key 'weights'"):
        to_model(est, weights=3)
    assert to_model(est, n_train=5, C=2.5).metadata["C"] == "2.5"  # (given wins)
    with pytest.raises(ValueError, match="expected a LinearModel or MulticlassModel"):
        from_model(est)


def test_metadata_that_does_not_parse_is_left_out():
    """Informational keys edited by hand (C=abc) do not stop a model from scoring;
    the high-order keys it scores with do (see test_high_order)."""
    model = LinearModel(np.ones(2), 0.0, {"C": "abc", "loss": "roc", "iterations": "x"})
    assert training_info(model) == {"loss": "roc"}
    est = from_model(model)
    assert est.C == RankSVM().C and est.loss == "roc"


def test_console_scripts_start_without_the_estimators():
    """The estimators import scikit-learn (a second of start-up): `svm_ap_classify -?`
    and option errors must not pay for it; they are imported where a fit needs them."""
    code = ("import sys\n"
            "import svmrank.cli.ap_classify, svmrank.cli.ap_learn, svmrank.cli.topk_classify\n"
            "import svmrank.cli.topk_learn, svmrank.io\n"
            "print(sorted(m for m in sys.modules if m.startswith(('svmrank.estimators', "
            "'sklearn'))))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_binary_bias_round_trips(tmp_path, ranking, bag_data):
    """BinarySVM's and LatentSVM's bias (svm_learn -b 0, svm_perf_learn --b) is kept,
    so that the estimator read back refits the same problem; the default 1 is not
    written (files stay as they were)."""
    X, y, _ = ranking
    for bias in (0.0, 0.5, 1.0):
        est = BinarySVM(C=3.0, epsilon=0.01, bias=bias).fit(X, y)
        model = to_model(est)
        assert ("bias" in model.metadata) == (bias != 1.0)
        back = from_model(through_file(tmp_path, model))
        assert back.bias == bias
        np.testing.assert_allclose(back.decision_function(X), est.decision_function(X),
                                   rtol=1e-6, atol=1e-8)
    Xb, yb, bags, _ = bag_data
    latent = LatentSVM(C=1.0, bias=0.5, max_outer_iter=2).fit(Xb, yb, bags=bags)
    assert from_model(through_file(tmp_path, to_model(latent))).bias == 0.5


def test_damaged_metadata_of_ours_is_refused_at_its_line(tmp_path, ranking):
    """Review 23: one stray word in our metadata dropped all of it (other class labels,
    loss and C, exit 0), and a value that did not parse, or a repeated key, was replaced
    silently; now each is an error naming the file and the metadata's line. A foreign
    comment (svm_learn copies training comments there) still reads as no metadata."""
    from svmrank.exceptions import InputFormatError
    X, y, qid = ranking
    est = APSVM(C=3.0, epsilon=0.01).fit(X, np.where(y > 0, "rel", "non"), qid=qid)
    path = tmp_path / "model"
    write_model(path, to_model(est, n_train=X.shape[0]))
    text = path.read_text()
    line = text.count("\n")
    for old, new, message in (
            (" C=3", " note: C=3", r"svmrank's metadata: key=value tokens .*got 'note:'"),
            (" C=3", " C=abc", r"C= as a positive number, got 'C=abc'"),
            (" C=3", " C=-1", r"C= as a positive number, got 'C=-1'"),
            ("loss=ap", "loss=foo", r"loss= as a loss svmrank writes, got 'loss=foo'"),
            ("classes=s:non,rel", "classes=nan,1", "classes= as distinct finite labels"),
            ("classes=s:non,rel", "classes=1,1", "classes= as distinct finite labels"),
            (" C=3", " C=3 loss=roc", r"each metadata key once \(loss= is repeated\)"),
            (" C=3", " C=3 max_rounds=x", "max_rounds= as an integer, got 'max_rounds=x'"),
            (" C=3", " C=3 pair_loss=bogus", "pair_loss= as fraction or count")):
        assert old in text
        path.write_text(text.replace(old, new, 1))
        with pytest.raises(InputFormatError, match=f"^{path}:{line}: expected {message}"):
            read_model(path)
    path.write_text(text.replace("svmrank=", "from=", 1).replace(" C=3", " note: C=3"))
    assert read_model(path).metadata == {"n_train": str(X.shape[0])}  # (not ours)


def test_multiclass_classes_in_any_order(tmp_path):
    """Review 23: from_model refused a file whose classes were not increasing, which
    svm_topk_classify reads; the weight rows follow their classes."""
    coef = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])
    model = MulticlassModel(coef, [20, 5, 10], 3)
    est = from_model(through_file(tmp_path, model))
    X = np.array([[2.0, 0.0], [0.0, 2.0], [-1.0, -1.0]])
    assert est.classes_.tolist() == [5, 10, 20]
    assert est.predict(X).tolist() == [20, 5, 10]
    np.testing.assert_allclose(est.decision_function(X) * MULTICLASS_SCALE,
                               model.scores(X)[:, [1, 2, 0]])
