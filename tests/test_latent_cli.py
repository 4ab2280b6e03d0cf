"""The --latent flag of svm_ap_learn / svm_ap_classify: bag files in, bag scores out."""
import numpy as np
import pytest

from svmrank.cli import ap_classify, ap_learn
from svmrank.datasets import make_bags
from svmrank.estimators.latent import LatentAPSVM, LatentSVM
from svmrank.io.model_file import read_model
from svmrank.io.svmlight import dump_svmlight


@pytest.fixture
def bag_file(tmp_path):
    X, y, bags, known = make_bags(n_bags=30, bag_size=(1, 4), n_features=5, supervision=0.3,
                                  random_state=0)
    path = tmp_path / "bags.svm"
    dump_svmlight(path, X, y, qid=bags, comments=["known" if k else "" for k in known])
    return path, X, y, bags, known


@pytest.mark.parametrize("loss, cls", [("ap", LatentAPSVM), ("2", LatentSVM)])
def test_learn_and_classify_bags(tmp_path, bag_file, loss, cls, capsys):
    path, X, y, bags, known = bag_file
    model = tmp_path / "model"
    out = tmp_path / "scores"
    assert ap_learn.main(["--latent", "-l", loss, "-c", "1", "-e", "0.01", "-v", "0",
                          str(path), str(model)]) == 0
    extra = {"bias": 1.0} if cls is LatentSVM else {}
    est = cls(C=1.0, epsilon=0.01, **extra).fit(X, y, bags=bags, known=known)
    m = read_model(model)
    assert m.metadata["latent"] == "1"
    np.testing.assert_allclose(m.w[:5], est.coef_, rtol=1e-6, atol=1e-9)
    assert ap_classify.main(["--latent", "-v", "1", str(path), str(model), str(out)]) == 0
    scores = np.loadtxt(out)
    assert scores.shape == (30,)  # one score per bag, order of first appearance
    np.testing.assert_allclose(scores, est.decision_function(X, bags=bags), atol=1e-6)
    assert "Classified 30 examples" in capsys.readouterr().out


def test_latent_errors_name_the_line(tmp_path, capsys):
    path = tmp_path / "bad.svm"
    path.write_text("1 qid:1 1:1\n-1 qid:2 1:2\n1 qid:1 1:3\n")
    assert ap_learn.main(["--latent", str(path), str(tmp_path / "m")]) == 1
    err = capsys.readouterr().err
    assert "bag 1 is not contiguous: it reappears at line 3" in err
    assert ap_learn.main(["--latent", "-l", "roc", str(path), str(tmp_path / "m")]) == 2
    path.write_text("1 qid:1 1:1\n-1 qid:2 2000000000:2\n")
    assert ap_learn.main(["--latent", str(path), str(tmp_path / "m")]) == 1
    assert f"{path}:2: expected a feature index <= 16777216" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()


def test_latent_options_reach_the_estimators(tmp_path, bag_file):
    path, X, y, bags, known = bag_file
    model = tmp_path / "model"
    assert ap_learn.main(["--latent", "-l", "2", "-c", "1", "-j", "2", "--robust", "0.2",
                          "--n-init", "2", "--seed", "1", "-v", "0", str(path), str(model)]) == 0
    est = LatentSVM(C=1.0, J=2.0, c=0.2, n_init=2, random_state=1, epsilon=0.1,
                    bias=1.0).fit(X, y, bags=bags, known=known)
    np.testing.assert_allclose(read_model(model).w[:5], est.coef_, rtol=1e-6, atol=1e-9)
    # (on this seed the second start wins: a dropped --n-init would give another model)
    one = LatentSVM(C=1.0, J=2.0, c=0.2, n_init=1, random_state=1, epsilon=0.1,
                    bias=1.0).fit(X, y, bags=bags, known=known)
    assert np.abs(one.coef_ - est.coef_).max() > 0.1


@pytest.mark.parametrize("options, message", [
    (["--latent", "--robust", "0.2"], "--robust needs --latent -l 2"),
    (["--latent", "-l", "2", "--robust", "1"], "--robust: expected a fraction"),
    (["-j", "2"], "-j needs"),
    (["--n-init", "3"], "--n-init and --seed need --latent"),
    (["--latent", "--n-init", "0"], "--n-init: expected a positive"),
    (["--eta", "2"], "--eta and --pairwise-features need --model"),
])
def test_misplaced_options_are_refused(tmp_path, bag_file, capsys, options, message):
    path = bag_file[0]
    assert ap_learn.main(options + [str(path), str(tmp_path / "m")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "m").exists()


def test_classify_without_latent_on_a_latent_model_says_so(tmp_path, bag_file, capsys):
    path = bag_file[0]
    model, out = tmp_path / "model", tmp_path / "scores"
    assert ap_learn.main(["--latent", "-c", "1", "-e", "0.01", "-v", "0", str(path), str(model)]) == 0
    assert ap_classify.main(["-v", "0", str(path), str(model), str(out)]) == 0
    assert "trained with --latent; without --latent every line" in capsys.readouterr().err
    assert ap_classify.main(["--latent", "-v", "0", str(path), str(model), str(out)]) == 0
    assert "trained with --latent" not in capsys.readouterr().err
