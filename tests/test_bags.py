"""Bag validation (bag index, bag labels, known candidates) and MIL file loading."""
import os

import numpy as np
import pytest

from conftest import shared_file
from svmrank.bags import (KNOWN_KEY, Bags, check_bag_labels, check_bags, check_known,
                          known_from_comments, load_bags)
from svmrank.datasets import make_bags


def test_ids_per_row_in_order_of_first_appearance():
    bags = check_bags(["b", "b", "a", "c", "c", "c"], 6)
    np.testing.assert_array_equal(bags.offsets, [0, 2, 3, 6])
    assert list(bags.ids) == ["b", "a", "c"]
    assert bags.n_bags == 3 and bags.n_rows == 6
    np.testing.assert_array_equal(bags.bag_of_row(), [0, 0, 1, 2, 2, 2])


def test_none_makes_every_row_a_bag():
    bags = check_bags(None, 4)
    np.testing.assert_array_equal(bags.sizes, [1, 1, 1, 1])


def test_row_lists():
    bags = check_bags([[0, 1], [2], [3, 4, 5]], 6)
    np.testing.assert_array_equal(bags.offsets, [0, 2, 3, 6])


def test_non_contiguous_bag_is_rejected_naming_bag_and_row():
    with pytest.raises(ValueError, match=r"bags: bag 7 is not contiguous: it reappears at row 3 "
                                         r"after ending at row 1"):
        check_bags([7, 7, 8, 7], 4)


def test_empty_bag_is_rejected():
    with pytest.raises(ValueError, match="bags: bag 1 is empty"):
        check_bags([[0, 1], [], [2]], 3)


def test_row_lists_must_be_consecutive_and_cover_x():
    with pytest.raises(ValueError, match="bag 1 lists row 3 where row 2"):
        check_bags([[0, 1], [3, 2]], 4)
    with pytest.raises(ValueError, match="cover 3 rows but X has 4"):
        check_bags([[0, 1], [2]], 4)


@pytest.mark.parametrize("bad, message", [
    (np.zeros((2, 2)), "1-d array"),
    ([1, 1, 2], "expected 4 bag ids"),
    ([1.0, np.nan, 2.0, 2.0], "NaN"),
])
def test_bag_index_shape_errors(bad, message):
    with pytest.raises(ValueError, match=message):
        check_bags(bad, 4)


def test_no_rows():
    with pytest.raises(ValueError, match="no candidates"):
        check_bags([], 0)


def test_labels_per_row_or_per_bag():
    bags = check_bags([1, 1, 2, 3, 3], 5)
    np.testing.assert_array_equal(check_bag_labels([1, 1, -1, 1, 1], bags), [1, -1, 1])
    np.testing.assert_array_equal(check_bag_labels([0, 1, 0], bags), [0, 1, 0])
    with pytest.raises(ValueError, match="one label per row \\(5\\) or per bag \\(3\\), got 4"):
        check_bag_labels([1, 1, 1, 1], bags)


def test_mixed_label_bag_names_bag_and_row():
    bags = check_bags([1, 1, 2, 2, 2], 5)
    with pytest.raises(ValueError, match=r"y: bag 2 mixes labels: row 4 has -1 but row 2 "):
        check_bag_labels([0, 0, 1, 1, -1], bags)


def test_known_as_mask_and_as_indices():
    bags = check_bags([1, 1, 2, 2, 2, 3], 6)
    mask = np.array([0, 1, 0, 0, 0, 0], dtype=bool)
    np.testing.assert_array_equal(check_known(mask, bags), [1, -1, -1])
    np.testing.assert_array_equal(check_known(np.array([-1, 4, 5]), bags), [-1, 4, 5])
    np.testing.assert_array_equal(check_known(None, bags), [-1, -1, -1])


