"""Training on a Dask cluster (svmrank.dask) equals training in memory."""
from pathlib import Path

import numpy as np
import pytest

distributed = pytest.importorskip("distributed", reason="dask[distributed] is not installed "
                                  "(pip install svmrank[dask])")

from conftest import shared_file  # noqa: E402
from svmrank import APSVM, APSVMCV, BinarySVM, RankSVM  # noqa: E402
from svmrank.cli import ap_classify, ap_learn, rank_classify, rank_learn  # noqa: E402
from svmrank.io import load_svmlight  # noqa: E402
from svmrank.io.model_file import read_model  # noqa: E402
from svmrank.losses import PairwiseLoss  # noqa: E402

svmrank_dask = pytest.importorskip("svmrank.dask")


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as c:
            yield c


def write_shards(path, tmp_path, n_shards):
    """The file's lines cut into ``n_shards`` files at query boundaries."""
    lines = path.read_text().splitlines(keepends=True)
    qids = [ln.split()[1] for ln in lines]
    starts = [0] + [k for k in range(1, len(lines)) if qids[k] != qids[k - 1]]
    cuts = [starts[len(starts) * j // n_shards] for j in range(n_shards)] + [len(lines)]
    out = []
    for j in range(n_shards):
        shard = tmp_path / f"part-{j}.txt"
        shard.write_text("".join(lines[cuts[j]:cuts[j + 1]]))
        out.append(shard)
    return out


def assert_same_fit(a, b):
    assert b.objective_ == pytest.approx(a.objective_, rel=1e-9)
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=0, atol=1e-7 * max(1, np.abs(a.coef_).max()))


def test_mq2008_fit_equals_in_memory(client, tmp_path):
    # 3 shards on 2 workers; small C: few iterations (each is a few round trips)
    path = shared_file("mq2008", "S5.txt")
    write_shards(path, tmp_path, 3)
    X, y, qid = load_svmlight(path)
    data = svmrank_dask.read_svmlight(str(tmp_path / "part-*.txt"), client=client)
    assert data.shape == X.shape and len(data.partitions) == 3
    with pytest.warns(UserWarning, match="51 of 156 queries"):
        memory = APSVM(C=10.0).fit(X, y, qid=qid)
    with pytest.warns(UserWarning, match="51 of 156 queries"):
        remote = APSVM(C=10.0).fit(data)
    assert_same_fit(memory, remote)
    np.testing.assert_array_equal(remote.classes_, memory.classes_)


def single_query_file(tmp_path, n=300, d=8, seed=0, qid="qid:1 "):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X @ rng.normal(size=d) + rng.normal(size=n) > 0.5, 1, -1)
    path = tmp_path / "one.txt"
    path.write_text("".join(f"{lab} {qid}" + " ".join(f"{j + 1}:{v:.6f}" for j, v in
                                                       enumerate(row)) + "\n"
                            for lab, row in zip(y, X)))
    return path


def test_single_query_and_binary_fit_equal_in_memory(client, tmp_path):
    path = single_query_file(tmp_path)
    X, y, qid = load_svmlight(path)
    data = svmrank_dask.read_svmlight(path, client=client)
    assert_same_fit(APSVM(C=10.0).fit(X, y), APSVM(C=10.0).fit(data))
    assert_same_fit(BinarySVM(C=10.0).fit(X, y), BinarySVM(C=10.0).fit(data))


def test_query_across_partitions_fits_as_in_memory(client, tmp_path):
    # one query cut into 3 shards: its scores gathered, its inference on the driver
    lines = single_query_file(tmp_path).read_text().splitlines(True)
    for j, (a, b) in enumerate(((0, 100), (100, 130), (130, 300))):
        (tmp_path / f"part-{j}.txt").write_text("".join(lines[a:b]))
    X, y, _ = load_svmlight(tmp_path / "one.txt")
    data = svmrank_dask.read_svmlight(str(tmp_path / "part-*.txt"), client=client)
    assert len(data.partitions) == 3 and data.spanning.tolist() == [1]
    assert_same_fit(APSVM(C=10.0).fit(X, y), APSVM(C=10.0).fit(data))
    assert_same_fit(RankSVM(C=10.0, loss="roc").fit(X, y), RankSVM(C=10.0, loss="roc").fit(data))


