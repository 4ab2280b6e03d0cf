"""SVM-light V6.20 linear model files: exact text, round trips, foreign models, bad input."""
import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from svmrank.exceptions import InputFormatError
from svmrank.io import LinearModel, read_model, write_model

# A model written by svm_rank_learn (linear kernel, 6 features, 10 training documents).
SVM_RANK_MODEL = """\
SVM-light Version V6.20
0 # kernel type
3 # kernel parameter -d 
1 # kernel parameter -g 
1 # kernel parameter -s 
1 # kernel parameter -r 
empty# kernel parameter -u 
6 # highest feature index 
10 # number of training documents 
2 # number of support vectors plus 1 
0 # threshold b, each following line is a SV (starting with alpha*y)
1 1:0.73636848 2:-0.26855063 3:-0.069081776 4:0.14058548 5:0.94049019 #
"""
SVM_RANK_W = [0.73636848, -0.26855063, -0.069081776, 0.14058548, 0.94049019, 0.0]

# The layout svm_learn uses for a linear model kept as support vectors: alpha*y first,
# optional qid, the training example's comment after '#'.
SVM_LEARN_MODEL = """\
SVM-light Version V6.02
0 # kernel type
3 # kernel parameter -d 
1 # kernel parameter -g 
1 # kernel parameter -s 
1 # kernel parameter -r 
empty# kernel parameter -u 
5 # highest feature index 
7 # number of training documents 
4 # number of support vectors plus 1 
-0.25 # threshold b, each following line is a SV (starting with alpha*y)
0.5 1:1 3:2 #docid = a
-0.125 qid:3 2:4 3:1 5:-8 #
1.0000000000000000208166817117216851 1:-1 4:0.5 #docid = c inc = 1
"""


def write_text(tmp_path, text, name="model.txt"):
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def header_lines(n_features=3, n_sv_plus_1=2, b="0"):
    return SVM_RANK_MODEL.splitlines(keepends=True)[:7] + [
        f"{n_features} # highest feature index \n", "4 # number of training documents \n",
        f"{n_sv_plus_1} # number of support vectors plus 1 \n",
        f"{b} # threshold b, each following line is a SV (starting with alpha*y)\n"]


def test_reads_svm_rank_learn_model(tmp_path):
    model = read_model(write_text(tmp_path, SVM_RANK_MODEL))
    np.testing.assert_array_equal(model.w, SVM_RANK_W)
    assert model.b == 0.0
    assert model.metadata == {"n_train": "10"}


def test_writes_exactly_what_svm_rank_learn_writes(tmp_path):
    path = tmp_path / "ours.txt"
    write_model(path, LinearModel(np.array(SVM_RANK_W), 0.0, {"n_train": "10"}))
    assert path.read_text() == SVM_RANK_MODEL


def test_metadata_goes_after_the_sv_comment_mark(tmp_path):
    path = tmp_path / "ours.txt"
    meta = {"svmrank": "0.1.0", "loss": "ap", "C": "1", "epsilon": "0.001", "iterations": "57"}
    write_model(path, LinearModel(np.array([0.5, 0.0, -2.0]), -1.5, meta))
    lines = path.read_text().splitlines()
    assert lines[7] == "3 # highest feature index "
    assert lines[8] == "0 # number of training documents "
    assert lines[10].startswith("-1.5 # threshold b")
    assert lines[11] == "1 1:0.5 3:-2 #svmrank=0.1.0 loss=ap C=1 epsilon=0.001 iterations=57"
    assert len(lines) == 12
    back = read_model(path)
    assert back.metadata == {**meta, "n_train": "0"}
    np.testing.assert_array_equal(back.w, [0.5, 0.0, -2.0])
    assert back.b == -1.5