def test_known_outside_its_bag():
    bags = check_bags([1, 1, 2, 2, 2, 3], 6)
    with pytest.raises(ValueError, match=r"known: bag 2 marks row 5 as its known candidate, but "
                                         r"the bag is rows 2\.\.4"):
        check_known(np.array([0, 5, -1]), bags)
    # 0/1 integers meant as a row mask (one row per bag): the message says how to pass it
    single = check_bags(np.arange(4), 4)
    with pytest.raises(ValueError, match=r"bag 2 marks row 1 .*\(pass a boolean array to mark rows"):
        check_known(np.array([0, 1, 1, 0]), single)


def test_a_2d_integer_array_lists_bags_like_a_nested_list():
    nested = check_bags([[0, 1], [2, 3]], 4)
    array = check_bags(np.array([[0, 1], [2, 3]]), 4)
    np.testing.assert_array_equal(array.offsets, nested.offsets)
    with pytest.raises(ValueError, match=r"bags: bag 1 lists row 3 where row 2"):
        check_bags(np.array([[0, 1], [3, 2]]), 4)
    with pytest.raises(ValueError, match=r"expected a 1-d array of bag ids"):
        check_bags(np.zeros((2, 2)), 4)  # floats are not row indices
    with pytest.raises(ValueError, match=r"expected a 1-d array of bag ids .*got shape \(4, 1\)"):
        check_bags(np.array([[7], [7], [8], [8]]), 4)  # a column of bag ids: ravel it


def test_ragged_bag_ids_are_named():
    with pytest.raises(ValueError, match=r"^bags: expected a 1-d array of bag ids \(one per row\) or "
                                         r"a list of row lists"):
        check_bags([0, [1, 2]], 3)


def test_two_known_in_one_bag():
    bags = check_bags([1, 1, 2], 3)
    with pytest.raises(ValueError, match="bag 1 has more than one known candidate"):
        check_known(np.array([True, True, False]), bags)


@pytest.mark.parametrize("bad, message", [
    (np.array([0.5, 1.0]), "dtype float64"),
    (np.array([1, -1, -1, -1]), "one row index per bag"),
    (np.array([True, False]), "one entry per row"),
])
def test_known_format_errors(bad, message):
    bags = check_bags([1, 1, 2], 3)
    with pytest.raises(ValueError, match=message):
        check_known(bad, bags)


def test_take_selects_bags_and_their_rows():
    bags = check_bags([5, 5, 6, 7, 7, 7], 6)
    rows, sub = bags.take([2, 0])
    np.testing.assert_array_equal(rows, [3, 4, 5, 0, 1])
    np.testing.assert_array_equal(sub.offsets, [0, 3, 5])
    assert list(sub.ids) == [7, 5]
    # a boolean mask over bags (a fold) selects bags, not bag numbers 0 and 1
    rows, sub = bags.take(np.array([False, False, True]))
    assert rows.tolist() == [3, 4, 5] and list(sub.ids) == [7]
    # a negative, too large or fractional bag number returned wrong rows or a raw error
    for bad, match in (([-1], "must lie in 0..2"), ([3], "must lie in 0..2"),
                       ([0.9], "integer bag numbers"), (np.array([True]), "one entry per bag")):
        with pytest.raises(ValueError, match=f"^bag_numbers: .*{match}"):
            bags.take(bad)


def test_string_bag_ids_as_objects_and_mixed_ids():
    """pandas gives string ids as an object array (refused as 'objects'); a list mixing
    1 and '1' was merged into one bag by NumPy, and so were 'a' and b'a'."""
    assert list(check_bags(np.array(["a", "a", "b"], dtype=object), 3).ids) == ["a", "b"]
    # numbers as objects were refused as "not all numbers"; 'a' and b'a' were merged
    assert list(check_bags(np.array([1, 1, 2], dtype=object), 3).ids) == [1, 2]
    assert list(check_bags([b"x", b"x", b"y"], 3).ids) == [b"x", b"y"]
    for mixed in ([1, 1, "1", "1"], np.array([1, 1, "1", "1"], dtype=object),
                  ["a", b"a", "b", "b"]):
        with pytest.raises(ValueError, match="^bags: bag ids must be all numbers, all strings "
                                             "or all bytes"):
            check_bags(mixed, 4)
    with pytest.raises(ValueError, match="^bags: contains NaN"):
        check_bags(np.array([1, 1, np.nan], dtype=object), 3)