def test_mq2008_query_cut_at_a_shard_boundary(client, tmp_path):
    path = shared_file("mq2008", "S5.txt")
    lines = path.read_text().splitlines(True)
    qids = [ln.split()[1] for ln in lines]
    cut = len(lines) // 2
    while qids[cut] != qids[cut - 1] or qids[cut] != qids[cut + 3]:
        cut += 1  # (inside a query, not at its first lines)
    (tmp_path / "part-0.txt").write_text("".join(lines[:cut]))
    (tmp_path / "part-1.txt").write_text("".join(lines[cut:]))
    X, y, qid = load_svmlight(path)
    data = svmrank_dask.read_svmlight(str(tmp_path / "part-*.txt"), client=client)
    assert data.spanning.tolist() == [int(qids[cut].split(":")[1])]
    with pytest.warns(UserWarning, match="51 of 156 queries"):
        memory = APSVM(C=10.0).fit(X, y, qid=qid)
    with pytest.warns(UserWarning, match="51 of 156 queries"):
        remote = APSVM(C=10.0).fit(data)
    assert_same_fit(memory, remote)
    # the graded losses on levels 0, 1, 2: the cut query's inference runs on the driver
    for params in ({"loss": "pairs", "pair_loss": "count"}, {"loss": "ndcg", "k": 10}):
        with pytest.warns(UserWarning, match="51 of 156 queries have a single relevance level"):
            memory = RankSVM(C=10.0, **params).fit(X, y, qid=qid)
        with pytest.warns(UserWarning, match="51 of 156 queries have a single relevance level"):
            remote = RankSVM(C=10.0, **params).fit(data)
        assert_same_fit(memory, remote)
        assert remote.loss_ == memory.loss_ and remote.n_queries_skipped_ == 51


def test_graded_shards_with_some_of_the_labels(client, tmp_path):
    # shards holding some of the set's labels only (0 and 2 of 0, 1, 2), and labels
    # without a 0 (1 and 2): as in memory
    rng = np.random.default_rng(4)
    for labels in ((0, 2, 0, 1, 2), (1, 2, 1, 2, 2)):
        rows = []
        for q in range(12):
            levels = rng.choice(labels[:2] if q < 6 else labels[2:], size=15)
            levels[:2] = (labels[0], labels[1]) if q < 6 else (labels[2], labels[-1])
            rows += [f"{lab} qid:{q + 1} " + " ".join(f"{j + 1}:{v:.5f}" for j, v in
                                                      enumerate(rng.normal(size=4) + lab))
                     for lab in levels]
        (tmp_path / "part-0.txt").write_text("\n".join(rows[:90]) + "\n")
        (tmp_path / "part-1.txt").write_text("\n".join(rows[90:]) + "\n")
        data = svmrank_dask.read_svmlight(str(tmp_path / "part-*.txt"), client=client)
        X, y, qid = data.gather()
        for params in ({"loss": "ndcg"}, {"loss": "pairs", "pair_loss": "fraction"}):
            assert_same_fit(RankSVM(C=3.0, **params).fit(X, y, qid=qid),
                            RankSVM(C=3.0, **params).fit(data))


