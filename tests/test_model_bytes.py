"""Every console script writes the same bytes as the golden files in tests/golden/.

The golden model and prediction files were written by main before the refactoring of
issue 24 (commit b572eac); a change that moves code without meaning to change results
must keep them byte-identical. Regenerate them only for a change that means to change
a model: ``python tests/test_model_bytes.py tests/golden``.

Ranking runs use data_examples/; bags, linked examples and multiclass data are written
here from seeded generators (svmrank.datasets) and scikit-learn's bundled iris set.
"""
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
TRAIN, TEST = ROOT / "data_examples" / "rank_train.dat", ROOT / "data_examples" / "rank_test.dat"

# name: (learn options, training file key, test file key, classify options)
AP_RUNS = {
    "ap": (["-c", "10", "-e", "0.001"], "rank_train", "rank_test", []),
    "ndcg": (["-l", "ndcg", "-c", "10"], "rank_train", "rank_test", []),
    "roc": (["-l", "roc", "-c", "10"], "rank_train", "rank_test", []),
    "error": (["-l", "2", "-c", "10"], "rank_train_noqid", "rank_test", []),
    "approx": (["--approx", "50", "-c", "10"], "rank_train", "rank_test", []),
    "latent_ap": (["--latent", "-c", "10"], "bags_train", "bags_test", ["--latent"]),
    "latent_svm": (["--latent", "-l", "2", "-c", "10"], "bags_train", "bags_test", ["--latent"]),
    "hob": (["--model", "hob", "--groups", "qid", "-c", "10"], "linked_train", "linked_test",
            ["--groups", "qid"]),
    "hoap": (["--model", "hoap", "--groups", "qid", "-c", "10"], "linked_train", "linked_test",
             ["--groups", "qid"]),
}
TOPK_RUNS = {
    "topk1": (["-c", "100", "-k", "1"], "iris_train", "iris_test", []),
    "topk2": (["-c", "100", "-k", "2", "--loss", "beta"], "iris_train", "iris_test", []),
}


def write_data(folder):
    """The training and test files of every run, by key."""
    from sklearn.datasets import load_iris

    from svmrank.datasets import make_bags, make_grouped
    from svmrank.io.svmlight import dump_svmlight

    files = {"rank_train": TRAIN, "rank_test": TEST}
    # (-l 2 refuses queries: the error rate trains on the same lines without their qid)
    files["rank_train_noqid"] = folder / "rank_train_noqid.dat"
    files["rank_train_noqid"].write_text(
        "".join(" ".join(t for t in line.split(" ") if not t.startswith("qid:"))
                for line in TRAIN.read_text().splitlines(keepends=True)))
    for part, seed in (("train", 0), ("test", 1)):
        X, y, bags, _ = make_bags(n_bags=40, n_features=8, random_state=seed)
        files[f"bags_{part}"] = folder / f"bags_{part}.dat"
        dump_svmlight(files[f"bags_{part}"], X, y, qid=bags)
        X, y, groups = make_grouped(n_samples=90, n_features=8, n_groups=20, random_state=seed)
        order = np.argsort(groups, kind="stable")
        files[f"linked_{part}"] = folder / f"linked_{part}.dat"
        dump_svmlight(files[f"linked_{part}"], np.round(X[order], 4), y[order],
                      qid=groups[order] + 1)
    iris = load_iris()
    test = np.arange(len(iris.target)) % 5 == 0
    for part, rows in (("train", ~test), ("test", test)):
        files[f"iris_{part}"] = folder / f"iris_{part}.dat"
        dump_svmlight(files[f"iris_{part}"], iris.data[rows], iris.target[rows] + 1.0)
    return files


def run_all(folder):
    """Run every learner and classifier; return {output file name: bytes}."""
    from svmrank.cli import ap_classify, ap_learn, topk_classify, topk_learn

    folder = Path(folder)
    files = write_data(folder)
    out = {}
    for runs, learn, classify in ((AP_RUNS, ap_learn, ap_classify),
                                  (TOPK_RUNS, topk_learn, topk_classify)):
        for name, (options, train, test, classify_options) in runs.items():
            model, pred = folder / f"{name}.model", folder / f"{name}.predictions"
            assert learn.main(["-v", "0"] + options + [str(files[train]), str(model)]) == 0, name
            assert classify.main(["-v", "0"] + classify_options
                                 + [str(files[test]), str(model), str(pred)]) == 0, name
            out[model.name], out[pred.name] = model.read_bytes(), pred.read_bytes()
    return out


@pytest.mark.filterwarnings("ignore")
def test_console_scripts_write_the_golden_bytes(tmp_path):
    written = run_all(tmp_path)
    assert sorted(written) == sorted(p.name for p in GOLDEN.iterdir())
    changed = [name for name, data in written.items() if (GOLDEN / name).read_bytes() != data]
    assert not changed, f"these outputs differ from tests/golden/: {changed}"


if __name__ == "__main__":
    import tempfile
    import warnings

    target = Path(sys.argv[1])
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, data in run_all(tmp).items():
            (target / name).write_bytes(data)
            print(name, len(data))