def test_reads_svm_learn_model_with_many_support_vectors(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (qid: on some support vectors only is no matter)
        model = read_model(write_text(tmp_path, SVM_LEARN_MODEL))
    alpha = [0.5, -0.125, 1.0000000000000000208166817117216851]
    svs = np.array([[1, 0, 2, 0, 0], [0, 4, 1, 0, -8], [-1, 0, 0, 0.5, 0]], dtype=float)
    np.testing.assert_allclose(model.w, np.dot(alpha, svs), rtol=0, atol=1e-15)
    assert model.b == -0.25
    # svm_learn's comments are training-file comments, not our metadata.
    assert model.metadata == {"n_train": "7"}


def test_score_is_w_dot_x_minus_b(tmp_path):
    model = read_model(write_text(tmp_path, SVM_LEARN_MODEL))
    X = np.array([[1.0, 2.0, 3.0, 4.0, 5.0, 99.0], [0, 0, 0, 0, 0, 1.0]])
    # SVM-light ignores features beyond the model's highest index (here column 6).
    np.testing.assert_allclose(model.decision_function(X), X[:, :5] @ model.w + 0.25)


def test_older_versions_with_the_same_layout(tmp_path):
    for version in ("V6.01", "V6.02"):
        text = SVM_RANK_MODEL.replace("V6.20", version)
        np.testing.assert_array_equal(read_model(write_text(tmp_path, text)).w, SVM_RANK_W)


def test_crlf_line_ends_and_a_missing_final_newline(tmp_path):
    """CRLF is fine. A missing final line break is a cut file (every writer ends with
    one; a cut inside our metadata would otherwise go unseen), even right after '#'."""
    text = SVM_RANK_MODEL.replace("\n", "\r\n")
    np.testing.assert_array_equal(read_model(write_text(tmp_path, text)).w, SVM_RANK_W)
    with pytest.raises(InputFormatError, match=r":12: expected a line break at the end"):
        read_model(write_text(tmp_path, text.rstrip("\r\n")))


def test_a_cr_inside_the_single_support_vector_comment(tmp_path):
    """svm_learn copies training comments there; the CR-only check of a data file must
    not see the lone SV line as a file of CR-only lines."""
    path = write_text(tmp_path, SVM_RANK_MODEL.replace(" #\n", " # a\rb\n"))
    np.testing.assert_array_equal(read_model(path).w, SVM_RANK_W)


def test_bom_and_cr_only_line_ends(tmp_path):
    path = tmp_path / "m.txt"
    path.write_bytes(b"\xef\xbb\xbf" + SVM_RANK_MODEL.encode())  # a UTF-8 BOM is skipped
    np.testing.assert_array_equal(read_model(path).w, SVM_RANK_W)
    path.write_bytes(SVM_RANK_MODEL.replace("\n", "\r").encode())
    with pytest.raises(InputFormatError, match=r"m\.txt:1: expected LF or CRLF line ends, got "
                                               r"CR-only ones"):
        read_model(path)
    # CR-only line ends in a file that also has LF ones are named by their line
    path.write_bytes(SVM_RANK_MODEL.replace("1 # kernel parameter -s \n", "1 # kernel parameter -s \r").encode())
    with pytest.raises(InputFormatError, match=r"m\.txt:5: expected LF or CRLF line ends"):
        read_model(path)


def test_no_support_vectors_means_zero_weights(tmp_path):
    text = "".join(header_lines(n_features=4, n_sv_plus_1=1, b="0.5"))
    model = read_model(write_text(tmp_path, text))
    np.testing.assert_array_equal(model.w, np.zeros(4))
    assert model.b == 0.5


def test_zero_and_empty_weights(tmp_path):
    path = tmp_path / "m.txt"
    write_model(path, LinearModel(np.zeros(3), 2.0))
    assert path.read_text().splitlines()[-1] == "1 #"
    model = read_model(path)
    np.testing.assert_array_equal(model.w, np.zeros(3))
    write_model(path, LinearModel(np.array([-0.0, 1e-300]), 0.0))
    assert path.read_text().splitlines()[-1] == "1 2:1e-300 #"


finite = st.floats(allow_nan=False, allow_infinity=False)
meta_text = st.text(st.characters(blacklist_categories=("Cs", "Z", "Cc"), blacklist_characters="#="),
                    min_size=1, max_size=8)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(st.just(0.0), finite), min_size=1, max_size=20), finite,
       # (n_train is the writer's own key, drawn below: it must hold an integer; svmrank=
       # makes the metadata ours, whose values are checked: test_estimator_model)
       st.dictionaries(meta_text.filter(lambda k: k not in ("n_train", "svmrank")),
                       st.one_of(st.just(""), meta_text), max_size=4),
       st.one_of(st.none(), st.integers(0, 10**9)))