def test_blocksize_partitions(client, tmp_path):
    path = single_query_file(tmp_path, qid="")  # (no queries: cut anywhere)
    X, y, _ = load_svmlight(path)
    data = svmrank_dask.read_svmlight(path, blocksize=path.stat().st_size // 3, client=client)
    assert len(data.partitions) >= 3 and data.shape == X.shape
    assert_same_fit(BinarySVM(C=10.0).fit(X, y), BinarySVM(C=10.0).fit(data))
    # the lines without qid: are one query over 3 partitions: its inference on the driver
    assert_same_fit(APSVM(C=10.0).fit(X, y), APSVM(C=10.0).fit(data))
    with pytest.raises(ValueError, match="blocksize"):
        svmrank_dask.read_svmlight(path, blocksize=0, client=client)


def test_bad_input_is_refused_before_training(client, tmp_path):
    with pytest.raises(ValueError, match="matches no file"):
        svmrank_dask.read_svmlight(str(tmp_path / "nothing-*.txt"), client=client)
    (tmp_path / "a.txt").write_text("1 qid:1 1:1 2:1\n0 qid:1 1:0.5\n")
    (tmp_path / "b.txt").write_text("1 qid:2 1:1 2:1 3:1\n0 qid:2 1:0.5\n")
    with pytest.raises(ValueError, match="different feature counts"):
        svmrank_dask.read_svmlight([tmp_path / "a.txt", tmp_path / "b.txt"], client=client)
    # n_features="max" (the CLIs'): the widest shard's width, as one file would be read
    widest = svmrank_dask.read_svmlight([tmp_path / "a.txt", tmp_path / "b.txt"],
                                        n_features="max", client=client)
    X, _, _ = widest.gather()
    assert widest.shape == X.shape == (4, 3)
    np.testing.assert_array_equal(X.toarray(), [[1, 1, 0], [0.5, 0, 0], [1, 1, 1], [0.5, 0, 0]])
    (tmp_path / "c.txt").write_text("# a comment\n1 qid:2 1:1 2:1\n1 qid:1 1:1 2:1\n")
    with pytest.raises(ValueError, match=r"c.txt:3: qid:1 appears again after other queries"):
        svmrank_dask.read_svmlight([tmp_path / "a.txt", tmp_path / "c.txt"], client=client)
    with pytest.raises(ValueError, match="no Dask scheduler answers"):
        svmrank_dask.connect("tcp://127.0.0.1:9", timeout=1)
    with pytest.raises(ValueError, match="^--dask: no Dask scheduler answers at 'shards-.*' "):
        svmrank_dask.connect("shards-*.txt")  # (not an address: a file name in its place)
    data = svmrank_dask.read_svmlight(tmp_path / "a.txt", client=client)
    with pytest.raises(ValueError, match="y, qid"):
        APSVM().fit(data, np.ones(2))
    (tmp_path / "g.txt").write_text("2.5 qid:1 1:1 2:1\n1 qid:1 1:0.7\n0 qid:1 1:0.5\n")
    bad_levels = svmrank_dask.read_svmlight(tmp_path / "g.txt", client=client)
    for model in (RankSVM(loss="ndcg"), RankSVM(loss="pairs"), RankSVM(loss="ndcg", k=2)):
        with pytest.raises(ValueError, match="^y: graded relevance labels must be integers "
                                             "in 0..1000, got 2.5$"):
            model.fit(bad_levels)
    with pytest.raises(ValueError, match="^approx: not supported on partitioned"):
        APSVM(approx=50).fit(data)
    with pytest.raises(ValueError, match="^lai: .* leave lai='qs'"):
        RankSVM(loss="pairs", lai="greedy").fit(data)


def test_cli_dask(client, tmp_path, capsys):
    path = single_query_file(tmp_path, n=120)
    model = tmp_path / "model"
    address = client.scheduler.address
    assert ap_learn.main(["-c", "10", "--dask", address, str(path), str(model)]) == 0
    X, y, _ = load_svmlight(path)
    expected = APSVM(C=10.0, epsilon=0.1, max_iter=100000).fit(X, y)
    np.testing.assert_allclose(read_model(model).w[:X.shape[1]], expected.coef_,
                               atol=1e-6 * max(1, np.abs(expected.coef_).max()))
    assert ap_learn.main(["--dask", "local:0", str(path), str(model)]) != 0
    assert "local:N" in capsys.readouterr().err  # (an unreachable address: test_bad_input)
    assert ap_learn.main(["--dask", address, "--approx", "10", str(path), str(model)]) != 0
    assert "--dask cannot be combined" in capsys.readouterr().err
    # -l 2 cannot honour queries: refused on the shards as in memory (one query is fine)
    assert ap_learn.main(["-v", "0", "-l", "2", "--dask", address, str(path), str(model)]) == 0
    ranked = Path(__file__).resolve().parent.parent / "data_examples" / "rank_train.dat"
    assert ap_learn.main(["-l", "2", "--dask", address, str(ranked), str(model)]) != 0
    assert "cannot honour its 6 queries (qid)" in capsys.readouterr().err
    # a glob that matches nothing: said before any scheduler is asked (none answers here)
    assert ap_learn.main(["--dask", "tcp://127.0.0.1:9", str(tmp_path / "no-*.dat"),
                          str(model)]) != 0
    assert "no-*.dat' matches no file" in capsys.readouterr().err


def test_killed_worker_mid_fit_is_survived(tmp_path, monkeypatch):
    # its own cluster: the killed worker's nanny restarts it under a new address
    import os
    import signal
    import threading
    rng = np.random.default_rng(1)
    lines = []
    for j in range(3):
        X = rng.normal(size=(60, 5))
        lines += [f"{int(v > 0)} qid:{j + 1} " + " ".join(f"{k + 1}:{x:.5f}" for k, x in
                                                         enumerate(row)) + "\n"
                  for v, row in zip(X @ np.arange(1, 6) + rng.normal(size=60), X)]
    # query 2 spans the two shards: the rebuilt partition holds a piece of it
    (tmp_path / "part-0.txt").write_text("".join(lines[:90]))
    (tmp_path / "part-1.txt").write_text("".join(lines[90:]))
    original, calls = svmrank_dask.DistributedProblem.violation_at_scores, []
    kill_at, vanish = [2], []

    def kill_mid_fit(self, scores):
        calls.append(1)
        if len(calls) == kill_at[0]:  # mid-fit: after the first iterations
            for path in vanish:
                path.unlink()
            pids = self.client.run(os.getpid)
            os.kill(pids[self.workers[0][0]], signal.SIGKILL)
        return original(self, scores)

    monkeypatch.setattr(svmrank_dask.DistributedProblem, "violation_at_scores", kill_mid_fit)
    real_fetch, fetches, kill_at_fetch = svmrank_dask.DistributedProblem.fetch, [], [0]

    def kill_at_fetch_start(self, futures, seconds):
        # the worker killed as the driver starts fetching finished results: the
        # fetch must not wait forever for a result Dask cannot compute again
        fetches.append(1)
        if len(fetches) == kill_at_fetch[0]:
            pids = self.client.run(os.getpid)
            os.kill(pids[self.workers[0][0]], signal.SIGKILL)
        return real_fetch(self, futures, seconds)

    monkeypatch.setattr(svmrank_dask.DistributedProblem, "fetch", kill_at_fetch_start)

    def fit_bounded(model, data):
        outcome = []

        def fit():
            try:
                outcome.append(model.fit(data))
            except Exception as exc:  # noqa: BLE001 - checked below
                outcome.append(exc)

        thread = threading.Thread(target=fit, daemon=True)
        thread.start()
        thread.join(60)  # a bound, not a timing: the fit must not wait forever
        assert not thread.is_alive(), "the fit hangs after a worker was killed"
        return outcome[0]

    X, y, qid = load_svmlight(tmp_path / "part-0.txt", n_features=5)
    X1, y1, qid1 = load_svmlight(tmp_path / "part-1.txt", n_features=5)
    import scipy.sparse as sp
    X, y, qid = sp.vstack([X, X1], format="csr"), np.r_[y, y1], np.r_[qid, qid1]
    memory = APSVM(C=100.0).fit(X, y, qid=qid)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as c:
            data = svmrank_dask.read_svmlight(str(tmp_path / "part-*.txt"), client=c)
            remote = fit_bounded(APSVM(C=100.0), data)
            assert len(calls) > 2 and not isinstance(remote, Exception), remote
            assert_same_fit(memory, remote)
            # a worker lost while finished results are fetched: rebuilt, the same fit
            calls.clear()
            kill_at[0], kill_at_fetch[0] = 0, 12
            data = svmrank_dask.read_svmlight(str(tmp_path / "part-*.txt"), client=c)
            remote = fit_bounded(APSVM(C=100.0), data)
            assert len(fetches) > 12 and not isinstance(remote, Exception), remote
            assert_same_fit(memory, remote)
            # the lost partition cannot be read again: a one-line error naming its file
            calls.clear()
            kill_at[0], vanish[:] = 3, [tmp_path / "part-0.txt", tmp_path / "part-1.txt"]
            data = svmrank_dask.read_svmlight(str(tmp_path / "part-*.txt"), client=c)
            failed = fit_bounded(APSVM(C=100.0), data)
            assert isinstance(failed, RuntimeError)
            assert "left the cluster mid-fit with partition" in str(failed)
            assert "part-" in str(failed) and "fit again" in str(failed)


def test_decision_function_on_partitions_in_input_order(client, tmp_path):
    from svmrank import RankSVM
    path = single_query_file(tmp_path, qid="")
    X, y, _ = load_svmlight(path)
    data = svmrank_dask.read_svmlight(path, blocksize=path.stat().st_size // 4, client=client)
    assert len(data.partitions) >= 3
    for model in (RankSVM(C=1.0).fit(X, y), APSVM(C=1.0).fit(X, y), BinarySVM(C=1.0).fit(X, y)):
        np.testing.assert_allclose(model.decision_function(data), model.decision_function(X),
                                   rtol=0, atol=1e-12)
        np.testing.assert_array_equal(model.predict(data), model.predict(X))
        assert model.score(data, None) == pytest.approx(model.score(X, y), abs=1e-12)
    with pytest.raises(ValueError, match="^y, qid: RankSVM.score on partitioned data"):
        RankSVM(C=1.0).fit(X, y).score(data, y)
    with pytest.raises(ValueError, match="^X: APSVMCV trains on data in memory"):
        APSVMCV().fit(data, None)
    # shards narrower than the model: the features they lack are zeros, as in memory
    (tmp_path / "narrow.txt").write_text("1 1:0.5\n-1 2:1\n")
    narrow = svmrank_dask.read_svmlight(tmp_path / "narrow.txt", client=client)
    np.testing.assert_allclose(model.decision_function(narrow), model.decision_function(
        load_svmlight(tmp_path / "narrow.txt", n_features=8)[0]), rtol=1e-12)


def test_cli_classify_dask_writes_the_same_bytes(client, tmp_path, capsys):
    train = single_query_file(tmp_path, n=120)
    model = tmp_path / "model"
    assert ap_learn.main(["-v", "0", "-c", "10", str(train), str(model)]) == 0
    # test shards of other widths: one has a feature beyond the model's (cut, counted)
    lines = single_query_file(tmp_path, n=90, seed=3, qid="qid:7 ").read_text().splitlines(True)
    lines[5] = lines[5].rstrip("\n") + " 12:3.5\n"
    whole = tmp_path / "test.txt"
    whole.write_text("".join(lines))
    for j, (a, b) in enumerate(((0, 40), (40, 70), (70, 90))):
        (tmp_path / f"shard-{j}.txt").write_text("".join(lines[a:b]))
    assert ap_classify.main([str(whole), str(model), str(tmp_path / "plain")]) == 0
    plain_out = capsys.readouterr()
    assert ap_classify.main(["--dask", client.scheduler.address, str(tmp_path / "shard-*.txt"),
                             str(model), str(tmp_path / "remote")]) == 0
    remote_out = capsys.readouterr()
    assert (tmp_path / "remote").read_bytes() == (tmp_path / "plain").read_bytes()
    assert "1 feature values on 1 lines" in remote_out.err
    drop_runtime = lambda text: [ln for ln in text.splitlines() if "Runtime" not in ln]  # noqa: E731
    assert drop_runtime(remote_out.out) == drop_runtime(plain_out.out)
    # refusals: no half-written output, one line naming the problem
    (tmp_path / "bad-0.txt").write_text("1 qid:1 1:1\n1 qid:1 1:x\n")
    assert ap_classify.main(["--dask", client.scheduler.address, str(tmp_path / "bad-*.txt"),
                             str(model), str(tmp_path / "bad-out")]) != 0
    assert "bad-0.txt:2" in capsys.readouterr().err and not (tmp_path / "bad-out").exists()
    assert ap_classify.main(["--dask", client.scheduler.address, "--latent", str(whole),
                             str(model), str(tmp_path / "out")]) != 0
    assert "--dask cannot be combined" in capsys.readouterr().err


def test_cli_svm_rank_dask_equals_in_memory(client, tmp_path, capsys):
    # graded queries, one of them cut across two of the three shards
    rng = np.random.default_rng(2)
    lines = [f"{lab} qid:{q} " + " ".join(f"{j + 1}:{v:.5f}" for j, v in
                                         enumerate(rng.normal(size=5) + 0.3 * lab))
             for q in range(1, 21) for lab in rng.integers(0, 4, size=12)]
    whole = tmp_path / "train.txt"
    whole.write_text("\n".join(lines) + "\n")
    for j, (a, b) in enumerate(((0, 100), (100, 130), (130, 240))):
        (tmp_path / f"shard-{j}.txt").write_text("\n".join(lines[a:b]) + "\n")
    shards, address = str(tmp_path / "shard-*.txt"), client.scheduler.address
    for loss in ("1", "2"):
        assert rank_learn.main(["-c", "3", "-l", loss, str(whole), str(tmp_path / "m")]) == 0
        plain_out = capsys.readouterr().out
        assert rank_learn.main(["-c", "3", "-l", loss, "--dask", address, shards,
                                str(tmp_path / "m-dask")]) == 0
        remote_out = capsys.readouterr().out
        assert "NOTE: Adjusted stopping criterion" in remote_out or loss == "2"
        for text in (plain_out, remote_out):  # (the pairs counted over the shards)
            assert "5 features, 20 rankings, 240 examples" in text
        w, w_dask = read_model(tmp_path / "m").w, read_model(tmp_path / "m-dask").w
        np.testing.assert_allclose(w_dask, w, rtol=0, atol=1e-7 * np.abs(w).max())
    assert rank_classify.main([str(whole), str(tmp_path / "m"), str(tmp_path / "p")]) == 0
    plain_out = capsys.readouterr().out
    assert rank_classify.main(["--dask", address, shards, str(tmp_path / "m"),
                               str(tmp_path / "p-dask")]) == 0
    remote_out = capsys.readouterr().out
    assert (tmp_path / "p-dask").read_bytes() == (tmp_path / "p").read_bytes()
    drop_runtime = lambda text: [ln for ln in text.splitlines() if "Runtime" not in ln]  # noqa: E731
    assert drop_runtime(remote_out) == drop_runtime(plain_out)
    (tmp_path / "one-0.txt").write_text("1 qid:1 1:1\n1 qid:1 1:2\n")
    assert rank_learn.main(["-c", "3", "--dask", address, str(tmp_path / "one-*.txt"),
                            str(tmp_path / "m-one")]) != 0
    assert "one-*.txt: no query has two examples of different labels" in capsys.readouterr().err
    assert not (tmp_path / "m-one").exists()


def test_partition_scatter_products_equal_the_problems(tmp_path):
    # a set above COPY_MAX_NNZ: its partitions' products read X, no copies (no cluster)
    path = single_query_file(tmp_path, n=200, d=6)
    X, y, qid = load_svmlight(path)
    w = np.linspace(-1, 1, 6)
    parts = [svmrank_dask._Partition((X, y, qid), "ranking", {}, scatter=flag)
             for flag in (False, True)]
    assert parts[0].problem.products._fast and not parts[1].problem.products._fast
    for part in parts:
        part.scores(w, 1)
        part.violation(1, 1, 2)
    np.testing.assert_allclose(parts[1].joint(2), parts[0].joint(2), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(parts[1].vectors[1], parts[0].vectors[1])


def test_partition_without_a_ranked_query_has_no_problem():
    # (no cluster) queries of one label only: skipped, counted; one query of two: ranked
    X = np.eye(6)
    qid = np.array([3, 3, 1, 1, 2, 2])
    for kind, options in (("ranking", {}), ("graded", {"loss": PairwiseLoss("count")})):
        part = svmrank_dask._Partition((X, np.array([1, 1, 0, 0, 2, 2]), qid), kind, options)
        assert part.problem is None and part.summary()["skipped"] == 3
        y = np.array([1, 1, 0, 0, 2, 0])
        part = svmrank_dask._Partition((X, y, qid), kind, options)
        assert part.summary() == {"count": 1, "skipped": 2, "total": 3, "pieces": []}


def test_review21_paths_arguments_and_fitted_state(client, tmp_path, monkeypatch):
    """Review 21: relative shard paths were opened from the workers' own directories;
    an empty shard, a file named like a glob, blocksize="1KB"; eval_set, group and
    early stopping were ignored on partitions, history_ and max_query_size_ kept from
    an earlier fit; a model narrower than the shards could not score them."""
    folder = tmp_path / "sh"
    folder.mkdir()
    path = single_query_file(tmp_path, n=120)
    text = path.read_text().replace("qid:1 ", "qid:2 ", 60)  # (two queries of 60)
    (folder / "run[1].txt").write_text(text)
    (folder / "z-empty.txt").write_text("")  # (as Spark writes an empty partition)
    monkeypatch.chdir(tmp_path)  # (the workers' directory is another)
    data = svmrank_dask.read_svmlight("sh/*.txt", blocksize="1KB", client=client)
    assert data.paths == [str(folder / "run[1].txt")] and data.shape[0] == 120
    assert len(svmrank_dask.read_svmlight("sh/run[1].txt", client=client).partitions) == 1
    with pytest.raises(ValueError, match="^blocksize: expected None, a positive integer or a"):
        svmrank_dask.read_svmlight("sh/*.txt", blocksize="64XB", client=client)
    with pytest.raises(ValueError, match="^n_features: expected None, 'max' or an integer"):
        svmrank_dask.read_svmlight("sh/*.txt", n_features=-1, client=client)
    with pytest.raises(ValueError, match="every file is empty"):
        svmrank_dask.read_svmlight("sh/z-*.txt", client=client)
    X, y, qid = load_svmlight(folder / "run[1].txt")
    for argument in ({"eval_set": (X, y, qid)}, {"early_stopping_rounds": 3},
                     {"group": [60, 60]}):
        for model in (APSVM(C=1.0), BinarySVM(C=1.0)):
            with pytest.raises(ValueError, match=f"^{next(iter(argument))}: not supported by"):
                model.fit(data, **argument)
    model = APSVM(C=1.0).fit(X[:100], y[:100])  # (one query: no max_query_size_)
    assert model.max_query_size_ is None
    model.fit(data)
    assert model.max_query_size_ == 60 and len(model.history_) == model.n_iter_
    narrow = APSVM(C=1.0).fit(X[:, :4], y, qid=qid)
    with pytest.warns(UserWarning, match="beyond 4 are ignored"):
        scores = narrow.decision_function(data)
    np.testing.assert_allclose(scores, narrow.decision_function(X[:, :4]), rtol=1e-12)


def test_a_scheduler_without_workers_is_a_one_line_error():
    with distributed.LocalCluster(n_workers=0, dashboard_address=None,
                                  processes=False) as cluster:
        with pytest.raises(ValueError, match="has no worker"):
            svmrank_dask.connect(cluster.scheduler_address, timeout=1)