class _LabelledColumn:
    """Indexing by label, iteration by position, like a pandas Series cut from a frame."""

    def __init__(self, values, labels):
        self.values, self.labels = list(values), list(labels)

    def __len__(self):
        return len(self.values)

    def __iter__(self):
        return iter(self.values)

    def __getitem__(self, label):
        return self.values[self.labels.index(label)]

    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.values, dtype=dtype)


def test_bag_ids_whose_labels_lack_zero():
    """A column of bag ids labelled 2..5 (rows 2: of a frame) raised KeyError: 0."""
    ids = _LabelledColumn([2, 2, 3, 3], labels=[2, 3, 4, 5])
    bags = check_bags(ids, 4)
    assert bags.offsets.tolist() == [0, 2, 4] and list(bags.ids) == [2, 3]


def test_bags_built_from_lists_and_unsigned_known():
    """Bags(list ids) broke take() and argmax's error; a uint64 2**64 - 1 wrapped to -1
    and made a bag latent without a word."""
    bags = Bags([0, 2, 3], [10, 20])
    assert list(bags.take([1])[1].ids) == [20]
    with pytest.raises(ValueError, match="^known: bag 10 marks row 5"):
        bags.argmax(np.arange(3.0), known=[5, -1])
    six = check_bags([1, 1, 2, 2, 3, 3], 6)
    with pytest.raises(ValueError, match="^known: row index 18446744073709551615 is out of range"):
        check_known(np.array([2**64 - 1, 2, 4], dtype=np.uint64), six)
    assert check_known(np.array([0, 2, 4], dtype=np.uint64), six).tolist() == [0, 2, 4]


def test_known_from_comments_is_a_whole_word():
    mask = known_from_comments(["known", "", "inst 3 known", "unknown", None, "known=1"])
    np.testing.assert_array_equal(mask, [True, False, True, False, False, False])
    assert KNOWN_KEY == "known"


def write(tmp_path, text):
    path = tmp_path / "bags.svm"
    path.write_text(text)
    return path


def test_load_bags_with_known_comment(tmp_path):
    path = write(tmp_path, "# header\n1 qid:7 1:0.5 # known\n1 qid:7 2:1\n\n-1 qid:8 1:2 # x\n")
    X, y, bags, known = load_bags(path)
    assert X.shape == (3, 2)
    np.testing.assert_array_equal(y, [1, 1, -1])
    np.testing.assert_array_equal(bags, [7, 7, 8])
    np.testing.assert_array_equal(known, [True, False, False])


def test_load_bags_non_contiguous_names_file_bag_and_line(tmp_path):
    path = write(tmp_path, "1 qid:1 1:1\n# comment line\n-1 qid:2 1:1\n1 qid:1 1:2\n")
    with pytest.raises(ValueError, match=r"bags\.svm: bag 1 is not contiguous: it reappears at "
                                         r"line 4 after ending at line 1"):
        load_bags(path)


