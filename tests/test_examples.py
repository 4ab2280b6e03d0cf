"""Every script in examples/ runs in its quick setting (issue 27 part 4), from another
directory, with the data found through $SVMRANK_SHARED_DATA. One subprocess runs them
all, each as ``python examples/NAME.py --quick`` would (its folder first on sys.path,
its own working directory), so that the imports are paid once."""
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import shared_data_dir

pytest.importorskip("matplotlib")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
DATA = {"apsvm_w8a": ("w8a", "w8a.train"), "sgd_w8a": ("w8a", "w8a.train"),
        "latent_mil": ("musk1", "musk1.mil.svm"), "hoap_cora": ("cora", "cora.nodes.svm"),
        "topk_letter": ("letter", "letter.scale.svm"), "lai_speed": None}

DRIVER = """
import contextlib, io, json, os, runpy, sys, traceback
examples, root, names = sys.argv[1], sys.argv[2], sys.argv[3:]
sys.path.insert(0, examples)
report = {}
for name in names:
    folder = os.path.join(root, name)
    os.makedirs(folder)
    os.chdir(folder)
    out = io.StringIO()
    sys.argv = [os.path.join(examples, name + ".py"), "--quick"]
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(sys.argv[0], run_name="__main__")
        error = None
    except BaseException:
        error = traceback.format_exc()
    report[name] = {"stdout": out.getvalue(), "error": error}
print(json.dumps(report))
"""


def test_every_example_is_listed():
    scripts = {p.stem for p in EXAMPLES.glob("*.py")} - {"example_data"}
    assert scripts == set(DATA)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("examples")
    names = [n for n, parts in DATA.items()
             if parts is None or shared_data_dir().joinpath(*parts).is_file()]
    env = dict(os.environ, MPLBACKEND="Agg", SVMRANK_SHARED_DATA=str(shared_data_dir()))
    proc = subprocess.run([sys.executable, "-c", DRIVER, str(EXAMPLES), str(root)] + names,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return root, json.loads(proc.stdout.splitlines()[-1])


@pytest.mark.parametrize("name", sorted(DATA))
def test_example_runs_quick(name, runs):
    root, report = runs
    if name not in report:
        pytest.skip(f"the data of examples/{name}.py is absent (set SVMRANK_SHARED_DATA)")
    assert report[name]["error"] is None, report[name]["error"]
    lines = report[name]["stdout"].splitlines()
    assert any(set(line.replace(" ", "")) == {"-"} for line in lines), lines  # a table
    assert (root / name / f"{name}.png").read_bytes()[:4] == b"\x89PNG"


def test_an_example_without_its_data_says_so(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("example_data", EXAMPLES / "example_data.py")
    example_data = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example_data)
    monkeypatch.setenv("SVMRANK_SHARED_DATA", str(tmp_path))
    with pytest.raises(SystemExit, match=f"data file {tmp_path}/w8a/w8a.train is absent: set "
                                         "SVMRANK_SHARED_DATA"):
        example_data.data_file("w8a", "w8a.train")


def test_a_figure_path_that_cannot_be_written_is_refused_first(tmp_path, capsys):
    """Review 23: --figure into a missing folder failed with a traceback after the run."""
    spec = importlib.util.spec_from_file_location("example_data", EXAMPLES / "example_data.py")
    example_data = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example_data)
    p = example_data.parser("An example.")
    for bad, message in ((tmp_path / "missing" / "a.png", "its folder does not exist"),
                         (tmp_path, "is a folder")):
        with pytest.raises(SystemExit):
            p.parse_args(["--figure", str(bad)])
        assert f"argument --figure: {bad}: {message}" in capsys.readouterr().err
    assert p.parse_args(["--figure", str(tmp_path / "a.png")]).figure == str(tmp_path / "a.png")