def test_round_trip(tmp_path, w, b, metadata, n_train):
    if n_train is not None:
        metadata = {**metadata, "n_train": str(n_train)}
    path = tmp_path / "round.txt"
    write_model(path, LinearModel(np.array(w, dtype=float), b, metadata))
    model = read_model(path)
    # The format keeps 8 significant digits (C's %.8g, which Python's %-format matches).
    np.testing.assert_array_equal(model.w, [float("%.8g" % v) for v in w])
    assert model.b == float("%.8g" % b)
    assert model.metadata == {**metadata, "n_train": str(n_train or 0)}
    # Writing what was read reproduces the file byte for byte.
    text = path.read_bytes()
    write_model(path, model)
    assert path.read_bytes() == text


@pytest.mark.parametrize("metadata, match", [
    ({"loss": "a p"}, r"metadata\['loss'\]: values must be str without whitespace, control "
                      r"characters or '#'"),
    ({"loss": "a\x00p"}, r"metadata\['loss'\]: values must be str"),
    ({"loss": "a\ud800"}, r"metadata\['loss'\]: values must be str"),  # not encodable
    ({"loss": "a#p"}, r"metadata\['loss'\]"),
    ({"loss": "ap\n"}, r"metadata\['loss'\]"),
    ({"C": 1.0}, r"metadata\['C'\]: values must be str"),
    ({"": "x"}, "keys must be non-empty str"),
    ({"a b": "x"}, "keys must be non-empty str"),
    ({"a=b": "x"}, "keys must be non-empty str"),
    ({1: "x"}, "keys must be non-empty str"),
    ({"n_train": "-3"}, r"metadata\['n_train'\]: expected an integer in \[0, 10\^18\)"),
    ({"n_train": "ten"}, r"metadata\['n_train'\]"),
    ({"n_train": "\u0663"}, r"metadata\['n_train'\]: expected an integer in \[0, 10\^18\)"),
])
def test_invalid_metadata(tmp_path, metadata, match):
    with pytest.raises(ValueError, match=match):
        LinearModel(np.ones(2), 0.0, metadata)
    model = LinearModel(np.ones(2), 0.0)
    model.metadata = metadata  # changed after construction: write_model checks again
    path = tmp_path / "keep.txt"
    path.write_text("old\n")
    with pytest.raises(ValueError, match=match):
        write_model(path, model)
    assert path.read_text() == "old\n"
    assert sorted(os.listdir(tmp_path)) == ["keep.txt"]


@pytest.mark.parametrize("w, b, match", [
    ([1.0, np.nan], 0.0, "w: contains NaN"),
    ([[1.0]], 0.0, "w: expected a 1-d array"),
    ([1.0], np.inf, "b must be a finite number"),
    ([1.0], "0", "b must be a finite number"),
])
def test_invalid_weights(w, b, match):
    with pytest.raises(ValueError, match=match):
        LinearModel(w, b)


def test_write_model_wants_a_linear_model(tmp_path):
    with pytest.raises(ValueError, match="expected a LinearModel"):
        write_model(tmp_path / "m.txt", {"w": [1.0]})


def sv_model(sv_lines, n_features=3, n_sv_plus_1=None, b="0"):
    n_sv_plus_1 = len(sv_lines) + 1 if n_sv_plus_1 is None else n_sv_plus_1
    return "".join(header_lines(n_features, n_sv_plus_1, b)) + "".join(line + "\n" for line in sv_lines)


