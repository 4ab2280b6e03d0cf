"""svm_ap_learn / svm_ap_classify: SVM-struct-compatible behaviour and bad input."""
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from svmrank.cli import ap_classify, ap_learn
from svmrank.datasets import write_ranking_examples
from svmrank.io.model_file import read_model
from svmrank.io.svmlight import load_svmlight
from svmrank.metrics import ndcg

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("data")
    write_ranking_examples(folder)
    return folder / "rank_train.dat", folder / "rank_test.dat"


def test_learn_then_classify(data, tmp_path, capsys):
    train, test = data
    model, pred = tmp_path / "model", tmp_path / "pred"
    assert ap_learn.main(["-c", "10", "-e", "0.001", str(train), str(model)]) == 0
    out = capsys.readouterr().out
    assert "iter    1" in out and "Converged after" in out
    text = model.read_text().splitlines()
    assert text[0] == "SVM-light Version V6.20" and text[9].startswith("2 # number of support")
    assert "loss=ap" in text[-1] and "C=10" in text[-1]
    assert ap_classify.main([str(test), str(model), str(pred)]) == 0
    out = capsys.readouterr().out
    assert "MAP:" in out and "ROCArea" in out and "Average loss on test set" in out
    scores = np.loadtxt(pred)
    assert scores.shape == (400,)
    assert all(len(line.split(".")[1]) == 8 for line in pred.read_text().splitlines())
    m = read_model(model)
    assert m.metadata["loss"] == "ap" and int(m.metadata["iterations"]) >= 1
    map_line = [ln for ln in out.splitlines() if ln.startswith("MAP")][0]
    assert float(map_line.split()[1]) > 0.8


def test_quiet_and_other_losses(data, tmp_path, capsys):
    train, _ = data
    for loss in ["ndcg", "10", "roc", "11"]:
        assert ap_learn.main(["-v", "0", "-l", loss, "-c", "1", str(train), str(tmp_path / "m")]) == 0
    flat = tmp_path / "flat.dat"  # (-l 2 refuses queries)
    flat.write_text(re.sub(r" qid:\d+", "", train.read_text()))
    for loss in ["2", "error"]:
        assert ap_learn.main(["-v", "0", "-l", loss, "-c", "1", str(flat), str(tmp_path / "m")]) == 0
    assert capsys.readouterr().out == ""


def test_console_scripts_and_launchers_exit_non_zero_on_errors(data, tmp_path):
    train, _ = data
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for launcher in ["svm_ap_learn"]:
        proc = subprocess.run([sys.executable, str(ROOT / "bin" / launcher), "-c", "0", str(train),
                               str(tmp_path / "m")], capture_output=True, text=True, env=env)
        assert proc.returncode == 2
        assert proc.stderr.count("\n") == 1 and "-c must be a finite number > 0" in proc.stderr
        assert not (tmp_path / "m").exists()