def test_load_bags_reads_a_pipe_once(tmp_path):
    """The file is read once: a named pipe used to hang, since the line numbers were
    counted by opening it a second time. Run in a subprocess, so a hang fails the test.
    The line numbers still count a BOM line, comments and blank lines."""
    import subprocess
    import sys
    fifo = tmp_path / "bags.fifo"
    os.mkfifo(fifo)
    text = "\ufeff# header\n1 qid:1 1:1\n\n1 qid:1 1:2\n-1 qid:2 1:1\n1 qid:1 1:3\n"
    code = ("import sys, threading\n"
            "from svmrank.bags import load_bags\n"
            "path, text = sys.argv[1], sys.argv[2]\n"
            "writer = threading.Thread(target=lambda: open(path, 'w', encoding='utf-8').write(text))\n"
            "writer.start()\n"
            "try:\n    load_bags(path)\nexcept ValueError as exc:\n    print(exc)\n")
    done = subprocess.run([sys.executable, "-c", code, str(fifo), text], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "bag 1 is not contiguous: it reappears at line 6 after ending at line 4" in done.stdout


def test_load_bags_mixed_labels_names_lines(tmp_path):
    path = write(tmp_path, "1 qid:1 1:1\n1 qid:1 1:1\n-1 qid:1 1:2\n")
    with pytest.raises(ValueError, match=r"bags\.svm: bag 1 mixes labels: line 3 has -1 but "
                                         r"line 1"):
        load_bags(path)


def test_load_bags_two_known_and_missing_qid(tmp_path):
    path = write(tmp_path, "1 qid:1 1:1 # known\n1 qid:1 1:1 # known\n")
    with pytest.raises(ValueError, match=r"bag 1 has more than one known candidate \(line 1 and "
                                         r"line 2\)"):
        load_bags(path)
    path = write(tmp_path, "1 qid:1 1:1\n1 1:1\n")
    with pytest.raises(ValueError, match=r"bags\.svm: line 2 has no qid or qid:0"):
        load_bags(path)


@pytest.mark.parametrize("name, n_rows, n_bags, n_pos", [
    ("musk1", 476, 92, 47), ("elephant", 1391, 200, 100), ("fox", 1320, 200, 100),
    ("tiger", 1220, 200, 100)])
def test_shared_mil_sets_load_as_is(name, n_rows, n_bags, n_pos):
    X, y, bags, known = load_bags(shared_file(name, f"{name}.mil.svm"))
    index = check_bags(bags, X.shape[0])
    assert X.shape[0] == n_rows and index.n_bags == n_bags
    assert int((check_bag_labels(y, index) > 0).sum()) == n_pos
    assert not known.any()


def test_make_bags_is_seeded_and_marks_the_supervision_level():
    X, y, bags, known = make_bags(n_bags=40, bag_size=(2, 5), supervision=0.5, random_state=3)
    X2, y2, bags2, known2 = make_bags(n_bags=40, bag_size=(2, 5), supervision=0.5, random_state=3)
    np.testing.assert_array_equal(X, X2)
    np.testing.assert_array_equal(known, known2)
    index = check_bags(bags, X.shape[0])
    labels = check_bag_labels(y, index)
    known_rows = check_known(known, index)
    assert index.n_bags == 40 and index.sizes.min() >= 2 and index.sizes.max() <= 5
    # half of each class is supervised
    assert (known_rows[labels > 0] >= 0).sum() == round(0.5 * (labels > 0).sum())
    assert (known_rows[labels <= 0] >= 0).sum() == round(0.5 * (labels <= 0).sum())
    _, _, _, none = make_bags(n_bags=40, supervision=0.0)
    assert not none.any()


def test_make_bags_one_vs_rest_options_change_only_what_they_describe():
    """negative_classes shifts each negative bag's true candidate by `separation` along
    one of K directions; overlap adds to every other candidate a fraction in [0, 1) of
    its bag's true shift. Everything else (labels, bags, known rows, the positive true
    candidates) is the data set drawn without the options."""
    kw = dict(n_bags=60, bag_size=(3, 6), n_features=5, positive_fraction=0.2,
              supervision=0.5, separation=2.5, random_state=4)
    X0, y0, b0, k0 = make_bags(**kw)
    X1, y1, b1, k1 = make_bags(negative_classes=3, **kw)
    X2, y2, b2, k2 = make_bags(negative_classes=3, overlap=True, **kw)
    for y, b, k in ((y1, b1, k1), (y2, b2, k2)):
        np.testing.assert_array_equal(y, y0)
        np.testing.assert_array_equal(b, b0)
        np.testing.assert_array_equal(k, k0)
    index = check_bags(b0, X0.shape[0])
    labels = check_bag_labels(y0, index)
    # the true rows: the known ones (supervision 0.5) tell where they are
    known_rows = check_known(k0, index)
    d1 = X1 - X0
    changed = np.flatnonzero(np.abs(d1).max(axis=1) > 0)
    neg_true = known_rows[(labels <= 0) & (known_rows >= 0)]
    assert set(neg_true) <= set(changed)
    assert np.all(labels[index.bag_of_row()[changed]] <= 0)   # only negative bags change
    assert len(changed) == int((labels <= 0).sum())           # one row per negative bag
    np.testing.assert_allclose(np.linalg.norm(d1[changed], axis=1), 2.5)
    directions = np.unique(np.round(d1[changed] / 2.5, 12), axis=0)
    assert 1 < len(directions) <= 3                            # K = 3 class directions
    # overlap: the true rows keep their values, the others move along their bag's shift
    d2 = X2 - X1
    true_rows = np.r_[changed, known_rows[(labels > 0) & (known_rows >= 0)]]
    assert not np.abs(d2[true_rows]).any()
    pos_units = []
    for b in range(index.n_bags):
        rows = np.arange(index.offsets[b], index.offsets[b + 1])
        moved = rows[np.abs(d2[rows]).max(axis=1) > 0]
        assert len(moved) >= len(rows) - 1                     # all but the true candidate
        norms = np.linalg.norm(d2[moved], axis=1)
        assert np.all(norms < 2.5)
        units = d2[moved] / norms[:, None]
        if labels[b] > 0:
            pos_units.append(units)
        else:               # along the bag's own class direction (its true row's shift)
            true_shift = d1[rows][np.abs(d1[rows]).max(axis=1) > 0][0]
            np.testing.assert_allclose(units, np.tile(true_shift / 2.5, (len(moved), 1)),
                                       atol=1e-9)
    pos_units = np.vstack(pos_units)   # positives: one hidden direction for all bags
    np.testing.assert_allclose(pos_units, np.tile(pos_units[0], (len(pos_units), 1)), atol=1e-9)
    with pytest.raises(ValueError, match="negative_classes"):
        make_bags(negative_classes=-1)


def test_bags_methods_refuse_bad_input():
    """Bags.argmax / Bags.max are public: a known row outside its bag read another bag
    or out of bounds (a crash at 10**6), a short scores array read past its end, and a
    hand-built Bags with an empty bag gave wrong maxima."""
    from svmrank.bags import Bags
    b = check_bags([1, 1, 2, 2, 2], 5)
    s = np.arange(5.0)
    for call, match in [
            (lambda: b.argmax(np.arange(3.0)), r"^scores: expected length 5, got 3$"),
            (lambda: b.max(np.arange(2.0)), r"^scores: expected length 5, got 2$"),
            (lambda: b.argmax(np.r_[np.nan, s[1:]]), r"^scores: contains NaN values$"),
            (lambda: b.argmax(s, known=[10**6, -1]), r"^known: bag 1 marks row 1000000 "),
            (lambda: b.argmax(s, known=[4, -1]), r"^known: bag 1 marks row 4 "),
            (lambda: b.argmax(s, minimise=[True]), r"^minimise: expected length 2, got 1$"),
            (lambda: Bags(np.array([0, 2, 2, 5]), np.array([1, 2, 3])),
             r"^offsets: must start at 0 and increase strictly"),
            (lambda: Bags(np.array([0, 5, 3], dtype=np.uint64), np.array([1, 2])),  # (wrapped)
             r"^offsets: must start at 0 and increase strictly"),
            (lambda: Bags(np.array([0, 2, 5]), np.array([1])),
             r"^ids: expected one id per bag \(2\), got 1$")]:
        with pytest.raises(ValueError, match=match):
            call()
    rows, values = b.argmax(np.r_[-np.inf, s[1:]], known=[-1, 2], minimise=[False, True])
    assert rows.tolist() == [1, 2] and values.tolist() == [1.0, 2.0]
    assert b.max(np.r_[-np.inf, s[1:]]).tolist() == [1.0, 4.0]