@pytest.mark.parametrize("text, line, expected", [
    ("", 1, "'SVM-light Version V6.20' (not an SVM-light model file?)"),
    ("1 qid:1 1:0.5 2:1\n", 1, "not an SVM-light model file"),
    ("SVM-light Version V5.00\n", 1, "an SVM-light model of version V6.20 / V6.01 / V6.02"),
    ("SVM-multiclass Version V2.20\n2 # number of classes\n", 1, "this is an SVM-multiclass model"),
    ("SVM-struct Version V3.10\n", 1, "model of another SVM-struct application"),
    (SVM_RANK_MODEL.replace("0 # kernel type", "2 # kernel type"), 2,
     "kernel type 0 (linear; RBF kernels are not supported)"),
    (SVM_RANK_MODEL.replace("0 # kernel type", "x # kernel type"), 2, "an integer (kernel type)"),
    (SVM_RANK_MODEL.replace("1 # kernel parameter -g", "nan # kernel parameter -g"), 4,
     "a finite decimal number (kernel parameter -g)"),
    (SVM_RANK_MODEL.replace("6 # highest", "-6 # highest"), 8, "an integer >= 0 (highest feature index)"),
    (SVM_RANK_MODEL.replace("6 # highest", "\u0666 # highest"), 8, "an integer (highest feature index)"),
    (SVM_RANK_MODEL.replace("0 # threshold", "\u0660.\u0665 # threshold"), 11, "(threshold b)"),
    (SVM_RANK_MODEL.replace("10 # number of training", "1.5 # number of training"), 9,
     "an integer (number of training documents)"),
    (SVM_RANK_MODEL.replace("2 # number of support", "0 # number of support"), 10,
     "an integer >= 1 (number of support vectors plus 1)"),
    (SVM_RANK_MODEL.replace("0 # threshold", "inf # threshold"), 11, "a finite decimal number (threshold b)"),
    (SVM_RANK_MODEL.replace("0 # threshold", "1e999 # threshold"), 11, "a finite decimal number (threshold b)"),
    (SVM_RANK_MODEL.replace("2 # number of support", "3 # number of support"), 13,
     "2 support vector lines (truncated model file)"),
    (SVM_RANK_MODEL.replace("1 1:0.73636848", "nan 1:0.73636848"), 12, "a finite alpha*y"),
    (SVM_RANK_MODEL.replace("2:-0.26855063", "2:inf"), 12, "a finite feature value"),
    (SVM_RANK_MODEL.replace("5:0.94049019", "7:0.94049019"), 12,
     "a feature index <= 6 (the highest feature index)"),
    (SVM_RANK_MODEL.replace("5:0.94049019", "3:0.94049019"), 12, "strictly increasing order"),
    (SVM_RANK_MODEL + "1 1:1 #\n", 13, "the end of the file after 1 support vector lines"),
    (sv_model(["1 1:1 #", "", "1 2:1 #"]), 13, "a support vector line"),
    (sv_model(["# 1 1:1"]), 12, "a support vector line"),
    (SVM_RANK_MODEL.replace("6 # highest", "2000000000 # highest"), 8, "at most 134217728 weights"),
    # int() refuses more than 4300 digits with a message that names no file
    (SVM_RANK_MODEL.replace("6 # highest", "9" * 5000 + " # highest"), 8,
     "an integer below 10^18 (highest feature index)"),
    (SVM_RANK_MODEL.replace("10 # number of training", "1" + "0" * 18 + " # number of training"), 9,
     "an integer below 10^18 (number of training documents)"),
    (SVM_RANK_MODEL.replace("2 # number of support", "0" * 5000 + "3 # number of support"), 13,
     "2 support vector lines (truncated model file)"),  # (leading zeros: just 3)
])
def test_bad_model_files(tmp_path, text, line, expected):
    path = write_text(tmp_path, text)
    with pytest.raises(InputFormatError) as info:
        read_model(path)
    message = str(info.value)
    assert message.startswith(f"{path}:{line}: expected "), message
    assert expected in message, message
    assert "got '" in message and message.endswith("'"), message