def test_launchers_use_the_source_tree_only_when_its_kernels_are_built(tmp_path):
    # after `pip install .` the tree has no compiled kernels: the launchers must run the
    # installed svmrank, not fail importing the tree's
    from importlib.machinery import EXTENSION_SUFFIXES
    launchers = sorted(p.name for p in (ROOT / "bin").iterdir())
    assert launchers == ["svm_ap_classify", "svm_ap_learn", "svm_classify", "svm_learn",
                         "svm_perf_classify", "svm_perf_learn", "svm_rank_classify",
                         "svm_rank_learn", "svm_topk_classify", "svm_topk_learn"]
    modules = {name: re.search(r"from svmrank\.cli\.(\w+) import main",
                               (ROOT / "bin" / name).read_text()).group(1) for name in launchers}
    assert modules["svm_learn"] == "light_learn" and modules["svm_rank_learn"] == "rank_learn"
    assert modules["svm_perf_learn"] == "perf_learn"
    tree, site = tmp_path / "tree", tmp_path / "site"
    (tree / "bin").mkdir(parents=True)
    for where in (tree, site):  # two stand-ins for svmrank that say which one ran
        (where / "svmrank" / "cli").mkdir(parents=True)
        (where / "svmrank" / "__init__.py").write_text("")
        (where / "svmrank" / "cli" / "__init__.py").write_text("")
        for name in launchers:
            module = modules[name]
            (where / "svmrank" / "cli" / f"{module}.py").write_text(
                f"def main():\n    print({where.name!r}, {module!r})\n    return 0\n")
    for name in launchers:
        (tree / "bin" / name).write_bytes((ROOT / "bin" / name).read_bytes())
    env = dict(os.environ, PYTHONPATH=str(site))

    def ran(name):
        proc = subprocess.run([sys.executable, str(tree / "bin" / name)], capture_output=True,
                              text=True, env=env, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout.split()

    for name in launchers:
        assert ran(name) == ["site", modules[name]]
    (tree / "svmrank" / "_lai_fast.cpython-27-foreign.so").write_bytes(b"")  # another Python's
    assert ran("svm_ap_learn")[0] == "site"
    (tree / "svmrank" / ("_lai_fast" + EXTENSION_SUFFIXES[0])).write_bytes(b"")  # built here
    for name in launchers:
        assert ran(name) == ["tree", modules[name]]


def test_a_file_name_that_is_not_utf8_prints_with_a_strict_stdout(data, tmp_path):
    """With PYTHONIOENCODING=utf-8 (strict), printing a model name with the byte \\xff
    failed after the model was written: exit 1 for a good run."""
    train, _ = data
    model = os.path.join(os.fsencode(tmp_path), b"m\xff")
    try:  # (file systems that take only UTF-8 names refuse it)
        open(model, "wb").close()
        os.remove(model)
    except OSError:
        pytest.skip("this file system refuses a file name that is not UTF-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT), PYTHONIOENCODING="utf-8")
    proc = subprocess.run([sys.executable, str(ROOT / "bin" / "svm_ap_learn"), "-c", "1",
                           os.fsencode(train), model], capture_output=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert b"m\xff" in proc.stdout and os.path.exists(model)  # (its bytes, as SVM-struct)


@pytest.mark.parametrize("options,match", [
    (["-c", "0"], "-c must be"), (["-c", "-1"], "-c must be"), (["-c", "abc"], "-c expects"),
    (["-e", "0"], "-e must be"), (["-w", "1"], "-w 1 is not supported"),
    (["-o", "1"], "-o 1 is not supported"), (["-p", "2"], "-p 2 is not supported"),
    (["-l", "1"], "F1"), (["-l", "xyz"], "unknown loss"), (["-#", "0"], "-#"),
    (["--b", "-1"], "--b"), (["--lai", "fast"], "--lai"), (["--nope"], "unknown option --nope"),
    (["-t", "1"], "-t 1 is not supported"), (["-v", "-2"], "-v: expected a verbosity level"), (["-a", "alphas"], "-a (write the dual"),
    (["-y", "-1"], "-y: expected a verbosity level"), (["--b", "inf"], "--b: expected a finite"),
    (["--model", "hob", "--groups", "qid", "--eta", "nan"], "--eta: expected a finite"),
    # a mode's options are refused without it, even at their default values
    (["--eta", "1"], "--eta and --pairwise-features need --model"),
    (["--pairwise-features", "all"], "--eta and --pairwise-features need --model"),
    (["--seed", "0"], "--n-init and --seed need --latent"),
    (["--n-init", "1"], "--n-init and --seed need --latent"),
    (["--robust", "0"], "--robust needs --latent -l 2"),
    (["--model", "hob", "--groups", "qid", "--edges", "e.txt"], "--edges and --groups: give one"),
    (["--lai", "search", "-l", "ndcg"], "--lai search needs -l ap or roc"),
    (["--latent", "--seed", "-5"], "--seed: expected an integer >= 0"),
    (["--model", "hoap", "--groups", "qid", "-l", "roc"], "--model hoap trains its own loss"),
    (["--model", "hob", "--groups", "qid", "-l", "foo"], "unknown loss 'foo'"),
    (["--model", "hoap", "--groups", "qid", "--lai", "select"], "--model hoap takes qs or greedy"),
    # an unknown option with a value: named, not the positional argparse would blame
    (["-z", "3"], "unknown option -z"),
    # APPX has a threshold but a fixed bias feature: --b was ignored there
    (["--approx", "50", "--b", "0"], "--b: the --approx model's bias feature is fixed at 1"),
    (["--approx", "50", "--b", "5"], "--b: the --approx model's bias feature is fixed at 1"),
])
def test_bad_options(options, match, data, tmp_path, capsys):
    train, _ = data
    assert ap_learn.main(options + [str(train), str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert match in err and err.count("\n") == 1
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("content,match", [
    ("", "at least one example"), ("1 1:0.5\nabc 2:1\n", ":2:"), ("1 1:nan\n", ":1:"),
    ("1 2:1 1:1\n", ":1:"), ("1 qid:x 1:1\n", ":1:"),
    # an index that would need dense vectors of 16 GB: refused at its line, not trained on
    ("1 1:1\n0 2000000000:1\n", ":2: expected a feature index <= 16777216 (the largest index"),
])
def test_bad_training_file(content, match, tmp_path, capsys):
    bad = tmp_path / "bad.dat"
    bad.write_text(content)
    assert ap_learn.main([str(bad), str(tmp_path / "m")]) == 1
    err = capsys.readouterr().err
    assert match in err and str(bad) in err and err.count("\n") == 1
    assert not (tmp_path / "m").exists()


def test_missing_file_and_unwritable_output(data, tmp_path, capsys):
    train, test = data
    assert ap_learn.main([str(tmp_path / "absent.dat"), str(tmp_path / "m")]) == 1
    assert "absent.dat" in capsys.readouterr().err
    assert ap_learn.main(["-v", "1", str(train), str(tmp_path / "no" / "dir" / "m")]) == 1
    out, err = capsys.readouterr()
    assert "cannot write (no such directory" in err and "iter" not in out  # before training
    assert ap_learn.main(["-v", "0", str(train), str(tmp_path)]) == 1
    assert f"{tmp_path}: cannot write (it is a directory)" in capsys.readouterr().err
    model = tmp_path / "m"
    assert ap_learn.main(["-v", "0", str(train), str(model)]) == 0
    before = model.read_bytes()
    assert ap_classify.main([str(test), str(model), str(model)]) == 1  # would destroy it
    assert "cannot write (it is the input file" in capsys.readouterr().err
    assert model.read_bytes() == before
    model = tmp_path / "m"
    assert ap_learn.main(["-v", "0", str(train), str(model)]) == 0
    assert ap_classify.main([str(test), str(model), str(tmp_path / "no" / "p")]) == 1
    assert "cannot write" in capsys.readouterr().err
    assert not any(p.name.startswith(".tmp-") for p in tmp_path.iterdir())


def test_bad_model_files(data, tmp_path, capsys):
    _, test = data
    good = tmp_path / "good"
    ap_learn.main(["-v", "0", str(data[0]), str(good)])
    lines = good.read_text().splitlines(keepends=True)
    cases = {"truncated": "".join(lines[:6]), "version": "SVM-light Version V5.00\n" + "".join(lines[1:]),
             "multiclass": "SVM-multiclass Version V2.20\n" + "".join(lines[1:])}
    for name, text in cases.items():
        path = tmp_path / name
        path.write_text(text)
        pred = tmp_path / f"pred_{name}"
        assert ap_classify.main([str(test), str(path), str(pred)]) == 1
        err = capsys.readouterr().err
        assert str(path) in err and err.count("\n") == 1
        assert not pred.exists()


def test_reads_a_real_svm_rank_model_and_ignores_extra_test_features(tmp_path, capsys):
    model = tmp_path / "svmrank.model"
    model.write_text(
        "SVM-light Version V6.20\n0 # kernel type\n3 # kernel parameter -d \n"
        "1 # kernel parameter -g \n1 # kernel parameter -s \n1 # kernel parameter -r \n"
        "empty# kernel parameter -u \n6 # highest feature index \n"
        "10 # number of training documents \n2 # number of support vectors plus 1 \n"
        "0 # threshold b, each following line is a SV (starting with alpha*y)\n"
        "1 1:0.73636848 2:-0.26855063 3:-0.069081776 4:0.14058548 5:0.94049019 #\n")
    test = tmp_path / "test.dat"
    test.write_text("1 qid:1 1:1 5:1 9:100\n0 qid:1 2:1\n")
    pred = tmp_path / "pred"
    assert ap_classify.main(["-v", "0", str(test), str(model), str(pred)]) == 0
    np.testing.assert_allclose(np.loadtxt(pred), [0.73636848 + 0.94049019, -0.26855063], atol=1e-8)
    assert (f"{test}: 1 feature values on 1 lines have an index above the model's highest "
            "(6); they are ignored") in capsys.readouterr().err


def test_foreign_model_gets_no_loss_line(tmp_path, capsys):
    """A model of another tool does not say what it was trained on: no loss is guessed."""
    model = tmp_path / "perf.model"
    model.write_text(
        "SVM-light Version V6.20\n0 # kernel type\n3 # kernel parameter -d \n"
        "1 # kernel parameter -g \n1 # kernel parameter -s \n1 # kernel parameter -r \n"
        "empty# kernel parameter -u \n2 # highest feature index \n"
        "4 # number of training documents \n2 # number of support vectors plus 1 \n"
        "0 # threshold b, each following line is a SV (starting with alpha*y)\n1 1:1 #\n")
    test = tmp_path / "test.dat"
    test.write_text("1 1:1\n0 2:1\n")
    assert ap_classify.main([str(test), str(model), str(tmp_path / "pred")]) == 0
    out = capsys.readouterr().out
    assert "Average loss" not in out and "AP: 1.0000" in out


def test_classify_reports_what_would_go_unseen(data, tmp_path, capsys):
    train, test = data
    model, pred = tmp_path / "m", tmp_path / "p"
    assert ap_learn.main(["-v", "0", "-c", "10", str(train), str(model)]) == 0
    # the loss in percent, as svm_perf_classify prints its losses
    assert ap_classify.main([str(test), str(model), str(pred)]) == 0
    out = capsys.readouterr().out
    loss = float(re.search(r"^Average loss on test set: (\S+) \(100 x \(1 - AP\)\)$", out,
                           re.M).group(1))
    ap = float(re.search(r"^MAP: (\S+)$", out, re.M).group(1))
    assert loss == pytest.approx(100 * (1 - ap), abs=1e-3)
    # NDCG@10 over the queries, from the written scores
    X, y, qid = load_svmlight(test)
    scores = np.loadtxt(pred)
    at10 = np.mean([ndcg(y[qid == q], scores[qid == q], k=10) for q in np.unique(qid)])
    assert float(re.search(r"^NDCG@10: (\S+)$", out, re.M).group(1)) == pytest.approx(at10, abs=1e-4)
    # %.8f of very small scores ties what the model does not
    assert ap_learn.main(["-v", "0", "-c", "1e-7", str(train), str(model)]) == 0
    assert ap_classify.main(["-v", "0", str(test), str(model), str(pred)]) == 0
    err = capsys.readouterr().err
    assert re.search(r"%\.8f rounds the \d+ distinct scores to \d+ values", err), err
    # --latent with a model that was not trained with it
    bags = tmp_path / "bags.dat"
    bags.write_text("1 qid:1 1:1\n1 qid:1 2:1\n0 qid:2 3:1\n0 qid:3 1:0.5\n")
    assert ap_classify.main(["-v", "0", "--latent", str(bags), str(model), str(pred)]) == 0
    assert "--latent, but the model was not trained with --latent" in capsys.readouterr().err


def test_compressed_files_are_read_or_named_as_such(data, tmp_path, capsys):
    import bz2
    import gzip
    import lzma
    train, _ = data
    assert ap_learn.main(["-v", "0", str(train), str(tmp_path / "m")]) == 0
    for suffix, pack in ((".gz", gzip.compress), (".bz2", bz2.compress), ("", lzma.compress)):
        packed = tmp_path / f"train.dat{suffix}"  # (the first bytes decide, not the name)
        packed.write_bytes(pack(train.read_bytes()))
        assert ap_learn.main(["-v", "0", "--threads", "2", str(packed), str(tmp_path / "mz")]) == 0
        assert (tmp_path / "mz").read_bytes() == (tmp_path / "m").read_bytes()
    zipped = tmp_path / "train.zip"
    zipped.write_bytes(b"PK\x03\x04" + train.read_bytes())
    assert ap_learn.main([str(zipped), str(tmp_path / "m2")]) == 1
    assert capsys.readouterr().err.strip() == \
        f"svm_ap_learn: error: {zipped}: a zip-compressed file; decompress it first"
    model = tmp_path / "m.bz2"
    model.write_bytes(bz2.compress((tmp_path / "m").read_bytes()))
    assert ap_classify.main([str(train), str(model), str(tmp_path / "p")]) == 1
    assert "a bzip2-compressed file; decompress it first" in capsys.readouterr().err
    assert ap_learn.main(["--threads", "0", str(train), str(tmp_path / "m3")]) == 2
    assert "--threads: expected an integer >= 1, got 0" in capsys.readouterr().err


def test_edges_file_is_never_an_output(tmp_path, capsys):
    train = tmp_path / "small.dat"
    train.write_text("1 1:1\n0 1:0.2\n1 1:0.8\n0 1:-1\n")
    edges = tmp_path / "e.txt"
    edges.write_text("0 1\n2 3\n")
    assert ap_learn.main(["-v", "0", "--model", "hob", "--edges", str(edges), str(train),
                          str(edges)]) == 1
    assert "it is the input file" in capsys.readouterr().err
    model = tmp_path / "hob.model"
    assert ap_learn.main(["-v", "0", "--model", "hob", "--edges", str(edges), str(train),
                          str(model)]) == 0
    assert read_model(model).metadata["loss"] == "error"  # what HOB-SVM trains
    assert ap_classify.main(["-v", "0", "--edges", str(edges), str(train), str(model),
                             str(edges)]) == 1
    assert "it is the input file" in capsys.readouterr().err
    assert edges.read_text() == "0 1\n2 3\n"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_write_errors_name_the_file(data, tmp_path, capsys):
    train, test = data
    model = tmp_path / "m"
    assert ap_learn.main(["-v", "0", "-c", "1", str(train), str(model)]) == 0
    assert ap_classify.main(["-v", "0", str(test), str(model), "/dev/full"]) == 1
    assert "/dev/full: cannot write (No space left on device)" in capsys.readouterr().err


def test_atomic_write_passes_the_callers_own_errors(tmp_path):
    """Only the file's own write and close errors are renamed after it."""
    from svmrank.io.atomic import atomic_write
    with pytest.raises(BrokenPipeError):
        with atomic_write(tmp_path / "out") as fh:
            fh.write("x")
            raise BrokenPipeError(32, "Broken pipe")  # e.g. a progress line to a closed pipe
    assert not (tmp_path / "out").exists()


def test_atomic_write_syncs_before_the_rename(tmp_path, monkeypatch):
    """The temporary file reaches the disk before it replaces the target, and an error
    of that sync (EIO, a full disk) names the file and leaves the target as it was."""
    import errno
    from svmrank.io import atomic
    target = tmp_path / "out"
    target.write_text("old")
    synced = []
    monkeypatch.setattr(atomic.os, "fsync", lambda fd: synced.append(target.read_text()))
    with atomic.atomic_write(target) as fh:
        fh.write("new")
    assert synced == ["old"] and target.read_text() == "new"

    def failing_sync(code):
        def sync(fd):
            raise OSError(code, os.strerror(code))
        return sync
    open_fds = lambda: len(os.listdir("/proc/self/fd")) if os.path.isdir("/proc/self/fd") else 0
    before = open_fds()
    monkeypatch.setattr(atomic.os, "fsync", failing_sync(errno.EIO))
    with pytest.raises(OSError, match=r"out: cannot write \(Input/output error\)"):
        with atomic.atomic_write(target) as fh:
            fh.write("newer")
    assert target.read_text() == "new" and sorted(p.name for p in tmp_path.iterdir()) == ["out"]
    assert open_fds() == before  # the temporary file was closed all the same
    # a file system without fsync (EINVAL) still gets the file
    monkeypatch.setattr(atomic.os, "fsync", failing_sync(errno.EINVAL))
    with atomic.atomic_write(target) as fh:
        fh.write("newest")
    assert target.read_text() == "newest"


def test_a_write_protected_output_is_not_replaced(tmp_path, monkeypatch):
    """fopen(path, "w") fails on a file we may not write; the rename would replace it
    all the same (it needs only the folder's permission), so both the early check and
    the writer refuse. Root may write anything, so there the permission is simulated."""
    from svmrank.io import atomic
    target = tmp_path / "model"
    target.write_text("old")
    target.chmod(0o444)
    if os.access(target, os.W_OK):  # root
        real_access = os.access
        monkeypatch.setattr(atomic.os, "access", lambda p, mode: False if (
            os.fspath(p) == str(target) and mode == os.W_OK) else real_access(p, mode))
    with pytest.raises(OSError, match=r"model: cannot write \(permission denied\)"):
        atomic.check_writable(target)
    with pytest.raises(OSError, match=r"model: cannot write \(permission denied\)"):
        with atomic.atomic_write(target) as fh:
            fh.write("new")
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_linear_kernel_option_is_accepted(data, tmp_path):
    """svm_perf_learn command lines often pass -t 0 (linear kernel)."""
    assert ap_learn.main(["-v", "0", "-t", "0", "-c", "1", str(data[0]), str(tmp_path / "m")]) == 0


def test_svm_struct_solver_settings_are_accepted(data, tmp_path, capsys):
    """SVM-struct's learner reads -h N as SVM-light's shrinking setting (not help), and
    -f, -b, -k, -n, -m, -q tune its own solver: the model is the same without them."""
    train = str(data[0])
    assert ap_learn.main(["-v", "0", "-c", "1", train, str(tmp_path / "plain")]) == 0
    assert ap_learn.main(["-v", "0", "-c", "1", "-h", "100", "-f", "10", "-b", "50", "-k", "100",
                          "-n", "5", "-m", "40", "-q10", "-h5", "-v", "4", "-y", "4", train,
                          str(tmp_path / "tuned")]) == 0
    assert (tmp_path / "tuned").read_text() == (tmp_path / "plain").read_text()
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:  # a bare -h still asks for help
        ap_learn.main(["-h"])
    assert info.value.code == 0 and "usage: svm_ap_learn" in capsys.readouterr().out


def test_svm_perf_settings_are_accepted(data, tmp_path, capsys):
    """svm_perf_learn's --s, --p and sparse-kernel settings (--i, --k, --r, --f, --t 0)
    change nothing here; --t 1 asks for a kernel approximation and is refused, as is a
    negative --p. svm_perf_classify's --d is accepted too."""
    train, test = map(str, data)
    assert ap_learn.main(["-v", "0", "-c", "1", train, str(tmp_path / "plain")]) == 0
    assert ap_learn.main(["-v", "0", "-c", "1", "--s", "1", "--p", "0.5", "--i", "2", "--k",
                          "500", "--r", "0", "--f", train, "--t", "0", train,
                          str(tmp_path / "perf")]) == 0
    assert (tmp_path / "perf").read_text() == (tmp_path / "plain").read_text()
    assert ap_classify.main(["-v", "0", "--d", "0", test, str(tmp_path / "perf"),
                             str(tmp_path / "pred")]) == 0
    capsys.readouterr()
    for options, match in ((["--t", "1"], "--t 1 (sparse kernel approximation) is not supported"),
                           (["--p", "-1"], "--p: expected a fraction >= 0")):
        assert ap_learn.main(["-v", "0", *options, train, str(tmp_path / "bad")]) == 2
        err = capsys.readouterr().err
        assert match in err and err.count("\n") == 1
        assert not (tmp_path / "bad").exists()


def test_output_file_names_default_as_in_svm_struct(data, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    train, test = data
    assert ap_learn.main(["-v", "0", "-c", "1", str(train)]) == 0
    assert (tmp_path / "svm_struct_model").exists()
    assert ap_classify.main(["-v", "0", str(test), "svm_struct_model"]) == 0
    assert len((tmp_path / "svm_predictions").read_text().splitlines()) == 400


@pytest.mark.parametrize("content,match", [
    ("1\n0\n", "no example line has a feature"),  # labels only
    ("0 1:1\n0 2:1\n", "needs a relevant and a non-relevant sample; got one class"),
    ("1 1:1e307 2:1e307\n0 1:-1e307 2:-1e307\n1 1:1e307\n", "overflow"),
])
def test_training_errors_name_the_file(content, match, tmp_path, capsys):
    bad = tmp_path / "bad.dat"
    bad.write_text(content)
    assert ap_learn.main(["-v", "0", "-c", "10", str(bad), str(tmp_path / "m")]) == 1
    err = capsys.readouterr().err
    assert f"{bad}: " in err and match in err and err.count("\n") == 1
    assert not (tmp_path / "m").exists()


def test_output_paths_behave_like_fopen(data, tmp_path, capsys):
    """A symlink is written through (its target replaced, the link kept), an existing
    file keeps its mode, a named pipe is written to, and an empty name or one ending in
    a separator is refused before training."""
    train, test = data
    target = tmp_path / "real_model"
    target.write_text("old")
    target.chmod(0o600)
    link = tmp_path / "link_model"
    link.symlink_to(target)
    assert ap_learn.main(["-v", "0", str(train), str(link)]) == 0
    assert link.is_symlink() and read_model(target).w.size
    assert target.stat().st_mode & 0o777 == 0o600
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    received = []
    import threading
    reader = threading.Thread(target=lambda: received.append(fifo.read_text()), daemon=True)
    reader.start()
    assert ap_classify.main(["-v", "0", str(test), str(target), str(fifo)]) == 0
    reader.join(timeout=30)
    assert fifo.is_fifo() and len(received) == 1 and received[0].count("\n") == 400
    for bad, match in [("", "empty file name"), (str(tmp_path / "new") + os.sep, "ends with a path")]:
        assert ap_learn.main(["-v", "1", str(train), bad]) == 1
        out, err = capsys.readouterr()
        assert match in err and "iter" not in out
    # review 23: a link loop was replaced by a file (fopen fails with ELOOP); a name of
    # 250 bytes was refused (the temporary name embedded it whole); a --plot figure that
    # is the output file overwrote the predictions
    loop = tmp_path / "loop1"
    loop.symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(loop)
    assert ap_classify.main(["-v", "0", str(test), str(target), str(loop)]) == 1
    assert "loop1: cannot write (Too many levels of symbolic links)" in capsys.readouterr().err
    assert loop.is_symlink()
    long = tmp_path / ("p" * 245 + ".pred")
    assert ap_classify.main(["-v", "0", str(test), str(target), str(long)]) == 0
    assert long.read_text().count("\n") == 400
    assert ap_classify.main(["-v", "0", "--plot", str(long), str(test), str(target),
                             str(long)]) == 2
    assert "it is also the output file" in capsys.readouterr().err


def test_summary_scores_only_queries_with_both_kinds(data, tmp_path, capsys):
    """A query with only relevant (or only non-relevant) examples has no AP: every
    measure skips it, and one warning counts the skipped queries."""
    model = tmp_path / "m"
    assert ap_learn.main(["-v", "0", "-c", "10", str(data[0]), str(model)]) == 0
    mixed, alone = tmp_path / "mixed.dat", tmp_path / "alone.dat"
    mixed.write_text("1 qid:1 1:1\n0 qid:1 2:1\n0 qid:2 1:1\n0 qid:2 2:1\n1 qid:3 3:1\n1 qid:3 4:1\n")
    alone.write_text("1 1:1\n0 2:1\n")  # query 1 of mixed.dat
    assert ap_classify.main([str(mixed), str(model), str(tmp_path / "p")]) == 0
    out, err = capsys.readouterr()
    assert ap_classify.main([str(alone), str(model), str(tmp_path / "p1")]) == 0
    out1 = capsys.readouterr().out
    value = lambda text, key: [ln for ln in text.splitlines()
                               if ln.startswith(key)][0].split(":", 1)[1].split()[0]
    for key, key1 in (("MAP:", "AP:"), ("NDCG:", "NDCG:"), ("NDCG@10:", "NDCG@10:"), ("ROCArea:", "ROCArea:"),
                      ("Average loss", "Average loss")):
        assert value(out, key) == value(out1, key1)
    assert err.count("warning") == 1 and "2 of 3 queries" in err


def test_attached_option_values_parse(data, tmp_path):
    """-v0 -c10 -#50 (values attached, as C programs with getopt-like parsing accept)."""
    assert ap_learn.main(["-v0", "-c10", "-#50", "-e0.01", str(data[0]), str(tmp_path / "m")]) == 0
    assert read_model(tmp_path / "m").metadata["C"] == "10"


def test_dev_stdout_redirected_to_a_file_keeps_the_order(data, tmp_path):
    """/dev/stdout resolves to the redirected file; writing through the process's own
    descriptor keeps scores and statistics in order (a rename would unlink the file the
    shell holds open)."""
    train, test = data
    model = tmp_path / "m"
    assert ap_learn.main(["-v", "0", "-c", "10", str(train), str(model)]) == 0
    out = tmp_path / "out.txt"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with open(out, "w") as fh:
        proc = subprocess.run([sys.executable, "-m", "svmrank.cli.ap_classify", str(test), str(model),
                               "/dev/stdout"], stdout=fh, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    lines = out.read_text().splitlines()
    assert len(lines) == 400 + 13 and lines[400].startswith("Classified 400 examples")
    assert ap_classify.main(["-v", "0", str(test), str(model), str(tmp_path / "pred")]) == 0
    assert lines[:400] == (tmp_path / "pred").read_text().splitlines()


def test_a_closed_stdout_only_silences_the_output(data, tmp_path):
    """``svm_ap_learn ... | head -1``: the reader goes away after one line; the model is
    still written and the exit status is 0 (it was an error and no model before)."""
    train, _ = data
    model = tmp_path / "m"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "svmrank.cli.ap_learn", "-v", "1", "-c", "10",
                             str(train), str(model)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    assert proc.stdout.readline().startswith(b"Reading training examples")
    proc.stdout.close()
    assert proc.wait(timeout=120) == 0, proc.stderr.read()
    assert proc.stderr.read() == b""
    proc.stderr.close()
    assert read_model(model).w.size == 40
    model.unlink()  # started with stdout closed (sys.stdout is None): as before, no error
    proc = subprocess.run([sys.executable, "-m", "svmrank.cli.ap_learn", "-c", "10", str(train),
                           str(model)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                          pass_fds=(), preexec_fn=lambda: os.close(1), timeout=120)
    assert proc.returncode == 0 and proc.stderr == b"", proc.stderr
    assert read_model(model).w.size == 40


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_full_standard_output_is_named(data, tmp_path):
    """Standard output on a full disk gave "error: [Errno 28] No space left on device"
    without saying what was being written."""
    train, _ = data
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "svmrank.cli.ap_learn", "-c", "10",
                               str(train), str(tmp_path / "m")], stdout=full,
                              stderr=subprocess.PIPE, text=True, env=env, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        "svm_ap_learn: error: [Errno 28] standard output: No space left on device"]
    assert not (tmp_path / "m").exists()


def test_a_qp_failure_is_a_one_line_error(monkeypatch, data, tmp_path, capsys):
    """QPError (a RuntimeError) escaped the console scripts as a traceback."""
    from svmrank.estimators.ranking import RankSVM
    from svmrank.learners.qp import QPError

    def fail(*args, **kwargs):
        raise QPError("the constraints cannot all be satisfied (unbounded dual)")
    monkeypatch.setattr(RankSVM, "fit", fail)
    train, _ = data
    assert ap_learn.main(["-c", "1", str(train), str(tmp_path / "m")]) == 1
    err = capsys.readouterr().err
    assert "error: the constraints cannot all be satisfied" in err and err.count("\n") == 1
    assert not (tmp_path / "m").exists()


def test_an_overflowing_score_is_refused_at_every_verbosity(tmp_path, capsys):
    """w·x beyond the largest double: the exit status depended on -v (the summary
    failed at -v 1 only) and the file of inf scores was written anyway."""
    from svmrank.io.model_file import LinearModel, write_model
    data = tmp_path / "huge.dat"
    data.write_text("# header\n1 qid:1 1:1\n\n0 qid:1 1:1e10\n")
    model = tmp_path / "huge.model"
    write_model(model, LinearModel(w=np.array([1e300, 0.5]), b=0.0))
    for v in ("1", "0"):
        out = tmp_path / f"out{v}"
        assert ap_classify.main(["-v", v, str(data), str(model), str(out)]) == 1
        err = capsys.readouterr().err.strip()
        assert err == f"svm_ap_classify: error: {data}:4: the score w·x - b overflows: scale the features down"
        assert not out.exists()


@pytest.mark.parametrize("option", [["-d", "3"], ["-g", "0.5"], ["-s", "1"], ["-r", "1"],
                                    ["-u", "x"]])
def test_kernel_parameters_of_svm_struct_are_accepted(data, tmp_path, option):
    train, _ = data
    assert ap_learn.main(["-t", "0", "-v", "0"] + option + [str(train), str(tmp_path / "m")]) == 0


@pytest.mark.parametrize("option, message", [
    (["-c", "1_000"], "argument -c: -c expects a number, got '1_000'"),
    (["-c", "\u0661\u0660"], "argument -c: -c expects a number"),
    (["-#", "1_0"], "argument -#: invalid int value: '1_0'"),
    (["-v", "\u0661"], "argument -v: invalid int value"),
])
def test_numbers_c_would_read_differently_are_refused(data, tmp_path, capsys, option, message):
    """Python's float/int take 1_000 and non-ASCII digits; SVM-struct's atof reads
    '1_000' as 1, so the same command line would train another model."""
    train, _ = data
    assert ap_learn.main(option + [str(train), str(tmp_path / "m")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "m").exists()


def test_corrupt_high_order_metadata_names_the_model_file(tmp_path, capsys):
    """Issue 29: every refusal of a high-order model's metadata names the model file."""
    golden = (Path(__file__).parent / "golden" / "hob.model").read_text()
    test = tmp_path / "t.dat"
    test.write_text("1 qid:1 1:1 2:1\n0 qid:1 1:2 3:1\n1 qid:2 8:1\n")
    for old, new in (("eta=1", "eta=x"), ("eta=1", "eta=-1"), (" bias=1", ""),
                     ("pairwise=0:", "pairwise=9:"), ("pairwise=0:-", "pairwise=0:"),
                     ("pairwise=0:", "pairwise=0:-1,0:"), ("pairwise=0:", "pairwise=,0:")):
        model = tmp_path / "bad.model"
        model.write_text(golden.replace(old, new, 1))
        assert ap_classify.main(["--groups", "qid", str(test), str(model),
                                 str(tmp_path / "out")]) == 1
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and re.match(  # (the metadata's line when known)
            rf"svm_ap_classify: error: {re.escape(str(model))}(:12)?: ", err), (old, new, err)
        assert not (tmp_path / "out").exists()


def _scaled_examples(path, scale):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 4))
    y = (X[:, 0] + 0.8 * rng.normal(size=40) > 0).astype(int)
    path.write_text("".join(f"{label} " + " ".join(f"{j + 1}:{v * scale:.6g}" for j, v in
                                                   enumerate(row)) + "\n"
                            for label, row in zip(y, X)))
    return path


@pytest.mark.parametrize("options, scale", [(["-c", "1e200"], 1.0),
                                            (["-c", "1e200", "-l", "2"], 1.0),
                                            (["-c", "1e30"], 1.0),
                                            ([], 1e100)])
def test_extreme_c_or_feature_scale_is_refused(options, scale, tmp_path, capsys):
    """Issue 29 #7: -c 1e200 failed with "unbounded dual: check the hard constraints",
    with -l 2 it wrote a model of infinite duality gap with exit 0, and features near
    1e100 gave an empty model after every iteration: C |g|^2 beyond 1e18 is refused."""
    train = _scaled_examples(tmp_path / "train.dat", scale)
    model = tmp_path / "m"
    status = ap_learn.main(["-v", "0", "-#", "300", *options, str(train), str(model)])
    err = capsys.readouterr().err
    assert status == 1 and err.count("\n") == 1, err
    assert f"{train}: C = " in err and "beyond the 1e+18 that float64 training resolves" in err
    assert "lower C (below" in err and "scale the features down" in err
    assert not model.exists()


def test_large_c_within_the_range_still_trains(tmp_path, capsys):
    train = _scaled_examples(tmp_path / "train.dat", 1.0)
    assert ap_learn.main(["-v", "0", "-c", "1e12", str(train), str(tmp_path / "m")]) == 0
    assert np.any(read_model(tmp_path / "m").w != 0)


def test_qp_error_is_exported():
    """Issue 29 #7: QPError reached users but was not a name of svmrank."""
    import svmrank
    from svmrank import QPError
    from svmrank.learners.qp import QPError as learner_qp_error
    assert "QPError" in svmrank.__all__ and QPError is learner_qp_error
    assert issubclass(QPError, RuntimeError)


@pytest.mark.parametrize("params, name", [
    (dict(loss="ndcg", k=3, gains="linear"), "1 - NDCG@3, linear gains"),
    (dict(loss="ndcg", gains="exp"), "1 - NDCG, exp gains"),
    (dict(loss="pairs"), "100 x fraction of swapped pairs"),
    (dict(loss="pairs", pair_loss="count"), "swapped pairs per query")])
def test_classify_prints_the_graded_loss_the_model_was_trained_on(tmp_path, capsys, params,
                                                                   name):
    """Review 22: a graded NDCG@k model got the binary NDCG line, a pairs model none."""
    from svmrank import RankSVM
    from svmrank.cli.rank_classify import swapped_pairs
    from svmrank.io import to_model, write_model
    from svmrank.io.svmlight import dump_svmlight
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4))
    y = np.clip(np.round(X[:, 0] + rng.normal(size=80)), 0, 3)
    qid = np.repeat(np.arange(8), 10)
    est = RankSVM(C=1.0, **params).fit(X, y, qid=qid)
    write_model(tmp_path / "m", to_model(est, n_train=80))
    dump_svmlight(tmp_path / "t.dat", X, y, qid=qid)
    assert ap_classify.main([str(tmp_path / "t.dat"), str(tmp_path / "m"),
                             str(tmp_path / "p")]) == 0
    line = next(l for l in capsys.readouterr().out.splitlines() if l.startswith("Average loss"))
    value = float(line.split()[5])
    if params["loss"] == "ndcg":
        expected = 100 * (1 - est.score(X, y, qid=qid))
    else:
        counts = [swapped_pairs(y[qid == q], est.decision_function(X[qid == q]))
                  for q in range(8)]
        expected = (np.mean([s for s, _ in counts]) if params.get("pair_loss") == "count"
                    else 100 * np.mean([s / p for s, p in counts]))
    assert line.endswith(f"({name}))" if "NDCG" in name else f"({name})")
    assert value == pytest.approx(expected, abs=1e-4)


def test_rounding_noise_is_not_called_a_tie_the_model_has_not(tmp_path, recwarn):
    """Review 22: max-marginal gaps equal up to 1e-16 were counted as distinct scores,
    and %.8f "rounding" them warned about a small C."""
    import argparse
    from svmrank.cli.ap_classify import write_and_report
    from svmrank.io.model_file import LinearModel
    scores = np.array([0.5, 0.5 + 2e-16, 0.25, 0.25 - 1e-16, 1.0])
    args = argparse.Namespace(output_file=str(tmp_path / "p"), v=0, plot=None)
    assert write_and_report(args, LinearModel(w=np.ones(1), b=0.0), {}, np.ones(5),
                            np.zeros(5), scores, 0.0) == 0
    assert not [w for w in recwarn if "rounds the" in str(w.message)]
    write_and_report(args, LinearModel(w=np.ones(1), b=0.0), {}, np.ones(5), np.zeros(5),
                     np.array([1e-9, 2e-9, 3e-9, 1.0, 0.5]), 0.0)
    assert [w for w in recwarn if "rounds the 5 distinct scores to 3" in str(w.message)]


def test_graded_loss_line_over_its_own_queries(tmp_path, capsys):
    """Review 22b: a query of labels -1/0 made the graded NDCG loss line nan, and the
    warning said the loss left out queries that the graded losses keep."""
    from svmrank import RankSVM
    from svmrank.io import to_model, write_model
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 3))
    y = np.clip(np.round(X[:, 0] + rng.normal(size=60)), 0, 2)
    model = RankSVM(C=1.0, loss="ndcg", gains="linear", k=5).fit(
        X, y, qid=np.repeat(np.arange(6), 10))
    write_model(tmp_path / "m", to_model(model, n_train=60))
    test = tmp_path / "t.dat"
    test.write_text("-1 qid:1 1:1 2:0.5\n0 qid:1 1:0.2 3:1\n"
                    "1 qid:2 1:1\n0 qid:2 2:1\n2 qid:2 3:1\n")
    assert ap_classify.main([str(test), str(tmp_path / "m"), str(tmp_path / "p")]) == 0
    out, err = capsys.readouterr()
    loss = float(re.search(r"^Average loss on test set: (\S+) ", out, re.M).group(1))
    X_t, y_t, _ = load_svmlight(test, n_features=3)
    expected = 100 * (1 - ndcg(y_t[2:], model.decision_function(X_t[2:]), k=5,
                               gains="linear"))
    assert loss == pytest.approx(expected, abs=1e-4)
    assert "AP, NDCG and ROC area are averaged over the others" in err