@pytest.mark.parametrize("n_lines", range(1, 12))
def test_truncated_header(tmp_path, n_lines):
    text = "".join(SVM_RANK_MODEL.splitlines(keepends=True)[:n_lines])
    path = write_text(tmp_path, text)
    with pytest.raises(InputFormatError) as info:
        read_model(path)
    message = str(info.value)
    assert message.startswith(f"{path}:{n_lines + 1}: expected "), message
    assert message.endswith("got '<end of file>'"), message


def test_trailing_blank_lines_are_fine(tmp_path):
    model = read_model(write_text(tmp_path, SVM_RANK_MODEL + "\n  \n"))
    np.testing.assert_array_equal(model.w, SVM_RANK_W)


def test_single_sv_comment_that_is_not_metadata(tmp_path):
    for comment in ("docid = GX008 inc = 1", "a=\x01b", "a=b c=\x7f", "a=\x9f"):
        text = SVM_RANK_MODEL.replace(" #\n", f" #{comment}\n")
        assert read_model(write_text(tmp_path, text)).metadata == {"n_train": "10"}, comment


@pytest.mark.parametrize("cut", range(1, 60))
def test_model_cut_inside_its_weight_line_is_an_error(tmp_path, cut):
    """A file cut short anywhere before the '#' that ends the vector must not be read
    as a model with fewer weights (a silent wrong answer)."""
    text = SVM_RANK_MODEL[:SVM_RANK_MODEL.rindex("#") - cut]
    path = write_text(tmp_path, text)
    with pytest.raises(InputFormatError, match=r":12: expected .*truncated model file"):
        read_model(path)


def test_model_cut_inside_its_metadata_is_an_error(tmp_path):
    """A file cut anywhere in its last comment (our metadata: pairwise weights, class
    labels), up to and with its '#', must not be read with what is left of it:
    'classes=10,20,30' cut to 'classes=10,20,3' would relabel every prediction."""
    from svmrank.io.multiclass_model import MulticlassModel, read_multiclass_model, \
        write_multiclass_model
    path = str(tmp_path / "m")
    cases = [(lambda: write_model(path, LinearModel(np.array([1.0, -2.0]), 0.5,
                                                    {"loss": "ap", "pairwise": "1:-0.5,2:-0.25"})),
              read_model),
             (lambda: write_multiclass_model(path, MulticlassModel(
                 np.eye(3), np.array([10.0, 20.0, 30.0]), 5)), read_multiclass_model)]
    for write, read in cases:
        write()
        with open(path, "rb") as fh:
            full = fh.read()
        read(path)
        for cut in range(1, len(full) - full.rindex(b"#") + 1):  # up to and with '#'
            with open(path, "wb") as fh:
                fh.write(full[:-cut])
            with pytest.raises(InputFormatError, match=r"expected a line break at the end "
                                                      r"of the line \(truncated model file"):
                read(path)


def test_writers_refuse_a_training_count_their_readers_refuse(tmp_path):
    """The readers (and SVM-light's %ld) take at most 18 digits; the writers wrote any."""
    from svmrank.io.multiclass_model import MulticlassModel, write_multiclass_model
    path = tmp_path / "m"
    with pytest.raises(ValueError, match=r"n_train.*\[0, 10\^18\)"):
        write_model(path, LinearModel(np.ones(1), 0.0, {"n_train": "1" + "0" * 18}))
    with pytest.raises(ValueError, match=r"n_train.*\[0, 10\^18\)"):
        write_multiclass_model(path, MulticlassModel(np.eye(2), np.array([1.0, 2.0]), 10**18))
    write_model(path, LinearModel(np.ones(1), 0.0, {"n_train": "9" * 18}))
    assert read_model(path).metadata["n_train"] == "9" * 18
    assert not any(p.name.startswith(".tmp") for p in tmp_path.iterdir())


def test_long_digit_runs_are_refused_in_linear_time(tmp_path):
    """The decimal patterns once backtracked quadratically: a header value (or an option
    value) of 100,000 digits and a letter took minutes to refuse. Run in a
    subprocess, since a regular expression cannot be interrupted in-process."""
    import subprocess
    import sys
    digits = "1" * 100_000 + "x"
    linear = str(tmp_path / "linear")
    with open(linear, "w") as fh:
        fh.write(SVM_RANK_MODEL.replace("1 # kernel parameter -g", digits + " # kernel parameter -g"))
    from svmrank.io.multiclass_model import MulticlassModel, write_multiclass_model
    multi = str(tmp_path / "multi")
    write_multiclass_model(multi, MulticlassModel(np.eye(2), np.array([10.0, 20.0]), 5))
    with open(multi) as fh:
        text = fh.read()
    with open(multi, "w") as fh:
        fh.write(text.replace("classes=10,20", f"classes=10,{digits}"))
    code = ("import sys\nfrom svmrank.exceptions import InputFormatError\n"
            "from svmrank.io import read_model\n"
            "from svmrank.io.multiclass_model import read_multiclass_model\n"
            "for read, path in ((read_model, sys.argv[1]), (read_multiclass_model, sys.argv[2])):\n"
            "    try:\n        read(path)\n    except InputFormatError as exc:\n"
            "        print(str(exc).split(' expected ')[0])\n"
            "from svmrank.cli.common import strict_float\n"
            "try:\n    strict_float(sys.argv[3])\nexcept ValueError:\n    print('option')\n")
    done = subprocess.run([sys.executable, "-c", code, linear, multi, digits], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [f"{linear}:4:", f"{multi}:{text.count(chr(10))}:", "option"]


def multiclass_text(m=3, d=2, highest=None, n_sv_plus_1=2, sv="1 qid:0 1:1 4:1 5:-1 6:-1 #"):
    """An SVM-multiclass V2.20 linear model as svm_multiclass_learn writes it."""
    return (f"SVM-multiclass Version V2.20\n{m} # number of classes\n{d} # number of base "
            "features\n0 # loss function\n0 # kernel type\n3 # kernel parameter -d \n"
            "1 # kernel parameter -g \n1 # kernel parameter -s \n1 # kernel parameter -r \n"
            f"empty# kernel parameter -u \n{m * d if highest is None else highest} # highest "
            "feature index \n10 # number of training documents \n"
            f"{n_sv_plus_1} # number of support vectors plus 1 \n"
            "0 # threshold b, each following line is a SV (starting with alpha*y)\n"
            + (sv + "\n" if n_sv_plus_1 > 1 else ""))


def test_multiclass_header_fields_must_agree(tmp_path):
    """Issue 29: a changed 'number of base features' re-sliced the weights into the wrong
    classes silently; the highest feature index (classes x features) contradicts it."""
    from svmrank.io.multiclass_model import read_multiclass_model
    np.testing.assert_array_equal(read_multiclass_model(write_text(tmp_path, multiclass_text())).coef,
                                  [[1, 0], [0, 1], [-1, -1]])
    for text in (multiclass_text(d=3, highest=6), multiclass_text(d=1, highest=6),
                 multiclass_text(highest=7)):
        path = write_text(tmp_path, text)
        with pytest.raises(InputFormatError) as info:
            read_multiclass_model(path)
        message = str(info.value)
        assert message.startswith(f"{path}:3: expected the number of base features that, "
                                  "times the 3 classes (line 2), makes the highest feature "
                                  "index"), message
        assert "\n" not in message


def test_multiclass_class_count_is_capped_before_any_allocation(tmp_path):
    """Issue 29: the cap counted classes x max(features, 1), so a short header declaring
    millions of classes of 0 features passed (2^22 classes took 1.15 GB)."""
    from svmrank.io.multiclass_model import (MAX_MODEL_CLASSES, MulticlassModel,
                                             check_model_size, read_multiclass_model,
                                             write_multiclass_model)
    ok = read_multiclass_model(write_text(tmp_path, multiclass_text(m=MAX_MODEL_CLASSES, d=0,
                                                                    n_sv_plus_1=1)))
    assert ok.coef.shape == (MAX_MODEL_CLASSES, 0)
    path = write_text(tmp_path, multiclass_text(m=MAX_MODEL_CLASSES + 1, d=0, n_sv_plus_1=1))
    with pytest.raises(InputFormatError, match=rf":2: expected at most {MAX_MODEL_CLASSES} "
                                               r"classes \(corrupt header\?\), got '100001 # "):
        read_multiclass_model(path)
    with pytest.raises(ValueError, match=rf"x: {MAX_MODEL_CLASSES + 1} classes; a model file "
                                         rf"holds at most {MAX_MODEL_CLASSES}"):
        check_model_size(MAX_MODEL_CLASSES + 1, 0, "x")
    with pytest.raises(ValueError, match=rf"holds at most {MAX_MODEL_CLASSES}"):
        write_multiclass_model(tmp_path / "w", MulticlassModel(
            np.zeros((MAX_MODEL_CLASSES + 1, 0)), np.arange(MAX_MODEL_CLASSES + 1.0)))
    assert not (tmp_path / "w").exists()


def test_lf_cr_model_files_read(tmp_path):
    """Issue 29: lines opening with a stray CR (LF-CR line ends) are LF lines."""
    from svmrank.io.multiclass_model import read_multiclass_model
    path = write_text(tmp_path, SVM_RANK_MODEL.replace("\n", "\n\r"))
    np.testing.assert_array_equal(read_model(path).w, SVM_RANK_W)
    path = write_text(tmp_path, multiclass_text().replace("\n", "\n\r"))
    np.testing.assert_array_equal(read_multiclass_model(path).coef, [[1, 0], [0, 1], [-1, -1]])


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_endless_model_files_fail_at_their_header(tmp_path):
    """Issue 29: both readers read the whole file before checking its header, so
    /dev/zero as the model file filled memory. Now: the header first, then only what it
    declares (run under an address-space limit: the old readers fail with MemoryError)."""
    import subprocess
    import sys
    code = ("import resource, sys\nfrom svmrank.exceptions import InputFormatError\n"
            "from svmrank.io import read_model, read_multiclass_model\n"
            "size = int(open('/proc/self/statm').read().split()[0]) * resource.getpagesize()\n"
            "resource.setrlimit(resource.RLIMIT_AS, (size + 2**28, size + 2**28))\n"
            "for read in (read_model, read_multiclass_model):\n"
            "    try:\n        read(sys.argv[1])\n"
            "    except InputFormatError as exc:\n        print(exc)\n")
    done = subprocess.run([sys.executable, "-c", code, "/dev/zero"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-300:]
    lines = done.stdout.splitlines()
    assert len(lines) == 2 and all(line.startswith("/dev/zero:1: expected a header line of at "
                                                   "most 1048576 bytes") for line in lines), lines
    # a valid header followed by more than its support vectors can take
    from svmrank.io.multiclass_model import read_multiclass_model
    for read, text in ((read_model, SVM_RANK_MODEL), (read_multiclass_model, multiclass_text())):
        path = write_text(tmp_path, text + "\n" * (3 << 20))
        with pytest.raises(InputFormatError, match=r"expected the end of the file within \d+ "
                                                   r"bytes after the header \(what 1 support "):
            read(path)
        read(write_text(tmp_path, text + "\n" * 1000))  # (trailing blank lines are fine)


def test_a_model_without_features_is_refused_at_its_header(tmp_path):
    """Review 23: "0 # highest feature index" was read and written, and every classifier
    then failed on an 'X: Found array with 0 feature(s)' that named neither file."""
    path = tmp_path / "zero.model"
    path.write_text(SVM_RANK_MODEL.replace("6 # highest", "0 # highest")
                    .replace("2 # number of support vectors plus 1", "1 # number of support "
                             "vectors plus 1").rsplit("1 1:", 1)[0])
    with pytest.raises(InputFormatError, match=rf"^{path}:8: expected a highest feature index "
                                               ">= 1"):
        read_model(path)
    with pytest.raises(ValueError, match="^w: a model file holds at least one weight"):
        write_model(tmp_path / "w.model", LinearModel(np.zeros(0), 0.5))
